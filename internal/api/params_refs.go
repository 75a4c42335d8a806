package api

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Values of the vocabulary that several families share: lists of
// objects as Zabbix takes them (a host's groups, tags and interfaces,
// references to other objects by ID). Each decodes itself (paramValue);
// its problems are below the member ("2/groupid").

// elemsOf splits a member's value, an array of objects or (as Zabbix
// allows) one object, into the objects.
func elemsOf(b []byte) ([][]byte, error) {
	switch {
	case len(b) > 0 && b[0] == '{':
		return [][]byte{b}, nil
	case len(b) > 0 && b[0] == '[':
		if elems, ok := arrayElems(b); ok {
			return elems, nil
		}
	}
	return nil, &valueError{msg: "an array is expected"}
}

// refs is a list of references to objects by one ID member, the
// field's "key" tag: a user's "usrgrps" ([{"usrgrpid": "7"}]), a host's
// "templates" ([{"templateid": "10001"}]). Other members of the objects
// (a whole object as a get method returns it) are ignored, as Zabbix
// does; an ID given twice is refused.
type refs []uint64

func (l *refs) decodeParam(b []byte, c *fieldCtx) error {
	key := c.rule.key
	elems, err := elemsOf(b)
	if err != nil {
		return err
	}
	*l = make(refs, 0, len(elems))
	for j, el := range elems {
		sub := strconv.Itoa(j + 1)
		ms, ok := objectMembers(el)
		if !ok {
			return &valueError{sub: sub, msg: "an object is expected"}
		}
		var raw []byte
		for _, m := range ms {
			if m.name == key {
				raw = m.raw // a repeated member keeps its last value
			}
		}
		if raw == nil {
			return &valueError{sub: sub, msg: `the parameter "` + key + `" is missing`}
		}
		id, ok := parseID(raw)
		if !ok {
			return &valueError{sub: sub + "/" + key, msg: "a number is expected"}
		}
		if slices.Contains(*l, id) {
			return &valueError{sub: sub, msg: "value (" + key + ")=(" + strconv.FormatUint(id, 10) + ") already exists"}
		}
		*l = append(*l, id)
	}
	return nil
}

// hostGroups is a host's "groups", read as 6.0's host.create and
// host.update read it (recorded from 6.0.14): an array of {"groupid":
// ...} objects or one such object, other members of the objects
// ignored. Nothing is refused here: what 6.0 refuses is kept and the
// host's checks report it in 6.0's order (groupProblem); a groupid that
// is no ID names no group (0), which 6.0 answers as a group that does
// not exist. A group given twice is the host's checks' to refuse.
type hostGroups struct {
	ids []uint64
	// none: not a non-empty array or object, which leaves the host
	// without a group; noID: an element is no object or has no groupid.
	none, noID bool
}

func (l *hostGroups) decodeParam(b []byte, _ *fieldCtx) error {
	*l = hostGroups{}
	var elems [][]byte
	switch jsonKindOf(b) {
	case 'o':
		if ms, _ := objectMembers(b); len(ms) > 0 {
			elems = [][]byte{b}
		}
	case 'a':
		elems, _ = arrayElems(b)
	}
	if len(elems) == 0 {
		l.none = true
		return nil
	}
	for _, el := range elems {
		ms, ok := objectMembers(el)
		var raw []byte
		for _, m := range ms {
			if m.name == "groupid" {
				raw = m.raw // a repeated member keeps its last value
			}
		}
		if !ok || raw == nil {
			l.noID = true
			return nil
		}
		id, _ := parseID(raw)
		l.ids = append(l.ids, id)
	}
	return nil
}

// groupProblem is 6.0's error for the groups of host (its technical
// name), or nil.
func (l *hostGroups) groupProblem(host string) error {
	switch {
	case l.none:
		return errParams(`Host "%s" cannot be without host group.`, host)
	case l.noID:
		return errParams(`Incorrect value for field "groups": the parameter "groupid" is missing.`)
	}
	return nil
}

// groupRefs is a maintenance's "groups": an array of {"groupid": ...} objects
// or, as Zabbix allows, one such object. Other members of the objects (a
// whole hostgroup.get object) are ignored; a group given twice is the
// maintenance's checks' to refuse.
type groupRefs []uint64

