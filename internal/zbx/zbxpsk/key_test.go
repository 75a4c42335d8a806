package zbxpsk

import (
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	f := func(in string, wantLen int, wantErr string) {
		t.Helper()
		b, err := ParseKey(in)
		switch {
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("ParseKey(%q) = %v, want error with %q", in, err, wantErr)
		case wantErr == "" && err != nil:
			t.Errorf("ParseKey(%q): %v", in, err)
		case wantErr == "" && len(b) != wantLen:
			t.Errorf("ParseKey(%q) has %d bytes, want %d", in, len(b), wantLen)
		}
		if err != nil && len(in) > 4 && strings.Contains(err.Error(), in) {
			t.Errorf("ParseKey(%q)'s error quotes the key: %v", in, err)
		}
	}
	f(strings.Repeat("ab", 16), 16, "")
	f(strings.Repeat("AB", 16), 16, "")
	f(strings.Repeat("a1", 256), 256, "")
	f(strings.Repeat("a", 30), 0, "at least 32")
	f(strings.Repeat("a", 31), 0, "at least 32")
	f(strings.Repeat("a", 33), 0, "even number")
	f(strings.Repeat("a", 514), 0, "at most 512")
	f(strings.Repeat("z", 32), 0, "only hexadecimal")
	f("", 0, "at least 32")
}

func TestCheckIdentity(t *testing.T) {
	f := func(in string, ok bool) {
		t.Helper()
		if err := CheckIdentity(in); (err == nil) != ok {
			t.Errorf("CheckIdentity(%q) = %v, want ok %v", in, err, ok)
		}
	}
	f("PSK 001", true)
	f(strings.Repeat("a", 128), true)
	f(strings.Repeat("é", 128), true) // 256 bytes: what OpenSSL carries
	f(strings.Repeat("a", 129), false)
	f(strings.Repeat("€", 128), false) // 384 bytes
	f("", false)
	f("a\x00b", false)
	f("\xff", false)
}

func TestKeyStringHidesSecret(t *testing.T) {
	k := Key{Identity: "id", Secret: []byte("0123456789abcdef")}
	if s := k.String(); strings.Contains(s, "0123") || !strings.Contains(s, "id") {
		t.Errorf("Key.String() = %q", s)
	}
}
