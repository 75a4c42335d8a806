package jmx

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/testutil"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// collect runs batch through c and returns the results by item ID, in
// the order they were reported too.
func collect(t testing.TB, c *Checker, batch []poll.Check) (map[uint64]*poll.Result, []uint64) {
	t.Helper()
	var mu sync.Mutex
	got := map[uint64]*poll.Result{}
	var order []uint64
	all := make(chan struct{})
	c.Check(context.Background(), batch, func(r *poll.Result) {
		mu.Lock()
		defer mu.Unlock()
		if got[r.ItemID] != nil {
			t.Errorf("item %d reported twice", r.ItemID)
		}
		got[r.ItemID] = r
		order = append(order, r.ItemID)
		if len(got) == len(batch) {
			close(all)
		}
	})
	select {
	case <-all:
	case <-time.After(60 * time.Second):
		t.Fatalf("%d of %d checks reported within 60 s", len(got), len(batch))
	}
	return got, order
}

// counter reads one of the checker's counters from m's text form
// (labels as name, value pairs).
func counter(t testing.TB, m *selfmon.Registry, name string, labels ...string) uint64 {
	t.Helper()
	line := name
	if len(labels) > 0 {
		var ls []string
		for i := 0; i+1 < len(labels); i += 2 {
			ls = append(ls, labels[i]+"="+strconv.Quote(labels[i+1]))
		}
		line += "{" + strings.Join(ls, ",") + "}"
	}
	var b strings.Builder
	m.WriteText(&b)
	for l := range strings.SplitSeq(b.String(), "\n") {
		if v, ok := strings.CutPrefix(l, line+" "); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return n
		}
	}
	t.Fatalf("no metric %s in\n%s", line, b.String())
	return 0
}

