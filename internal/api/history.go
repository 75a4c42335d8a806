package api

import (
	"bufio"
	"cmp"
	"container/heap"
	"context"
	"iter"
	"math"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
)

func (s *Server) registerHistory() {
	s.methods["history.get"] = &method{role: RoleUser, stream: s.historyGet}
	s.methods["trend.get"] = &method{role: RoleUser, stream: s.trendGet}
}

// selectItems resolves itemids/hostids to catalog items of value type vt
// (when vt >= 0), in ascending id order. Unknown ids select nothing, as
// Zabbix returns nothing for objects the caller cannot see.
func selectItems(snap *catalog.Snapshot, itemIDs, hostIDs ids, vt int) []*catalog.Item {
	var out []*catalog.Item
	add := func(it *catalog.Item) {
		if it == nil || (vt >= 0 && int(it.ValueType) != vt) {
			return
		}
		out = append(out, it)
	}
	for _, id := range itemIDs {
		it := snap.Item(id)
		if it != nil && len(hostIDs) > 0 && !containsID(hostIDs, it.HostID) {
			continue
		}
		add(it)
	}
	if len(itemIDs) == 0 {
		for _, hid := range hostIDs {
			if h := snap.HostByID(hid); h != nil {
				for _, it := range h.Items() {
					add(it)
				}
			}
		}
	}
	// Sorted, then duplicates dropped: cheaper than a set for the
	// thousands of ids of a dashboard's request.
	slices.SortFunc(out, func(a, b *catalog.Item) int { return cmp.Compare(a.ID, b.ID) })
	return slices.CompactFunc(out, func(a, b *catalog.Item) bool { return a.ID == b.ID })
}

func containsID(l ids, id uint64) bool {
	for _, x := range l {
		if x == id {
			return true
		}
	}
	return false
}

