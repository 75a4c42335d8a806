package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/engine/chunkenc"
)

// piece is one ordered part of a read: a sealed chunk (data) or a copy of
// part of the open buffer (open). Late samples with lower < ts <= upper
// belong to it.
type piece struct {
	lower, upper int64
	data         []byte
	open         *buf
}

// nanos converts a clock bound to nanoseconds without overflowing.
func nanos(clock int64) int64 { return history.ClockNanos(clock) }

// Read implements history.Reader. Sources, from lowest to highest
// priority: block files in the order they were written, the head being
// flushed, the head. A later source wins on an equal timestamp (it holds
// the later write). With one source the read streams; with several, each
// source's part of the range is collected and merged.
func (s *Store) Read(ctx context.Context, q history.Query, fn func(*history.Sample) bool) error {
	s.closeMu.RLock()
	closed := s.closed
	s.closeMu.RUnlock()
	if closed {
		return history.ErrClosed
	}
	lo, hi := nanos(q.From), nanos(q.Till+1) // [lo, hi)
	if lo >= hi {
		return nil
	}
	// The head first, then blocks and the flushing set as one view: a
	// flush that swaps the head out in between leaves the data in one of
	// the latter (see Flush), so nothing is missed; seen twice, the head's
	// copy wins, and it is the same value.
	snap := s.headSnapshot(q.ItemID, lo, hi)
	blocks, fl := s.acquireBlocks(q.ItemID, lo, hi)
	defer func() {
		for _, b := range blocks {
			b.release()
		}
	}()
	return s.readItem(ctx, q, lo, hi, blocks, fl, snap, fn, nil)
}

// headSnapshot copies what a read of item in [lo, hi) needs from the
// head (see series.snapshot), or returns nil when the head has nothing of
// the item.
func (s *Store) headSnapshot(item uint64, lo, hi int64) *series {
	str := &s.stripes[item%stripes]
	str.mu.RLock()
	defer str.mu.RUnlock()
	// A series emptied by a flush holds nothing to read: no snapshot (a
	// dashboard's items are mostly in blocks, and this is per item).
	if sr := str.series[item]; sr != nil && (len(sr.chunks) > 0 || sr.open.len() > 0 || sr.late.len() > 0) {
		return sr.snapshot(lo, hi)
	}
	return nil
}

// scratch holds a read's reusable buffers, so that a batched read of
// many items (ReadMany) decodes every item's chunks into the same
// memory instead of allocating per item.
type scratch struct {
	dec, merged buf
	fbuf        []float64
	data        []byte
	spans       []span
}

// readItem reads one item from a consistent view: the blocks that may
// hold it (acquired by the caller), the series being flushed and the head
// snapshot. sc may be nil. (It does not say whether fn stopped the read
// or the limit did: ReadMany, which needs to know, wraps fn, so that a
// plain Read pays no extra call per value.)
func (s *Store) readItem(ctx context.Context, q history.Query, lo, hi int64, blocks []*block, fl, snap *series, fn func(*history.Sample) bool, sc *scratch) error {
	if sc == nil {
		sc = &scratch{}
	}
	// The common case: the sources cover disjoint time ranges (blocks of
	// different partitions, then the head), so the read streams them one
	// after another in time order without materialising anything.
	if done, err := s.readDisjoint(ctx, q, lo, hi, blocks, fl, snap, fn, sc); done {
		return err
	}
	var sources []*buf
	var vts []history.ValueType
	for _, b := range blocks {
		out, vt, err := s.readBlock(ctx, b, q.ItemID, lo, hi)
		if err != nil {
			return err
		}
		if out.len() > 0 {
			sources, vts = append(sources, out), append(vts, vt)
		}
	}
	if fl != nil {
		out := &buf{}
		r := reader{vt: fl.vt, lo: lo, hi: hi, collect: out}
		if err := r.series(ctx, fl, lo, hi, false); err != nil {
			return err
		}
		if out.len() > 0 {
			sources, vts = append(sources, out), append(vts, fl.vt)
		}
	}
	if len(sources) == 0 {
		if snap == nil {
			return nil
		}
		r := reader{vt: snap.vt, q: q, lo: lo, hi: hi, fn: fn}
		return r.series(ctx, snap, lo, hi, q.Desc)
	}
	if snap != nil {
		out := &buf{}
		r := reader{vt: snap.vt, lo: lo, hi: hi, collect: out}
		if err := r.series(ctx, snap, lo, hi, false); err != nil {
			return err
		}
		if out.len() > 0 {
			sources, vts = append(sources, out), append(vts, snap.vt)
		}
	}
	// The newest source's value type is the item's type now; Zabbix reads
	// only that type's table, so older data of another type is skipped.
	vt := vts[len(vts)-1]
	var acc *buf
	for i, src := range sources {
		if vts[i] != vt {
			continue
		}
		if acc == nil {
			acc = src
			continue
		}
		acc = mergeBufs(vt, acc, src)
	}
	r := reader{vt: vt, q: q, lo: lo, hi: hi, fn: fn}
	if !q.Desc {
		for k := 0; k < acc.len(); k++ {
			if r.emit(acc, k) {
				return nil
			}
		}
	} else {
		for k := acc.len() - 1; k >= 0; k-- {
			if r.emit(acc, k) {
				return nil
			}
		}
	}
	return nil
}

