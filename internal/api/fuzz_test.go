package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// FuzzRequest sends arbitrary bodies to the JSON-RPC handler: whatever
// the bytes, it must not panic and must answer with valid JSON (or
// nothing, for notifications only), and every response object must hold
// a result or an error.
func FuzzRequest(f *testing.F) {
	cat := catalogtest.Open(f, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h1", Groups: []string{"G"},
		Interfaces: []catalog.InterfaceSpec{{IP: "127.0.0.1"}},
		Items: []catalog.ItemSpec{
			{Key: "f1", ValueType: "float"}, {Key: "s1", ValueType: "character"}, {Key: "agent.ping", Type: "zabbix_agent", ValueType: "unsigned"},
		}}}})
	rt := itemstate.New()
	rt.SetItemState(cat.Snapshot().Lookup("h1", "agent.ping").ID, itemstate.Item{NotSupported: true, Error: "Unsupported item key."})
	rt.SetAvailability(cat.Snapshot().Host("h1").Interfaces[0].ID, itemstate.Availability{Available: 2, Error: "timeout"})
	st := memstore.New()
	id := cat.Snapshot().Lookup("h1", "f1").ID
	for i := 0; i < 50; i++ {
		st.Write(context.Background(), []history.Sample{{ItemID: id, Clock: int64(1000 + i), Type: history.Float, F: float64(i)}})
	}
	srv := New(Options{Catalog: cat, History: st, Trends: fakeTrends{}, MaxRows: 1000, MaxBodyBytes: 1 << 16,
		States: rt, Availability: rt, CheckNow: &fakeCheckNow{},
		Auth: &fakeAuth{
			sessions: map[string]User{"ro": {ID: 2, Username: "viewer", Role: RoleUser}},
			// Read on G: the permission checks run on every get.
			rights: map[uint64]auth.Rights{2: auth.NewRights(map[uint64]auth.Permission{cat.Snapshot().Group("G").ID: auth.PermRead})},
		}})
	h := srv.Handler()
	for _, seed := range []string{
		`{"jsonrpc":"2.0","method":"apiinfo.version","params":[],"id":1}`,
		`{"jsonrpc":"2.0","method":"history.get","params":{"itemids":"1","limit":"5","sortfield":"clock","sortorder":"DESC"},"auth":"ro","id":"x"}`,
		`{"jsonrpc":"2.0","method":"host.get","params":{"output":["host"],"filter":{"host":["h1"]},"selectGroups":"extend"},"auth":"ro","id":2}`,
		`{"jsonrpc":"2.0","method":"item.get","params":{"search":{"key_":"f"},"countOutput":true},"auth":"ro","id":3}`,
		`[{"jsonrpc":"2.0","method":"user.login","params":{"user":"Admin","password":"x"},"id":1},{"jsonrpc":"2.0","method":"trend.get","params":{"itemids":[1]},"auth":"ro"}]`,
		`{"jsonrpc":"2.0","method":"history.push","params":[{"itemid":1,"value":"1"}],"auth":"ro","id":4}`,
		`{"jsonrpc":"2.0","method":"token.create","params":{"name":"t"},"auth":"ro","id":5}`,
		`{"jsonrpc":"2.0","method":"item.get","params":{"host":"h1","filter":{"host":["h1"],"key_":"f1"},"search":{"key_":"f*"},"searchWildcardsEnabled":true},"auth":"ro","id":6}`,
		`{"jsonrpc":"2.0","method":"hostgroup.get","params":{"selectHosts":"extend","editable":true,"limitSelects":1,"xyz":1},"auth":"ro","id":7}`,
		`{"jsonrpc":"2.0","method":"usergroup.get","params":{"selectRights":"extend","userids":"2"},"auth":"ro","id":8}`,
		`{"jsonrpc":"2.0","method":"history.get","params":{"itemids":["1","99"],"hostids":"1","history":0},"auth":"ro","id":9}`,
		`{"jsonrpc":"2.0","method":"hostinterface.get","params":{"hostids":"1","output":["ip","available"],"selectItems":"count"},"auth":"ro","id":10}`,
		`{"jsonrpc":"2.0","method":"host.get","params":{"selectInterfaces":["available","details"]},"auth":"ro","id":11}`,
		`{"jsonrpc":"2.0","method":"task.create","params":[{"type":6,"request":{"itemid":"3"}}],"auth":"ro","id":12}`,
		`{"jsonrpc":"2.0","method":"item.get","params":{"filter":{"state":"1"},"output":["error","interfaceid"]},"auth":"ro","id":13}`,
		`{"jsonrpc":"2.0","method":"item.get","params":{"selectPreprocessing":["type","params"],"output":["master_itemid","params"]},"auth":"ro","id":14}`,
		`[]`, `{`, `null`, `"x"`, `[1,2]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/api_jsonrpc.php", strings.NewReader(string(body))))
		out := rec.Body.Bytes()
		if len(out) == 0 {
			return // only notifications
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON response %q for %q", out, body)
		}
		var one map[string]json.RawMessage
		var many []map[string]json.RawMessage
		if json.Unmarshal(out, &one) == nil {
			many = append(many, one)
		} else if err := json.Unmarshal(out, &many); err != nil {
			t.Fatalf("response %q is neither an object nor an array", out)
		}
		for _, r := range many {
			_, res := r["result"]
			_, e := r["error"]
			if res == e || string(r["jsonrpc"]) != `"2.0"` {
				t.Fatalf("malformed response object %s for %q", out, body)
			}
		}
	})
}
