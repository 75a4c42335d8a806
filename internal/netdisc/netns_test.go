package netdisc

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/poll/agent"
	"github.com/peregrine-mon/peregrine/internal/poll/icmp"
	"github.com/peregrine-mon/peregrine/internal/poll/tcpsvc"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// netnsEnv names the test a re-executed test binary runs inside its own
// network namespace.
const netnsEnv = "PEREGRINE_NETDISC_NETNS_TEST"

// inNetns runs the calling test in a fresh network namespace (`unshare
// -rn`, as package poll/icmp's namespace tests): outside, it re-executes
// the test binary for this test only, reports its outcome and returns
// false; inside it brings up the loopback, runs the ip(8) batch lines
// and returns true. The namespace has no interface but its loopback:
// nothing a sweep sends can leave the machine.
func inNetns(t *testing.T, ipBatch []string) bool {
	t.Helper()
	if os.Getenv(netnsEnv) == t.Name() {
		ip := testutil.Need(t, "ip", "iproute2")
		cmd := exec.Command(ip, "-batch", "-")
		cmd.Stdin = strings.NewReader(strings.Join(append([]string{"link set lo up"}, ipBatch...), "\n") + "\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ip -batch in the namespace: %v\n%s", err, out)
		}
		if err := os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte("0 0"), 0o644); err != nil {
			t.Logf("cannot allow datagram ICMP sockets here: %v", err)
		}
		return true
	}
	unshare := testutil.Need(t, "unshare", "util-linux")
	testutil.Need(t, "ip", "iproute2")
	cmd := exec.Command(unshare, "-rn", os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), netnsEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	text := string(out)
	switch {
	case err != nil && strings.Contains(text, "unshare failed") && os.Getenv("CI") == "":
		t.Skipf("cannot create a network namespace here: %s", strings.TrimSpace(text))
	case err != nil:
		t.Fatalf("the test in its namespace failed: %v\n%s", err, text)
	case strings.Contains(text, "--- SKIP: "+t.Name()+" ("):
		t.Skipf("skipped in its namespace:\n%s", text)
	case !strings.Contains(text, "--- PASS: "+t.Name()+" ("):
		t.Fatalf("the test in its namespace did not pass:\n%s", text)
	}
	t.Logf("in its namespace:\n%s", text)
	return false
}

// startAgentd starts the real zabbix_agentd listening on listen
// (host:port) for passive checks from anybody in the namespace; stop
// ends it.
func startAgentd(t *testing.T, listenIP string, port int) (stop func()) {
	t.Helper()
	bin := testutil.Need(t, "zabbix_agentd", "zabbix-agent")
	dir := t.TempDir()
	conf := filepath.Join(dir, "zabbix_agentd.conf")
	text := fmt.Sprintf("Server=0.0.0.0/0\nListenIP=%s\nListenPort=%d\nStartAgents=8\nHostname=netdisc-test\nLogType=console\nPidFile=%s\nTimeout=3\nAllowRoot=1\n",
		listenIP, port, filepath.Join(dir, "agentd.pid"))
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-f", "-c", conf)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
		})
	}
	t.Cleanup(stop)
	addr := net.JoinHostPort(listenIP, fmt.Sprint(port))
	if listenIP == "0.0.0.0" {
		addr = net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	}
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return stop
		}
		if time.Now().After(end) {
			t.Fatalf("zabbix_agentd not listening on %s:\n%s", addr, out.String())
		}
	}
}

// events collects committed events.
type events struct {
	mu sync.Mutex
	l  []event.Event
}

func (e *events) Commit(b *event.Batch) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.l = append(e.l, b.Events...)
	return nil
}

func (e *events) take() []event.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	l := e.l
	e.l = nil
	return l
}

func openCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Open(context.Background(), catalog.Options{Path: filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.EnsureDefaults(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

func newDiscoverer(t *testing.T, c *catalog.Catalog, ev *events, group uint64) *Discoverer {
	t.Helper()
	m := selfmon.NewRegistry()
	ic := icmp.New(icmp.Options{Metrics: m})
	t.Cleanup(func() { ic.Close() })
	d, err := New(Options{Catalog: c, Events: ev, ICMP: ic, Agent: agent.New(agent.Options{Metrics: m}), TCP: tcpsvc.New(tcpsvc.Options{Metrics: m}),
		DiscoveryGroup: func() uint64 { return group }, Timeout: 2 * time.Second, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// addHostAction is a discovery action: host discovered or up → add host,
// add to group 2 ("Linux servers").
func addHostAction(t *testing.T, c *catalog.Catalog) {
	t.Helper()
	err := c.EditAlerts(context.Background(), func(cfg *catalog.AlertConfig) error {
		id := cfg.NextID("action")
		cfg.Actions[id] = &catalog.Action{ID: id, Name: "netdisc add", EventSource: catalog.SourceDiscovery, Period: "1h",
			Filter: catalog.Filter{Conditions: []catalog.Condition{
				{ConditionType: catalog.CondDObject, Operator: catalog.OpEqual, Value: "1"},
				{ConditionType: catalog.CondDStatus, Operator: catalog.OpEqual, Value: "0"}}},
			Operations: []catalog.Operation{{OperationType: catalog.OpAddHost, StepFrom: 1, StepTo: 1},
				{OperationType: catalog.OpAddToGroup, OpGroups: []uint64{2}, StepFrom: 1, StepTo: 1}}}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSweep1000Netns: 1,000 live addresses (10.1.0-3.1-250, local in the
// namespace, a real zabbix_agentd on 0.0.0.0:10050 answering for all)
// and 1,000 dead ones (10.3.0-3.1-250, routed into the loopback, where
// they vanish: only timeouts tell) swept with ICMP ping and a Zabbix
// agent check; a discovery action creates a host for each live address.
// The sweep time is logged (no timed assertion): it must stay near the
// checks' timeout, not 1,000 of them.
func TestSweep1000Netns(t *testing.T) {
	if !inNetns(t, []string{"route add local 10.1.0.0/22 dev lo", "route add 10.3.0.0/16 dev lo"}) {
		return
	}
	startAgentd(t, "0.0.0.0", 10050)
	c := openCatalog(t)
	ev := &events{}
	d := newDiscoverer(t, c, ev, 5)
	addHostAction(t, c)
	ids, err := c.SaveDRules(context.Background(), []catalog.DRule{{Name: "netns", IPRange: "10.1.0-3.1-250,10.3.0-3.1-250", Delay: "1h",
		Checks: []catalog.DCheck{{Type: catalog.DCheckICMP, Ports: "0", HostSource: 1}, {Type: catalog.DCheckAgent, Key: "agent.ping", Ports: "10050", HostSource: 1}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.Sweep(context.Background(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first sweep: %+v", st)
	if st.Addresses != 2000 || st.Checks != 4000 || st.Up != 2000 || st.Hosts != 1000 {
		t.Fatalf("first sweep: %+v, want 2000 addresses, 4000 checks, 2000 up, 1000 hosts", st)
	}
	snap := c.Snapshot()
	if h := snap.Host("10.1.2.17"); h == nil || len(h.Interfaces) != 1 || h.Interfaces[0].Port != "10050" || len(h.GroupIDs) != 2 {
		t.Fatalf("host 10.1.2.17: %+v", h)
	}
	if snap.Host("10.3.0.1") != nil {
		t.Fatal("a host for a dead address")
	}
	if n := len(c.Discovery().Hosts); n != 1000 {
		t.Fatalf("%d discovered hosts", n)
	}
	// Per live address, as 6.0.14 (recorded): ICMP discovered, host
	// discovered, ICMP up, agent discovered, agent up, host up.
	if l := ev.take(); len(l) != 6000 || l[0].Object != ObjectDService || l[0].Value != 2 || l[1].Object != ObjectDHost || l[1].Value != 2 ||
		l[2].Value != 0 || l[5].Object != ObjectDHost || l[5].Value != 0 {
		t.Fatalf("%d events, want 6 per live address: %+v", len(l), l[:min(6, len(l))])
	}
	st, err = d.Sweep(context.Background(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("second sweep: %+v", st)
	if st.Hosts != 0 || st.Events != 3000 {
		t.Fatalf("second sweep: %+v, want 3000 events (up only), no new host", st)
	}
}

// TestAgentSnmpdNetns: the real zabbix_agentd on 127.0.0.2:10050 and
// snmpd on 127.0.0.1 (v2c and v3 authPriv) discovered in a namespace,
// with ICMP on 127.0.0.1-3. Shapes as the 6.0.14 peer gave them for the
// same rule over 127.0.0.4-7 (recorded: dhost.get with selectDServices,
// event.get source 1): one host per answering address, one service per
// check and port that answered, the agent's and SNMP's value kept (also
// once the service is down), ICMP and TCP with value "" and ICMP port
// 0; events per new address: service discovered (2), host discovered
// (2), service up (0), each further service discovered and up, host up
// last. Once the agent stops: its service lost (3) then down (1), the
// host still up (ICMP), lastup 0 and lastdown set on the service.
func TestAgentSnmpdNetns(t *testing.T) {
	if !inNetns(t, nil) {
		return
	}
	snmpd := testutil.StartSnmpd(t)
	_, snmpPort, _ := net.SplitHostPort(snmpd.Addr)
	stopAgent := startAgentd(t, "127.0.0.2", 10050)
	c := openCatalog(t)
	ev := &events{}
	d := newDiscoverer(t, c, ev, 5)
	ids, err := c.SaveDRules(context.Background(), []catalog.DRule{{Name: "small", IPRange: "127.0.0.1-3", Delay: "1h",
		Checks: []catalog.DCheck{
			{Type: catalog.DCheckICMP, Ports: "0", HostSource: 1},
			{Type: catalog.DCheckAgent, Key: "agent.hostname", Ports: "10050", HostSource: 1},
			{Type: catalog.DCheckSNMPv2, Key: ".1.3.6.1.2.1.1.5.0", SNMPCommunity: snmpd.Community, Ports: snmpPort, HostSource: 1},
			{Type: catalog.DCheckSNMPv3, Key: ".1.3.6.1.2.1.1.6.0", Ports: snmpPort, SNMPv3SecurityName: testutil.SnmpdUserSHAAES,
				SNMPv3SecurityLevel: 2, SNMPv3AuthProtocol: 1, SNMPv3AuthPassphrase: snmpd.AuthPass, SNMPv3PrivProtocol: 1,
				SNMPv3PrivPassphrase: snmpd.PrivPass, HostSource: 1},
			{Type: catalog.DCheckTCP, Ports: "10050", HostSource: 1},
		}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := c.DRule(ids[0])
	if _, err := d.Sweep(context.Background(), ids[0]); err != nil {
		t.Fatal(err)
	}
	st := c.Discovery()
	if len(st.Hosts) != 3 {
		t.Fatalf("%d hosts, want 3", len(st.Hosts))
	}
	byIP := map[string]map[uint64]*catalog.DService{}
	for _, s := range st.Services {
		if byIP[s.IP] == nil {
			byIP[s.IP] = map[uint64]*catalog.DService{}
		}
		byIP[s.IP][s.DCheckID] = s
	}
	icmpID, agentID, v2ID, v3ID, tcpID := r.Checks[0].ID, r.Checks[1].ID, r.Checks[2].ID, r.Checks[3].ID, r.Checks[4].ID
	one := byIP["127.0.0.1"]
	if len(one) != 3 || one[icmpID].Port != 0 || one[icmpID].Value != "" || one[v2ID].Value != snmpd.SysName ||
		one[v3ID].Value != snmpd.SysLocation || one[v2ID].Status != catalog.DStatusUp {
		t.Fatalf("127.0.0.1: %+v", one)
	}
	two := byIP["127.0.0.2"]
	if len(two) != 3 || two[agentID].Value != "netdisc-test" || two[agentID].Port != 10050 || two[tcpID].Value != "" {
		t.Fatalf("127.0.0.2: agent %+v tcp %+v (%d services)", two[agentID], two[tcpID], len(two))
	}
	if three := byIP["127.0.0.3"]; len(three) != 1 || three[icmpID] == nil {
		t.Fatalf("127.0.0.3: %+v", three)
	}
	l := ev.take()
	// 127.0.0.1 first: ICMP discovered, host discovered, ICMP up, v2
	// discovered, up, v3 discovered, up, host up.
	want := []struct{ obj, val uint8 }{{2, 2}, {1, 2}, {2, 0}, {2, 2}, {2, 0}, {2, 2}, {2, 0}, {1, 0}}
	for i, w := range want {
		if l[i].Source != event.SourceDiscovery || l[i].Object != w.obj || l[i].Value != w.val {
			t.Fatalf("event %d: %+v, want object %d value %d (all: %+v)", i, l[i], w.obj, w.val, l[:len(want)])
		}
	}
	stopAgent()
	if _, err := d.Sweep(context.Background(), ids[0]); err != nil {
		t.Fatal(err)
	}
	svc := c.Discovery().Services[two[agentID].ID]
	if svc.Status != catalog.DStatusDown || svc.LastUp != 0 || svc.LastDown == 0 || svc.Value != "netdisc-test" {
		t.Fatalf("the agent's service after it stopped: %+v", svc)
	}
	var lost, down int
	for _, e := range ev.take() {
		if e.Object == ObjectDService && e.ObjectID == svc.ID {
			switch e.Value {
			case catalog.DStatusLost:
				lost++
			case catalog.DStatusDown:
				down++
			}
		}
		if e.Object == ObjectDHost && e.ObjectID == svc.DHostID && e.Value != catalog.DStatusUp {
			t.Fatalf("host event %+v: the host is still up (ICMP)", e)
		}
	}
	if lost != 1 || down != 1 {
		t.Fatalf("agent service: %d lost, %d down events, want 1 and 1", lost, down)
	}
	// Survives a reopen of the catalog (state persisted).
	if h := c.Discovery().Hosts[svc.DHostID]; h == nil || h.Status != catalog.DStatusUp {
		t.Fatalf("host: %+v", h)
	}
}

// TestSweepTCPNetns is the side-by-side rule: 1,000 addresses with a TCP
// listener on port 17777 (10.1.0-3.1-250) and 1,000 that refuse
// (10.2.0-3.1-250, local without a listener), one TCP check; hosts
// created by a discovery action. The 6.0.14 peer ran the same rule over
// 127.1.0-3.1-250 and 127.2.0-3.1-250 (recorded: 1,000 dhosts, 1,000
// hosts, 2,000 host events; its one discoverer took about 97 s).
func TestSweepTCPNetns(t *testing.T) {
	if !inNetns(t, []string{"route add local 10.1.0.0/22 dev lo", "route add local 10.2.0.0/22 dev lo"}) {
		return
	}
	for c := 0; c < 4; c++ {
		for h := 1; h <= 250; h++ {
			ln, err := net.Listen("tcp", fmt.Sprintf("10.1.%d.%d:17777", c, h))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			go func() {
				for {
					conn, err := ln.Accept()
					if err != nil {
						return
					}
					conn.Close()
				}
			}()
		}
	}
	cat := openCatalog(t)
	ev := &events{}
	d := newDiscoverer(t, cat, ev, 5)
	addHostAction(t, cat)
	ids, err := cat.SaveDRules(context.Background(), []catalog.DRule{{Name: "tcp", IPRange: "10.1.0-3.1-250,10.2.0-3.1-250", Delay: "1h",
		Checks: []catalog.DCheck{{Type: catalog.DCheckTCP, Ports: "17777", HostSource: 1}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.Sweep(context.Background(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sweep: %+v", st)
	if st.Addresses != 2000 || st.Up != 1000 || st.Hosts != 1000 || st.Events != 4000 {
		t.Fatalf("sweep: %+v, want 2000 addresses, 1000 up, 1000 hosts, 4000 events", st)
	}
}
