package expr

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// callError is the unknown value of a function that cannot be evaluated,
// worded as Zabbix: "cannot evaluate function last(/h/k,#2): ...".
func callError(c *Call, format string, args ...any) Value {
	var b strings.Builder
	c.appendTo(&b)
	return ErrorValue("cannot evaluate function " + b.String() + ": " + fmt.Sprintf(format, args...))
}

// arg evaluates parameter i after the query; ok is false when it was
// omitted (absent or empty).
func (ev *evaluator) arg(c *Call, i int) (v Value, ok bool) {
	if i >= len(c.Args) {
		return Value{}, false
	}
	if _, empty := c.Args[i].(*Empty); empty {
		return Value{}, false
	}
	return ev.eval(c.Args[i]), true
}

// strArg evaluates an optional string parameter (mode, operator, fit);
// def when omitted.
func (ev *evaluator) strArg(c *Call, i int, def string) (string, *Value) {
	v, ok := ev.arg(c, i)
	if !ok {
		return def, nil
	}
	if v.IsError() {
		return "", &v
	}
	return v.text(), nil
}

// numArg evaluates a required numeric parameter.
func (ev *evaluator) numArg(c *Call, i int, name string) (float64, *Value) {
	v, ok := ev.arg(c, i)
	if !ok {
		e := callError(c, "missing %s", name)
		return 0, &e
	}
	if v.IsError() {
		return 0, &v
	}
	f, ok := v.number()
	if !ok {
		e := callError(c, "invalid %s %q", name, v.text())
		return 0, &e
	}
	return f, nil
}

// period returns the function's period, macros expanded; def is used
// when it is omitted ("" = required).
func (ev *evaluator) period(c *Call, def string) (periodSpec, *Value) {
	raw := def
	if len(c.Args) > 0 {
		if p, ok := c.Args[0].(*Period); ok {
			if p.spec != nil {
				// Checked at parse time (checkCall).
				return *p.spec, nil
			}
			raw = ev.expandPeriod(p.Raw)
		}
	}
	if raw == "#1" {
		return periodSpec{count: true, n: 1}, nil
	}
	if raw == "" {
		e := callError(c, "missing period")
		return periodSpec{}, &e
	}
	if strings.Contains(raw, "{") {
		e := callError(c, "cannot resolve macro in period %q", raw)
		return periodSpec{}, &e
	}
	if err := checkPeriodKind(c.Name, c.fn, raw); err != nil {
		e := callError(c, "%s", err)
		return periodSpec{}, &e
	}
	ps, _ := parsePeriodSpec(raw) // checked just above
	return ps, nil
}

// expandPeriod replaces user macros in a period ("{$P}", "{$P}:now-1d").
func (ev *evaluator) expandPeriod(raw string) string {
	if !strings.Contains(raw, "{$") {
		return raw
	}
	return ev.expandString(raw)
}

// before is HistoryQuery.Before for a window ending at end: the
// evaluation's nanosecond when the window ends now, else 0 (a shifted
// window, "1h:now-1d", ends on a whole second).
func (ev *evaluator) before(end time.Time) int64 {
	if end.Equal(ev.opt.Now) {
		return ev.opt.Now.UnixNano()
	}
	return 0
}

// fetch reads the values of the call's item over ps, newest first.
func (ev *evaluator) fetch(c *Call, ps periodSpec) ([]history.Sample, *Value) {
	if ev.opt.Source == nil {
		e := callError(c, "no data source")
		return nil, &e
	}
	end := ps.end(ev.opt.Now, ev.opt.Location)
	q := HistoryQuery{Till: end.Unix(), Before: ev.before(end)}
	if ps.count {
		q.Count = int(min(ps.n, math.MaxInt32))
	} else {
		q.From = ps.start(end).Unix()
	}
	ref := ItemRef{Host: c.Query.Host, Key: c.Query.Key}
	samples, err := ev.opt.Source.History(ev.ctx, ref, q)
	if err != nil {
		e := callError(c, "%s", err)
		return nil, &e
	}
	return samples, nil
}

