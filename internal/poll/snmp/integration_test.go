package snmp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationSnmpd polls the real net-snmp agent on loopback with
// SNMPv1, v2c and v3 authPriv (SHA/AES and MD5/DES), walks its interface
// table, and checks what wrong credentials do.
func TestIntegrationSnmpd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts snmpd")
	}
	s := testutil.StartSnmpd(t)
	v3 := func(user, auth, priv string) map[string]string {
		return map[string]string{"version": "3", "securityname": user, "securitylevel": "2", "authprotocol": auth,
			"authpassphrase": s.AuthPass, "privprotocol": priv, "privpassphrase": s.PrivPass}
	}
	items := []string{"sysName.0", "sysLocation.0", "sysContact.0", "sysUpTime.0", "sysObjectID.0",
		"missing=1.3.6.1.2.1.1.99.0",
		"ifdisc=discovery[{#IFDESCR},IF-MIB::ifDescr,{#IFTYPE},IF-MIB::ifType]",
		`lotype=IF-MIB::ifType["index","IF-MIB::ifDescr","lo"]`,
		"lo.in=IF-MIB::ifHCInOctets.1"}
	wrongPass := v3(testutil.SnmpdUserSHAAES, "1", "1")
	wrongPass["authpassphrase"] = "not-the-passphrase"
	e := newEnv(t, []catalog.HostSpec{
		snmpHost(t, "v1", s.Addr, map[string]string{"version": "1", "community": s.Community}, items...),
		snmpHost(t, "v2c", s.Addr, map[string]string{"version": "2", "community": s.Community}, items...),
		snmpHost(t, "v3-sha-aes", s.Addr, v3(testutil.SnmpdUserSHAAES, "1", "1"), items...),
		snmpHost(t, "v3-md5-des", s.Addr, v3(testutil.SnmpdUserMD5DES, "0", "0"), items...),
		snmpHost(t, "wrong-community", s.Addr, map[string]string{"version": "2", "community": "nope"}, "sysName.0"),
		snmpHost(t, "wrong-pass", s.Addr, wrongPass, "sysName.0"),
		snmpHost(t, "unknown-user", s.Addr, v3("nobody-here", "1", "1"), "sysName.0"),
		snmpHost(t, "v3-authnopriv", s.Addr, map[string]string{"version": "3", "securityname": testutil.SnmpdUserSHA256, "securitylevel": "1",
			"authprotocol": "3", "authpassphrase": s.AuthPass}, "sysName.0"),
		snmpHost(t, "v3-noauth", s.Addr, map[string]string{"version": "3", "securityname": testutil.SnmpdUserNoAuth, "securitylevel": "0"}, "sysName.0"),
	}, Options{})
	var keys []string
	for _, it := range items {
		k, _, _ := strings.Cut(it, "=")
		keys = append(keys, k)
	}
	for _, host := range []string{"v1", "v2c", "v3-sha-aes", "v3-md5-des"} {
		got := e.run(t, e.checks(t, host, 3*time.Second, keys...))
		missing := want{poll.NotSupported, "", "No Such Object available on this agent at this OID"}
		counters := []string{"sysUpTime.0", "lo.in"}
		if host == "v1" {
			missing = want{poll.NotSupported, "", "(noSuchName)"}
			// SNMPv1 has no Counter64: the agent leaves ifHCInOctets out.
			expect(t, got, map[string]want{"lo.in": missing})
			counters = counters[:1]
		}
		expect(t, got, map[string]want{
			"sysName.0":     {poll.OK, s.SysName, ""},
			"sysLocation.0": {poll.OK, s.SysLocation, ""},
			"sysContact.0":  {poll.OK, s.SysContact, ""},
			"sysObjectID.0": {poll.OK, ".1.3.6.1.4.1.8072.3.2.*", ""},
			"missing":       missing,
			"lotype":        {poll.OK, "24", ""}, // softwareLoopback
		})
		for _, k := range counters {
			if r := got[k]; r.Status != poll.OK || strings.Trim(string(r.Value), "0123456789") != "" || len(r.Value) == 0 {
				t.Errorf("%s %s: %v %q %s, want a number", host, k, r.Status, r.Value, r.Error)
			}
		}
		var rows []map[string]string
		if r := got["ifdisc"]; r.Status != poll.OK || json.Unmarshal(r.Value, &rows) != nil {
			t.Fatalf("%s: discovery %v %q %s", host, r.Status, r.Value, r.Error)
		}
		found := false
		for _, row := range rows {
			if row["{#IFDESCR}"] == "lo" && row["{#IFTYPE}"] == "24" && row["{#SNMPINDEX}"] != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: the interface table walk has no loopback row: %v", host, rows)
		}
	}
	var batch []poll.Check
	for _, h := range []string{"wrong-community", "wrong-pass", "unknown-user", "v3-authnopriv", "v3-noauth"} {
		c := e.checks(t, h, time.Second, "sysName.0")[0]
		c.Key = h
		batch = append(batch, c)
	}
	expect(t, e.run(t, batch), map[string]want{
		// snmpd drops a wrong community silently, as every agent does.
		"wrong-community": {poll.NetworkError, "", "Timeout while connecting"},
		"wrong-pass":      {poll.NotSupported, "", "SNMP error: authentication failure"},
		"unknown-user":    {poll.NotSupported, "", "SNMP error: authentication failure"},
		"v3-authnopriv":   {poll.OK, s.SysName, ""},
		"v3-noauth":       {poll.OK, s.SysName, ""},
	})
}
