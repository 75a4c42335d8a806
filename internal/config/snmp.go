package config

import (
	"net"
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
	if s.TrapListen != "" {
		if _, _, err := net.SplitHostPort(s.TrapListen); err != nil {
			return fieldErr("snmp.trap_listen", "must be host:port (\":162\" for every address), not %q: %v", s.TrapListen, err)
		}
	}
	return nil
}
