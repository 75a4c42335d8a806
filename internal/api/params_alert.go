package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The notification families' dialect: the objects of mediatype.create
// and .update, action.create and .update, script.create and .update,
// and each of a user's "medias", read as their former decoder read
// them, which went through JSON maps:
//
//   - first a pre-pass over every object of the request (alertObjects)
//     or over each medium in turn: a member named in numericKeys, at
//     any depth and under any member, known or not, that is a string
//     of an integer becomes that number, one that is a string or a
//     number but no integer is refused ("an integer is expected"); of
//     several, the first in the request's order, depth first, a
//     repeated member in its first place (the former map's order was
//     Go's, which varied from run to run);
//   - then the members in the byte order of their names, a repeated
//     member's last value only, matched to the params struct's fields
//     whatever their case (the exact name first; the last of the names
//     that match wins), nested objects alike, the first problem met
//     reported: a value of the wrong JSON type with the get methods'
//     words ("a number is expected", "a array is expected") and a path
//     naming the members down to it, the embedded Go struct's name
//     included ("/1/MediaType/name", "/1/filter/conditions/value"), an
//     unknown member at any depth at the object
//     (`Invalid parameter "/1": unexpected parameter "x".`);
//   - numbers are JSON numbers (a string is a wrong type: only the
//     numeric members' strings were made numbers), strings are decoded
//     as encoding/json decodes them, null leaves a scalar as it was and
//     empties a list or an object declared zbx:"null".
//
// An update reads the stored object's members with the request's over
// them (alertOver), as the former merge did.

// alertRules are the dialect's rules.
var alertRules = decodeRules{dialect: dialectAlert, strictNested: true, unknownLater: true, sorted: true}

// numericKeys are the members Zabbix clients send as numbers or as
// strings of digits.
var numericKeys = map[string]bool{
	"mediatypeid": true, "type": true, "status": true, "smtp_port": true, "smtp_security": true, "smtp_verify_peer": true,
	"smtp_verify_host": true, "smtp_authentication": true, "content_type": true, "process_tags": true, "maxsessions": true,
	"maxattempts": true, "eventsource": true, "recovery": true, "actionid": true, "pause_suppressed": true,
	"notify_if_canceled": true, "evaltype": true, "conditiontype": true, "operator": true, "operationtype": true,
	"esc_step_from": true, "esc_step_to": true, "default_msg": true, "usrgrpid": true, "userid": true, "active": true,
	"severity": true, "mediaid": true, "show_event_menu": true, "operationid": true, "conditionid": true, "sortorder": true,
	"pause_symptoms": true, "opconditionid": true, "scriptid": true, "hostid": true, "groupid": true, "scope": true,
	"execute_on": true, "host_access": true, "templateid": true, "inventory_mode": true, "correlationid": true,
}

// conditionText reports a condition's text member ("value", "value2" of
// an action's or an escalation step's conditions) at path, the path of
// the object holding it.
func conditionText(name, path string) bool {
	return (name == "value" || name == "value2") && (strings.Contains(path, "/conditions/") || strings.Contains(path, "/opconditions/"))
}

// alertObject is one object after the pre-pass: its members, a
// repeated member's last value only.
type alertObject []member

// get returns the value of the member named exactly name.
func (o alertObject) get(name string) ([]byte, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].name == name {
			return o[i].raw, true
		}
	}
	return nil, false
}

func (o alertObject) has(name string) bool {
	_, ok := o.get(name)
	return ok
}

