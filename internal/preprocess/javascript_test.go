package preprocess

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
)

func TestJavaScript(t *testing.T) {
	js := func(script string) Step { return mustStep(t, "21", script, "0", "") }
	// The Zabbix docs' examples: arithmetic on the value, JSON in and out.
	checkStep(t, js("return value * 1024;"), []stepCase{{vt: history.Uint, in: "3", want: "3072"}})
	checkStep(t, js("var o = JSON.parse(value); Zabbix.log(4, 'got ' + o.a.length); return JSON.stringify(o.a.map(function (x) { return x * 2; }));"),
		[]stepCase{{vt: history.Text, in: `{"a":[1,2]}`, want: `[2,4]`}})
	checkStep(t, js("throw 'Cannot find data';"), []stepCase{{vt: history.Text, in: "x", wantErr: "cannot execute script: Cannot find data"}})
	checkStep(t, js("throw new Error('bad');"), []stepCase{{vt: history.Text, in: "x", wantErr: "cannot execute script: Error: bad"}})
	checkStep(t, js("JSON.parse(value);"), []stepCase{{vt: history.Text, in: "{}", wantErr: "cannot execute script: it returned no value (undefined or null)"}})
	checkStep(t, js("var r = new HttpRequest(); return r.get('http://127.0.0.1/');"), []stepCase{
		{vt: history.Text, in: "x", wantErr: "cannot execute script: TypeError: HttpRequest is not supported by this server: scripts cannot make requests"},
	})
	// State does not leak from one run to the next.
	checkStep(t, js("if (typeof seen !== 'undefined') return 'leak'; seen = 1; return 'clean';"), []stepCase{{vt: history.Str, in: "", want: "clean"}, {vt: history.Str, in: "", want: "clean"}})
	if _, err := ParseStep("21", "return (;", "0", ""); err == nil || !strings.Contains(err.Error(), "cannot compile the script") {
		t.Fatalf("syntax error: %v", err)
	}
}

// TestJavaScriptLimit: a script that never ends is stopped by its time
// limit and fails its step (through the handler); the assertion is on the
// outcome, not on how long it took.
func TestJavaScriptLimit(t *testing.T) {
	s := mustStep(t, "21", "while (true) {}", "0", "")
	s.jsLimit = 50 * time.Millisecond
	checkStep(t, s, []stepCase{{vt: history.Text, in: "x", wantErr: "cannot execute script: execution timeout"}})
	s = mustStep(t, "21", "for (;;) { value += 'x'; }", "2", "stopped")
	s.jsLimit = 50 * time.Millisecond
	checkStep(t, s, []stepCase{{vt: history.Text, in: "x", want: "stopped"}})
}

// TestJavaScriptMemoryLimit: a script that allocates without bound is
// stopped by its runner's memory limit (here the in-process runner's
// guard, lowered for the test: it is process-wide growth, so this test
// does not run in parallel with others), well before its time limit,
// and fails its step with the memory message; a script that allocates a
// little is not disturbed.
func TestJavaScriptMemoryLimit(t *testing.T) {
	js := &jsvm.Local{MemLimit: 64 << 20}
	run := func(script string) (Output, error) {
		s := mustStep(t, "21", script, "0", "")
		return Run([]Step{s}, Input{Text: "x", Type: history.Text, JS: js}, nil)
	}
	_, err := run("var a = []; for (;;) { a.push('x'.repeat(1 << 20) + a.length); }")
	var se *StepError
	if !errors.As(err, &se) || se.Message != "cannot execute script: memory limit exceeded (64 MiB)" {
		t.Errorf("allocating script: %v", err)
	}
	if out, err := run("var a = []; for (var i = 0; i < 100; i++) { a.push(new Array(1001).join('x')); } return a.length;"); err != nil || out.Text != "100" {
		t.Errorf("modest script: %+v, %v", out, err)
	}
}

// TestDeferResume: with Input.Defer, Run stops before each JavaScript
// step, handing its input to the caller, and Resume goes on after it
// with the caller's result, applying the step's error handler to a
// failure; the steps' state is the same as Run's without Defer.
func TestDeferResume(t *testing.T) {
	chain := []Step{
		mustStep(t, "1", "2", "0", ""),                     // multiply by 2
		mustStep(t, "21", "return value + 1", "0", ""),     // JavaScript
		mustStep(t, "9", "", "0", ""),                      // simple change
		mustStep(t, "21", "throw 'second'", "2", "fallen"), // JavaScript, set value on failure
	}
	var st, ref State
	in := Input{Type: history.Float, Defer: true}
	feed := func(text string) (Output, error) {
		in.Text = text
		out, err := Run(chain, in, &st)
		for err == nil && out.Suspended {
			res, jsErr := chain[out.Step].RunScript(context.Background(), nil, out.Text)
			out, err = Resume(chain, out.Step, res, jsErr, in, &st)
		}
		return out, err
	}
	plain := func(text string) (Output, error) {
		return Run(chain, Input{Type: history.Float, Text: text}, &ref)
	}
	for _, v := range []string{"1", "5", "6"} {
		got, gerr := feed(v)
		want, werr := plain(v)
		if got != want || (gerr == nil) != (werr == nil) {
			t.Errorf("%s: deferred %+v, %v; run %+v, %v", v, got, gerr, want, werr)
		}
	}
	// The first suspension is before step 1, on the multiplied value.
	in.Text = "3"
	out, err := Run(chain, in, &st)
	if err != nil || !out.Suspended || out.Step != 1 || out.Text != "6" {
		t.Fatalf("first suspension: %+v, %v", out, err)
	}
	// A failure of the script without a handler stops the chain with it.
	_, err = Resume(chain, 1, "", stepErr("cannot execute script: execution timeout"), in, &st)
	var se *StepError
	if !errors.As(err, &se) || se.Index != 1 || se.Message != "cannot execute script: execution timeout" {
		t.Errorf("failed script: %v", err)
	}
	if _, err := Resume(chain, 0, "", nil, in, &st); err == nil {
		t.Error("Resume after a step that is not JavaScript")
	}
}
