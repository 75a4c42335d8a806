package snmptrap

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/gosnmp/gosnmp"
)

// Errors of decode, as the "reason" of a dropped datagram.
var (
	errMalformed = errors.New("not an SNMP message")
	errNotTrap   = errors.New("not a trap")
	errV3        = errors.New("SNMPv3 trap from no configured user (snmp.trap_users) or not authentic")
)

// maxTrapText bounds one trap's text: Zabbix's text values hold 65535
// characters, and a trap is one value.
const maxTrapText = 65535

// trap is a decoded trap.
type trap struct {
	pkt  *gosnmp.SnmpPacket
	from *net.UDPAddr
	to   string // "[ip]:port" of the receiver, for receivedfrom
	recv time.Time
}

// decode decodes one datagram as an SNMPv1 Trap-PDU or SNMPv2c/v3
// SNMPv2-Trap/InformRequest. v3 decodes the SNMPv3 messages of its
// users; nil drops every SNMPv3 message.
func decode(b []byte, v3 *v3Users) (*gosnmp.SnmpPacket, error) {
	if len(b) < 2 || b[0] != 0x30 {
		return nil, errMalformed
	}
	if isV3(b) {
		if v3 == nil {
			return nil, errV3
		}
		pkt, err := v3.g.UnmarshalTrap(b, true)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errV3, err)
		}
		// gosnmp localizes the keys with the message's engine ID: the
		// configured one is checked here, as snmptrapd's createUser -e.
		usm, ok := pkt.SecurityParameters.(*gosnmp.UsmSecurityParameters)
		if !ok || !slices.Contains(v3.engines[usm.UserName], usm.AuthoritativeEngineID) {
			return nil, fmt.Errorf("%w: the user's engine ID is not the configured one", errV3)
		}
		if pkt.PDUType != gosnmp.SNMPv2Trap {
			return nil, errNotTrap // informs need our engine ID: not supported
		}
		return pkt, nil
	}
	pkt, err := (&gosnmp.GoSNMP{}).UnmarshalTrap(b, false)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errMalformed, err)
	}
	switch {
	case pkt.Version == gosnmp.Version3:
		return nil, errV3
	case pkt.PDUType == gosnmp.Trap, pkt.PDUType == gosnmp.SNMPv2Trap, pkt.PDUType == gosnmp.InformRequest:
		return pkt, nil
	}
	return nil, errNotTrap
}

// isV3 reports whether a message header says version 3 (SEQUENCE,
// length, INTEGER 3).
func isV3(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	i := 2
	if b[1]&0x80 != 0 {
		i += int(b[1] & 0x7f)
	}
	return i+2 < len(b) && b[i] == 0x02 && b[i+1] == 1 && b[i+2] == 3
}

// appendText appends a trap's text as Zabbix's receiver script
// (zabbix_trap_receiver.pl, from net-snmp's snmptrapd) writes it and the
// server stores it: the receive time, then a "PDU INFO:" section of
// name/value lines and a "VARBINDS:" section of one line per variable,
// "<OID> type=<BER type> value=<type>: <value>". Without MIBs OIDs are
// numeric. The text is cut at maxTrapText bytes.
func appendText(dst []byte, t *trap) []byte {
	p := t.pkt
	dst = t.recv.AppendFormat(dst, "2006-01-02T15:04:05-0700")
	dst = append(dst, "\nPDU INFO:\n"...)
	info := func(k, v string) {
		dst = append(dst, "  "...)
		dst = append(dst, k...)
		for n := len(k); n < 30; n++ {
			dst = append(dst, ' ')
		}
		dst = append(dst, ' ')
		dst = append(dst, v...)
		dst = append(dst, '\n')
	}
	notif := "TRAP"
	if p.PDUType == gosnmp.InformRequest {
		notif = "INFORM"
	}
	info("notificationtype", notif)
	info("version", strconv.Itoa(int(versionNumber(p.Version))))
	info("receivedfrom", "UDP: ["+t.from.IP.String()+"]:"+strconv.Itoa(t.from.Port)+"->"+t.to)
	info("errorstatus", strconv.Itoa(int(p.Error)))
	info("messageid", strconv.FormatUint(uint64(p.MsgID), 10))
	info("community", p.Community)
	info("errorindex", strconv.Itoa(int(p.ErrorIndex)))
	info("requestid", strconv.FormatUint(uint64(p.RequestID), 10))
	if p.Version == gosnmp.Version1 {
		// A v1 trap's header, as snmptrapd turns it into varbinds
		// (RFC 3584 section 3.1).
		info("enterprise", p.Enterprise)
		info("agentaddress", p.AgentAddress)
		info("generictrap", strconv.Itoa(p.GenericTrap))
		info("specifictrap", strconv.Itoa(p.SpecificTrap))
		info("uptime", strconv.FormatUint(uint64(p.Timestamp), 10))
	}
	dst = append(dst, "VARBINDS:\n"...)
	for i := range p.Variables {
		v := &p.Variables[i]
		dst = append(dst, "  "...)
		dst = append(dst, v.Name...)
		for n := len(v.Name); n < 30; n++ {
			dst = append(dst, ' ')
		}
		dst = append(dst, " type="...)
		typ := strconv.Itoa(int(v.Type))
		dst = append(dst, typ...)
		if len(typ) < 2 {
			dst = append(dst, ' ')
		}
		dst = append(dst, " value="...)
		dst = appendValue(dst, v)
		dst = append(dst, '\n')
		if len(dst) > maxTrapText {
			break
		}
	}
	if len(dst) > maxTrapText {
		dst = dst[:maxTrapText]
	}
	return dst
}

