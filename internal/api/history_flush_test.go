package api

import (
	"context"
	"errors"
	"testing"
	"time"
)

// fakeFlush records history.flush's calls.
type fakeFlush struct {
	calls []bool // compact of each call
	err   error
}

func (f *fakeFlush) FlushHistory(_ context.Context, compact bool) (int64, int, time.Duration, error) {
	f.calls = append(f.calls, compact)
	if f.err != nil {
		return 0, 0, 0, f.err
	}
	days := -1
	if compact {
		days = 2
	}
	return 1234, days, 1500 * time.Millisecond, nil
}

// TestHistoryFlush: history.flush is for super admins only, takes
// "compact" as a boolean, answers the counts as strings, and words a
// busy or failed store as application errors.
func TestHistoryFlush(t *testing.T) {
	f := newPermFixture(t)
	var got map[string]string
	f.mustDo(f.root, "history.flush", `{"compact":true}`, &got)
	if got["flushed"] != "1234" || got["compacted"] != "2" || got["took"] != "1.500" {
		t.Errorf("history.flush = %v", got)
	}
	f.mustDo(f.root, "history.flush", `{}`, &got)
	if got["compacted"] != "-1" || len(f.flush.calls) != 2 || f.flush.calls[0] != true || f.flush.calls[1] != false {
		t.Errorf("history.flush {} = %v, calls %v", got, f.flush.calls)
	}
	for _, c := range []struct{ sid, params, want string }{
		{f.login("writer"), `{}`, "No permissions to call \"history.flush\"."},
		{f.login("reader"), `{}`, "No permissions to call \"history.flush\"."},
		{f.root, `{"compact":"maybe"}`, `Invalid parameter "/compact": a boolean value is expected.`},
		{f.root, `{"nope":1}`, `Invalid parameter "/": unexpected parameter "nope".`},
	} {
		if _, e := f.do(c.sid, "history.flush", c.params); e == nil || e.Data != c.want {
			t.Errorf("history.flush %s: %+v, want %q", c.params, e, c.want)
		}
	}
	if len(f.flush.calls) != 2 {
		t.Errorf("refused calls reached the store: %v", f.flush.calls)
	}
	f.flush.err = ErrFlushBusy
	if _, e := f.do(f.root, "history.flush", `{}`); e == nil || e.Data != "A history flush is already running." {
		t.Errorf("busy: %+v", e)
	}
	f.flush.err = errors.New("disk full")
	if _, e := f.do(f.root, "history.flush", `{}`); e == nil || e.Data != "Cannot flush the history: disk full" {
		t.Errorf("failed: %+v", e)
	}
}
