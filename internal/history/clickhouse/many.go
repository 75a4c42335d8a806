package clickhouse

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// Batched reads (history.BatchReader, history.Counter): one query per
// table for a chunk of items instead of one per item, which is what a
// dashboard's history.get of thousands of items needs (a query is a few
// milliseconds of fixed cost on the server).

// inChunk bounds the items of one IN list: 18.16's max_query_size is
// 256 KiB and an item id takes up to 21 bytes.
const inChunk = 8192

// merger merges one item's ClickHouse rows (in the read's order, one per
// timestamp) with its unshipped values, the spool winning on equal
// timestamps, and applies the read's limit.
type merger struct {
	sp      []history.Sample
	i       int
	emitted int
	limit   int
	desc    bool
	fn      func(*history.Sample) bool
	stopped bool // fn returned false: the whole read ends
}

func (m *merger) full() bool { return m.limit > 0 && m.emitted >= m.limit }

func (m *merger) emit(v *history.Sample) bool {
	if m.full() {
		return true
	}
	if !m.fn(v) {
		m.stopped = true
		return false
	}
	m.emitted++
	return true
}

func (m *merger) before(a, b *history.Sample) bool {
	if m.desc {
		return key(a) > key(b)
	}
	return key(a) < key(b)
}

// row merges one ClickHouse row; false ends the read.
func (m *merger) row(v *history.Sample) bool {
	for m.i < len(m.sp) && m.before(&m.sp[m.i], v) && !m.full() {
		if !m.emit(&m.sp[m.i]) {
			return false
		}
		m.i++
	}
	if m.i < len(m.sp) && key(&m.sp[m.i]) == key(v) {
		m.i++
		return m.emit(&m.sp[m.i-1])
	}
	return m.emit(v)
}

// rest emits the spool values after the last ClickHouse row.
func (m *merger) rest() bool {
	for ; m.i < len(m.sp) && !m.full(); m.i++ {
		if !m.emit(&m.sp[m.i]) {
			return false
		}
	}
	return true
}

// manySQL selects the rows of items (ascending) in one table, ordered by
// item then time, one per timestamp, at most limit per item.
func (s *Store) manySQL(t *table, items []uint64, from, till int64, desc bool, limit int) string {
	dir := ""
	if desc {
		dir = " DESC"
	}
	in := idList(items)
	if limit <= 0 { // deduplicated by the decoder, as in selectSQL
		return fmt.Sprintf("SELECT itemid, toUInt32(clock), ns, %s, ver FROM %s WHERE itemid IN (%s) AND clock >= toDateTime(%d) AND clock <= toDateTime(%d) ORDER BY itemid, clock%s, ns%s FORMAT RowBinary",
			t.read, s.from(t.name), in, from, till, dir, dir)
	}
	inner := fmt.Sprintf("SELECT itemid, toUInt32(clock) AS c, ns, %s FROM %s WHERE itemid IN (%s) AND clock >= toDateTime(%d) AND clock <= toDateTime(%d) ORDER BY itemid, clock%s, ns%s, ver DESC LIMIT 1 BY itemid, clock, ns",
		t.read, s.from(t.name), in, from, till, dir, dir)
	// LIMIT n BY itemid after the deduplication: a second level, which
	// must sort again (a subquery's order is not kept).
	return fmt.Sprintf("SELECT * FROM (%s) ORDER BY itemid, c%s, ns%s LIMIT %d BY itemid FORMAT RowBinary", inner, dir, dir, limit)
}

