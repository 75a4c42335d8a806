package histread

import (
	"bufio"
	"math"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/api/zjson"
	"github.com/peregrine-mon/peregrine/internal/history"
)

// rowEncoder writes history.get rows as Zabbix returns them, every field
// a JSON string, in the order itemid, clock, value, ns, then the log
// fields. Numeric rows (float and unsigned; they never carry the log
// fields) take a fast path: the text between the numbers is laid
// out once per request, the itemid text once per item (rows come item
// by item, so that is once per run of rows), and a row is appended
// straight into the bufio.Writer's free space. Formatting half a million
// rows is most of a many-item history.get's CPU, and the general path
// (a check per field, a copy through a scratch buffer) cost about twice
// as much per row (BenchmarkRowEncoder).
type rowEncoder struct {
	out   Fields
	first bool
	// nums are the output's numeric fields in order (clock, value, ns),
	// each with the text that follows its digits: the closing quote and
	// the next field's name, or the end of the row.
	nums []numField
	// head is the text of the current item up to the first numeric
	// field's digits, led by the comma that separates rows (dropped for
	// the first row); headItem is the item it was built for.
	head     []byte
	headItem uint64
	headOK   bool
	// extend: the output has every field of a numeric row (the common
	// request, "extend"), written by a straight-line path.
	extend bool
	buf    []byte // the general path's scratch row
}

// numField is one numeric field of the fast path.
type numField struct {
	kind  byte // 'c' clock, 'v' value, 'n' ns
	after string
}

// maxNumericRow bounds the bytes of one fast-path row: itemid and clock
// of 20 digits, a value of at most 24 characters, ns of 11, and the
// field names. A row is only appended when this much space is free.
const maxNumericRow = 192

func newRowEncoder(out Fields) *rowEncoder {
	e := &rowEncoder{out: out, first: true, extend: out.Has(FieldItemID | FieldClock | FieldValue | FieldNS)}
	var names []string
	for _, f := range []Fields{FieldClock, FieldValue, FieldNS} {
		if out.Has(f) {
			names = append(names, f.name())
		}
	}
	for i, f := range names {
		after := `"}`
		if i+1 < len(names) {
			after = `","` + names[i+1] + `":"`
		}
		e.nums = append(e.nums, numField{kind: f[0], after: after})
	}
	return e
}

// setItem builds the head of item's rows.
func (e *rowEncoder) setItem(item uint64) {
	h := append(e.head[:0], ',', '{')
	if e.out.Has(FieldItemID) {
		h = append(h, `"itemid":"`...)
		h = strconv.AppendUint(h, item, 10)
		h = append(h, '"')
		if len(e.nums) > 0 {
			h = append(h, ',')
		}
	}
	if len(e.nums) > 0 {
		h = append(h, '"')
		switch e.nums[0].kind {
		case 'c':
			h = append(h, "clock"...)
		case 'v':
			h = append(h, "value"...)
		default:
			h = append(h, "ns"...)
		}
		h = append(h, `":"`...)
	} else {
		h = append(h, '}')
	}
	e.head, e.headItem, e.headOK = h, item, true
}

// appendNumeric appends one float or unsigned row; bits is the value
// (math.Float64bits of a float).
func (e *rowEncoder) appendNumeric(b []byte, item uint64, clock int64, ns int32, typ history.ValueType, bits uint64) []byte {
	if !e.headOK || item != e.headItem {
		e.setItem(item)
	}
	return e.appendNumericHead(b, e.head, clock, ns, typ, bits)
}

// headOf returns a copy of item's row head (what setItem makes), for a
// writer that switches items at every row and keeps each item's head.
func (e *rowEncoder) headOf(item uint64) []byte {
	e.setItem(item)
	return append([]byte(nil), e.head...)
}