// TestIntegrationJMX asks the real Zabbix Java gateway (Debian
// zabbix-java-gateway 6.0.14) about a real JVM: values of the platform's
// and the test's MBeans, jmx.discovery and jmx.get JSON, the gateway's
// errors as the items' not supported reasons, all keys of one interface
// in one request (32 at most).
func TestIntegrationJMX(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the Java gateway and a JVM")
	}
	app := testutil.StartJMXApp(t, testutil.JMXAppOptions{Beans: 3})
	gw := testutil.StartJavaGateway(t, testutil.JavaGatewayOptions{})
	m := selfmon.NewRegistry()
	c := New(Options{Gateway: gw.Addr, Metrics: m})
	keys := []string{
		`jmx["java.lang:type=Memory","HeapMemoryUsage.used"]`,
		`jmx["peregrine:type=Test,name=t2",Count]`,
		`jmx["peregrine:type=Test,name=t2",Name]`,
		`jmx["peregrine:type=Test,name=t2",Ratio]`,
		`jmx.discovery[beans,"peregrine:type=Test,*"]`,
		`jmx.discovery[attributes,"peregrine:type=Test,name=t0"]`,
		`jmx.get[beans,"peregrine:type=Test,*"]`,
		`jmx.get[attributes,"peregrine:type=Test,name=t1"]`,
		`jmx["peregrine:type=Test,name=t0",Nope]`,
		`jmx["java.lang:type=Memory",HeapMemoryUsage]`,
		`jmx.foo[a]`,
	}
	var batch []poll.Check
	for i, k := range keys {
		batch = append(batch, poll.Check{ItemID: uint64(i + 1), HostID: 1, InterfaceID: 7, Key: k, Addr: app.Addr, Timeout: 10 * time.Second})
	}
	got, _ := collect(t, c, batch)
	value := func(i int) string {
		t.Helper()
		r := got[uint64(i+1)]
		if r.Status != poll.OK {
			t.Fatalf("%s: %s %q, want a value", keys[i], r.Status, r.Error)
		}
		return string(r.Value)
	}
	if n, err := strconv.ParseUint(value(0), 10, 64); err != nil || n == 0 {
		t.Errorf("heap used %q: %v", value(0), err)
	}
	if v1, v2, v3 := value(1), value(2), value(3); v1 != "2" || v2 != "t2" || v3 != "0.5" {
		t.Errorf("the test MBean's Count, Name, Ratio: %q %q %q, want 2 t2 0.5", v1, v2, v3)
	}
	// Discovery: Zabbix's LLD JSON, the rows and macros of 6.0.
	var disc struct {
		Data []map[string]string `json:"data"`
	}
	if err := json.Unmarshal([]byte(value(4)), &disc); err != nil || len(disc.Data) != 3 {
		t.Fatalf("jmx.discovery[beans]: %v %s", err, value(4))
	}
	for _, row := range disc.Data {
		if row["{#JMXDOMAIN}"] != "peregrine" || row["{#JMXTYPE}"] != "Test" || !strings.HasPrefix(row["{#JMXNAME}"], "t") ||
			!strings.HasPrefix(row["{#JMXOBJ}"], "peregrine:") {
			t.Errorf("jmx.discovery[beans] row %v", row)
		}
	}
	if err := json.Unmarshal([]byte(value(5)), &disc); err != nil || len(disc.Data) != 4 {
		t.Fatalf("jmx.discovery[attributes]: %v %s", err, value(5))
	}
	attrs := map[string]string{}
	for _, row := range disc.Data {
		attrs[row["{#JMXATTR}"]] = row["{#JMXTYPE}"]
	}
	if attrs["Count"] != "java.lang.Integer" || attrs["Name"] != "java.lang.String" || attrs["Ratio"] != "java.lang.Double" || attrs["Total"] != "java.lang.Long" {
		t.Errorf("jmx.discovery[attributes] types %v", attrs)
	}
	var beans []map[string]any
	if err := json.Unmarshal([]byte(value(6)), &beans); err != nil || len(beans) != 3 {
		t.Errorf("jmx.get[beans]: %v %s", err, value(6))
	}
	var attrRows []map[string]any
	if err := json.Unmarshal([]byte(value(7)), &attrRows); err != nil || len(attrRows) != 4 {
		t.Errorf("jmx.get[attributes]: %v %s", err, value(7))
	}
	// The gateway's errors, as the 6.0 server shows them (texts of the
	// same kinds recorded from 6.0.14 in testdata/wire/batch-resp.bin).
	for i, want := range map[int]string{
		8:  "Attribute not found: No such attribute: Nope",
		9:  "Data object type cannot be converted to string.",
		10: "key ID 'jmx.foo' is not supported",
	} {
		if r := got[uint64(i+1)]; r.Status != poll.NotSupported || r.Error != want {
			t.Errorf("%s: %s %q, want not supported %q", keys[i], r.Status, r.Error, want)
		}
	}
	if n := counter(t, m, "peregrine_poll_jmx_requests_total"); n != 1 {
		t.Errorf("%d requests for %d keys of one interface, want 1", n, len(keys))
	}

	// 40 keys: 32 in one request, 8 in the next, as the 6.0 server
	// splits them (testdata/wire/max-keys-req.bin).
	batch = batch[:0]
	for i := range 40 {
		batch = append(batch, poll.Check{ItemID: uint64(100 + i), InterfaceID: 7, Addr: app.Addr, Timeout: 10 * time.Second,
			Key: fmt.Sprintf(`jmx["peregrine:type=Test,name=t%d",Count,%d]`, i%3, i)})
	}
	got, _ = collect(t, c, batch)
	for i, ch := range batch {
		if r := got[ch.ItemID]; r.Status != poll.OK || string(r.Value) != strconv.Itoa(i%3) {
			t.Errorf("%s: %s %q %q", ch.Key, r.Status, r.Value, r.Error)
		}
	}
	if n := counter(t, m, "peregrine_poll_jmx_requests_total"); n != 3 {
		t.Errorf("%d requests after 40 more keys, want 1 + 2", n-1)
	}
}

