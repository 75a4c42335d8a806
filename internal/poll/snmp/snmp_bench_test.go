package snmp

import (
	"fmt"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/snmpsim"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// benchTable is a device's MIB for the benchmarks: n Counter64 values
// under 1.3.6.1.4.1.9999.1.
func benchTable(n int) []gosnmp.SnmpPDU {
	t := make([]gosnmp.SnmpPDU, n)
	for i := range t {
		t[i] = gosnmp.SnmpPDU{Name: fmt.Sprintf(".1.3.6.1.4.1.9999.1.%d.0", i+1), Type: gosnmp.Counter64, Value: uint64(i) << 20}
	}
	return t
}

// runBench hands every device's items over as one batch (items of one
// interval fall due together), keeping at most inFlight checks out, and
// reports OIDs per second; one op is one OID checked.
func runBench(b *testing.B, e *env, perHost [][]poll.Check, inFlight int) {
	b.Helper()
	sem := make(chan struct{}, inFlight)
	done := func(r *poll.Result) {
		if r.Status != poll.OK {
			b.Errorf("%s: %v %s", r.Key, r.Status, r.Error)
		}
		<-sem
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i, h := 0, 0; i < b.N; h++ {
		batch := perHost[h%len(perHost)]
		batch = batch[:min(len(batch), b.N-i)]
		for range batch {
			sem <- struct{}{}
		}
		e.c.Check(e.ctx, batch, done)
		i += len(batch)
	}
	for range inFlight {
		sem <- struct{}{}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "oids/s")
}

func benchEnv(b *testing.B, addrs []string, items int, details map[string]string) (*env, [][]poll.Check) {
	b.Helper()
	var hosts []catalog.HostSpec
	var oids []string
	for i := range items {
		oids = append(oids, fmt.Sprintf("k%d=1.3.6.1.4.1.9999.1.%d.0", i, i+1))
	}
	for i, a := range addrs {
		hosts = append(hosts, snmpHost(b, fmt.Sprintf("dev-%d", i), a, details, oids...))
	}
	e := newEnv(b, hosts, Options{IdleClose: time.Minute})
	var perHost [][]poll.Check
	for i := range addrs {
		var keys []string
		for j := range items {
			keys = append(keys, fmt.Sprintf("k%d", j))
		}
		perHost = append(perHost, e.checks(b, fmt.Sprintf("dev-%d", i), 5*time.Second, keys...))
	}
	return e, perHost
}

// BenchmarkFleet polls simulated SNMPv2c devices, each on its own
// loopback address, 64 items per device (one GET each round), 4,096
// checks in flight: the hybrid mode's figure (the agents' CPU included).
//
//	go test -run '^$' -bench Fleet -benchtime 200000x -count 6 ./internal/poll/snmp/
func BenchmarkFleet(b *testing.B) {
	for _, devices := range []int{10, 200} {
		b.Run(fmt.Sprintf("devices=%d", devices), func(b *testing.B) {
			f, err := snmpsim.Start(snmpsim.Options{Agents: devices, DistinctAddrs: true, Table: benchTable(64)})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			addrs := make([]string, devices)
			for i := range addrs {
				addrs[i] = f.Addr(i)
			}
			e, perHost := benchEnv(b, addrs, 64, v2)
			runBench(b, e, perHost, 4096)
		})
	}
}

// BenchmarkSnmpd polls one real net-snmp agent (one device: one request
// at a time), 64 OIDs of the system and interface tables per round,
// SNMPv2c and SNMPv3 authPriv (SHA/AES).
//
//	go test -run '^$' -bench Snmpd -benchtime 20000x -count 6 ./internal/poll/snmp/
func BenchmarkSnmpd(b *testing.B) {
	d := testutil.StartSnmpd(b)
	for _, tc := range []struct {
		name    string
		details map[string]string
	}{
		{"v2c", map[string]string{"version": "2", "community": d.Community}},
		{"v3-sha-aes", map[string]string{"version": "3", "securityname": testutil.SnmpdUserSHAAES, "securitylevel": "2",
			"authprotocol": "1", "authpassphrase": d.AuthPass, "privprotocol": "1", "privpassphrase": d.PrivPass}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			// 25 instances snmpd has (the system group and the
			// loopback's ifTable row), 64 items over them: every GET
			// asks 64 OIDs, some twice.
			oids := []string{"1.3.6.1.2.1.1.1.0", "1.3.6.1.2.1.1.3.0", "1.3.6.1.2.1.1.4.0", "1.3.6.1.2.1.1.5.0", "1.3.6.1.2.1.1.6.0"}
			for col := 1; len(oids) < 25; col++ {
				oids = append(oids, fmt.Sprintf("1.3.6.1.2.1.2.2.1.%d.1", col))
			}
			var items []string
			for i := 0; i < 64; i++ {
				items = append(items, fmt.Sprintf("k%d=%s", i, oids[i%len(oids)]))
			}
			e := newEnv(b, []catalog.HostSpec{snmpHost(b, "snmpd", d.Addr, tc.details, items...)}, Options{IdleClose: time.Minute})
			var keys []string
			for i := range items {
				keys = append(keys, fmt.Sprintf("k%d", i))
			}
			runBench(b, e, [][]poll.Check{e.checks(b, "snmpd", 5*time.Second, keys...)}, 64)
		})
	}
}
