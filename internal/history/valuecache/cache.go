package valuecache

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Defaults applied by New.
const (
	DefaultMaxBytes  = 256 << 20
	DefaultMaxPeriod = time.Hour
	DefaultMaxCount  = 1000
	DefaultIdleDrop  = 24 * time.Hour
)

// Options configures New.
type Options struct {
	// Store is where misses and bypassed reads go. Required.
	Store history.Reader
	// MaxBytes bounds the cache's memory (values and per-item cost);
	// default DefaultMaxBytes.
	MaxBytes int64
	// MaxPeriod and MaxCount are the longest window and the largest
	// count a read may ask for and still be cached; longer ones go to
	// the store. Defaults DefaultMaxPeriod, DefaultMaxCount.
	MaxPeriod time.Duration
	MaxCount  int
	// IdleDrop is how long an item may go unread before Run drops it;
	// default DefaultIdleDrop.
	IdleDrop time.Duration
	// Now is the clock of last-read times (tests); default time.Now.
	Now     func() time.Time
	Metrics *selfmon.Registry
	Logger  *slog.Logger
}

// shards spreads items over mutexes; a power of two.
const shards = 64

// sampleBytes is what one cached value costs besides its string;
// entryBytes what an item costs besides its values (the entry, its map
// slot and slice headers, roughly).
const (
	sampleBytes = int64(unsafe.Sizeof(history.Sample{}))
	entryBytes  = 160
)

// maxTill is the Till of loads: every value, including any stamped after
// the read's own Till. It stays below the nanosecond overflow of int64.
const maxTill = int64(1) << 33

// Cache is the value cache; see the package documentation.
type Cache struct {
	opts   Options
	shards [shards]shard
	bytes  atomic.Int64
	items  atomic.Int64

	evictMu sync.Mutex // one eviction at a time; others skip it

	hits, misses, bypass, evicted, dropped *selfmon.Counter
}

type shard struct {
	mu    sync.Mutex
	items map[uint64]*entry
	_     [40]byte // keeps neighbouring shards' mutexes off one cache line
}

// entry is one item's cached values.
type entry struct {
	// vals holds every value of the item with a timestamp (ns) after
	// from, ascending; from is math.MinInt64 when it holds all of them.
	vals []history.Sample
	from int64
	// period (seconds) and count are the longest window and largest
	// count a read asked for: what trimming keeps.
	period int64
	count  int
	access int64 // unix seconds of the last read
	bytes  int64 // accounted in Cache.bytes
	// asOf is the end (ns) of the last read that ended before the
	// newest value, 0 after one that did not: evaluation is behind the
	// values (a backfill), and the next evaluations read as of later
	// times from there on. Trimming keeps what such a read needs, so
	// they hit; without it every one missed, and each miss loaded every
	// value newer than its time, quadratic in the backlog.
	asOf int64
	// loading is set while a miss reads the store; Add keeps the
	// values committed meanwhile in pending.
	loading bool
	pending []history.Sample
}

func ts(s *history.Sample) int64 { return s.Clock*1e9 + int64(s.NS) }

// New returns an empty cache.
func New(opts Options) (*Cache, error) {
	if opts.Store == nil {
		return nil, errors.New("valuecache: Options.Store is required")
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxPeriod <= 0 {
		opts.MaxPeriod = DefaultMaxPeriod
	}
	if opts.MaxCount <= 0 {
		opts.MaxCount = DefaultMaxCount
	}
	if opts.IdleDrop <= 0 {
		opts.IdleDrop = DefaultIdleDrop
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	reg := opts.Metrics
	if reg == nil {
		reg = selfmon.NewRegistry()
	}
	c := &Cache{opts: opts,
		hits:    reg.Counter("peregrine_value_cache_hits_total", "Reads of trigger functions and calculated items answered from the value cache."),
		misses:  reg.Counter("peregrine_value_cache_misses_total", "Reads the value cache could not answer: the item's values were loaded from the history store."),
		bypass:  reg.Counter("peregrine_value_cache_bypass_total", "Reads longer than the value cache keeps (value_cache_max_period, 1000 values), sent to the history store."),
		evicted: reg.Counter("peregrine_value_cache_evictions_total", "Items evicted from the value cache because it was full (least recently read first)."),
		dropped: reg.Counter("peregrine_value_cache_idle_drops_total", "Items dropped from the value cache because no read asked for them for a day."),
	}
	reg.GaugeFunc("peregrine_value_cache_bytes", "Memory the value cache accounts for (values and per-item cost).", func() float64 { return float64(c.bytes.Load()) })
	reg.GaugeFunc("peregrine_value_cache_max_bytes", "The value cache's memory bound (triggers.value_cache_size).", func() float64 { return float64(opts.MaxBytes) })
	reg.GaugeFunc("peregrine_value_cache_items", "Items in the value cache.", func() float64 { return float64(c.items.Load()) })
	for i := range c.shards {
		c.shards[i].items = map[uint64]*entry{}
	}
	return c, nil
}

func (c *Cache) shard(item uint64) *shard { return &c.shards[item%shards] }

// Stats are the cache's figures (tests and benchmarks).
type Stats struct {
	Hits, Misses, Bypass, Evictions uint64
	Bytes, Items                    int64
}

// Stats returns the current figures.
func (c *Cache) Stats() Stats {
	return Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), Bypass: c.bypass.Load(), Evictions: c.evicted.Load(),
		Bytes: c.bytes.Load(), Items: c.items.Load()}
}