func (l *groupRefs) decodeParam(b []byte, _ *fieldCtx) error {
	elems, err := elemsOf(b)
	if err != nil {
		return err
	}
	*l = make(groupRefs, 0, len(elems))
	for j, el := range elems {
		sub := strconv.Itoa(j + 1)
		var v struct {
			GroupID opt[uint64] `json:"groupid" zbx:"null"`
		}
		if !bytes.HasPrefix(el, []byte{'{'}) {
			return &valueError{sub: sub, msg: "an object is expected"}
		}
		if err := decodeElement(el, sub, &v, &lenientRules); err != nil {
			return &valueError{sub: sub + "/groupid", msg: "a number is expected"}
		}
		if !v.GroupID.Given() {
			return &valueError{sub: sub, msg: `the parameter "groupid" is missing`}
		}
		*l = append(*l, v.GroupID.Value)
	}
	return nil
}

// hostTags is a host's, an item's or a trigger's "tags": an array of
// {"tag": ..., "value": ...}, names and values of at most maxTagLen
// characters.
type hostTags []catalog.Tag

// maxTagLen is the length of Zabbix's tag names and values.
const maxTagLen = 255

func (l *hostTags) decodeParam(b []byte, _ *fieldCtx) error {
	// As PHP reads JSON (recorded from 6.0.14 with item.create and
	// trigger.create): an object is an array of its members' values, an
	// element that is an empty array an object without members, and one
	// that is another array an object with members "0", "1"...
	if k := jsonKindOf(b); k != 'a' && k != 'o' {
		return &valueError{msg: "an array is expected"}
	}
	elems := listValues(b)
	*l = make(hostTags, 0, len(elems))
	for j, el := range elems {
		sub := strconv.Itoa(j + 1)
		var v struct {
			Tag   opt[string] `json:"tag" zbx:"null"` // null: missing
			Value opt[string] `json:"value"`
		}
		switch jsonKindOf(el) {
		case 'o':
		case 'a':
			if es, _ := arrayElems(el); len(es) > 0 {
				return &valueError{sub: sub, msg: `unexpected parameter "0"`}
			}
			el = []byte("{}")
		default:
			return &valueError{sub: sub, msg: "an array is expected"}
		}
		if err := decodeElement(el, sub, &v, &writeRules); err != nil {
			return err
		}
		switch {
		case !v.Tag.Given():
			return &valueError{sub: sub, msg: `the parameter "tag" is missing`}
		case v.Tag.Value == "":
			return &valueError{sub: sub + "/tag", msg: "cannot be empty"}
		case utf8.RuneCountInString(v.Tag.Value) > maxTagLen:
			return &valueError{sub: sub + "/tag", msg: "value is too long"}
		case utf8.RuneCountInString(v.Value.Value) > maxTagLen:
			return &valueError{sub: sub + "/value", msg: "value is too long"}
		}
		t := catalog.Tag{Tag: v.Tag.Value, Value: v.Value.Value}
		if slices.Contains(*l, t) {
			return &valueError{sub: sub, msg: "value (tag, value)=(" + t.Tag + ", " + t.Value + ") already exists"}
		}
		*l = append(*l, t)
	}
	return nil
}

// hostIfaces is a host's "interfaces": an array of Zabbix 6.0 host
// interface objects. type, main and useip are required (Zabbix requires
// them all); ip and dns default to "", port to the type's default port.
// An element may carry the interfaceid of one of the host's interfaces
// (host.update) to keep it. "details" is taken for SNMP interfaces.
type hostIfaces []catalog.Interface

// ifaceParams is one element of a host's "interfaces".
type ifaceParams struct {
	InterfaceID opt[uint64]          `json:"interfaceid"`
	HostID      opt[ignored]         `json:"hostid"`
	Type        opt[int64]           `json:"type"`
	Main        opt[int64]           `json:"main"`
	UseIP       opt[int64]           `json:"useip"`
	IP          opt[string]          `json:"ip"`
	DNS         opt[string]          `json:"dns"`
	Port        opt[string]          `json:"port" as:"timeunit"` // a string or a bare number
	Details     opt[json.RawMessage] `json:"details" as:"json"`
}