// TestIntegrationJMXCredentials: a JVM with authentication, the
// credentials from the item with user macros of its host resolved; the
// JVM's refusals as the items' not supported reasons, as the 6.0 server
// shows them (testdata/wire/auth-wrong-resp.bin); no password logged.
func TestIntegrationJMXCredentials(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the Java gateway and a JVM")
	}
	const pass = "pw-4c1d-very-secret"
	app := testutil.StartJMXApp(t, testutil.JMXAppOptions{Username: "monitorRole", Password: pass})
	gw := testutil.StartJavaGateway(t, testutil.JavaGatewayOptions{})
	refused := closedPort(t)
	_, refusedPort, _ := net.SplitHostPort(refused)
	macros := []catalog.MacroSpec{{Macro: "{$JMX.USER}", Value: "monitorRole"}, {Macro: "{$JMX.PASS}", Value: pass, Type: "SECRET_TEXT"}}
	withMacros := catalog.HTTPSpec{Username: "{$JMX.USER}", Password: "{$JMX.PASS}"}
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "app", Groups: []string{"G"},
		Interfaces: []catalog.InterfaceSpec{{Type: "jmx", IP: "127.0.0.1", Port: strconv.Itoa(app.Port)}},
		Macros:     macros,
		Items: []catalog.ItemSpec{
			{Key: `jmx["java.lang:type=Runtime",VmName]`, Type: "jmx", ValueType: "character", HTTPSpec: withMacros},
			{Key: `jmx["java.lang:type=Runtime",VmVendor]`, Type: "jmx", ValueType: "character", HTTPSpec: catalog.HTTPSpec{Username: "monitorRole", Password: "wrong"}},
			{Key: `jmx["java.lang:type=Runtime",SpecName]`, Type: "jmx", ValueType: "character"},
		}}, {Host: "gone", Groups: []string{"G"},
		Interfaces: []catalog.InterfaceSpec{{Type: "jmx", IP: "127.0.0.1", Port: refusedPort}},
		Macros:     macros,
		Items:      []catalog.ItemSpec{{Key: `jmx["java.lang:type=Runtime",VmName]`, Type: "jmx", ValueType: "character", HTTPSpec: withMacros}},
	}}})
	snap := cat.Snapshot()
	var logs bytes.Buffer
	var logMu sync.Mutex
	m := selfmon.NewRegistry()
	c := New(Options{Gateway: gw.Addr, Item: snap.Item, Metrics: m,
		Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, nil))})
	var batch []poll.Check
	for _, name := range []string{"app", "gone"} {
		h := snap.Host(name)
		for _, it := range h.Items() {
			addr := snap.Interface(it.InterfaceID).Addr()
			batch = append(batch, poll.Check{ItemID: it.ID, HostID: h.ID, InterfaceID: it.InterfaceID, Key: it.Key, Addr: addr, Timeout: 10 * time.Second})
		}
	}
	got, _ := collect(t, c, batch)
	want := map[string]string{
		`jmx["java.lang:type=Runtime",VmVendor]`: "Invalid username or password",
		`jmx["java.lang:type=Runtime",SpecName]`: "Authentication failed! Credentials required",
	}
	for _, it := range snap.Host("app").Items() {
		r := got[it.ID]
		if w, ok := want[it.Key]; ok {
			if r.Status != poll.NotSupported || r.Error != w {
				t.Errorf("%s: %s %q, want not supported %q", it.Key, r.Status, r.Error, w)
			}
		} else if r.Status != poll.OK || !strings.Contains(string(r.Value), "VM") {
			t.Errorf("with the right credentials from macros: %s %q %q", r.Status, r.Value, r.Error)
		}
	}
	gone := snap.Host("gone").Items()[0]
	if r := got[gone.ID]; r.Status != poll.NetworkError || !strings.HasPrefix(r.Error, "Connection refused: ") {
		t.Errorf("a JVM that is gone: %s %q", r.Status, r.Error)
	}
	if n := counter(t, m, "peregrine_poll_jmx_requests_total"); n != 4 {
		t.Errorf("%d requests for three sets of credentials and two interfaces, want 4", n)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !strings.Contains(logs.String(), "JMX checks failed") {
		t.Errorf("the JVM that is gone was not logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), pass) || strings.Contains(logs.String(), "wrong") {
		t.Errorf("a password was logged:\n%s", logs.String())
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestIntegrationJMXUnreachable: a JVM that refuses, a JVM that
// accepts and stays silent, a gateway that refuses and one that stays
// silent: each costs its own checks one timeout (or less), counted, and
// delays no other check.
func TestIntegrationJMXUnreachable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the Java gateway and a JVM")
	}
	app := testutil.StartJMXApp(t, testutil.JMXAppOptions{})
	gw := testutil.StartJavaGateway(t, testutil.JavaGatewayOptions{Timeout: 30})
	refused := closedPort(t)
	silent := silentListener(t)
	const timeout = 3 * time.Second

	t.Run("JVM", func(t *testing.T) {
		m := selfmon.NewRegistry()
		c := New(Options{Gateway: gw.Addr, Metrics: m})
		batch := []poll.Check{
			{ItemID: 1, InterfaceID: 1, Key: `jmx["java.lang:type=Runtime",Uptime]`, Addr: silent, Timeout: timeout},
			{ItemID: 2, InterfaceID: 2, Key: `jmx["java.lang:type=Runtime",Uptime]`, Addr: refused, Timeout: timeout},
			{ItemID: 3, InterfaceID: 3, Key: `jmx["java.lang:type=Runtime",VmName]`, Addr: app.Addr, Timeout: timeout},
			{ItemID: 4, InterfaceID: 3, Key: `jmx["java.lang:type=Runtime",Uptime]`, Addr: app.Addr, Timeout: timeout},
		}
		start := time.Now()
		got, order := collect(t, c, batch)
		if r := got[1]; r.Status != poll.NetworkError || !strings.Contains(r.Error, "timeout while waiting for the reply of the Java gateway") {
			t.Errorf("silent JVM: %s %q", r.Status, r.Error)
		}
		if d := got[1].Clock.Sub(start); d < timeout {
			t.Errorf("silent JVM reported after %v, before its timeout %v", d, timeout)
		}
		// The gateway's words, as 6.0.14 showed them (testdata/wire/refused-resp.bin).
		if r := got[2]; r.Status != poll.NetworkError || r.Error != "Connection refused: service:jmx:rmi:///jndi/rmi://"+refused+"/jmxrmi" {
			t.Errorf("refusing JVM: %s %q", r.Status, r.Error)
		}
		for _, id := range []uint64{3, 4} {
			if r := got[id]; r.Status != poll.OK {
				t.Errorf("healthy JVM's item %d: %s %q", id, r.Status, r.Error)
			}
		}
		if order[len(order)-1] != 1 {
			t.Errorf("reports in the order %v: the silent JVM's check was not last, so it held another", order)
		}
		if n, f := counter(t, m, "peregrine_poll_jmx_errors_total", "reason", "timeout"), counter(t, m, "peregrine_poll_jmx_errors_total", "reason", "failed"); n != 1 || f != 1 {
			t.Errorf("timeouts %d, failed replies %d: want one each", n, f)
		}
	})

	t.Run("gateway", func(t *testing.T) {
		for _, c := range []struct {
			name, gateway, reason, want string
		}{
			{"refused", refused, "connect_failed", "cannot connect to the Java gateway " + refused + ": connection refused (errno 111)"},
			{"silent", silent, "timeout", "timeout while waiting for the reply of the Java gateway " + silent + " (3s)"},
		} {
			m := selfmon.NewRegistry()
			chk := New(Options{Gateway: c.gateway, Metrics: m})
			batch := []poll.Check{
				{ItemID: 1, InterfaceID: 1, Key: `jmx["java.lang:type=Runtime",Uptime]`, Addr: app.Addr, Timeout: timeout},
				{ItemID: 2, InterfaceID: 1, Key: `jmx["java.lang:type=Runtime",VmName]`, Addr: app.Addr, Timeout: timeout},
				{ItemID: 3, InterfaceID: 2, Key: `jmx["java.lang:type=Runtime",VmName]`, Addr: refused, Timeout: timeout},
			}
			start := time.Now()
			got, _ := collect(t, chk, batch)
			for id, r := range got {
				if r.Status != poll.NetworkError || r.Error != c.want {
					t.Errorf("%s gateway, item %d: %s %q, want a network error %q", c.name, id, r.Status, r.Error, c.want)
				}
			}
			if d := time.Since(start); d > timeout+5*time.Second {
				t.Errorf("%s gateway: checks reported after %v, beyond one timeout (%v)", c.name, d, timeout)
			}
			// One failure per check, two requests (two interfaces).
			if n := counter(t, m, "peregrine_poll_jmx_errors_total", "reason", c.reason); n != 3 {
				t.Errorf("%s gateway: %d errors counted as %s, want 3", c.name, n, c.reason)
			}
			if n := counter(t, m, "peregrine_poll_jmx_requests_total"); c.name == "silent" && n != 2 {
				t.Errorf("silent gateway: %d requests, want one per interface", n)
			}
		}
	})
}

// closedPort is a loopback address nothing listens on.
func closedPort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
