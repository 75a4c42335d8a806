package config

import (
	"bytes"
	"strings"
	"testing"
)

func TestSNMPTrapUsers(t *testing.T) {
	good := `
snmp:
  trap_listen: ":1162"
  trap_users:
    - {securityname: a, engineid: "0x8000000001020304", securitylevel: 2, authprotocol: 3, authpassphrase: authpass1, privprotocol: 3, privpassphrase: privpass1}
    - {securityname: b, engineid: "80001f8804", securitylevel: 0}
`
	c, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if u := c.SNMP.TrapUsers; len(u) != 2 || !bytes.Equal(u[0].EngineIDBytes(), []byte{0x80, 0, 0, 0, 1, 2, 3, 4}) || u[1].SecurityLevel != 0 {
		t.Fatalf("users %+v", u)
	}
	f := func(user, want string) {
		t.Helper()
		_, err := Parse([]byte("snmp:\n  trap_users:\n    - " + user + "\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", user, err, want)
		}
	}
	f(`{engineid: "0x8000000001"}`, "snmp.trap_users[0].securityname")
	f(`{securityname: a, engineid: "0x80"}`, "snmp.trap_users[0].engineid")
	f(`{securityname: a, engineid: "0x80000000zz"}`, "snmp.trap_users[0].engineid")
	f(`{securityname: a, engineid: "0x8000000001", securitylevel: 3}`, "snmp.trap_users[0].securitylevel")
	f(`{securityname: a, engineid: "0x8000000001", securitylevel: 1, authpassphrase: short}`, "snmp.trap_users[0].authprotocol")
	f(`{securityname: a, engineid: "0x8000000001", securitylevel: 2, authpassphrase: longenough, privprotocol: 6, privpassphrase: longenough}`, "snmp.trap_users[0].privprotocol")
}
