package expr

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/usermacro"
)

// The scripts in testdata/*.test drive the evaluator. Format, one command
// per line ('#' starts a comment line):
//
//	load /host/key TYPE          TYPE: float uint str text log
//	  TIME VALUE                 indented value lines; VALUE a number or a
//	                             quoted string; log lines may add
//	                             source=S severity=N eventid=N
//	fail /host/key "reason"      the source answers this item with an error
//	clear                        forget every item, macro and setting
//	macro {$NAME[:ctx]} "value"  a host-level macro definition ({$N:regex:"re"} too)
//	macro-template D {$NAME} "value"  one of a template at depth D (1: linked
//	                             to the host, 2: linked to such a template...)
//	macro-global {$NAME} "value" a global one (resolved after the others)
//	macro-regex {$NAME} "re" "value"  a host-level regex-context definition
//
// Macros resolve through usermacro.Scope, the server's resolver, over the
// levels host, templates by depth, global.
//
//	started TIME                 Options.Started
//	tz ZONE                      Options.Location (IANA name)
//	rand N                       rand() returns N
//	eval at TIME: EXPR => WANT
//
// TIME is unix seconds or RFC 3339. WANT is a number (compared within
// 1e-9, relative), ~NUMBER (within 1e-4, relative), a quoted string,
// unknown, unknown "part of the reason", or parse error "part of the
// message".
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.test")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/*.test scripts")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { runScript(t, file) })
	}
}

// memSource is the scripts' Source: values per item in memory, trends
// computed from them per hour.
type memSource struct {
	items map[ItemRef][]history.Sample // oldest first
	fails map[ItemRef]string
}

func (m *memSource) History(_ context.Context, item ItemRef, q HistoryQuery) ([]history.Sample, error) {
	if reason, ok := m.fails[item]; ok {
		return nil, errors.New(reason)
	}
	all, ok := m.items[item]
	if !ok {
		return nil, fmt.Errorf("item /%s/%s does not exist", item.Host, item.Key)
	}
	var out []history.Sample
	for i := len(all) - 1; i >= 0; i-- {
		s := all[i]
		if s.Clock > q.Till {
			continue
		}
		if q.Count > 0 {
			if len(out) == q.Count {
				break
			}
		} else if s.Clock <= q.From {
			break
		}
		out = append(out, s)
	}
	return out, nil
}

// Items implements ItemLister over the loaded items: host "", a name or
// "*", keys by MatchKey, no filters.
func (m *memSource) Items(_ context.Context, q ItemQuery) ([]ItemRef, error) {
	if q.Filter != "" {
		return nil, fmt.Errorf("item filters are not supported")
	}
	var out []ItemRef
	for ref := range m.items {
		if (q.Host == "*" || ref.Host == q.Host) && MatchKey(q.Key, ref.Key) {
			out = append(out, ref)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func (m *memSource) Trends(_ context.Context, item ItemRef, from, till int64) ([]history.Trend, error) {
	if reason, ok := m.fails[item]; ok {
		return nil, errors.New(reason)
	}
	byHour := map[int64]*history.Trend{}
	for _, s := range m.items[item] {
		h := s.Clock - s.Clock%3600
		if h < from || h >= till || !s.Type.Numeric() {
			continue
		}
		v := sampleFloat(&s)
		tr := byHour[h]
		if tr == nil {
			tr = &history.Trend{Clock: h, Min: v, Max: v}
			byHour[h] = tr
		}
		tr.Num++
		tr.Sum += v
		tr.Min = math.Min(tr.Min, v)
		tr.Max = math.Max(tr.Max, v)
	}
	out := make([]history.Trend, 0, len(byHour))
	for _, tr := range byHour {
		out = append(out, *tr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Clock < out[j].Clock })
	return out, nil
}

type scriptState struct {
	src *memSource
	// levels[0] is the host's macros, levels[d] those of templates at
	// depth d; global is resolved last.
	levels  [][]usermacro.Def
	global  []usermacro.Def
	opt     Options
	current *ItemRef
	curType history.ValueType
}

func newScriptState() *scriptState {
	return &scriptState{src: &memSource{items: map[ItemRef][]history.Sample{}, fails: map[ItemRef]string{}}}
}

func runScript(t *testing.T, file string) {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st := newScriptState()
	sc := bufio.NewScanner(f)
	evals := 0
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := sc.Text()
		where := fmt.Sprintf("%s:%d", file, lineNo)
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if err := st.value(trimmed); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			continue
		}
		st.current = nil
		cmd, rest, _ := strings.Cut(trimmed, " ")
		switch cmd {
		case "eval":
			evals++
			if err := st.eval(rest); err != nil {
				t.Errorf("%s: %s\n\t%v", where, trimmed, err)
			}
		default:
			if err := st.command(cmd, rest); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if evals == 0 {
		t.Fatalf("%s has no eval lines", file)
	}
}

func parseTime(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(frac*1e9)), nil
	}
	return time.Parse(time.RFC3339, s)
}

func parseRef(s string) (ItemRef, error) {
	if !strings.HasPrefix(s, "/") {
		return ItemRef{}, fmt.Errorf("item %q must be /host/key", s)
	}
	host, key, ok := strings.Cut(s[1:], "/")
	if !ok {
		return ItemRef{}, fmt.Errorf("item %q must be /host/key", s)
	}
	return ItemRef{Host: host, Key: key}, nil
}

// fields splits on spaces, keeping quoted strings whole (unquoted).
func fields(s string) ([]string, error) {
	var out []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return out, nil
		}
		if s[0] == '"' {
			end, err := scanString(s, 0)
			if err != nil {
				return nil, err
			}
			out = append(out, unquote(s[:end]))
			s = s[end:]
			continue
		}
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			i = len(s)
		}
		out = append(out, s[:i])
		s = s[i:]
	}
}

