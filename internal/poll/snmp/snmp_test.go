package snmp

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/snmpsim"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
)

// simTable is the simulated agents' MIB.
func simTable() []gosnmp.SnmpPDU {
	return []gosnmp.SnmpPDU{
		{Name: ".1.3.6.1.2.1.1.1.0", Type: gosnmp.OctetString, Value: []byte("Simulated device\r\nline 2")},
		{Name: ".1.3.6.1.2.1.1.2.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.4.1.8072.3.2.10"},
		{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(123456)},
		{Name: ".1.3.6.1.2.1.1.5.0", Type: gosnmp.OctetString, Value: []byte("sim")},
		{Name: ".1.3.6.1.2.1.2.2.1.2.1", Type: gosnmp.OctetString, Value: []byte("lo")},
		{Name: ".1.3.6.1.2.1.2.2.1.2.2", Type: gosnmp.OctetString, Value: []byte("eth0")},
		{Name: ".1.3.6.1.2.1.2.2.1.2.3", Type: gosnmp.OctetString, Value: []byte("eth1")},
		{Name: ".1.3.6.1.2.1.2.2.1.3.1", Type: gosnmp.Integer, Value: 24},
		{Name: ".1.3.6.1.2.1.2.2.1.3.2", Type: gosnmp.Integer, Value: 6},
		{Name: ".1.3.6.1.2.1.2.2.1.3.3", Type: gosnmp.Integer, Value: 6},
		{Name: ".1.3.6.1.2.1.2.2.1.6.2", Type: gosnmp.OctetString, Value: []byte{0x00, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e}},
		{Name: ".1.3.6.1.2.1.2.2.1.10.2", Type: gosnmp.Counter32, Value: uint32(4000000000)},
		{Name: ".1.3.6.1.2.1.4.20.1.1.127.0.0.1", Type: gosnmp.IPAddress, Value: "127.0.0.1"},
		{Name: ".1.3.6.1.2.1.31.1.1.1.6.2", Type: gosnmp.Counter64, Value: uint64(1<<40 + 5)},
		{Name: ".1.3.6.1.4.1.9999.1.0", Type: gosnmp.Integer, Value: -5},
		{Name: ".1.3.6.1.4.1.9999.2.0", Type: gosnmp.Gauge32, Value: uint32(42)},
	}
}

