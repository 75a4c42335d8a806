package preprocess

import (
	"reflect"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

func TestTrace(t *testing.T) {
	f := func(name string, chain []Step, in Input, want []StepResult, wantErr string) {
		t.Helper()
		got, out, err := Trace(chain, in, nil)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: trace %+v, want %+v", name, got, want)
		}
		if (err != nil) != (wantErr != "") || (err != nil && err.Error() != wantErr) {
			t.Fatalf("%s: error %v, want %q", name, err, wantErr)
		}
		// The trace changes nothing: Run gives the same result.
		rout, rerr := Run(chain, in, nil)
		if rout != out || (rerr == nil) != (err == nil) {
			t.Fatalf("%s: Trace gave %+v, %v; Run %+v, %v", name, out, err, rout, rerr)
		}
	}
	in := Input{Text: "10", Time: t0, Type: history.Float}
	mult := mustStep(t, "1", "2", "0", "")
	f("two steps", []Step{mult, mustStep(t, "1", "0.5", "0", "")}, in,
		[]StepResult{{Text: "20", Valued: true}, {Text: "10", Valued: true}}, "")
	rangeStep := func(h, hp string) Step { return mustStep(t, "13", "0\n5", h, hp) }
	_, err := Run([]Step{rangeStep("0", "")}, in, nil)
	if err == nil {
		t.Fatal("10 passed the range 0..5")
	}
	msg := err.Error()
	// Each handler: the step's own error is kept beside the handler's
	// effect; the chain stops or goes on as the handler says.
	f("default", []Step{rangeStep("0", ""), mult}, in, []StepResult{{Err: msg}}, msg)
	f("discard", []Step{rangeStep("1", ""), mult}, in, []StepResult{{Err: msg, Action: HandlerDiscard}}, "")
	f("set value", []Step{rangeStep("2", "3"), mult}, in,
		[]StepResult{{Err: msg, Action: HandlerSetValue, Text: "3", Valued: true}, {Text: "6", Valued: true}}, "")
	f("set error", []Step{rangeStep("3", "too big"), mult}, in, []StepResult{{Err: msg, Action: HandlerSetError}}, "too big")
	// A change step's first value is discarded with no error; the chain
	// stops there.
	f("first delta", []Step{mustStep(t, "9", "", "0", ""), mult}, in, []StepResult{{}}, "")
	// A not supported item: the check step fails with the item's error.
	failedIn := Input{Err: "Cannot connect", Time: t0, Type: history.Str}
	f("check unsupported", []Step{mustStep(t, "26", "", "2", "down"), mustStep(t, "25", "do\nup", "0", "")}, failedIn,
		[]StepResult{{Err: "Cannot connect", Action: HandlerSetValue, Text: "down", Valued: true}, {Text: "upwn", Valued: true}}, "")
	f("no check step", []Step{mult}, failedIn, []StepResult{}, "Cannot connect")
}