// Add is the pipeline's commit hook: it appends committed values of the
// cached items (others cost one map lookup). It must run after the
// store holds the values.
func (c *Cache) Add(_ int, samples []history.Sample) {
	var grew int64
	for i := range samples {
		s := &samples[i]
		sh := c.shard(s.ItemID)
		sh.mu.Lock()
		e := sh.items[s.ItemID]
		if e == nil {
			sh.mu.Unlock()
			continue
		}
		if e.loading {
			e.pending = append(e.pending, *s)
			sh.mu.Unlock()
			continue
		}
		before := e.bytes
		e.insert(s)
		e.trim()
		grew += e.bytes - before
		sh.mu.Unlock()
	}
	if grew != 0 && c.bytes.Add(grew) > c.opts.MaxBytes {
		c.evict()
	}
}

// insert puts s in place; e.bytes follows. Values at or before from are
// not kept: the store has them and the entry does not claim them.
func (e *entry) insert(s *history.Sample) {
	t := ts(s)
	if t <= e.from {
		return
	}
	n := len(e.vals)
	if n == 0 || ts(&e.vals[n-1]) < t {
		e.vals = append(e.vals, *s)
		e.bytes += sampleBytes + int64(len(s.S))
		return
	}
	i := sort.Search(n, func(i int) bool { return ts(&e.vals[i]) >= t })
	if i < n && ts(&e.vals[i]) == t {
		// The store keeps the later write of a timestamp.
		e.bytes += int64(len(s.S)) - int64(len(e.vals[i].S))
		e.vals[i] = *s
		return
	}
	e.vals = slices.Insert(e.vals, i, *s)
	e.bytes += sampleBytes + int64(len(s.S))
}

// trimSpare is how many values beyond the largest count asked trimming
// keeps: an evaluation runs at the time of the value that queued it, and
// when newer values arrived before it ran, last() must still find the
// older one in the cache rather than read the store (which, when
// evaluation lags, would make it lag more).
const trimSpare = 3

// maxBehind bounds the values newer than a count read's end that a miss
// loads: a read further behind (a shifted window, "#1:now-1d", over a busy
// item) goes to the store rather than fill the entry.
const maxBehind = 1 << 14

// noteRead records where a read of w ends relative to the newest value
// (entry.asOf). The shard's mutex is held.
func (e *entry) noteRead(w want) {
	n := len(e.vals)
	if till := (w.till+1)*1e9 - 1; n > 0 && till < ts(&e.vals[n-1]) {
		e.asOf = till
	} else {
		e.asOf = 0
	}
}

// trim drops values older than the entry's window before its newest
// value, keeping at least count+trimSpare of them, and, while reads are
// behind the newest value (asOf), the window and count before asOf too,
// once a quarter of the values can go (so that trimming costs O(1) a
// value).
func (e *entry) trim() {
	n := len(e.vals)
	if n < 8 || n <= e.count+trimSpare {
		return
	}
	// One second of slack: windows end at the evaluation time, which
	// may be a little after the newest value.
	end := ts(&e.vals[n-1])
	if e.asOf > 0 {
		end = min(end, e.asOf)
	}
	keepFrom := end - (e.period+1)*1e9
	k := sort.Search(n, func(i int) bool { return ts(&e.vals[i]) >= keepFrom })
	last := n
	if e.asOf > 0 {
		last = sort.Search(n, func(i int) bool { return ts(&e.vals[i]) > e.asOf })
	}
	k = min(k, last-e.count-trimSpare)
	if k < n/4 {
		return
	}
	for i := range k {
		e.bytes -= sampleBytes + int64(len(e.vals[i].S))
	}
	e.from = ts(&e.vals[k-1])
	e.vals = slices.Delete(e.vals, 0, k)
	if cap(e.vals) > 4*len(e.vals)+16 {
		e.vals = slices.Clip(slices.Clone(e.vals))
	}
}

