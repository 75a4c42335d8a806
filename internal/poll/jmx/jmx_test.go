package jmx

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// gatewayRequest is a request as the fake gateway received it.
type gatewayRequest struct {
	Username *string  `json:"username"`
	Password *string  `json:"password"`
	Endpoint string   `json:"jmx_endpoint"`
	Keys     []string `json:"keys"`
}

func decodeRequests(t *testing.T, g *fakeGateway) []gatewayRequest {
	t.Helper()
	var out []gatewayRequest
	for _, s := range g.requests() {
		var r gatewayRequest
		if err := json.Unmarshal([]byte(s), &r); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b gatewayRequest) int { return strings.Compare(a.Keys[0], b.Keys[0]) })
	return out
}

// TestCheckGroups: a batch goes out in one request per interface,
// endpoint and credentials, each of at most MaxKeys keys in the batch's
// order; the answers reach their checks.
func TestCheckGroups(t *testing.T) {
	g := startFakeGateway(t)
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "app", Name: "App server", Groups: []string{"G"},
		Interfaces: []catalog.InterfaceSpec{{Type: "jmx", IP: "127.0.0.1", DNS: "app.example", Port: strconv.Itoa(fakeAnswer)}},
		Macros:     []catalog.MacroSpec{{Macro: "{$PORT}", Value: strconv.Itoa(fakeAnswer)}, {Macro: "{$USER}", Value: "monitorRole"}},
		Items: []catalog.ItemSpec{
			{Key: "jmx[a,1]", Type: "jmx", ValueType: "text"},
			{Key: "jmx[a,2]", Type: "jmx", ValueType: "text"},
			{Key: "jmx[a,3]", Type: "jmx", ValueType: "text"},
			{Key: "jmx[b,1]", Type: "jmx", ValueType: "text", HTTPSpec: catalog.HTTPSpec{Username: "{$USER}", Password: "p"}},
			{Key: "jmx[c,1]", Type: "jmx", ValueType: "text",
				JMXEndpoint: "service:jmx:rmi:///jndi/rmi://{HOST.IP}:{$PORT}/jmxrmi?{HOST.DNS}&{HOST.HOST}&{HOST.NAME}&{HOST.PORT}&{ITEM.KEY}"},
		}}}})
	snap := cat.Snapshot()
	m := selfmon.NewRegistry()
	c := New(Options{Gateway: g.Addr, Item: snap.Item, MaxKeys: 2, Metrics: m})
	var batch []poll.Check
	for _, k := range []string{"jmx[a,1]", "jmx[a,2]", "jmx[a,3]", "jmx[b,1]", "jmx[c,1]"} {
		it := snap.Lookup("app", k)
		batch = append(batch, poll.Check{ItemID: it.ID, HostID: it.HostID, InterfaceID: it.InterfaceID, Key: k, Addr: "127.0.0.1:" + strconv.Itoa(fakeAnswer), Timeout: time.Second})
	}
	got, _ := collect(t, c, batch)
	for _, ch := range batch {
		if r := got[ch.ItemID]; r.Status != poll.OK || string(r.Value) != "value of "+ch.Key {
			t.Errorf("%s: %s %q %q", ch.Key, r.Status, r.Value, r.Error)
		}
	}
	def := "service:jmx:rmi:///jndi/rmi://127.0.0.1:1/jmxrmi"
	user, pass := "monitorRole", "p"
	want := []gatewayRequest{
		{Endpoint: def, Keys: []string{"jmx[a,1]", "jmx[a,2]"}},
		{Endpoint: def, Keys: []string{"jmx[a,3]"}},
		{Endpoint: def, Username: &user, Password: &pass, Keys: []string{"jmx[b,1]"}},
		{Endpoint: "service:jmx:rmi:///jndi/rmi://127.0.0.1:1/jmxrmi?app.example&app&App server&1&{ITEM.KEY}", Keys: []string{"jmx[c,1]"}},
	}
	if got := decodeRequests(t, g); !slices.EqualFunc(got, want, func(a, b gatewayRequest) bool {
		return a.Endpoint == b.Endpoint && slices.Equal(a.Keys, b.Keys) && (a.Username == nil) == (b.Username == nil) &&
			(a.Username == nil || *a.Username == *b.Username && *a.Password == *b.Password)
	}) {
		t.Errorf("requests:\n got %+v\nwant %+v", got, want)
	}
	if n := counter(t, m, "peregrine_poll_jmx_requests_total"); n != 4 {
		t.Errorf("requests_total %d, want 4", n)
	}
}

