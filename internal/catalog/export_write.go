package catalog

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// exportNode is one node of an export document: a scalar, a map whose
// keys keep 6.0's order, or a list. Export builds the tree once and the
// three writers (YAML, XML, JSON) walk it, so that the formats hold the
// same document.
type exportNode struct {
	scalar string
	isMap  bool
	isList bool
	keys   []string      // a map's keys, in order
	kids   []*exportNode // a map's values, or a list's members
}

func newMap() *exportNode  { return &exportNode{isMap: true} }
func newList() *exportNode { return &exportNode{isList: true} }

func (n *exportNode) empty() bool { return (n.isMap || n.isList) && len(n.kids) == 0 }

// put appends key with v.
func (n *exportNode) put(key string, v *exportNode) {
	n.keys = append(n.keys, key)
	n.kids = append(n.kids, v)
}

// str sets key to s unless s equals def (6.0 omits a value equal to its
// default; both compared as numbers when both are numeric, as 6.0's
// PHP compares them). A required member passes def "\x00".
func (n *exportNode) str(key, s, def string) {
	if s == def || def != "\x00" && phpNumeric(s) && phpNumeric(def) && numEq(s, def) {
		return
	}
	n.put(key, &exportNode{scalar: s})
}

// req sets key to s, whatever its value.
func (n *exportNode) req(key, s string) { n.put(key, &exportNode{scalar: s}) }

// sub sets key to v unless v is empty and not required.
func (n *exportNode) sub(key string, v *exportNode, required bool) {
	if v == nil || v.empty() && !required {
		return
	}
	n.put(key, v)
}

// add appends a list member.
func (n *exportNode) add(v *exportNode) { n.kids = append(n.kids, v) }

func numEq(a, b string) bool {
	x, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	y, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	return err1 == nil && err2 == nil && x == y
}

// phpNumericRe is what PHP 8's is_numeric takes: an optionally signed
// decimal or float, whitespace around allowed.
var phpNumericRe = regexp.MustCompile(`^[ \t\n\r\v\f]*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?[ \t\n\r\v\f]*$`)

func phpNumeric(s string) bool { return s != "" && phpNumericRe.MatchString(s) }

// writeYAML writes n as 6.0 writes YAML (its Symfony dumper with
// literal blocks for multi-line strings, two-space indentation and
// "-" alone on the line of a list member).
func writeYAML(n *exportNode) []byte {
	var b bytes.Buffer
	yamlBlock(&b, n, 0)
	return b.Bytes()
}

func yamlBlock(b *bytes.Buffer, n *exportNode, indent int) {
	prefix := strings.Repeat(" ", indent)
	for i, v := range n.kids {
		lead := "-"
		if n.isMap {
			lead = yamlScalar(n.keys[i]) + ":"
		}
		if !v.isMap && !v.isList && strings.Contains(v.scalar, "\n") && !strings.Contains(v.scalar, "\r") {
			ind := ""
			if strings.HasPrefix(v.scalar, " ") {
				ind = "2"
			}
			fmt.Fprintf(b, "%s%s |%s\n", prefix, lead, ind)
			for _, row := range strings.Split(v.scalar, "\n") {
				b.WriteString(prefix + "  " + row + "\n")
			}
			continue
		}
		if !v.isMap && !v.isList || v.empty() {
			b.WriteString(prefix + lead + " " + yamlInline(v) + "\n")
			continue
		}
		b.WriteString(prefix + lead + "\n")
		yamlBlock(b, v, indent+2)
	}
}

func yamlInline(v *exportNode) string {
	if v.isMap || v.isList {
		return "{  }" // only empty ones are written inline
	}
	return yamlScalar(v.scalar)
}

var (
	yamlTimestampRe = regexp.MustCompile(`^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?$`)
	yamlHexRe       = regexp.MustCompile(`(?i)^0x[0-9a-f_]+$`)
	yamlDigitsRe    = regexp.MustCompile(`^[0-9]+[_0-9]*$`)
	yamlSingleRe    = regexp.MustCompile(`[\s'":{}\[\],&*#?]|^[-?|<>=!%@` + "`" + `]`)
	yamlWords       = map[string]bool{"null": true, "~": true, "true": true, "false": true, "y": true, "n": true,
		"yes": true, "no": true, "on": true, "off": true}
)

