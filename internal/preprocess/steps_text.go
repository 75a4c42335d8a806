package preprocess

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// unescapeTrim reads a trim step's character list, where \s, \r, \n and
// \t stand for space, CR, LF and tab, as in Zabbix.
func unescapeTrim(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			switch p[i+1] {
			case 's':
				b.WriteByte(' ')
				i++
				continue
			case 'r':
				b.WriteByte('\r')
				i++
				continue
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case 't':
				b.WriteByte('\t')
				i++
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

func trim(t StepType, text, param string) string {
	chars := unescapeTrim(param)
	switch t {
	case StepRTrim:
		return strings.TrimRight(text, chars)
	case StepLTrim:
		return strings.TrimLeft(text, chars)
	}
	return strings.Trim(text, chars)
}

// unescapeReplace reads Replace's search and replacement strings, where
// \\, \n, \r, \t and \s are escape sequences, as in Zabbix.
func unescapeReplace(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			c := byte(0)
			switch p[i+1] {
			case '\\':
				c = '\\'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 's':
				c = ' '
			}
			if c != 0 {
				b.WriteByte(c)
				i++
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// substitute fills a regular expression step's output template: \0 is
// the whole match, \1 to \9 the groups (empty when a group did not take
// part); any other text is copied.
func substitute(tmpl, text string, m []int) string {
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] == '\\' && i+1 < len(tmpl) && tmpl[i+1] >= '0' && tmpl[i+1] <= '9' {
			g := int(tmpl[i+1] - '0')
			if 2*g+1 < len(m) && m[2*g] >= 0 {
				b.WriteString(text[m[2*g]:m[2*g+1]])
			}
			i++
			continue
		}
		b.WriteByte(tmpl[i])
	}
	return b.String()
}

func regsub(s *Step, text string) (string, error) {
	m := s.re.FindStringSubmatchIndex(text)
	if m == nil {
		return "", stepErr(`cannot perform regular expression match: pattern does not match, type "string", value "` + desc(text) + `"`)
	}
	return substitute(s.Params[1], text, m), nil
}

func validateRegex(s *Step, text string) (string, error) {
	if s.re.MatchString(text) != (s.Type == StepValidateRegex) {
		return "", stepErr("regular expression validation error with value '" + desc(text) + "'")
	}
	return text, nil
}

// errorFromRegex is "Check for error using regular expression": when the
// pattern matches, the filled output is the item's error; otherwise the
// value passes unchanged. A match whose output is empty is not an error
// (an empty message would leave the operator nothing to read).
func errorFromRegex(s *Step, text string) (string, error) {
	m := s.re.FindStringSubmatchIndex(text)
	if m == nil {
		return text, nil
	}
	if msg := strings.TrimSpace(substitute(s.Params[1], text, m)); msg != "" {
		return "", stepErr(msg)
	}
	return text, nil
}

// csvToJSON is "CSV to JSON": params are the delimiter (default ","), the
// quotation character (empty: none) and "1" if the first line is a
// header. Each line becomes an object whose keys are the header's names,
// or "1", "2", ... without a header; values are strings. A quoted field
// may hold delimiters, line breaks and doubled quotes. Empty lines are
// skipped; a line with more fields than the header is an error.
func csvToJSON(text string, p []string) (string, error) {
	delim, quote := ',', rune(0)
	if p[0] != "" {
		delim, _ = utf8.DecodeRuneInString(p[0])
	}
	if p[1] != "" {
		quote, _ = utf8.DecodeRuneInString(p[1])
	}
	rows, err := splitCSV(text, delim, quote)
	if err != nil {
		return "", err
	}
	var header []string
	if p[2] == "1" && len(rows) > 0 {
		header, rows = rows[0], rows[1:]
	}
	b := make([]byte, 0, len(text)*2+2)
	b = append(b, '[')
	for r, row := range rows {
		if header != nil && len(row) > len(header) {
			return "", stepErr("cannot convert CSV to JSON: line " + strconv.Itoa(r+2) + " has " + strconv.Itoa(len(row)) + " values, the header " + strconv.Itoa(len(header)))
		}
		if r > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		for i, v := range row {
			if i > 0 {
				b = append(b, ',')
			}
			if header != nil {
				b = appendJSONString(b, header[i])
			} else {
				b = appendJSONString(b, strconv.Itoa(i+1))
			}
			b = append(b, ':')
			b = appendJSONString(b, v)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	return string(b), nil
}

// splitCSV splits text into lines of fields, skipping empty lines.
func splitCSV(text string, delim, quote rune) ([][]string, error) {
	var (
		rows   [][]string
		row    []string
		field  strings.Builder
		quoted bool // inside a quoted field
		line   = 1
		empty  = true // the current line has no character yet
	)
	endRow := func() {
		if !empty {
			row = append(row, field.String())
			rows = append(rows, row)
		}
		row, empty = nil, true
		field.Reset()
	}
	for i, w := 0, 0; i < len(text); i += w {
		r, size := utf8.DecodeRuneInString(text[i:])
		w = size
		switch {
		case quoted && r == quote:
			if next, n := utf8.DecodeRuneInString(text[i+w:]); i+w < len(text) && next == quote {
				field.WriteRune(quote)
				w += n
			} else {
				quoted = false
			}
		case quoted:
			if r == '\n' {
				line++
			}
			field.WriteRune(r)
		case quote != 0 && r == quote && field.Len() == 0:
			quoted, empty = true, false
		case r == delim:
			row = append(row, field.String())
			field.Reset()
			empty = false
		case r == '\r' && strings.HasPrefix(text[i+w:], "\n"):
			// CRLF: the LF ends the line.
		case r == '\n':
			endRow()
			line++
		default:
			field.WriteRune(r)
			empty = false
		}
	}
	if quoted {
		return nil, stepErr("cannot convert CSV to JSON: unterminated quoted field at line " + strconv.Itoa(line))
	}
	endRow()
	return rows, nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes
// U+FFFD so that the output is always valid JSON.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&15])
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}
