package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// history.get "downsample": N — our extension (Zabbix has none). Instead
// of every value, the response has at most N rows per item, one per
// non-empty bucket of equal whole-second width over [time_from,
// time_till] (history.Grid), each with the bucket's min, max, avg and
// count; "value" is the avg so that clients that read only "value" plot
// the mean, and "clock" is the bucket start with "ns" 0. A missing
// time_from or time_till is taken from the item's first or last value in
// the range, so the buckets cover the data rather than 1970..2038. The
// store computes the buckets (history.Downsample), so the cost is one
// pass over the values with no per-value allocation and the response
// holds N rows however many values there are.
//
// Interactions: only numeric history (0 float, 3 unsigned) can be
// downsampled; sortorder orders the rows by clock; sortfield "clock" with
// several items merges them by clock (ties by itemid), otherwise rows go
// item by item in itemid order, as for raw rows; limit cuts the rows
// after ordering; countOutput counts the rows (ignoring limit, as for raw
// rows); output selects among itemid, clock, ns, value, min, max, avg,
// count ("extend" is all of them). Unsigned items have exact integer min
// and max; avg is a float for both types.

// maxDownsampleBuckets bounds items × downsample for one request: the
// rows are held until they are ordered and written (88 bytes each, so at
// most about 88 MB), unlike raw rows, which stream.
const maxDownsampleBuckets = 1_000_000

// parseDownsample reads the "downsample" parameter: absent or null means
// a raw read (n 0); otherwise an integer (or numeric string) in
// 1..history.MaxBuckets.
func parseDownsample(raw json.RawMessage) (int, error) {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return 0, nil
	}
	v, err := strconv.ParseInt(string(bytes.Trim(b, `"`)), 10, 64)
	if err != nil {
		return 0, errParams(`Invalid parameter "/downsample": an integer is expected.`)
	}
	if v < 1 || v > history.MaxBuckets {
		return 0, errParams(`Invalid parameter "/downsample": value must be one of 1-%d.`, history.MaxBuckets)
	}
	return int(v), nil
}

// dsRow is one bucket of one item.
type dsRow struct {
	item uint64
	b    history.Bucket
}

// historyDownsample serves history.get with "downsample": n. The common
// parameters were validated by historyGet.
func (s *Server) historyDownsample(ctx context.Context, p *historyParams, vt int64, n int, desc, byClock bool) (func(*bufio.Writer) error, error) {
	if vt != int64(history.Float) && vt != int64(history.Uint) {
		return nil, errParams(`Invalid parameter "/downsample": only numeric history can be downsampled ("history" 0 or 3, not %d).`, vt)
	}
	items := selectItems(s.opts.Catalog.Snapshot(), p.ItemIDs, p.HostIDs, int(vt))
	bound := min(s.opts.MaxRows, maxDownsampleBuckets)
	if len(items)*n > bound {
		return nil, errApp(`The request asks for up to %d buckets (%d items × downsample %d), more than %d; lower "downsample" or select fewer items.`, len(items)*n, len(items), n, bound)
	}
	// Most buckets of a dense series are full; sized up front (within the
	// bound above) the rows are allocated once.
	rows := make([]dsRow, 0, min(len(items)*n, 1<<16))
	for _, it := range items {
		from, till := int64(0), int64(1<<31-1)
		if p.TimeFrom.set {
			from = p.TimeFrom.v
		}
		if p.TimeTill.set {
			till = p.TimeTill.v
		}
		if !p.TimeFrom.set || !p.TimeTill.set {
			first, last, ok, err := history.DataRange(ctx, s.opts.History, it.ID, from, till)
			if err != nil {
				return nil, errApp("cannot read history: %v", err)
			}
			if !ok {
				continue
			}
			if !p.TimeFrom.set {
				from = first
			}
			if !p.TimeTill.set {
				till = last
			}
		}
		bs, err := history.Downsample(ctx, s.opts.History, history.DownsampleQuery{ItemID: it.ID, From: from, Till: till, Buckets: n})
		if err != nil {
			return nil, errApp("cannot read history: %v", err)
		}
		start := len(rows)
		for i := range bs {
			rows = append(rows, dsRow{item: it.ID, b: bs[i]})
		}
		if desc {
			r := rows[start:]
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
		}
	}
	if byClock && len(items) > 1 {
		sort.SliceStable(rows, func(i, j int) bool {
			a, b := &rows[i], &rows[j]
			if a.b.Clock == b.b.Clock {
				return a.item < b.item
			}
			return (a.b.Clock < b.b.Clock) != desc
		})
	}
	if p.CountOutput {
		return func(w *bufio.Writer) error {
			w.WriteByte('"')
			w.WriteString(strconv.Itoa(len(rows)))
			w.WriteByte('"')
			return nil
		}, nil
	}
	if p.Limit.set && int64(len(rows)) > p.Limit.v {
		rows = rows[:p.Limit.v]
	}
	out := parseOutput(p.Output, true)
	return func(w *bufio.Writer) error {
		w.WriteByte('[')
		var b []byte
		for i := range rows {
			b = appendBucketRow(b[:0], &rows[i], out, i == 0)
			w.Write(b)
		}
		w.WriteByte(']')
		return nil
	}, nil
}

// appendBucketRow encodes one bucket row, every field a JSON string as
// in raw history rows.
func appendBucketRow(b []byte, r *dsRow, out output, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '{')
	n := 0
	field := func(name string) bool {
		if !out.has(name) {
			return false
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":"`...)
		return true
	}
	bk := &r.b
	avg := bk.Avg()
	if field("itemid") {
		b = strconv.AppendUint(b, r.item, 10)
		b = append(b, '"')
	}
	if field("clock") {
		b = strconv.AppendInt(b, bk.Clock, 10)
		b = append(b, '"')
	}
	if field("value") {
		b = appendZabbixFloat(b, avg)
		b = append(b, '"')
	}
	if field("ns") {
		b = append(b, '0', '"')
	}
	if field("min") {
		if bk.Type == history.Uint {
			b = strconv.AppendUint(b, bk.MinU, 10)
		} else {
			b = appendZabbixFloat(b, bk.Min)
		}
		b = append(b, '"')
	}
	if field("max") {
		if bk.Type == history.Uint {
			b = strconv.AppendUint(b, bk.MaxU, 10)
		} else {
			b = appendZabbixFloat(b, bk.Max)
		}
		b = append(b, '"')
	}
	if field("avg") {
		b = appendZabbixFloat(b, avg)
		b = append(b, '"')
	}
	if field("count") {
		b = strconv.AppendInt(b, bk.Count, 10)
		b = append(b, '"')
	}
	return append(b, '}')
}
