package server

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationPassiveAgent polls the real zabbix_agentd 6.0 through a
// whole server: the host's agent interface points at the agent on a
// loopback port, values of agent.ping, system.cpu.load[all,avg1] and
// vfs.fs.size[/,pfree] are read back with history.get, and the unknown
// key's item is not supported with the agent's message.
func TestIntegrationPassiveAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real zabbix_agentd")
	}
	addr := testutil.StartAgentd(t)
	ip, port, _ := net.SplitHostPort(addr)
	items := []catalog.ItemSpec{
		{Key: "agent.ping", Type: "zabbix_agent", ValueType: "unsigned", Delay: "1s"},
		{Key: "system.cpu.load[all,avg1]", Type: "zabbix_agent", ValueType: "float", Delay: "1s"},
		{Key: "vfs.fs.size[/,pfree]", Type: "zabbix_agent", ValueType: "float", Delay: "1s"},
		{Key: "no.such.key", Type: "zabbix_agent", ValueType: "unsigned", Delay: "1s"},
		// Hourly: its first check is up to an hour away; task.create
		// "check now" brings it at once.
		{Key: "agent.version", Type: "zabbix_agent", ValueType: "character", Delay: "1h"},
	}
	s := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "agent-host", Groups: []string{"Agents"},
		Interfaces: []catalog.InterfaceSpec{{Type: "agent", IP: ip, Port: port}}, Items: items}}})
	c := adminLogin(t, s)
	snap := s.Catalog.Snapshot()
	id := func(key string) string { return strconv.FormatUint(snap.Lookup("agent-host", key).ID, 10) }

	read := func(key string, history int) []map[string]string {
		var rows []map[string]string
		c.ok("history.get", map[string]any{"history": history, "itemids": []string{id(key)}, "sortfield": "clock"}, &rows)
		return rows
	}
	unknown := snap.Lookup("agent-host", "no.such.key").ID
	ifaceID := snap.Host("agent-host").MainInterface(catalog.InterfaceAgent).ID
	end := time.Now().Add(20 * time.Second)
	for {
		// Values are readable before the poller's loop hears of their
		// checks (availability), and the unknown key may come later.
		st, _ := s.ItemStates.ItemState(unknown)
		a, _ := s.ItemStates.Availability(ifaceID)
		if len(read("agent.ping", 3)) > 0 && len(read("system.cpu.load[all,avg1]", 0)) > 0 && len(read("vfs.fs.size[/,pfree]", 0)) > 0 &&
			st.NotSupported && a.Available == 1 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("after 20 s: not every supported item has a value, or the unknown key is not unsupported, or the interface is not available")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v := read("agent.ping", 3)[0]["value"]; v != "1" {
		t.Fatalf("agent.ping = %q", v)
	}
	if f, err := strconv.ParseFloat(read("vfs.fs.size[/,pfree]", 0)[0]["value"], 64); err != nil || f <= 0 || f > 100 {
		t.Fatalf("vfs.fs.size[/,pfree] = %v %v; want a percentage", f, err)
	}
	if len(read("no.such.key", 3)) != 0 {
		t.Fatal("values stored for the unsupported key")
	}
	st, _ := s.ItemStates.ItemState(unknown)
	if !st.NotSupported || !strings.Contains(st.Error, "Unsupported item key") {
		t.Fatalf("no.such.key state %+v", st)
	}
	var rows []map[string]any
	c.ok("item.get", map[string]any{"itemids": []string{id("no.such.key"), id("agent.ping")}, "output": []string{"itemid", "state", "error"}, "sortfield": "itemid"}, &rows)
	for _, r := range rows {
		switch r["itemid"] {
		case id("no.such.key"):
			if r["state"] != "1" || !strings.Contains(r["error"].(string), "Unsupported item key") {
				t.Fatalf("item.get of the unsupported item: %v", r)
			}
		case id("agent.ping"):
			if r["state"] != "0" || r["error"] != "" {
				t.Fatalf("item.get of agent.ping: %v", r)
			}
		}
	}
	// Check now (task.create type 6): the hourly item is checked at once
	// (unless its spread put its first check in these seconds anyway).
	c.ok("task.create", []map[string]any{{"type": 6, "request": map[string]any{"itemid": id("agent.version")}}}, nil)
	end = time.Now().Add(10 * time.Second)
	for len(read("agent.version", 1)) == 0 {
		if time.Now().After(end) {
			t.Fatal("no value of agent.version 10 s after task.create check now")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v := read("agent.version", 1)[0]["value"]; !strings.HasPrefix(v, "6.") {
		t.Fatalf("agent.version = %q", v)
	}
	if a, _ := s.ItemStates.Availability(ifaceID); a.Available != 1 || a.Error != "" {
		t.Fatalf("agent interface %+v; want available", a)
	}
}

// TestIntegrationSimpleChecks polls simple checks through a whole
// server: ICMP ping of the interface's address (127.0.0.1), TCP service
// checks against a listener of the test (an SSH greeting) and a port
// nothing listens on, web.page.regexp against a test HTTP server, and a
// simple key no checker serves. Simple checks
// leave the interface's availability alone.
func TestIntegrationSimpleChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: raw ICMP and TCP on loopback through a whole server")
	}
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("raw ICMP sockets need root (CI runs as root)")
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
			conn.Write([]byte("SSH-2.0-test\r\n"))
			conn.Close()
		}
	}()
	_, sshPort, _ := net.SplitHostPort(ln.Addr().String())
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page one") }))
	defer web.Close()
	_, webPort, _ := net.SplitHostPort(web.Listener.Addr().String())
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	_, closedPort, _ := net.SplitHostPort(closed.Addr().String())
	closed.Close()
	items := []catalog.ItemSpec{
		{Key: "icmpping[,2,20]", Type: "simple", ValueType: "unsigned", Delay: "1s"},
		{Key: "icmppingsec[,2,20]", Type: "simple", ValueType: "float", Delay: "1s"},
		{Key: "net.tcp.service[ssh,," + sshPort + "]", Type: "simple", ValueType: "unsigned", Delay: "1s"},
		{Key: "net.tcp.service.perf[tcp,," + closedPort + "]", Type: "simple", ValueType: "float", Delay: "1s"},
		{Key: "net.udp.service[ntp]", Type: "simple", ValueType: "unsigned", Delay: "1s"},
		{Key: "web.page.regexp[127.0.0.1,/," + webPort + ",page (\\w+)]", Type: "simple", ValueType: "character", Delay: "1s"},
	}
	s := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "simple-host", Groups: []string{"Net"},
		Interfaces: []catalog.InterfaceSpec{{Type: "agent", IP: "127.0.0.1", Port: "10050"}}, Items: items}}})
	c := adminLogin(t, s)
	snap := s.Catalog.Snapshot()
	id := func(key string) string { return strconv.FormatUint(snap.Lookup("simple-host", key).ID, 10) }
	last := func(key string, history int) string {
		var rows []map[string]string
		c.ok("history.get", map[string]any{"history": history, "itemids": []string{id(key)}, "sortfield": "clock", "sortorder": "DESC", "limit": 1}, &rows)
		if len(rows) == 0 {
			return ""
		}
		return rows[0]["value"]
	}
	udp := snap.Lookup("simple-host", "net.udp.service[ntp]").ID
	end := time.Now().Add(20 * time.Second)
	for {
		st, _ := s.ItemStates.ItemState(udp)
		if last("icmpping[,2,20]", 3) != "" && last("icmppingsec[,2,20]", 0) != "" && last(items[2].Key, 3) != "" &&
			last(items[3].Key, 0) != "" && last(items[5].Key, 1) != "" && st.NotSupported {
			break
		}
		if time.Now().After(end) {
			t.Fatal("after 20 s: not every simple check has a value, or net.udp.service is not unsupported")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v := last("icmpping[,2,20]", 3); v != "1" {
		t.Errorf("icmpping = %q", v)
	}
	if f, err := strconv.ParseFloat(last("icmppingsec[,2,20]", 0), 64); err != nil || f <= 0 || f > 1 {
		t.Errorf("icmppingsec = %v %v", f, err)
	}
	if v := last(items[2].Key, 3); v != "1" {
		t.Errorf("%s = %q", items[2].Key, v)
	}
	if v := last(items[3].Key, 0); v != "0" {
		t.Errorf("%s = %q, want 0 (nothing listens)", items[3].Key, v)
	}
	if v := last(items[5].Key, 1); v != "page one" {
		t.Errorf("%s = %q", items[5].Key, v)
	}
	if st, _ := s.ItemStates.ItemState(udp); st.Error != "Unsupported item key." {
		t.Errorf("net.udp.service state %+v", st)
	}
	ifaceID := snap.Host("simple-host").MainInterface(catalog.InterfaceAgent).ID
	if a, _ := s.ItemStates.Availability(ifaceID); a.Available != 0 || a.ErrorsFrom != 0 {
		t.Errorf("simple checks changed the interface's availability: %+v", a)
	}
}

// TestIntegrationHTTPAgent polls HTTP agent items through a whole
// server: a JSON body from a test HTTP server, and a 500 that makes its
// item not supported with Zabbix's message.
func TestIntegrationHTTPAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: HTTP agent checks through a whole server")
	}
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		io.WriteString(w, `{"status":"ok","q":"`+r.URL.Query().Get("q")+`"}`)
	}))
	defer web.Close()
	items := []catalog.ItemSpec{
		{Key: "api.health", Type: "http_agent", ValueType: "text", Delay: "1s",
			HTTPSpec: catalog.HTTPSpec{URL: web.URL + "/health", QueryFields: []catalog.HTTPField{{Name: "q", Value: "1"}}}},
		{Key: "api.fail", Type: "http_agent", ValueType: "text", Delay: "1s", HTTPSpec: catalog.HTTPSpec{URL: web.URL + "/fail"}},
	}
	s := startServer(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "web-host", Groups: []string{"Web"}, Items: items}}})
	c := adminLogin(t, s)
	snap := s.Catalog.Snapshot()
	health := strconv.FormatUint(snap.Lookup("web-host", "api.health").ID, 10)
	fail := snap.Lookup("web-host", "api.fail").ID
	end := time.Now().Add(20 * time.Second)
	for {
		var rows []map[string]string
		c.ok("history.get", map[string]any{"history": 4, "itemids": []string{health}, "limit": 1}, &rows)
		st, _ := s.ItemStates.ItemState(fail)
		if len(rows) > 0 && st.NotSupported {
			if rows[0]["value"] != `{"status":"ok","q":"1"}` {
				t.Fatalf("api.health = %q", rows[0]["value"])
			}
			if !strings.Contains(st.Error, `Response code "500" did not match`) {
				t.Fatalf("api.fail state %+v", st)
			}
			return
		}
		if time.Now().After(end) {
			t.Fatal("after 20 s: no value of api.health, or api.fail not unsupported")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
