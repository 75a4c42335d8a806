package trigger

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/history"
)

// The scripts in testdata/*.test drive the evaluator and the state
// machine together: values in, trigger states and events out. Host h1
// has items a and b; every script runs in a fresh environment. Format,
// one command per line ('#' starts a comment line):
//
//	shards N                      evaluation shards (default 1); first command only
//	trigger NAME: EXPR            a trigger described NAME; indented lines after
//	                              it set its options:
//	  recovery: EXPR              recovery mode "recovery expression"
//	  recovery: none              recovery mode "none" (closed only by hand)
//	  multiple                    multiple problem events
//	  manual_close                problems may be closed by hand
//	  depends: NAME               depends on trigger NAME (defined before)
//	commit KEY T=V [T=V...]       store values of /h1/KEY and commit them as
//	                              one batch (T: seconds after t0, optionally
//	                              .NNN nanoseconds)
//	drain                         one evaluation pass (Evaluator.Drain)
//	state NAME: ok|problem        the trigger's value now, its state normal
//	state NAME: ok|problem unknown "TEXT"
//	                              the value kept, the state unknown, TEXT in
//	                              its error
//	open NAME: N                  open problems of the trigger
//	close NAME at T               close its open problems by hand at T
//	                              (event.acknowledge with action close)
//	close NAME at T => error "TEXT"  the same, refused with TEXT
//	events NAME: [problem@T|ok@T ...]  every event of the trigger so far, in
//	                              order (T as above, whole seconds)
//	evaluated N                   evaluations so far
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.test")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/*.test scripts")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runScript(t, f) })
	}
}

