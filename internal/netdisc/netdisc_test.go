package netdisc

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// fakeChecker answers from a table of "ip:port" (or ip for ICMP) to
// value; anything else is a network error. It answers from its own
// goroutines, as real checkers do.
type fakeChecker struct {
	mu  sync.Mutex
	up  map[string]string
	got []string
}

func (f *fakeChecker) Check(_ context.Context, batch []poll.Check, done func(*poll.Result)) {
	for _, c := range batch {
		go func() {
			f.mu.Lock()
			v, ok := f.up[c.Addr]
			f.got = append(f.got, c.Key)
			f.mu.Unlock()
			if !ok {
				done(&poll.Result{Check: c, Status: poll.NetworkError, Error: "refused"})
				return
			}
			done(&poll.Result{Check: c, Status: poll.OK, Value: []byte(v), Clock: time.Now()})
		}()
	}
}

func (f *fakeChecker) set(addr, v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v == "" {
		delete(f.up, addr)
		return
	}
	f.up[addr] = v
}

// TestSweepFake: state, events and actions without a network. Two of
// four addresses answer ICMP; one also has an agent. The action
// (received value like "web", service type agent, port 10050, address
// in 10.0.0.0/24, uptime <= 3600) adds the agent's host named by the
// agent's value (host source 3) with the IP as visible name (name
// source 2), disabled, in group 2.
func TestSweepFake(t *testing.T) {
	ctx := context.Background()
	c := openCatalog(t)
	ev := &events{}
	icmpF := &fakeChecker{up: map[string]string{"10.0.0.1": "1", "10.0.0.2": "1"}}
	agentF := &fakeChecker{up: map[string]string{"10.0.0.2:10050": "web-01"}}
	tcpF := &fakeChecker{up: map[string]string{}}
	snmpCalls := 0
	var smu sync.Mutex
	d, err := New(Options{Catalog: c, Events: ev, ICMP: icmpF, Agent: agentF, TCP: tcpF, DiscoveryGroup: func() uint64 { return 5 },
		SNMP: func(ctx context.Context, r SNMPRequest) (string, error) {
			smu.Lock()
			snmpCalls++
			smu.Unlock()
			return "", net.ErrClosed
		}, ChunkSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	err = c.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		id := cfg.NextID("action")
		cfg.Actions[id] = &catalog.Action{ID: id, Name: "web", EventSource: catalog.SourceDiscovery, Period: "1h",
			Filter: catalog.Filter{Conditions: []catalog.Condition{
				{ConditionType: catalog.CondDValue, Operator: catalog.OpLike, Value: "web"},
				{ConditionType: catalog.CondDServiceType, Operator: catalog.OpEqual, Value: "9"},
				{ConditionType: catalog.CondDServicePort, Operator: catalog.OpEqual, Value: "10000-10100"},
				{ConditionType: catalog.CondDHostIP, Operator: catalog.OpEqual, Value: "10.0.0.0/24"},
				{ConditionType: catalog.CondDUptime, Operator: catalog.OpLessEq, Value: "3600"},
				{ConditionType: catalog.CondDObject, Operator: catalog.OpEqual, Value: "2"}}},
			Operations: []catalog.Operation{{OperationType: catalog.OpDisableHost, StepFrom: 1, StepTo: 1},
				{OperationType: catalog.OpAddToGroup, OpGroups: []uint64{2}, StepFrom: 1, StepTo: 1}}}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := c.SaveDRules(ctx, []catalog.DRule{{Name: "fake", IPRange: "10.0.0.1-4", Delay: "1h", Checks: []catalog.DCheck{
		{Type: catalog.DCheckICMP, Ports: "0", HostSource: 1},
		{Type: catalog.DCheckAgent, Key: "system.hostname", Ports: "10050", HostSource: 3, NameSource: 2, Uniq: true},
		{Type: catalog.DCheckSSH, Ports: "0", HostSource: 1},
		{Type: catalog.DCheckSNMPv2, Key: ".1.3", SNMPCommunity: "public", Ports: "161", HostSource: 1},
	}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.Sweep(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if st.Addresses != 4 || st.Checks != 16 || st.Up != 3 || st.Hosts != 1 || snmpCalls != 4 {
		t.Fatalf("sweep: %+v, %d SNMP calls", st, snmpCalls)
	}
	if !strings.Contains(strings.Join(tcpF.got, " "), "net.tcp.service[ssh,,22]") {
		t.Fatalf("TCP keys %v: port 0 is the service's standard port", tcpF.got)
	}
	h := c.Snapshot().Host("web-01")
	if h == nil || h.Name != "10.0.0.2" || h.Enabled || len(h.Interfaces) != 1 || h.Interfaces[0].IP != "10.0.0.2" || h.Interfaces[0].Port != "10050" {
		t.Fatalf("host: %+v", h)
	}
	if len(h.GroupIDs) != 2 || h.GroupIDs[0] != 2 || h.GroupIDs[1] != 5 {
		t.Fatalf("groups %v, want 2 and the discovery group 5", h.GroupIDs)
	}
	if n := len(c.Discovery().Hosts); n != 2 {
		t.Fatalf("%d discovered hosts", n)
	}
	l := ev.take()
	if len(l) != 4+6 {
		t.Fatalf("%d events: %+v", len(l), l)
	}
	// Matches, as the alert engine asks it: the agent's service event
	// holds, the host's ICMP-only event does not (no agent service).
	acts := c.AlertConfig().SortedActions()
	a := acts[len(acts)-1]
	var svcOK, hostICMP bool
	for i := range l {
		e := &l[i]
		if e.Object == ObjectDService && e.Value == 0 && d.Matches(a, e) {
			svcOK = true
		}
		if e.Object == ObjectDHost && c.Discovery().Hosts[e.ObjectID] != nil && d.Matches(a, e) {
			hostICMP = hostICMP || len(servicesOfHost(c.Discovery(), e.ObjectID)) == 1
		}
	}
	if !svcOK || hostICMP {
		t.Fatalf("Matches: service %v, ICMP-only host %v", svcOK, hostICMP)
	}
	for i := range l {
		if l[i].Object != ObjectDService {
			continue
		}
		m := d.Macros(&l[i])
		if m["DISCOVERY.SERVICE.NAME"] == "Zabbix agent" {
			if m["DISCOVERY.DEVICE.IPADDRESS"] != "10.0.0.2" || m["DISCOVERY.SERVICE.PORT"] != "10050" || m["DISCOVERY.SERVICE.VALUE"] != "web-01" ||
				m["DISCOVERY.SERVICE.STATUS"] != "Up" || m["DISCOVERY.RULE.NAME"] != "fake" || m["DISCOVERY.DEVICE.STATUS"] != "Up" {
				t.Fatalf("macros: %v", m)
			}
			svcOK = false
		}
	}
	if svcOK {
		t.Fatal("no agent service event had macros")
	}
	// The device changes its address: the unique check's value finds
	// the same discovered host.
	icmpF.set("10.0.0.2", "")
	agentF.set("10.0.0.2:10050", "")
	icmpF.set("10.0.0.3", "1")
	agentF.set("10.0.0.3:10050", "web-01")
	if _, err := d.Sweep(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if n := len(c.Discovery().Hosts); n != 2 {
		t.Fatalf("%d discovered hosts after the move, want 2 (one by its unique value)", n)
	}
	// A deleted rule takes its hosts and services with it.
	if _, err := c.SaveDRules(ctx, nil, ids); err != nil {
		t.Fatal(err)
	}
	if st := c.Discovery(); len(st.Hosts)+len(st.Services) != 0 {
		t.Fatalf("after delete: %d hosts", len(st.Hosts))
	}
}

func servicesOfHost(st *catalog.DiscoveryState, id uint64) []*catalog.DService {
	var out []*catalog.DService
	for _, s := range st.Services {
		if s.DHostID == id {
			out = append(out, s)
		}
	}
	return out
}

func TestRunSchedules(t *testing.T) {
	c := openCatalog(t)
	ev := &events{}
	icmpF := &fakeChecker{up: map[string]string{"10.9.0.1": "1"}}
	d, err := New(Options{Catalog: c, Events: ev, ICMP: icmpF})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SaveDRules(context.Background(), []catalog.DRule{{Name: "one", IPRange: "10.9.0.1", Delay: "1", Checks: []catalog.DCheck{
		{Type: catalog.DCheckICMP, Ports: "0", HostSource: 1}}}}, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	for end := time.Now().Add(20 * time.Second); len(c.Discovery().Hosts) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the rule never swept")
		}
	}
	cancel()
	<-done
	if l := ev.take(); len(l) == 0 || l[0].Source != event.SourceDiscovery {
		t.Fatalf("events: %+v", l)
	}
}

func TestHelpers(t *testing.T) {
	for in, want := range map[string]string{"Linux vm 6.1 #1": "Linux vm 6.1 _1", " a.b-c_d ": "a.b-c_d", "é": "__"} {
		if got := hostName(in); got != want {
			t.Errorf("hostName(%q) = %q, want %q", in, got, want)
		}
	}
	for _, c := range []struct {
		op    int
		v, w  string
		holds bool
	}{{catalog.OpGreaterEq, "10", "9", true}, {catalog.OpLessEq, "10", "9", false}, {catalog.OpGreaterEq, "b", "a", true},
		{catalog.OpNotEqual, "a", "a", false}, {catalog.OpNotLike, "abc", "x", true}} {
		if got := valueHolds(c.op, c.v, c.w); got != c.holds {
			t.Errorf("valueHolds(%d, %q, %q) = %v", c.op, c.v, c.w, got)
		}
	}
	for in, want := range map[string]int64{"1": 1, "1h": 3600, "7d": 604800, "1w": 604800, "8d": 0, "0": 0, "x": 0} {
		if got, _ := parseDelay(in); got != want {
			t.Errorf("parseDelay(%q) = %d, want %d", in, got, want)
		}
	}
}

// blockingChecker answers only when its check's context ends, as a
// network error (as checkers must).
type blockingChecker struct{ started atomic.Int64 }

func (b *blockingChecker) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	for _, c := range batch {
		b.started.Add(1)
		go func() {
			<-ctx.Done()
			done(&poll.Result{Check: c, Status: poll.NetworkError, Error: "abandoned"})
		}()
	}
}

// TestSweepBounded: a rule of every port on a /24 starts at most
// MaxInFlight checks, chunks of one address at most 65,536 probes, and a
// cancelled sweep returns without recording anything.
func TestSweepBounded(t *testing.T) {
	c := openCatalog(t)
	ev := &events{}
	b := &blockingChecker{}
	d, err := New(Options{Catalog: c, Events: ev, TCP: b, MaxInFlight: 100})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := c.SaveDRules(context.Background(), []catalog.DRule{{Name: "all ports", IPRange: "10.8.0.0/24", Delay: "1h",
		Checks: []catalog.DCheck{{Type: catalog.DCheckTCP, Ports: "1-65535", HostSource: 1}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := d.Sweep(ctx, ids[0]); errc <- err }()
	for end := time.Now().Add(10 * time.Second); b.started.Load() < 100; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%d checks started", b.started.Load())
		}
	}
	time.Sleep(50 * time.Millisecond)
	if n := b.started.Load(); n != 100 {
		t.Fatalf("%d checks started, want MaxInFlight (100)", n)
	}
	cancel()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("cancelled sweep: %v", err)
	}
	if len(ev.take()) != 0 || len(c.Discovery().Hosts) != 0 {
		t.Fatal("a cancelled sweep recorded something")
	}
}

// lateChecker answers each address "0" (down) after the check's whole
// timeout the first time, as a TCP probe that waited for a CPU past its
// deadline does, and "1" (up) after that.
type lateChecker struct {
	mu    sync.Mutex
	calls map[string]int
}

func (l *lateChecker) Check(_ context.Context, batch []poll.Check, done func(*poll.Result)) {
	for _, c := range batch {
		go func() {
			l.mu.Lock()
			l.calls[c.Addr]++
			first := l.calls[c.Addr] == 1
			l.mu.Unlock()
			v := "1"
			if first {
				time.Sleep(c.Timeout)
				v = "0"
			}
			done(&poll.Result{Check: c, Status: poll.OK, Value: []byte(v), Clock: time.Now()})
		}()
	}
}

type fixedLag time.Duration

func (f fixedLag) Stalled(_, _ time.Time) time.Duration { return time.Duration(f) }

// TestSweepLateProbeRetried: a probe found down after running out its
// timeout while the server was behind is run again and finds the
// service up; with no lag the same probe is taken as down.
func TestSweepLateProbeRetried(t *testing.T) {
	for _, tc := range []struct {
		name string
		lag  time.Duration
		up   bool
	}{{"behind", time.Hour, true}, {"on time", 0, false}} {
		t.Run(tc.name, func(t *testing.T) {
			c := openCatalog(t)
			ev := &events{}
			chk := &lateChecker{calls: map[string]int{}}
			reg := selfmon.NewRegistry()
			d, err := New(Options{Catalog: c, Events: ev, TCP: chk, Timeout: 50 * time.Millisecond, Lag: fixedLag(tc.lag), Metrics: reg})
			if err != nil {
				t.Fatal(err)
			}
			ids, err := c.SaveDRules(context.Background(), []catalog.DRule{{Name: "late", IPRange: "10.9.0.1-4", Delay: "1h",
				Checks: []catalog.DCheck{{Type: catalog.DCheckTCP, Ports: "22", HostSource: 1}}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			st, err := d.Sweep(context.Background(), ids[0])
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 4, false: 0}[tc.up]; st.Up != want {
				t.Fatalf("%d of 4 services up, want %d", st.Up, want)
			}
			var b strings.Builder
			reg.WriteText(&b)
			retried := map[bool]string{true: "4", false: "0"}[tc.up]
			if !strings.Contains(b.String(), `peregrine_netdisc_probes_retried_total{reason="server_behind"} `+retried) {
				t.Errorf("retries not counted as %s", retried)
			}
		})
	}
}

// TestSweepResolvesConcurrently: a chunk's reverse lookups run side by
// side (Options.Resolve), each address that answered gets its name, and
// one that did not is not looked up.
func TestSweepResolvesConcurrently(t *testing.T) {
	c := openCatalog(t)
	ev := &events{}
	f := &fakeChecker{up: map[string]string{}}
	for i := 1; i <= 40; i++ {
		f.up["10.7.0."+strconv.Itoa(i)+":22"] = "1"
	}
	var inFlight, peak atomic.Int64
	var asked atomic.Int64
	resolve := func(_ context.Context, ip string) string {
		asked.Add(1)
		n := inFlight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(20 * time.Millisecond)
		inFlight.Add(-1)
		return "h-" + ip
	}
	d, err := New(Options{Catalog: c, Events: ev, TCP: f, Resolve: resolve})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := c.SaveDRules(context.Background(), []catalog.DRule{{Name: "dns", IPRange: "10.7.0.1-50", Delay: "1h",
		Checks: []catalog.DCheck{{Type: catalog.DCheckTCP, Ports: "22", HostSource: 1}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Sweep(context.Background(), ids[0]); err != nil {
		t.Fatal(err)
	}
	if asked.Load() != 40 {
		t.Fatalf("%d lookups for 40 addresses that answered", asked.Load())
	}
	if peak.Load() < 2 {
		t.Fatalf("lookups ran one at a time")
	}
	svcs := c.Discovery().Services
	if len(svcs) != 40 {
		t.Fatalf("%d services, want 40", len(svcs))
	}
	for _, sv := range svcs {
		if sv.DNS != "h-"+sv.IP {
			t.Fatalf("service %s has DNS %q", sv.IP, sv.DNS)
		}
	}
}