// mergeBufs merges two sorted runs; b wins on equal timestamps.
func mergeBufs(vt history.ValueType, a, b *buf) *buf {
	if vt == history.Float || vt == history.Uint {
		return mergeNums(a, b)
	}
	out := newBuf(vt, a.len()+b.len())
	r := reader{vt: vt}
	i, j := 0, 0
	for i < a.len() || j < b.len() {
		switch {
		case j >= b.len() || (i < a.len() && a.ts[i] < b.ts[j]):
			r.appendFrom(out, a, i)
			i++
		case i >= a.len() || b.ts[j] < a.ts[i]:
			r.appendFrom(out, b, j)
			j++
		default:
			r.appendFrom(out, b, j)
			i, j = i+1, j+1
		}
	}
	return out
}

// mergeNums is mergeBufs for numeric columns: the late buffer's runs
// (late.go) merge through it, so it avoids the per-value type switch.
func mergeNums(a, b *buf) *buf {
	ts := make([]int64, 0, a.len()+b.len())
	num := make([]uint64, 0, a.len()+b.len())
	i, j := 0, 0
	at, an, bt, bn := a.ts, a.num[:len(a.ts)], b.ts, b.num[:len(b.ts)]
	for i < len(at) && j < len(bt) {
		switch {
		case at[i] < bt[j]:
			ts, num = append(ts, at[i]), append(num, an[i])
			i++
		case bt[j] < at[i]:
			ts, num = append(ts, bt[j]), append(num, bn[j])
			j++
		default: // b wins
			ts, num = append(ts, bt[j]), append(num, bn[j])
			i, j = i+1, j+1
		}
	}
	ts, num = append(ts, at[i:]...), append(num, an[i:]...)
	ts, num = append(ts, bt[j:]...), append(num, bn[j:]...)
	return &buf{ts: ts, num: num}
}

// snapshot copies what a read of [lo, hi) needs from a head series:
// references to its immutable chunks and late runs, and copies of the
// matching parts of its open buffer and late tail (both bounded by a
// chunk's worth of values). The caller holds the stripe lock.
func (sr *series) snapshot(lo, hi int64) *series {
	out := &series{vt: sr.vt, chunks: sr.chunks[:len(sr.chunks):len(sr.chunks)]}
	if o := &sr.open; o.len() > 0 {
		if i, j := o.search(lo), o.search(hi); i < j {
			out.open = o.slice(sr.vt, i, j)
		}
	}
	out.late = sr.late.snapshot(sr.vt, lo, hi)
	return out
}

// series reads an immutable series (a snapshot, or one being flushed).
func (r *reader) series(ctx context.Context, sr *series, lo, hi int64, desc bool) error {
	var pieces []piece
	lower := int64(math.MinInt64)
	for _, c := range sr.chunks {
		if c.maxT >= lo && lower < hi-1 {
			pieces = append(pieces, piece{lower: lower, upper: c.maxT, data: c.data})
		}
		lower = c.maxT
		if lower >= hi {
			break
		}
	}
	if o := &sr.open; o.len() > 0 {
		if i, j := o.search(lo), o.search(hi); i < j {
			cp := o.slice(sr.vt, i, j)
			pieces = append(pieces, piece{lower: lower, upper: math.MaxInt64, open: &cp})
		}
	}
	late := sr.late.collect(sr.vt, lo, hi)
	// Late samples can fall in a gap before the first selected piece
	// (older than every chunk in range); give them a piece of their own.
	if late.len() > 0 && (len(pieces) == 0 || late.ts[0] <= pieces[0].lower) {
		upper := int64(math.MaxInt64)
		if len(pieces) > 0 {
			upper = pieces[0].lower
		}
		pieces = append([]piece{{lower: math.MinInt64, upper: upper, open: &buf{}}}, pieces...)
	}
	r.late = late
	if !desc {
		for i := range pieces {
			if err := ctx.Err(); err != nil {
				return err
			}
			if done, err := r.piece(&pieces[i], false); done || err != nil {
				return err
			}
		}
		return nil
	}
	for i := len(pieces) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return err
		}
		if done, err := r.piece(&pieces[i], true); done || err != nil {
			return err
		}
	}
	return nil
}