func (st *scriptState) command(cmd, rest string) error {
	args, err := fields(rest)
	if err != nil {
		return err
	}
	switch cmd {
	case "load":
		if len(args) != 2 {
			return fmt.Errorf("load /host/key TYPE")
		}
		ref, err := parseRef(args[0])
		if err != nil {
			return err
		}
		types := map[string]history.ValueType{"float": history.Float, "uint": history.Uint, "str": history.Str, "text": history.Text, "log": history.Log}
		vt, ok := types[args[1]]
		if !ok {
			return fmt.Errorf("unknown value type %q", args[1])
		}
		st.current, st.curType = &ref, vt
		st.src.items[ref] = nil
	case "fail":
		ref, err := parseRef(args[0])
		if err != nil {
			return err
		}
		st.src.fails[ref] = args[1]
	case "clear":
		*st = *newScriptState()
	case "macro", "macro-global", "macro-template", "macro-regex":
		depth := 0
		if cmd == "macro-template" {
			if len(args) != 3 {
				return fmt.Errorf("macro-template DEPTH {$NAME} \"value\"")
			}
			d, err := strconv.Atoi(args[0])
			if err != nil || d < 1 {
				return fmt.Errorf("macro-template: depth %q must be 1 or more", args[0])
			}
			depth, args = d, args[1:]
		}
		if cmd == "macro-regex" {
			if len(args) != 3 {
				return fmt.Errorf("macro-regex {$NAME} \"re\" \"value\"")
			}
			name, _ := splitUserMacro(args[0])
			args = []string{(usermacro.Ref{Name: name, HasContext: true, Regex: true, Context: args[1]}).Key(), args[2]}
		}
		if len(args) != 2 {
			return fmt.Errorf("%s {$NAME} \"value\"", cmd)
		}
		r, err := usermacro.CheckDefinition(args[0])
		if err != nil {
			return err
		}
		d, err := usermacro.NewDef(r, args[1], usermacro.Text)
		if err != nil {
			return err
		}
		if cmd == "macro-global" {
			st.global = append(st.global, d)
			break
		}
		for len(st.levels) <= depth {
			st.levels = append(st.levels, nil)
		}
		st.levels[depth] = append(st.levels[depth], d)
	case "started":
		tm, err := parseTime(args[0])
		if err != nil {
			return err
		}
		st.opt.Started = tm
	case "tz":
		loc, err := time.LoadLocation(args[0])
		if err != nil {
			return err
		}
		st.opt.Location = loc
	case "rand":
		n, err := strconv.ParseInt(args[0], 10, 64)
		if err != nil {
			return err
		}
		st.opt.Rand = func() int64 { return n }
	default:
		return fmt.Errorf("unknown command %q", cmd)
	}
	return nil
}

// value adds one indented value line to the item being loaded.
func (st *scriptState) value(line string) error {
	if st.current == nil {
		return fmt.Errorf("value line outside a load block")
	}
	args, err := fields(line)
	if err != nil {
		return err
	}
	if len(args) < 2 {
		return fmt.Errorf("value line wants TIME VALUE")
	}
	tm, err := parseTime(args[0])
	if err != nil {
		return err
	}
	s := history.Sample{Clock: tm.Unix(), NS: int32(tm.Nanosecond()), Type: st.curType}
	switch st.curType {
	case history.Float:
		s.F, err = strconv.ParseFloat(args[1], 64)
	case history.Uint:
		s.U, err = strconv.ParseUint(args[1], 10, 64)
	default:
		s.S = args[1]
	}
	if err != nil {
		return err
	}
	if st.curType == history.Log {
		s.Log = &history.LogMeta{}
		for _, kv := range args[2:] {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "source":
				s.Log.Source = v
			case "severity":
				n, err := strconv.ParseInt(v, 10, 32)
				if err != nil {
					return err
				}
				s.Log.Severity = int32(n)
			case "eventid":
				if s.Log.EventID, err = strconv.ParseInt(v, 10, 64); err != nil {
					return err
				}
			default:
				return fmt.Errorf("unknown log field %q", k)
			}
		}
	}
	items := st.src.items[*st.current]
	if n := len(items); n > 0 && !items[n-1].Before(&s) {
		return fmt.Errorf("values must be in time order")
	}
	st.src.items[*st.current] = append(items, s)
	return nil
}