// streamMany runs manySQL and calls fn(item, row) per row.
func (s *Store) streamMany(ctx context.Context, t *table, items []uint64, from, till int64, desc bool, limit int, fn func(*history.Sample) bool) error {
	rc, err := s.c.do(ctx, s.manySQL(t, items, from, till, desc, limit), nil, nil)
	if err != nil {
		return fmt.Errorf("clickhouse: reading %d items: %w", len(items), err)
	}
	defer rc.Close()
	d := newRowReader(rc)
	if limit <= 0 {
		lw := lastWins{fn: fn}
		for d.more() {
			id := d.u64()
			v, lm := lw.slot()
			readRow(d, t.typ, id, v, lm)
			ver := d.u64()
			if d.err != nil {
				break
			}
			if !lw.push(ver) {
				return nil
			}
		}
		if d.err != nil {
			return fmt.Errorf("clickhouse: reading %d items: %w", len(items), d.err)
		}
		lw.flush()
		return nil
	}
	var v history.Sample
	var lm history.LogMeta
	for d.more() {
		id := d.u64()
		readRow(d, t.typ, id, &v, &lm)
		if d.err != nil {
			break
		}
		if !fn(&v) {
			return nil
		}
	}
	if d.err != nil {
		return fmt.Errorf("clickhouse: reading %d items: %w", len(items), d.err)
	}
	return nil
}

// ReadMany implements history.BatchReader. When the items ascend without
// repeats and share one table (a single item, or a dashboard's sorted
// list) the rows stream from ClickHouse straight to fn; otherwise each
// chunk's rows are collected per item first and emitted in the caller's
// order.
func (s *Store) ReadMany(ctx context.Context, items []uint64, q history.Query, fn func(*history.Sample) bool) error {
	if s.closed.Load() {
		return history.ErrClosed
	}
	if len(items) == 1 {
		// history.get of one item: Read's paths (windows for the newest
		// values, limits deduplicated by the decoder) fit it better.
		q.ItemID = items[0]
		return s.Read(ctx, q, fn)
	}
	from, till, ok := clampRange(q.From, q.Till)
	if !ok || len(items) == 0 {
		return nil
	}
	for start := 0; start < len(items); start += inChunk {
		stop, err := s.readChunk(ctx, items[start:min(start+inChunk, len(items))], q, from, till, fn)
		if err != nil || stop {
			return err
		}
	}
	return nil
}

