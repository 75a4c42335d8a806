package preprocess

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"time"
	"unsafe"

	"github.com/peregrine-mon/peregrine/internal/preprocess/jsonpath"
)

// Cache lets the chains of many items run on one input text and parse it
// once: the dependent items of a master value, each with a JSONPath step
// on the master's JSON document, share one parse. Reset it to the text
// and pass it in Input.Cache to every Run on that text; a step whose
// input is that very string (the same bytes, not merely equal ones: the
// test is a pointer comparison, so a cache never costs a scan) uses what
// the cache parsed, any other input is parsed as usual. The zero Cache is
// empty. Not safe for concurrent use.
type Cache struct {
	text string
	json *jsonpath.Doc
}

// Reset makes the cache serve text and forget what it held.
func (c *Cache) Reset(text string) { c.text, c.json = text, nil }

// jsonDoc returns text parsed as JSON if text is the cache's text, else
// nil.
func (c *Cache) jsonDoc(text string) *jsonpath.Doc {
	if c == nil || len(text) != len(c.text) || len(text) == 0 || unsafe.StringData(text) != unsafe.StringData(c.text) {
		return nil
	}
	if c.json == nil {
		c.json = jsonpath.Parse(text)
	}
	return c.json
}

// stateVersion is the first byte of a State's encoding.
const stateVersion = 1

// AppendBinary appends the encoding of what st remembers (the previous
// values and times of the change and discard steps) to b, for a caller
// that keeps per-item state across restarts. The encoding is versioned;
// UnmarshalBinary reads it back.
func (st *State) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, stateVersion)
	b = binary.AppendUvarint(b, uint64(len(st.steps)))
	for i := range st.steps {
		s := &st.steps[i]
		var flags byte
		if s.set {
			flags |= 1
		}
		if s.isUint {
			flags |= 2
		}
		b = append(b, flags)
		b = binary.AppendUvarint(b, s.u)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.f))
		// A discard step that kept a number saves its text, as one
		// that kept text does: the encoding does not change.
		text := s.prevText()
		b = binary.AppendUvarint(b, uint64(len(text)))
		b = append(b, text...)
		var ns int64
		if !s.time.IsZero() {
			ns = s.time.UnixNano()
		}
		b = binary.AppendVarint(b, ns)
	}
	return b, nil
}

// errState is an encoding UnmarshalBinary cannot read.
var errState = errors.New("preprocess: invalid state encoding")

// maxStateSteps bounds the steps a decoded state may claim, so that a
// damaged file cannot make UnmarshalBinary allocate without bound.
const maxStateSteps = 1024

// UnmarshalBinary replaces st with the state b encodes (see
// AppendBinary).
func (st *State) UnmarshalBinary(b []byte) error {
	if len(b) == 0 || b[0] != stateVersion {
		return errState
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > maxStateSteps {
		return errState
	}
	b = b[k:]
	steps := make([]stepState, n)
	for i := range steps {
		s := &steps[i]
		if len(b) < 1 {
			return errState
		}
		s.set, s.isUint = b[0]&1 != 0, b[0]&2 != 0
		b = b[1:]
		if s.u, k = binary.Uvarint(b); k <= 0 {
			return errState
		}
		b = b[k:]
		if len(b) < 8 {
			return errState
		}
		s.f = math.Float64frombits(binary.LittleEndian.Uint64(b))
		b = b[8:]
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return errState
		}
		s.text = strings.Clone(string(b[k : k+int(l)]))
		b = b[k+int(l):]
		ns, k := binary.Varint(b)
		if k <= 0 {
			return errState
		}
		if ns != 0 {
			s.time = time.Unix(0, ns)
		}
		b = b[k:]
	}
	if len(b) != 0 {
		return errState
	}
	st.steps = steps
	return nil
}
