package api

import (
	"bufio"
	"math"
	"strconv"

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
	out   output
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
	// extend: the output is every field (the common request), written
	// by a straight-line path.
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

func newRowEncoder(out output) *rowEncoder {
	e := &rowEncoder{out: out, first: true, extend: out.all}
	var names []string
	for _, f := range []string{"clock", "value", "ns"} {
		if out.has(f) {
			names = append(names, f)
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
	if e.out.has("itemid") {
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
	if e.first {
		b = append(b, e.head[1:]...)
		e.first = false
	} else {
		b = append(b, e.head...)
	}
	if e.extend {
		// Literals as byte lists compile to stores, not memmove calls.
		b = appendClock(b, clock)
		b = append(b, '"', ',', '"', 'v', 'a', 'l', 'u', 'e', '"', ':', '"')
		if typ == history.Float {
			b = appendZabbixFloat(b, math.Float64frombits(bits))
		} else {
			b = strconv.AppendUint(b, bits, 10)
		}
		b = append(b, '"', ',', '"', 'n', 's', '"', ':', '"')
		b = appendNS(b, ns)
		return append(b, '"', '}')
	}
	for i := range e.nums {
		f := &e.nums[i]
		switch f.kind {
		case 'c':
			b = appendClock(b, clock)
		case 'v':
			if typ == history.Float {
				b = appendZabbixFloat(b, math.Float64frombits(bits))
			} else {
				b = strconv.AppendUint(b, bits, 10)
			}
		default:
			b = appendNS(b, ns)
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
	if e.out.has("itemid") {
		field("itemid")
		b = strconv.AppendUint(b, v.ItemID, 10)
		b = append(b, '"')
	}
	if e.out.has("clock") {
		field("clock")
		b = strconv.AppendInt(b, v.Clock, 10)
		b = append(b, '"')
	}
	if e.out.has("value") {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, `"value":`...)
		switch v.Type {
		case history.Float:
			b = append(b, '"')
			b = appendZabbixFloat(b, v.F)
			b = append(b, '"')
		case history.Uint:
			b = append(b, '"')
			b = strconv.AppendUint(b, v.U, 10)
			b = append(b, '"')
		default:
			b = appendJSONString(b, v.S)
		}
	}
	if e.out.has("ns") {
		field("ns")
		b = strconv.AppendInt(b, int64(v.NS), 10)
		b = append(b, '"')
	}
	if v.Type == history.Log {
		var lm history.LogMeta
		if v.Log != nil {
			lm = *v.Log
		}
		if e.out.has("timestamp") {
			field("timestamp")
			b = strconv.AppendInt(b, lm.Timestamp, 10)
			b = append(b, '"')
		}
		if e.out.has("source") {
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, `"source":`...)
			b = appendJSONString(b, lm.Source)
		}
		if e.out.has("severity") {
			field("severity")
			b = strconv.AppendInt(b, int64(lm.Severity), 10)
			b = append(b, '"')
		}
		if e.out.has("logeventid") {
			field("logeventid")
			b = strconv.AppendInt(b, lm.EventID, 10)
			b = append(b, '"')
		}
	}
	return append(b, '}')
}

// digitPairs is "00" "01" ... "99": two digits per table lookup.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// put4 writes v < 10000 as exactly four digits.
func put4(t []byte, v uint32) {
	hi, lo := v/100*2, v%100*2
	t[0], t[1], t[2], t[3] = digitPairs[hi], digitPairs[hi+1], digitPairs[lo], digitPairs[lo+1]
}

// appendClock appends a unix time in decimal. Every clock from 2001 to
// 2286 has ten digits, written from two 32-bit halves without the
// general 64-bit loop of strconv (about half its cost per row).
func appendClock(b []byte, c int64) []byte {
	if c < 1e9 || c >= 1e10 {
		return strconv.AppendInt(b, c, 10)
	}
	hi, lo := uint32(c/100000), uint32(c%100000) // 5 digits each
	var t [10]byte
	t[0] = byte('0' + hi/10000)
	put4(t[1:5], hi%10000)
	t[5] = byte('0' + lo/10000)
	put4(t[6:10], lo%10000)
	return append(b, t[:]...)
}

// appendNS appends a nanosecond part in decimal. Nine in ten random
// nanosecond parts (as agents send them) have nine digits: written in
// two 32-bit pieces; others take strconv.
func appendNS(b []byte, ns int32) []byte {
	if ns < 1e8 || ns >= 1e9 {
		return strconv.AppendInt(b, int64(ns), 10)
	}
	v := uint32(ns)
	hi, lo := v/100000, v%100000 // 4 and 5 digits
	var t [9]byte
	put4(t[0:4], hi)
	t[4] = byte('0' + lo/10000)
	put4(t[5:9], lo%10000)
	return append(b, t[:]...)
}
