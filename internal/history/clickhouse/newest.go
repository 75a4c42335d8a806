package clickhouse

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

var _ history.NewestReader = (*Store)(nil)

// Newest values of many items (history.NewestReader): the pipeline's
// last and previous value of every item at start. One Read per item
// costs a table lookup and, for the open range the seed asks, a window
// query per decade of empty future before the item's data: at 100k items
// several hundred thousand requests. ReadNewest asks, per chunk of items
// and per table, for windows growing back from now, each query keeping
// the newest n rows of every item still short of n (LIMIT n BY itemid
// over the window's rows, which a live item's last values keep to the
// newest partition). Tried and rejected: one GROUP BY itemid with argMax
// over all history (reads every item's whole history on 18.16) and
// anchoring the windows at the range's end (2106: eight empty windows
// and then one that spans everything).

// firstNewestWindow is the first window back from now: the last values of
// an item polled every few minutes are in it.
const firstNewestWindow = 600

// ReadNewest implements history.NewestReader. Values after now (clocks
// from the future) are in the first window, which ends at the last
// second DateTime holds; the spool's values of each item are merged in,
// winning on equal timestamps, as in Read.
func (s *Store) ReadNewest(ctx context.Context, items []uint64, n int, fn func([]history.Sample) bool) error {
	if s.closed.Load() {
		return history.ErrClosed
	}
	if n <= 0 || len(items) == 0 {
		return nil
	}
	ids := slices.Clone(items)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	now := time.Now().Unix()
	used, err := s.usedTables(ctx)
	if err != nil {
		return err
	}
	var out []history.Sample
	for start := 0; start < len(ids); start += inChunk {
		chunk := ids[start:min(start+inChunk, len(ids))]
		// The spool before ClickHouse, as in Read: a generation shipped
		// meanwhile is then in ClickHouse's answer, never in neither.
		sp := make(map[uint64][]history.Sample)
		for _, id := range chunk {
			if v, _ := s.spoolValues(id, 0, maxClock, true); len(v) > 0 {
				sp[id] = v[:min(n, len(v))]
			}
		}
		got, err := s.newestChunk(ctx, chunk, n, now, used)
		if err != nil {
			return err
		}
		for _, id := range chunk {
			if len(got[id]) == 0 && len(sp[id]) == 0 {
				continue
			}
			out = mergeNewest(out[:0], sp[id], got[id], n)
			if !fn(out) {
				return nil
			}
		}
	}
	return nil
}

// newestChunk returns, per item of chunk (ascending, at most inChunk),
// its newest n values in ClickHouse, newest first, gathered from every
// table of used (an item whose value type changed has rows in several).
func (s *Store) newestChunk(ctx context.Context, chunk []uint64, n int, now int64, used uint8) (map[uint64][]history.Sample, error) {
	got := make(map[uint64][]history.Sample)
	for t := range tables {
		if used&(1<<t) == 0 {
			continue
		}
		tb := &tables[t]
		have := map[uint64]int{} // rows of this table per item
		pending := chunk
		hi := int64(maxClock)
		lo := max(0, min(now, maxClock)-firstNewestWindow+1)
		for w := int64(firstNewestWindow); len(pending) > 0; w *= 8 {
			err := s.streamMany(ctx, tb, pending, lo, hi, true, n, func(v *history.Sample) bool {
				if have[v.ItemID] < n {
					c := *v
					if c.Log != nil {
						lm := *c.Log
						c.Log = &lm
					}
					got[c.ItemID] = append(got[c.ItemID], c)
					have[c.ItemID]++
				}
				return true
			})
			if err != nil {
				return nil, fmt.Errorf("clickhouse: newest values of %d items, %s, clocks %d..%d: %w", len(pending), tb.name, lo, hi, err)
			}
			if lo == 0 {
				break
			}
			next := pending[:0:0]
			for _, id := range pending {
				if have[id] < n {
					next = append(next, id)
				}
			}
			pending = next
			hi = lo - 1
			lo = max(0, hi-w*8+1)
		}
	}
	return got, nil
}

// usedTables is the bit set of the history tables that hold rows on any
// shard: most installations never write log or text values, and every
// window of an empty table would be a query for nothing.
func (s *Store) usedTables(ctx context.Context) (uint8, error) {
	var used uint8
	for _, sc := range s.shards {
		v, err := sc.queryString(ctx, "SELECT DISTINCT table FROM system.parts WHERE active AND database = '"+s.db+"'")
		if err != nil {
			return 0, fmt.Errorf("clickhouse: listing the tables that hold values: %w", err)
		}
		for _, name := range strings.Fields(v) {
			for t := range tables {
				if tables[t].name == name {
					used |= 1 << t
				}
			}
		}
	}
	return used, nil
}

// mergeNewest appends to dst the newest n of the spool's values sp and
// ClickHouse's rows ch of one item (each newest first, one per timestamp
// within its table), the spool winning on equal timestamps.
func mergeNewest(dst, sp, ch []history.Sample, n int) []history.Sample {
	// Rows of several tables (a type change) are not in one order yet.
	slices.SortStableFunc(ch, func(a, b history.Sample) int {
		ka, kb := key(&a), key(&b)
		switch {
		case ka > kb:
			return -1
		case ka < kb:
			return 1
		}
		return 0
	})
	i, j := 0, 0
	for len(dst) < n && (i < len(sp) || j < len(ch)) {
		switch {
		case j == len(ch) || (i < len(sp) && key(&sp[i]) >= key(&ch[j])):
			if j < len(ch) && key(&sp[i]) == key(&ch[j]) {
				j++ // the spool's is the later write
			}
			dst = append(dst, sp[i])
			i++
		default:
			if len(dst) == 0 || key(&dst[len(dst)-1]) != key(&ch[j]) {
				dst = append(dst, ch[j])
			}
			j++
		}
	}
	return dst
}
