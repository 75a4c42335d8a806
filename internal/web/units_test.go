package web_test

import (
	"bytes"
	"encoding/json"
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
	for _, u := range []string{"", "B", "Bps", "s", "uptime", "unixtime", "%", "ms", "rpm", "RPM", "W", "Hz", "bps", "C"} {
		for _, v := range []string{"0", "1", "-1", "0.5", "0.125", "0.375", "2.675", "12.345", "95", "999.999", "1000", "1023", "1024",
			"1536.5", "2048", "1500000000", "1700000000", "-2500", "1000000000000000", "3725", "0.123", "90061.5", "31622400", "1.5",
			"61.25", "2592000", "5187600", "59.999", "-5", "0.0004", "86400", "3600.7", "100000000", "90061", "3599", "86399", "172800",
			"400000", "not a number", "", " 42 ", "1e3", "23540000000", "0.001", "7.005", "1099511627776"} {
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
