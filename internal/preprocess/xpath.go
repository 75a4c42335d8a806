package preprocess

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/antchfx/xmlquery"
	"github.com/antchfx/xpath"
)

// compileXPath compiles an XPath 1.0 expression (github.com/antchfx/xpath:
// a maintained XPath 1.0 engine over any tree; xmlquery is its XML tree).
func compileXPath(expr string) (*xpath.Expr, error) {
	e, err := xpath.Compile(expr)
	if err != nil {
		return nil, errors.New("cannot parse xpath \"" + expr + "\": " + err.Error())
	}
	return e, nil
}

// evalXPath parses doc and evaluates e on it. The result is formatted as
// Zabbix (libxml2) formats it: a node set as its nodes' XML one after the
// other (an attribute as ` name="value"`, a text node as its text, empty
// for no node); a string as is; a boolean as 1 or 0; a number with at
// most 6 decimals and no trailing zeros. content asks for the nodes' text
// instead of their XML, as "Check for error in XML" reads them.
func evalXPath(e *xpath.Expr, doc string, content bool) (string, error) {
	root, err := xmlquery.Parse(strings.NewReader(doc))
	if err != nil {
		return "", errors.New("cannot parse xml value: " + err.Error())
	}
	switch v := e.Evaluate(xmlquery.CreateXPathNavigator(root)).(type) {
	case *xpath.NodeIterator:
		var b strings.Builder
		for v.MoveNext() {
			nav := v.Current()
			switch {
			case nav.NodeType() == xpath.AttributeNode && content:
				b.WriteString(nav.Value())
			case nav.NodeType() == xpath.AttributeNode:
				b.WriteString(" " + nav.LocalName() + `="` + xmlEscape(nav.Value()) + `"`)
			case content:
				b.WriteString(nav.Value())
			default:
				if n, ok := nav.(*xmlquery.NodeNavigator); ok {
					b.WriteString(n.Current().OutputXML(true))
				} else {
					b.WriteString(nav.Value())
				}
			}
		}
		return b.String(), nil
	case string:
		return v, nil
	case bool:
		if v {
			return "1", nil
		}
		return "0", nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			//lint:ignore ST1005 Zabbix's message, shown to users as it is
			return "", errors.New("Invalid numeric value")
		}
		s := strconv.FormatFloat(v, 'f', 6, 64)
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		if s == "-0" {
			s = "0"
		}
		return s, nil
	}
	//lint:ignore ST1005 Zabbix's message, shown to users as it is
	return "", errors.New("Unknown result")
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

func xpathStep(s *Step, text string) (string, error) {
	r, err := evalXPath(s.xp, text, false)
	if err != nil {
		return "", stepErr(`cannot extract XML value with xpath "` + s.Params[0] + `": ` + err.Error())
	}
	return r, nil
}

// errorFromXML is "Check for error in XML": when the path finds text (not
// only whitespace), it is the item's error; a value that is not XML or
// where the path finds nothing goes on unchanged.
func errorFromXML(s *Step, text string) (string, error) {
	r, err := evalXPath(s.xp, text, true)
	if err != nil {
		return text, nil
	}
	if msg := strings.TrimSpace(r); msg != "" {
		return "", stepErr(msg)
	}
	return text, nil
}
