package odbc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// feed gives s a result set: labels, then rows of values (nil: NULL),
// as the driver does, and returns the value or the error.
func feed(s *shaper, labels []string, rows [][]*string) (string, error) {
	n := s.columns(len(labels))
	if err := s.setLabels(n, func(i int) (string, error) { return labels[i], nil }); err != nil {
		return "", err
	}
	for _, row := range rows {
		s.beginRow()
		for i := range n {
			var v []byte
			if row[i] != nil {
				v = []byte(*row[i])
			}
			if err := s.value(v, row[i] == nil); err != nil {
				return "", err
			}
		}
		if !s.endRow() {
			break
		}
	}
	out, err := s.result()
	return string(out), err
}

func sp(s string) *string { return &s }

func TestShaper(t *testing.T) {
	f := func(kind keyKind, labels []string, rows [][]*string, want, wantErr string) {
		t.Helper()
		got, err := feed(newShaper(kind, 1<<20), labels, rows)
		if err != nil {
			if err.Error() != wantErr {
				t.Errorf("%v %v: error %q, want %q", labels, rows, err, wantErr)
			}
			return
		}
		if wantErr != "" || got != want {
			t.Errorf("%v %v = %q, want %q (error %q)", labels, rows, got, want, wantErr)
		}
	}
	ab := []string{"a", "B"}
	two := [][]*string{{sp("1"), sp("x  ")}, {sp("2"), nil}}
	// Shapes and messages recorded from 6.0.14.
	f(kindSelect, ab, two, "1", "")
	f(kindSelect, ab, [][]*string{{sp("abc   "), sp("x")}}, "abc", "")
	f(kindSelect, ab, [][]*string{{sp("  x \t "), sp("x")}}, "  x \t", "")
	f(kindSelect, ab, nil, "", "SQL query returned empty result.")
	f(kindSelect, ab, [][]*string{{nil, sp("x")}}, "", "SQL query returned NULL value.")
	f(kindSelect, ab, [][]*string{{sp("a\xffb"), nil}}, "a?b", "")
	f(kindGet, ab, two, `[{"a":"1","B":"x"},{"a":"2","B":null}]`, "")
	f(kindGet, ab, nil, "[]", "")
	f(kindGet, []string{"x/y", "z"}, [][]*string{{sp(`/a<b>&c\d"e`), sp("t\tn\nr\r\x01\x1f\x7f\b\fé")}},
		`[{"x/y":"/a<b>&c\\d\"e","z":"t\tn\nr\r\u0001\u001f`+"\x7f"+`\b\fé"}]`, "")
	f(kindDiscovery, []string{"datname", "Num_1", "a.b"}, [][]*string{{sp("postgres"), sp("1"), nil}},
		`[{"{#DATNAME}":"postgres","{#NUM_1}":"1","{#A.B}":null}]`, "")
	f(kindDiscovery, ab, nil, "[]", "")
	f(kindDiscovery, []string{"a", "b-c"}, nil, "", "Cannot convert column #2 name to macro.")
	f(kindDiscovery, []string{"?column?"}, nil, "", "Cannot convert column #1 name to macro.")
	f(kindDiscovery, []string{"é"}, nil, "", "Cannot convert column #1 name to macro.")
	f(kindDiscovery, []string{"a", "A"}, nil, "", "Duplicate macro name: {#A}.")
	f(kindGet, []string{"a", ""}, nil, "", "Cannot obtain column #2 name.")
	if n := newShaper(kindSelect, 10).columns(5); n != 1 {
		t.Errorf("select reads %d columns, want the first only", n)
	}
	// A statement without a result set.
	s := newShaper(kindSelect, 10)
	s.noResult = true
	if _, err := s.result(); err == nil || err.Error() != "SQL query returned empty result." {
		t.Errorf("no result set: %v", err)
	}
}

func TestShaperBounded(t *testing.T) {
	s := newShaper(kindGet, 100)
	rows := make([][]*string, 1000)
	for i := range rows {
		rows[i] = []*string{sp("0123456789")}
	}
	_, err := feed(s, []string{"c"}, rows)
	var tl errTooLarge
	if !errors.As(err, &tl) || !strings.HasPrefix(err.Error(), "Result of the SQL query is larger than 100 bytes") {
		t.Fatalf("error %v", err)
	}
	if len(s.out) > 100+len(`,{"c":"0123456789"}`) {
		t.Errorf("kept %d bytes past a limit of 100", len(s.out))
	}
	if _, err := feed(newShaper(kindSelect, 5), []string{"c"}, [][]*string{{sp("123456")}}); !errors.As(err, &tl) {
		t.Errorf("select of 6 bytes within 5: %v", err)
	}
	if v, err := feed(newShaper(kindSelect, 5), []string{"c"}, [][]*string{{sp("12345    ")}}); err != nil || v != "12345" {
		t.Errorf("select of 5 bytes and padding within 5: %q %v", v, err)
	}
}

func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", `a"b\c`, "\x00\x1f\x7f", "é€\U0001F600", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendJSONString(nil, s)
		if !isJSONString(b) {
			t.Fatalf("%q encoded as %q, not a JSON string", s, b)
		}
	})
}

// isJSONString reports whether b is one valid JSON string.
func isJSONString(b []byte) bool {
	var s string
	return json.Unmarshal(b, &s) == nil && utf8.Valid(b)
}
