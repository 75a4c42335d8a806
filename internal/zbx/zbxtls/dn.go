package zbxtls

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"strings"
)

// shortNames are OpenSSL's short names of the attribute types found in
// certificate names; Zabbix prints names with them. Types not listed are
// printed as their dotted OID, as OpenSSL does for types it does not know.
var shortNames = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.4":                    "SN",
	"2.5.4.5":                    "serialNumber",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.9":                    "street",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.12":                   "title",
	"2.5.4.17":                   "postalCode",
	"2.5.4.42":                   "GN",
	"2.5.4.43":                   "initials",
	"2.5.4.46":                   "dnQualifier",
	"2.5.4.65":                   "pseudonym",
	"0.9.2342.19200300.100.1.1":  "UID",
	"0.9.2342.19200300.100.1.25": "DC",
	"1.2.840.113549.1.9.1":       "emailAddress",
}

// FormatDN formats a DER-encoded distinguished name (a certificate's
// RawIssuer or RawSubject) as Zabbix compares it: RFC 4514 order (the
// last RDN first), "," between RDNs and "+" between the attributes of
// one, OpenSSL's short type names, and the RFC 4514 escapes (a backslash
// before , + " \ < > ; a leading # or space and a trailing space;
// control characters as \XX). Non-ASCII UTF-8 is kept as is, as Zabbix
// prints it. A name that is not valid DER gives "".
func FormatDN(der []byte) string {
	var seq pkix.RDNSequence
	if rest, err := asn1.Unmarshal(der, &seq); err != nil || len(rest) > 0 {
		return ""
	}
	var b strings.Builder
	for i := len(seq) - 1; i >= 0; i-- {
		if i < len(seq)-1 {
			b.WriteByte(',')
		}
		for j, atv := range seq[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			oid := atv.Type.String()
			if n, ok := shortNames[oid]; ok {
				b.WriteString(n)
			} else {
				b.WriteString(oid)
			}
			b.WriteByte('=')
			writeValue(&b, atv.Value)
		}
	}
	return b.String()
}

func writeValue(b *strings.Builder, v any) {
	s, ok := v.(string)
	if !ok {
		// Not a string type: RFC 4514's "#" and the hex of its DER.
		der, err := asn1.Marshal(v)
		if err != nil {
			return
		}
		b.WriteByte('#')
		b.WriteString(hex.EncodeToString(der))
		return
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ',' || c == '+' || c == '"' || c == '\\' || c == '<' || c == '>' || c == ';':
			b.WriteByte('\\')
			b.WriteByte(c)
		case i == 0 && (c == '#' || c == ' '):
			b.WriteByte('\\')
			b.WriteByte(c)
		case i == len(s)-1 && c == ' ':
			b.WriteString(`\ `)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(b, `\%02X`, c)
		default:
			b.WriteByte(c)
		}
	}
}
