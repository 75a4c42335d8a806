package clickhouse

import (
	"context"
	"fmt"
	"math/bits"
	"sort"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// Reads: the rows come from ClickHouse, deduplicated there (LIMIT 1 BY
// clock, ns after ORDER BY ... ver DESC keeps each timestamp's last
// write, before merges have replaced the older rows), ordered and limited
// there, and decoded one row at a time from the RowBinary stream. The
// unshipped values of the item are taken from the spool first and merged
// in; where both hold a timestamp the spool's value wins, being the
// newer write. The spool is copied before ClickHouse is asked: a
// generation shipped in between is then in the answer, never in neither.

func key(v *history.Sample) int64 { return v.Clock*1_000_000_000 + int64(v.NS) }

// spoolValues returns item's unshipped values in [from, till], one per
// timestamp (the last written), in ascending or descending order, and
// the bit set of the tables holding the item.
func (s *Store) spoolValues(item uint64, from, till int64, desc bool) ([]history.Sample, uint8) {
	s.mu.Lock()
	mask := s.types[item] &^ known
	var out []history.Sample
	gens := append(append([]*gen(nil), s.sealed...), s.cur)
	for _, g := range gens {
		for _, v := range g.items[item] {
			if v.Clock >= from && v.Clock <= till {
				if v.Log != nil {
					lm := *v.Log
					v.Log = &lm
				}
				out = append(out, v)
			}
		}
	}
	s.mu.Unlock()
	// Stable: for equal timestamps the later write stays later.
	sort.SliceStable(out, func(i, j int) bool { return key(&out[i]) < key(&out[j]) })
	w := 0
	for i := range out {
		if w > 0 && key(&out[w-1]) == key(&out[i]) {
			out[w-1] = out[i]
			continue
		}
		out[w] = out[i]
		w++
	}
	out = out[:w]
	if desc {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, mask
}

// clampRange cuts [from, till] to what DateTime holds; ok is false when
// nothing is left.
func clampRange(from, till int64) (int64, int64, bool) {
	from, till = max(from, 0), min(till, maxClock)
	return from, till, from <= till
}

// selectSQL reads one item of one table in q's order.
//
// Deduplication. With a limit, ClickHouse keeps each timestamp's last
// write (LIMIT 1 BY after ORDER BY ... ver DESC), so that LIMIT counts
// values, not rows. Without one (history.get's common case, and the
// large reads) the rows come with their ver and the decoder keeps the
// highest per timestamp (lastWins): on 18.16 LIMIT 1 BY over a million
// rows costs several times the sort itself, and duplicates are rare
// (retries, rewrites, not yet merged away).
func (s *Store) selectSQL(t *table, item uint64, from, till int64, desc bool, limit int) string {
	dir := ""
	if desc {
		dir = " DESC"
	}
	var b strings.Builder
	if limit <= 0 {
		fmt.Fprintf(&b, "SELECT toUInt32(clock), ns, %s, ver FROM %s WHERE itemid = %d AND clock >= toDateTime(%d) AND clock <= toDateTime(%d) ORDER BY clock%s, ns%s FORMAT RowBinary",
			t.read, s.from(t.name), item, from, till, dir, dir)
		return b.String()
	}
	fmt.Fprintf(&b, "SELECT toUInt32(clock), ns, %s FROM %s WHERE itemid = %d AND clock >= toDateTime(%d) AND clock <= toDateTime(%d) ORDER BY clock%s, ns%s, ver DESC LIMIT 1 BY clock, ns",
		t.read, s.from(t.name), item, from, till, dir, dir)
	if limit > 0 {
		fmt.Fprintf(&b, " LIMIT %d", limit)
	}
	b.WriteString(" FORMAT RowBinary")
	return b.String()
}

// readRow decodes one row of selectSQL's result into v.
func readRow(d *rowReader, t history.ValueType, item uint64, v *history.Sample, lm *history.LogMeta) {
	*v = history.Sample{ItemID: item, Type: t}
	v.Clock = int64(d.u32())
	v.NS = int32(d.u32())
	switch t {
	case history.Float:
		v.F = d.f64()
	case history.Uint:
		v.U = d.u64()
	case history.Str, history.Text:
		v.S = d.string()
	case history.Log:
		v.S = d.string()
		lm.Timestamp = int64(d.u64())
		lm.Source = d.string()
		lm.Severity = int32(d.u32())
		lm.EventID = int64(d.u64())
		if d.u8() != 0 {
			v.Log = lm
		}
	}
}

// Read streams q's samples: ClickHouse's rows merged with the spool's.
func (s *Store) Read(ctx context.Context, q history.Query, fn func(*history.Sample) bool) error {
	if s.closed.Load() {
		return history.ErrClosed
	}
	from, till, ok := clampRange(q.From, q.Till)
	if !ok {
		return nil
	}
	if err := s.resolve(ctx, []uint64{q.ItemID}); err != nil {
		return err
	}
	sp, mask := s.spoolValues(q.ItemID, from, till, q.Desc)
	m := merger{sp: sp, limit: q.Limit, desc: q.Desc, fn: fn}
	switch bits.OnesCount8(mask) {
	case 0:
	case 1:
		t := history.ValueType(bits.TrailingZeros8(mask))
		row := func(v *history.Sample) bool { return m.row(v) && !m.full() }
		var err error
		if q.Desc && q.Limit > 0 {
			err = s.newest(ctx, &tables[t], q.ItemID, from, till, q.Limit, row)
		} else {
			_, err = s.stream(ctx, &tables[t], q.ItemID, from, till, q.Desc, q.Limit, row)
		}
		if err != nil {
			return err
		}
	default:
		// The item changed value type: its values are in several
		// tables. Rare; read each (limited) and sort.
		var all []history.Sample
		for t := range tables {
			if mask&(1<<t) == 0 {
				continue
			}
			_, err := s.stream(ctx, &tables[t], q.ItemID, from, till, q.Desc, q.Limit, func(v *history.Sample) bool {
				c := *v
				if c.Log != nil {
					lm := *c.Log
					c.Log = &lm
				}
				all = append(all, c)
				return true
			})
			if err != nil {
				return err
			}
		}
		sort.SliceStable(all, func(a, b int) bool { return m.before(&all[a], &all[b]) })
		for k := range all {
			if !m.row(&all[k]) || m.full() {
				break
			}
		}
	}
	if !m.stopped {
		m.rest()
	}
	return nil
}

// stream runs one table's select and calls fn per row; it reports
// whether fn wanted more.
func (s *Store) stream(ctx context.Context, t *table, item uint64, from, till int64, desc bool, limit int, fn func(*history.Sample) bool) (bool, error) {
	if limit > 0 {
		return s.streamLimited(ctx, t, item, from, till, desc, limit, fn)
	}
	rc, err := s.c.do(ctx, s.selectSQL(t, item, from, till, desc, limit), nil, nil)
	if err != nil {
		return false, fmt.Errorf("clickhouse: reading item %d: %w", item, err)
	}
	defer rc.Close()
	d := newRowReader(rc)
	if limit <= 0 {
		lw := lastWins{fn: fn}
		for d.more() {
			v, lm := lw.slot()
			readRow(d, t.typ, item, v, lm)
			ver := d.u64()
			if d.err != nil {
				break
			}
			if !lw.push(ver) {
				return false, nil
			}
		}
		if d.err != nil {
			return false, fmt.Errorf("clickhouse: reading item %d: %w", item, d.err)
		}
		return lw.flush(), nil
	}
	var v history.Sample
	var lm history.LogMeta
	for d.more() {
		readRow(d, t.typ, item, &v, &lm)
		if d.err != nil {
			break
		}
		if !fn(&v) {
			return false, nil
		}
	}
	if d.err != nil {
		return false, fmt.Errorf("clickhouse: reading item %d: %w", item, d.err)
	}
	return true, nil
}

// firstWindow is the first time window newest reads.
const firstWindow = 3600

// newest is stream for the newest limit values (Desc with a limit: the
// last values of an item, history.get's "latest data" with or without a
// time range). 18.16 cannot read in primary-key order, so one query
// over the whole range would sort all of the item's rows; newest asks
// for windows ending at till instead, each 8 times longer than the last,
// until limit rows came or the range is exhausted: a primary-key range
// of an hour for a live item, a handful of queries for one that stopped
// long ago.
func (s *Store) newest(ctx context.Context, t *table, item uint64, from, till int64, limit int, fn func(*history.Sample) bool) error {
	got := 0
	count := func(v *history.Sample) bool {
		got++
		return fn(v)
	}
	for w, hi := int64(firstWindow), till; hi >= from; w *= 8 {
		lo := max(from, hi-w+1)
		more, err := s.stream(ctx, t, item, lo, hi, true, limit-got, count)
		if err != nil || !more || got >= limit {
			return err
		}
		hi = lo - 1
	}
	return nil
}

// streamLimited is stream with a limit, deduplicated by the decoder as
// unlimited reads are (LIMIT 1 BY costs more than the sort on 18.16):
// it asks for limit+1 rows; when that many came, the last timestamp's
// duplicates may lie beyond them, so it asks again from that timestamp
// (inclusive) for what is still missing, until limit values were passed
// on or the range ran out. Without duplicates, which is the rule, one
// query suffices.
func (s *Store) streamLimited(ctx context.Context, t *table, item uint64, from, till int64, desc bool, limit int, fn func(*history.Sample) bool) (bool, error) {
	emitted, stopped := 0, false
	lw := lastWins{fn: func(v *history.Sample) bool {
		emitted++
		if !fn(v) {
			stopped = true
			return false
		}
		return true
	}}
	dir, cmp := "", ">"
	if desc {
		dir, cmp = " DESC", "<"
	}
	cont := ""
	want := limit + 1
	for {
		sql := fmt.Sprintf("SELECT toUInt32(clock), ns, %s, ver FROM %s WHERE itemid = %d AND clock >= toDateTime(%d) AND clock <= toDateTime(%d)%s ORDER BY clock%s, ns%s LIMIT %d FORMAT RowBinary",
			t.read, s.from(t.name), item, from, till, cont, dir, dir, want)
		rc, err := s.c.do(ctx, sql, nil, nil)
		if err != nil {
			return false, fmt.Errorf("clickhouse: reading item %d: %w", item, err)
		}
		d := newRowReader(rc)
		rows, before := 0, emitted
		for d.more() && emitted < limit {
			v, lm := lw.slot()
			readRow(d, t.typ, item, v, lm)
			ver := d.u64()
			if d.err != nil {
				break
			}
			rows++
			if !lw.push(ver) {
				rc.Close()
				return false, nil
			}
		}
		rc.Close()
		if d.err != nil {
			return false, fmt.Errorf("clickhouse: reading item %d: %w", item, d.err)
		}
		if emitted >= limit {
			return !stopped, nil
		}
		if rows < want { // the range ran out: the pending row is complete
			return lw.flush(), nil
		}
		// Truncated inside the pending timestamp's duplicates (or just
		// after it): read again from it, inclusive; its copies seen so
		// far compare by ver again, harmlessly.
		p := &lw.v[lw.cur]
		cont = fmt.Sprintf(" AND (clock %s toDateTime(%d) OR (clock = toDateTime(%d) AND ns %s= %d))", cmp, p.Clock, p.Clock, cmp, p.NS)
		if emitted == before {
			want *= 2 // no progress: more copies of one timestamp than asked for
		} else {
			want = limit - emitted + 1
		}
	}
}

// lastWins passes on one row per (item, clock, ns) of a stream ordered
// by them, the one with the highest ver. Rows are decoded into
// alternating slots so that the pending row survives the next decode.
type lastWins struct {
	have bool
	v    [2]history.Sample
	lm   [2]history.LogMeta
	ver  uint64
	cur  int // the pending row's slot
	fn   func(*history.Sample) bool
}

// slot is where to decode the next row.
func (l *lastWins) slot() (*history.Sample, *history.LogMeta) {
	o := 1 - l.cur
	return &l.v[o], &l.lm[o]
}

// push takes the row decoded into slot(); false when fn ended the read.
func (l *lastWins) push(ver uint64) bool {
	o := 1 - l.cur
	n := &l.v[o]
	if l.have {
		p := &l.v[l.cur]
		if p.ItemID == n.ItemID && p.Clock == n.Clock && p.NS == n.NS {
			if ver > l.ver {
				l.cur, l.ver = o, ver
			}
			return true
		}
		if !l.fn(p) {
			l.have = false
			return false
		}
	}
	l.cur, l.ver, l.have = o, ver, true
	return true
}

// flush passes on the pending row; false when fn ended the read.
func (l *lastWins) flush() bool {
	if !l.have {
		return true
	}
	l.have = false
	return l.fn(&l.v[l.cur])
}

// Downsample computes the buckets in ClickHouse (GROUP BY the bucket
// index over the deduplicated rows) when the item has no unshipped
// values in the range; otherwise it folds a merged Read, which is exact
// and, the spool being seconds of data, rarely large.
func (s *Store) Downsample(ctx context.Context, q history.DownsampleQuery) ([]history.Bucket, error) {
	if s.closed.Load() {
		return nil, history.ErrClosed
	}
	if q.Buckets < 1 || q.Buckets > history.MaxBuckets {
		return nil, history.ErrBuckets
	}
	g := history.NewGrid(q.From, q.Till, q.Buckets)
	from, till, ok := clampRange(q.From, q.Till)
	if !ok || g.N == 0 {
		return nil, nil
	}
	if err := s.resolve(ctx, []uint64{q.ItemID}); err != nil {
		return nil, err
	}
	sp, mask := s.spoolValues(q.ItemID, from, till, false)
	numeric := mask & (1<<history.Float | 1<<history.Uint)
	if len(sp) > 0 || bits.OnesCount8(numeric) > 1 {
		return history.DownsampleRead(ctx, s, q)
	}
	if numeric == 0 {
		return nil, nil
	}
	t := history.ValueType(bits.TrailingZeros8(numeric))
	agg := "count(), min(value), max(value), sum(value)"
	if t == history.Uint {
		// A UInt64 sum wraps; the sums of the 32-bit halves do not
		// (below 2^32 values per bucket) and give the exact 128-bit sum.
		agg = "count(), min(value), max(value), sum(intDiv(value, 4294967296)), sum(value % 4294967296)"
	}
	sql := fmt.Sprintf("SELECT intDiv(toInt64(toUInt32(clock)) - %d, %d) AS b, %s FROM (SELECT clock, value FROM %s WHERE itemid = %d AND clock >= toDateTime(%d) AND clock <= toDateTime(%d) ORDER BY clock, ns, ver DESC LIMIT 1 BY clock, ns) GROUP BY b ORDER BY b FORMAT RowBinary",
		g.Start, g.Width, agg, s.from(tables[t].name), q.ItemID, from, till)
	rc, err := s.c.do(ctx, sql, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: downsampling item %d: %w", q.ItemID, err)
	}
	defer rc.Close()
	d := newRowReader(rc)
	var out []history.Bucket
	for d.more() {
		idx := int64(d.u64())
		b := history.Bucket{Clock: g.Start + idx*g.Width, Type: t, Count: int64(d.u64())}
		if t == history.Uint {
			b.MinU, b.MaxU = d.u64(), d.u64()
			b.Min, b.Max = float64(b.MinU), float64(b.MaxU)
			b.SumHi, b.SumLo = u128(d.u64(), d.u64())
		} else {
			b.Min, b.Max, b.Sum = d.f64(), d.f64(), d.f64()
		}
		if d.err != nil {
			break
		}
		out = append(out, b)
	}
	if d.err != nil {
		return nil, fmt.Errorf("clickhouse: downsampling item %d: %w", q.ItemID, d.err)
	}
	return out, nil
}

// ReadTrends returns hourly trends: computed in ClickHouse from the
// deduplicated history (GROUP BY the hour), or from a merged Read when
// the item has unshipped values in the range, and for hours whose
// history was dropped, the rolled-up rows of the trends table
// (retention.go).
func (s *Store) ReadTrends(ctx context.Context, item uint64, from, till int64) ([]history.Trend, error) {
	if s.closed.Load() {
		return nil, history.ErrClosed
	}
	// Hours starting in [from, till]: values from the first such hour
	// to the end of the last.
	first := (from + 3599) / 3600 * 3600
	if from < 0 {
		first = 0
	}
	last := till/3600*3600 + 3599
	lo, hi, ok := clampRange(first, last)
	if !ok {
		return nil, nil
	}
	h, err := s.historyTrends(ctx, item, lo, hi)
	if err != nil {
		return nil, err
	}
	rolled, err := s.rolledTrends(ctx, item, lo, hi)
	if err != nil {
		return nil, err
	}
	return mergeTrends(h, rolled), nil
}

func (s *Store) historyTrends(ctx context.Context, item uint64, lo, hi int64) ([]history.Trend, error) {
	if err := s.resolve(ctx, []uint64{item}); err != nil {
		return nil, err
	}
	sp, mask := s.spoolValues(item, lo, hi, false)
	numeric := mask & (1<<history.Float | 1<<history.Uint)
	if numeric == 0 {
		return nil, nil
	}
	if len(sp) > 0 || bits.OnesCount8(numeric) > 1 {
		var out []history.Trend
		err := s.Read(ctx, history.Query{ItemID: item, From: lo, Till: hi}, func(v *history.Sample) bool {
			var f float64
			switch v.Type {
			case history.Float:
				f = v.F
			case history.Uint:
				f = float64(v.U)
			default:
				return true
			}
			h := v.Clock / 3600 * 3600
			if n := len(out); n > 0 && out[n-1].Clock == h {
				t := &out[n-1]
				t.Num++
				t.Min, t.Max, t.Sum = min(t.Min, f), max(t.Max, f), t.Sum+f
				return true
			}
			out = append(out, history.Trend{Clock: h, Num: 1, Min: f, Max: f, Sum: f})
			return true
		})
		return out, err
	}
	t := history.ValueType(bits.TrailingZeros8(numeric))
	sql := fmt.Sprintf("SELECT toUInt32(toStartOfHour(clock)) AS h, count(), toFloat64(min(value)), toFloat64(max(value)), sum(toFloat64(value)) FROM (SELECT clock, value FROM %s WHERE itemid = %d AND clock >= toDateTime(%d) AND clock <= toDateTime(%d) ORDER BY clock, ns, ver DESC LIMIT 1 BY clock, ns) GROUP BY h ORDER BY h FORMAT RowBinary",
		s.from(tables[t].name), item, lo, hi)
	rc, err := s.c.do(ctx, sql, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: trends of item %d: %w", item, err)
	}
	defer rc.Close()
	d := newRowReader(rc)
	var out []history.Trend
	for d.more() {
		tr := history.Trend{Clock: int64(d.u32()), Num: int64(d.u64()), Min: d.f64(), Max: d.f64(), Sum: d.f64()}
		if d.err != nil {
			break
		}
		out = append(out, tr)
	}
	if d.err != nil {
		return nil, fmt.Errorf("clickhouse: trends of item %d: %w", item, d.err)
	}
	return out, nil
}
