package ingest

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// senderRequest is a decoded trapper request. The scanner fills it in one
// pass over the payload without allocating in the steady state: strings
// are sub-slices of the payload. A string with escapes is unescaped in
// place, over its own escaped text (unescaped text is never longer), so
// decoding needs no scratch buffer beside the payload: the payload is
// modified.
//
// Why not a general JSON library: the trapper's hot path is this one
// document shape, and the general parsers we measured (fastjson) spend
// most of their time building a tree of values we read once. The scanner
// still validates the whole document as JSON, so malformed input is
// refused exactly as a general parser would refuse it.
type senderRequest struct {
	request    []byte
	hasRequest bool
	hasData    bool // a "data" member that is an array
	rows       []senderRow
	// top and ext hold what active agents send beyond sender data (see
	// agentjson.go): top-level members, and per-row fields in a side
	// slice indexed like rows, grown only when a row has one of them, so
	// that sender data's rows stay small.
	top agentTop
	ext []rowExt
	// mem, if set, is told before rows grows and after it drops the old
	// backing array: a request of tiny rows ("[1,1,1,...]") costs 48
	// times its size in rows, which must count against the trapper's
	// memory bound. nil in tests that decode alone.
	mem zbx.Memory
}

// rowBytes is what one element of senderRequest.rows costs.
const rowBytes = int(unsafe.Sizeof(senderRow{}))

// addRow appends an empty row and returns it, growing rows through mem.
// The common case, room left, stays out of growRows.
func (req *senderRequest) addRow() (*senderRow, error) {
	if n := len(req.rows); n < cap(req.rows) {
		req.rows = req.rows[:n+1]
		req.rows[n] = senderRow{}
		return &req.rows[n], nil
	}
	return req.growRows()
}

func (req *senderRequest) growRows() (*senderRow, error) {
	c := max(2*cap(req.rows), 16)
	if req.mem != nil {
		if err := req.mem.Alloc(c * rowBytes); err != nil {
			return nil, fmt.Errorf("cannot hold %d decoded rows: %w", c, err)
		}
	}
	nr := make([]senderRow, len(req.rows), c)
	copy(nr, req.rows)
	req.dropRows()
	req.rows = nr
	return req.addRow()
}

// dropRows lets go of rows' backing array (and the payload it points
// into).
func (req *senderRequest) dropRows() {
	if req.mem != nil && cap(req.rows) > 0 {
		req.mem.Free(cap(req.rows) * rowBytes)
	}
	req.rows = nil
}

// senderRow is one data[] element. Fields absent from the row have their
// has* flag unset; a field of the wrong JSON type sets bad.
type senderRow struct {
	host, key, value []byte
	clock, ns        int64
	has              rowFields
	badClock         bool // clock or ns present but not an integer in range
	notObject        bool
}

type rowFields uint8

const (
	hasHost rowFields = 1 << iota
	hasKey
	hasValue
	hasClock
	hasNS
)

// jsonError is a syntax error with its byte offset.
type jsonError struct {
	off int
	msg string
}

func (e *jsonError) Error() string { return e.msg + " at offset " + strconv.Itoa(e.off) }

var errDepth = errors.New("JSON nested too deeply")

// maxDepth bounds nesting in skipped values; Zabbix requests are flat.
const maxDepth = 64

type scanner struct {
	b   []byte
	i   int
	req *senderRequest
}

func (s *scanner) fail(msg string) error { return &jsonError{off: s.i, msg: msg} }

func (s *scanner) ws() {
	b, i := s.b, s.i
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	s.i = i
}

