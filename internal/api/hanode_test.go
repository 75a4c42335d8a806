package api

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/ha"
)

// TestHANodeGetCluster: on a cluster node hanode.get lists the registry
// with 6.0's fields and options (ha_nodeids, filter, sortfield and
// sortorder, limit, countOutput, output, preservekeys). The standalone
// answer and the parameter errors are in the conformance case tasks
// (recorded from 6.0.14).
func TestHANodeGetCluster(t *testing.T) {
	f := newAuditFixture(t)
	const (
		a = "cmx1icwm900011e7dbl0irsp9"
		b = "cmx1icwm900021e7dbl0irsp9"
		c = "cmx1icwm900031e7dbl0irsp9"
	)
	fail := false
	f.api.opts.HACluster = func(context.Context) (*ha.Cluster, error) {
		if fail {
			return nil, errors.New("PostgreSQL out of reach")
		}
		return &ha.Cluster{FailoverDelay: time.Minute, Nodes: []ha.NodeInfo{
			{ID: a, Name: "node-b", Address: "192.0.2.1", Port: 10051, LastAccess: 1795981790, Status: ha.StatusStandby},
			{ID: b, Name: "node-a", Address: "192.0.2.2", Port: 10052, LastAccess: 1795981782, Status: ha.StatusActive},
			{ID: c, Name: "node-c", Address: "192.0.2.3", Port: 10051, LastAccess: 1795900000, Status: ha.StatusUnavailable},
		}}, nil
	}
	for _, tc := range []struct{ params, want string }{
		{`{}`, `[{"address":"192.0.2.1","ha_nodeid":"` + a + `","lastaccess":"1795981790","name":"node-b","port":"10051","status":"0"},` +
			`{"address":"192.0.2.2","ha_nodeid":"` + b + `","lastaccess":"1795981782","name":"node-a","port":"10052","status":"3"},` +
			`{"address":"192.0.2.3","ha_nodeid":"` + c + `","lastaccess":"1795900000","name":"node-c","port":"10051","status":"2"}]`},
		{`{"output":["name"],"sortfield":"name"}`, `[{"name":"node-a"},{"name":"node-b"},{"name":"node-c"}]`},
		{`{"output":["name","status"],"sortfield":"status","sortorder":"DESC"}`, `[{"name":"node-a","status":"3"},{"name":"node-c","status":"2"},{"name":"node-b","status":"0"}]`},
		{`{"output":["name"],"sortfield":"lastaccess","limit":2}`, `[{"name":"node-c"},{"name":"node-a"}]`},
		{`{"output":["name"],"filter":{"status":[0,2]}}`, `[{"name":"node-b"},{"name":"node-c"}]`},
		{`{"output":["port"],"filter":{"address":"192.0.2.2"},"preservekeys":true}`, `{"` + b + `":{"port":"10052"}}`},
		{`{"ha_nodeids":["` + c + `"],"output":["name"]}`, `[{"name":"node-c"}]`},
		{`{"countOutput":true,"filter":{"status":0}}`, `"1"`},
	} {
		got := mustOK(t, f, "hanode.get", tc.params)
		if string(got) != tc.want {
			t.Errorf("hanode.get %s:\n got %s\nwant %s", tc.params, got, tc.want)
		}
	}
	fail = true
	if _, e := f.callAs(f.sid, "hanode.get", `{}`); e == nil || e.Code != -32500 || e.Data != "Cannot read the cluster's nodes: PostgreSQL out of reach" {
		t.Fatalf("registry out of reach: %+v", e)
	}
}