// window fetches with the period and refuses an empty result.
func (ev *evaluator) window(c *Call, def string) ([]history.Sample, periodSpec, *Value) {
	ps, errv := ev.period(c, def)
	if errv != nil {
		return nil, ps, errv
	}
	s, errv := ev.fetch(c, ps)
	if errv != nil {
		return nil, ps, errv
	}
	if len(s) == 0 {
		e := callError(c, "no data in the evaluation period")
		return nil, ps, &e
	}
	return s, ps, nil
}

func sampleValue(s *history.Sample) Value {
	switch s.Type {
	case history.Float:
		return NumberValue(s.F)
	case history.Uint:
		return NumberValue(float64(s.U))
	}
	return StringValue(s.S)
}

func sampleFloat(s *history.Sample) float64 {
	if s.Type == history.Uint {
		return float64(s.U)
	}
	return s.F
}

// floats returns the values oldest first, or an error for a non-numeric
// item.
func floats(c *Call, s []history.Sample) ([]float64, *Value) {
	out := make([]float64, len(s))
	for i := range s {
		if !s[i].Type.Numeric() {
			e := callError(c, "the item's values are not numeric (%s)", s[i].Type)
			return nil, &e
		}
		out[len(s)-1-i] = sampleFloat(&s[i])
	}
	return out, nil
}

// numericWindow is window + floats, the common start of the aggregate
// functions.
func (ev *evaluator) numericWindow(c *Call) ([]float64, *Value) {
	s, _, errv := ev.window(c, "")
	if errv != nil {
		return nil, errv
	}
	return floats(c, s)
}

func hLast(ev *evaluator, c *Call) Value {
	ps, errv := ev.period(c, "#1")
	if errv != nil {
		return *errv
	}
	s, errv := ev.fetch(c, ps)
	if errv != nil {
		return *errv
	}
	if int64(len(s)) < ps.n {
		return callError(c, "not enough data: %d of %d values", len(s), ps.n)
	}
	return sampleValue(&s[ps.n-1])
}

func hFirst(ev *evaluator, c *Call) Value {
	s, _, errv := ev.window(c, "")
	if errv != nil {
		return *errv
	}
	return sampleValue(&s[len(s)-1])
}

// aggregate builds avg, min, max and sum of a period. It folds the
// samples in place rather than through floats: these are the functions
// of most triggers, and the copy would be their only allocation.
func aggregate(name string) evalFunc {
	return func(ev *evaluator, c *Call) Value {
		s, _, errv := ev.window(c, "")
		if errv != nil {
			return *errv
		}
		acc := 0.0
		for i := range s {
			if !s[i].Type.Numeric() {
				return callError(c, "the item's values are not numeric (%s)", s[i].Type)
			}
			v := sampleFloat(&s[i])
			switch {
			case i == 0 && (name == "min" || name == "max"):
				acc = v
			case name == "min":
				acc = math.Min(acc, v)
			case name == "max":
				acc = math.Max(acc, v)
			default:
				acc += v
			}
		}
		if name == "avg" {
			acc /= float64(len(s))
		}
		return NumberValue(acc)
	}
}

func sumOf(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

func meanOf(v []float64) float64 { return sumOf(v) / float64(len(v)) }

func minOf(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = math.Min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = math.Max(m, x)
	}
	return m
}

// matcher decides whether a value matches count's and find's operator
// and pattern.
type matcher func(Value) bool

