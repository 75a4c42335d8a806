package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
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
	// Details are an SNMP interface's settings ("version", "community",
	// ...) as the Zabbix 6.0 API names them, complete (defaults filled
	// in, see checkSNMPDetails); nil for other types. The SNMP checker
	// (package poll/snmp) reads them; community and the passphrases are
	// secrets: never log them.
	Details map[string]string
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
func (s *Snapshot) Interface(id uint64) *Interface { return s.ifaceByID.get(id) }

// Zabbix's names of the interface types, as its messages use them ("No
// default interface for "agent" type on ...", recorded from 6.0.14).
func (t InterfaceType) zabbixName() string {
	switch t {
	case InterfaceAgent:
		return "agent"
	case InterfaceSNMP:
		return "SNMP"
	case InterfaceIPMI:
		return "IPMI"
	case InterfaceJMX:
		return "JMX"
	}
	return t.String()
}

// ItemInterfaceType returns the interface type items of type t are polled
// through and whether they must have one. Agent items need an agent
// interface (Zabbix refuses them without: "No interface found."); SNMP
// agent and trap items use an SNMP interface but may be stored without
// one (the import keeps them unpolled; the scheduler reports them not
// supported, the trap receiver cannot match them); simple, external and HTTP checks may name any
// interface (0 = any type); SSH and Telnet items need one, of any type,
// whose address they connect to (6.0 refuses them without: "No
// interface found.", and takes agent, SNMP and IPMI interfaces alike,
// recorded from 6.0.14); trapper, internal and active items use none.
func ItemInterfaceType(t ItemType) (it InterfaceType, uses, required bool) {
	switch t {
	case ZabbixAgent:
		return InterfaceAgent, true, true
	case SSHAgent, TelnetAgent:
		return 0, true, true
	case SNMPAgent, SNMPTrap:
		return InterfaceSNMP, true, false
	case IPMI:
		return InterfaceIPMI, true, false
	case JMX:
		return InterfaceJMX, true, true
	case SimpleCheck, External, HTTPAgent:
		return 0, true, false
	}
	return 0, false, false
}

// snmpDetailKeys are the members of a Zabbix 6.0 SNMP interface's
// "details".
var snmpDetailKeys = map[string]bool{
	"version": true, "bulk": true, "community": true, "securityname": true,
	"securitylevel": true, "authpassphrase": true, "privpassphrase": true,
	"authprotocol": true, "privprotocol": true, "contextname": true,
}

// Length limits of interface fields, from the Zabbix database schema.
const (
	maxIPLen  = 64
	maxDNSLen = 255
)

// IfaceProblem is what is wrong with a host interface's address or
// port (IfaceError).
type IfaceProblem uint8

// Problems of an interface's address and port.
const (
	IfaceNoAddress IfaceProblem = iota + 1 // neither an IP nor a DNS name
	IfaceNoIP                              // useip 1 and no IP (Value: the DNS name)
	IfaceNoDNS                             // useip 0 and no DNS name (Value: the IP)
	IfaceBadIP                             // Value is no IP address
	IfaceBadDNS                            // Value is no DNS name
	IfaceBadPort                           // Value is no port number
)

// IfaceError is a host interface's address or port refused: Problem
// says what for callers that word it their own way (the API words it
// as Zabbix 6.0 does), Error is Peregrine's text. Host is the host's
// technical name.
type IfaceError struct {
	Problem IfaceProblem
	Value   string
	Host    string
	msg     string
}

func (e *IfaceError) Error() string { return e.msg }

func ifaceErr(pr IfaceProblem, value, host, format string, args ...any) *IfaceError {
	return &IfaceError{Problem: pr, Value: value, Host: host, msg: fmt.Sprintf(format, args...)}
}

// normIface validates one interface of host and fills in its default
// port, reporting errors under the field path p.
func normIface(f *Interface, host, p string, el *errList) {
	if !f.Type.Valid() {
		el.addf(p+".type", "unknown interface type %d: use 1 (agent), 2 (SNMP), 3 (IPMI) or 4 (JMX)", f.Type)
	}
	switch {
	case f.IP == "" && f.DNS == "":
		field, mode := ".dns", "0 (connect by DNS name)"
		if f.UseIP {
			field, mode = ".ip", "1 (connect by IP address)"
		}
		el.add(p+field, ifaceErr(IfaceNoAddress, "", host, "cannot be empty when useip is %s", mode))
	case f.UseIP && f.IP == "":
		el.add(p+".ip", ifaceErr(IfaceNoIP, f.DNS, host, "cannot be empty when useip is 1 (connect by IP address)"))
	case !f.UseIP && f.DNS == "":
		el.add(p+".dns", ifaceErr(IfaceNoDNS, f.IP, host, "cannot be empty when useip is 0 (connect by DNS name)"))
	}
	if f.IP != "" && (len(f.IP) > maxIPLen || net.ParseIP(f.IP) == nil) {
		el.add(p+".ip", ifaceErr(IfaceBadIP, f.IP, host, "%q is not an IPv4 or IPv6 address", f.IP))
	}
	if f.DNS != "" {
		if err := checkDNS(f.DNS); err != nil {
			el.add(p+".dns", ifaceErr(IfaceBadDNS, f.DNS, host, "%s", err))
		}
	}
	if f.Port == "" {
		f.Port = f.Type.DefaultPort()
	} else if n, err := strconv.ParseUint(f.Port, 10, 16); err != nil || strconv.FormatUint(n, 10) != f.Port {
		el.add(p+".port", ifaceErr(IfaceBadPort, f.Port, host, "%q is not a port number 0..65535", f.Port))
	}
	switch {
	case f.Type == InterfaceSNMP:
		f.Details = checkSNMPDetails(f.Details, p+".details", el)
	case len(f.Details) > 0:
		el.addf(p+".details", "only SNMP interfaces have details")
	}
}

