package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// Trends: hourly min/avg/max/count per numeric item, the Zabbix trends
// table. They are computed from the values a flush writes and stored in
// their own block files under trends/, partitioned by day, so that their
// retention (usually much longer than history's) drops their own
// directories. Hours that span flushes have one partial row per flush;
// reads combine them, and add the hours still in the head, computed on
// the fly. A value replaced by a later write to the same timestamp after a
// flush is counted in both rows: trends are statistics, and Zabbix's own
// trends have the same property for late data.

// TrendPartition is the time span of one trends partition.
const TrendPartition = 24 * time.Hour

// Trend is one hour of one item; the type is history's, so that the API
// reads trends through history.TrendReader without knowing the engine.
type Trend = history.Trend

// addTrend folds o into t (a method cannot be declared on history's type
// here).
func addTrend(t *Trend, o Trend) {
	if t.Num == 0 {
		*t = o
		return
	}
	t.Min, t.Max = math.Min(t.Min, o.Min), math.Max(t.Max, o.Max)
	t.Sum += o.Sum
	t.Num += o.Num
}

// hourly aggregates a sorted numeric run.
func hourly(vt history.ValueType, b *buf) []Trend {
	var out []Trend
	for i := 0; i < b.len(); i++ {
		v := f64frombits(b.num[i])
		if vt == history.Uint {
			v = float64(b.num[i])
		}
		h := floorDiv(b.ts[i], 3600e9) * 3600
		if n := len(out); n > 0 && out[n-1].Clock == h {
			addTrend(&out[n-1], Trend{Clock: h, Num: 1, Min: v, Max: v, Sum: v})
			continue
		}
		out = append(out, Trend{Clock: h, Num: 1, Min: v, Max: v, Sum: v})
	}
	return out
}

func encodeTrends(dst []byte, ts []Trend) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ts)))
	for _, t := range ts {
		dst = binary.AppendVarint(dst, t.Clock)
		dst = binary.AppendUvarint(dst, uint64(t.Num))
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(t.Min))
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(t.Max))
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(t.Sum))
	}
	return dst
}

func decodeTrends(dst []Trend, src []byte) ([]Trend, error) {
	n, k := binary.Uvarint(src)
	if k <= 0 || n > uint64(len(src)) {
		return nil, fmt.Errorf("bad trend row count: %w", ErrCorrupt)
	}
	p := k
	for i := uint64(0); i < n; i++ {
		c, k := binary.Varint(src[p:])
		if k <= 0 {
			return nil, fmt.Errorf("bad trend clock: %w", ErrCorrupt)
		}
		p += k
		num, k := binary.Uvarint(src[p:])
		if k <= 0 || p+k+24 > len(src) {
			return nil, fmt.Errorf("truncated trend row: %w", ErrCorrupt)
		}
		p += k
		t := Trend{Clock: c, Num: int64(num),
			Min: math.Float64frombits(binary.LittleEndian.Uint64(src[p:])),
			Max: math.Float64frombits(binary.LittleEndian.Uint64(src[p+8:])),
			Sum: math.Float64frombits(binary.LittleEndian.Uint64(src[p+16:]))}
		p += 24
		dst = append(dst, t)
	}
	if p != len(src) {
		return nil, fmt.Errorf("%d bytes after the trend rows: %w", len(src)-p, ErrCorrupt)
	}
	return dst, nil
}

func (s *Store) trendsDir() string { return filepath.Join(s.opts.Dir, "trends") }

// writeTrends stores one flush's hourly rows, one file per day touched.
func (s *Store) writeTrends(rows map[uint64][]Trend, vts map[uint64]history.ValueType) ([]*block, error) {
	writers := map[int64]*blockWriter{}
	for id, ts := range rows {
		for i := 0; i < len(ts); {
			day := floorDiv(ts[i].Clock*1e9, int64(TrendPartition)) * int64(TrendPartition)
			j := i
			for j < len(ts) && floorDiv(ts[j].Clock*1e9, int64(TrendPartition))*int64(TrendPartition) == day {
				j++
			}
			w := writers[day]
			if w == nil {
				w = newBlockWriter(false)
				writers[day] = w
			}
			w.add(id, vts[id], ts[i].Clock*1e9, ts[j-1].Clock*1e9, j-i, encodeTrends(nil, ts[i:j]))
			i = j
		}
	}
	var out []*block
	for day, w := range writers {
		b, err := s.writeBlockFile(w, s.trendsDir(), 'p', day, int64(TrendPartition))
		if err != nil {
			return out, err
		}
		out = append(out, b)
	}
	return out, nil
}

