package server

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationExternalChecks polls external checks through a whole
// server with Debian's monitoring-plugins: check_dummy as a plain
// external check (OK is the value, CRITICAL makes the item not
// supported, as in Zabbix), nagios[check_tcp,-H,{HOST.CONN},...] against
// a listener of the test (the macro from the item's interface) with dependent items taking the state and the "time" perfdata
// label by JSONPath, and a script of the test's own directory.
func TestIntegrationExternalChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: plugin processes through a whole server")
	}
	t.Setenv("PATH", "/usr/lib/nagios/plugins:"+os.Getenv("PATH"))
	plugins := filepath.Dir(testutil.Need(t, "check_dummy", "monitoring-plugins-basic"))
	scripts := t.TempDir()
	if err := os.WriteFile(filepath.Join(scripts, "echo.sh"), []byte("#!/bin/sh\necho \"$1-$2\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	tcpKey := "nagios[check_tcp,-H,{HOST.CONN},-p," + port + "]"
	items := []catalog.ItemSpec{
		{Key: `check_dummy["0","all good"]`, Type: "external", ValueType: "character", Delay: "1s"},
		{Key: `check_dummy["2","down"]`, Type: "external", ValueType: "character", Delay: "1s"},
		{Key: `echo.sh[a,"b c"]`, Type: "external", ValueType: "character", Delay: "1s"},
		{Key: tcpKey, Type: "external", ValueType: "text", Trends: "0", Delay: "1s", Interface: "127.0.0.1:10050"},
		{Key: "tcp.state", Type: "dependent", ValueType: "unsigned", MasterItem: &catalog.MasterItemSpec{Key: tcpKey},
			Preprocessing: []catalog.PreprocSpec{{Type: "JSONPATH", Parameters: []string{"$.state"}}}},
		{Key: "tcp.time", Type: "dependent", ValueType: "float", MasterItem: &catalog.MasterItemSpec{Key: tcpKey},
			Preprocessing: []catalog.PreprocSpec{{Type: "JSONPATH", Parameters: []string{"$.perfdata.time.value"}}}},
	}
	s := startServerTraps(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "ext-host", Groups: []string{"Ext"},
		Interfaces: []catalog.InterfaceSpec{{Type: "agent", IP: "127.0.0.1", Port: "10050"}}, Items: items}}},
		func(c *config.Config) { c.Poll.ExternalScripts = []string{scripts, plugins} })
	c := adminLogin(t, s)
	snap := s.Catalog.Snapshot()
	id := func(key string) uint64 { return snap.Lookup("ext-host", key).ID }
	last := func(key string, history int) string {
		var rows []map[string]string
		c.ok("history.get", map[string]any{"history": history, "itemids": []string{strconv.FormatUint(id(key), 10)},
			"sortfield": "clock", "sortorder": "DESC", "limit": 1}, &rows)
		if len(rows) == 0 {
			return ""
		}
		return rows[0]["value"]
	}
	end := time.Now().Add(30 * time.Second)
	for {
		st, _ := s.ItemStates.ItemState(id(items[1].Key))
		if last(items[0].Key, 1) != "" && last(items[2].Key, 1) != "" && last("tcp.state", 3) != "" &&
			last("tcp.time", 0) != "" && st.NotSupported {
			break
		}
		if time.Now().After(end) {
			t.Fatal("after 30 s: not every external check has a value, or check_dummy 2 is not unsupported")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v := last(items[0].Key, 1); v != "OK: all good" {
		t.Errorf("%s = %q", items[0].Key, v)
	}
	if st, _ := s.ItemStates.ItemState(id(items[1].Key)); st.Error != "CRITICAL: down" {
		t.Errorf("%s state %+v, want not supported with the plugin's output", items[1].Key, st)
	}
	if v := last(items[2].Key, 1); v != "a-b c" {
		t.Errorf("%s = %q", items[2].Key, v)
	}
	if v := last("tcp.state", 3); v != "0" {
		t.Errorf("tcp.state = %q, want 0 (OK)", v)
	}
	if f, err := strconv.ParseFloat(last("tcp.time", 0), 64); err != nil || f < 0 || f > 5 {
		t.Errorf("tcp.time = %v %v", f, err)
	}
	if v := last(tcpKey, 4); !strings.Contains(v, `"status":"OK"`) {
		t.Errorf("%s = %q", tcpKey, v)
	}
}