// want is what a read needs of an item: values from From (seconds;
// -1 for none) and count values at or before till.
type want struct {
	from  int64
	count int
	till  int64
}

// shape classifies q: the cacheable shapes are the two StoreSource
// sends, newest first with a count (From 0) or with a start (no limit).
func (c *Cache) shape(q history.Query) (want, bool) {
	if !q.Desc || q.Till <= 0 || q.Till >= maxTill {
		return want{}, false
	}
	switch {
	case q.Limit > 0 && q.From <= 0:
		return want{from: -1, count: q.Limit, till: q.Till}, q.Limit <= c.opts.MaxCount
	case q.Limit <= 0 && q.From > 0 && q.From <= q.Till:
		return want{from: q.From, till: q.Till}, time.Duration(q.Till-q.From)*time.Second <= c.opts.MaxPeriod
	}
	return want{}, false
}

// covers reports whether e holds every value w selects.
func (e *entry) covers(w want) bool {
	if e.from == math.MinInt64 {
		return true
	}
	if w.from >= 0 {
		return e.from < w.from*1e9
	}
	// The values at or before till are a prefix of the ascending vals,
	// so there are count of them when the count-th oldest is: no walk
	// back over the newer ones (a lagging evaluation reads as of a time
	// with many values after it).
	tillNs := (w.till+1)*1e9 - 1
	return w.count > 0 && len(e.vals) >= w.count && ts(&e.vals[w.count-1]) <= tillNs
}

// selectInto appends the values q selects from vals (ascending), newest
// first, to dst, growing it once to the exact size.
func selectInto(dst, vals []history.Sample, q history.Query) []history.Sample {
	tillNs := (q.Till+1)*1e9 - 1
	fromNs := int64(math.MinInt64)
	if q.From > 0 {
		fromNs = q.From * 1e9
	}
	// Most reads are as of the newest value (an evaluation in time order
	// reads at the value that caused it) and bounded by count only: both
	// ends are then found without a binary search, whose probes each miss
	// the CPU cache on a long entry.
	hi := len(vals)
	if hi > 0 && ts(&vals[hi-1]) > tillNs {
		hi = sort.Search(hi, func(i int) bool { return ts(&vals[i]) > tillNs })
	}
	lo := 0
	if fromNs != math.MinInt64 {
		lo = sort.Search(hi, func(i int) bool { return ts(&vals[i]) >= fromNs })
	}
	if q.Limit > 0 {
		lo = max(lo, hi-q.Limit)
	}
	dst = slices.Grow(dst, hi-lo)
	for i := hi - 1; i >= lo; i-- {
		dst = append(dst, vals[i])
	}
	return dst
}

var bufPool = sync.Pool{New: func() any { return new([]history.Sample) }}

// AppendRead appends the values Read would pass to fn to dst and
// returns it: on a hit the selected values are copied once, into a
// slice grown once (exprsource.StoreSource uses it when its store has
// it).
func (c *Cache) AppendRead(ctx context.Context, q history.Query, dst []history.Sample) ([]history.Sample, error) {
	if w, ok := c.shape(q); ok {
		sh := c.shard(q.ItemID)
		sh.mu.Lock()
		if e := sh.items[q.ItemID]; e != nil && !e.loading && e.covers(w) {
			e.access = c.opts.Now().Unix()
			e.noteRead(w)
			if w.from >= 0 {
				e.period = max(e.period, q.Till-q.From)
			} else {
				e.count = max(e.count, w.count)
			}
			dst = selectInto(dst, e.vals, q)
			sh.mu.Unlock()
			c.hits.Inc()
			return dst, nil
		}
		sh.mu.Unlock()
	}
	return c.readAppend(ctx, q, dst)
}

