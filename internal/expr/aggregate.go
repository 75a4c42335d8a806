package expr

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// ItemQuery is the item query of an aggregate function: a host ("" for
// the evaluated item's host, "*" for any), a key whose name or
// parameters may be "*" (see MatchKey), and the text of the ?[...]
// filter ("" for none).
type ItemQuery struct {
	Host, Key, Filter string
}

// ItemLister is what a Source also implements to serve the aggregate
// functions of calculated items (item_count, bucket_percentile, the
// *_foreach functions): the items a query selects.
type ItemLister interface {
	// Items lists the enabled items of monitored hosts that q selects.
	// A filter the implementation cannot apply is an error, never
	// ignored.
	Items(ctx context.Context, q ItemQuery) ([]ItemRef, error)
}

// MatchKey reports whether key matches pattern, an item key whose name
// or any parameter may be "*" (anything). Parameters compare unquoted:
// "a" matches a.
func MatchKey(pattern, key string) bool {
	pn, pp, ok1 := splitKey(pattern)
	kn, kp, ok2 := splitKey(key)
	if !ok1 || !ok2 || (pn != "*" && pn != kn) {
		return false
	}
	if pn == "*" && pp == nil {
		return true
	}
	if len(pp) != len(kp) {
		return false
	}
	for i := range pp {
		if pp[i] != "*" && pp[i] != kp[i] {
			return false
		}
	}
	return true
}

// splitKey splits an item key into its name and parameters (quoted ones
// unquoted, arrays as written, surrounding spaces of unquoted ones
// trimmed); params is nil for a key without brackets.
func splitKey(key string) (name string, params []string, ok bool) {
	i := strings.IndexByte(key, '[')
	if i < 0 {
		return key, nil, key != ""
	}
	name, rest := key[:i], key[i+1:]
	if !strings.HasSuffix(rest, "]") {
		return "", nil, false
	}
	rest = rest[:len(rest)-1]
	params = []string{}
	for {
		rest = strings.TrimLeft(rest, " ")
		var p string
		switch {
		case strings.HasPrefix(rest, `"`):
			j := 1
			var b strings.Builder
			for j < len(rest) && rest[j] != '"' {
				if rest[j] == '\\' && j+1 < len(rest) && rest[j+1] == '"' {
					j++
				}
				b.WriteByte(rest[j])
				j++
			}
			if j >= len(rest) {
				return "", nil, false
			}
			p, rest = b.String(), strings.TrimLeft(rest[j+1:], " ")
		case strings.HasPrefix(rest, "["):
			j := strings.IndexByte(rest, ']')
			if j < 0 {
				return "", nil, false
			}
			p, rest = rest[:j+1], strings.TrimLeft(rest[j+1:], " ")
		default:
			j := strings.IndexByte(rest, ',')
			if j < 0 {
				j = len(rest)
			}
			p, rest = strings.TrimRight(rest[:j], " "), rest[j:]
		}
		params = append(params, p)
		if rest == "" {
			return name, params, true
		}
		if rest[0] != ',' {
			return "", nil, false
		}
		rest = rest[1:]
	}
}

// items lists the items of an aggregate call's query.
func (ev *evaluator) items(c *Call) ([]ItemRef, *Value) {
	lister, ok := ev.opt.Source.(ItemLister)
	if !ok {
		e := callError(c, "the data source cannot list items for aggregate functions")
		return nil, &e
	}
	refs, err := lister.Items(ev.ctx, ItemQuery{Host: c.Query.Host, Key: c.Query.Key, Filter: c.Query.Filter})
	if err != nil {
		e := callError(c, "%s", err)
		return nil, &e
	}
	return refs, nil
}

func hItemCount(ev *evaluator, c *Call) Value {
	if ev.opt.Source == nil {
		return callError(c, "no data source")
	}
	refs, errv := ev.items(c)
	if errv != nil {
		return *errv
	}
	return NumberValue(float64(len(refs)))
}

// bucket is one bucket of a histogram: its upper bound and the rate of
// its cumulative counter.
type bucket struct{ le, rate float64 }

