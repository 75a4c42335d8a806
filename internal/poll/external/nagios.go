package external

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
)

// Nagios plugin states (spec §9).
const (
	StateOK       = 0
	StateWarning  = 1
	StateCritical = 2
	StateUnknown  = 3
)

var stateNames = [4]string{"OK", "WARNING", "CRITICAL", "UNKNOWN"}

// Result is the value of a nagios[...] item: JSON, so that dependent
// items take the state, the text or one perfdata label by JSONPath
// ($.state, $.perfdata.time.value).
type Result struct {
	State      int                 `json:"state"`
	Status     string              `json:"status"`
	Output     string              `json:"output"`
	LongOutput string              `json:"long_output,omitempty"`
	Perfdata   map[string]Perfdata `json:"perfdata"`
	// ExitCode is the process's own exit code (-1 if it was killed).
	ExitCode int `json:"exit_code"`
}

// Perfdata is one 'label'=value[UOM];[warn];[crit];[min];[max] entry.
// Value is nil for "U" (undetermined); empty fields are left out.
type Perfdata struct {
	Value *float64 `json:"value"`
	UOM   string   `json:"uom,omitempty"`
	Warn  string   `json:"warn,omitempty"`
	Crit  string   `json:"crit,omitempty"`
	Min   *float64 `json:"min,omitempty"`
	Max   *float64 `json:"max,omitempty"`
}

// nagiosResult turns a plugin's outcome into the JSON value. Exit codes
// 0-3 are the state; any other code, a signal or a timeout is UNKNOWN
// (Nagios makes a timeout CRITICAL by default; UNKNOWN says the check
// itself failed, not the service).
func (c *Checker) nagiosResult(res *poll.Result, req request, out outcome, timeout time.Duration) *poll.Result {
	var v Result
	switch {
	case out.timedOut:
		v.State, v.ExitCode = StateUnknown, -1
		v.Output = fmt.Sprintf("plugin timed out after %s (killed)", timeout)
		c.results[resTimeout].Inc()
		c.throttle.Warn("nagios_timeout", "nagios plugin timed out", "item", res.ItemID, "key", res.Key, "timeout", timeout)
	case out.signal != 0:
		v.State, v.ExitCode = StateUnknown, -1
		v.Output = fmt.Sprintf("plugin killed by signal %d", out.signal)
		c.results[resOK].Inc()
	default:
		v.ExitCode = out.code
		v.State = out.code
		if out.code < 0 || out.code > StateUnknown {
			v.State = StateUnknown
		}
		c.results[resOK].Inc()
	}
	if !out.timedOut && out.signal == 0 {
		var bad int
		v.Output, v.LongOutput, v.Perfdata, bad = ParseOutput(string(out.output))
		if bad > 0 {
			c.badPerfdata.Add(uint64(bad))
			c.throttle.Warn("perfdata", "nagios plugin printed performance data that does not parse", "item", res.ItemID, "key", res.Key, "entries", bad)
		}
		if out.code != v.State && v.Output == "" {
			v.Output = fmt.Sprintf("plugin exited with code %d", out.code)
		}
	}
	if v.Perfdata == nil {
		v.Perfdata = map[string]Perfdata{}
	}
	v.Status = stateNames[v.State]
	b, err := json.Marshal(v)
	if err != nil { // only NaN/Inf could fail, and ParseOutput refuses them
		return c.notSupported(res, resNotSupported, "json", err.Error())
	}
	res.Status, res.Value = poll.OK, b
	return res
}