// readAppend is AppendRead's miss: Read into dst. It is a function of its
// own because the callback captures the slice: in AppendRead that would
// move dst to the heap on every call, hits included.
func (c *Cache) readAppend(ctx context.Context, q history.Query, dst []history.Sample) ([]history.Sample, error) {
	err := c.Read(ctx, q, func(s *history.Sample) bool { dst = append(dst, *s); return true })
	return dst, err
}

// Read implements history.Reader: from the cache when the item's entry
// covers q, else from the store (loading the entry for cacheable reads).
func (c *Cache) Read(ctx context.Context, q history.Query, fn func(*history.Sample) bool) error {
	w, ok := c.shape(q)
	if !ok {
		c.bypass.Inc()
		return c.opts.Store.Read(ctx, q, fn)
	}
	now := c.opts.Now().Unix()
	sh := c.shard(q.ItemID)
	sh.mu.Lock()
	e := sh.items[q.ItemID]
	if e != nil {
		e.access = now
		if w.from >= 0 {
			e.period = max(e.period, q.Till-q.From)
		} else {
			e.count = max(e.count, w.count)
		}
		if !e.loading && e.covers(w) {
			e.noteRead(w)
			bp := bufPool.Get().(*[]history.Sample)
			buf := selectInto((*bp)[:0], e.vals, q)
			sh.mu.Unlock()
			c.hits.Inc()
			for i := range buf {
				if !fn(&buf[i]) {
					break
				}
			}
			clear(buf) // drop string references before pooling
			*bp = buf[:0]
			bufPool.Put(bp)
			return nil
		}
	}
	c.misses.Inc()
	if e != nil && e.loading {
		// Another read is loading the item: read the store rather
		// than wait for it.
		sh.mu.Unlock()
		return c.opts.Store.Read(ctx, q, fn)
	}
	if e == nil {
		e = &entry{access: now, bytes: entryBytes}
		if w.from >= 0 {
			e.period = q.Till - q.From
		} else {
			e.count = w.count
		}
		sh.items[q.ItemID] = e
		c.items.Add(1)
		c.bytes.Add(entryBytes)
	}
	e.loading = true
	// What the load must cover: this read and what the entry is kept for.
	lw := w
	if e.period > 0 {
		lw.from = max(0, q.Till-e.period)
		if w.from >= 0 {
			lw.from = min(lw.from, w.from)
		}
	}
	lw.count = max(lw.count, e.count)
	sh.mu.Unlock()

	vals, from, err := c.load(ctx, q.ItemID, lw)

	sh.mu.Lock()
	if sh.items[q.ItemID] != e {
		// Evicted or dropped while loading: serve the read, keep nothing.
		sh.mu.Unlock()
		if err != nil {
			return err
		}
		return serve(vals, q, fn)
	}
	e.loading = false
	pending := e.pending
	e.pending = nil
	if err != nil {
		// Nothing is trusted: the item leaves the cache.
		delete(sh.items, q.ItemID)
		sh.mu.Unlock()
		c.items.Add(-1)
		c.bytes.Add(-e.bytes)
		return err
	}
	before := e.bytes
	e.vals, e.from = vals, from
	e.bytes = entryBytes
	for i := range vals {
		e.bytes += sampleBytes + int64(len(vals[i].S))
	}
	for i := range pending {
		e.insert(&pending[i])
	}
	var buf []history.Sample
	covered := e.covers(w)
	if covered {
		buf = selectInto(nil, e.vals, q)
	}
	if covered {
		e.noteRead(w)
	} else {
		e.asOf = 0
	}
	e.trim()
	grew := e.bytes - before
	sh.mu.Unlock()
	if c.bytes.Add(grew) > c.opts.MaxBytes {
		c.evict()
	}
	if !covered {
		// Values kept arriving faster than the load could count them
		// (or the store changed under it): ask the store itself.
		return c.opts.Store.Read(ctx, q, fn)
	}
	for i := range buf {
		if !fn(&buf[i]) {
			break
		}
	}
	return nil
}

// serve calls fn with the values q selects from vals (ascending).
func serve(vals []history.Sample, q history.Query, fn func(*history.Sample) bool) error {
	buf := selectInto(nil, vals, q)
	for i := range buf {
		if !fn(&buf[i]) {
			break
		}
	}
	return nil
}

