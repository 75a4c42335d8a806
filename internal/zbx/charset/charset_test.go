package charset

import (
	"testing"
	"unicode/utf8"
)

func TestToUTF8(t *testing.T) {
	f := func(in []byte, name, want string) {
		t.Helper()
		if got := string(ToUTF8(in, name)); got != want {
			t.Errorf("ToUTF8(%q, %q) = %q, want %q", in, name, got, want)
		}
	}
	f([]byte("plain"), "", "plain")
	f([]byte("\xef\xbb\xbfbom"), "", "bom")
	f([]byte("\xff\xfeh\x00i\x00"), "", "hi")
	f([]byte("\xfe\xff\x00h\x00i"), "", "hi")
	f([]byte("caf\xe9"), "ISO-8859-1", "café")
	f([]byte("caf\xe9"), "latin1", "café")
	f([]byte("\xcf\xf0\xe8\xe2\xe5\xf2"), "CP1251", "Привет")
	f([]byte("\xcf\xf0\xe8\xe2\xe5\xf2"), "windows-1251", "Привет")
	f([]byte("\x8f\xe0\xa8\xa2\xa5\xe2"), "cp866", "Привет")
	f([]byte("h\x00i\x00"), "UTF-16LE", "hi")
	f([]byte("ok"), "UTF-8", "ok")
	// Unknown names leave the bytes; invalid UTF-8 becomes '?'.
	f([]byte("caf\xe9"), "no-such-charset", "caf?")
	f([]byte("caf\xe9"), "", "caf?")
	f([]byte("a\xc3"), "", "a?")
	if !Known("") || !Known("cp1251") || !Known("ISO-8859-1") || Known("no-such-charset") {
		t.Error("Known")
	}
}

func FuzzToUTF8(f *testing.F) {
	f.Add([]byte("\xff\xfeh\x00"), "")
	f.Add([]byte("caf\xe9"), "cp1251")
	f.Add([]byte("x"), "UTF-16BE")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		if out := ToUTF8(b, name); !utf8.Valid(out) {
			t.Fatalf("ToUTF8(%q, %q) = %q: not UTF-8", b, name, out)
		}
	})
}