// newMatcher builds the matcher of op and pattern for an item of value
// type vt, with Zabbix's operator sets: numeric items take eq ne gt ge
// lt le regexp iregexp (pattern a number for the first six), unsigned
// ones also bitand (pattern "mask" or "value/mask"); string, text and log
// items take eq ne like regexp iregexp. An empty op is eq for numbers
// and like for strings, Zabbix's defaults.
func newMatcher(op, pattern string, vt history.ValueType) (matcher, error) {
	numeric := vt.Numeric()
	if op == "" {
		op = "like"
		if numeric {
			op = "eq"
		}
	}
	switch op {
	case "regexp", "iregexp":
		if strings.HasPrefix(pattern, "@") {
			return nil, fmt.Errorf("global regular expression %q is not supported", pattern)
		}
		if op == "iregexp" {
			pattern = "(?i)" + pattern
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return nil, fmt.Errorf("invalid regular expression %q: %v", pattern, err)
		}
		return func(v Value) bool { return re.MatchString(v.text()) }, nil
	case "like":
		if numeric {
			break
		}
		return func(v Value) bool { return strings.Contains(v.text(), pattern) }, nil
	case "bitand":
		if vt != history.Uint {
			break
		}
		want, mask, err := parseBitandPattern(pattern)
		if err != nil {
			return nil, err
		}
		return func(v Value) bool {
			return v.Num >= 0 && v.Num <= math.MaxUint64 && uint64(v.Num)&mask == want
		}, nil
	case "eq", "ne", "gt", "ge", "lt", "le":
		if !numeric {
			if op != "eq" && op != "ne" {
				break
			}
			return func(v Value) bool { return (v.text() == pattern) == (op == "eq") }, nil
		}
		p, ok := parseNumericString(pattern)
		if !ok {
			return nil, fmt.Errorf("invalid numeric pattern %q", pattern)
		}
		return func(v Value) bool {
			switch op {
			case "eq":
				return numEqual(v.Num, p)
			case "ne":
				return !numEqual(v.Num, p)
			case "gt":
				return v.Num > p
			case "ge":
				return v.Num >= p
			case "lt":
				return v.Num < p
			}
			return v.Num <= p
		}, nil
	default:
		return nil, fmt.Errorf("unknown operator %q", op)
	}
	return nil, fmt.Errorf("operator %q is not supported for %s values", op, vt)
}

// countOps are the operators of count, countunique and find.
var countOps = map[string]struct{}{
	"": {}, "eq": {}, "ne": {}, "gt": {}, "ge": {}, "lt": {}, "le": {},
	"like": {}, "bitand": {}, "regexp": {}, "iregexp": {},
}

// parseBitandPattern reads "mask" (value & mask == mask) or
// "value/mask".
func parseBitandPattern(p string) (want, mask uint64, err error) {
	a, b, slash := strings.Cut(p, "/")
	want, err = strconv.ParseUint(strings.TrimSpace(a), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("invalid bitand pattern %q", p)
	}
	mask = want
	if slash {
		mask, err = strconv.ParseUint(strings.TrimSpace(b), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("invalid bitand pattern %q", p)
		}
	}
	return want & mask, mask, nil
}

// matching returns the values of the period (newest first) and the
// matcher of parameters 2 and 3; match is nil when no pattern was given
// (everything counts).
func (ev *evaluator) matching(c *Call, def string) ([]history.Sample, matcher, *Value) {
	ps, errv := ev.period(c, def)
	if errv != nil {
		return nil, nil, errv
	}
	op, errv := ev.strArg(c, 1, "")
	if errv != nil {
		return nil, nil, errv
	}
	pv, hasPattern := ev.arg(c, 2)
	if hasPattern && pv.IsError() {
		return nil, nil, &pv
	}
	s, errv := ev.fetch(c, ps)
	if errv != nil {
		return nil, nil, errv
	}
	if !hasPattern && op == "" {
		return s, nil, nil
	}
	pattern := ""
	if hasPattern {
		pattern = pv.text()
	}
	vt := history.Uint
	if len(s) > 0 {
		vt = s[0].Type
	}
	m, err := newMatcher(op, pattern, vt)
	if err != nil && len(s) == 0 {
		// No values: nothing to match, and an operator that fits only
		// the other value type cannot be told from one that fits none
		// without the item's type. Count 0, find 0.
		if _, known := countOps[op]; known {
			return s, nil, nil
		}
	}
	if err != nil {
		e := callError(c, "%s", err)
		return nil, nil, &e
	}
	return s, m, nil
}

func hCount(ev *evaluator, c *Call) Value {
	s, m, errv := ev.matching(c, "")
	if errv != nil {
		return *errv
	}
	n := 0
	for i := range s {
		if m == nil || m(sampleValue(&s[i])) {
			n++
		}
	}
	return NumberValue(float64(n))
}