// load reads what w needs of item from the store, newest first from
// the newest value: every value from w.from on, and values until count
// of them are at or before w.till. It returns them ascending with the
// entry's boundary.
func (c *Cache) load(ctx context.Context, item uint64, w want) ([]history.Sample, int64, error) {
	var desc []history.Sample
	collect := func(s *history.Sample) bool {
		desc = append(desc, *s)
		return true
	}
	tillNs := (w.till+1)*1e9 - 1
	enough := func() bool {
		n := 0
		for i := range desc {
			if ts(&desc[i]) <= tillNs {
				if n++; n >= w.count {
					return true
				}
			}
		}
		return n >= w.count
	}
	from := int64(math.MinInt64)
	if w.from >= 0 {
		if err := c.opts.Store.Read(ctx, history.Query{ItemID: item, From: w.from, Till: maxTill, Desc: true}, collect); err != nil {
			return nil, 0, err
		}
		from = w.from*1e9 - 1
	}
	if !enough() {
		// Count: every value newer than till, then count values at or
		// before it (a read as of a time behind the newest value, as an
		// evaluation that lags is, needs them all in the entry), at most
		// maxBehind newer: past that the read goes to the store.
		// Reads with a growing limit: most misses are of reads at the
		// newest value, and a limited read costs the store what it
		// returns.
		full := false
		for limit := w.count + 2*trimSpare; ; limit *= 4 {
			desc = desc[:0]
			n := 0
			err := c.opts.Store.Read(ctx, history.Query{ItemID: item, Till: maxTill, Desc: true, Limit: limit}, func(s *history.Sample) bool {
				desc = append(desc, *s)
				if ts(s) <= tillNs {
					n++
				}
				full = n >= w.count || len(desc)-n >= maxBehind
				return !full
			})
			if err != nil {
				return nil, 0, err
			}
			if full || len(desc) < limit {
				break // enough, or every value of the item read
			}
		}
		from = math.MinInt64
		if full {
			from = ts(&desc[len(desc)-1]) - 1
		}
	}
	slices.Reverse(desc)
	return desc, from, nil
}

// evict removes the items read least recently until the cache is under
// 90 % of MaxBytes. One eviction runs at a time; a caller finding one
// running leaves the work to it.
func (c *Cache) evict() {
	if !c.evictMu.TryLock() {
		return
	}
	defer c.evictMu.Unlock()
	type cand struct {
		item   uint64
		access int64
	}
	var all []cand
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		for id, e := range sh.items {
			if !e.loading {
				all = append(all, cand{id, e.access})
			}
		}
		sh.mu.Unlock()
	}
	slices.SortFunc(all, func(a, b cand) int {
		if a.access != b.access {
			return int(a.access - b.access)
		}
		return int(int64(a.item%1024) - int64(b.item%1024))
	})
	target := c.opts.MaxBytes / 10 * 9
	n := 0
	for _, k := range all {
		if c.bytes.Load() <= target {
			break
		}
		if c.remove(k.item, func(e *entry) bool { return e.access == k.access }) {
			n++
		}
	}
	c.evicted.Add(uint64(n))
	if n > 0 {
		c.opts.Logger.Debug("value cache full: evicted the items read least recently", "items", n, "bytes", c.bytes.Load(), "max_bytes", c.opts.MaxBytes)
	}
}

// remove deletes item's entry if it is not loading and ok accepts it.
func (c *Cache) remove(item uint64, ok func(*entry) bool) bool {
	sh := c.shard(item)
	sh.mu.Lock()
	e := sh.items[item]
	if e == nil || e.loading || !ok(e) {
		sh.mu.Unlock()
		return false
	}
	delete(sh.items, item)
	sh.mu.Unlock()
	c.items.Add(-1)
	c.bytes.Add(-e.bytes)
	return true
}

// DropIdle removes the items not read since IdleDrop before now and
// returns how many.
func (c *Cache) DropIdle() int {
	limit := c.opts.Now().Add(-c.opts.IdleDrop).Unix()
	n := 0
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		for id, e := range sh.items {
			if !e.loading && e.access < limit {
				delete(sh.items, id)
				c.items.Add(-1)
				c.bytes.Add(-e.bytes)
				n++
			}
		}
		sh.mu.Unlock()
	}
	c.dropped.Add(uint64(n))
	return n
}

// Run drops idle items every ten minutes until ctx ends.
func (c *Cache) Run(ctx context.Context) {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n := c.DropIdle(); n > 0 {
				c.opts.Logger.Info("value cache: dropped items not read for a while", "items", n, "idle_drop", c.opts.IdleDrop)
			}
		}
	}
}