// parseSenderRequest decodes payload into req (reusing its buffers).
func parseSenderRequest(payload []byte, req *senderRequest) error {
	req.request, req.hasRequest, req.hasData = nil, false, false
	req.rows = req.rows[:0]
	req.top = agentTop{}
	clear(req.ext) // drop references into the previous payload
	req.ext = req.ext[:0]
	s := scanner{b: payload, req: req}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return s.fail("expected a JSON object")
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
	} else {
		for {
			s.ws()
			name, err := s.str()
			if err != nil {
				return err
			}
			if err := s.colon(); err != nil {
				return err
			}
			switch string(name) {
			case "request":
				if s.i < len(s.b) && s.b[s.i] == '"' {
					if req.request, err = s.str(); err != nil {
						return err
					}
					req.hasRequest = true
				} else if err := s.skip(0); err != nil {
					return err
				}
			case "data":
				if s.i < len(s.b) && s.b[s.i] == '[' {
					req.hasData = true
					if err := s.rows(); err != nil {
						return err
					}
				} else if err := s.skip(0); err != nil {
					return err
				}
			default:
				if err := s.topMember(name); err != nil {
					return err
				}
			}
			done, err := s.next('}')
			if err != nil {
				return err
			}
			if done {
				break
			}
		}
	}
	s.ws()
	if s.i != len(s.b) {
		return s.fail("unexpected data after the JSON object")
	}
	return nil
}

func (s *scanner) colon() error {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return s.fail("expected ':'")
	}
	s.i++
	s.ws()
	return nil
}

// next consumes ',' (returns false) or the closing byte (returns true).
func (s *scanner) next(closing byte) (bool, error) {
	s.ws()
	if s.i >= len(s.b) {
		return false, s.fail("unexpected end of JSON")
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return false, nil
	case closing:
		s.i++
		return true, nil
	}
	return false, s.fail("expected ',' or '" + string(closing) + "'")
}

func (s *scanner) rows() error {
	s.i++ // '['
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return nil
	}
	for {
		s.ws()
		r, err := s.req.addRow()
		if err != nil {
			return err
		}
		if s.i < len(s.b) && s.b[s.i] == '{' {
			if err := s.row(r, len(s.req.rows)-1); err != nil {
				return err
			}
		} else {
			r.notObject = true
			if err := s.skip(0); err != nil {
				return err
			}
		}
		done, err := s.next(']')
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

func (s *scanner) row(r *senderRow, idx int) error {
	s.i++ // '{'
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return nil
	}
	for {
		s.ws()
		name, err := s.str()
		if err != nil {
			return err
		}
		if err := s.colon(); err != nil {
			return err
		}
		if s.i >= len(s.b) {
			return s.fail("unexpected end of JSON")
		}
		c := s.b[s.i]
		switch string(name) {
		case "host", "key":
			if c != '"' {
				if err := s.skip(0); err != nil {
					return err
				}
				break
			}
			v, err := s.str()
			if err != nil {
				return err
			}
			if name[0] == 'h' {
				r.host, r.has = v, r.has|hasHost
			} else {
				r.key, r.has = v, r.has|hasKey
			}
		case "value":
			switch {
			case c == '"':
				if r.value, err = s.str(); err != nil {
					return err
				}
				r.has |= hasValue
			case c == '-' || c >= '0' && c <= '9':
				// Scripts sometimes send numbers unquoted: take the text.
				start := s.i
				if err := s.number(); err != nil {
					return err
				}
				r.value, r.has = s.b[start:s.i], r.has|hasValue
			case c == 't' || c == 'f':
				start := s.i
				if err := s.skip(0); err != nil {
					return err
				}
				r.value, r.has = s.b[start:s.i], r.has|hasValue
			default: // null, object, array: no usable value
				if err := s.skip(0); err != nil {
					return err
				}
			}
		case "clock", "ns":
			start := s.i
			if err := s.skip(0); err != nil {
				return err
			}
			n, ok := parseJSONInt(s.b[start:s.i])
			if !ok {
				r.badClock = true
			}
			if name[0] == 'c' {
				r.clock, r.has = n, r.has|hasClock
			} else {
				r.ns, r.has = n, r.has|hasNS
			}
		default:
			if err := s.rowMember(name, idx); err != nil {
				return err
			}
		}
		done, err := s.next('}')
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// parseJSONInt accepts a plain decimal integer (what Zabbix stores in
// clock and ns) and refuses fractions, exponents and other types.
func parseJSONInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// strSpecial marks the bytes that end the fast path of string scanning.
var strSpecial = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return
}()

// str scans a JSON string at s.i and returns its unescaped bytes. The
// loop works on locals: keeping s.i in memory made it several times
// slower.
func (s *scanner) str() ([]byte, error) {
	b, i := s.b, s.i
	if i >= len(b) || b[i] != '"' {
		return nil, s.fail("expected a string")
	}
	i++
	start := i
	for i < len(b) && !strSpecial[b[i]] {
		i++
	}
	s.i = i
	if i >= len(b) {
		return nil, s.fail("unterminated string")
	}
	switch b[i] {
	case '"':
		s.i = i + 1
		return b[start:i], nil
	case '\\':
		return s.strEscaped(start)
	}
	return nil, s.fail("control character in string")
}

// strEscaped finishes a string that has escapes, unescaping it in place:
// w, the write position, starts at the first backslash and never passes
// s.i, because every escape is at least as long as what it stands for
// (\n is 2 bytes for 1, \uXXXX 6 for at most 3, a surrogate pair 12 for
// 4), so only bytes already read are overwritten.
func (s *scanner) strEscaped(start int) ([]byte, error) {
	b := s.b
	w := s.i
	for s.i < len(b) {
		c := b[s.i]
		switch {
		case c == '"':
			s.i++
			return b[start:w:w], nil
		case c < 0x20:
			return nil, s.fail("control character in string")
		case c != '\\':
			b[w] = c
			w++
			s.i++
			continue
		}
		if s.i+1 >= len(b) {
			return nil, s.fail("unterminated escape")
		}
		e := b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			b[w] = e
		case 'b':
			b[w] = '\b'
		case 'f':
			b[w] = '\f'
		case 'n':
			b[w] = '\n'
		case 'r':
			b[w] = '\r'
		case 't':
			b[w] = '\t'
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return nil, s.fail("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				// A high surrogate must be followed by \u low surrogate;
				// a lone one becomes U+FFFD, as encoding/json does.
				r2 := utf8.RuneError
				if s.i+1 < len(b) && b[s.i] == '\\' && b[s.i+1] == 'u' {
					save := s.i
					s.i += 2
					lo, ok := s.hex4()
					if !ok {
						return nil, s.fail("bad \\u escape")
					}
					if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
						r2 = d
					} else {
						s.i = save
					}
				}
				r = r2
			}
			w += utf8.EncodeRune(b[w:s.i], r)
			continue
		default:
			return nil, s.fail("bad escape")
		}
		w++
	}
	return nil, s.fail("unterminated string")
}