func hCountUnique(ev *evaluator, c *Call) Value {
	s, m, errv := ev.matching(c, "")
	if errv != nil {
		return *errv
	}
	seen := map[string]bool{}
	for i := range s {
		v := sampleValue(&s[i])
		if m == nil || m(v) {
			seen[v.text()] = true
		}
	}
	return NumberValue(float64(len(seen)))
}

func hFind(ev *evaluator, c *Call) Value {
	s, m, errv := ev.matching(c, "#1")
	if errv != nil {
		return *errv
	}
	for i := range s {
		if m == nil || m(sampleValue(&s[i])) {
			return NumberValue(1)
		}
	}
	return NumberValue(0)
}

func hChange(ev *evaluator, c *Call) Value {
	s, errv := ev.fetch(c, periodSpec{count: true, n: 2})
	if errv != nil {
		return *errv
	}
	if len(s) < 2 {
		return callError(c, "not enough data: %d of 2 values", len(s))
	}
	a, b := sampleValue(&s[0]), sampleValue(&s[1])
	if a.Kind == KindNumber && b.Kind == KindNumber {
		return NumberValue(a.Num - b.Num)
	}
	return boolValue(a.Str != b.Str)
}

func hChangeCount(ev *evaluator, c *Call) Value {
	s, _, errv := ev.window(c, "")
	if errv != nil {
		return *errv
	}
	mode, errv := ev.strArg(c, 1, "all")
	if errv != nil {
		return *errv
	}
	if mode != "all" && mode != "inc" && mode != "dec" {
		return callError(c, "invalid mode %q: want all, inc or dec", mode)
	}
	n := 0
	for i := len(s) - 1; i > 0; i-- {
		prev, cur := sampleValue(&s[i]), sampleValue(&s[i-1])
		if cur.Kind != KindNumber {
			if cur.Str != prev.Str {
				n++
			}
			continue
		}
		switch {
		case (mode == "all" || mode == "inc") && cur.Num > prev.Num:
			n++
		case (mode == "all" || mode == "dec") && cur.Num < prev.Num:
			n++
		}
	}
	return NumberValue(float64(n))
}

// hNodata is 1 when the item received nothing during the period. The
// period must be at least 30 s, as in Zabbix (shorter would race the
// timer that re-evaluates it). Without "strict" it also waits for one
// full period after data collection started (Options.Started).
func hNodata(ev *evaluator, c *Call) Value {
	ps, errv := ev.period(c, "")
	if errv != nil {
		return *errv
	}
	secs := ps.seconds()
	if secs < 30 {
		return callError(c, "the period must be at least 30 seconds")
	}
	mode, errv := ev.strArg(c, 1, "")
	if errv != nil {
		return *errv
	}
	if mode != "" && mode != "strict" {
		return callError(c, "invalid mode %q: want \"strict\"", mode)
	}
	s, errv := ev.fetch(c, periodSpec{count: true, n: 1})
	if errv != nil {
		return *errv
	}
	now := ev.opt.Now.Unix()
	if len(s) > 0 && s[0].Clock > now-secs {
		return NumberValue(0)
	}
	if mode == "" && !ev.opt.Started.IsZero() && now-ev.opt.Started.Unix() < secs {
		return NumberValue(0)
	}
	return NumberValue(1)
}

// hRate is the per-second rate of increase of a counter over the
// period, counter resets included (a drop counts as a reset to 0), and
// extrapolated to the period's edges the way Prometheus's rate() does,
// on which Zabbix modelled its own.
func hRate(ev *evaluator, c *Call) Value {
	s, ps, errv := ev.window(c, "")
	if errv != nil {
		return *errv
	}
	if _, errv := floats(c, s); errv != nil {
		return *errv
	}
	end := ps.end(ev.opt.Now, ev.opt.Location)
	r, msg := rateOf(s, float64(ps.start(end).Unix()), float64(end.Unix()))
	if msg != "" {
		return callError(c, "%s", msg)
	}
	return NumberValue(r)
}

