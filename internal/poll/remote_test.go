package poll_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/sshsim"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/polltest"
	sshcheck "github.com/peregrine-mon/peregrine/internal/poll/ssh"
	"github.com/peregrine-mon/peregrine/internal/poll/telnet"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// TestIntegrationRemoteUnreachable: SSH and Telnet items on the
// scheduler, every item at 1 s with a 2 s timeout, half of the hosts'
// targets accepting and never speaking. The healthy items keep their
// schedule; every dead check costs one timeout, counted once (the
// intervals a 2 s check spans are counted as missed, not run), and makes
// its item not supported ("... timed out after 2s"), as 6.0 makes such
// items; no interface is made unavailable (SSH and Telnet items keep no
// availability in 6.0).
func TestIntegrationRemoteUnreachable(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: 160 SSH and Telnet hosts")
	}
	if raceEnabled {
		t.Skip("schedule bounds not meaningful under -race; .ci/run runs this test plainly")
	}
	const n = 40 // of each kind: healthy SSH, dead SSH, healthy Telnet, dead Telnet
	fleet, err := sshsim.Start(4, sshsim.Options{Passwords: map[string]string{"zbx": "pw"}})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	tel := polltest.ServeTCP(t, serveTelnet)
	silent := polltest.SilentTCP(t)
	port := func(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }

	var spec catalog.Spec
	host := func(name, typ, key, cmd string) {
		spec.Hosts = append(spec.Hosts, catalog.HostSpec{Host: name, Groups: []string{"G"},
			Interfaces: []catalog.InterfaceSpec{{Type: "agent", IP: "127.0.0.1"}},
			Items: []catalog.ItemSpec{{Key: key, Type: typ, ValueType: "text", Delay: "1s", Timeout: "2s", Params: cmd,
				HTTPSpec: catalog.HTTPSpec{Username: "zbx", Password: "pw"}}}})
	}
	for i := range n {
		host(fmt.Sprintf("ssh-ok-%02d", i), "ssh", fmt.Sprintf("ssh.run[a,,%s]", port(fleet.Addr(i%fleet.Len()))), fmt.Sprintf("echo %d", i))
		host(fmt.Sprintf("ssh-dead-%02d", i), "ssh", fmt.Sprintf("ssh.run[a,,%s]", port(silent)), "echo x")
		host(fmt.Sprintf("tel-ok-%02d", i), "telnet", fmt.Sprintf("telnet.run[a,,%s]", port(tel)), fmt.Sprintf("echo %d", i))
		host(fmt.Sprintf("tel-dead-%02d", i), "telnet", fmt.Sprintf("telnet.run[a,,%s]", port(silent)), "echo x")
	}
	cat := catalogtest.Open(t, spec)
	store, rt, m := memstore.New(), itemstate.New(), selfmon.NewRegistry()
	p, err := pipeline.New(pipeline.Options{Store: store, Catalog: cat.Snapshot, ItemStates: rt, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	go p.Run(context.Background())
	defer p.Stop()
	item := func(id uint64) *catalog.Item { return cat.Snapshot().Item(id) }
	sc, err := sshcheck.New(sshcheck.Options{Item: item, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	s, err := poll.New(poll.Options{
		Catalog: cat, ItemStates: rt, Metrics: m,
		Submit: func(v []history.Sample) error { return p.Submit(v, pipeline.NewTicket()) },
		Checkers: map[catalog.ItemType]poll.CheckerSpec{
			catalog.SSHAgent:    {Checker: sc, NoAvailability: true},
			catalog.TelnetAgent: {Checker: telnet.New(telnet.Options{Item: item, Metrics: m}), NoAvailability: true},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	defer stop()

	snap := cat.Snapshot()
	id := func(host, key string) uint64 { return snap.Lookup(host, key).ID }
	keyOf := func(h *catalog.Host) string { return h.Items()[0].Key }
	var healthy, dead []*catalog.Host
	for _, h := range snap.Hosts() {
		if strings.Contains(h.Host, "-ok-") {
			healthy = append(healthy, h)
		} else if strings.Contains(h.Host, "-dead-") {
			dead = append(dead, h)
		}
	}
	waitFor(t, 20*time.Second, "every dead item not supported, every healthy one with a value", func() bool {
		for _, h := range dead {
			if st, _ := rt.ItemState(id(h.Host, keyOf(h))); !st.NotSupported {
				return false
			}
		}
		for _, h := range healthy {
			if store.Len(id(h.Host, keyOf(h))) == 0 {
				return false
			}
		}
		return true
	})
	// Over a 5 s window the healthy items keep their 1 s schedule
	// beside the dead ones, each of which times out every second.
	lens := func() []int {
		var out []int
		for _, h := range healthy {
			out = append(out, store.Len(id(h.Host, keyOf(h))))
		}
		return out
	}
	before := lens()
	time.Sleep(5 * time.Second)
	after := lens()
	stop()
	total := 0
	for i := range after {
		d := after[i] - before[i]
		total += d
		if d < 3 {
			t.Errorf("%s got %d values in 5 s at 1 s beside the dead targets", healthy[i].Host, d)
		}
	}
	if ideal := 5 * len(after); total < ideal*8/10 {
		t.Errorf("healthy items got %d values in 5 s; the ideal is %d", total, ideal)
	}
	for _, h := range dead {
		st, _ := rt.ItemState(id(h.Host, keyOf(h)))
		if !strings.Contains(st.Error, "timed out after 2s") {
			t.Errorf("%s: %q, want a timeout", h.Host, st.Error)
		}
	}
	for _, h := range snap.Hosts() {
		if a, _ := rt.Availability(h.Interfaces[0].ID); a.Available != 0 {
			t.Errorf("%s: interface availability %+v, want untouched (0)", h.Host, a)
		}
	}
	// One timeout per dead check: the timeouts counted are the dead
	// checks done, nothing else failed.
	for _, kind := range []string{"ssh", "telnet"} {
		timeouts := metric(t, m, `peregrine_poll_`+kind+`_errors_total{reason="timeout"}`)
		ns := metric(t, m, `peregrine_poll_`+kind+`_checks_total{result="not_supported"}`)
		ok := metric(t, m, `peregrine_poll_`+kind+`_checks_total{result="ok"}`)
		t.Logf("%s: %g values, %g timeouts, %g not supported", kind, ok, timeouts, ns)
		if timeouts != ns || timeouts < n {
			t.Errorf("%s: %g timeouts counted for %g not supported checks of %d dead items", kind, timeouts, ns, n)
		}
	}
}

// serveTelnet is a minimal Telnet server with a shell: login and
// password prompts, then "$ " and "echo ARGS" answered.
func serveTelnet(c net.Conn) {
	r := bufio.NewReader(c)
	line := func() (string, error) {
		s, err := r.ReadString('\n')
		return strings.TrimRight(s, "\r\n"), err
	}
	if _, err := c.Write([]byte("login: ")); err != nil {
		return
	}
	if _, err := line(); err != nil {
		return
	}
	if _, err := c.Write([]byte("Password: ")); err != nil {
		return
	}
	if _, err := line(); err != nil {
		return
	}
	if _, err := c.Write([]byte("\r\n$ ")); err != nil {
		return
	}
	for {
		cmd, err := line()
		if err != nil {
			return
		}
		out := cmd + "\r\n"
		if v, ok := strings.CutPrefix(cmd, "echo "); ok {
			out += v + "\r\n"
		}
		if _, err := c.Write([]byte(out + "$ ")); err != nil {
			return
		}
	}
}
