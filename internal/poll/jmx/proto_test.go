package jmx

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/valyala/fastjson"

	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// wire reads a capture of testdata/wire (recorded from 6.0.14): the
// whole frame and its payload.
func wire(t testing.TB, name string) (frame, payload []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "wire", name))
	if err != nil {
		t.Fatal(err)
	}
	h, n, err := zbx.ParseHeader(b, false)
	if err != nil || h.Compressed() || uint64(len(b)-n) != h.DataLen {
		t.Fatalf("%s: not one plain frame: %+v %v", name, h, err)
	}
	return b, b[n:]
}

// TestAppendRequestAsServer: the requests Peregrine writes are the
// bytes the 6.0.14 server wrote for the same items (frame included).
func TestAppendRequestAsServer(t *testing.T) {
	for _, name := range []string{"batch-req.bin", "credentials-req.bin", "macros-req.bin", "max-keys-req.bin", "probe-req.bin", "refused-req.bin"} {
		frame, payload := wire(t, name)
		var in struct {
			Username, Password string
			Endpoint           string `json:"jmx_endpoint"`
			Keys               []string
		}
		if err := json.Unmarshal(payload, &in); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := AppendRequest(nil, &Request{Username: in.Username, Password: in.Password, Endpoint: in.Endpoint, Keys: in.Keys})
		if !bytes.Equal(got, payload) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, payload)
		}
		if f := zbx.AppendFrame(nil, got, zbx.FlagProtocol); !bytes.Equal(f, frame) {
			t.Errorf("%s: the frame differs from the server's: % x", name, f[:13])
		}
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", `a"b\c`, "tab\tnl\ncr\r\x00\x1f", "ünï€😀", "/x/"} {
		b := appendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Errorf("appendString(%q) = %s: %q %v", s, b, back, err)
		}
	}
	if b := appendString(nil, "bad\xffutf8"); string(b) != "\"bad\ufffdutf8\"" {
		t.Errorf("invalid UTF-8: %s", b)
	}
}

func TestDecodeReplyRecorded(t *testing.T) {
	var p fastjson.Parser
	decode := func(name string, keys int) *Reply {
		t.Helper()
		_, payload := wire(t, name)
		var r Reply
		if err := DecodeReply(&p, payload, keys, &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return &r
	}
	r := decode("batch-resp.bin", 9)
	type ans struct{ Value, Error string }
	var got []ans
	for _, a := range r.Answers {
		got = append(got, ans{string(a.Value), a.Error})
	}
	if r.Failed || len(got) != 9 {
		t.Fatalf("batch: %+v", r)
	}
	// The keys of batch-req.bin, in order.
	if got[0].Value != "8310784" || got[1].Value != "OpenJDK 64-Bit Server VM" ||
		got[2].Error != "Data object type cannot be converted to string." ||
		!strings.HasPrefix(got[3].Value, `{"data":[{"{#JMXDESC}":"The MBean server agent identification",`) ||
		got[4].Error != "Object or attribute not found: java.lang:type=Nope" ||
		got[5].Error != "Attribute not found: No such attribute: HeapMemoryUsage22" ||
		got[6].Value != `[{"object":"java.lang:type=Memory","domain":"java.lang","properties":{"type":"Memory"}}]` ||
		got[7].Error != "key ID 'jmx.foo' is not supported" ||
		!strings.HasPrefix(got[8].Value, `{"data":[{"{#JMXOBJ}":"java.lang:name=G1 Young Generation,type=GarbageCollector"`) {
		t.Errorf("batch answers: %+v", got)
	}
	for _, i := range []int{3, 8} {
		if !json.Valid([]byte(got[i].Value)) {
			t.Errorf("answer %d is not the JSON the LLD rule needs: %.80s", i, got[i].Value)
		}
	}

	for _, c := range []struct {
		name, err string
	}{
		{"refused-resp.bin", "Connection refused: service:jmx:rmi:///jndi/rmi://127.0.0.1:19901/jmxrmi"},
		{"timedout-resp.bin", "Connection timed out: service:jmx:rmi:///jndi/rmi://127.0.0.1:19904/jmxrmi"},
		{"noendpoint-resp.bin", "No value for jmx_endpoint"},
		{"badrequest-resp.bin", "bad request tag value: 'bogus'"},
	} {
		if r := decode(c.name, 1); !r.Failed || r.Error != c.err {
			t.Errorf("%s: %+v, want failed %q", c.name, r, c.err)
		}
	}
	r = decode("badkeys-resp.bin", 7)
	want := []Answer{
		{Error: `no terminating ']' in key: 'jmx["java.lang:type=Memory","HeapMemoryUsage.used"'`},
		{Error: "required key format: jmx[<object name>,<attribute name>,<unique short description>]"},
		{Error: "required key format: jmx[<object name>,<attribute name>,<unique short description>]"},
		{Error: "invalid discovery mode: foo"},
		{Error: "invalid discovery mode: "},
		{Value: []byte("10799424"), HasValue: true},
		{Value: []byte("12"), HasValue: true},
	}
	if d := cmp.Diff(want, r.Answers); d != "" {
		t.Errorf("badkeys (-want +got):\n%s", d)
	}
}

func TestDecodeReplyBad(t *testing.T) {
	var p fastjson.Parser
	f := func(payload string, keys int, want string) {
		t.Helper()
		var r Reply
		err := DecodeReply(&p, []byte(payload), keys, &r)
		if !errors.Is(err, ErrBadReply) || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeReply(%q) = %v, want ErrBadReply with %q", payload, err, want)
		}
	}
	f(``, 1, "not a Java gateway reply")
	f(`garbage`, 1, "not a Java gateway reply")
	f(`[1]`, 1, "a JSON array, not an object")
	f(`{"data":[]}`, 0, `no "response" member`)
	f(`{"response":"maybe"}`, 1, `response "maybe"`)
	f(`{"response":"success","data":[{"value":"1"}]}`, 2, "1 answers to 2 keys")
	f(`{"response":"success"}`, 1, "0 answers to 1 keys")
	f(`{"response":"success","data":[{"value":1}]}`, 1, "answer 1: the value is a JSON number")
	var r Reply
	if err := DecodeReply(&p, []byte(`{"response":"success","data":[{}]}`), 1, &r); err != nil || r.Answers[0].HasValue || !strings.Contains(r.Answers[0].Error, "neither a value nor an error") {
		t.Errorf("an empty answer: %+v %v", r, err)
	}
	if err := DecodeReply(&p, []byte(`{"response":"failed"}`), 1, &r); err != nil || !r.Failed || r.Error == "" {
		t.Errorf("failed without error: %+v %v", r, err)
	}
}

// TestDecodeReplyValuesOwned: a reply's values survive the parser's
// next use (they belong to the results).
func TestDecodeReplyValuesOwned(t *testing.T) {
	var p fastjson.Parser
	var r1, r2 Reply
	if err := DecodeReply(&p, []byte(`{"response":"success","data":[{"value":"a\"1"},{"value":"b"}]}`), 2, &r1); err != nil {
		t.Fatal(err)
	}
	if err := DecodeReply(&p, []byte(`{"response":"success","data":[{"value":"zzzzzz"},{"value":"y"}]}`), 2, &r2); err != nil {
		t.Fatal(err)
	}
	if string(r1.Answers[0].Value) != `a"1` || string(r1.Answers[1].Value) != "b" {
		t.Errorf("first reply's values changed: %q %q", r1.Answers[0].Value, r1.Answers[1].Value)
	}
	if v := r1.Answers[0].Value; cap(v) != len(v) {
		t.Errorf("a value's capacity %d beyond its length %d: appending to it would overwrite the next", cap(v), len(v))
	}
}

// FuzzDecodeReply: no input panics; what decodes has one answer per key.
func FuzzDecodeReply(f *testing.F) {
	for _, name := range []string{"batch-resp.bin", "refused-resp.bin", "badkeys-resp.bin", "credentials-resp.bin"} {
		_, payload := wire(f, name)
		f.Add(payload, 9)
	}
	f.Add([]byte(`{"response":"success","data":[{"value":"1"},{"error":"x"}]}`), 2)
	var p fastjson.Parser
	f.Fuzz(func(t *testing.T, payload []byte, keys int) {
		var r Reply
		if err := DecodeReply(&p, payload, keys, &r); err == nil && !r.Failed && len(r.Answers) != keys {
			t.Fatalf("%d answers to %d keys", len(r.Answers), keys)
		}
	})
}