func runScript(t *testing.T, path string) {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var e *evalEnv
	trigs := map[string]uint64{}
	var lines []string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(lines); i++ {
		text := strings.TrimSpace(lines[i])
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		where := fmt.Sprintf("%s:%d: %s", path, i+1, text)
		cmd, rest, _ := strings.Cut(text, " ")
		if cmd == "shards" {
			if e != nil {
				t.Fatalf("%s: shards must come first", where)
			}
			n, err := strconv.Atoi(rest)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			e = newEvalEnvShards(t, 0, true, n)
			continue
		}
		if e == nil {
			e = newEvalEnvShards(t, 0, true, 1)
		}
		name, arg, ok := strings.Cut(rest, ": ")
		if !ok {
			name = strings.TrimSuffix(name, ":") // "events NAME:" expects none
		}
		switch cmd {
		case "trigger":
			f := catalog.TriggerFields{Description: name, Expression: arg}
			for i+1 < len(lines) && strings.TrimLeft(lines[i+1], " \t") != lines[i+1] && strings.TrimSpace(lines[i+1]) != "" {
				i++
				scriptOption(t, fmt.Sprintf("%s:%d: %s", path, i+1, strings.TrimSpace(lines[i])), &f, trigs, strings.TrimSpace(lines[i]))
			}
			trigs[name] = e.trigger(f)
		case "commit":
			fields := strings.Fields(rest)
			it := e.cat.Snapshot().Lookup("h1", fields[0])
			if it == nil || len(fields) < 2 {
				t.Fatalf("%s: want an item of h1 and values", where)
			}
			var batch []history.Sample
			for _, f := range fields[1:] {
				ts, v, ok := strings.Cut(f, "=")
				clock, ns := parseScriptTime(t, where, ts)
				x, err := strconv.ParseFloat(v, 64)
				if !ok || err != nil {
					t.Fatalf("%s: bad value %q", where, f)
				}
				batch = append(batch, history.Sample{ItemID: it.ID, Clock: clock, NS: ns, Type: history.Float, F: x})
			}
			if err := e.hist.Write(context.Background(), batch); err != nil {
				t.Fatal(err)
			}
			e.vc.Add(0, batch)
			e.ev.Commit(0, batch)
		case "drain":
			e.ev.Drain(context.Background())
		case "state":
			id := scriptTrigger(t, where, trigs, name)
			value, unknown, isUnknown := strings.Cut(arg, " unknown ")
			want, ok := map[string]uint8{"ok": event.ValueOK, "problem": event.ValueProblem}[value]
			if !ok {
				t.Fatalf("%s: want ok or problem", where)
			}
			rt := e.m.Runtime(id)
			if rt.Value != want {
				t.Errorf("%s: value %d", where, rt.Value)
			}
			switch {
			case !isUnknown && rt.State != 0:
				t.Errorf("%s: state unknown: %q", where, rt.Error)
			case isUnknown && (rt.State != 1 || !strings.Contains(rt.Error, scriptString(t, where, unknown))):
				t.Errorf("%s: state %d, error %q", where, rt.State, rt.Error)
			}
		case "open":
			id := scriptTrigger(t, where, trigs, name)
			n, err := strconv.Atoi(arg)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			if got := len(e.store.OpenProblemsOf(id)); got != n {
				t.Errorf("%s: %d open", where, got)
			}
		case "close":
			who, wantErr, refused := strings.Cut(rest, " => error ")
			tname, at, ok := strings.Cut(who, " at ")
			if !ok {
				t.Fatalf("%s: want close NAME at T", where)
			}
			id := scriptTrigger(t, where, trigs, tname)
			clock, _ := parseScriptTime(t, where, at)
			req := AckRequest{Action: event.ActionClose, UserID: 1, Clock: clock}
			for _, p := range e.store.OpenProblemsOf(id) {
				req.EventIDs = append(req.EventIDs, p.ID)
			}
			err := e.m.Acknowledge(e.cat.Snapshot(), req)
			switch {
			case !refused && err != nil:
				t.Errorf("%s: %v", where, err)
			case refused && (err == nil || !strings.Contains(err.Error(), scriptString(t, where, wantErr))):
				t.Errorf("%s: got error %v", where, err)
			}
		case "events":
			id := scriptTrigger(t, where, trigs, name)
			var got []string
			for _, ev := range e.store.Events(func(ev *event.Event) bool { return ev.ObjectID == id }) {
				v := "ok"
				if ev.Value == event.ValueProblem {
					v = "problem"
				}
				got = append(got, fmt.Sprintf("%s@%d", v, ev.Clock-t0))
			}
			if g, w := strings.Join(got, " "), strings.Join(strings.Fields(arg), " "); g != w {
				t.Errorf("%s: got %q", where, g)
			}
		case "evaluated":
			n, err := strconv.ParseUint(rest, 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			if got := e.ev.evaluated.Load(); got != n {
				t.Errorf("%s: %d evaluations", where, got)
			}
		default:
			t.Fatalf("%s: unknown command", where)
		}
	}
}

// scriptOption applies one option line of a trigger to f.
func scriptOption(t *testing.T, where string, f *catalog.TriggerFields, trigs map[string]uint64, opt string) {
	t.Helper()
	key, arg, _ := strings.Cut(opt, ": ")
	switch key {
	case "recovery":
		if arg == "none" {
			f.RecoveryMode = catalog.RecoverNone
		} else {
			f.RecoveryMode, f.RecoveryExpression = catalog.RecoverRecoveryExpression, arg
		}
	case "multiple":
		f.Multiple = true
	case "manual_close":
		f.ManualClose = true
	case "depends":
		f.Dependencies = append(f.Dependencies, scriptTrigger(t, where, trigs, arg))
	default:
		t.Fatalf("%s: unknown trigger option", where)
	}
}

// scriptString reads a double-quoted string.
func scriptString(t *testing.T, where, s string) string {
	t.Helper()
	v, err := strconv.Unquote(strings.TrimSpace(s))
	if err != nil {
		t.Fatalf("%s: want a quoted string, not %s", where, s)
	}
	return v
}

// parseScriptTime reads "S" or "S.NNN": seconds after t0 and nanoseconds.
func parseScriptTime(t *testing.T, where, s string) (int64, int32) {
	t.Helper()
	sec, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		t.Fatalf("%s: bad time %q", where, s)
	}
	var ns int64
	if frac != "" {
		if ns, err = strconv.ParseInt(frac, 10, 32); err != nil {
			t.Fatalf("%s: bad time %q", where, s)
		}
	}
	return t0 + n, int32(ns)
}

func scriptTrigger(t *testing.T, where string, trigs map[string]uint64, name string) uint64 {
	t.Helper()
	id, ok := trigs[name]
	if !ok {
		t.Fatalf("%s: no trigger %q", where, name)
	}
	return id
}