func (s *Server) historyGet(ctx context.Context, c *call) (func(*bufio.Writer) error, error) {
	p, err := parseHistoryParams(c.params)
	if err != nil {
		return nil, err
	}
	// Permissions (perm.go): only items of hosts the caller may read (with
	// "editable": may change).
	if err := s.readableIDs(ctx, c, &p.ItemIDs, &p.HostIDs, p.Editable); err != nil {
		return nil, err
	}
	vt := p.History
	desc := len(p.SortOrder) > 0 && p.SortOrder[0] == "DESC"
	byClock := slices.Contains(p.SortField, "clock")
	match := newRowMatcher(p)
	if p.Editable && c.user.Role < RoleAdmin {
		// "editable": only items the caller may change, and a user below
		// admin may change none (item.update needs RoleAdmin): no ids
		// select nothing.
		p.ItemIDs, p.HostIDs = nil, nil
	}
	if n, err := parseDownsample(p.Downsample); err != nil || n > 0 {
		if err != nil {
			return nil, err
		}
		if match != nil {
			return nil, errParams(`Invalid parameter "/downsample": cannot be used with "filter" or "search".`)
		}
		return s.historyDownsample(ctx, p, vt, n, desc, byClock)
	}
	from, till := int64(0), int64(math.MaxInt32)
	if p.TimeFrom.set {
		from = p.TimeFrom.v
	}
	if p.TimeTill.set {
		till = p.TimeTill.v
	}
	items := selectItems(s.opts.Catalog.Snapshot(), p.ItemIDs, p.HostIDs, int(vt))
	out := parseOutput(p.Output, true)
	limit := 0
	if p.Limit.set {
		limit = int(min(p.Limit.v, math.MaxInt32))
	}
	storeLimit := limit
	if match != nil {
		storeLimit = 0 // rows the filter drops do not count
	}
	q := func(id uint64) history.Query {
		return history.Query{ItemID: id, From: from, Till: till, Desc: desc, Limit: storeLimit}
	}
	// One batched read for all items (history.ReadMany): a dashboard's
	// thousands of items over a minute cost the store one view, not one
	// per item.
	ids := make([]uint64, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	// count counts the request's rows, stopping once past MaxRows unless
	// countOutput wants the number.
	count := func() (int, error) {
		if match != nil {
			// filter/search: only matching rows count, so the values are
			// read (one batched read) rather than counted from the index.
			n := 0
			err := history.ReadMany(ctx, s.opts.History, ids, q(0), func(v *history.Sample) bool {
				if !match.match(v) {
					return true
				}
				n++
				return p.CountOutput || n <= s.opts.MaxRows
			})
			return n, err
		}
		bound := s.opts.MaxRows // counting may stop once past it
		if p.CountOutput {
			bound = 0
		}
		return history.CountMany(ctx, s.opts.History, ids, q(0), bound)
	}
	if p.CountOutput {
		n, err := count()
		if err != nil {
			return nil, errApp("cannot read history: %v", err)
		}
		return func(w *bufio.Writer) error {
			w.WriteByte('"')
			w.WriteString(strconv.Itoa(n))
			w.WriteByte('"')
			return nil
		}, nil
	}
	enc := newRowEncoder(out)
	// Without a limit (or with one above the bound) a request for more
	// than MaxRows must get a clear error instead of a response cut off
	// half way: numeric rows are buffered until the count is known
	// (history_prefetch.go), other rows are counted first.
	if limit == 0 || limit > s.opts.MaxRows {
		if typ := history.ValueType(vt); typ == history.Float || typ == history.Uint {
			run, err := s.historyPrefetched(ctx, ids, q(0), typ, match, limit, enc, count, byClock && len(items) > 1, desc)
			if err != errNoRoom {
				return run, err
			}
			// A merge by clock that did not fit its buffer: counted and
			// merged from the store as below.
		}
		n, err := count()
		if err != nil {
			return nil, errApp("cannot read history: %v", err)
		}
		if n > s.opts.MaxRows {
			return nil, errMaxRows(s.opts.MaxRows)
		}
	}
	return func(w *bufio.Writer) error {
		w.WriteByte('[')
		sent := 0
		emit := func(v *history.Sample) bool {
			if match != nil && !match.match(v) {
				return true
			}
			enc.write(w, v)
			sent++
			return limit == 0 || sent < limit
		}
		if byClock && len(items) > 1 {
			if err := mergeByClock(ctx, s.opts.History, items, q, desc, emit); err != nil {
				return err
			}
		} else if err := history.ReadMany(ctx, s.opts.History, ids, q(0), emit); err != nil {
			return err
		}
		w.WriteByte(']')
		return nil
	}, nil
}

// errMaxRows is the error for a request over api.max_rows.
func errMaxRows(maxRows int) *Error {
	return errApp("The request selects more than %d history rows (api.max_rows); set \"limit\" or narrow \"time_from\"/\"time_till\".", maxRows)
}

// mergeByClock merges the items' histories by time with a heap of pull
// iterators: memory is one pending sample per item.
func mergeByClock(ctx context.Context, r history.Reader, items []*catalog.Item, q func(uint64) history.Query, desc bool, emit func(*history.Sample) bool) error {
	h := &sampleHeap{desc: desc}
	var stops []func()
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	var readErr error
	for _, it := range items {
		seq := iter.Seq[history.Sample](func(yield func(history.Sample) bool) {
			if err := r.Read(ctx, q(it.ID), func(v *history.Sample) bool { return yield(*v) }); err != nil && readErr == nil {
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

// appendZabbixFloat formats a float as the shortest decimal that reads
// back exactly, without an exponent for ordinary magnitudes (the Zabbix
// database returns plain decimals). Values with a few decimals take a
// faster path with the same output (zbxfloat.go).
func appendZabbixFloat(b []byte, f float64) []byte {
	if out, ok := appendDecimalFloat(b, f); ok {
		return out
	}
	if a := math.Abs(f); a != 0 && (a >= 1e15 || a < 1e-6) {
		return strconv.AppendFloat(b, f, 'g', -1, 64)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

func (s *Server) trendGet(ctx context.Context, c *call) (func(*bufio.Writer) error, error) {
	p, err := parseTrendParams(c.params)
	if err != nil {
		return nil, err
	}
	// Permissions (perm.go): only items of hosts the caller may read.
	if err := s.readableIDs(ctx, c, &p.ItemIDs, nil, false); err != nil {
		return nil, err
	}
	from, till := int64(0), int64(math.MaxInt32)
	if p.TimeFrom.set {
		from = p.TimeFrom.v
	}
	if p.TimeTill.set {
		till = p.TimeTill.v
	}
	snap := s.opts.Catalog.Snapshot()
	var rows []struct {
		item uint64
		t    Trend
	}
	for _, id := range p.ItemIDs {
		it := snap.Item(id)
		if it == nil || !it.ValueType.Numeric() || s.opts.Trends == nil {
			continue // trends exist only for numeric items
		}
		ts, err := s.opts.Trends.ReadTrends(ctx, id, from, till)
		if err != nil {
			return nil, errApp("cannot read trends: %v", err)
		}
		for _, t := range ts {
			rows = append(rows, struct {
				item uint64
				t    Trend
			}{id, t})
			if p.Limit.set && int64(len(rows)) >= p.Limit.v {
				break
			}
		}
	}
	if p.Limit.set && int64(len(rows)) > p.Limit.v {
		rows = rows[:p.Limit.v]
	}
	out := parseOutput(p.Output, true)
	return func(w *bufio.Writer) error {
		if p.CountOutput {
			w.WriteString(`"` + strconv.Itoa(len(rows)) + `"`)
			return nil
		}
		w.WriteByte('[')
		for i, r := range rows {
			if i > 0 {
				w.WriteByte(',')
			}
			var b []byte
			b = append(b, '{')
			n := 0
			add := func(name string, val []byte) {
				if !out.has(name) {
					return
				}
				if n > 0 {
					b = append(b, ',')
				}
				n++
				b = append(b, '"')
				b = append(b, name...)
				b = append(b, `":"`...)
				b = append(b, val...)
				b = append(b, '"')
			}
			add("itemid", strconv.AppendUint(nil, r.item, 10))
			add("clock", strconv.AppendInt(nil, r.t.Clock, 10))
			add("num", strconv.AppendInt(nil, r.t.Num, 10))
			add("value_min", appendZabbixFloat(nil, r.t.Min))
			add("value_avg", appendZabbixFloat(nil, r.t.Avg))
			add("value_max", appendZabbixFloat(nil, r.t.Max))
			b = append(b, '}')
			w.Write(b)
		}
		w.WriteByte(']')
		return nil
	}, nil
}
