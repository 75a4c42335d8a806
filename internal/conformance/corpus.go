package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Case is one request sequence of the corpus.
type Case struct {
	// Name is the file's base name; golden files and docs/compat.md name
	// the case by it.
	Name string `json:"-"`
	// About says what client or behaviour the case follows, and where
	// its parameter shapes come from.
	About string `json:"about"`
	// Cleanup lists object families whose objects named with Prefix are
	// deleted on the peer before a recording (a recording that failed
	// half-way leaves them behind): "host", "hostgroup", "user", ...;
	// "globalmacro" deletes the global macros named "{$CF_LG..." for
	// prefix "cf-lg" (a macro's name has no "-").
	Cleanup []string `json:"cleanup,omitempty"`
	// Prefix starts the name of every object the case creates.
	Prefix string `json:"prefix,omitempty"`
	Steps  []Step `json:"steps"`
}

// Step is one call, frame or sync point.
type Step struct {
	// ID names the step in golden files and docs/compat.md; unique in
	// its case.
	ID string `json:"id"`
	// Method and Params: a JSON-RPC call. Params strings "$name" are
	// replaced by the value bound to name (any JSON), "${name}" inside a
	// string by its text; "$T0+N" is the run's base time plus N seconds;
	// a string starting "$$" is sent with one "$" less (a JSONPath
	// "$$.a" is sent as "$.a").
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	// Raw is a whole request body sent as it is (malformed JSON, a
	// batch, a wrong jsonrpc version): the JSON-RPC layer's errors.
	Raw string `json:"raw,omitempty"`
	// RPCID is the JSON-RPC id sent (1 by default): clients send
	// numbers (pyzabbix counts) or strings (zabbix_utils sends a UUID),
	// and the answer must echo it as sent.
	RPCID json.RawMessage `json:"rpcid,omitempty"`
	// As names the session the call is made in: "admin" (the default),
	// "none" (no auth), or a name bound to a token by an earlier step.
	As string `json:"as,omitempty"`
	// Bind names values of the raw answer for later steps: name → path
	// ("result.groupids.0", "result.*.groupid" for a list). A bound ID
	// is also written as "$name" in every normalised answer.
	Bind map[string]string `json:"bind,omitempty"`
	// Order overrides how the answer's top-level array is compared:
	// "keep" (in order) or "any"; by default in order when the params
	// name a sortfield ("any" for trend.get, whose SQL has no ORDER BY
	// in 6.0 whatever the sortfield).
	Order string `json:"order,omitempty"`
	// Compare "shape" keeps only the kind of the answer: the error as
	// it is, a result as its JSON type ("<array>", "<object>",
	// "<string>", ...): for calls whose content depends on everything
	// else on the server (a get without a filter).
	Compare string `json:"compare,omitempty"`
	// Send is a trapper "sender data" frame; each value's clock is
	// "$T0+N".
	Send []SendValue `json:"send,omitempty"`
	// Sync waits for the target to have applied the configuration
	// changed so far (the peer reloads its configuration cache) and the
	// values sent so far (history syncers, triggers).
	Sync bool `json:"sync,omitempty"`
}

// SendValue is one value of a Send step.
type SendValue struct {
	Host  string `json:"host"`
	Key   string `json:"key"`
	Value string `json:"value"`
	Clock string `json:"clock,omitempty"`
}

// LoadCorpus reads every case under dir, sorted by name.
func LoadCorpus(dir string) ([]Case, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Case
	for _, n := range names {
		c, err := loadCase(n)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func loadCase(path string) (Case, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Case{}, err
	}
	var c Case
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Case{}, fmt.Errorf("%s: %w", path, err)
	}
	c.Name = strings.TrimSuffix(filepath.Base(path), ".json")
	seen := map[string]bool{}
	for i, s := range c.Steps {
		if s.ID == "" {
			return Case{}, fmt.Errorf("%s: step %d has no id", path, i+1)
		}
		if seen[s.ID] {
			return Case{}, fmt.Errorf("%s: step id %q twice", path, s.ID)
		}
		seen[s.ID] = true
		kinds := 0
		for _, k := range []bool{s.Method != "", len(s.Send) > 0, s.Sync, s.Raw != ""} {
			if k {
				kinds++
			}
		}
		if kinds != 1 {
			return Case{}, fmt.Errorf("%s: step %s must be exactly one of method, send, sync, raw", path, s.ID)
		}
	}
	return c, nil
}

// vars holds the values bound during a run.
type vars struct {
	t0 int64
	m  map[string]any
	// clocks are the times the case named ("$T0+N" in params and sent
	// values), with the hours they start in: the clocks an answer may
	// hold because the case put them there.
	clocks map[int64]bool
}

