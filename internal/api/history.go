package api

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/api/histread"
	"github.com/peregrine-mon/peregrine/internal/api/zjson"
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

// historyGet is history.get: the parameters checked and the items
// narrowed to the caller's, the read is histread's.
func (s *Server) historyGet(ctx context.Context, c *call) (func(*bufio.Writer) error, error) {
	var p historyGetParams
	if err := decodeValidated(c.params, &p); err != nil {
		return nil, err
	}
	if !p.ItemIDs.Given() && !p.HostIDs.Given() {
		// Neither: every item of the type, as Zabbix 6.0 reads them (the
		// rows stay bounded by api.max_rows).
		for _, h := range s.opts.Catalog.Snapshot().Hosts() {
			p.HostIDs.Value = append(p.HostIDs.Value, h.ID)
		}
		p.HostIDs.Set = len(p.HostIDs.Value) > 0
	}
	// Permissions (perm.go): only items of hosts the caller may read (with
	// "editable": may change).
	if err := s.readableIDs(ctx, c, &p.ItemIDs.Value, &p.HostIDs.Value, p.Editable.Value); err != nil {
		return nil, err
	}
	vt := p.History.Value
	match := newRowMatcher(p.rowFilter())
	if p.Editable.Value && c.user.Role < RoleAdmin {
		// "editable": only items the caller may change, and a user below
		// admin may change none (item.update needs RoleAdmin): no ids
		// select nothing.
		p.ItemIDs.Value, p.HostIDs.Value = nil, nil
	}
	n, err := parseDownsample(p.Downsample.Value)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		if match != nil {
			return nil, errParams(`Invalid parameter "/downsample": cannot be used with "filter" or "search".`)
		}
		if vt != int64(history.Float) && vt != int64(history.Uint) {
			return nil, errParams(`Invalid parameter "/downsample": only numeric history can be downsampled ("history" 0 or 3, not %d).`, vt)
		}
	}
	items := selectItems(s.opts.Catalog.Snapshot(), p.ItemIDs.Value, p.HostIDs.Value, int(vt))
	if p.ItemIDs.Given() && len(p.ItemIDs.Value) == 0 || p.HostIDs.Given() && len(p.HostIDs.Value) == 0 ||
		p.TimeTill.Given() && p.TimeTill.Value < 0 {
		items = nil // an empty list, or a time before any value, selects nothing
	}
	p.TimeFrom.Value = max(p.TimeFrom.Value, 0)
	req := histread.Request{
		Items:      make([]uint64, len(items)),
		Type:       history.ValueType(vt),
		From:       p.TimeFrom.Value,
		Till:       p.TimeTill.Value,
		HasFrom:    p.TimeFrom.Given(),
		HasTill:    p.TimeTill.Given(),
		Desc:       len(p.SortOrder.Value) > 0 && p.SortOrder.Value[0] == "DESC",
		ByClock:    slices.Contains(p.SortField.Value, "clock"),
		Count:      p.CountOutput.Value,
		Fields:     historyFields(parseOutput(p.Output.Value, true)),
		Downsample: n,
	}
	for i, it := range items {
		req.Items[i] = it.ID
	}
	if p.Limit.Given() {
		req.Limit = int(min(p.Limit.Value, math.MaxInt32))
	}
	if match != nil {
		req.Match = match.match
	}
	run, err := s.hist.Plan(req).Run(ctx)
	if err != nil {
		return nil, historyError(err)
	}
	return run, nil
}

// historyFields are the row fields of an "output".
func historyFields(out output) histread.Fields {
	if out.all {
		return histread.AllFields
	}
	var f histread.Fields
	for name := range out.fields {
		f |= histread.FieldNamed(name)
	}
	return f
}

