package snmp

import (
	"strconv"

	"github.com/gosnmp/gosnmp"
)

// Messages for the exception values of SNMPv2c/v3 varbinds: net-snmp's
// texts, which Zabbix shows as the item's error.
const (
	msgNoSuchObject   = "No Such Object available on this agent at this OID"
	msgNoSuchInstance = "No Such Instance currently exists at this OID"
	msgEndOfMibView   = "No more variables left in this MIB View (It is past the end of the MIB tree)"
)

// errorStatus words an SNMP error-status as net-snmp's snmp_errstring
// does, the text Zabbix puts after "SNMP error: ".
func errorStatus(e gosnmp.SNMPError) string {
	switch e {
	case gosnmp.NoError:
		return "(noError) No Error"
	case gosnmp.TooBig:
		return "(tooBig) Response message would have been too large."
	case gosnmp.NoSuchName:
		return "(noSuchName) There is no such variable name in this MIB."
	case gosnmp.BadValue:
		return "(badValue) The value given has the wrong type or length."
	case gosnmp.ReadOnly:
		return "(readOnly) The two parties used do not have access to use the specified SNMP PDU."
	case gosnmp.GenErr:
		return "(genError) A general failure occured"
	case gosnmp.NoAccess:
		return "noAccess"
	case gosnmp.AuthorizationError:
		return "authorizationError (access denied to that object)"
	}
	return "(error " + strconv.Itoa(int(e)) + ")"
}

// render appends the text of one varbind's value as Zabbix stores it,
// or returns ok=false with the not supported message for an exception
// value (or one of no known type). Numbers are decimal (TimeTicks in
// hundredths of a second, as Zabbix keeps them); an OCTET STRING is its
// bytes when every byte is printable ASCII or white space, else
// "XX XX ..." upper-case hex, as net-snmp prints a Hex-STRING and Zabbix
// keeps it; an OID is numeric with a leading dot (Peregrine loads no
// MIBs to name it); IpAddress is dotted.
func render(dst []byte, v *gosnmp.SnmpPDU) (out []byte, msg string, ok bool) {
	switch v.Type {
	case gosnmp.NoSuchObject:
		return dst, msgNoSuchObject, false
	case gosnmp.NoSuchInstance:
		return dst, msgNoSuchInstance, false
	case gosnmp.EndOfMibView:
		return dst, msgEndOfMibView, false
	case gosnmp.Null, gosnmp.UnknownType:
		return dst, "Value has unknown type", false
	}
	switch x := v.Value.(type) {
	case int:
		return strconv.AppendInt(dst, int64(x), 10), "", true
	case int64:
		return strconv.AppendInt(dst, x, 10), "", true
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10), "", true
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), "", true
	case uint64:
		return strconv.AppendUint(dst, x, 10), "", true
	case float32:
		return strconv.AppendFloat(dst, float64(x), 'f', -1, 32), "", true
	case float64:
		return strconv.AppendFloat(dst, x, 'f', -1, 64), "", true
	case string: // ObjectIdentifier, IPAddress
		return append(dst, x...), "", true
	case []byte:
		if v.Type == gosnmp.OctetString && printable(x) {
			return append(dst, x...), "", true
		}
		return appendHex(dst, x), "", true
	}
	return dst, "Value has unknown type", false
}

// printable reports whether every byte is printable ASCII or white
// space: net-snmp's test for printing an OCTET STRING as text.
func printable(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 || c > 0x7e) && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

const hexDigits = "0123456789ABCDEF"

// appendHex appends b as upper-case hex bytes separated by spaces.
func appendHex(dst, b []byte) []byte {
	for i, c := range b {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return dst
}