// substitute returns params with every "$name" and "${name}" replaced.
func (v *vars) substitute(params json.RawMessage) (json.RawMessage, error) {
	if len(params) == 0 {
		return json.RawMessage("{}"), nil
	}
	var x any
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	y, err := v.walk(x)
	if err != nil {
		return nil, err
	}
	return json.Marshal(y)
}

func (v *vars) walk(x any) (any, error) {
	switch t := x.(type) {
	case map[string]any:
		for k, e := range t {
			r, err := v.walk(e)
			if err != nil {
				return nil, err
			}
			t[k] = r
		}
		return t, nil
	case []any:
		for i, e := range t {
			r, err := v.walk(e)
			if err != nil {
				return nil, err
			}
			t[i] = r
		}
		return t, nil
	case string:
		return v.str(t)
	}
	return x, nil
}

// str resolves one string of the params.
func (v *vars) str(s string) (any, error) {
	if lit, ok := strings.CutPrefix(s, "$$"); ok {
		return "$" + lit, nil
	}
	if strings.HasPrefix(s, "$") && !strings.HasPrefix(s, "${") {
		name := s[1:]
		if t, ok := v.timeExpr(name); ok {
			return t, nil
		}
		val, ok := v.m[name]
		if !ok {
			return nil, fmt.Errorf("%s is not bound", s)
		}
		return val, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := strings.Index(s[i:], "}")
		if j < 0 {
			return nil, fmt.Errorf("unterminated ${ in %q", s)
		}
		name := s[i+2 : i+j]
		b.WriteString(s[:i])
		if t, ok := v.timeExpr(name); ok {
			b.WriteString(strconv.FormatInt(t, 10))
		} else if val, ok := v.m[name]; ok {
			fmt.Fprint(&b, val)
		} else {
			return nil, fmt.Errorf("${%s} is not bound", name)
		}
		s = s[i+j+1:]
	}
	return b.String(), nil
}

// timeExpr reads "T0", "T0+N" and "T0-N".
func (v *vars) timeExpr(name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, "T0")
	if !ok {
		return 0, false
	}
	n := int64(0)
	if rest != "" {
		var err error
		if n, err = strconv.ParseInt(rest, 10, 64); err != nil {
			return 0, false
		}
	}
	t := v.t0 + n
	if v.clocks != nil {
		v.clocks[t] = true
		v.clocks[t-(t%3600+3600)%3600] = true
	}
	return t, true
}

// extract reads path from a decoded answer: dot-separated members and
// indexes, "*" for every element of a list (the result is a list),
// "[member=value]" for the elements whose member is value (a list).
func extract(x any, path string) (any, error) {
	return extractParts(x, splitPath(path), path)
}

// splitPath splits a path at its dots, but not inside "[...]".
func splitPath(path string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '.':
			if depth == 0 {
				parts = append(parts, path[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, path[start:])
}

func extractParts(x any, parts []string, path string) (any, error) {
	if len(parts) == 0 {
		return x, nil
	}
	p := parts[0]
	if strings.HasPrefix(p, "[") && strings.HasSuffix(p, "]") {
		// [member=value]: the elements of a list whose member is value,
		// as a client picks the groups its filter names.
		k, want, _ := strings.Cut(p[1:len(p)-1], "=")
		l, ok := x.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: %s of a non-list", path, p)
		}
		out := []any{}
		for _, e := range l {
			if m, ok := e.(map[string]any); ok && fmt.Sprint(m[k]) == want {
				r, err := extractParts(e, parts[1:], path)
				if err != nil {
					return nil, err
				}
				out = append(out, r)
			}
		}
		return out, nil
	}
	switch t := x.(type) {
	case map[string]any:
		if p == "*" {
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			out := []any{}
			for _, k := range keys {
				e, err := extractParts(t[k], parts[1:], path)
				if err != nil {
					return nil, err
				}
				out = append(out, e)
			}
			return out, nil
		}
		e, ok := t[p]
		if !ok {
			return nil, fmt.Errorf("%s: no member %q", path, p)
		}
		return extractParts(e, parts[1:], path)
	case []any:
		if p == "*" {
			out := []any{}
			for _, e := range t {
				r, err := extractParts(e, parts[1:], path)
				if err != nil {
					return nil, err
				}
				out = append(out, r)
			}
			return out, nil
		}
		i, err := strconv.Atoi(p)
		if err != nil || i < 0 || i >= len(t) {
			return nil, fmt.Errorf("%s: no element %q (of %d)", path, p, len(t))
		}
		return extractParts(t[i], parts[1:], path)
	}
	return nil, fmt.Errorf("%s: %q of a scalar", path, p)
}