type reader struct {
	vt      history.ValueType
	q       history.Query
	lo, hi  int64
	fn      func(*history.Sample) bool
	collect *buf // when set, samples are appended here instead of passed to fn
	// runs, when set, receives each piece's selected samples as one
	// ascending run src[i:j] instead of one call per sample (Downsample).
	runs func(src *buf, i, j int)
	late *buf
	sent int

	dec    buf // decoded chunk
	merged buf // chunk merged with its late samples
	fbuf   []float64
	out    history.Sample
	meta   history.LogMeta
}

// piece decodes, merges and emits one piece; done reports that the
// callback or the limit ended the read.
func (r *reader) piece(p *piece, desc bool) (done bool, err error) {
	src := p.open
	if p.data != nil {
		if err := r.decode(p.data); err != nil {
			return true, err
		}
		src = &r.dec
	}
	// Late samples inside (lower, upper].
	li := r.late.search(p.lower + 1)
	lj := r.late.search(p.upper)
	if lj < r.late.len() && r.late.ts[lj] == p.upper {
		lj++
	}
	if p.upper == math.MaxInt64 {
		lj = r.late.len()
	}
	if li < lj {
		r.merge(src, li, lj)
		src = &r.merged
	}
	i, j := src.search(r.lo), src.search(r.hi)
	if r.runs != nil {
		if i < j {
			r.runs(src, i, j)
		}
		return false, nil
	}
	if r.collect != nil {
		for k := i; k < j; k++ {
			r.appendFrom(r.collect, src, k)
		}
		return false, nil
	}
	if !desc {
		for k := i; k < j; k++ {
			if r.emit(src, k) {
				return true, nil
			}
		}
	} else {
		for k := j - 1; k >= i; k-- {
			if r.emit(src, k) {
				return true, nil
			}
		}
	}
	return false, nil
}

func (r *reader) decode(data []byte) error {
	d := &r.dec
	d.reset()
	var err error
	switch r.vt {
	case history.Float:
		d.ts, r.fbuf, err = chunkenc.DecodeFloats(d.ts, r.fbuf[:0], data)
		for _, f := range r.fbuf {
			d.num = append(d.num, f64bits(f))
		}
	case history.Uint:
		d.ts, d.num, err = chunkenc.DecodeUints(d.ts, d.num, data)
	case history.Log:
		d.ts, d.str, d.meta, err = chunkenc.DecodeLogs(d.ts, d.str, d.meta, data)
	default:
		d.ts, d.str, err = chunkenc.DecodeStrings(d.ts, d.str, data)
	}
	return err
}

// merge combines src with late[li:lj] into r.merged; late wins on equal
// timestamps (it was written after the chunk was sealed).
func (r *reader) merge(src *buf, li, lj int) {
	m := &r.merged
	m.reset()
	l := r.late
	a, b := 0, li
	for a < src.len() || b < lj {
		switch {
		case b >= lj || (a < src.len() && src.ts[a] < l.ts[b]):
			r.appendFrom(m, src, a)
			a++
		case a >= src.len() || l.ts[b] < src.ts[a]:
			r.appendFrom(m, l, b)
			b++
		default: // equal
			r.appendFrom(m, l, b)
			a, b = a+1, b+1
		}
	}
}

func (r *reader) appendFrom(dst, src *buf, k int) {
	dst.ts = append(dst.ts, src.ts[k])
	switch r.vt {
	case history.Float, history.Uint:
		dst.num = append(dst.num, src.num[k])
	default:
		dst.str = append(dst.str, src.str[k])
		if r.vt == history.Log {
			dst.meta = append(dst.meta, src.meta[k])
		}
	}
}

func (r *reader) emit(src *buf, k int) bool {
	t := src.ts[k]
	o := &r.out
	*o = history.Sample{ItemID: r.q.ItemID, Clock: floorDiv(t, 1e9), Type: r.vt}
	o.NS = int32(t - o.Clock*1e9)
	switch r.vt {
	case history.Float:
		o.F = f64frombits(src.num[k])
	case history.Uint:
		o.U = src.num[k]
	default:
		o.S = src.str[k]
		if r.vt == history.Log {
			m := src.meta[k]
			r.meta = history.LogMeta{Timestamp: m.Timestamp, Source: m.Source, Severity: m.Severity, EventID: m.EventID}
			o.Log = &r.meta
		}
	}
	if !r.fn(o) {
		return true
	}
	r.sent++
	return r.q.Limit > 0 && r.sent >= r.q.Limit
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) {
		q--
	}
	return q
}

