package web_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestWebKeysJSAgreeWithServer: the web monitoring page finds a
// scenario's items by key (netnav.js WEB_KEYS); node computes them for
// names that need quoting and names that do not, and each must be the
// key the catalog gives the item (catalog.WebItemKey).
func TestWebKeysJSAgreeWithServer(t *testing.T) {
	node := testutil.Need(t, "node", "nodejs")
	names := [][2]string{{"shop", "login"}, {`<b>shop</b> 'a' & co`, "step 1"}, {"a,b", "c]d"}, {`say "hi"`, " lead"}, {"[x", "y"},
		{"ünïcode", "шаг"}, {"", ""}}
	in, _ := json.Marshal(names)
	abs, err := filepath.Abs("assets/netnav.js")
	if err != nil {
		t.Fatal(err)
	}
	script := `import { WEB_KEYS } from ` + string(mustJSON("file://"+abs)) + `;
let s = ''; process.stdin.on('data', (d) => { s += d; });
process.stdin.on('end', () => { process.stdout.write(JSON.stringify(JSON.parse(s).map(([a, b]) => WEB_KEYS.map((k) => k(a, b))))); });`
	cmd := exec.Command(node, "--input-type=module", "-e", script)
	cmd.Stdin = bytesReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got [][]string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(names) {
		t.Fatalf("node answered %q (%v)", out, err)
	}
	for i, n := range names {
		for kind := catalog.WebScenarioIn; kind <= catalog.WebStepRspCode; kind++ {
			if want := catalog.WebItemKey(kind, n[0], n[1]); got[i][kind] != want {
				t.Errorf("kind %d of %q: page %q, server %q", kind, n, got[i][kind], want)
			}
		}
	}
}