// yamlScalar quotes s as the dumper does: numbers and words YAML would
// read otherwise in single quotes, control characters in double quotes.
func yamlScalar(s string) string {
	switch {
	case s == "":
		return "''"
	case phpNumeric(s):
		return "'" + s + "'"
	case yamlBinary(s):
		return "!!binary " + base64.StdEncoding.EncodeToString([]byte(s))
	case yamlNeedsDouble(s):
		return yamlDouble(s)
	case yamlWords[strings.ToLower(s)], yamlSingleRe.MatchString(s), yamlDigitsRe.MatchString(s),
		yamlHexRe.MatchString(s), yamlTimestampRe.MatchString(s):
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return s
}

func yamlBinary(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x01 && c <= 0x06 || c >= 0x0e && c <= 0x1a || c >= 0x1c && c <= 0x1f {
			return true
		}
	}
	return false
}

func yamlNeedsDouble(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0x85 || r == 0xa0 || r == 0x2028 || r == 0x2029 {
			return true
		}
	}
	return false
}

var yamlEscapes = map[rune]string{0: `\0`, 7: `\a`, 8: `\b`, 9: `\t`, 10: `\n`, 11: `\v`, 12: `\f`, 13: `\r`, 27: `\e`,
	'"': `\"`, '\\': `\\`, 0x85: `\N`, 0xa0: `\_`, 0x2028: `\L`, 0x2029: `\P`}

func yamlDouble(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if e, ok := yamlEscapes[r]; ok {
			b.WriteString(e)
		} else if r < 0x20 || r == 0x7f {
			fmt.Fprintf(&b, `\x%02x`, r)
		} else {
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// xmlMembers are the element names 6.0 gives the members of its lists.
var xmlMembers = map[string]string{
	"conditions": "condition", "dashboards": "dashboard", "dependencies": "dependency",
	"discovery_rules": "discovery_rule", "elements": "element", "fields": "field", "graph_items": "graph_item",
	"graph_prototypes": "graph_prototype", "graphs": "graph", "group_links": "group_link",
	"group_prototypes": "group_prototype", "groups": "group", "headers": "header", "host_prototypes": "host_prototype",
	"hosts": "host", "httptests": "httptest", "images": "image", "interfaces": "interface",
	"item_prototypes": "item_prototype", "items": "item", "lines": "line", "links": "link", "linktriggers": "linktrigger",
	"lld_macro_paths": "lld_macro_path", "macros": "macro", "mappings": "mapping", "maps": "map",
	"media_types": "media_type", "message_templates": "message_template", "operations": "operation",
	"overrides": "override", "pages": "page", "parameters": "parameter", "posts": "post_field",
	"preprocessing": "step", "query_fields": "query_field", "selements": "selement", "shapes": "shape",
	"steps": "step", "tags": "tag", "templates": "template", "tls_accept": "option",
	"trigger_prototypes": "trigger_prototype", "triggers": "trigger", "urls": "url", "valuemaps": "valuemap",
	"variables": "variable", "widgets": "widget",
}

// writeXML writes n (the document's root map) as 6.0 does: one line, or
// indented by four spaces with pretty.
func writeXML(n *exportNode, pretty bool) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	xmlChildren(&b, n, "", pretty, 0)
	b.WriteString("\n")
	return b.Bytes()
}

func xmlChildren(b *bytes.Buffer, n *exportNode, parent string, pretty bool, depth int) {
	for i, v := range n.kids {
		key := "" // a list member's key is its index, which no list tag maps
		if n.isMap {
			key = n.keys[i]
		}
		name := xmlMembers[parent]
		if name == "" {
			name = key
		}
		if pretty && (depth > 0 || i > 0) {
			b.WriteString("\n" + strings.Repeat("    ", depth))
		}
		switch {
		case v.isMap || v.isList:
			if v.empty() {
				b.WriteString("<" + name + "/>")
				continue
			}
			b.WriteString("<" + name + ">")
			xmlChildren(b, v, key, pretty, depth+1)
			if pretty {
				b.WriteString("\n" + strings.Repeat("    ", depth))
			}
			b.WriteString("</" + name + ">")
		case v.scalar == "":
			b.WriteString("<" + name + "/>")
		case strings.TrimSpace(v.scalar) == "":
			b.WriteString("<" + name + "><![CDATA[" + v.scalar + "]]></" + name + ">")
		default:
			b.WriteString("<" + name + ">")
			xmlText(b, v.scalar)
			b.WriteString("</" + name + ">")
		}
	}
}

func xmlText(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		case '\r':
			b.WriteString("&#13;")
		default:
			b.WriteByte(c)
		}
	}
}

