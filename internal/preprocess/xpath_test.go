package preprocess

import (
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/history"
)

func TestXPath(t *testing.T) {
	// The Zabbix docs' example document.
	doc := `<document><item><value>10</value><unit kind="s">sec</unit></item><item><value>2.5</value></item></document>`
	f := func(path string, want string) {
		t.Helper()
		checkStep(t, mustStep(t, "11", path, "0", ""), []stepCase{{vt: history.Text, in: doc, want: want}})
	}
	f(`/document/item/value`, `<value>10</value><value>2.5</value>`)
	f(`/document/item[1]/value`, `<value>10</value>`)
	f(`string(/document/item/value)`, `10`)
	f(`/document/item/value/text()`, `102.5`)
	f(`//unit/@kind`, ` kind="s"`)
	f(`count(/document/item)`, `2`)
	f(`sum(//value) div 3`, `4.166667`)
	f(`boolean(//unit)`, `1`)
	f(`/document/none`, ``)
	checkStep(t, mustStep(t, "11", "//value", "0", ""), []stepCase{
		{vt: history.Text, in: `<a>`, wantErr: `cannot extract XML value with xpath "//value": cannot parse xml value: XML syntax error on line 1: unexpected EOF`},
	})
	checkStep(t, mustStep(t, "11", "number('x')", "0", ""), []stepCase{
		{vt: history.Text, in: doc, wantErr: `cannot extract XML value with xpath "number('x')": Invalid numeric value`},
	})
	if _, err := ParseStep("11", "//[", "0", ""); err == nil || !strings.Contains(err.Error(), `cannot parse xpath "//["`) {
		t.Fatalf("bad xpath: %v", err)
	}
}

func TestErrorFromXML(t *testing.T) {
	checkStep(t, mustStep(t, "17", "/response/error", "0", ""), []stepCase{
		{vt: history.Text, in: `<response><error> quota exceeded </error></response>`, wantErr: "quota exceeded"},
		{vt: history.Text, in: `<response><data>1</data></response>`, want: `<response><data>1</data></response>`},
		{vt: history.Text, in: `<response><error/></response>`, want: `<response><error/></response>`},
		{vt: history.Text, in: `not xml <`, want: `not xml <`},
	})
}