// checkDNS accepts host names of letters, digits, '-', '_' and '.', as
// Zabbix's DNS field validation does (without user macros).
func checkDNS(s string) error {
	if len(s) > maxDNSLen {
		return fmt.Errorf("DNS name %q is longer than %d characters", s, maxDNSLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '.' || c == '-' || c == '_') {
			return fmt.Errorf("DNS name %q contains %q: only letters, digits, '.', '-' and '_' are allowed", s, rune(c))
		}
	}
	return nil
}

// checkSNMPDetails validates an SNMP interface's details with Zabbix
// 6.0's rules and returns them complete, as Zabbix stores and returns
// them: the version's own fields with their defaults filled in (bulk 1;
// for SNMPv3 securitylevel 0, authprotocol 0, privprotocol 0 and empty
// strings). A field of the other versions is accepted only empty (what
// a client copying another interface's details sends) and dropped.
func checkSNMPDetails(d map[string]string, p string, el *errList) map[string]string {
	for k, v := range d {
		if !snmpDetailKeys[k] {
			el.addf(p+"."+k, "unknown SNMP detail: use version, bulk, community, securityname, securitylevel, authpassphrase, privpassphrase, authprotocol, privprotocol, contextname")
		} else if err := checkText(v, maxTagLen); err != nil {
			if snmpSecrets[k] {
				// The message would quote the secret, and API refusals
				// are logged.
				err = errors.New("is not valid UTF-8 or is longer than 255 characters")
			}
			el.add(p+"."+k, err)
		}
	}
	v := d["version"]
	var own []string
	switch v {
	case "1", "2":
		own = snmpV12Keys
		if d["community"] == "" {
			el.addf(p+".community", "cannot be empty for SNMP version %s", v)
		}
	case "3":
		own = snmpV3Keys
	case "":
		el.addf(p+".version", "is required for an SNMP interface: 1, 2 or 3")
		return d
	default:
		el.addf(p+".version", "%q is not an SNMP version: use 1, 2 or 3", v)
		return d
	}
	out := map[string]string{"version": v, "bulk": "1"}
	for _, k := range own {
		out[k] = snmpDetailDefaults[k]
	}
	for k, val := range d {
		switch {
		case slices.Contains(own, k), k == "version", k == "bulk":
			out[k] = val
		case snmpDetailKeys[k] && val != "":
			el.addf(p+"."+k, "is not a setting of SNMP version %s (SNMPv1/v2c take community, SNMPv3 the security settings)", v)
		}
	}
	for _, c := range []struct {
		k, vals, names string
	}{
		{"bulk", "01", "0 or 1"},
		{"securitylevel", "012", "0 (noAuthNoPriv), 1 (authNoPriv) or 2 (authPriv)"},
		{"authprotocol", "012345", "0 (MD5), 1 (SHA1), 2 (SHA224), 3 (SHA256), 4 (SHA384) or 5 (SHA512)"},
		{"privprotocol", "012345", "0 (DES), 1 (AES128), 2 (AES192), 3 (AES256), 4 (AES192C) or 5 (AES256C)"},
	} {
		if val, ok := out[c.k]; ok && (len(val) != 1 || !strings.Contains(c.vals, val)) {
			el.addf(p+"."+c.k, "%q: use %s", val, c.names)
		}
	}
	return out
}

// snmpSecrets are the details no message or log may show.
var snmpSecrets = map[string]bool{"community": true, "authpassphrase": true, "privpassphrase": true}

// The details of each SNMP version (besides version and bulk), and the
// defaults Zabbix stores for those not given.
var (
	snmpV12Keys        = []string{"community"}
	snmpV3Keys         = []string{"securityname", "securitylevel", "authpassphrase", "privpassphrase", "authprotocol", "privprotocol", "contextname"}
	snmpDetailDefaults = map[string]string{"securitylevel": "0", "authprotocol": "0", "privprotocol": "0"}
)

// checkMains reports, for a host's complete interface list, a type with
// two main interfaces or with interfaces but no main one (Zabbix refuses
// both). host names the host in the errors.
func checkMains(host string, ifaces []Interface, p string, el *errList) {
	var count, mains [InterfaceJMX + 1]int
	for _, f := range ifaces {
		if f.Type.Valid() {
			count[f.Type]++
			if f.Main {
				mains[f.Type]++
			}
		}
	}
	for t := InterfaceAgent; t <= InterfaceJMX; t++ {
		switch {
		case mains[t] > 1:
			el.add(p, &ConflictError{Kind: TwoDefaultInterfaces, Host: host, Name: t.zabbixName()})
		case count[t] > 0 && mains[t] == 0:
			el.add(p, &ConflictError{Kind: NoDefaultInterface, Host: host, Name: t.zabbixName()})
		}
	}
}

// sameIface reports whether a and b are configured identically, IDs
// aside.
func (a *Interface) sameIface(b *Interface) bool {
	return a.Type == b.Type && a.Main == b.Main && a.UseIP == b.UseIP && a.IP == b.IP &&
		a.DNS == b.DNS && a.Port == b.Port && maps.Equal(a.Details, b.Details)
}

// encodeDetails returns the stored form of an interface's details: ""
// for none, else a JSON object.
func encodeDetails(d map[string]string) string {
	if len(d) == 0 {
		return ""
	}
	b, err := json.Marshal(d) // sorted keys: equal details store equally
	if err != nil {
		panic("BUG: cannot marshal a string map: " + err.Error())
	}
	return string(b)
}

func decodeDetails(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	var d map[string]string
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		return nil, err
	}
	return d, nil
}
