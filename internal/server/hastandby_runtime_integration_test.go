package server

import (
	"encoding/json"
	"net"
	"strconv"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// checkStandbyRuntime checks, for TestIntegrationHAStandbyReads, the
// runtime state the active node stores in PostgreSQL for the standbys
// (itemstate.Writer, read by the standby's itemstate.Follower):
// item.get's state and error of an item made not supported on the
// active node, and the availability of an agent interface made
// unavailable there, read the same on both nodes.
//
// Recorded from the 6.0.14 peer (a trapper item of type "Numeric
// (unsigned)" sent "abc" with zabbix_sender: "processed: 1; failed: 0",
// then item.get state "1", error `Value of type "string" is not
// suitable for value type "Numeric (unsigned)". Value "abc"`; an agent
// interface at 127.0.0.9 with nothing listening: available "0" with
// errors_from and disable_until set after the first failed check,
// available "2" once unreachable_period passed, error "Get value from
// agent failed: cannot connect to [[127.0.0.9]:10050]: [111] Connection
// refused").
//
// It returns the item not supported: a node that takes over starts from
// the stored states, so it shows the item not supported without a new
// value.
func checkStandbyRuntime(t *testing.T, api, sb *apiClient, trapper, hostID, groupID string) (notSupported string) {
	t.Helper()
	var it struct{ ItemIDs []string }
	api.ok("item.create", map[string]any{"hostid": hostID, "name": "s9-standby2 numeric", "key_": "s9.rt.num", "type": 2, "value_type": 3}, &it)
	num := it.ItemIDs[0]
	if r := testutil.RunSender(t, trapper, "-s", "s8-standby-host", "-k", "s9.rt.num", "-o", "abc"); r.Processed != 1 || r.Failed != 0 {
		t.Fatalf("zabbix_sender abc to the numeric item: %+v, want processed 1 as 6.0.14", r)
	}
	const notSuitable = `Value of type "string" is not suitable for value type "Numeric (unsigned)". Value "abc"`
	sameOnBoth(t, api, sb, "item.get", map[string]any{"itemids": []string{num}, "output": []string{"itemid", "state", "error"}},
		func(r json.RawMessage) bool {
			var is []struct{ ItemID, State, Error string }
			return json.Unmarshal(r, &is) == nil && len(is) == 1 && is[0].ItemID == num && is[0].State == "1" && is[0].Error == notSuitable
		})

	// An agent interface where nothing listens: a port just closed on
	// 127.0.0.9.
	ln, err := net.Listen("tcp", "127.0.0.9:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	var h struct{ HostIDs []string }
	api.ok("host.create", map[string]any{"host": "s9-standby2-agent", "groups": []any{map[string]any{"groupid": groupID}},
		"interfaces": []map[string]any{{"type": 1, "main": 1, "useip": 1, "ip": "127.0.0.9", "dns": "", "port": port}}}, &h)
	var ifs []struct{ InterfaceID string }
	api.ok("hostinterface.get", map[string]any{"hostids": h.HostIDs, "output": []string{"interfaceid"}}, &ifs)
	if len(ifs) != 1 {
		t.Fatalf("the agent host's interfaces: %+v", ifs)
	}
	api.ok("item.create", map[string]any{"hostid": h.HostIDs[0], "name": "s9-standby2 ping", "key_": "agent.ping", "type": 0,
		"value_type": 3, "delay": "1s", "interfaceid": ifs[0].InterfaceID}, nil)
	type iface struct {
		InterfaceID, Available, Error string
		ErrorsFrom                    string `json:"errors_from"`
		DisableUntil                  string `json:"disable_until"`
	}
	// Peregrine's text is "cannot connect to 127.0.0.9:PORT: connection
	// refused (errno 111)", not 6.0.14's (above): both nodes must show
	// the active node's.
	refused := "cannot connect to 127.0.0.9:" + port + ": connection refused (errno 111)"
	unavailable := func(r json.RawMessage, in func(json.RawMessage) []iface) bool {
		got := in(r)
		return len(got) == 1 && got[0].Available == "2" && got[0].Error == refused &&
			got[0].ErrorsFrom != "0" && got[0].DisableUntil != "0"
	}
	r := sameOnBoth(t, api, sb, "hostinterface.get", map[string]any{"hostids": h.HostIDs,
		"output": []string{"interfaceid", "available", "error", "errors_from", "disable_until"}},
		func(r json.RawMessage) bool {
			return unavailable(r, func(r json.RawMessage) []iface {
				var out []iface
				_ = json.Unmarshal(r, &out)
				return out
			})
		})
	t.Logf("the unavailable interface on both nodes: %s", r)
	sameOnBoth(t, api, sb, "host.get", map[string]any{"hostids": h.HostIDs, "output": []string{"hostid"},
		"selectInterfaces": []string{"interfaceid", "available", "error", "errors_from", "disable_until"}},
		func(r json.RawMessage) bool {
			return unavailable(r, func(r json.RawMessage) []iface {
				var hs []struct{ Interfaces []iface }
				if json.Unmarshal(r, &hs) != nil || len(hs) != 1 {
					return nil
				}
				return hs[0].Interfaces
			})
		})
	return num
}
