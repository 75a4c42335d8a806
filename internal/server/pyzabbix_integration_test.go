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

// TestIntegrationPyzabbix runs testdata/pyzabbix_flow.py: Debian's
// python3-pyzabbix logs in, creates a group, a host and items, the real
// zabbix_sender pushes values, and the script reads them back with
// history.get and trend.get and makes Grafana's datasource calls.
func TestIntegrationPyzabbix(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	sender := testutil.Need(t, "zabbix_sender", "zabbix-agent")
	python := testutil.NeedPythonModule(t, "pyzabbix", "python3-pyzabbix")
	s := startServer(t, catalog.Spec{})
	pw, err := os.ReadFile(filepath.Join(s.cfg.DataDir, "admin-password"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := "http://" + s.HTTPAddr().String()
	port := strconv.Itoa(s.TrapperAddr().(*net.TCPAddr).Port)
	cmd := exec.CommandContext(ctx, python, filepath.Join("testdata", "pyzabbix_flow.py"), url, strings.TrimSpace(string(pw)), sender, port)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pyzabbix flow failed: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "OK ") {
		t.Fatalf("pyzabbix flow did not finish: %s", out)
	}
	t.Log(lines[len(lines)-1])
	// The host the script created is in the running catalog, the item it
	// deleted is gone.
	snap := s.Catalog.Snapshot()
	if snap.Lookup("py-host", "py.load") == nil || snap.Lookup("py-host", "py.version") != nil {
		t.Fatalf("catalog after the script: py.load %v, py.version %v", snap.Lookup("py-host", "py.load"), snap.Lookup("py-host", "py.version"))
	}
}
