package preprocess

import (
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

func TestXMLToJSON(t *testing.T) {
	s := mustStep(t, "27", "", "0", "")
	// After the Zabbix docs' example (a bookstore).
	in := `<?xml version="1.0" encoding="UTF-8"?>
<bookstore>
  <book category="COOKING">
    <title lang="en">Everyday Italian</title>
    <author>Giada De Laurentiis</author>
    <year>2005</year>
    <price>30.00</price>
  </book>
  <book category="CHILDREN"><title lang="">Harry Potter</title><author/><year>2005</year></book>
</bookstore>`
	checkStep(t, s, []stepCase{
		{vt: history.Text, in: in, want: `{"bookstore":{"book":[{"@category":"COOKING","title":{"@lang":"en","#text":"Everyday Italian"},"author":"Giada De Laurentiis","year":"2005","price":"30.00"},{"@category":"CHILDREN","title":{"@lang":"","#text":"Harry Potter"},"author":null,"year":"2005"}]}}`},
		{vt: history.Text, in: `<a>x<b>1</b>y</a>`, want: `{"a":{"b":"1","#text":"xy"}}`},
		{vt: history.Text, in: `<a></a>`, want: `{"a":""}`},
		{vt: history.Text, in: `<a>&lt;&quot;</a>`, want: `{"a":"<\""}`},
		{vt: history.Text, in: `<a><b></a>`, wantErr: "cannot parse xml value: XML syntax error on line 1: element <b> closed by </a>"},
		{vt: history.Text, in: `<a/><b/>`, wantErr: "cannot parse xml value: more than one root element"},
		{vt: history.Text, in: `just text`, wantErr: "cannot parse xml value: no root element"},
		{vt: history.Text, in: strings.Repeat("<a>", maxXMLDepth+1), wantErr: "cannot parse xml value: elements nested too deep"},
	})
}
