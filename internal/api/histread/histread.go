package histread

import (
	"bufio"
	"container/heap"
	"context"
	"iter"
	"math"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// Options configures a Reader.
type Options struct {
	// Store is where the rows are read from.
	Store history.Reader
	// MaxRows bounds the rows one request may select (api.max_rows);
	// a request over it gets a TooManyRowsError before any row is
	// written. It must be positive.
	MaxRows int
	// PrefetchRows bounds the numeric rows all requests together buffer
	// to check MaxRows without a counting pass (prefetch.go). It must be
	// positive.
	PrefetchRows int
}

// Reader serves history.get's reads over one store. It holds what
// requests share: the budget of buffered rows and the pool of buffers.
type Reader struct {
	opts Options
	// budget is the rows requests may still buffer, of PrefetchRows;
	// blocks pools the buffers (prefetch.go).
	budget atomic.Int64
	blocks sync.Pool
	// partItems is the least items per concurrently read part
	// (prefetchPartItems; tests lower it).
	partItems int
}

// New returns a Reader.
func New(opts Options) *Reader {
	r := &Reader{opts: opts, partItems: prefetchPartItems}
	r.budget.Store(int64(opts.PrefetchRows))
	return r
}

// Request is one history.get read, its parameters already checked and
// its items already narrowed to those the caller may read.
type Request struct {
	// Items are the items to read, ascending and distinct.
	Items []uint64
	// Type is the value type the items hold (history.get's "history").
	Type history.ValueType
	// From and Till bound the clocks, both included. A bound not given
	// (HasFrom, HasTill false) is 0 or 2^31-1 for raw rows; Downsample
	// takes it from each item's data instead.
	From, Till       int64
	HasFrom, HasTill bool
	// Desc orders the rows newest first.
	Desc bool
	// ByClock merges the items' rows by time (ties by item) instead of
	// writing them item by item.
	ByClock bool
	// Limit bounds the rows written (after Match and the merge); 0 means
	// none.
	Limit int
	// Count writes the number of rows (as a JSON string) instead of the
	// rows; Limit does not apply.
	Count bool
	// Fields are the fields of each row (history.get's "output").
	Fields Fields
	// Match keeps only the rows it accepts (history.get's "filter" and
	// "search"); nil keeps every row.
	Match func(*history.Sample) bool
	// Downsample, when positive, asks for at most that many buckets per
	// item instead of raw rows (downsample.go). Type must be numeric and
	// Match nil.
	Downsample int
}

// Fields is a set of history row fields.
type Fields uint16

// The fields of history rows: raw rows have itemid, clock, value and ns,
// log rows also timestamp, source, severity and logeventid, and
// downsampled rows min, max, avg and count.
const (
	FieldItemID Fields = 1 << iota
	FieldClock
	FieldValue
	FieldNS
	FieldTimestamp
	FieldSource
	FieldSeverity
	FieldLogEventID
	FieldMin
	FieldMax
	FieldAvg
	FieldCount

	// AllFields is "output": "extend".
	AllFields Fields = 1<<iota - 1
)

var fieldNames = [...]string{"itemid", "clock", "value", "ns", "timestamp", "source", "severity", "logeventid", "min", "max", "avg", "count"}

// FieldNamed returns the field of that name, or 0 for a name that is no
// field of a history row.
func FieldNamed(name string) Fields {
	for i, n := range fieldNames {
		if n == name {
			return 1 << i
		}
	}
	return 0
}

// name is the name of a single field.
func (f Fields) name() string {
	for i, n := range fieldNames {
		if f == 1<<i {
			return n
		}
	}
	return ""
}

// Has reports whether every field of g is in f.
func (f Fields) Has(g Fields) bool { return f&g == g }

// TooManyRowsError is a request that selects more than Options.MaxRows
// rows and sets no limit within it.
type TooManyRowsError struct{ Max int }

func (e *TooManyRowsError) Error() string {
	return "the request selects more than " + strconv.Itoa(e.Max) + " history rows"
}

// TooManyBucketsError is a downsampled request whose items × buckets
// exceed what one request may hold.
type TooManyBucketsError struct {
	Items, PerItem, Max int
}

func (e *TooManyBucketsError) Error() string {
	return "the request asks for up to " + strconv.Itoa(e.Items*e.PerItem) + " buckets, more than " + strconv.Itoa(e.Max)
}

// ReadError is a store error met before anything was written.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return "cannot read history: " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// path is how a Plan reads.
type path uint8

const (
	pathCount      path = iota // count the rows, write the number
	pathDownsample             // read buckets, hold them, write them
	pathPrefetch               // buffer numeric rows until the bound is known (prefetch.go)
	pathCounted                // count against MaxRows, then stream
	pathStream                 // stream: the limit keeps the rows within MaxRows
)

// Plan is how one request is read: decided from the request and the
// Reader's bounds alone, before any I/O.
type Plan struct {
	r   *Reader
	req Request
	// path, and the fallback when a prefetching merge does not fit its
	// buffer (pathCounted).
	path path
	// merge: the rows of several items are merged by clock.
	merge bool
	// storeLimit is the limit the store applies per read: none when
	// Match drops rows, which must not count.
	storeLimit int
}

// Plan decides how req is read.
func (r *Reader) Plan(req Request) *Plan {
	p := &Plan{r: r, req: req, merge: req.ByClock && len(req.Items) > 1, storeLimit: req.Limit}
	if req.Match != nil || req.Count {
		// Rows the filter drops do not count; a count counts every
		// row, whatever the limit (as 6.0 does).
		p.storeLimit = 0
	}
	switch {
	case req.Downsample > 0:
		p.path = pathDownsample
	case req.Count:
		p.path = pathCount
	case req.Limit > 0 && req.Limit <= r.opts.MaxRows:
		// A limit within the bound: no row count to check.
		p.path = pathStream
	case req.Type == history.Float || req.Type == history.Uint:
		p.path = pathPrefetch
	default:
		// String, text and log rows vary in size without bound: they are
		// counted first, not buffered.
		p.path = pathCounted
	}
	return p
}

// String names the plan's way of reading, for tests and logs.
func (p *Plan) String() string {
	s := [...]string{"count", "downsample", "prefetch", "count+stream", "stream"}[p.path]
	if p.merge && p.path != pathCount && p.path != pathDownsample {
		s += "/merge"
	}
	return s
}

// Run reads until it knows the request can be answered, and returns the
// function that writes the answer (a JSON array of rows, or the count as
// a JSON string) to w. The row bound must be known before the first
// byte of the answer goes out, so a request over it fails here, with a
// *TooManyRowsError, as do a *TooManyBucketsError and a store error
// (*ReadError); the write function then only fails when the store does
// in the middle of the rows, when the answer is already cut. The write
// function must be called exactly once when Run succeeds: it releases
// what Run holds (buffers, paused reads).
func (p *Plan) Run(ctx context.Context) (func(*bufio.Writer) error, error) {
	switch p.path {
	case pathDownsample:
		return p.downsample(ctx)
	case pathCount:
		n, err := p.count(ctx)
		if err != nil {
			return nil, &ReadError{err}
		}
		return func(w *bufio.Writer) error {
			w.WriteByte('"')
			w.WriteString(strconv.Itoa(n))
			w.WriteByte('"')
			return nil
		}, nil
	case pathPrefetch:
		run, err := p.prefetched(ctx, newRowEncoder(p.req.Fields))
		if err != errNoRoom {
			return run, err
		}
		// A merge by clock that did not fit its buffer: counted and
		// merged from the store.
		fallthrough
	case pathCounted:
		n, err := p.count(ctx)
		if err != nil {
			return nil, &ReadError{err}
		}
		if n > p.r.opts.MaxRows {
			return nil, &TooManyRowsError{p.r.opts.MaxRows}
		}
	}
	return p.stream(ctx, newRowEncoder(p.req.Fields)), nil
}

// query is the store query of item id.
func (p *Plan) query(id uint64) history.Query {
	from, till := int64(0), int64(math.MaxInt32)
	if p.req.HasFrom {
		from = p.req.From
	}
	if p.req.HasTill {
		till = p.req.Till
	}
	return history.Query{ItemID: id, From: from, Till: till, Desc: p.req.Desc, Limit: p.storeLimit}
}

// count counts the request's rows, stopping once past MaxRows unless
// the request wants the number. One batched read for all items
// (history.CountMany, history.ReadMany): a dashboard's thousands of
// items cost the store one view, not one per item.
func (p *Plan) count(ctx context.Context) (int, error) {
	max := p.r.opts.MaxRows
	if p.req.Count {
		max = 0
	}
	if match := p.req.Match; match != nil {
		// filter/search: only matching rows count, so the values are
		// read rather than counted from the index.
		n := 0
		err := history.ReadMany(ctx, p.r.opts.Store, p.req.Items, p.query(0), func(v *history.Sample) bool {
			if !match(v) {
				return true
			}
			n++
			return max == 0 || n <= max
		})
		return n, err
	}
	return history.CountMany(ctx, p.r.opts.Store, p.req.Items, p.query(0), max)
}

// stream returns the writer of the rows read straight from the store.
func (p *Plan) stream(ctx context.Context, enc *rowEncoder) func(*bufio.Writer) error {
	match, limit := p.req.Match, p.req.Limit
	return func(w *bufio.Writer) error {
		w.WriteByte('[')
		sent := 0
		emit := func(v *history.Sample) bool {
			if match != nil && !match(v) {
				return true
			}
			enc.write(w, v)
			sent++
			return limit == 0 || sent < limit
		}
		if p.merge {
			if err := mergeByClock(ctx, p.r.opts.Store, p.req.Items, p.query, p.req.Desc, emit); err != nil {
				return err
			}
		} else if err := history.ReadMany(ctx, p.r.opts.Store, p.req.Items, p.query(0), emit); err != nil {
			return err
		}
		w.WriteByte(']')
		return nil
	}
}

// mergeByClock merges the items' histories by time with a heap of pull
// iterators: memory is one pending sample per item.
func mergeByClock(ctx context.Context, r history.Reader, items []uint64, q func(uint64) history.Query, desc bool, emit func(*history.Sample) bool) error {
	h := &sampleHeap{desc: desc}
	var stops []func()
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	var readErr error
	for _, id := range items {
		seq := iter.Seq[history.Sample](func(yield func(history.Sample) bool) {
			if err := r.Read(ctx, q(id), func(v *history.Sample) bool { return yield(*v) }); err != nil && readErr == nil {
				readErr = err
			}
		})
		next, stop := iter.Pull(seq)
		stops = append(stops, stop)
		if v, ok := next(); ok {
			heap.Push(h, cursor{v: v, next: next})
		}
	}
	for h.Len() > 0 {
		c := heap.Pop(h).(cursor)
		if !emit(&c.v) {
			return readErr
		}
		if v, ok := c.next(); ok {
			heap.Push(h, cursor{v: v, next: c.next})
		}
	}
	return readErr
}

type cursor struct {
	v    history.Sample
	next func() (history.Sample, bool)
}

type sampleHeap struct {
	c    []cursor
	desc bool
}

func (h *sampleHeap) Len() int { return len(h.c) }
func (h *sampleHeap) Less(i, j int) bool {
	a, b := &h.c[i].v, &h.c[j].v
	if a.Clock == b.Clock && a.NS == b.NS {
		return a.ItemID < b.ItemID
	}
	if h.desc {
		return b.Before(a)
	}
	return a.Before(b)
}
func (h *sampleHeap) Swap(i, j int) { h.c[i], h.c[j] = h.c[j], h.c[i] }
func (h *sampleHeap) Push(x any)    { h.c = append(h.c, x.(cursor)) }
func (h *sampleHeap) Pop() any {
	x := h.c[len(h.c)-1]
	h.c = h.c[:len(h.c)-1]
	return x
}