func (l *hostIfaces) decodeParam(b []byte, _ *fieldCtx) error {
	elems, ok := arrayElems(b)
	if !ok {
		return &valueError{msg: "an array is expected"}
	}
	*l = make(hostIfaces, 0, len(elems))
	for j, el := range elems {
		f, err := decodeIface(el, strconv.Itoa(j+1))
		if err != nil {
			return err
		}
		*l = append(*l, f)
	}
	return nil
}

// decodeIface decodes one interface object, whose path below the
// member is sub.
func decodeIface(el []byte, sub string) (catalog.Interface, error) {
	var v ifaceParams
	if !bytes.HasPrefix(el, []byte{'{'}) {
		return catalog.Interface{}, &valueError{sub: sub, msg: "an object is expected"}
	}
	// Members it does not know are ignored, as 6.0 ignores them
	// (recorded from 6.0.14).
	if err := decodeElement(el, sub, &v, &legacyWriteRules); err != nil {
		return catalog.Interface{}, err
	}
	return checkIface(&v, sub)
}

// errIncorrectArguments is 6.0's answer to an object that lacks a
// member its method's own checks need (recorded from 6.0.14: a new host
// interface without port, an item without key_).
var errIncorrectArguments = errParams("Incorrect arguments passed to function.")

// checkIface checks an interface object as Zabbix does and makes the
// interface; sub is the object's path below the member. A new interface
// (no interfaceid) needs every member and an SNMP one its details'
// version, as in 6.0 (recorded from 6.0.14); a port given empty is
// refused in 6.0's words.
func checkIface(v *ifaceParams, sub string) (catalog.Interface, error) {
	if !v.InterfaceID.Given() {
		if !v.Type.Set || !v.Main.Set || !v.UseIP.Set || !v.IP.Set || !v.DNS.Set || !v.Port.Set ||
			v.Type.Value == int64(catalog.InterfaceSNMP) && !hasMember(v.Details.Value, "version") {
			return catalog.Interface{}, errIncorrectArguments
		}
	}
	if v.Port.Set && v.Port.Value == "" {
		return catalog.Interface{}, errParams("Port cannot be empty for host interface.")
	}
	for _, m := range []struct {
		name string
		f    opt[int64]
		max  int64
	}{{"type", v.Type, 4}, {"main", v.Main, 1}, {"useip", v.UseIP, 1}} {
		min := int64(0)
		if m.name == "type" {
			min = 1
		}
		switch {
		case !m.f.Given():
			return catalog.Interface{}, &valueError{sub: sub, msg: `the parameter "` + m.name + `" is missing`}
		case m.f.Value < min || m.f.Value > m.max:
			vals := "0, 1"
			if m.name == "type" {
				vals = "1, 2, 3, 4"
			}
			return catalog.Interface{}, &valueError{sub: sub + "/" + m.name, msg: "value must be one of " + vals}
		}
	}
	f := catalog.Interface{
		ID: v.InterfaceID.Value, Type: catalog.InterfaceType(v.Type.Value), Main: v.Main.Value == 1, UseIP: v.UseIP.Value == 1,
		IP: v.IP.Value, DNS: v.DNS.Value, Port: v.Port.Value,
	}
	if d := bytes.TrimSpace(v.Details.Value); len(d) > 0 && string(d) != "null" && string(d) != "[]" {
		// Zabbix returns "details": [] for non-SNMP interfaces, so
		// an empty array round-trips; anything else must be an
		// object of scalars.
		ms, ok := objectMembers(d)
		if !ok {
			return catalog.Interface{}, &valueError{sub: sub + "/details", msg: "an object is expected"}
		}
		f.Details = make(map[string]string, len(ms))
		for _, m := range ms {
			var s string
			if err := decodeAs(kindTimeUnit, m.raw, &s, &fieldCtx{rules: &writeRules, rule: &fieldRule{}}); err != nil {
				return catalog.Interface{}, &valueError{sub: sub + "/details/" + m.name, msg: "a character string is expected"}
			}
			f.Details[m.name] = s
		}
	}
	return f, nil
}

// hasMember reports whether raw is an object with a member name.
func hasMember(raw []byte, name string) bool {
	ms, _ := objectMembers(raw)
	return slices.ContainsFunc(ms, func(m member) bool { return m.name == name })
}
