package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// TestAuditHostPSK: the audit log never holds a pre-shared key. As
// 6.0.14 (recorded): changing only tls_psk writes no record, and leaving
// PSK records tls_connect and tls_accept, not the identity or the key.
func TestAuditHostPSK(t *testing.T) {
	if !zbxpsk.Available {
		t.Skip("this build has no PSK")
	}
	f := newAuditFixture(t)
	call := func(method, params string) []byte {
		return f.rpc(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s,"auth":%q,"id":1}`, method, params, f.sid), nil)
	}
	var g struct {
		GroupIDs []string `json:"groupids"`
	}
	f.rpc(fmt.Sprintf(`{"jsonrpc":"2.0","method":"hostgroup.create","params":{"name":"G"},"auth":%q,"id":1}`, f.sid), &g)
	var h struct {
		HostIDs []string `json:"hostids"`
	}
	f.rpc(fmt.Sprintf(`{"jsonrpc":"2.0","method":"host.create","params":{"host":"a","groups":[{"groupid":%q}],"tls_connect":2,"tls_accept":2,
		"tls_psk_identity":"id1","tls_psk":"1f87b595725ac58dd977beef14b97461"},"auth":%q,"id":1}`, g.GroupIDs[0], f.sid), &h)
	if len(h.HostIDs) != 1 {
		t.Fatal("host.create failed")
	}
	id := h.HostIDs[0]
	call("host.update", `{"hostid":"`+id+`","tls_psk":"2f87b595725ac58dd977beef14b97461"}`)
	call("host.update", `{"hostid":"`+id+`","tls_connect":1,"tls_accept":1}`)
	var recs []map[string]any
	f.rpc(fmt.Sprintf(`{"jsonrpc":"2.0","method":"auditlog.get","params":{"output":["action","details"],"filter":{"resourceid":%q},"sortfield":"clock","sortorder":"ASC"},"auth":%q,"id":1}`, id, f.sid), &recs)
	all := fmt.Sprint(recs)
	if n := len(recs); n < 2 || fmt.Sprint(recs[n-2]) != "map[action:0 details:]" ||
		fmt.Sprint(recs[n-1]) != `map[action:1 details:{"host.tls_connect":["update",1,"2"],"host.tls_accept":["update",1,"2"]}]` {
		t.Errorf("the host's records are not 6.0's (a create, then only the update that left PSK): %s", all)
	}
	if strings.Contains(all, "1f87b5") || strings.Contains(all, "2f87b5") || strings.Contains(all, "id1") {
		t.Errorf("the audit log holds a key or identity: %s", all)
	}
}