// writeJSON writes n as 6.0's JSON export: slashes unescaped, every
// other character beyond ASCII as \u escapes; indented by four spaces
// with pretty.
func writeJSON(n *exportNode, pretty bool) []byte {
	var b bytes.Buffer
	jsonNode(&b, n, pretty, 0)
	return b.Bytes()
}

func jsonNode(b *bytes.Buffer, n *exportNode, pretty bool, depth int) {
	if !n.isMap && !n.isList {
		jsonString(b, n.scalar)
		return
	}
	open, end := byte('{'), byte('}')
	if n.isList {
		open, end = '[', ']'
	}
	b.WriteByte(open)
	for i, v := range n.kids {
		if i > 0 {
			b.WriteByte(',')
		}
		if pretty {
			b.WriteString("\n" + strings.Repeat("    ", depth+1))
		}
		if n.isMap {
			jsonString(b, n.keys[i])
			b.WriteByte(':')
			if pretty {
				b.WriteByte(' ')
			}
		}
		jsonNode(b, v, pretty, depth+1)
	}
	if pretty && len(n.kids) > 0 {
		b.WriteString("\n" + strings.Repeat("    ", depth))
	}
	b.WriteByte(end)
}

func jsonString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
}

// natCaseCmp compares as PHP's strnatcasecmp, which 6.0's export sorts
// by: runs of digits by value (or digit by digit when one starts with
// 0), letters without case, whitespace skipped.
func natCaseCmp(a, b string) int {
	ai, bi := 0, 0
	// Leading zeros of a number at the start are skipped.
	for ai+1 < len(a) && a[ai] == '0' && isDigit(a[ai+1]) {
		ai++
	}
	for bi+1 < len(b) && b[bi] == '0' && isDigit(b[bi+1]) {
		bi++
	}
	for {
		for ai < len(a) && isSpace(a[ai]) {
			ai++
		}
		for bi < len(b) && isSpace(b[bi]) {
			bi++
		}
		if ai >= len(a) || bi >= len(b) {
			switch {
			case ai >= len(a) && bi >= len(b):
				return 0
			case ai >= len(a):
				return -1
			}
			return 1
		}
		ca, cb := a[ai], b[bi]
		if isDigit(ca) && isDigit(cb) {
			var r, na, nb int
			if ca == '0' || cb == '0' {
				r, na, nb = natLeft(a[ai:], b[bi:])
			} else {
				r, na, nb = natRight(a[ai:], b[bi:])
			}
			if r != 0 {
				return r
			}
			ai += na
			bi += nb
			continue
		}
		ua, ub := upper(ca), upper(cb)
		if ua != ub {
			if ua < ub {
				return -1
			}
			return 1
		}
		ai++
		bi++
	}
}

// natRight compares two runs of digits by value: the longer run is the
// greater, else the first difference decides.
func natRight(a, b string) (int, int, int) {
	bias := 0
	i := 0
	for ; ; i++ {
		da, db := i < len(a) && isDigit(a[i]), i < len(b) && isDigit(b[i])
		switch {
		case !da && !db:
			return bias, i, i
		case !da:
			return -1, 0, 0
		case !db:
			return 1, 0, 0
		}
		if bias == 0 {
			if a[i] < b[i] {
				bias = -1
			} else if a[i] > b[i] {
				bias = 1
			}
		}
	}
}

// natLeft compares two runs of digits as fractions, digit by digit.
func natLeft(a, b string) (int, int, int) {
	for i := 0; ; i++ {
		da, db := i < len(a) && isDigit(a[i]), i < len(b) && isDigit(b[i])
		switch {
		case !da && !db:
			return 0, i, i
		case !da:
			return -1, 0, 0
		case !db:
			return 1, 0, 0
		case a[i] < b[i]:
			return -1, 0, 0
		case a[i] > b[i]:
			return 1, 0, 0
		}
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }
func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 32
	}
	return c
}
