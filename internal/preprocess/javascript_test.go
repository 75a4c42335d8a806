package preprocess

import (
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
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
// stopped by the heap watchdog, well before its time limit, and fails its
// step with the memory message; a script that allocates a little is not
// disturbed. The limit is lowered for the test (it is process-wide
// growth, so this test does not run in parallel with others).
func TestJavaScriptMemoryLimit(t *testing.T) {
	old := jsHeapLimit
	jsHeapLimit = 64 << 20
	t.Cleanup(func() { jsHeapLimit = old })
	s := mustStep(t, "21", "var a = []; for (;;) { a.push('x'.repeat(1 << 20) + a.length); }", "0", "")
	checkStep(t, s, []stepCase{{vt: history.Text, in: "x", wantErr: "cannot execute script: memory limit exceeded"}})
	s = mustStep(t, "21", "var a = []; for (var i = 0; i < 100; i++) { a.push(new Array(1001).join('x')); } return a.length;", "0", "")
	checkStep(t, s, []stepCase{{vt: history.Text, in: "x", want: "100"}})
}