// eval runs "at TIME: EXPR => WANT".
func (st *scriptState) eval(rest string) error {
	if !strings.HasPrefix(rest, "at ") {
		return fmt.Errorf("eval at TIME: EXPR => WANT")
	}
	ts, rest, ok := strings.Cut(rest[3:], ": ")
	if !ok {
		return fmt.Errorf("eval at TIME: EXPR => WANT")
	}
	i := strings.LastIndex(rest, " => ")
	if i < 0 {
		return fmt.Errorf("missing \" => WANT\"")
	}
	src, want := rest[:i], strings.TrimSpace(rest[i+4:])
	now, err := parseTime(ts)
	if err != nil {
		return err
	}
	e, perr := Parse(src)
	if strings.HasPrefix(want, "parse error") {
		needle, err := wantNeedle(want[len("parse error"):])
		if err != nil {
			return err
		}
		if perr == nil {
			return fmt.Errorf("parsed, want a parse error %q", needle)
		}
		if !strings.Contains(perr.Error(), needle) {
			return fmt.Errorf("parse error %q, want one containing %q", perr, needle)
		}
		return nil
	}
	if perr != nil {
		return fmt.Errorf("parse: %v", perr)
	}
	opt := st.opt
	opt.Now, opt.Source = now, st.src
	var levels []*usermacro.Level
	for _, l := range append(slices.Clone(st.levels), st.global) {
		levels = append(levels, usermacro.NewLevel(l))
	}
	opt.Macros = usermacro.NewScope(levels...)
	got := e.Eval(context.Background(), opt)
	return checkValue(got, want)
}

func wantNeedle(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if s[0] != '"' {
		return "", fmt.Errorf("want a quoted text, got %q", s)
	}
	return strconv.Unquote(s)
}

func checkValue(got Value, want string) error {
	switch {
	case strings.HasPrefix(want, "unknown"):
		needle, err := wantNeedle(want[len("unknown"):])
		if err != nil {
			return err
		}
		if !got.IsError() || !strings.Contains(got.Err, needle) {
			return fmt.Errorf("got %s, want unknown containing %q", got, needle)
		}
	case strings.HasPrefix(want, `"`):
		s, err := strconv.Unquote(want)
		if err != nil {
			return err
		}
		if got.Kind != KindString || got.Str != s {
			return fmt.Errorf("got %s (kind %d), want string %q", got, got.Kind, s)
		}
	default:
		tol := 1e-9
		if strings.HasPrefix(want, "~") {
			tol, want = 1e-4, want[1:]
		}
		w, err := strconv.ParseFloat(want, 64)
		if err != nil {
			return fmt.Errorf("bad WANT %q", want)
		}
		if got.Kind != KindNumber {
			return fmt.Errorf("got %s, want number %v", got, w)
		}
		if got.Num != w && math.Abs(got.Num-w) > tol*math.Max(1, math.Abs(w)) {
			return fmt.Errorf("got %v, want %v", got.Num, w)
		}
	}
	return nil
}

// TestScriptsCoverEveryFunction: every function of the table is
// evaluated by at least one script line, so a new function comes with
// its scripts.
func TestScriptsCoverEveryFunction(t *testing.T) {
	files, err := filepath.Glob("testdata/*.test")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{} // "h:name" for history functions, "m:name" for the others
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			_, rest, ok := strings.Cut(line, ": ")
			if !strings.HasPrefix(line, "eval at ") || !ok {
				continue
			}
			i := strings.LastIndex(rest, " => ")
			if i < 0 {
				continue
			}
			e, err := Parse(rest[:i])
			if err != nil {
				continue
			}
			walk(e.Root(), func(n Node) {
				if c, ok := n.(*Call); ok {
					kind := "m:"
					if c.Query != nil {
						kind = "h:"
					}
					used[kind+c.Name] = true
				}
			})
		}
	}
	for name := range historyFuncs {
		if !used["h:"+name] {
			t.Errorf("history function %s() is not evaluated by any testdata script", name)
		}
	}
	for name := range mathFuncs {
		if !used["m:"+name] {
			t.Errorf("function %s() is not evaluated by any testdata script", name)
		}
	}
}