// historyError words the read engine's errors as Zabbix API errors.
func historyError(err error) error {
	var rows *histread.TooManyRowsError
	var buckets *histread.TooManyBucketsError
	var read *histread.ReadError
	switch {
	case errors.As(err, &rows):
		return errMaxRows(rows.Max)
	case errors.As(err, &buckets):
		return errApp(`The request asks for up to %d buckets (%d items × downsample %d), more than %d; lower "downsample" or select fewer items.`,
			buckets.Items*buckets.PerItem, buckets.Items, buckets.PerItem, buckets.Max)
	case errors.As(err, &read):
		return errApp("cannot read history: %v", read.Err)
	}
	return err
}

// errMaxRows is the error for a request over api.max_rows.
func errMaxRows(maxRows int) *Error {
	return errApp("The request selects more than %d history rows (api.max_rows); set \"limit\" or narrow \"time_from\"/\"time_till\".", maxRows)
}

func (s *Server) trendGet(ctx context.Context, c *call) (func(*bufio.Writer) error, error) {
	var p trendGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	if !p.ItemIDs.Set || p.ItemIDs.Null {
		// No itemids: every numeric item's trends.
		p.ItemIDs = given(ids{})
		for _, h := range snap.Hosts() {
			for _, it := range h.Items() {
				if it.ValueType.Numeric() {
					p.ItemIDs.Value = append(p.ItemIDs.Value, it.ID)
				}
			}
		}
		if len(p.ItemIDs.Value) == 0 {
			p.noRows = true
		}
	}
	// Permissions (perm.go): only items of hosts the caller may read.
	if err := s.readableIDs(ctx, c, &p.ItemIDs.Value, nil, false); err != nil {
		return nil, err
	}
	from, till := int64(0), int64(math.MaxInt32)
	if p.TimeFrom.Given() {
		from = max(p.TimeFrom.Value, 0)
	}
	if p.TimeTill.Given() {
		till = min(p.TimeTill.Value, math.MaxInt32)
	}
	// Float items' trends first, then unsigned ones', each by item and
	// clock, as Zabbix 6.0 reads its trends and trends_uint tables.
	var items []*catalog.Item
	for _, id := range slices.Compact(slices.Sorted(slices.Values(p.ItemIDs.Value))) {
		if it := snap.Item(id); it != nil && it.ValueType.Numeric() && s.opts.Trends != nil && !p.noRows && from <= till {
			items = append(items, it)
		}
	}
	floatFirst := func(it *catalog.Item) int {
		if it.ValueType == history.Float {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(items, func(a, b *catalog.Item) int { return cmp.Compare(floatFirst(a), floatFirst(b)) })
	var rows []struct {
		item uint64
		t    Trend
	}
	limit := -1
	if p.Limit.Given() && !p.CountOutput.Value {
		limit = int(min(p.Limit.Value, math.MaxInt32))
	}
	for _, it := range items {
		if limit >= 0 && len(rows) >= limit {
			break
		}
		ts, err := s.opts.Trends.ReadTrends(ctx, it.ID, from, till)
		if err != nil {
			return nil, errApp("cannot read trends: %v", err)
		}
		for _, t := range ts {
			if limit >= 0 && len(rows) >= limit {
				break
			}
			rows = append(rows, struct {
				item uint64
				t    Trend
			}{it.ID, t})
		}
	}
	out := output{all: true}
	if p.Output.Set && !(len(p.Output.Value) == 1 && p.Output.Value[0] == "extend") {
		out = output{fields: map[string]bool{}}
		for _, f := range p.Output.Value {
			out.fields[f] = true
		}
	}
	return func(w *bufio.Writer) error {
		if p.CountOutput.Value {
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
			add("value_min", zjson.AppendFloat(nil, r.t.Min))
			add("value_avg", zjson.AppendFloat(nil, r.t.Avg))
			add("value_max", zjson.AppendFloat(nil, r.t.Max))
			if n == 0 {
				b = append(b[:0], "[]"...) // no field: PHP's empty array
			} else {
				b = append(b, '}')
			}
			w.Write(b)
		}
		w.WriteByte(']')
		return nil
	}, nil
}
