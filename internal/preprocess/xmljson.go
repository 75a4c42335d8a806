package preprocess

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
)

// maxXMLDepth bounds element nesting for "XML to JSON".
const maxXMLDepth = 256

type xmlElem struct {
	name        string
	attrs       []xml.Attr
	children    []*xmlElem
	text        strings.Builder
	selfClosing bool
}

// xmlToJSON is "XML to JSON" with Zabbix's rules: the root element is the
// one key of the result; attributes become "@name" keys; an element with
// neither attributes nor children is its text (null if it was
// self-closing, <a/>); repeated child names become one key with an array;
// the text of an element with attributes or children is "#text" (left
// out when only whitespace). Names are local names: namespace prefixes
// are dropped.
func xmlToJSON(text string) (string, error) {
	d := xml.NewDecoder(strings.NewReader(text))
	var (
		root  *xmlElem
		stack []*xmlElem
	)
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", stepErr("cannot parse xml value: " + err.Error())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) >= maxXMLDepth {
				return "", stepErr("cannot parse xml value: elements nested too deep")
			}
			if len(stack) == 0 && root != nil {
				return "", stepErr("cannot parse xml value: more than one root element")
			}
			e := &xmlElem{name: t.Name.Local, attrs: t.Attr}
			// encoding/xml reports <a/> as a start and an end: the input
			// just before the offset tells them apart.
			if off := d.InputOffset(); off >= 2 && text[off-2:off] == "/>" {
				e.selfClosing = true
			}
			if len(stack) == 0 {
				root = e
			} else {
				p := stack[len(stack)-1]
				p.children = append(p.children, e)
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			}
		}
	}
	if root == nil {
		return "", stepErr("cannot parse xml value: no root element")
	}
	b := appendJSONString([]byte{'{'}, root.name)
	b = append(b, ':')
	b = root.appendJSON(b)
	return string(append(b, '}')), nil
}

func (e *xmlElem) appendJSON(b []byte) []byte {
	if len(e.attrs) == 0 && len(e.children) == 0 {
		if e.selfClosing {
			return append(b, "null"...)
		}
		return appendJSONString(b, e.text.String())
	}
	b = append(b, '{')
	first := true
	sep := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
	}
	for _, a := range e.attrs {
		sep()
		b = appendJSONString(b, "@"+a.Name.Local)
		b = append(b, ':')
		b = appendJSONString(b, a.Value)
	}
	done := make(map[string]bool, len(e.children))
	for i, c := range e.children {
		if done[c.name] {
			continue
		}
		done[c.name] = true
		sep()
		b = appendJSONString(b, c.name)
		b = append(b, ':')
		var same []*xmlElem
		for _, d := range e.children[i:] {
			if d.name == c.name {
				same = append(same, d)
			}
		}
		if len(same) == 1 {
			b = c.appendJSON(b)
			continue
		}
		b = append(b, '[')
		for j, d := range same {
			if j > 0 {
				b = append(b, ',')
			}
			b = d.appendJSON(b)
		}
		b = append(b, ']')
	}
	if t := strings.TrimSpace(e.text.String()); t != "" {
		sep()
		b = appendJSONString(b, "#text")
		b = append(b, ':')
		b = appendJSONString(b, t)
	}
	return append(b, '}')
}
