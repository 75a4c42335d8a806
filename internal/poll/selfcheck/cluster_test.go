package selfcheck

import (
	"errors"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/poll"
)

// TestClusterKey: zabbix[cluster,discovery,nodes]. A standalone server's
// value and the messages for other forms are recorded from 6.0.14 (a
// standalone peer): "[]", and the errors below.
func TestClusterKey(t *testing.T) {
	standalone := New(Options{})
	nodes := `[{"id":"cmx1icwm900011e7dbl0irsp9","name":"node-a","status":3,"lastaccess":1795981782,"address":"127.0.0.1:10051","db_timestamp":1795981784,"lastaccess_age":2}]`
	clustered := New(Options{Figures: Figures{ClusterNodes: func() ([]byte, error) { return []byte(nodes), nil }}})
	down := New(Options{Figures: Figures{ClusterNodes: func() ([]byte, error) { return nil, errors.New("PostgreSQL out of reach") }}})
	for _, tc := range []struct {
		c              *Checker
		key, want, err string
	}{
		{standalone, "zabbix[cluster,discovery,nodes]", "[]", ""},
		{standalone, "zabbix[cluster,discovery,x]", "", "Invalid third parameter."},
		{standalone, "zabbix[cluster,x,nodes]", "", "Invalid second parameter."},
		{standalone, "zabbix[cluster,discovery]", "", "Invalid number of parameters."},
		{standalone, "zabbix[cluster]", "", "Invalid number of parameters."},
		{standalone, "zabbix[cluster,discovery,nodes,x]", "", "Invalid number of parameters."},
		{clustered, "zabbix[cluster,discovery,nodes]", nodes, ""},
		{down, "zabbix[cluster,discovery,nodes]", "", "Cannot obtain cluster nodes: PostgreSQL out of reach"},
	} {
		r := tc.c.Answer(&poll.Check{ItemID: 1, Key: tc.key})
		if string(r.Value) != tc.want || r.Error != tc.err {
			t.Errorf("%s: %q %q, want %q %q", tc.key, r.Value, r.Error, tc.want, tc.err)
		}
	}
}
