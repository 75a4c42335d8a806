package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseSenderRequest(t *testing.T) {
	f := func(in string, wantErr bool, check func(*senderRequest)) {
		t.Helper()
		var req senderRequest
		m := &countingMemory{}
		req.mem = m
		err := parseSenderRequest([]byte(in), &req)
		if m.held != cap(req.rows)*rowBytes {
			t.Fatalf("%s: rows hold %d bytes, the Memory was told %d", in, cap(req.rows)*rowBytes, m.held)
		}
		if (err != nil) != wantErr {
			t.Fatalf("%s: err = %v, want error %v", in, err, wantErr)
		}
		if err == nil && check != nil {
			check(&req)
		}
	}
	f(`{"request":"sender data","data":[{"host":"h","key":"k","value":"1"}]}`, false, func(r *senderRequest) {
		if string(r.request) != "sender data" || !r.hasData || len(r.rows) != 1 || string(r.rows[0].host) != "h" || string(r.rows[0].value) != "1" {
			t.Fatalf("%+v", r)
		}
	})
	// Key order does not matter; unknown members and nested values are skipped.
	f(` { "data" : [ { "x":{"a":[1,2,{"b":null}]}, "value":"v\"q\u00e9\ud83d\ude00","key":"k","host":"h","clock":1700000000,"ns":5 } ] , "request":"sender data", "clock":1,"ns":2 } `, false, func(r *senderRequest) {
		row := r.rows[0]
		if string(row.value) != "v\"qé😀" || row.clock != 1700000000 || row.ns != 5 || row.has != hasHost|hasKey|hasValue|hasClock|hasNS {
			t.Fatalf("%+v %q", row, row.value)
		}
	})
	f(`{"request":"sender data","data":[1,"x",null,{"host":1,"key":"k","value":null},{"value":12.5e1},{"value":true},{"clock":1.5},{"clock":"1"}]}`, false, func(r *senderRequest) {
		if len(r.rows) != 8 || !r.rows[0].notObject || !r.rows[2].notObject || r.rows[3].has != hasKey ||
			string(r.rows[4].value) != "12.5e1" || string(r.rows[5].value) != "true" || !r.rows[6].badClock || !r.rows[7].badClock {
			t.Fatalf("%+v", r.rows)
		}
	})
	f(`{"request":"sender data","data":{}}`, false, func(r *senderRequest) {
		if r.hasData {
			t.Fatal("an object is not a data array")
		}
	})
	f(`{}`, false, nil)
	for _, bad := range []string{``, `[]`, `{`, `{"request"}`, `{"request":"x",}`, `{"data":[}`, `{"data":[{"host":"h",}]}`,
		`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":tru}`, `{"a":"\x01"}`, `{"a":"\q"}`, `{"a":"\u12"}`, `{} x`, `{"a":"unterminated}`,
		`{"data":[{"value":"a` + "\n" + `"}]}`, strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 100)} {
		f(bad, true, nil)
	}
}

