package zbx_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wireDir holds the captures of real Zabbix 6.0 programs; shared/ sits
// beside the repository (X/main and X/shared).
var wireDir = filepath.Join("..", "..", "..", "shared", "testdata", "zabbix-wire")

// capture is one entry of index.json.
type capture struct {
	Name        string `json:"name"`
	File        string `json:"file"`
	Program     string `json:"program"`
	Framed      bool   `json:"framed"`
	Flags       byte   `json:"flags"`
	HeaderLen   int    `json:"header_len"`
	DataLen     uint64 `json:"datalen"`
	Reserved    uint64 `json:"reserved"`
	TotalLen    int    `json:"total_len"`
	Base64      string `json:"base64"`
	PayloadText string `json:"payload_text"`
	PayloadHex  string `json:"payload_hex"`

	raw []byte // the bytes of File
}

// payload is the expected decoded payload: payload_hex when present,
// otherwise payload_text with the index's `\0` notation turned into NUL.
func (c capture) payload(t testing.TB) []byte {
	t.Helper()
	if c.PayloadHex != "" {
		b, err := hex.DecodeString(c.PayloadHex)
		if err != nil {
			t.Fatalf("%s: payload_hex: %v", c.Name, err)
		}
		if txt := strings.ReplaceAll(c.PayloadText, `\0`, "\x00"); txt != string(b) {
			t.Fatalf("%s: payload_text %q disagrees with payload_hex %q", c.Name, txt, b)
		}
		return b
	}
	return []byte(strings.ReplaceAll(c.PayloadText, `\0`, "\x00"))
}

// loadCaptures reads index.json and every .hex file it names.
func loadCaptures(t testing.TB) []capture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(wireDir, "index.json"))
	if err != nil {
		t.Fatalf("cannot read the wire fixtures (is shared/ beside the repository?): %v", err)
	}
	var idx struct {
		Captures []capture `json:"captures"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	if len(idx.Captures) == 0 {
		t.Fatal("index.json lists no captures")
	}
	for i := range idx.Captures {
		c := &idx.Captures[i]
		c.raw = readHex(t, filepath.Join(wireDir, c.File))
		if len(c.raw) != c.TotalLen {
			t.Fatalf("%s: %d bytes, index.json says %d", c.File, len(c.raw), c.TotalLen)
		}
		if c.Base64 != "" {
			want, err := base64.StdEncoding.DecodeString(c.Base64)
			if err != nil || string(want) != string(c.raw) {
				t.Fatalf("%s: bytes disagree with index.json base64 (err %v)", c.File, err)
			}
		}
	}
	return idx.Captures
}

func readHex(t testing.TB, path string) []byte {
	t.Helper()
	s, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(s)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// hexFixtures returns every *.hex file in the fixture directory, so that
// a capture added without an index entry is still fuzzed.
func hexFixtures(t testing.TB) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(wireDir, "*.hex"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no *.hex fixtures in %s (is shared/ beside the repository?): %v", wireDir, err)
	}
	m := make(map[string][]byte, len(names))
	for _, n := range names {
		m[filepath.Base(n)] = readHex(t, n)
	}
	return m
}