func versionNumber(v gosnmp.SnmpVersion) uint8 {
	switch v {
	case gosnmp.Version1:
		return 0
	case gosnmp.Version2c:
		return 1
	}
	return 3
}

// appendValue appends a value as net-snmp prints it: its type, a colon
// and the value ("INTEGER: 2", "STRING: \"eth0\"", "Timeticks: (123)
// 0:00:01.23", "Hex-STRING: 00 1A").
func appendValue(dst []byte, v *gosnmp.SnmpPDU) []byte {
	switch v.Type {
	case gosnmp.Integer:
		return appendNum(append(dst, "INTEGER: "...), v.Value)
	case gosnmp.Counter32:
		return appendNum(append(dst, "Counter32: "...), v.Value)
	case gosnmp.Gauge32:
		return appendNum(append(dst, "Gauge32: "...), v.Value)
	case gosnmp.Counter64:
		return appendNum(append(dst, "Counter64: "...), v.Value)
	case gosnmp.Uinteger32:
		return appendNum(append(dst, "UInteger32: "...), v.Value)
	case gosnmp.TimeTicks:
		ticks, _ := v.Value.(uint32)
		dst = append(dst, "Timeticks: ("...)
		dst = strconv.AppendUint(dst, uint64(ticks), 10)
		dst = append(dst, ") "...)
		d, rest := ticks/8640000, ticks%8640000
		if d > 0 {
			dst = strconv.AppendUint(dst, uint64(d), 10)
			dst = append(dst, " days, "...)
		}
		return fmt.Appendf(dst, "%d:%02d:%02d.%02d", rest/360000, rest/6000%60, rest/100%60, rest%100)
	case gosnmp.ObjectIdentifier:
		s, _ := v.Value.(string)
		return append(append(dst, "OID: "...), s...)
	case gosnmp.IPAddress:
		s, _ := v.Value.(string)
		return append(append(dst, "IpAddress: "...), s...)
	case gosnmp.OctetString:
		b, _ := v.Value.([]byte)
		if printable(b) {
			dst = append(dst, "STRING: "...)
			return strconv.AppendQuote(dst, string(b))
		}
		return appendHex(append(dst, "Hex-STRING: "...), b)
	case gosnmp.Null:
		return append(dst, "NULL"...)
	case gosnmp.OpaqueFloat, gosnmp.OpaqueDouble:
		return fmt.Appendf(append(dst, "Opaque: Float: "...), "%v", v.Value)
	case gosnmp.NoSuchObject:
		return append(dst, "No Such Object available on this agent at this OID"...)
	case gosnmp.NoSuchInstance:
		return append(dst, "No Such Instance currently exists at this OID"...)
	case gosnmp.EndOfMibView:
		return append(dst, "No more variables left in this MIB View (It is past the end of the MIB tree)"...)
	}
	if b, ok := v.Value.([]byte); ok {
		return appendHex(dst, b)
	}
	return fmt.Appendf(dst, "%v", v.Value)
}

func appendNum(dst []byte, v any) []byte {
	switch x := v.(type) {
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10)
	case uint64:
		return strconv.AppendUint(dst, x, 10)
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10)
	}
	return fmt.Appendf(dst, "%v", v)
}

func printable(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 || c > 0x7e) && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

func appendHex(dst, b []byte) []byte {
	const digits = "0123456789ABCDEF"
	for i, c := range b {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, digits[c>>4], digits[c&0xf])
	}
	return dst
}
