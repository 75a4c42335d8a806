package ingest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// addPassiveProxy creates a passive proxy at addr monitoring px-host.
func addPassiveProxy(t testing.TB, ts *testServer, name, addr string, tlsc catalog.HostTLS) uint64 {
	t.Helper()
	host, port, _ := strings2(addr)
	var id uint64
	_, err := ts.cat.Edit(context.Background(), func(e *catalog.Edit) error {
		ids, err := e.CreateProxies([]catalog.Proxy{{Name: name, Status: catalog.ProxyPassive, TLS: tlsc, AutoCompress: true,
			Interface: catalog.ProxyInterface{UseIP: true, IP: host, Port: port}}})
		if err != nil {
			return err
		}
		id = ids[0]
		return e.SetHostsProxy([]uint64{ts.cat.Snapshot().Host("px-host").ID}, id)
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func strings2(addr string) (string, string, error) {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[:i], addr[i+1:], nil
		}
	}
	return addr, "", nil
}

// passiveRun polls the passive proxies until the test ends.
func passiveRun(t testing.TB, ts *testServer) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		ts.srv.RunPassiveProxies(ctx, PassiveOptions{ConfigFrequency: time.Second, DataFrequency: time.Second})
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// waitSender sends px.trap=v through the proxy until it takes it (it
// answers a sender only once it has its configuration), then waits for
// the value in Peregrine's history.
func waitSender(t *testing.T, ts *testServer, proxyAddr string, want int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := testutil.RunSender(t, proxyAddr, "-s", "px-host", "-k", "px.trap", "-o", "42")
		if r.Processed == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy never accepted the sender's value: %+v\n%s", r, ts.logs.String())
		}
		time.Sleep(time.Second)
	}
	for len(ts.read(t, "px-host", "px.trap")) < want {
		if time.Now().After(deadline) {
			t.Fatalf("the value did not arrive\n%s", ts.logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestIntegrationPassiveProxy: the real zabbix_proxy 6.0 in passive
// mode (ProxyMode=1) is sent its configuration and asked for its data
// by Peregrine; a zabbix_sender value it takes reaches history with
// its timestamp, and lastaccess is set.
func TestIntegrationPassiveProxy(t *testing.T) {
	testutil.ProxyBinary(t)
	ts := startTrapper(t, proxySpec(), nil)
	px := testutil.StartProxy(t, testutil.ProxyOptions{Name: "px-passive", Server: "127.0.0.1", Passive: true})
	pid := addPassiveProxy(t, ts, "px-passive", px.Addr, catalog.DefaultHostTLS)
	before := time.Now().Unix()
	passiveRun(t, ts)
	waitSender(t, ts, px.Addr, 1)
	if v := ts.read(t, "px-host", "px.trap")[0]; v.Clock < before || v.Clock > time.Now().Unix() {
		t.Fatalf("the proxy's timestamp was not kept: %+v", v)
	}
	if ts.srv.ProxyLastAccess(pid) < before {
		t.Fatal("lastaccess not set")
	}
}

// TestIntegrationProxyPSK: the real proxy with pre-shared keys, passive
// (TLSAccept=psk) and active (TLSConnect=psk); a wrong key is refused
// at the handshake and counted, nothing is taken from it.
func TestIntegrationProxyPSK(t *testing.T) {
	testutil.ProxyBinary(t)
	needPSK(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "psk.key")
	os.WriteFile(keyFile, []byte(pskKeyA+"\n"), 0o600)
	psk := catalog.HostTLS{Connect: 2, Accept: 1, PSKIdentity: "PX PSK", PSK: pskKeyA}

	t.Run("passive", func(t *testing.T) {
		ts := startTrapper(t, proxySpec(), nil)
		px := testutil.StartProxy(t, testutil.ProxyOptions{Name: "px-psk", Server: "127.0.0.1", Passive: true,
			Extra: []string{"TLSAccept=psk", "TLSPSKIdentity=PX PSK", "TLSPSKFile=" + keyFile}})
		addPassiveProxy(t, ts, "px-psk", px.Addr, psk)
		passiveRun(t, ts)
		waitSender(t, ts, px.Addr, 1)
	})
	t.Run("passive wrong key", func(t *testing.T) {
		ts := startTrapper(t, proxySpec(), nil)
		px := testutil.StartProxy(t, testutil.ProxyOptions{Name: "px-psk", Server: "127.0.0.1", Passive: true,
			Extra: []string{"TLSAccept=psk", "TLSPSKIdentity=PX PSK", "TLSPSKFile=" + keyFile}})
		bad := psk
		bad.PSK = pskKeyB
		addPassiveProxy(t, ts, "px-psk", px.Addr, bad)
		passiveRun(t, ts)
		deadline := time.Now().Add(30 * time.Second)
		for ts.metric(t, `peregrine_trapper_proxy_requests_total{kind="config",result="passive_error"}`) < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("wrong key not counted\n%s", ts.logs.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
		if ts.metric(t, `peregrine_trapper_proxy_requests_total{kind="config",result="ok"}`) != 0 {
			t.Fatal("a proxy with another key took its configuration")
		}
	})
	t.Run("active", func(t *testing.T) {
		var snap func() *catalog.Snapshot
		ts := startTrapper(t, proxySpec(), func(o *Options) {
			o.PSK = func(id string) ([]byte, bool) { return snap().ProxyPSKKey(id) }
		})
		snap = ts.cat.Snapshot
		pid := addProxy(t, ts, "px-psk-a")
		acc := catalog.HostTLS{Connect: 1, Accept: 2, PSKIdentity: "PX PSK", PSK: pskKeyA}
		if _, err := ts.cat.Edit(context.Background(), func(e *catalog.Edit) error {
			return e.UpdateProxies([]catalog.ProxyUpdate{{ID: pid, TLS: catalog.SetTLS(acc)}})
		}); err != nil {
			t.Fatal(err)
		}
		px := testutil.StartProxy(t, testutil.ProxyOptions{Name: "px-psk-a", Server: ts.addr,
			Extra: []string{"TLSConnect=psk", "TLSPSKIdentity=PX PSK", "TLSPSKFile=" + keyFile}})
		waitSender(t, ts, px.Addr, 1)
	})
}
