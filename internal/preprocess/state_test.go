package preprocess

import (
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// TestStateRoundTrip: a state saved after some values and restored into
// a fresh State gives the same results for the next values as the
// state that never stopped (as across a restart).
func TestStateRoundTrip(t *testing.T) {
	chain := []Step{mustStep(t, "10", "", "0", ""), mustStep(t, "20", "1h", "0", "")}
	in := func(v string, sec int) Input {
		return Input{Text: v, Time: t0.Add(time.Duration(sec) * time.Second), Type: history.Float}
	}
	var live State
	if out, err := Run(chain, in("100", 0), &live); err != nil || !out.Discarded {
		t.Fatalf("first value: %+v, %v; want discarded", out, err)
	}
	if out, err := Run(chain, in("160", 60), &live); err != nil || out.Text != "1" {
		t.Fatalf("second value: %+v, %v; want 1", out, err)
	}
	b, err := live.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var restored State
	if err := restored.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct {
		text string
		sec  int
	}{{"220", 120}, {"280", 180}, {"400", 240}} {
		a, errA := Run(chain, in(v.text, v.sec), &live)
		r, errB := Run(chain, in(v.text, v.sec), &restored)
		if a != r || (errA == nil) != (errB == nil) {
			t.Fatalf("value %s at %ds: live %+v %v, restored %+v %v", v.text, v.sec, a, errA, r, errB)
		}
	}
	// A damaged encoding is refused, never half-applied.
	for _, bad := range [][]byte{nil, {9}, b[:len(b)-1], append(b[:len(b):len(b)], 0)} {
		st := restored
		if err := st.UnmarshalBinary(bad); err == nil {
			t.Errorf("UnmarshalBinary(%x) accepted a damaged encoding", bad)
		}
	}
}

// TestCacheSameResults: chains run with a shared Cache give what they
// give without one, for JSON and non-JSON input, and an equal string
// that is not the cached one is parsed on its own.
func TestCacheSameResults(t *testing.T) {
	doc := `{"a":{"b":[1,2,3]},"s":"x","error":"boom"}`
	chains := [][]Step{
		{mustStep(t, "12", "$.a.b.sum()", "0", "")},
		{mustStep(t, "12", "$.s", "0", "")},
		{mustStep(t, "12", "$.missing", "0", "")},
		{mustStep(t, "16", "$.error", "0", "")},
		{mustStep(t, "16", "$.none", "0", ""), mustStep(t, "12", "$.a.b[0]", "0", "")},
	}
	for _, text := range []string{doc, "not json", strings.Clone(doc)} {
		var c Cache
		c.Reset(doc)
		for i, ch := range chains {
			want, wantErr := Run(ch, Input{Text: text, Time: t0, Type: history.Text}, nil)
			got, gotErr := Run(ch, Input{Text: text, Time: t0, Type: history.Text, Cache: &c}, nil)
			if want != got || (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
				t.Errorf("chain %d on %.10q: cached %+v %v, uncached %+v %v", i, text, got, gotErr, want, wantErr)
			}
		}
	}
}