// bucketRates returns, for the items of c's query, the bucket bound (the
// key parameter at position pos, 0-based) and the rate over the period
// (rate()'s computation) of each item with two values in the period;
// items whose parameter is not a number are not buckets and are left
// out.
func (ev *evaluator) bucketRates(c *Call, pos int) ([]bucket, *Value) {
	ps, errv := ev.period(c, "")
	if errv != nil {
		return nil, errv
	}
	refs, errv := ev.items(c)
	if errv != nil {
		return nil, errv
	}
	end := ps.end(ev.opt.Now, ev.opt.Location)
	start := ps.start(end)
	var out []bucket
	for _, ref := range refs {
		_, params, ok := splitKey(ref.Key)
		if !ok || pos >= len(params) {
			continue
		}
		le, err := strconv.ParseFloat(strings.TrimSpace(params[pos]), 64)
		if err != nil {
			continue
		}
		s, err := ev.opt.Source.History(ev.ctx, ref, HistoryQuery{From: start.Unix(), Till: end.Unix(), Before: ev.before(end)})
		if err != nil {
			e := callError(c, "%s", err)
			return nil, &e
		}
		if len(s) < 2 || !s[0].Type.Numeric() {
			continue
		}
		r, msg := rateOf(s, float64(start.Unix()), float64(end.Unix()))
		if msg != "" {
			continue
		}
		out = append(out, bucket{le, r})
	}
	return out, nil
}

// quantile is the q-quantile (0..1) of a histogram, as Prometheus's
// histogram_quantile computes it: buckets sorted by bound, counts made
// monotonic (a scrape may see a bucket before the one below it is
// updated), the quantile in the first bucket whose cumulative count
// reaches it, interpolated linearly within it (from 0 for the first
// bucket), the bound below +Inf when it falls in the +Inf bucket.
func quantile(c *Call, q float64, buckets []bucket) Value {
	if len(buckets) < 2 {
		return callError(c, "not enough data: %d buckets with values in the period", len(buckets))
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].le < buckets[j].le })
	if !math.IsInf(buckets[len(buckets)-1].le, 1) {
		return callError(c, "no +Inf bucket")
	}
	for i := 1; i < len(buckets); i++ {
		buckets[i].rate = math.Max(buckets[i].rate, buckets[i-1].rate)
	}
	total := buckets[len(buckets)-1].rate
	if total == 0 {
		return callError(c, "no observations in the period")
	}
	rank := q * total
	i := sort.Search(len(buckets), func(i int) bool { return buckets[i].rate >= rank })
	if i == len(buckets)-1 {
		return NumberValue(buckets[len(buckets)-2].le)
	}
	lo, below := 0.0, 0.0
	if i > 0 {
		lo, below = buckets[i-1].le, buckets[i-1].rate
	} else if buckets[0].le <= 0 {
		return NumberValue(buckets[0].le)
	}
	in := buckets[i].rate - below
	if in == 0 {
		return NumberValue(buckets[i].le)
	}
	return NumberValue(lo + (buckets[i].le-lo)*(rank-below)/in)
}

// hBucketPercentile is the percentile of a histogram kept as one
// counter item per bucket, Prometheus style: the items the query
// selects differ in the key parameter written "*", which holds the
// bucket's upper bound (le, "+Inf" for the last); each bucket's weight
// is its rate over the period (see quantile).
func hBucketPercentile(ev *evaluator, c *Call) Value {
	if ev.opt.Source == nil {
		return callError(c, "no data source")
	}
	p, errv := ev.numArg(c, 1, "percentage")
	if errv != nil {
		return *errv
	}
	if p < 0 || p > 100 || math.IsNaN(p) {
		return callError(c, "percentage %v is outside 0..100", p)
	}
	_, pattern, _ := splitKey(c.Query.Key)
	pos := -1
	for i, q := range pattern {
		if q == "*" {
			if pos >= 0 {
				return callError(c, "the key must have one \"*\" parameter, the bucket bound")
			}
			pos = i
		}
	}
	if pos < 0 {
		return callError(c, "the key must have one \"*\" parameter, the bucket bound")
	}
	buckets, errv := ev.bucketRates(c, pos)
	if errv != nil {
		return *errv
	}
	return quantile(c, p/100, buckets)
}