// readChunk reads one chunk of ReadMany; stop reports that fn ended it.
func (s *Store) readChunk(ctx context.Context, items []uint64, q history.Query, from, till int64, fn func(*history.Sample) bool) (stop bool, err error) {
	if err := s.resolve(ctx, items); err != nil {
		return false, err
	}
	// The spool first (see read.go), one copy per distinct item.
	sp := make(map[uint64][]history.Sample, len(items))
	masks := make(map[uint64]uint8, len(items))
	for _, id := range items {
		if _, ok := masks[id]; !ok {
			sp[id], masks[id] = s.spoolValues(id, from, till, q.Desc)
		}
	}
	var union uint8
	multi := false
	for _, m := range masks {
		union |= m
		multi = multi || bits.OnesCount8(m) > 1
	}
	sorted := slices.IsSortedFunc(items, func(a, b uint64) int {
		if a < b {
			return -1
		}
		return 1 // equal items are a repeat: not strictly ascending
	})
	if sorted && !multi && bits.OnesCount8(union) <= 1 {
		return s.streamChunk(ctx, items, q, from, till, union, sp, fn)
	}
	// Collected: per item, its rows in q's order (at most Limit).
	rows := map[uint64][]history.Sample{}
	for t := range tables {
		if union&(1<<t) == 0 {
			continue
		}
		var ids []uint64
		for id, m := range masks {
			if m&(1<<t) != 0 {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		err := s.streamMany(ctx, &tables[t], ids, from, till, q.Desc, q.Limit, func(v *history.Sample) bool {
			c := *v
			if c.Log != nil {
				lm := *c.Log
				c.Log = &lm
			}
			rows[c.ItemID] = append(rows[c.ItemID], c)
			return true
		})
		if err != nil {
			return false, err
		}
	}
	for _, id := range items {
		r := rows[id]
		if bits.OnesCount8(masks[id]) > 1 { // a type change: tables interleave in time
			m := merger{desc: q.Desc}
			slices.SortStableFunc(r, func(a, b history.Sample) int {
				if m.before(&a, &b) {
					return -1
				}
				if m.before(&b, &a) {
					return 1
				}
				return 0
			})
		}
		m := merger{sp: sp[id], limit: q.Limit, desc: q.Desc, fn: fn}
		for k := range r {
			if !m.row(&r[k]) || m.full() {
				break
			}
		}
		if m.stopped || !m.rest() {
			return true, nil
		}
	}
	return false, nil
}

// streamChunk is readChunk for strictly ascending items in one table.
func (s *Store) streamChunk(ctx context.Context, items []uint64, q history.Query, from, till int64, mask uint8, sp map[uint64][]history.Sample, fn func(*history.Sample) bool) (bool, error) {
	pos := 0
	var m merger
	start := func(i int) { m = merger{sp: sp[items[i]], limit: q.Limit, desc: q.Desc, fn: fn} }
	start(0)
	// finish ends items[pos] (its spool tail) and moves to the next.
	finish := func() bool {
		if !m.rest() {
			return false
		}
		pos++
		if pos < len(items) {
			start(pos)
		}
		return true
	}
	if mask != 0 {
		t := &tables[bits.TrailingZeros8(mask)]
		err := s.streamMany(ctx, t, items, from, till, q.Desc, q.Limit, func(v *history.Sample) bool {
			for pos < len(items) && items[pos] < v.ItemID {
				if !finish() {
					return false
				}
			}
			return m.row(v)
		})
		if err != nil || m.stopped {
			return true, err
		}
	}
	for pos < len(items) {
		if !finish() {
			return true, nil
		}
	}
	return false, nil
}

// CountMany implements history.Counter: a count per item in ClickHouse,
// or a counted ReadMany when any item has unshipped values in the range
// or more than one table (then the merge decides what counts).
func (s *Store) CountMany(ctx context.Context, items []uint64, q history.Query, max int) (int, error) {
	if s.closed.Load() {
		return 0, history.ErrClosed
	}
	from, till, ok := clampRange(q.From, q.Till)
	if !ok || len(items) == 0 {
		return 0, nil
	}
	generic := func() (int, error) {
		n := 0
		err := s.ReadMany(ctx, items, q, func(*history.Sample) bool {
			n++
			return max <= 0 || n <= max
		})
		return n, err
	}
	if err := s.resolve(ctx, items); err != nil {
		return 0, err
	}
	byTable := map[int][]uint64{}
	seen := map[uint64]bool{}
	for _, id := range items {
		if seen[id] {
			continue
		}
		seen[id] = true
		sp, mask := s.spoolValues(id, from, till, false)
		if len(sp) > 0 || bits.OnesCount8(mask) > 1 {
			return generic()
		}
		if mask != 0 {
			t := bits.TrailingZeros8(mask)
			byTable[t] = append(byTable[t], id)
		}
	}
	counts := map[uint64]int{}
	for t, ids := range byTable {
		for start := 0; start < len(ids); start += inChunk {
			chunk := ids[start:min(start+inChunk, len(ids))]
			in := idList(chunk)
			sql := fmt.Sprintf("SELECT itemid, count() FROM (SELECT itemid FROM %s WHERE itemid IN (%s) AND clock >= toDateTime(%d) AND clock <= toDateTime(%d) GROUP BY itemid, clock, ns) GROUP BY itemid FORMAT RowBinary",
				s.from(tables[t].name), in, from, till)
			rc, err := s.c.do(ctx, sql, nil, nil)
			if err != nil {
				return 0, fmt.Errorf("clickhouse: counting %d items: %w", len(chunk), err)
			}
			d := newRowReader(rc)
			for d.more() {
				id, n := d.u64(), d.u64()
				if d.err == nil {
					counts[id] = int(n)
				}
			}
			rc.Close()
			if d.err != nil {
				return 0, fmt.Errorf("clickhouse: counting %d items: %w", len(chunk), d.err)
			}
		}
	}
	total := 0
	for _, id := range items {
		n := counts[id]
		if q.Limit > 0 {
			n = min(n, q.Limit)
		}
		total += n
	}
	return total, nil
}

// idList is items as an SQL IN list.
func idList(items []uint64) string {
	var b strings.Builder
	for i, id := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(id, 10))
	}
	return b.String()
}