// rateOf is rate's computation over numeric samples (newest first) of
// the window [rangeStart, rangeEnd]; msg says why there is none.
func rateOf(s []history.Sample, rangeStart, rangeEnd float64) (float64, string) {
	if len(s) < 2 {
		return 0, fmt.Sprintf("not enough data: rate needs 2 values, have %d", len(s))
	}
	v := make([]float64, len(s))
	ts := make([]float64, len(s))
	for i := range s {
		v[len(s)-1-i] = sampleFloat(&s[i])
		ts[len(s)-1-i] = stamp(&s[i])
	}
	increase := v[len(v)-1] - v[0]
	for i := 1; i < len(v); i++ {
		if v[i] < v[i-1] {
			increase += v[i-1]
		}
	}
	sampled := ts[len(ts)-1] - ts[0]
	if sampled <= 0 {
		return 0, "not enough data: values share one timestamp"
	}
	avgStep := sampled / float64(len(v)-1)
	toStart := ts[0] - rangeStart
	toEnd := rangeEnd - ts[len(ts)-1]
	if increase > 0 && v[0] >= 0 {
		// A counter cannot have been below zero: do not extrapolate
		// past the time it would have been zero.
		if toZero := sampled * (v[0] / increase); toZero < toStart {
			toStart = toZero
		}
	}
	threshold := avgStep * 1.1
	interval := sampled
	if toStart < threshold {
		interval += toStart
	} else {
		interval += avgStep / 2
	}
	if toEnd < threshold {
		interval += toEnd
	} else {
		interval += avgStep / 2
	}
	return increase * (interval / sampled) / (rangeEnd - rangeStart), ""
}

// hPercentile is the nearest-rank percentile: the value at rank
// ceil(n*p/100) (the smallest for p = 0).
func hPercentile(ev *evaluator, c *Call) Value {
	p, errv := ev.numArg(c, 1, "percentage")
	if errv != nil {
		return *errv
	}
	if p < 0 || p > 100 || math.IsNaN(p) {
		return callError(c, "percentage %v is outside 0..100", p)
	}
	v, errv := ev.numericWindow(c)
	if errv != nil {
		return *errv
	}
	sort.Float64s(v)
	rank := int(math.Ceil(float64(len(v)) * p / 100))
	if rank > 0 {
		rank--
	}
	return NumberValue(v[rank])
}

// hFuzzytime is 1 when the item's last value, a unix time, is within sec
// seconds of the evaluation time.
func hFuzzytime(ev *evaluator, c *Call) Value {
	ps, errv := ev.period(c, "")
	if errv != nil {
		return *errv
	}
	s, errv := ev.fetch(c, periodSpec{count: true, n: 1})
	if errv != nil {
		return *errv
	}
	if len(s) == 0 {
		return callError(c, "no data")
	}
	v, errv := floats(c, s)
	if errv != nil {
		return *errv
	}
	return boolValue(math.Abs(v[0]-float64(ev.opt.Now.Unix())) <= float64(ps.seconds()))
}

// logEntry returns the Nth newest log value.
func (ev *evaluator) logEntry(c *Call) (*history.Sample, *Value) {
	ps, errv := ev.period(c, "#1")
	if errv != nil {
		return nil, errv
	}
	s, errv := ev.fetch(c, ps)
	if errv != nil {
		return nil, errv
	}
	if int64(len(s)) < ps.n {
		e := callError(c, "not enough data: %d of %d values", len(s), ps.n)
		return nil, &e
	}
	e := &s[ps.n-1]
	if e.Type != history.Log || e.Log == nil {
		v := callError(c, "the item is not a log item (%s)", e.Type)
		return nil, &v
	}
	return e, nil
}

func logMatch(ev *evaluator, c *Call, field func(*history.LogMeta) string) Value {
	e, errv := ev.logEntry(c)
	if errv != nil {
		return *errv
	}
	pattern, errv := ev.strArg(c, 1, "")
	if errv != nil {
		return *errv
	}
	if pattern == "" {
		return NumberValue(1)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return callError(c, "invalid regular expression %q: %v", pattern, err)
	}
	return boolValue(re.MatchString(field(e.Log)))
}

func hLogEventID(ev *evaluator, c *Call) Value {
	return logMatch(ev, c, func(m *history.LogMeta) string { return strconv.FormatInt(m.EventID, 10) })
}