// appendNumericHead appends one float or unsigned row whose item's head
// (headOf) is given.
func (e *rowEncoder) appendNumericHead(b, head []byte, clock int64, ns int32, typ history.ValueType, bits uint64) []byte {
	if e.first {
		b = append(b, head[1:]...)
		e.first = false
	} else {
		b = append(b, head...)
	}
	if e.extend {
		// Literals as byte lists compile to stores, not memmove calls.
		b = zjson.AppendClock(b, clock)
		b = append(b, '"', ',', '"', 'v', 'a', 'l', 'u', 'e', '"', ':', '"')
		if typ == history.Float {
			b = zjson.AppendFloat(b, math.Float64frombits(bits))
		} else {
			b = strconv.AppendUint(b, bits, 10)
		}
		b = append(b, '"', ',', '"', 'n', 's', '"', ':', '"')
		b = zjson.AppendNS(b, ns)
		return append(b, '"', '}')
	}
	for i := range e.nums {
		f := &e.nums[i]
		switch f.kind {
		case 'c':
			b = zjson.AppendClock(b, clock)
		case 'v':
			if typ == history.Float {
				b = zjson.AppendFloat(b, math.Float64frombits(bits))
			} else {
				b = strconv.AppendUint(b, bits, 10)
			}
		default:
			b = zjson.AppendNS(b, ns)
		}
		b = append(b, f.after...)
	}
	return b
}

// write writes v's row to w.
func (e *rowEncoder) write(w *bufio.Writer, v *history.Sample) {
	if v.Type == history.Float || v.Type == history.Uint {
		b := w.AvailableBuffer()
		if cap(b) < maxNumericRow {
			w.Flush()
			b = w.AvailableBuffer()
		}
		bits := v.U
		if v.Type == history.Float {
			bits = math.Float64bits(v.F)
		}
		w.Write(e.appendNumeric(b, v.ItemID, v.Clock, v.NS, v.Type, bits))
		return
	}
	e.buf = e.appendRow(e.buf[:0], v)
	w.Write(e.buf)
}

// appendRow appends v's row by the general path: any value type, any
// output.
func (e *rowEncoder) appendRow(b []byte, v *history.Sample) []byte {
	if !e.first {
		b = append(b, ',')
	}
	e.first = false
	b = append(b, '{')
	n := 0
	field := func(name string) {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":"`...)
	}
	if e.out.Has(FieldItemID) {
		field("itemid")
		b = strconv.AppendUint(b, v.ItemID, 10)
		b = append(b, '"')
	}
	if e.out.Has(FieldClock) {
		field("clock")
		b = strconv.AppendInt(b, v.Clock, 10)
		b = append(b, '"')
	}
	if e.out.Has(FieldValue) {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, `"value":`...)
		switch v.Type {
		case history.Float:
			b = append(b, '"')
			b = zjson.AppendFloat(b, v.F)
			b = append(b, '"')
		case history.Uint:
			b = append(b, '"')
			b = strconv.AppendUint(b, v.U, 10)
			b = append(b, '"')
		default:
			b = zjson.AppendString(b, v.S)
		}
	}
	if e.out.Has(FieldNS) {
		field("ns")
		b = strconv.AppendInt(b, int64(v.NS), 10)
		b = append(b, '"')
	}
	if v.Type == history.Log {
		var lm history.LogMeta
		if v.Log != nil {
			lm = *v.Log
		}
		if e.out.Has(FieldTimestamp) {
			field("timestamp")
			b = strconv.AppendInt(b, lm.Timestamp, 10)
			b = append(b, '"')
		}
		if e.out.Has(FieldSource) {
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, `"source":`...)
			b = zjson.AppendString(b, lm.Source)
		}
		if e.out.Has(FieldSeverity) {
			field("severity")
			b = strconv.AppendInt(b, int64(lm.Severity), 10)
			b = append(b, '"')
		}
		if e.out.Has(FieldLogEventID) {
			field("logeventid")
			b = strconv.AppendInt(b, lm.EventID, 10)
			b = append(b, '"')
		}
	}
	return append(b, '}')
}
