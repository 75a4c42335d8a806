package bench

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// bench checks against an in-process Peregrine and in-process simulated
// devices: a sweep gives every item its device's value, nothing missing,
// and the hosts are gone afterwards; a rate run stores values and the
// devices count the OIDs they answered.
func TestChecksSNMPInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("polls simulated devices for a few seconds")
	}
	tg, _ := startPeregrine(t)
	srv := ZabbixInstance{Target: tg.APIURL, User: tg.User, Password: tg.Password, Settle: time.Second, Name: "peregrine"}
	b := ChecksBench{Kind: "snmp", Mode: "sweep", Hosts: 3, ItemsPerHost: 4, Rounds: 2, Delay: time.Second, Timeout: time.Minute, Server: srv, InProcessAgents: true}
	sec, err := b.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := csvRows(t, sec)
	if len(c.Rows) != 2 {
		t.Fatalf("rows %v", c.Rows)
	}
	// A sweep on a quiet machine can finish within the request's second,
	// whose values then read as done at once (0 s): only the order of the
	// times is asserted.
	for i := range c.Rows {
		if c.Get(i, "checks") != "12" || c.Get(i, "missing") != "0" || c.Get(i, "wrong") != "0" || c.Float(i, "sweep_s") < 0 ||
			c.Float(i, "p50_s") > c.Float(i, "p99_s") || c.Float(i, "p99_s") > c.Float(i, "sweep_s") || c.Float(i, "device_oids") < 12 || !(c.Float(i, "device_requests") > 0) {
			t.Errorf("round %d: %v", i+1, c.Rows[i])
		}
	}
	api := NewAPIClient(tg.APIURL, time.Minute)
	if err := api.Login(context.Background(), tg.User, tg.Password); err != nil {
		t.Fatal(err)
	}
	var left flexCount
	if err := api.Call(context.Background(), "host.get", map[string]any{"countOutput": true, "search": map[string]any{"host": "pb-snmp-"}}, &left); err != nil || left != 0 {
		t.Errorf("hosts left after the run: %d (%v)", left, err)
	}

	r := ChecksBench{Kind: "snmp", Mode: "rate", Hosts: 2, ItemsPerHost: 5, Delay: time.Second, Warmup: 2 * time.Second, Window: 2 * time.Second, Server: srv, InProcessAgents: true}
	sec, err = r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c = csvRows(t, sec)
	// 10 items a second: the ideal; what was done is measured, so only
	// its being there is asserted, with the devices' count beside it.
	if c.Float(0, "ideal_per_s") != 10 || !(c.Float(0, "done_per_s") > 0) || !(c.Float(0, "device_oids_per_s") > 0) || !(c.Float(0, "device_requests_per_s") > 0) {
		t.Errorf("rate row %v", c.Rows[0])
	}
}

// External checks: check_dummy's output is each item's value.
func TestChecksExternalInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs plugins")
	}
	testutil.Need(t, "/usr/lib/nagios/plugins/check_dummy", "monitoring-plugins-basic")
	tg, _ := startPeregrine(t)
	b := ChecksBench{Kind: "external", Mode: "sweep", Hosts: 2, ItemsPerHost: 3, Delay: time.Second, Timeout: time.Minute,
		Server: ZabbixInstance{Target: tg.APIURL, User: tg.User, Password: tg.Password, Settle: time.Second, Name: "peregrine"}}
	sec, err := b.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := csvRows(t, sec)
	if c.Get(0, "checks") != "6" || c.Get(0, "missing") != "0" || c.Get(0, "wrong") != "0" {
		t.Errorf("row %v", c.Rows[0])
	}
}

// SSH checks against simulated SSH servers: each item's command's
// output is its value; a rate run stores values.
func TestChecksSSHInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs SSH checks for a few seconds")
	}
	tg, _ := startPeregrine(t)
	srv := ZabbixInstance{Target: tg.APIURL, User: tg.User, Password: tg.Password, Settle: time.Second, Name: "peregrine"}
	b := ChecksBench{Kind: "ssh", Mode: "sweep", Hosts: 2, ItemsPerHost: 3, Delay: time.Second, Timeout: time.Minute, Server: srv}
	sec, err := b.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := csvRows(t, sec)
	if c.Get(0, "checks") != "6" || c.Get(0, "missing") != "0" || c.Get(0, "wrong") != "0" {
		t.Errorf("row %v", c.Rows[0])
	}
	r := ChecksBench{Kind: "ssh", Mode: "rate", Hosts: 2, ItemsPerHost: 2, Delay: time.Second, Warmup: 2 * time.Second, Window: 2 * time.Second, Server: srv}
	sec, err = r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c = csvRows(t, sec)
	if c.Float(0, "ideal_per_s") != 4 || !(c.Float(0, "done_per_s") > 0) {
		t.Errorf("rate row %v", c.Rows[0])
	}
}

