package snmpoid

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// MaxLen is the longest snmp_oid Zabbix 6.0 stores (items.snmp_oid is
// varchar(512)).
const MaxLen = 512

// Kind is what a request asks of the device.
type Kind uint8

const (
	// Get asks for one OID (batched with the host's other gets).
	Get Kind = iota
	// DynamicIndex walks IndexOID for IndexValue, then gets OID.<index>.
	DynamicIndex
	// Discovery walks each of OIDs and returns LLD rows.
	Discovery
)

// Request is a parsed snmp_oid.
type Request struct {
	Kind Kind
	// OID is the object to get (Get), or the column whose instance at
	// the found index is the value (DynamicIndex).
	OID string
	// IndexOID and IndexValue: DynamicIndex's column to walk and the
	// value to find in it.
	IndexOID, IndexValue string
	// Macros and OIDs: Discovery's pairs, in the order given.
	Macros, OIDs []string
}

// Parse parses an snmp_oid of one of the Zabbix 6.0 forms (see the
// package documentation). Errors say what to write instead.
func Parse(s string) (Request, error) {
	if s == "" {
		return Request{}, fmt.Errorf("cannot be empty: give the OID to get, as 1.3.6.1.2.1.1.3.0")
	}
	if len(s) > MaxLen {
		return Request{}, fmt.Errorf("is %d characters long, more than %d", len(s), MaxLen)
	}
	br := strings.IndexByte(s, '[')
	if br < 0 {
		oid, err := Resolve(s)
		return Request{Kind: Get, OID: oid}, err
	}
	head := s[:br]
	// The parameters follow the item key syntax; the name before the
	// bracket may hold "::", which keys do not allow, so parse a
	// stand-in name.
	k, err := itemkey.Parse("x" + s[br:])
	if err != nil {
		return Request{}, fmt.Errorf("cannot parse the parameters of %q: %v", s, err)
	}
	for _, p := range k.Params {
		if p.Array != nil {
			return Request{}, fmt.Errorf("%q: array parameters are not allowed", s)
		}
	}
	switch head {
	case "discovery":
		return parseDiscovery(s, k.Params)
	case "walk", "get":
		return Request{}, fmt.Errorf("%q: %s[] is a Zabbix 6.4 form; Zabbix 6.0 takes an OID, OID[\"index\",<index OID>,<value>] or discovery[{#MACRO},<OID>,...]", s, head)
	}
	oid, err := Resolve(head)
	if err != nil {
		return Request{}, err
	}
	if len(k.Params) != 3 || k.Params[0].Value != "index" {
		return Request{}, fmt.Errorf("%q: a dynamic index takes three parameters, \"index\",<index OID>,<value>", s)
	}
	idx, err := Resolve(k.Params[1].Value)
	if err != nil {
		return Request{}, err
	}
	return Request{Kind: DynamicIndex, OID: oid, IndexOID: idx, IndexValue: k.Params[2].Value}, nil
}

func parseDiscovery(s string, params []itemkey.Param) (Request, error) {
	if len(params) < 2 || len(params)%2 != 0 {
		return Request{}, fmt.Errorf("%q: discovery[] takes pairs of an LLD macro and an OID: discovery[{#IFDESCR},1.3.6.1.2.1.2.2.1.2]", s)
	}
	r := Request{Kind: Discovery}
	seen := map[string]bool{}
	for i := 0; i < len(params); i += 2 {
		m := params[i].Value
		if !isMacro(m) {
			return Request{}, fmt.Errorf("%q: parameter %d, %q, is not an LLD macro such as {#IFDESCR}", s, i+1, m)
		}
		if m == "{#SNMPINDEX}" || seen[m] {
			return Request{}, fmt.Errorf("%q: macro %s is used twice ({#SNMPINDEX} is the index's own)", s, m)
		}
		seen[m] = true
		oid, err := Resolve(params[i+1].Value)
		if err != nil {
			return Request{}, err
		}
		r.Macros = append(r.Macros, m)
		r.OIDs = append(r.OIDs, oid)
	}
	return r, nil
}

// isMacro reports whether m is an LLD macro: {#NAME} with NAME of
// A-Z, 0-9, '_' and '.'.
func isMacro(m string) bool {
	if len(m) < 4 || !strings.HasPrefix(m, "{#") || m[len(m)-1] != '}' {
		return false
	}
	for i := 2; i < len(m)-1; i++ {
		c := m[i]
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Resolve turns a numeric or known textual OID into the canonical
// numeric form with a leading dot.
func Resolve(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("empty OID: give a numeric OID such as 1.3.6.1.2.1.1.3.0")
	}
	if c := s[0]; c == '.' || '0' <= c && c <= '9' {
		return numeric(s)
	}
	rest := s
	mod, after, hasMod := strings.Cut(s, "::")
	if hasMod {
		rest = after
	}
	name := firstLabel(rest)
	suffix := rest[len(name):]
	if o, found := byName[name]; found && hasMod && o.module != mod {
		return "", fmt.Errorf("unknown OID %q: %s is in %s, not %s", s, o.name, o.module, mod)
	}
	o, ok := byName[name]
	if !ok {
		return "", fmt.Errorf("unknown OID %q: Peregrine loads no MIB files; give it numerically (snmptranslate -On %s prints it)", s, s)
	}
	if suffix != "" && suffix[0] != '.' {
		return "", fmt.Errorf("invalid OID %q: after %s only .<number>... may follow", s, name)
	}
	return numeric(o.oid + suffix)
}

func firstLabel(s string) string {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return s[:i]
	}
	return s
}

// numeric checks a numeric OID and returns it with a leading dot: at
// least two sub-identifiers, each a decimal uint32, the first 0, 1 or 2.
func numeric(s string) (string, error) {
	body := strings.TrimPrefix(s, ".")
	parts := strings.Split(body, ".")
	if len(parts) < 2 {
		return "", fmt.Errorf("invalid OID %q: a numeric OID has at least two numbers, as 1.3", s)
	}
	if len(parts) > 128 {
		return "", fmt.Errorf("invalid OID %q: more than 128 sub-identifiers", s)
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil || p == "" || (len(p) > 1 && p[0] == '0') {
			return "", fmt.Errorf("invalid OID %q: %q is not a number 0..4294967295", s, p)
		}
		if i == 0 && n > 2 {
			return "", fmt.Errorf("invalid OID %q: the first number must be 0, 1 or 2", s)
		}
	}
	return "." + body, nil
}