// FuzzSenderJSON checks the scanner against encoding/json: the same
// documents are valid, and the fields it extracts are the ones
// encoding/json decodes.
func FuzzSenderJSON(f *testing.F) {
	for _, s := range []string{
		`{"request":"sender data","data":[{"host":"h","key":"k","value":"1","clock":5,"ns":6}]}`,
		`{"request":"sender data","data":[{"host":"h\u0041","key":"k\ud800x","value":1.5e3}],"clock":1}`,
		`{"data":[1,[2],{"value":{"a":"b"}}],"request":"x"}`,
		`{"request":"agent data","session":"s\u0041","host":"h","version":"6.0","data":[{"itemid":1,"id":"2","lastlogsize":18446744073709551615,"source":"a\nb"},{"itemid":-1,"id":1e3}]}`,
	} {
		f.Add([]byte(s))
	}
	var req senderRequest
	f.Fuzz(func(t *testing.T, in []byte) {
		// The scanner unescapes in place: give it a copy and keep in for
		// encoding/json.
		err := parseSenderRequest(bytes.Clone(in), &req)
		if errors.Is(err, errDepth) {
			return
		}
		var top map[string]json.RawMessage
		jerr := json.Unmarshal(in, &top)
		if (err == nil) != (jerr == nil) {
			// encoding/json rejects a top-level null only as a map; we
			// reject anything that is not an object.
			if !(err != nil && jerr == nil && top == nil) {
				t.Fatalf("scanner err %v, encoding/json err %v, input %q", err, jerr, in)
			}
			return
		}
		if err != nil || !utf8.Valid(in) {
			return // encoding/json rewrites invalid UTF-8; nothing to compare
		}
		var request string
		if raw, ok := top["request"]; ok && json.Unmarshal(raw, &request) == nil {
			if !req.hasRequest || string(req.request) != request {
				t.Fatalf("request %q vs %q (%q)", req.request, request, in)
			}
		} else if req.hasRequest {
			t.Fatalf("scanner found a request string encoding/json did not: %q", in)
		}
		for name, got := range map[string][]byte{"host": req.top.host, "session": req.top.session, "version": req.top.version, "host_metadata": req.top.hostMetadata} {
			var want string
			if raw, ok := top[name]; ok && raw[0] == '"' && json.Unmarshal(raw, &want) == nil && string(got) != want {
				t.Fatalf("top-level %s: %q vs %q (%q)", name, got, want, in)
			}
		}
		var rows []json.RawMessage
		if raw, ok := top["data"]; ok && json.Unmarshal(raw, &rows) == nil && rows != nil {
			if !req.hasData || len(req.rows) != len(rows) {
				t.Fatalf("rows %d vs %d (%q)", len(req.rows), len(rows), in)
			}
			for i, raw := range rows {
				var obj map[string]json.RawMessage
				if json.Unmarshal(raw, &obj) != nil || obj == nil {
					if !req.rows[i].notObject && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
						t.Fatalf("row %d: %s is not an object but scanned as one", i, raw)
					}
					continue
				}
				for name, got := range map[string][]byte{"host": req.rows[i].host, "key": req.rows[i].key} {
					var want string
					if json.Unmarshal(obj[name], &want) == nil && obj[name] != nil && obj[name][0] == '"' {
						if string(got) != want {
							t.Fatalf("row %d %s: %q vs %q", i, name, got, want)
						}
					}
				}
				// Agent fields: numbers that encoding/json reads as uint64
				// are the scanner's, unless the scanner saw a bad
				// duplicate of the member.
				e := req.extAt(i)
				for name, f := range map[string]extFields{"itemid": hasItemID, "id": hasID, "lastlogsize": hasLastLogSize} {
					var want uint64
					raw, ok := obj[name]
					if !ok || json.Unmarshal(raw, &want) != nil || raw[0] == '"' {
						continue
					}
					if e == nil || e.has&f == 0 {
						t.Fatalf("row %d: %s %s not scanned (%q)", i, name, raw, in)
					}
					if e.bad&f != 0 {
						continue
					}
					got := map[extFields]uint64{hasItemID: e.itemID, hasID: e.id, hasLastLogSize: e.lastLogSize}[f]
					if got != want {
						t.Fatalf("row %d %s: %d vs %d (%q)", i, name, got, want, in)
					}
				}
				var src string
				if raw, ok := obj["source"]; ok && raw[0] == '"' && json.Unmarshal(raw, &src) == nil && e != nil && e.bad&hasSource == 0 && string(e.source) != src {
					t.Fatalf("row %d source: %q vs %q", i, e.source, src)
				}
			}
		}
	})
}

// TestUnescapeInPlace: escaped strings are unescaped over their own text;
// strings parsed earlier and later are untouched.
func TestUnescapeInPlace(t *testing.T) {
	in := []byte(`{"request":"sender data","data":[{"host":"h\\1","key":"k\u00e9\ud83d\ude00\ud800","value":"a\"b\/c\n"},{"host":"plain","key":"x","value":"\t"}]}`)
	var req senderRequest
	if err := parseSenderRequest(in, &req); err != nil {
		t.Fatal(err)
	}
	got := []string{string(req.request)}
	for _, r := range req.rows {
		got = append(got, string(r.host), string(r.key), string(r.value))
	}
	want := []string{"sender data", `h\1`, "ké😀\ufffd", "a\"b/c\n", "plain", "x", "\t"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// The slices do not overlap: each string keeps its own bytes.
	if cap(req.rows[0].host) != len(req.rows[0].host) {
		t.Fatalf("unescaped string has spare capacity %d over its text", cap(req.rows[0].host)-len(req.rows[0].host))
	}
}

// TestRowsRefused: a request whose decoded rows need more memory than
// the Memory grants is refused with the Memory's error.
func TestRowsRefused(t *testing.T) {
	payload := []byte(`{"request":"sender data","data":[` + strings.Repeat("1,", 10000) + `1]}`)
	m := &countingMemory{limit: 64 << 10}
	req := senderRequest{mem: m}
	if err := parseSenderRequest(payload, &req); !errors.Is(err, errNoRoom) {
		t.Fatalf("got %v, want the Memory's refusal", err)
	}
	if m.peak > m.limit {
		t.Fatalf("rows peaked at %d bytes over a %d limit", m.peak, m.limit)
	}
	req.dropRows()
	if m.held != 0 {
		t.Fatalf("%d bytes held after dropRows", m.held)
	}
}

// countingMemory is a zbx.Memory that records what is held and can
// refuse allocations beyond a limit.
type countingMemory struct {
	held, peak, limit int
}

var errNoRoom = errors.New("no room")

func (m *countingMemory) Alloc(n int) error {
	if m.limit > 0 && m.held+n > m.limit {
		return errNoRoom
	}
	m.held += n
	m.peak = max(m.peak, m.held)
	return nil
}

func (m *countingMemory) Free(n int) { m.held -= n }