// Refused settings name the flag.
func TestChecksDefaults(t *testing.T) {
	for _, tc := range []struct {
		b    ChecksBench
		want string
	}{
		{ChecksBench{Kind: "icmp"}, "--kind"},
		{ChecksBench{Kind: "odbc"}, "--odbc-conn"},
		{ChecksBench{Kind: "snmp", Mode: "burst"}, "--mode"},
		{ChecksBench{Kind: "jmx"}, "--jmx-addr"},
		{ChecksBench{Kind: "snmp"}, "--target"},
		{ChecksBench{Kind: "snmp", Server: ZabbixInstance{Target: "x"}, Hosts: 1, ItemsPerHost: 1, Delay: 1500 * time.Millisecond}, "--delay"},
	} {
		if err := tc.b.defaults(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want one naming %s", tc.b, err, tc.want)
		}
	}
}

// The sweep's score: each item's first value after the request, values
// checked, items without one counted missing.
func TestChecksScore(t *testing.T) {
	k := &Checks{Expect: func(i int, v string) string {
		if v != "1" {
			return "not 1"
		}
		return ""
	}}
	s := &checkSet{itemIDs: []string{"10", "11", "12"}, index: map[string]int{"10": 0, "11": 1, "12": 2}}
	t0 := time.Unix(1000, 0)
	rows := []historyRow{
		{ItemID: "10", Clock: "1002", NS: "0", Value: "1"},
		{ItemID: "10", Clock: "1001", NS: "500000000", Value: "1"}, // the first of item 10
		{ItemID: "11", Clock: "1004", NS: "0", Value: "2"},
		{ItemID: "99", Clock: "1003", NS: "0", Value: "1"}, // not ours
	}
	var r SweepResult
	k.score(&r, s, t0, rows)
	if r.Missing != 1 || r.Wrong != 1 || r.Example != "not 1" || r.First != 1500*time.Millisecond || r.All != 4*time.Second || r.Values != 4 {
		t.Errorf("%+v", r)
	}
}

// JMX items through the real Java gateway: every item gets the JVM's
// uptime, nothing missing; a rate run stores values and samples the
// server's and the gateway's CPU.
func TestChecksJMXInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the Java gateway and a JVM")
	}
	app := testutil.StartJMXApp(t, testutil.JMXAppOptions{})
	gw := testutil.StartJavaGateway(t, testutil.JavaGatewayOptions{})
	gwHost, gwPort, _ := strings.Cut(gw.Addr, ":")
	tg, _ := startPeregrineWith(t, func(c *config.Config) {
		c.JMX.Gateway = gwHost
		c.JMX.GatewayPort, _ = strconv.Atoi(gwPort)
	})
	srv := ZabbixInstance{Target: tg.APIURL, User: tg.User, Password: tg.Password, Settle: time.Second, Name: "peregrine"}
	b := ChecksBench{Kind: "jmx", Mode: "sweep", Hosts: 2, ItemsPerHost: 3, Delay: time.Second, Timeout: time.Minute, Server: srv, JMXAddr: app.Addr}
	sec, err := b.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := csvRows(t, sec)
	if c.Get(0, "checks") != "6" || c.Get(0, "missing") != "0" || c.Get(0, "wrong") != "0" {
		t.Errorf("sweep row %v", c.Rows[0])
	}
	gp, _ := strconv.Atoi(gwPort)
	r := ChecksBench{Kind: "jmx", Mode: "rate", Hosts: 2, ItemsPerHost: 3, Delay: time.Second, Warmup: 2 * time.Second, Window: 2 * time.Second,
		Server: srv, JMXAddr: app.Addr, GatewayPort: gp}
	sec, err = r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c = csvRows(t, sec)
	if c.Float(0, "ideal_per_s") != 6 || !(c.Float(0, "done_per_s") > 0) || !(c.Float(0, "gateway_cpu_us_per_value") > 0) {
		t.Errorf("rate row %v", c.Rows[0])
	}
}
