package server

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationZabbixUtils runs testdata/zabbix_utils_flow.py: Zabbix's
// official Python library zabbix_utils (PyPI; .ci/run installs it) logs
// in, checks its session, creates objects, sends values with its Sender
// and reads them back, logs in with an API token and logs out, all in
// the library's own request shapes (internal/conformance's zabbix_utils
// case has them recorded from the real Zabbix 6.0).
func TestIntegrationZabbixUtils(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	python := testutil.NeedPythonModule(t, "zabbix_utils", "zabbix_utils (pip)")
	s := startServer(t, catalog.Spec{})
	pw, err := os.ReadFile(filepath.Join(s.cfg.DataDir, "admin-password"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := "http://" + s.HTTPAddr().String() + "/api_jsonrpc.php"
	port := strconv.Itoa(s.TrapperAddr().(*net.TCPAddr).Port)
	out, err := exec.CommandContext(ctx, python, filepath.Join("testdata", "zabbix_utils_flow.py"), url, strings.TrimSpace(string(pw)), port).CombinedOutput()
	if err != nil {
		t.Fatalf("zabbix_utils flow failed: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "OK ") {
		t.Fatalf("zabbix_utils flow did not finish: %s", out)
	}
}
