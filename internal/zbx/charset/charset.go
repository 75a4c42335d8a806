// Package charset converts what a command printed to UTF-8, as Zabbix
// does with the <encoding> parameter of its ssh.run, telnet.run and
// web.page keys.
//
// An empty name sniffs a byte order mark (UTF-8, UTF-16 little or big
// endian, whose text is decoded) and otherwise takes the bytes as they
// are; a name is looked up among the IANA names and aliases
// ("ISO-8859-1", "windows-1251", "cp866", "UTF-16LE"), then among the
// WHATWG labels ("cp1251", "latin2"), the two lists iconv's names
// mostly fall in. A name neither knows leaves the bytes as they are, as
// Zabbix does when iconv does not know it; Known tells callers, which
// may say so. Invalid UTF-8 left afterwards becomes '?', as Zabbix
// replaces it.
//
// Concurrency: the functions are safe for concurrent use; they keep no
// state.
package charset

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"
)

// lookup returns the encoding called name; nil, true for UTF-8 (no
// conversion); nil, false for a name it does not know.
func lookup(name string) (encoding.Encoding, bool) {
	if strings.EqualFold(name, "UTF-8") || strings.EqualFold(name, "UTF8") {
		return nil, true
	}
	if e, err := ianaindex.IANA.Encoding(name); err == nil && e != nil {
		return e, true
	}
	if e, err := htmlindex.Get(name); err == nil {
		if e == unicode.UTF8 {
			return nil, true
		}
		return e, true
	}
	return nil, false
}

// Known reports whether name is an encoding ToUTF8 converts from ("" and
// UTF-8 included).
func Known(name string) bool {
	if name == "" {
		return true
	}
	_, ok := lookup(name)
	return ok
}

var (
	bomUTF8    = []byte{0xef, 0xbb, 0xbf}
	bomUTF16LE = []byte{0xff, 0xfe}
	bomUTF16BE = []byte{0xfe, 0xff}
)

// ToUTF8 returns b, in the character set called name, as valid UTF-8
// (see the package comment). The result may share b's memory.
func ToUTF8(b []byte, name string) []byte {
	var e encoding.Encoding
	switch {
	case name != "":
		e, _ = lookup(name)
	case bytes.HasPrefix(b, bomUTF8):
		b = b[len(bomUTF8):]
	case bytes.HasPrefix(b, bomUTF16LE):
		e = unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM)
	case bytes.HasPrefix(b, bomUTF16BE):
		e = unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM)
	}
	if e != nil {
		if out, err := e.NewDecoder().Bytes(b); err == nil {
			b = out
		}
	}
	return ReplaceInvalid(b)
}

// ReplaceInvalid returns b with every byte that is not part of valid
// UTF-8 replaced by '?'; b itself when it is valid.
func ReplaceInvalid(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			out = append(out, '?')
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}