func (s *scanner) hex4() (rune, bool) {
	if s.i+4 > len(s.b) {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	s.i += 4
	return r, true
}

// number scans a JSON number per RFC 8259.
func (s *scanner) number() error {
	b, i := s.b, s.i
	digits := func() int {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		digits()
	default:
		s.i = i
		return s.fail("bad number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			s.i = i
			return s.fail("bad number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			s.i = i
			return s.fail("bad number")
		}
	}
	s.i = i
	return nil
}

// skip scans over any JSON value, validating it.
func (s *scanner) skip(depth int) error {
	if depth > maxDepth {
		return errDepth
	}
	if s.i >= len(s.b) {
		return s.fail("unexpected end of JSON")
	}
	switch c := s.b[s.i]; {
	case c == '"':
		// Validate without unescaping: a skipped string is not kept.
		s.i++
		for s.i < len(s.b) {
			c := s.b[s.i]
			switch {
			case c == '"':
				s.i++
				return nil
			case c < 0x20:
				return s.fail("control character in string")
			case c == '\\':
				if s.i+1 >= len(s.b) {
					return s.fail("unterminated escape")
				}
				switch s.b[s.i+1] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					s.i += 2
				case 'u':
					s.i += 2
					if _, ok := s.hex4(); !ok {
						return s.fail("bad \\u escape")
					}
				default:
					return s.fail("bad escape")
				}
			default:
				s.i++
			}
		}
		return s.fail("unterminated string")
	case c == '{':
		s.i++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == '}' {
			s.i++
			return nil
		}
		for {
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return s.fail("expected a string")
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			if err := s.colon(); err != nil {
				return err
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			done, err := s.next('}')
			if err != nil || done {
				return err
			}
		}
	case c == '[':
		s.i++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return nil
		}
		for {
			s.ws()
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			done, err := s.next(']')
			if err != nil || done {
				return err
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.fail("unexpected character")
}

func (s *scanner) literal(lit string) error {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return s.fail("bad literal")
	}
	s.i += len(lit)
	return nil
}
