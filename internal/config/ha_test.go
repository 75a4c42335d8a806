package config

import (
	"strings"
	"testing"
	"time"
)

// The HA settings: good ones parse, bad ones name the field and say
// what to change.
func TestHAConfig(t *testing.T) {
	const ha = "state:\n  store: postgres\n  postgres:\n    dsn: postgres://peregrine@127.0.0.1:5432/peregrine\n" +
		"history:\n  store: clickhouse\n" +
		"ha:\n  node_name: node-1\n  node_address: 192.0.2.7:10051\n"
	c, err := Parse([]byte(ha))
	if err != nil {
		t.Fatalf("good HA config: %v", err)
	}
	if !c.HA.Enabled() || c.HA.FailoverDelay.Std() != time.Minute {
		t.Fatalf("HA config: %+v (want enabled, failover delay 1m as Zabbix 6.0)", c.HA)
	}
	if c.AckMode() != "inserted" {
		t.Fatalf("a cluster node acknowledges %q, want inserted", c.AckMode())
	}
	if d := Default(); d.AckMode() != "spooled" {
		t.Fatalf("standalone acknowledges %q, want spooled", d.AckMode())
	}
	if d := Default(); d.HA.Enabled() || d.State.Store != "embedded" || d.HA.FailoverDelay.Std() != time.Minute {
		t.Fatalf("defaults: state %+v, ha %+v (want embedded, standalone, 1m)", d.State, d.HA)
	}
	f := func(yaml, want string) {
		t.Helper()
		_, err := Parse([]byte(yaml))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config\n%s\nerror %v, want one containing %q", yaml, err, want)
		}
	}
	f(strings.Replace(ha, "store: clickhouse", "store: engine", 1), `ha.node_name: needs history.store: clickhouse`)
	f(strings.Replace(ha, "store: clickhouse", "store: memory", 1), `ha.node_name: needs history.store: clickhouse`)
	f(strings.Replace(ha, "store: postgres\n  postgres:\n    dsn: postgres://peregrine@127.0.0.1:5432/peregrine\n", "store: embedded\n", 1),
		`ha.node_name: needs state.store: postgres`)
	f(strings.Replace(ha, "dsn: postgres://peregrine@127.0.0.1:5432/peregrine", `dsn: ""`, 1), "state.postgres.dsn: must be set")
	f(strings.Replace(ha, "dsn: postgres://peregrine@127.0.0.1:5432/peregrine", `dsn: peregrine`, 1), "state.postgres.dsn: must be a postgres:// URL or key=value")
	f(strings.Replace(ha, "node_address: 192.0.2.7:10051", "node_address: ''", 1), "ha.node_address: must be set")
	f(strings.Replace(ha, "node_address: 192.0.2.7:10051", "node_address: 192.0.2.7:99999", 1), "ha.node_address: port of")
	f(strings.Replace(ha, "node_name: node-1", "node_name: 'node 1'", 1), `ha.node_name: "node 1" must be`)
	f(ha+"  failover_delay: 5s\n", "ha.failover_delay: must be whole seconds between 10s and 15m")
	f(ha+"  failover_delay: 16m\n", "ha.failover_delay: must be whole seconds between 10s and 15m")
	f(strings.Replace(ha, "store: clickhouse\n", "store: clickhouse\n  clickhouse:\n    ack: spooled\n", 1), `history.clickhouse.ack: must be "inserted" on a cluster node`)
	f("history:\n  store: clickhouse\n  clickhouse:\n    ack: fsynced\n", `history.clickhouse.ack: must be "spooled" or "inserted", not "fsynced"`)
	f("history:\n  store: clickhouse\n  clickhouse:\n    ack_timeout: 2m\n", "history.clickhouse.ack_timeout: must be between 1s and history.clickhouse.query_timeout (1m0s), not 2m0s")
	f("state:\n  store: sqlite\n", `state.store: must be "embedded" or "postgres", not "sqlite"`)
	f("state:\n  postgres:\n    dsn: host=db\n", `state.postgres.dsn: is set but state.store is "embedded"`)
	f("ha:\n  node_address: 192.0.2.7\n", "ha.node_address: is set but ha.node_name is empty")
	// The password of a bad DSN is never in the error.
	_, err = Parse([]byte("state:\n  store: postgres\n  postgres:\n    dsn: 'postgres://u:s3cr3t@%zz/db'\n"))
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("bad DSN: error %v (want one, without the password)", err)
	}
	for _, a := range []struct {
		in   string
		host string
		port int
	}{{"192.0.2.7", "192.0.2.7", 10051}, {"node1.example.com:10052", "node1.example.com", 10052}, {"[2001:db8::1]:10051", "2001:db8::1", 10051}, {"2001:db8::1", "2001:db8::1", 10051}} {
		h, p, err := SplitNodeAddress(a.in)
		if err != nil || h != a.host || p != a.port {
			t.Errorf("SplitNodeAddress(%q) = %q, %d, %v; want %q, %d", a.in, h, p, err, a.host, a.port)
		}
	}
}