// fnHistogramQuantile is histogram_quantile(q, bound1, rate1, bound2,
// rate2, ...) or histogram_quantile(q, bucket_rate_foreach(...)).
func fnHistogramQuantile(ev *evaluator, c *Call) Value {
	qv := ev.eval(c.Args[0])
	if qv.IsError() {
		return qv
	}
	q, ok := qv.number()
	if !ok || q < 0 || q > 1 || math.IsNaN(q) {
		return callError(c, "quantile %q is outside 0..1", qv.text())
	}
	if len(c.Args) == 2 && isForeach(c.Args[1]) {
		inner := c.Args[1].(*Call)
		if ev.opt.Source == nil {
			return callError(inner, "no data source")
		}
		pos := 0
		if len(inner.Args) > 1 {
			n, errv := ev.numArg(inner, 1, "parameter number")
			if errv != nil {
				return *errv
			}
			if n < 1 || n != math.Trunc(n) || n > 1000 {
				return callError(inner, "invalid parameter number %v", n)
			}
			pos = int(n) - 1
		}
		buckets, errv := ev.bucketRates(inner, pos)
		if errv != nil {
			return *errv
		}
		return quantile(c, q, buckets)
	}
	if len(c.Args)%2 != 1 {
		return callError(c, "buckets come in pairs of bound and rate")
	}
	var buckets []bucket
	for i := 1; i < len(c.Args); i += 2 {
		bv, rv := ev.eval(c.Args[i]), ev.eval(c.Args[i+1])
		if bv.IsError() {
			return bv
		}
		if rv.IsError() {
			return rv
		}
		le, ok1 := bv.number()
		if !ok1 {
			if f, err := strconv.ParseFloat(bv.text(), 64); err == nil {
				le, ok1 = f, true
			}
		}
		r, ok2 := rv.number()
		if !ok1 || !ok2 {
			return callError(c, "bucket %d: bound %q and rate %q must be numbers", (i+1)/2, bv.text(), rv.text())
		}
		buckets = append(buckets, bucket{le, r})
	}
	return quantile(c, q, buckets)
}

func hForeachUnsupported(_ *evaluator, c *Call) Value {
	return callError(c, "%s() lists values: it is a parameter of avg, count, max, min, sum or a statistics function", c.Name)
}

func hBucketRateList(_ *evaluator, c *Call) Value {
	return callError(c, "bucket_rate_foreach() lists buckets: it is the second parameter of histogram_quantile")
}

// listFuncs are the functions of values that take the list a *_foreach
// function gives as their first parameter; listOnly marks those that
// take nothing but a list (the statistics, and count with its operator
// and pattern).
var listFuncs = map[string]struct{ listOnly bool }{
	"avg": {}, "max": {}, "min": {}, "sum": {},
	"count": {true}, "kurtosis": {true}, "mad": {true}, "skewness": {true}, "stddevpop": {true},
	"stddevsamp": {true}, "sumofsquares": {true}, "varpop": {true}, "varsamp": {true},
}

// isForeach reports whether n is a call of a *_foreach function.
func isForeach(n Node) bool {
	c, ok := n.(*Call)
	return ok && c.Query != nil && strings.HasSuffix(c.Name, "_foreach")
}

// checkForeach enforces at parse time that a *_foreach call is only ever
// the first parameter of a list function, and that a list-only function
// gets one.
func checkForeach(n Node, parent *Call, argIndex int) error {
	if c, ok := n.(*Call); ok {
		if c.Name == "bucket_rate_foreach" && (parent == nil || parent.Name != "histogram_quantile" || argIndex != 1 || len(parent.Args) != 2) {
			return &posError{c.P, "bucket_rate_foreach() can only be the second and last parameter of histogram_quantile"}
		}
		if isForeach(c) && c.Name != "bucket_rate_foreach" {
			isList := false
			if parent != nil && argIndex == 0 && parent.Query == nil {
				_, isList = listFuncs[parent.Name]
			}
			if !isList {
				return &posError{c.P, fmt.Sprintf("%s() can only be the first parameter of avg, count, max, min, sum or a statistics function", c.Name)}
			}
		}
		if c.Query == nil {
			if lf, ok := listFuncs[c.Name]; ok && lf.listOnly && (len(c.Args) == 0 || !isForeach(c.Args[0])) {
				return &posError{c.P, fmt.Sprintf("%s() without an item query needs a *_foreach function as its first parameter", c.Name)}
			}
			if lf, ok := listFuncs[c.Name]; ok && !lf.listOnly && len(c.Args) > 0 && isForeach(c.Args[0]) && len(c.Args) != 1 {
				return &posError{c.P, fmt.Sprintf("%s() of a *_foreach function takes no other parameter", c.Name)}
			}
		}
		for i, a := range c.Args {
			if err := checkForeach(a, c, i); err != nil {
				return err
			}
		}
		return nil
	}
	switch n := n.(type) {
	case *Unary:
		return checkForeach(n.X, nil, 0)
	case *Binary:
		if err := checkForeach(n.L, nil, 0); err != nil {
			return err
		}
		return checkForeach(n.R, nil, 0)
	case *Paren:
		return checkForeach(n.X, nil, 0)
	}
	return nil
}

// posError is a check failure at a position, turned into a ParseError
// by Parse.
type posError struct {
	pos int
	msg string
}

func (e *posError) Error() string { return e.msg }