// ParseOutput splits a plugin's output (spec §9): the first line is
// TEXT[ | PERFDATA], further lines are long text, and after the first
// '|' in the long text everything (across lines) is more perfdata. It
// returns the text, the long text, the perfdata by label (a repeated
// label keeps its last entry) and how many perfdata entries did not
// parse.
func ParseOutput(s string) (text, long string, perf map[string]Perfdata, bad int) {
	s = strings.TrimRight(s, " \t\r\n")
	first, rest, _ := strings.Cut(s, "\n")
	text, perfText, _ := strings.Cut(first, "|")
	text = strings.TrimSpace(text)
	if i := strings.IndexByte(rest, '|'); i >= 0 {
		perfText += " " + rest[i+1:]
		rest = rest[:i]
	}
	long = strings.TrimRight(rest, " \t\r\n")
	perf, bad = ParsePerfdata(perfText)
	return text, long, perf, bad
}

// ParsePerfdata parses space-separated 'label'=value[UOM];[warn];[crit];[min];[max]
// entries; malformed ones are skipped and counted.
func ParsePerfdata(s string) (map[string]Perfdata, int) {
	perf := map[string]Perfdata{}
	bad := 0
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return perf, bad
		}
		label, next, ok := parseLabel(s, i)
		if !ok || next >= len(s) || s[next] != '=' {
			bad++
			i = skipEntry(s, i)
			continue
		}
		end := next + 1
		for end < len(s) && !isSpace(s[end]) {
			end++
		}
		p, ok := parseFields(s[next+1 : end])
		if !ok || label == "" {
			bad++
		} else {
			perf[label] = p
		}
		i = end
	}
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// parseLabel reads a label at s[i:]: quoted with ' (” is a quote), or
// up to '='. It returns the label and the index after it.
func parseLabel(s string, i int) (string, int, bool) {
	if s[i] != '\'' {
		j := i
		for j < len(s) && s[j] != '=' && !isSpace(s[j]) {
			j++
		}
		return s[i:j], j, true
	}
	var b strings.Builder
	j := i + 1
	for j < len(s) {
		if s[j] == '\'' {
			if j+1 < len(s) && s[j+1] == '\'' {
				b.WriteByte('\'')
				j += 2
				continue
			}
			return b.String(), j + 1, true
		}
		b.WriteByte(s[j])
		j++
	}
	return "", j, false
}

// skipEntry moves past a malformed entry: to the next space outside
// quotes.
func skipEntry(s string, i int) int {
	quoted := false
	for ; i < len(s); i++ {
		switch {
		case s[i] == '\'':
			quoted = !quoted
		case isSpace(s[i]) && !quoted:
			return i
		}
	}
	return i
}

// parseFields parses value[UOM];[warn];[crit];[min];[max].
func parseFields(s string) (Perfdata, bool) {
	var p Perfdata
	f := strings.Split(s, ";")
	if len(f) > 5 {
		return p, false
	}
	if f[0] != "U" {
		n := 0
		for n < len(f[0]) && (f[0][n] == '-' || f[0][n] == '.' || f[0][n] == ',' || f[0][n] >= '0' && f[0][n] <= '9') {
			n++
		}
		v, ok := parseNumber(f[0][:n])
		if !ok {
			return p, false
		}
		p.Value, p.UOM = &v, f[0][n:]
		if !validUOM(p.UOM) {
			return p, false
		}
	}
	if len(f) > 1 {
		p.Warn = f[1]
	}
	if len(f) > 2 {
		p.Crit = f[2]
	}
	for k, dst := range []**float64{&p.Min, &p.Max} {
		if len(f) > 3+k && f[3+k] != "" {
			v, ok := parseNumber(f[3+k])
			if !ok {
				return p, false
			}
			*dst = &v
		}
	}
	return p, true
}

// parseNumber parses a perfdata number; a decimal comma (plugins run
// under some locales print one) is read as a point.
func parseNumber(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.Replace(s, ",", ".", 1), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// validUOM reports whether u is a unit of spec §9. Plugins in the wild
// print others ("Bps", "KiB"); they are kept, as long as they are
// letters or '%' (a value like "12abc3" is not a number with a unit).
func validUOM(u string) bool {
	for i := 0; i < len(u); i++ {
		c := u[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '%' || c == '/') {
			return false
		}
	}
	return true
}
