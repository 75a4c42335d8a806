package web_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/zbx/units"
)

// TestUnitsJSAgreesWithServer runs the UI's units.js under node on a
// table of values and units and compares every answer with the server's
// internal/zbx/units (whose own table was recorded from Zabbix 6.0.14):
// a problem name the server expands and a latest-data value the page
// formats must read the same.
func TestUnitsJSAgreesWithServer(t *testing.T) {
	node := testutil.Need(t, "node", "nodejs")
	type tc struct {
		V     string `json:"v"`
		Units string `json:"units"`
	}
	var cases []tc
	for _, u := range []string{"", "B", "Bps", "s", "uptime", "unixtime", "%", "ms", "rpm", "RPM", "W", "Hz", "bps", "C", "!B", "!s", "!%", "!uptime", "!unixtime", "!", "b", "KB"} {
		for _, v := range []string{"0", "1", "-1", "0.5", "0.125", "0.375", "2.675", "12.345", "95", "999.999", "1000", "1023", "1024",
			"1536.5", "2048", "1500000000", "1700000000", "-2500", "1000000000000000", "3725", "0.123", "90061.5", "31622400", "1.5",
			"61.25", "2592000", "5187600", "59.999", "-5", "0.0004", "86400", "3600.7", "100000000", "90061", "3599", "86399", "172800",
			"400000", "not a number", "", " 42 ", "1e3", "-0.25", "0.0001", "123456789", "1e9", "-5000", "23540000000", "0.001", "7.005", "1099511627776"} {
			cases = append(cases, tc{v, u})
		}
	}
	in, _ := json.Marshal(cases)
	abs, err := filepath.Abs("assets/units.js")
	if err != nil {
		t.Fatal(err)
	}
	script := `import { formatUnits } from ` + string(mustJSON("file://"+abs)) + `;
let s = ''; process.stdin.on('data', (d) => { s += d; });
process.stdin.on('end', () => { process.stdout.write(JSON.stringify(JSON.parse(s).map((c) => formatUnits(c.v, c.units, 'UTC')))); });`
	cmd := exec.Command(node, "--input-type=module", "-e", script)
	cmd.Stdin = bytesReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(cases) {
		t.Fatalf("node answered %q (%v)", out, err)
	}
	for i, c := range cases {
		if want := units.Format(c.V, c.Units, time.UTC); got[i] != want {
			t.Errorf("formatUnits(%q, %q) = %q, the server says %q", c.V, c.Units, got[i], want)
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// TestUnitsUIJSAsZabbixFrontend runs units.js's formatUnitsUI (what the
// pages format themselves: latest data, graphs, widgets) under node on
// testdata/frontend-units.json, a table recorded from the Zabbix 6.0.14
// frontend's own formatting, and wants every answer the same.
func TestUnitsUIJSAsZabbixFrontend(t *testing.T) {
	node := testutil.Need(t, "node", "nodejs")
	raw, err := os.ReadFile("testdata/frontend-units.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Cases [][3]string }
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Cases) == 0 {
		t.Fatalf("testdata/frontend-units.json: %v", err)
	}
	abs, err := filepath.Abs("assets/units.js")
	if err != nil {
		t.Fatal(err)
	}
	script := `import { formatUnitsUI } from ` + string(mustJSON("file://"+abs)) + `;
let s = ''; process.stdin.on('data', (d) => { s += d; });
process.stdin.on('end', () => { process.stdout.write(JSON.stringify(JSON.parse(s).map((c) => formatUnitsUI(c[0], c[1], 'UTC')))); });`
	cmd := exec.Command(node, "--input-type=module", "-e", script)
	in, _ := json.Marshal(doc.Cases)
	cmd.Stdin = bytesReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(doc.Cases) {
		t.Fatalf("node answered %q (%v)", out, err)
	}
	for i, c := range doc.Cases {
		if got[i] != c[2] {
			t.Errorf("formatUnitsUI(%q, %q) = %q, Zabbix 6.0.14's frontend shows %q", c[0], c[1], got[i], c[2])
		}
	}
}