// alertObjects reads the params of a notification family's create or
// update: an array of objects or one object, each through the pre-pass,
// all of them before any is decoded.
func alertObjects(params json.RawMessage) ([]alertObject, error) {
	raw := bytes.TrimSpace(params)
	var elems [][]byte
	switch jsonKindOf(raw) {
	case 'o':
		elems = [][]byte{raw}
	case 'a':
		elems, _ = arrayElems(raw)
	default:
		return nil, errParams(`Invalid parameter "/": an array is expected.`)
	}
	// {} is PHP's empty array, as [] is (recorded from 6.0.14).
	if ms, ok := objectMembers(raw); len(elems) == 0 || ok && len(ms) == 0 {
		return nil, errParams(`Invalid parameter "/": cannot be empty.`)
	}
	out := make([]alertObject, len(elems))
	for i, el := range elems {
		path := "/" + strconv.Itoa(i+1)
		if jsonKindOf(el) != 'o' {
			return nil, errParams(`Invalid parameter "%s": an array is expected.`, path)
		}
		o, err := alertMembers(el, path)
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

// alertMembers runs the pre-pass over the object raw, at path.
func alertMembers(raw []byte, path string) (alertObject, error) {
	norm, err := alertNumbers(raw, path)
	if err != nil {
		return nil, err
	}
	ms, _ := objectMembers(norm)
	return ms, nil
}

// alertNumbers is the pre-pass over the value raw at path: the value
// with the numeric members' strings made numbers (and each object's
// repeated members once, lastValues), or the first member that is no
// integer.
func alertNumbers(raw []byte, path string) ([]byte, error) {
	switch jsonKindOf(raw) {
	case 'o':
		ms, _ := objectMembers(raw)
		for i := range ms {
			ms[i].name = validName(ms[i].name)
		}
		ms = lastValues(ms)
		b := []byte{'{'}
		for k, m := range ms {
			name := m.name
			p := path + "/" + name
			v := m.raw
			if numericKeys[name] {
				switch jsonKindOf(v) {
				case 's':
					var s string
					json.Unmarshal(v, &s)
					n, err := strconv.ParseInt(s, 10, 64)
					if err != nil {
						return nil, errParams(`Invalid parameter "%s": an integer is expected.`, p)
					}
					v = strconv.AppendInt(nil, n, 10)
				case 'i', 'f':
					if _, err := strconv.ParseInt(string(v), 10, 64); err != nil {
						return nil, errParams(`Invalid parameter "%s": an integer is expected.`, p)
					}
				}
			} else if conditionText(name, path) && (jsonKindOf(v) == 'i' || jsonKindOf(v) == 'f') {
				// A condition's value given as a number is taken as its
				// text, as Zabbix 6.0 takes it (recorded: internal/
				// conformance, case alerting, step mkaction).
				v, _ = json.Marshal(string(v))
			} else {
				var err error
				if v, err = alertNumbers(v, p); err != nil {
					return nil, err
				}
			}
			if k > 0 {
				b = append(b, ',')
			}
			nb, _ := json.Marshal(name)
			b = append(append(append(b, nb...), ':'), v...)
		}
		return append(b, '}'), nil
	case 'a':
		elems, _ := arrayElems(raw)
		b := []byte{'['}
		for k, el := range elems {
			v, err := alertNumbers(el, path+"/"+strconv.Itoa(k+1))
			if err != nil {
				return nil, err
			}
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, v...)
		}
		return append(b, ']'), nil
	}
	return raw, nil
}

// lastValues is ms with a repeated member once, in its first place
// with its last value, as PHP's json_decode keeps it.
func lastValues(ms []member) []member {
	at := make(map[string]int, len(ms))
	out := make([]member, 0, len(ms))
	for _, m := range ms {
		if k, ok := at[m.name]; ok {
			out[k].raw = m.raw
			continue
		}
		at[m.name] = len(out)
		out = append(out, m)
	}
	return out
}

// validName is a member's name as encoding/json decoded it: each byte
// that is no UTF-8 is U+FFFD.
func validName(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r)
		i += n
	}
	return b.String()
}

// decodeAlert decodes the object o at path into v, a pointer to its
// params struct.
func decodeAlert(o alertObject, path string, v any) error {
	return apiError(decodeMembers(o, path, v, &alertRules))
}

// alertOver is the members of stored (the stored object, which encodes
// as the API takes it) with those of the update object o over them.
func alertOver(stored any, o alertObject) alertObject {
	b, _ := json.Marshal(stored)
	ms, _ := objectMembers(b)
	out := make(alertObject, 0, len(ms)+len(o))
	for _, m := range ms {
		if !o.has(m.name) {
			out = append(out, m)
		}
	}
	return append(out, o...)
}

// existingOf returns the object of m that the i-th update object o
// names by its ID member field, with the ID: "missing" when o names
// none (no number), "no permissions" when the one it names does not
// exist, as Zabbix answers both.
func existingOf[T any](o alertObject, i int, field string, m map[uint64]*T) (uint64, *T, error) {
	raw, _ := o.get(field)
	if k := jsonKindOf(raw); raw == nil || k != 'i' && k != 'f' {
		return 0, nil, missing(i, field)
	}
	id, _ := strconv.ParseUint(string(raw), 10, 64)
	if old := m[id]; old != nil {
		return id, old, nil
	}
	return 0, nil, errNoPermissions
}

// alertValue reads raw into p, a pointer to a value of kind k, in the
// dialect (decodeAs).
func alertValue(k valueKind, raw []byte, p any, c *fieldCtx) error {
	null := isNull(raw)
	switch k {
	case kindInt, kindID:
		if null {
			return nil
		}
		if j := jsonKindOf(raw); j != 'i' && j != 'f' {
			return kindError{kind: alertKind(k)}
		}
		if k == kindInt {
			n, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil {
				return kindError{kind: reflect.Int64}
			}
			*p.(*int64) = n
			return nil
		}
		n, err := strconv.ParseUint(string(raw), 10, 64)
		if err != nil {
			return kindError{kind: reflect.Uint64}
		}
		*p.(*uint64) = n
		return nil
	case kindStr:
		if null {
			return nil
		}
		if jsonKindOf(raw) != 's' {
			return kindError{kind: reflect.String}
		}
		return json.Unmarshal(raw, p)
	case kindObject:
		return decodeObjectValue(raw, p, c.rules)
	case kindObjects:
		return decodeObjectList(raw, p, c.rules)
	case kindJSON:
		return json.Unmarshal(raw, p)
	}
	panic("BUG: a notification object's field of a kind the dialect does not read")
}

func alertKind(k valueKind) reflect.Kind {
	if k == kindID {
		return reflect.Uint64
	}
	return reflect.Int64
}
