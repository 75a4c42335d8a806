package histread

import (
	"bufio"
	"context"
	"sort"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/api/zjson"
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

// dsRow is one bucket of one item.
type dsRow struct {
	item uint64
	b    history.Bucket
}

// downsample reads the buckets of every item, holds them until they are
// ordered, and returns their writer. The request's type is numeric
// (checked by the caller, with the parameter error).
func (p *Plan) downsample(ctx context.Context) (func(*bufio.Writer) error, error) {
	req, n := &p.req, p.req.Downsample
	items := req.Items
	bound := min(p.r.opts.MaxRows, maxDownsampleBuckets)
	if len(items)*n > bound {
		return nil, &TooManyBucketsError{Items: len(items), PerItem: n, Max: bound}
	}
	// Most buckets of a dense series are full; sized up front (within the
	// bound above) the rows are allocated once.
	rows := make([]dsRow, 0, min(len(items)*n, 1<<16))
	for _, id := range items {
		from, till := int64(0), int64(1<<31-1)
		if req.HasFrom {
			from = req.From
		}
		if req.HasTill {
			till = req.Till
		}
		if !req.HasFrom || !req.HasTill {
			first, last, ok, err := history.DataRange(ctx, p.r.opts.Store, id, from, till)
			if err != nil {
				return nil, &ReadError{err}
			}
			if !ok {
				continue
			}
			if !req.HasFrom {
				from = first
			}
			if !req.HasTill {
				till = last
			}
		}
		bs, err := history.Downsample(ctx, p.r.opts.Store, history.DownsampleQuery{ItemID: id, From: from, Till: till, Buckets: n})
		if err != nil {
			return nil, &ReadError{err}
		}
		start := len(rows)
		for i := range bs {
			rows = append(rows, dsRow{item: id, b: bs[i]})
		}
		if req.Desc {
			r := rows[start:]
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
		}
	}
	if p.merge {
		desc := req.Desc
		sort.SliceStable(rows, func(i, j int) bool {
			a, b := &rows[i], &rows[j]
			if a.b.Clock == b.b.Clock {
				return a.item < b.item
			}
			return (a.b.Clock < b.b.Clock) != desc
		})
	}
	if req.Count {
		return func(w *bufio.Writer) error {
			w.WriteByte('"')
			w.WriteString(strconv.Itoa(len(rows)))
			w.WriteByte('"')
			return nil
		}, nil
	}
	if req.Limit > 0 && len(rows) > req.Limit {
		rows = rows[:req.Limit]
	}
	out := req.Fields
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
func appendBucketRow(b []byte, r *dsRow, out Fields, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '{')
	n := 0
	field := func(f Fields) bool {
		if !out.Has(f) {
			return false
		}
		name := f.name()
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
	if field(FieldItemID) {
		b = strconv.AppendUint(b, r.item, 10)
		b = append(b, '"')
	}
	if field(FieldClock) {
		b = strconv.AppendInt(b, bk.Clock, 10)
		b = append(b, '"')
	}
	if field(FieldValue) {
		b = zjson.AppendFloat(b, avg)
		b = append(b, '"')
	}
	if field(FieldNS) {
		b = append(b, '0', '"')
	}
	if field(FieldMin) {
		if bk.Type == history.Uint {
			b = strconv.AppendUint(b, bk.MinU, 10)
		} else {
			b = zjson.AppendFloat(b, bk.Min)
		}
		b = append(b, '"')
	}
	if field(FieldMax) {
		if bk.Type == history.Uint {
			b = strconv.AppendUint(b, bk.MaxU, 10)
		} else {
			b = zjson.AppendFloat(b, bk.Max)
		}
		b = append(b, '"')
	}
	if field(FieldAvg) {
		b = zjson.AppendFloat(b, avg)
		b = append(b, '"')
	}
	if field(FieldCount) {
		b = strconv.AppendInt(b, bk.Count, 10)
		b = append(b, '"')
	}
	return append(b, '}')
}
