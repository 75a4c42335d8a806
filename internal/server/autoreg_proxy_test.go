package server

import (
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestProxyAutoregistration: the "auto registration" rows of a proxy's
// data register as an agent's request does, with the proxy as its
// proxy: an action of source 2 adds the host. A row without a host is
// skipped; a malformed part refuses the data (the proxy resends it).
func TestProxyAutoregistration(t *testing.T) {
	s := startServer(t, catalog.Spec{})
	c := adminLogin(t, s)
	c.ok("action.create", map[string]any{"name": "via proxy", "eventsource": 2,
		"filter":     map[string]any{"evaltype": 0, "conditions": []any{map[string]any{"conditiontype": 24, "operator": 2, "value": "behind"}}},
		"operations": []any{map[string]any{"operationtype": 2}}}, nil)
	p := &catalog.Proxy{ID: 0, Name: "p1"}
	rows := `[{"clock":1700000000,"host":"agent-behind-proxy","ip":"127.0.0.1","dns":"","port":"10050","host_metadata":"Linux behind","flags":0,"tls_accepted":1},` +
		`{"clock":1700000000,"host":"","ip":"127.0.0.1","port":"10050","host_metadata":"behind","flags":0,"tls_accepted":1}]`
	if err := s.proxyExtras(p, []byte(rows), nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for s.Catalog.Snapshot().Host("agent-behind-proxy") == nil {
		if time.Now().After(deadline) {
			t.Fatal("the host registered through the proxy was not created")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := s.proxyExtras(p, []byte(`{"not":"a list"}`), nil); err == nil {
		t.Fatal("a malformed auto registration part was taken")
	}
	if err := s.proxyExtras(p, []byte(`[{"host":"x","port":"http"}]`), nil); err == nil {
		t.Fatal("a row with a bad port was taken")
	}
}
