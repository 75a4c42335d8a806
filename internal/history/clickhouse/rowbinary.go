package clickhouse

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// RowBinary is ClickHouse's row format without names or types: each
// value in column order, fixed-width numbers little-endian, DateTime as
// UInt32 seconds, String as a LEB128 length and the bytes. It is the
// cheapest format both ends can produce, and the same on 18.16 and on
// current releases. The encoder is a few appends; the decoder reads from
// a bufio.Reader over the HTTP body, so a large result is streamed.

func appendU64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }
func appendU32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func appendF64(b []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}
func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// rowReader decodes RowBinary values. The first error sticks: callers
// read a whole row and check err once.
type rowReader struct {
	r   *bufio.Reader
	buf [8]byte
	err error
	// str is reused for String values that the caller copies anyway
	str []byte
}

func newRowReader(r io.Reader) *rowReader {
	return &rowReader{r: bufio.NewReaderSize(r, 256<<10)}
}

// more reports whether another row follows; false at a clean end of
// stream (or after an error).
func (d *rowReader) more() bool {
	if d.err != nil {
		return false
	}
	_, err := d.r.Peek(1)
	if err == io.EOF {
		return false
	}
	if err != nil {
		d.err = err
		return false
	}
	return true
}

func (d *rowReader) fixed(n int) []byte {
	if d.err != nil {
		return d.buf[:n]
	}
	if _, err := io.ReadFull(d.r, d.buf[:n]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		d.err = fmt.Errorf("clickhouse: reading RowBinary result: %w", err)
	}
	return d.buf[:n]
}

func (d *rowReader) u64() uint64 { return binary.LittleEndian.Uint64(d.fixed(8)) }
func (d *rowReader) u32() uint32 { return binary.LittleEndian.Uint32(d.fixed(4)) }
func (d *rowReader) u8() uint8   { return d.fixed(1)[0] }
func (d *rowReader) f64() float64 {
	return math.Float64frombits(d.u64())
}

// maxString bounds one String value of a result: history text is at
// most 64 KiB, so anything far larger is a broken stream, not data.
const maxString = 16 << 20

func (d *rowReader) string() string {
	if d.err != nil {
		return ""
	}
	n, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.err = fmt.Errorf("clickhouse: reading RowBinary string length: %w", err)
		return ""
	}
	if n > maxString {
		d.err = fmt.Errorf("clickhouse: RowBinary string of %d bytes; the stream is not what the query asked for", n)
		return ""
	}
	if n == 0 {
		return ""
	}
	if cap(d.str) < int(n) {
		d.str = make([]byte, n)
	}
	b := d.str[:n]
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.err = fmt.Errorf("clickhouse: reading RowBinary string: %w", err)
		return ""
	}
	return string(b)
}