// span is one source's time range for item and how to stream it.
type span struct {
	minT, maxT int64
	vt         history.ValueType
	block      *block
	ser        *series
}

// seriesRange is the time range a (snapshot) series holds.
func seriesRange(sr *series) (int64, int64, bool) {
	minT, maxT, ok := int64(math.MaxInt64), int64(math.MinInt64), false
	if len(sr.chunks) > 0 {
		minT, maxT, ok = sr.chunks[0].minT, sr.chunks[len(sr.chunks)-1].maxT, true
	}
	if b := &sr.open; b.len() > 0 {
		minT, maxT, ok = min(minT, b.ts[0]), max(maxT, b.ts[b.len()-1]), true
	}
	if a, z, has := sr.late.bounds(); has {
		minT, maxT, ok = min(minT, a), max(maxT, z), true
	}
	return minT, maxT, ok
}

// disjointSpans appends to spans item's sources (blocks, the series being
// flushed, the head snapshot) sorted by time, and ok=false when two of them
// overlap in time or differ in value type, so that they must be merged.
func disjointSpans(spans []span, item uint64, blocks []*block, fl, snap *series) ([]span, bool) {
	for _, b := range blocks {
		ix := b.index[item]
		if len(ix.chunks) == 0 {
			continue
		}
		spans = append(spans, span{minT: ix.chunks[0].minT, maxT: ix.chunks[len(ix.chunks)-1].maxT, vt: ix.vt, block: b})
	}
	for _, sr := range []*series{fl, snap} {
		if sr == nil {
			continue
		}
		if a, z, ok := seriesRange(sr); ok {
			spans = append(spans, span{minT: a, maxT: z, vt: sr.vt, ser: sr})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.minT, b.minT) })
	reach := int64(math.MinInt64) // the latest maxT of the spans so far
	for i := range spans {
		if spans[i].vt != spans[0].vt || (i > 0 && spans[i].minT <= reach) {
			return nil, false
		}
		reach = max(reach, spans[i].maxT)
	}
	return spans, true
}

// readDisjoint streams the read when no two sources overlap in time and
// all have one value type. It returns done=false, having emitted
// nothing, when the sources overlap and must be merged.
func (s *Store) readDisjoint(ctx context.Context, q history.Query, lo, hi int64, blocks []*block, fl, snap *series, fn func(*history.Sample) bool, sc *scratch) (bool, error) {
	spans, ok := disjointSpans(sc.spans[:0], q.ItemID, blocks, fl, snap)
	sc.spans = spans[:0]
	if !ok {
		return false, nil
	}
	if len(spans) == 0 {
		return true, nil
	}
	noLate := &buf{} // block chunks have no late samples; read only
	r := reader{vt: spans[0].vt, q: q, lo: lo, hi: hi, fn: fn, late: noLate, dec: sc.dec, merged: sc.merged, fbuf: sc.fbuf}
	data := sc.data
	defer func() { sc.dec, sc.merged, sc.fbuf, sc.data = r.dec, r.merged, r.fbuf, data }()
	one := func(sp *span) (bool, error) {
		if sp.maxT < lo || sp.minT >= hi {
			return false, nil
		}
		if sp.ser != nil {
			stop := false
			inner := r
			inner.fn = func(v *history.Sample) bool {
				if !fn(v) {
					stop = true
					return false
				}
				r.sent++
				if q.Limit > 0 && r.sent >= q.Limit {
					stop = true
					return false
				}
				return true
			}
			inner.q.Limit = 0
			err := inner.series(ctx, sp.ser, lo, hi, q.Desc)
			return stop, err
		}
		chunks := sp.block.index[q.ItemID].chunks
		for k := range chunks {
			c := chunks[k]
			if q.Desc {
				c = chunks[len(chunks)-1-k]
			}
			if c.maxT < lo || c.minT >= hi {
				continue
			}
			if err := ctx.Err(); err != nil {
				return true, err
			}
			var err error
			if data, err = sp.block.readChunk(c, data); err != nil {
				return true, err
			}
			r.late = noLate
			done, err := r.piece(&piece{lower: c.minT - 1, upper: c.maxT, data: data}, q.Desc)
			if err != nil {
				return true, fmt.Errorf("%s: item %d: %w", sp.block.path, q.ItemID, err)
			}
			if done {
				return true, nil
			}
		}
		return false, nil
	}
	for k := range spans {
		sp := &spans[k]
		if q.Desc {
			sp = &spans[len(spans)-1-k]
		}
		if done, err := one(sp); done || err != nil {
			return true, err
		}
	}
	return true, nil
}