// TestCheckFailures: what the gateway and its absence make of checks.
func TestCheckFailures(t *testing.T) {
	g := startFakeGateway(t)
	check := func(id uint64, port int) poll.Check { return fakeCheck(id, port, "jmx[x,"+strconv.Itoa(int(id))+"]") }

	m := selfmon.NewRegistry()
	got, _ := collect(t, New(Options{Metrics: m}), []poll.Check{check(1, fakeAnswer)})
	if r := got[1]; r.Status != poll.NotSupported || !strings.Contains(r.Error, "no Java gateway is configured: set jmx.gateway") {
		t.Errorf("no gateway: %s %q", r.Status, r.Error)
	}
	if n := counter(t, m, "peregrine_poll_jmx_errors_total", "reason", "config"); n != 1 {
		t.Errorf("config errors %d", n)
	}

	m = selfmon.NewRegistry()
	c := New(Options{Gateway: g.Addr, MaxReplySize: 1 << 20, Metrics: m})
	got, _ = collect(t, c, []poll.Check{check(1, fakeFailed), check(2, fakeFailed), check(3, fakeHuge), check(4, fakeAnswer)})
	for _, id := range []uint64{1, 2} {
		if r := got[id]; r.Status != poll.NetworkError || r.Error != "Connection refused: service:jmx:rmi:///jndi/rmi://127.0.0.1:5/jmxrmi" {
			t.Errorf("failed reply, item %d: %s %q", id, r.Status, r.Error)
		}
	}
	if r := got[3]; r.Status != poll.NetworkError || !strings.Contains(r.Error, "the reply of the Java gateway "+g.Addr+" cannot be read") {
		t.Errorf("huge reply: %s %q", r.Status, r.Error)
	}
	if r := got[4]; r.Status != poll.OK {
		t.Errorf("answered beside them: %s %q", r.Status, r.Error)
	}
	for reason, want := range map[string]uint64{"failed": 2, "bad_reply": 1} {
		if n := counter(t, m, "peregrine_poll_jmx_errors_total", "reason", reason); n != want {
			t.Errorf("%s errors %d, want %d", reason, n, want)
		}
	}
}

// TestCheckBusy: with every gateway connection taken, a request waits
// for one within its timeout, then is a local error (the interface is
// not blamed for this server's setting).
func TestCheckBusy(t *testing.T) {
	g := startFakeGateway(t)
	m := selfmon.NewRegistry()
	c := New(Options{Gateway: g.Addr, MaxConns: 1, Metrics: m})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	held := make(chan *poll.Result, 1)
	hang := fakeCheck(1, fakeHang, "jmx[a,b]")
	hang.Timeout = time.Hour
	c.Check(ctx, []poll.Check{hang}, func(r *poll.Result) { held <- r })
	for end := time.Now().Add(10 * time.Second); len(g.requests()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the first request did not reach the gateway")
		}
	}
	waiting := fakeCheck(2, fakeAnswer, "jmx[c,d]")
	waiting.Timeout = 300 * time.Millisecond
	got, _ := collect(t, c, []poll.Check{waiting})
	if r := got[2]; r.Status != poll.LocalError || !strings.Contains(r.Error, "raise jmx.max_connections") {
		t.Errorf("waiting for a connection: %s %q", r.Status, r.Error)
	}
	cancel()
	if r := <-held; r.Status != poll.NetworkError || !strings.Contains(r.Error, "abandoned") {
		t.Errorf("the held check once ctx ended: %s %q", r.Status, r.Error)
	}
	if n := counter(t, m, "peregrine_poll_jmx_errors_total", "reason", "busy"); n != 1 {
		t.Errorf("busy errors %d", n)
	}
}

// TestHostMacrosIPv6: an IPv6 interface address goes in brackets.
func TestHostMacrosIPv6(t *testing.T) {
	ch := &poll.Check{Addr: "[::1]:9010"}
	if got := hostMacros(catalog.DefaultJMXEndpoint, ch, nil); got != "service:jmx:rmi:///jndi/rmi://[::1]:9010/jmxrmi" {
		t.Errorf("got %q", got)
	}
}
