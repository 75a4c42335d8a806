package snmp

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// env is a catalog of SNMP hosts and a checker reading it.
type env struct {
	cat *catalog.Catalog
	c   *Checker
	m   *selfmon.Registry
	ctx context.Context
}

func newEnv(t testing.TB, hosts []catalog.HostSpec, opts Options) *env {
	t.Helper()
	for i := range hosts {
		hosts[i].Groups = []string{"SNMP"}
	}
	cat := catalogtest.Open(t, catalog.Spec{Hosts: hosts})
	m := selfmon.NewRegistry()
	opts.Snapshot, opts.Metrics = cat.Snapshot, m
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &env{cat: cat, c: New(opts), m: m, ctx: ctx}
}

// snmpHost is a host with one SNMP interface at addr and SNMP items
// (key = snmp_oid unless the oid is given after a '=' in the key, as
// "name=oid").
func snmpHost(t testing.TB, name, addr string, details map[string]string, items ...string) catalog.HostSpec {
	t.Helper()
	ip, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	h := catalog.HostSpec{Host: name, Interfaces: []catalog.InterfaceSpec{{Type: "snmp", IP: ip, Port: port, Details: details}}}
	for _, it := range items {
		key, oid, ok := strings.Cut(it, "=")
		if !ok {
			oid = key
		}
		h.Items = append(h.Items, catalog.ItemSpec{Key: key, Type: "snmp_agent", ValueType: "text", SNMPOID: oid})
	}
	return h
}

// checks returns due checks of a host's items, by key.
func (e *env) checks(t testing.TB, host string, timeout time.Duration, keys ...string) []poll.Check {
	t.Helper()
	h := e.cat.Snapshot().Host(host)
	if h == nil {
		t.Fatalf("no host %s", host)
	}
	f := h.MainInterface(catalog.InterfaceSNMP)
	var out []poll.Check
	for _, k := range keys {
		it := h.Item(k)
		if it == nil {
			t.Fatalf("no item %s on %s", k, host)
		}
		out = append(out, poll.Check{ItemID: it.ID, HostID: h.ID, InterfaceID: f.ID, Key: k, Addr: f.Addr(), Timeout: timeout, Due: time.Now()})
	}
	return out
}

// run hands checks over in one batch and returns their results by key.
func (e *env) run(t *testing.T, checks []poll.Check) map[string]*poll.Result {
	t.Helper()
	var mu sync.Mutex
	got := map[string]*poll.Result{}
	ch := make(chan struct{}, len(checks))
	e.c.Check(e.ctx, checks, func(r *poll.Result) {
		mu.Lock()
		if _, dup := got[r.Key]; dup {
			t.Errorf("two results for %s", r.Key)
		}
		got[r.Key] = r
		mu.Unlock()
		ch <- struct{}{}
	})
	for i := range checks {
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("only %d of %d results arrived", i, len(checks))
		}
	}
	return got
}

// metric returns one line's value of the registry's text form.
func metric(t *testing.T, m *selfmon.Registry, line string) string {
	t.Helper()
	var b strings.Builder
	m.WriteText(&b)
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, line+" ") {
			return strings.TrimPrefix(l, line+" ")
		}
	}
	t.Fatalf("no metric %s in\n%s", line, b.String())
	return ""
}

type want struct {
	status poll.Status
	value  string // exact, or a prefix when it ends in "*"
	errHas string
}

func expect(t *testing.T, got map[string]*poll.Result, cases map[string]want) {
	t.Helper()
	for key, w := range cases {
		r := got[key]
		if r == nil {
			t.Errorf("%s: no result", key)
			continue
		}
		okVal := string(r.Value) == w.value
		if p, star := strings.CutSuffix(w.value, "*"); star {
			okVal = strings.HasPrefix(string(r.Value), p)
		}
		if r.Status != w.status || !okVal || !strings.Contains(r.Error, w.errHas) || (w.errHas == "" && r.Error != "") {
			t.Errorf("%s: got %v %q error %q; want %v %q error containing %q", key, r.Status, r.Value, r.Error, w.status, w.value, w.errHas)
		}
		// A timeout is marked, for the scheduler's "server behind"
		// test (issue 30); no other result is.
		if timedOut := strings.Contains(w.errHas, "Timeout while connecting"); r.TimedOut != timedOut {
			t.Errorf("%s: TimedOut %v, want %v", key, r.TimedOut, timedOut)
		}
	}
}
