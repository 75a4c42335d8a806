package odbc

import (
	"fmt"
	"unicode/utf8"
)

// shaper turns a query's result set into the item's value, as Zabbix 6.0
// shapes it (recorded from 6.0.14):
//
//   - db.odbc.select: the first column of the first row, as text
//     ("SQL query returned empty result." without a row, "SQL query
//     returned NULL value." for a NULL);
//   - db.odbc.get: a JSON array of one object per row, the column labels
//     as names, every value a string (NULL a null);
//   - db.odbc.discovery: the same with each label made an LLD macro:
//     letters upper-cased, then only A-Z, 0-9, '_' and '.' allowed
//     ("Cannot convert column #2 name to macro."), no two alike
//     ("Duplicate macro name: {#A}.").
//
// Values are the driver's text of each column (SQL_C_WCHAR, so 1 for
// true, 1.50 for a numeric, the timestamp as the database writes it),
// trailing spaces removed. JSON strings are escaped as Zabbix escapes
// them: '"' and '\' and control characters, nothing else ('/', '<' and
// non-ASCII as they are).
//
// The value is bounded: limit bytes in all; the driver asks budget()
// before it reads a column and stops reading one that would not fit.
// A shaper is used by one check on one goroutine.
type shaper struct {
	kind  keyKind
	limit int
	// names are the JSON-encoded member names, with their quotes and
	// colon (get, discovery).
	names [][]byte
	out   []byte
	col   int
	rows  int
	got   bool // select: the first row was read
	null  bool // select: its first column is NULL
	// noResult: the statement returned no result set (DDL, UPDATE).
	noResult bool
}

// errTooLarge is the value beyond the limit.
type errTooLarge struct{ limit int }

func (e errTooLarge) Error() string {
	return fmt.Sprintf("Result of the SQL query is larger than %d bytes: select fewer rows or columns, or raise odbc.max_value_size.", e.limit)
}

// shapeError is a result Zabbix refuses (no row, NULL, a column name
// that makes no macro): the item is not supported with its text.
type shapeError string

func (e shapeError) Error() string { return string(e) }

func newShaper(kind keyKind, limit int) *shaper {
	return &shaper{kind: kind, limit: limit}
}

// columns is how many columns the driver must read: the first only for
// db.odbc.select.
func (s *shaper) columns(n int) int {
	if s.kind == kindSelect && n > 1 {
		return 1
	}
	return n
}

// setLabels takes the result's column labels (label(i), i from 0, for
// the columns columns() asked for).
func (s *shaper) setLabels(n int, label func(i int) (string, error)) error {
	if s.kind == kindSelect {
		return nil
	}
	s.names = make([][]byte, 0, n)
	for i := range n {
		l, err := label(i)
		if err != nil {
			return err
		}
		if l == "" {
			return shapeError(fmt.Sprintf("Cannot obtain column #%d name.", i+1))
		}
		var name []byte
		if s.kind == kindDiscovery {
			m, ok := macroName(l)
			if !ok {
				return shapeError(fmt.Sprintf("Cannot convert column #%d name to macro.", i+1))
			}
			name = appendJSONString(nil, m)
			for _, prev := range s.names {
				if string(prev[:len(prev)-1]) == string(name) {
					return shapeError(fmt.Sprintf("Duplicate macro name: %s.", m))
				}
			}
		} else {
			name = appendJSONString(nil, l)
		}
		s.names = append(s.names, append(name, ':'))
	}
	return nil
}

// macroName makes a column label an LLD macro as Zabbix does: ASCII
// letters upper-cased, then every byte must be a macro character.
func macroName(label string) (string, bool) {
	b := make([]byte, 0, len(label)+3)
	b = append(b, "{#"...)
	for i := 0; i < len(label); i++ {
		c := label[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.') {
			return "", false
		}
		b = append(b, c)
	}
	return string(append(b, '}')), true
}

// beginRow starts a row.
func (s *shaper) beginRow() {
	s.col = 0
	if s.kind == kindSelect {
		return
	}
	if s.rows == 0 {
		s.out = append(s.out, '[')
	} else {
		s.out = append(s.out, ',')
	}
	s.out = append(s.out, '{')
}

// value takes the next column of the row: its text (the driver's buffer,
// copied), or null.
func (s *shaper) value(v []byte, null bool) error {
	v = trimSpaces(v)
	defer func() { s.col++ }()
	if s.kind == kindSelect {
		if s.col == 0 {
			s.got, s.null = true, null
			if len(v) > s.limit {
				return errTooLarge{s.limit}
			}
			s.out = appendValid(s.out[:0], v)
		}
		return nil
	}
	if s.col > 0 {
		s.out = append(s.out, ',')
	}
	if len(s.out)+len(v) > s.limit {
		return errTooLarge{s.limit}
	}
	s.out = append(s.out, s.names[s.col]...)
	if null {
		s.out = append(s.out, "null"...)
	} else {
		s.out = appendJSONString(s.out, string(v))
	}
	if len(s.out)+2 > s.limit {
		return errTooLarge{s.limit}
	}
	return nil
}

// endRow ends a row and says whether more are wanted.
func (s *shaper) endRow() bool {
	s.rows++
	if s.kind == kindSelect {
		return false
	}
	s.out = append(s.out, '}')
	return true
}

// result is the item's value once the rows are read.
func (s *shaper) result() ([]byte, error) {
	if s.kind == kindSelect {
		switch {
		case !s.got:
			return nil, shapeError("SQL query returned empty result.")
		case s.null:
			return nil, shapeError("SQL query returned NULL value.")
		}
		return s.out, nil
	}
	if s.rows == 0 {
		return []byte("[]"), nil
	}
	return append(s.out, ']'), nil
}

// trimSpaces removes trailing spaces (only ' ': a CHAR(n) column's
// padding), as Zabbix does.
func trimSpaces(v []byte) []byte {
	for len(v) > 0 && v[len(v)-1] == ' ' {
		v = v[:len(v)-1]
	}
	return v
}

// appendValid appends v with invalid UTF-8 replaced by '?', as Zabbix
// replaces it.
func appendValid(dst, v []byte) []byte {
	for len(v) > 0 {
		r, n := utf8.DecodeRune(v)
		if r == utf8.RuneError && n <= 1 {
			dst = append(dst, '?')
			v = v[1:]
			continue
		}
		dst = append(dst, v[:n]...)
		v = v[n:]
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string escaped as Zabbix's JSON
// writer escapes it: '"', '\', \b \f \n \r \t, other control characters
// as \u00xx; invalid UTF-8 as '?'.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n <= 1 {
				dst = append(dst, '?')
			} else {
				dst = append(dst, s[i:i+n]...)
			}
			i += n
			continue
		}
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, `\b`...)
		case '\f':
			dst = append(dst, `\f`...)
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\t':
			dst = append(dst, `\t`...)
		default:
			if c < 0x20 {
				dst = append(dst, `\u00`...)
				dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				dst = append(dst, c)
			}
		}
		i++
	}
	return append(dst, '"')
}