func startSim(t *testing.T, opts snmpsim.Options) *snmpsim.Fleet {
	t.Helper()
	if opts.Table == nil {
		opts.Table = simTable()
	}
	f, err := snmpsim.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

var v2 = map[string]string{"version": "2", "community": "public"}

// Every value type as Zabbix renders it, noSuchObject/noSuchInstance as
// not supported with net-snmp's messages, and all of one device's plain
// gets in one GET request.
func TestCheckerValues(t *testing.T) {
	f := startSim(t, snmpsim.Options{})
	items := []string{
		"descr=1.3.6.1.2.1.1.1.0", "objectid=SNMPv2-MIB::sysObjectID.0", "uptime=sysUpTime.0", "name=sysName.0",
		"mac=1.3.6.1.2.1.2.2.1.6.2", "counter32=IF-MIB::ifInOctets.2", "ip=1.3.6.1.2.1.4.20.1.1.127.0.0.1",
		"counter64=IF-MIB::ifHCInOctets.2", "negative=1.3.6.1.4.1.9999.1.0", "gauge=1.3.6.1.4.1.9999.2.0",
		"nosuchobject=1.3.6.1.2.1.1.99.0", "nosuchinstance=1.3.6.1.2.1.1.5.1",
	}
	e := newEnv(t, []catalog.HostSpec{snmpHost(t, "sim", f.Addr(0), v2, items...)}, Options{IdleClose: time.Minute})
	var keys []string
	for _, it := range items {
		k, _, _ := strings.Cut(it, "=")
		keys = append(keys, k)
	}
	got := e.run(t, e.checks(t, "sim", 2*time.Second, keys...))
	expect(t, got, map[string]want{
		"descr":          {poll.OK, "Simulated device\r\nline 2", ""},
		"objectid":       {poll.OK, ".1.3.6.1.4.1.8072.3.2.10", ""},
		"uptime":         {poll.OK, "123456", ""},
		"name":           {poll.OK, "sim", ""},
		"mac":            {poll.OK, "00 1A 2B 3C 4D 5E", ""},
		"counter32":      {poll.OK, "4000000000", ""},
		"ip":             {poll.OK, "127.0.0.1", ""},
		"counter64":      {poll.OK, "1099511627781", ""},
		"negative":       {poll.OK, "-5", ""},
		"gauge":          {poll.OK, "42", ""},
		"nosuchobject":   {poll.NotSupported, "", "No Such Object available on this agent at this OID"},
		"nosuchinstance": {poll.NotSupported, "", "No Such Instance currently exists at this OID"},
	})
	if got := metric(t, e.m, `peregrine_poll_snmp_requests_total{pdu="get"}`); got != "1" {
		t.Errorf("%d plain gets of one device went out in %s GET requests, want 1", len(items), got)
	}
	// Values are the scheduler's: appending to one leaves the next alone.
	v := got["name"].Value
	_ = append(v, "XXXX"...)
	if string(got["mac"].Value) != "00 1A 2B 3C 4D 5E" {
		t.Errorf("values share their backing array")
	}
	if got := metric(t, e.m, `peregrine_poll_snmp_in_flight`); got != "0" {
		t.Errorf("in flight %s after every result", got)
	}
}

// Many OIDs per request up to MaxOIDsPerRequest; tooBig halves the
// request until the device takes it; bulk 0 sends one OID per request.
func TestCheckerBatching(t *testing.T) {
	f := startSim(t, snmpsim.Options{MaxOIDs: 4})
	oids := []string{"sysDescr.0", "sysObjectID.0", "sysUpTime.0", "sysName.0", "ifDescr.1", "ifDescr.2", "ifDescr.3", "ifType.1", "ifType.2", "ifType.3"}
	noBulk := map[string]string{"version": "2", "community": "public", "bulk": "0"}
	e := newEnv(t, []catalog.HostSpec{
		snmpHost(t, "big", f.Addr(0), v2, oids...),
	}, Options{MaxOIDsPerRequest: 10, IdleClose: time.Minute})
	got := e.run(t, e.checks(t, "big", 2*time.Second, oids...))
	for _, k := range oids {
		if got[k].Status != poll.OK {
			t.Errorf("%s: %v %s", k, got[k].Status, got[k].Error)
		}
	}
	// 10 → tooBig; 5 and 5 → tooBig; 2, 3, 2, 3 answered.
	if n := metric(t, e.m, `peregrine_poll_snmp_requests_total{pdu="get"}`); n != "7" {
		t.Errorf("GET requests %s, want 7 (10, 5+5, 2+3+2+3)", n)
	}

	f2 := startSim(t, snmpsim.Options{})
	e2 := newEnv(t, []catalog.HostSpec{snmpHost(t, "nobulk", f2.Addr(0), noBulk, oids[:5]...)}, Options{})
	got = e2.run(t, e2.checks(t, "nobulk", 2*time.Second, oids[:5]...))
	if len(got) != 5 || metric(t, e2.m, `peregrine_poll_snmp_requests_total{pdu="get"}`) != "5" {
		t.Errorf("bulk 0: %d results in %s requests, want 5 in 5", len(got), metric(t, e2.m, `peregrine_poll_snmp_requests_total{pdu="get"}`))
	}
}

// SNMPv1: noSuchName names one OID, which alone becomes not supported;
// the request is asked again without it.
func TestCheckerV1NoSuchName(t *testing.T) {
	f := startSim(t, snmpsim.Options{})
	v1 := map[string]string{"version": "1", "community": "public"}
	e := newEnv(t, []catalog.HostSpec{snmpHost(t, "v1", f.Addr(0), v1, "sysName.0", "missing=1.3.6.1.2.1.1.99.0", "sysUpTime.0")}, Options{})
	got := e.run(t, e.checks(t, "v1", 2*time.Second, "sysName.0", "missing", "sysUpTime.0"))
	expect(t, got, map[string]want{
		"sysName.0":   {poll.OK, "sim", ""},
		"sysUpTime.0": {poll.OK, "123456", ""},
		"missing":     {poll.NotSupported, "", "SNMP error: (noSuchName) There is no such variable name in this MIB."},
	})
	if n := metric(t, e.m, `peregrine_poll_snmp_requests_total{pdu="get"}`); n != "2" {
		t.Errorf("GET requests %s, want 2", n)
	}
}

// Walks: discovery[] gives LLD rows, a dynamic index finds its index,
// walks are bounded; GetBulk for v2c, GetNext for v1.
func TestCheckerWalks(t *testing.T) {
	f := startSim(t, snmpsim.Options{})
	v1 := map[string]string{"version": "1", "community": "public"}
	items := []string{
		"disc=discovery[{#IFDESCR},1.3.6.1.2.1.2.2.1.2,{#IFTYPE},IF-MIB::ifType,{#MAC},1.3.6.1.2.1.2.2.1.6]",
		`eth1type=ifType["index","ifDescr","eth1"]`,
		`nothere=ifType["index","ifDescr","wlan0"]`,
		"empty=discovery[{#X},1.3.6.1.4.1.1234]",
	}
	e := newEnv(t, []catalog.HostSpec{
		snmpHost(t, "v2", f.Addr(0), v2, items...),
		snmpHost(t, "v1", f.Addr(0), v1, items[:2]...),
	}, Options{MaxRepetitions: 2})
	wantDisc := []map[string]string{
		{"{#SNMPINDEX}": "1", "{#IFDESCR}": "lo", "{#IFTYPE}": "24"},
		{"{#SNMPINDEX}": "2", "{#IFDESCR}": "eth0", "{#IFTYPE}": "6", "{#MAC}": "00 1A 2B 3C 4D 5E"},
		{"{#SNMPINDEX}": "3", "{#IFDESCR}": "eth1", "{#IFTYPE}": "6"},
	}
	for _, host := range []string{"v2", "v1"} {
		keys := []string{"disc", "eth1type"}
		if host == "v2" {
			keys = append(keys, "nothere", "empty")
		}
		got := e.run(t, e.checks(t, host, 2*time.Second, keys...))
		expect(t, got, map[string]want{"disc": {poll.OK, "[*", ""}, "eth1type": {poll.OK, "6", ""}})
		var rows []map[string]string
		if err := json.Unmarshal(got["disc"].Value, &rows); err != nil {
			t.Fatalf("%s: discovery %q: %v", host, got["disc"].Value, err)
		}
		if len(rows) != len(wantDisc) {
			t.Fatalf("%s: discovery rows %v", host, rows)
		}
		for i := range rows {
			for k, v := range wantDisc[i] {
				if rows[i][k] != v {
					t.Errorf("%s: row %d: %s = %q, want %q (%v)", host, i, k, rows[i][k], v, rows[i])
				}
			}
		}
		if host == "v2" {
			expect(t, got, map[string]want{
				"nothere": {poll.NotSupported, "", `Cannot find index of "wlan0" in ".1.3.6.1.2.1.2.2.1.2".`},
				"empty":   {poll.OK, "[]", ""},
			})
		}
	}
	if metric(t, e.m, `peregrine_poll_snmp_requests_total{pdu="getbulk"}`) == "0" || metric(t, e.m, `peregrine_poll_snmp_requests_total{pdu="getnext"}`) == "0" {
		t.Errorf("v2c walks should use GetBulk and v1 walks GetNext")
	}

	small := newEnv(t, []catalog.HostSpec{snmpHost(t, "v2", f.Addr(0), v2, items[0])}, Options{MaxWalkValues: 2})
	got := small.run(t, small.checks(t, "v2", 2*time.Second, "disc"))
	expect(t, got, map[string]want{"disc": {poll.NotSupported, "", "has more than 2 values"}})
}

// A silent device is a network error (Timeout while connecting), a
// closed port too (refused); an answer that is not SNMP, or that does
// not match the request, makes only the items of that request not
// supported. A silent device holds nobody else's checks.
func TestCheckerFailures(t *testing.T) {
	garbage := []byte{0x30, 0x03, 0x02, 0x01}
	f := startSim(t, snmpsim.Options{Agents: 4, Hook: func(agent int, req *gosnmp.SnmpPacket) ([]byte, bool) {
		switch agent {
		case 0:
			return nil, true // silent
		case 1:
			return garbage, false
		case 2:
			resp := &gosnmp.SnmpPacket{Version: req.Version, Community: req.Community, PDUType: gosnmp.GetResponse, RequestID: req.RequestID,
				Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.2.1.1.7.0", Type: gosnmp.Integer, Value: 1}}}
			b, _ := resp.MarshalMsg()
			return b, false
		}
		return nil, false
	}})
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := pc.LocalAddr().String()
	pc.Close()
	e := newEnv(t, []catalog.HostSpec{
		snmpHost(t, "silent", f.Addr(0), v2, "sysName.0"),
		snmpHost(t, "garbage", f.Addr(1), v2, "sysName.0"),
		snmpHost(t, "mismatch", f.Addr(2), v2, "sysName.0"),
		snmpHost(t, "good", f.Addr(3), v2, "sysName.0", "sysUpTime.0"),
		snmpHost(t, "closed", closed, v2, "sysName.0"),
		snmpHost(t, "wrongcomm", f.Addr(3), map[string]string{"version": "2", "community": "wrong"}, "sysName.0"),
	}, Options{})
	var batch []poll.Check
	for _, h := range []string{"silent", "garbage", "mismatch", "good", "closed", "wrongcomm"} {
		for _, c := range e.checks(t, h, time.Second, "sysName.0") {
			c.Key = h // results by host
			batch = append(batch, c)
		}
	}
	got := e.run(t, batch)
	expect(t, got, map[string]want{
		"silent":    {poll.NetworkError, "", `Timeout while connecting to "` + f.Addr(0) + `".`},
		"garbage":   {poll.NotSupported, "", "invalid SNMP response from " + f.Addr(1)},
		"mismatch":  {poll.NotSupported, "", "invalid SNMP response: value 1 is for OID .1.3.6.1.2.1.1.7.0, not .1.3.6.1.2.1.1.5.0"},
		"good":      {poll.OK, "sim", ""},
		"closed":    {poll.NetworkError, "", "connection refused"},
		"wrongcomm": {poll.NetworkError, "", "Timeout while connecting"},
	})
	for _, l := range []struct{ m, want string }{
		{`peregrine_poll_snmp_errors_total{reason="timeout"}`, "2"},
		{`peregrine_poll_snmp_errors_total{reason="malformed"}`, "2"},
		{`peregrine_poll_snmp_errors_total{reason="refused"}`, "1"},
		{`peregrine_poll_snmp_checks_total{result="ok"}`, "1"},
	} {
		if got := metric(t, e.m, l.m); got != l.want {
			t.Errorf("%s = %s, want %s", l.m, got, l.want)
		}
	}
}

// One request at a time per device: checks handed over while a device's
// request is unanswered wait for it, then go out together; another
// device is not held meanwhile.
func TestCheckerOneRequestPerDevice(t *testing.T) {
	var firstDone, secondSeenEarly atomic.Bool
	var reqs atomic.Int32
	f := startSim(t, snmpsim.Options{Agents: 2, Hook: func(agent int, req *gosnmp.SnmpPacket) ([]byte, bool) {
		if agent != 0 {
			return nil, false
		}
		switch reqs.Add(1) {
		case 1:
			return nil, true // unanswered: the check times out
		default:
			if !firstDone.Load() {
				secondSeenEarly.Store(true)
			}
		}
		return nil, false
	}})
	e := newEnv(t, []catalog.HostSpec{
		snmpHost(t, "slow", f.Addr(0), v2, "sysName.0", "sysUpTime.0", "sysDescr.0"),
		snmpHost(t, "fast", f.Addr(1), v2, "sysName.0"),
	}, Options{})
	first := e.checks(t, "slow", time.Second, "sysName.0")
	results := make(chan *poll.Result, 4)
	e.c.Check(e.ctx, first, func(r *poll.Result) { firstDone.Store(true); results <- r })
	// Wait until the first request is out (the agent saw it).
	for reqs.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	e.c.Check(e.ctx, e.checks(t, "slow", time.Second, "sysUpTime.0", "sysDescr.0"), func(r *poll.Result) { results <- r })
	fast := e.run(t, e.checks(t, "fast", time.Second, "sysName.0"))
	if fast["sysName.0"].Status != poll.OK {
		t.Fatalf("the other device's check: %+v", fast["sysName.0"])
	}
	if firstDone.Load() {
		t.Fatalf("the slow device's first check ended before the other device's check")
	}
	for range 3 {
		r := <-results
		want := poll.OK
		if r.Key == "sysName.0" {
			want = poll.NetworkError
		}
		if r.Status != want {
			t.Errorf("%s: %v %s", r.Key, r.Status, r.Error)
		}
	}
	if secondSeenEarly.Load() {
		t.Errorf("a second request reached the device while its first was unanswered")
	}
	if n := reqs.Load(); n != 2 {
		t.Errorf("the slow device got %d requests, want 2 (the second batching both later checks)", n)
	}
}

// A request already out when ctx ends is abandoned at once, not at its
// timeout: gosnmp looks at its Context only before sending, so the
// checker closes the session's socket (found by polltest's
// CancelInFlight: a stopping server waited a whole item timeout per
// dead device).
func TestCheckerCancelRequestInFlight(t *testing.T) {
	seen := make(chan struct{}, 1)
	f := startSim(t, snmpsim.Options{Hook: func(int, *gosnmp.SnmpPacket) ([]byte, bool) {
		select {
		case seen <- struct{}{}:
		default:
		}
		return nil, true // never answered
	}})
	e := newEnv(t, []catalog.HostSpec{snmpHost(t, "dead", f.Addr(0), v2, "sysName.0")}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	results := make(chan *poll.Result, 1)
	e.c.Check(ctx, e.checks(t, "dead", time.Hour, "sysName.0"), func(r *poll.Result) { results <- r })
	<-seen // the request is out
	cancel()
	select {
	case r := <-results:
		if r.Status != poll.NetworkError || !strings.Contains(r.Error, "stopping") {
			t.Errorf("after cancel: %v %q, want abandoned", r.Status, r.Error)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a check with an hour's timeout was not abandoned within 10 s of ctx ending")
	}
}

func TestRender(t *testing.T) {
	f := func(v gosnmp.SnmpPDU, want string, wantOK bool) {
		t.Helper()
		got, msg, ok := render(nil, &v)
		if ok != wantOK || (ok && string(got) != want) || (!ok && msg != want) {
			t.Errorf("render(%+v) = %q, %q, %v; want %q, %v", v, got, msg, ok, want, wantOK)
		}
	}
	f(gosnmp.SnmpPDU{Type: gosnmp.OpaqueFloat, Value: float32(1.5)}, "1.5", true)
	f(gosnmp.SnmpPDU{Type: gosnmp.OpaqueDouble, Value: 0.1}, "0.1", true)
	f(gosnmp.SnmpPDU{Type: gosnmp.Counter64, Value: uint64(18446744073709551615)}, "18446744073709551615", true)
	f(gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: []byte("caf\xc3\xa9")}, "63 61 66 C3 A9", true)
	f(gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: []byte{}}, "", true)
	f(gosnmp.SnmpPDU{Type: gosnmp.Opaque, Value: []byte("ab")}, "61 62", true)
	f(gosnmp.SnmpPDU{Type: gosnmp.EndOfMibView}, msgEndOfMibView, false)
	f(gosnmp.SnmpPDU{Type: gosnmp.Null}, "Value has unknown type", false)
	f(gosnmp.SnmpPDU{Type: gosnmp.Integer, Value: struct{}{}}, "Value has unknown type", false)
}

// Checks handed over one after another, while the device's worker is
// busy, idle or leaving, each get exactly one result with their own
// check (the worker's queue buffers are never shared with Check's).
func TestCheckerBackToBack(t *testing.T) {
	f := startSim(t, snmpsim.Options{})
	e := newEnv(t, []catalog.HostSpec{snmpHost(t, "sim", f.Addr(0), v2, "sysName.0", "sysUpTime.0", "sysDescr.0")}, Options{IdleClose: time.Second})
	keys := []string{"sysName.0", "sysUpTime.0", "sysDescr.0"}
	all := e.checks(t, "sim", 2*time.Second, keys...)
	res := make(chan *poll.Result, 3)
	for round := range 300 {
		for i := range all {
			e.c.Check(e.ctx, all[i:i+1], func(r *poll.Result) { res <- r })
			if round%3 == 0 {
				time.Sleep(time.Duration(i) * 100 * time.Microsecond)
			}
		}
		seen := map[string]bool{}
		for range all {
			r := <-res
			if r.Status != poll.OK || seen[r.Key] {
				t.Fatalf("round %d: %s %v %s (seen %v)", round, r.Key, r.Status, r.Error, seen)
			}
			seen[r.Key] = true
		}
	}
}
