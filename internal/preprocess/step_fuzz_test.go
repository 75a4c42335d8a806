package preprocess

import (
	"errors"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// FuzzRun parses an arbitrary step and runs it twice (so that the change
// and discard steps see a previous value) on arbitrary text: neither may
// panic, and a failure must be a *StepError.
func FuzzRun(f *testing.F) {
	f.Add(uint8(1), "2", uint8(0), "", "12", uint8(history.Uint))
	f.Add(uint8(5), "(\\d+)\n\\1x", uint8(2), "v", "a12", uint8(history.Str))
	f.Add(uint8(10), "", uint8(0), "", "18446744073709551615", uint8(history.Uint))
	f.Add(uint8(12), "$.a[?(@.b > 1)].length()", uint8(1), "", `{"a":[{"b":2}]}`, uint8(history.Text))
	f.Add(uint8(24), ",\n\"\n1", uint8(0), "", "a,b\n\"1\"\"\",2", uint8(history.Text))
	f.Add(uint8(22), "{__name__=~\"a.*\",b!=\"c\"} == 1\nfunction\nsum", uint8(0), "", "# TYPE a gauge\na{b=\"x\"} 1 17\n", uint8(history.Float))
	f.Add(uint8(27), "", uint8(0), "", `<a x="1"><b/><b>t</b>u</a>`, uint8(history.Text))
	f.Add(uint8(11), "sum(//v) div count(//v/@x)", uint8(0), "", `<a><v x="1">2</v><v>3</v></a>`, uint8(history.Text))
	f.Add(uint8(21), "return JSON.parse(value).a * 2", uint8(2), "0", `{"a":1}`, uint8(history.Float))
	f.Add(uint8(20), "1m", uint8(0), "", "x", uint8(history.Str))
	f.Fuzz(func(t *testing.T, typ uint8, params string, handler uint8, hp, text string, vt uint8) {
		s, err := ParseStep(strconvU(StepType(typ%30)), params, strconvU(StepType(handler%5)), hp)
		if err != nil {
			return
		}
		// A fuzzed script may loop forever: a short limit keeps each run
		// short (the limit itself is tested in TestJavaScriptLimit).
		s.jsLimit = 10 * time.Millisecond
		var st State
		for i := 0; i < 2; i++ {
			_, err := Run([]Step{s}, Input{Text: text, Time: t0, Type: history.ValueType(vt % 5)}, &st)
			var se *StepError
			if err != nil && !errors.As(err, &se) {
				t.Fatalf("error %T: %v", err, err)
			}
		}
	})
}