// foreach evaluates a *_foreach call: one value per item of its query
// that has data, items without data (or unreadable, or not numeric)
// left out as Zabbix leaves them out; exists_foreach gives 1 per item
// and count_foreach counts 0 for an item without values.
func (ev *evaluator) foreach(c *Call) ([]float64, *Value) {
	if ev.opt.Source == nil {
		e := callError(c, "no data source")
		return nil, &e
	}
	refs, errv := ev.items(c)
	if errv != nil {
		return nil, errv
	}
	if c.Name == "exists_foreach" {
		out := make([]float64, len(refs))
		for i := range out {
			out[i] = 1
		}
		return out, nil
	}
	def := ""
	if c.Name == "last_foreach" {
		def = "#1"
	}
	ps, errv := ev.period(c, def)
	if errv != nil {
		return nil, errv
	}
	var m matcher
	hasMatcher := false
	if c.Name == "count_foreach" {
		op, errv := ev.strArg(c, 1, "")
		if errv != nil {
			return nil, errv
		}
		pv, hasPattern := ev.arg(c, 2)
		if hasPattern && pv.IsError() {
			return nil, &pv
		}
		if hasPattern || op != "" {
			pattern := ""
			if hasPattern {
				pattern = pv.text()
			}
			var err error
			if m, err = newMatcher(op, pattern, history.Float); err != nil {
				e := callError(c, "%s", err)
				return nil, &e
			}
			hasMatcher = true
		}
	}
	end := ps.end(ev.opt.Now, ev.opt.Location)
	q := HistoryQuery{Till: end.Unix(), Before: ev.before(end)}
	if ps.count {
		q.Count = int(min(ps.n, math.MaxInt32))
	} else {
		q.From = ps.start(end).Unix()
	}
	var out []float64
	for _, ref := range refs {
		s, err := ev.opt.Source.History(ev.ctx, ref, q)
		if err != nil || (len(s) > 0 && !s[0].Type.Numeric()) {
			continue
		}
		if c.Name == "count_foreach" {
			n := 0
			for i := range s {
				if !hasMatcher || m(NumberValue(sampleFloat(&s[i]))) {
					n++
				}
			}
			out = append(out, float64(n))
			continue
		}
		if len(s) == 0 {
			continue
		}
		v := sampleFloat(&s[0])
		switch c.Name {
		case "avg_foreach", "sum_foreach":
			sum := 0.0
			for i := range s {
				sum += sampleFloat(&s[i])
			}
			v = sum
			if c.Name == "avg_foreach" {
				v /= float64(len(s))
			}
		case "max_foreach", "min_foreach":
			for i := range s {
				if c.Name == "max_foreach" {
					v = math.Max(v, sampleFloat(&s[i]))
				} else {
					v = math.Min(v, sampleFloat(&s[i]))
				}
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// listOr makes a function of values also accept a *_foreach list as its
// only parameter (avg, max, min, sum).
func listOr(name string, plain evalFunc) evalFunc {
	return func(ev *evaluator, c *Call) Value {
		if len(c.Args) == 1 && isForeach(c.Args[0]) {
			return listAggregate(name)(ev, c)
		}
		return plain(ev, c)
	}
}

// listAggregate reduces the list of its first parameter. An empty list
// (no item with data) sums and counts to 0; the other reductions are
// unknown.
func listAggregate(name string) evalFunc {
	return func(ev *evaluator, c *Call) Value {
		inner := c.Args[0].(*Call)
		v, errv := ev.foreach(inner)
		if errv != nil {
			return *errv
		}
		switch name {
		case "sum":
			return NumberValue(sumOf(v))
		case "count":
			return ev.listCount(c, v)
		}
		if len(v) == 0 {
			return callError(c, "no item of %s() has data", inner.Name)
		}
		switch name {
		case "avg":
			return NumberValue(meanOf(v))
		case "max":
			return NumberValue(maxOf(v))
		case "min":
			return NumberValue(minOf(v))
		}
		return statisticOf(c, name, v)
	}
}

// listCount is count(foreach, <operator>, <pattern>).
func (ev *evaluator) listCount(c *Call, v []float64) Value {
	op, errv := ev.strArg(c, 1, "")
	if errv != nil {
		return *errv
	}
	pv, hasPattern := ev.arg(c, 2)
	if hasPattern && pv.IsError() {
		return pv
	}
	if !hasPattern && op == "" {
		return NumberValue(float64(len(v)))
	}
	pattern := ""
	if hasPattern {
		pattern = pv.text()
	}
	m, err := newMatcher(op, pattern, history.Float)
	if err != nil {
		return callError(c, "%s", err)
	}
	n := 0
	for _, x := range v {
		if m(NumberValue(x)) {
			n++
		}
	}
	return NumberValue(float64(n))
}
