package netdisc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gosnmp/gosnmp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// SNMPRequest is one SNMP discovery check of one address and port.
type SNMPRequest struct {
	Check   *catalog.DCheck
	IP      string
	Port    int
	Timeout time.Duration
}

// SNMPGet asks the check's OID (its key_) with one GET over gosnmp (no
// retry) and returns the value as text: numbers in decimal, octet
// strings as text when they are UTF-8, else hex bytes. An error is the
// service down. The community and passphrases are never put in errors.
func SNMPGet(ctx context.Context, r SNMPRequest) (string, error) {
	k := r.Check
	g := &gosnmp.GoSNMP{Target: r.IP, Port: uint16(r.Port), Transport: "udp", Timeout: r.Timeout, Retries: 0, Context: ctx,
		MaxOids: 1}
	switch k.Type {
	case catalog.DCheckSNMPv1:
		g.Version, g.Community = gosnmp.Version1, k.SNMPCommunity
	case catalog.DCheckSNMPv2:
		g.Version, g.Community = gosnmp.Version2c, k.SNMPCommunity
	default:
		g.Version, g.SecurityModel, g.ContextName = gosnmp.Version3, gosnmp.UserSecurityModel, k.SNMPv3ContextName
		usm := &gosnmp.UsmSecurityParameters{UserName: k.SNMPv3SecurityName}
		g.MsgFlags = [...]gosnmp.SnmpV3MsgFlags{gosnmp.NoAuthNoPriv, gosnmp.AuthNoPriv, gosnmp.AuthPriv}[min(max(k.SNMPv3SecurityLevel, 0), 2)]
		auth := [...]gosnmp.SnmpV3AuthProtocol{gosnmp.MD5, gosnmp.SHA, gosnmp.SHA224, gosnmp.SHA256, gosnmp.SHA384, gosnmp.SHA512}
		priv := [...]gosnmp.SnmpV3PrivProtocol{gosnmp.DES, gosnmp.AES, gosnmp.AES192, gosnmp.AES256, gosnmp.AES192C, gosnmp.AES256C}
		if g.MsgFlags != gosnmp.NoAuthNoPriv {
			usm.AuthenticationProtocol = auth[min(max(k.SNMPv3AuthProtocol, 0), len(auth)-1)]
			usm.AuthenticationPassphrase = k.SNMPv3AuthPassphrase
		}
		if g.MsgFlags == gosnmp.AuthPriv {
			usm.PrivacyProtocol = priv[min(max(k.SNMPv3PrivProtocol, 0), len(priv)-1)]
			usm.PrivacyPassphrase = k.SNMPv3PrivPassphrase
		}
		g.SecurityParameters = usm
	}
	if err := g.Connect(); err != nil {
		return "", errors.New("cannot open an SNMP session")
	}
	defer g.Conn.Close()
	pkt, err := g.Get([]string{k.Key})
	if err != nil {
		return "", fmt.Errorf("no SNMP answer from %s", r.IP)
	}
	if pkt.Error != gosnmp.NoError || len(pkt.Variables) != 1 {
		return "", fmt.Errorf("SNMP error %v", pkt.Error)
	}
	v := pkt.Variables[0]
	switch v.Type {
	case gosnmp.NoSuchObject, gosnmp.NoSuchInstance, gosnmp.EndOfMibView, gosnmp.Null:
		return "", errors.New("no such object")
	case gosnmp.OctetString:
		b, _ := v.Value.([]byte)
		if utf8.Valid(b) {
			return string(b), nil
		}
		return fmt.Sprintf("% X", b), nil
	case gosnmp.ObjectIdentifier, gosnmp.IPAddress:
		s, _ := v.Value.(string)
		return s, nil
	}
	if n := gosnmp.ToBigInt(v.Value); n != nil {
		return n.String(), nil
	}
	return strconv.Quote(fmt.Sprint(v.Value)), nil
}