// loadTrends opens the trend files, quarantining bad ones.
func (s *Store) loadTrends() error {
	return s.loadDir(s.trendsDir(), func(b *block) {
		b.span = int64(TrendPartition) // trends partitions are days, named p<S>
		s.trends = append(s.trends, b)
	})
}

// ReadTrends returns item's hourly trends for hours starting in
// [from, till] (unix seconds), ascending, combining stored rows with the
// hours still in the head. Only numeric items have trends.
func (s *Store) ReadTrends(ctx context.Context, item uint64, from, till int64) ([]Trend, error) {
	byHour := map[int64]*Trend{}
	addRow := func(t Trend) {
		if t.Clock < from || t.Clock > till {
			return
		}
		if cur := byHour[t.Clock]; cur != nil {
			addTrend(cur, t)
		} else {
			c := t
			byHour[t.Clock] = &c
		}
	}
	lo, hi := nanos(floorDiv(from, 3600)*3600), nanos(till+3600)
	s.blocksMu.RLock()
	var files []*block
	for _, b := range s.trends {
		if b.maxT < lo || b.minT >= hi {
			continue
		}
		if _, ok := b.index[item]; ok {
			b.acquire()
			files = append(files, b)
		}
	}
	s.blocksMu.RUnlock()
	defer func() {
		for _, b := range files {
			b.release()
		}
	}()
	var data []byte
	var rows []Trend
	for _, b := range files {
		for _, c := range b.index[item].chunks {
			if c.maxT < lo || c.minT >= hi {
				continue
			}
			var err error
			if data, err = b.readChunk(c, data); err != nil {
				return nil, err
			}
			if rows, err = decodeTrends(rows[:0], data); err != nil {
				return nil, fmt.Errorf("%s: item %d: %w", b.path, item, err)
			}
			for _, t := range rows {
				addRow(t)
			}
		}
	}
	// Hours not yet flushed: the head and a flush in progress.
	var vt history.ValueType
	head := &buf{}
	seenType := false
	str := &s.stripes[item%stripes]
	str.mu.RLock()
	if sr := str.series[item]; sr != nil {
		vt, seenType = sr.vt, true
		snap := sr.snapshot(lo, hi)
		str.mu.RUnlock()
		r := reader{vt: vt, lo: lo, hi: hi, collect: head}
		if err := r.series(ctx, snap, lo, hi, false); err != nil {
			return nil, err
		}
	} else {
		str.mu.RUnlock()
	}
	if _, fl := s.acquireBlocks(item, 1<<62, 1<<62); fl != nil && (!seenType || fl.vt == vt) && fl.vt.Numeric() {
		flb := &buf{}
		r := reader{vt: fl.vt, lo: lo, hi: hi, collect: flb}
		if err := r.series(ctx, fl, lo, hi, false); err != nil {
			return nil, err
		}
		for _, t := range hourly(fl.vt, flb) {
			addRow(t)
		}
	}
	if seenType && vt.Numeric() {
		for _, t := range hourly(vt, head) {
			addRow(t)
		}
	}
	out := make([]Trend, 0, len(byHour))
	for _, t := range byHour {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Clock < out[j].Clock })
	return out, nil
}

// DropTrendsBefore removes trend partitions (days) that end at or before
// cutoff (unix seconds).
func (s *Store) DropTrendsBefore(cutoff int64) (int, error) {
	limit := nanos(cutoff)
	s.blocksMu.Lock()
	var keep, drop []*block
	for _, b := range s.trends {
		if b.partition+int64(TrendPartition) <= limit {
			drop = append(drop, b)
		} else {
			keep = append(keep, b)
		}
	}
	s.trends = keep
	s.blocksMu.Unlock()
	var err error
	for _, b := range drop {
		if rerr := os.Remove(b.path); rerr != nil && err == nil {
			err = rerr
		}
		os.Remove(filepath.Dir(b.path))
		b.release()
	}
	return len(drop), err
}
