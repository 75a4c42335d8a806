package histread

import (
	"bufio"
	"context"
	"errors"
	"math"
	"runtime"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// The row bound without a counting pass.
//
// A history.get without a "limit" must fail with a clean JSON-RPC error
// when it selects more than api.max_rows rows, so the bound has to be
// known before the first byte of the result goes out. Counting first
// (history.CountMany) costs a pass over the store's index and chunk
// timestamps: for 5,000 items over an hour, about 15 ms of a call whose
// read takes 30.
//
// Instead, a numeric read starts into a buffer of compact rows (24
// bytes each, a third of their JSON) and nothing is written until it
// either ends or the buffer is full:
//
//   - the read ends first (the common case: a dashboard's panel, a
//     graph): the buffer holds every row, so the count is exact and
//     free; more than MaxRows is the error, otherwise the rows are
//     formatted from the buffer;
//   - the buffer fills with MaxRows+1 rows: the request is over the
//     bound, the error needs no count;
//   - the buffer fills below that (its per-request or server-wide bound
//     is smaller than MaxRows): the read is paused, the request is
//     counted as before, and if it is within the bound the buffered rows
//     are written and the read resumes, writing straight to the socket.
//
// The trade-off is memory for a pass: a request holds up to
// prefetchRequestRows rows (24 MiB) while it reads, and all requests
// together at most Options.PrefetchRows, so large reads cost what they
// cost before (the count) plus a bounded buffer, and reads up to a
// million rows skip the count. The buffer is blocks from a pool, so a
// dashboard's repeated calls do not allocate it anew.
//
// The read is paused inside the store's callback (its goroutine waits
// on a channel): one read, suspended once, rather than stopped and
// restarted at a position (which would need a position that survives
// concurrent writes). The store contract (history.Reader) keeps no lock
// across the callback, so counting while a read is suspended is safe.
//
// String, text and log rows are not buffered (their values vary in size
// without bound); they are counted first as before.

// prefetchRequestRows bounds the rows one request buffers.
const prefetchRequestRows = 1 << 20

// prefetchBlockRows is the rows of one pooled block (192 KiB).
const prefetchBlockRows = 8192

// pfRow is one buffered numeric row: its item as an index into the
// request's item ids, its time, and its value's bits.
type pfRow struct {
	clock int64
	bits  uint64
	ns    int32
	item  uint32
}

type pfBlock struct {
	all  []pfRow // prefetchBlockRows long
	rows []pfRow // the rows in use, a prefix of all capped at what was reserved
}

// prefetch is one request's buffer.
type prefetch struct {
	r        *Reader
	ids      []uint64 // item ids by index (the request's, plus any the store returned unasked)
	cur      int      // index of the last row's item
	blocks   []*pfBlock
	reserved int // rows reserved from the server-wide budget
	n        int // rows buffered
	max      int // rows this request may buffer
}

// add buffers v, or reports false when the buffer is full.
func (pf *prefetch) add(v *history.Sample) bool {
	if pf.n >= pf.max {
		return false
	}
	var b *pfBlock
	if k := len(pf.blocks); k > 0 && len(pf.blocks[k-1].rows) < cap(pf.blocks[k-1].rows) {
		b = pf.blocks[k-1]
	} else if b = pf.grow(); b == nil {
		return false
	}
	if pf.ids[pf.cur] != v.ItemID {
		pf.findItem(v.ItemID)
	}
	bits := v.U
	if v.Type == history.Float {
		bits = math.Float64bits(v.F)
	}
	b.rows = append(b.rows, pfRow{clock: v.Clock, bits: bits, ns: v.NS, item: uint32(pf.cur)})
	pf.n++
	return true
}

// findItem points cur at id: the next item in a batched read's order,
// or wherever it is.
func (pf *prefetch) findItem(id uint64) {
	for i := pf.cur + 1; i < len(pf.ids); i++ {
		if pf.ids[i] == id {
			pf.cur = i
			return
		}
	}
	for i := range pf.ids {
		if pf.ids[i] == id {
			pf.cur = i
			return
		}
	}
	pf.ids = append(pf.ids, id) // not asked for: still written as read
	pf.cur = len(pf.ids) - 1
}

// grow takes a block within the request's and the server's bounds, or
// returns nil.
func (pf *prefetch) grow() *pfBlock {
	want := min(prefetchBlockRows, pf.max-pf.reserved)
	if want <= 0 {
		return nil
	}
	if pf.r.budget.Add(-int64(want)) < 0 {
		pf.r.budget.Add(int64(want))
		return nil
	}
	pf.reserved += want
	b, _ := pf.r.blocks.Get().(*pfBlock)
	if b == nil {
		b = &pfBlock{all: make([]pfRow, prefetchBlockRows)}
	}
	b.rows = b.all[:0:want]
	pf.blocks = append(pf.blocks, b)
	return b
}

// release returns the blocks and their budget. Safe to call twice.
func (pf *prefetch) release() {
	for _, b := range pf.blocks {
		b.rows = nil
		pf.r.blocks.Put(b)
	}
	pf.blocks = nil
	pf.r.budget.Add(int64(pf.reserved))
	pf.reserved = 0
}

// writeTo writes the buffered rows, formatting them straight into w's
// free space.
func (pf *prefetch) writeTo(w *bufio.Writer, e *rowEncoder, typ history.ValueType) {
	for _, blk := range pf.blocks {
		rows := blk.rows
		for len(rows) > 0 {
			b := w.AvailableBuffer()
			if cap(b) < maxNumericRow {
				w.Flush()
				b = w.AvailableBuffer()
			}
			k := 0
			for ; k < len(rows) && cap(b)-len(b) >= maxNumericRow; k++ {
				r := &rows[k]
				b = e.appendNumeric(b, pf.ids[r.item], r.clock, r.ns, typ, r.bits)
			}
			w.Write(b)
			rows = rows[k:]
		}
	}
}

// pfPart is one part of a request's items, read by its own goroutine
// into its own buffer. Its events (ev) say whether the read paused on a
// full buffer (true) or ended (false); resume answers a pause: true to
// write the rest straight to w, false to stop.
type pfPart struct {
	ids    []uint64
	pf     *prefetch
	ev     chan bool
	resume chan bool
	w      *bufio.Writer
	err    error
	live   bool // paused, not yet resumed or stopped
}

// prefetchPartItems is the least items per part worth a goroutine
// (Reader.partItems; tests lower it).
const prefetchPartItems = 256

// prefetched serves a numeric read that must be checked against
// MaxRows (no limit, or one above it) by buffering its rows first (see
// above).
//
// Without a limit, a request of many items is read in up to
// min(GOMAXPROCS, 4) parts at once (consecutive runs of its items, so
// their rows concatenate in order): the store's decoding of half a
// million rows is the other half of the call besides formatting them,
// and on a second core it overlaps. With a limit the rows must stop at
// the limit in order, so one part reads them all.
//
// merge (sortfield "clock" over several items) merges the buffered rows
// by time, ties by itemid (as mergeByClock does), applying the limit
// after the merge; a merge whose rows do not fit the buffer returns
// errNoRoom, and the caller merges from the store instead.
func (pl *Plan) prefetched(ctx context.Context, enc *rowEncoder) (func(*bufio.Writer) error, error) {
	r, ids, q, typ, limit, merge, desc := pl.r, pl.req.Items, pl.query(0), pl.req.Type, pl.req.Limit, pl.merge, pl.req.Desc
	maxRows := r.opts.MaxRows
	capRows := min(maxRows+1, prefetchRequestRows, r.opts.PrefetchRows)
	readLimit := limit
	if merge {
		readLimit = 0 // the limit applies to the merged rows
	}
	nparts := 1
	if readLimit == 0 {
		nparts = max(1, min(runtime.GOMAXPROCS(0), 4, len(ids)/r.partItems))
	}
	parts := make([]*pfPart, nparts)
	for i := range parts {
		p := &pfPart{ids: ids[i*len(ids)/nparts : (i+1)*len(ids)/nparts], ev: make(chan bool, 1), resume: make(chan bool)}
		// The buffer's own copy of the ids: it may append ids the store
		// returned unasked, which must not run into the next part's.
		p.pf = &prefetch{r: r, ids: append([]uint64(nil), p.ids...), max: max(1, capRows/nparts)}
		if len(p.pf.ids) == 0 {
			p.pf.ids = []uint64{0} // cur must index something
		}
		parts[i] = p
		go p.read(ctx, r.opts.Store, q, pl.req.Match, readLimit, enc)
	}
	n, paused := 0, false
	var readErr error
	for _, p := range parts {
		p.live = <-p.ev
		paused = paused || p.live
		n += p.pf.n
		if !p.live && p.err != nil && readErr == nil {
			readErr = p.err
		}
	}
	// stopAll ends every paused read and returns every buffer.
	stopAll := func() {
		for _, p := range parts {
			if p.live {
				p.resume <- false
				<-p.ev
				p.live = false
			}
			p.pf.release()
		}
	}
	fail := func(err error) (func(*bufio.Writer) error, error) {
		stopAll()
		return nil, err
	}
	if readErr != nil {
		return fail(&ReadError{readErr})
	}
	if n > maxRows {
		return fail(&TooManyRowsError{maxRows})
	}
	if merge {
		if paused {
			stopAll()
			return nil, errNoRoom
		}
		return func(w *bufio.Writer) error {
			defer stopAll()
			w.WriteByte('[')
			if !writeMergedBuckets(w, parts, enc, typ, desc, limit, &r.budget) {
				writeMerged(w, parts, enc, typ, desc, limit)
			}
			w.WriteByte(']')
			return nil
		}, nil
	}
	if paused {
		n, err := pl.count(ctx)
		if err != nil {
			return fail(&ReadError{err})
		}
		if n > maxRows {
			return fail(&TooManyRowsError{maxRows})
		}
	}
	return func(w *bufio.Writer) error {
		defer stopAll()
		w.WriteByte('[')
		for _, p := range parts {
			p.pf.writeTo(w, enc, typ)
			p.pf.release() // written: let other requests buffer
			if p.live {
				p.w, p.live = w, false
				p.resume <- true
				<-p.ev
			}
			if p.err != nil {
				return p.err
			}
		}
		w.WriteByte(']')
		return nil
	}, nil
}

// read reads the part's items into its buffer, pauses when it is full
// and, when resumed, writes the rest to p.w.
func (p *pfPart) read(ctx context.Context, r history.Reader, q history.Query, match func(*history.Sample) bool, limit int, enc *rowEncoder) {
	buffering, sent := true, 0
	p.err = history.ReadMany(ctx, r, p.ids, q, func(v *history.Sample) bool {
		if match != nil && !match(v) {
			return true
		}
		if buffering {
			if p.pf.add(v) {
				sent++
				return limit == 0 || sent < limit
			}
			buffering = false
			p.ev <- true
			if !<-p.resume {
				return false
			}
		}
		enc.write(p.w, v)
		sent++
		return limit == 0 || sent < limit
	})
	p.ev <- false
}

// errNoRoom: a merge by clock did not fit the prefetch buffer.
var errNoRoom = errors.New("the rows do not fit the prefetch buffer")

// writeMerged writes the parts' buffered rows merged by time (clock,
// then ns; descending when desc), ties by itemid, at most limit of them
// when limit > 0. Each item's rows are one run in its part's buffer,
// already in order, so a heap of one cursor per item merges them: a
// dashboard's 5,000 items cost about 12 levels of the heap a row, where
// the merge from the store (mergeByClock) pays a read per item and a
// coroutine switch per row. Each cursor carries its current row's key,
// so that the heap's comparisons stay within the cursors (5,000 of them
// fit the cache) instead of reaching into rows spread over megabytes.
func writeMerged(w *bufio.Writer, parts []*pfPart, e *rowEncoder, typ history.ValueType, desc bool, limit int) {
	var h []runCursor
	for _, p := range parts {
		prev := int64(-1)
		for b, blk := range p.pf.blocks {
			for i := range blk.rows {
				if r := &blk.rows[i]; int64(r.item) != prev {
					prev = int64(r.item)
					c := runCursor{pf: p.pf, b: b, i: i, item: r.item, id: p.pf.ids[r.item]}
					c.load(r, desc)
					h = append(h, c)
				}
			}
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	sent := 0
	b := w.AvailableBuffer()
	for len(h) > 0 {
		if cap(b)-len(b) < maxNumericRow {
			w.Write(b)
			if w.Available() < maxNumericRow {
				w.Flush()
			}
			b = w.AvailableBuffer()
		}
		c := &h[0]
		r := &c.pf.blocks[c.b].rows[c.i]
		b = e.appendNumeric(b, c.id, r.clock, r.ns, typ, r.bits)
		if sent++; limit > 0 && sent >= limit {
			break
		}
		if !c.advance(desc) {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		if len(h) > 0 {
			siftDown(h, 0)
		}
	}
	w.Write(b)
}

// runCursor walks one item's run of buffered rows. key orders it in the
// heap: the current row's clock and ns as one number (ns < 1e9), negated
// when the merge is descending, so the heap always takes the least key,
// ties by id ascending as mergeByClock orders them.
type runCursor struct {
	key  [2]int64 // clock, ns (both negated when descending)
	id   uint64
	pf   *prefetch
	b, i int // the current row: pf.blocks[b].rows[i]
	item uint32
}

func (c *runCursor) load(r *pfRow, desc bool) {
	c.key = [2]int64{r.clock, int64(r.ns)}
	if desc {
		c.key = [2]int64{-r.clock, -int64(r.ns)}
	}
}

// advance moves to the run's next row, or reports false at its end.
func (c *runCursor) advance(desc bool) bool {
	c.i++
	if c.i == len(c.pf.blocks[c.b].rows) {
		c.b, c.i = c.b+1, 0
		if c.b == len(c.pf.blocks) {
			return false
		}
	}
	r := &c.pf.blocks[c.b].rows[c.i]
	if r.item != c.item {
		return false
	}
	c.load(r, desc)
	return true
}

func (c *runCursor) less(o *runCursor) bool {
	if c.key[0] != o.key[0] {
		return c.key[0] < o.key[0]
	}
	if c.key[1] != o.key[1] {
		return c.key[1] < o.key[1]
	}
	return c.id < o.id
}

// siftDown restores the heap order below i.
func siftDown(h []runCursor, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].less(&h[l]) {
			m = r
		}
		if !h[m].less(&h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