func hLogSource(ev *evaluator, c *Call) Value {
	return logMatch(ev, c, func(m *history.LogMeta) string { return m.Source })
}

func hLogSeverity(ev *evaluator, c *Call) Value {
	e, errv := ev.logEntry(c)
	if errv != nil {
		return *errv
	}
	return NumberValue(float64(e.Log.Severity))
}

// mono builds monoinc and monodec: 1 when every value is above (below)
// the previous, or not below (above) it in the default "weak" mode.
func mono(inc bool) evalFunc {
	return func(ev *evaluator, c *Call) Value {
		v, errv := ev.numericWindow(c)
		if errv != nil {
			return *errv
		}
		mode, errv := ev.strArg(c, 1, "weak")
		if errv != nil {
			return *errv
		}
		if mode != "weak" && mode != "strict" {
			return callError(c, "invalid mode %q: want weak or strict", mode)
		}
		for i := 1; i < len(v); i++ {
			d := v[i] - v[i-1]
			if !inc {
				d = -d
			}
			if d < 0 || (d == 0 && mode == "strict") {
				return NumberValue(0)
			}
		}
		return NumberValue(1)
	}
}

// moments returns the mean and the population variance.
func moments(v []float64) (mean, variance float64) {
	mean = meanOf(v)
	for _, x := range v {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(v))
}

func statistic(name string) evalFunc {
	return func(ev *evaluator, c *Call) Value {
		v, errv := ev.numericWindow(c)
		if errv != nil {
			return *errv
		}
		return statisticOf(c, name, v)
	}
}

// statisticOf computes the named statistic of v (not empty) for c.
func statisticOf(c *Call, name string, v []float64) Value {
	mean, vp := moments(v)
	n := float64(len(v))
	switch name {
	case "sumofsquares":
		s := 0.0
		for _, x := range v {
			s += x * x
		}
		return NumberValue(s)
	case "varpop":
		return NumberValue(vp)
	case "stddevpop":
		return NumberValue(math.Sqrt(vp))
	case "varsamp", "stddevsamp":
		if len(v) < 2 {
			return callError(c, "not enough data: %s needs 2 values", name)
		}
		vs := vp * n / (n - 1)
		if name == "varsamp" {
			return NumberValue(vs)
		}
		return NumberValue(math.Sqrt(vs))
	case "mad":
		med := median(v)
		dev := make([]float64, len(v))
		for i, x := range v {
			dev[i] = math.Abs(x - med)
		}
		return NumberValue(median(dev))
	case "skewness", "kurtosis":
		if vp == 0 {
			return callError(c, "division by zero: the values do not vary")
		}
		pow := 3.0
		if name == "kurtosis" {
			pow = 4
		}
		m := 0.0
		for _, x := range v {
			m += math.Pow(x-mean, pow)
		}
		return NumberValue(m / n / math.Pow(vp, pow/2))
	}
	return ErrorValue("BUG: unknown statistic " + name)
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// trend builds the trend functions over the hours of the period.
func trend(name string) evalFunc {
	return func(ev *evaluator, c *Call) Value {
		ps, errv := ev.period(c, "")
		if errv != nil {
			return *errv
		}
		if ev.opt.Source == nil {
			return callError(c, "no data source")
		}
		end := ps.end(ev.opt.Now, ev.opt.Location)
		ref := ItemRef{Host: c.Query.Host, Key: c.Query.Key}
		trends, err := ev.opt.Source.Trends(ev.ctx, ref, ps.start(end).Unix(), end.Unix())
		if err != nil {
			return callError(c, "%s", err)
		}
		var num int64
		sum, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
		for _, t := range trends {
			num += t.Num
			sum += t.Sum
			lo = math.Min(lo, t.Min)
			hi = math.Max(hi, t.Max)
		}
		if name == "trendcount" {
			return NumberValue(float64(num))
		}
		if num == 0 {
			return callError(c, "no trend data in the evaluation period")
		}
		switch name {
		case "trendavg":
			return NumberValue(sum / float64(num))
		case "trendsum":
			return NumberValue(sum)
		case "trendmin":
			return NumberValue(lo)
		}
		return NumberValue(hi)
	}
}
