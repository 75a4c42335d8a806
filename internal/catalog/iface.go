package catalog

import (
	"fmt"
	"net"
	"strconv"
)

// InterfaceType is the Zabbix host interface type number (the "type"
// field of hostinterface objects in the Zabbix API).
type InterfaceType uint8

// Zabbix host interface types.
const (
	InterfaceAgent InterfaceType = 1 // Zabbix agent, passive checks (type 0 items)
	InterfaceSNMP  InterfaceType = 2
	InterfaceIPMI  InterfaceType = 3
	InterfaceJMX   InterfaceType = 4
)

// Valid reports whether t is one of the four Zabbix interface types.
func (t InterfaceType) Valid() bool { return t >= InterfaceAgent && t <= InterfaceJMX }

// String returns the import-format name of t ("agent", "snmp", "ipmi",
// "jmx"), or "InterfaceType(N)".
func (t InterfaceType) String() string {
	switch t {
	case InterfaceAgent:
		return "agent"
	case InterfaceSNMP:
		return "snmp"
	case InterfaceIPMI:
		return "ipmi"
	case InterfaceJMX:
		return "jmx"
	}
	return "InterfaceType(" + strconv.Itoa(int(t)) + ")"
}

// DefaultPort returns the port Zabbix proposes for an interface of type
// t: 10050 agent, 161 SNMP, 623 IPMI, 12345 JMX; "" for an invalid type.
func (t InterfaceType) DefaultPort() string {
	switch t {
	case InterfaceAgent:
		return "10050"
	case InterfaceSNMP:
		return "161"
	case InterfaceIPMI:
		return "623"
	case InterfaceJMX:
		return "12345"
	}
	return ""
}

// ParseInterfaceType parses an interface type by import-format name
// ("agent", "snmp", "ipmi", "jmx") or by its Zabbix number "1".."4".
func ParseInterfaceType(s string) (InterfaceType, error) {
	for t := InterfaceAgent; t <= InterfaceJMX; t++ {
		if s == t.String() || s == strconv.Itoa(int(t)) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown interface type %q: use one of agent, snmp, ipmi, jmx (or the Zabbix numbers 1..4)", s)
}

// Interface is a host interface as seen in one Snapshot: where the server
// reaches the host for checks of the matching item types. It MUST NOT be
// modified.
type Interface struct {
	ID     uint64
	HostID uint64
	Type   InterfaceType
	// Main marks the default interface of its type; a host has exactly
	// one main interface of each type it has interfaces of (Zabbix rule).
	Main bool
	// UseIP selects IP (true) or DNS (false) to connect to.
	UseIP bool
	IP    string
	DNS   string
	// Port is a decimal port number; never empty in a snapshot (the
	// type's default port is filled in when the interface is created).
	Port string
}

// Addr returns the address to dial, "ip:port" or "dns:port" per UseIP,
// with an IPv6 address in brackets. An empty Port gives the type's
// default port.
func (f *Interface) Addr() string {
	host := f.DNS
	if f.UseIP {
		host = f.IP
	}
	port := f.Port
	if port == "" {
		port = f.Type.DefaultPort()
	}
	return net.JoinHostPort(host, port)
}

// MainInterface returns the host's main interface of type t, or nil if
// the host has no interface of that type.
func (h *Host) MainInterface(t InterfaceType) *Interface {
	for i := range h.Interfaces {
		if f := &h.Interfaces[i]; f.Type == t && f.Main {
			return f
		}
	}
	return nil
}

// Interface returns the host interface with the given ID, or nil.
func (s *Snapshot) Interface(id uint64) *Interface { return s.ifaceByID[id] }
