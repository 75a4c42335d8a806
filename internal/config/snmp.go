package config

import (
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"time"
)

// SNMPConfig configures the SNMP checker (SNMP agent items, type 20)
// and the SNMP trap receiver (SNMP trap items, type 17). Restart to
// change.
type SNMPConfig struct {
	// MaxInFlight bounds SNMP checks in flight; 0 leaves only
	// poll.max_in_flight.
	MaxInFlight int `yaml:"max_in_flight"`
	// MaxOIDsPerRequest bounds the OIDs of one GET request (a device's
	// due items are batched up to it).
	MaxOIDsPerRequest int `yaml:"max_oids_per_request"`
	// MaxRepetitions is GetBulk's max-repetitions in walks.
	MaxRepetitions int `yaml:"max_repetitions"`
	// MaxWalkValues bounds the values of one walk (discovery[], dynamic
	// index).
	MaxWalkValues int `yaml:"max_walk_values"`
	// IdleClose is how long a device's session stays open after its
	// last check.
	IdleClose Duration `yaml:"idle_close"`
	// TrapListen is the UDP address of the trap receiver; "" (the
	// default) receives no traps.
	TrapListen string `yaml:"trap_listen"`
	// TrapUsers are the SNMPv3 users whose traps are accepted, as
	// snmptrapd's "createUser -e ENGINEID ...": without them SNMPv3
	// traps are dropped.
	TrapUsers []SNMPTrapUser `yaml:"trap_users"`
}

// SNMPTrapUser is one SNMPv3 trap sender's USM user, with the numbers
// of Zabbix's SNMPv3 interface details.
type SNMPTrapUser struct {
	SecurityName string `yaml:"securityname"`
	// EngineID is the sender's authoritative engine ID in hex ("0x"
	// optional), as snmptrap -e takes it.
	EngineID       string `yaml:"engineid"`
	SecurityLevel  int    `yaml:"securitylevel"` // 0 noAuthNoPriv, 1 authNoPriv, 2 authPriv
	AuthProtocol   int    `yaml:"authprotocol"`  // 0 MD5, 1 SHA1, 2 SHA224, 3 SHA256, 4 SHA384, 5 SHA512
	AuthPassphrase string `yaml:"authpassphrase"`
	PrivProtocol   int    `yaml:"privprotocol"` // 0 DES, 1 AES128, 2 AES192, 3 AES256, 4 AES192C, 5 AES256C
	PrivPassphrase string `yaml:"privpassphrase"`
}

// defaultSNMP is the snmp section's defaults.
func defaultSNMP() SNMPConfig {
	return SNMPConfig{MaxOIDsPerRequest: 64, MaxRepetitions: 10, MaxWalkValues: 10000, IdleClose: Duration(30 * time.Second)}
}

func (s *SNMPConfig) validate(poll *PollConfig) error {
	if s.MaxInFlight < 0 || s.MaxInFlight > poll.MaxInFlight {
		return fieldErr("snmp.max_in_flight", "must be between 0 (no own bound) and poll.max_in_flight (%d), not %d", poll.MaxInFlight, s.MaxInFlight)
	}
	if s.MaxOIDsPerRequest < 1 || s.MaxOIDsPerRequest > 128 {
		return fieldErr("snmp.max_oids_per_request", "must be between 1 and 128 (Zabbix's bound), not %d", s.MaxOIDsPerRequest)
	}
	if s.MaxRepetitions < 1 || s.MaxRepetitions > 1000 {
		return fieldErr("snmp.max_repetitions", "must be between 1 and 1000, not %d", s.MaxRepetitions)
	}
	if s.MaxWalkValues < 1 || s.MaxWalkValues > 10_000_000 {
		return fieldErr("snmp.max_walk_values", "must be between 1 and 10000000, not %d", s.MaxWalkValues)
	}
	if s.IdleClose < Duration(time.Second) || s.IdleClose > Duration(time.Hour) {
		return fieldErr("snmp.idle_close", "must be between 1s and 1h, not %s", s.IdleClose)
	}
	for i, u := range s.TrapUsers {
		f := fmt.Sprintf("snmp.trap_users[%d]", i)
		eid := strings.TrimPrefix(strings.TrimPrefix(u.EngineID, "0x"), "0X")
		switch {
		case u.SecurityName == "":
			return fieldErr(f+".securityname", "must be set")
		case len(eid) < 10 || len(eid) > 64 || strings.Trim(strings.ToLower(eid), "0123456789abcdef") != "" || len(eid)%2 != 0:
			return fieldErr(f+".engineid", "must be the sender's engine ID, 5 to 32 bytes in hex (as snmptrap -e takes it)")
		case u.SecurityLevel < 0 || u.SecurityLevel > 2:
			return fieldErr(f+".securitylevel", "must be 0 (noAuthNoPriv), 1 (authNoPriv) or 2 (authPriv), not %d", u.SecurityLevel)
		case u.SecurityLevel >= 1 && (u.AuthProtocol < 0 || u.AuthProtocol > 5 || len(u.AuthPassphrase) < 8):
			return fieldErr(f+".authprotocol", "needs authprotocol 0..5 and an authpassphrase of at least 8 characters")
		case u.SecurityLevel == 2 && (u.PrivProtocol < 0 || u.PrivProtocol > 5 || len(u.PrivPassphrase) < 8):
			return fieldErr(f+".privprotocol", "needs privprotocol 0..5 and a privpassphrase of at least 8 characters")
		}
	}
	if s.TrapListen != "" {
		if _, _, err := net.SplitHostPort(s.TrapListen); err != nil {
			return fieldErr("snmp.trap_listen", "must be host:port (\":162\" for every address), not %q: %v", s.TrapListen, err)
		}
	}
	return nil
}

// EngineIDBytes is EngineID decoded (validated by Validate).
func (u *SNMPTrapUser) EngineIDBytes() []byte {
	b, _ := hex.DecodeString(strings.TrimPrefix(strings.TrimPrefix(u.EngineID, "0x"), "0X"))
	return b
}
