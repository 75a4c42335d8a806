package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// The former params types and decoders, for the methods not yet
// declared with the vocabulary of params.go: their presence is a "set"
// field of their own, and legacyDecodeObjects and legacyDecodeParams
// decode them with encoding/json. The methods that still use them:
//
//   - the former types (fields not yet opt[T], read by decodeGet with
//     encoding/json as before): the method-specific fields of hostinterface.get, item.get,
//     trigger.get, problem.get, event.get, user.get, usergroup.get,
//     token.get, usermacro.get, template.get, valuemap.get,
//     maintenance.get, queue.get, mediatype.get, action.get,
//     alert.get, script.get, event.acknowledge (their shared getParams
//     are declared with the vocabulary);
//   - legacyDecodeObjects:
//     trigger.create/update, usermacro.create/update/
//     createglobal/updateglobal, valuemap.create/update,
//     maintenance.create/update, user.create/update,
//     usergroup.create/update, token.create, task.create, history.push;
//   - legacyDecodeParams: user.login, user.checkAuthentication,
//     script.execute; decodeStrict (preprocessing.go):
//     preprocessing.test; ifaceElems (hostiface_write.go):
//     hostinterface.create/update;
//   - the map merges of alerting.go (objectsOf, normalize,
//     decodeObjectStrict, merge): mediatype.create/update,
//     action.create/update, script.create/update, users' "medias".
//
//   - flexID: one ID ("hostid").
//   - ids: a list of IDs, or one ("itemids": "23296", 23296, ["1","2"]).
//   - flexInt: an integer ("status", "limit", "time_from"); null means
//     absent, as Zabbix's API_ALLOW_NULL.
//   - stringList: a string or an array of strings ("output").
//   - jstring, jtime: a string member that records its presence; a time
//     unit ("30s", or a bare number of seconds).
//   - notStored, jlist: members accepted and not stored.

// flexID is one ID, given as a number or a numeric string.
type flexID struct {
	set bool
	v   uint64
}

func (n *flexID) UnmarshalJSON(b []byte) error {
	v, ok := parseID(b)
	if !ok {
		return typeError(b, reflect.Uint64)
	}
	n.set, n.v = true, v
	return nil
}

// ids is a list of IDs; one ID alone stands for a list of one.
type ids []uint64

func (v *ids) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var raw []json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			return err
		}
		out := make(ids, 0, len(raw))
		for _, r := range raw {
			id, ok := parseID(r)
			if !ok {
				return typeError(r, reflect.Uint64)
			}
			out = append(out, id)
		}
		*v = out
		return nil
	}
	if string(b) == "null" {
		*v = nil
		return nil
	}
	id, ok := parseID(b)
	if !ok {
		return typeError(b, reflect.Uint64)
	}
	*v = ids{id}
	return nil
}

// flexInt is an integer given as a number or a numeric string; null
// leaves it unset.
type flexInt struct {
	set bool
	v   int64
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	v, err := strconv.ParseInt(unquote(b), 10, 64)
	if err != nil {
		return typeError(b, reflect.Int64)
	}
	f.set, f.v = true, v
	return nil
}

// stringList accepts a string or an array of strings ("sortfield",
// "output").
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var v []string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*l = v
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*l = stringList{s}
	return nil
}

// jstring is a string member that records its presence. Like Zabbix, it
// takes only JSON strings.
type jstring struct {
	set bool
	v   string
}

func (s *jstring) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		return typeError(b, reflect.String)
	}
	s.set = true
	if len(b) >= 2 && bytes.IndexByte(b, '\\') < 0 {
		// No escapes: the bytes between the quotes are the value. Invalid
		// UTF-8 is kept and refused by the catalog, not replaced.
		s.v = string(b[1 : len(b)-1])
		return nil
	}
	return json.Unmarshal(b, &s.v)
}

// jtime is a time unit ("30s", "90d"); Zabbix also takes a bare integer.
type jtime struct {
	set bool
	v   string
}

func (s *jtime) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] >= '0' && b[0] <= '9' {
		if _, err := strconv.ParseUint(string(b), 10, 63); err != nil {
			return typeError(b, reflect.String)
		}
		s.set, s.v = true, string(b)
		return nil
	}
	var js jstring
	if err := js.UnmarshalJSON(b); err != nil {
		return err
	}
	s.set, s.v = true, js.v
	return nil
}

// paramError is a decoding error with the member path already known
// ("groups/2/groupid"); encoding/json passes it through unchanged.
type paramError struct{ path, msg string }

func (e *paramError) Error() string { return e.path + ": " + e.msg }

// notStored is a member Peregrine accepts and does not store. It takes no
// room, so a batch of 10,000 objects stays small.
type notStored struct{}

func (notStored) UnmarshalJSON([]byte) error { return nil }

// jlist is a member that is an array (or, as Zabbix allows, one object)
// of elements Peregrine accepts but does not store. present reports a
// non-empty value.
type jlist struct{ n int }

func (l *jlist) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '{':
		if string(bytes.Join(bytes.Fields(b), nil)) != "{}" {
			l.n = 1
		}
		return nil
	case len(b) > 0 && b[0] == '[':
		var v []json.RawMessage
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		l.n = len(v)
		return nil
	}
	return typeError(b, reflect.Slice)
}

// typeError reports a member of the wrong JSON type; encoding/json adds
// the member's path.
func typeError(b []byte, want reflect.Kind) error {
	var t reflect.Type
	switch want {
	case reflect.String:
		t = reflect.TypeFor[string]()
	case reflect.Int64:
		t = reflect.TypeFor[int64]()
	case reflect.Uint64:
		t = reflect.TypeFor[uint64]()
	case reflect.Slice:
		t = reflect.TypeFor[[]any]()
	case reflect.Bool:
		t = reflect.TypeFor[bool]()
	default:
		t = reflect.TypeFor[struct{}]()
	}
	v := "value"
	if len(b) > 0 {
		v = string(b[:min(len(b), 32)])
	}
	return &json.UnmarshalTypeError{Value: v, Type: t}
}

// expected is Zabbix's wording for a member of the wrong type.
func expected(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a character string is expected"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "an integer is expected"
	case reflect.Uint64:
		return "a number is expected"
	case reflect.Slice:
		return "an array is expected"
	case reflect.Bool:
		return "a boolean is expected"
	}
	return "an object is expected"
}

// decodeObjects decodes params, one object or an array of them, into
// out, rejecting unknown members. Errors name the element as Zabbix does:
// "/1/key_" for the first object's key_.
func legacyDecodeObjects[T any](params json.RawMessage, out *[]T) error {
	raw := bytes.TrimSpace(params)
	if len(raw) > 0 && raw[0] == '{' {
		raw = append(append([]byte{'['}, raw...), ']')
	}
	if len(raw) == 0 || raw[0] != '[' {
		return errParams(`Invalid parameter "/": an array or object is expected.`)
	}
	// Fast path: the whole batch at once. Only if it fails, find the
	// element to blame (encoding/json reports no index).
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(out)
	if err == nil {
		if len(*out) == 0 {
			return errParams(`Invalid parameter "/": cannot be empty.`)
		}
		return nil
	}
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return errParams(`Invalid parameter "/": an array or object is expected.`)
	}
	for i, el := range elems {
		var v T
		dec := json.NewDecoder(bytes.NewReader(el))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return memberError(i+1, el, &v, err)
		}
	}
	return errParams(`Invalid parameter "/": %v.`, err)
}

// memberError turns the error decoding element i (1-based) of a batch,
// el, into v into Zabbix's wording, naming the member at fault.
func memberError(i int, el json.RawMessage, v any, err error) error {
	var pe *paramError
	if errors.As(err, &pe) {
		return errParams(`Invalid parameter "/%d/%s": %s.`, i, pe.path, pe.msg)
	}
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		if ute.Field == "" {
			return errParams(`Invalid parameter "/%d": %s.`, i, expected(ute.Type))
		}
		return errParams(`Invalid parameter "/%d/%s": %s.`, i, strings.ReplaceAll(ute.Field, ".", "/"), expected(ute.Type))
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return errParams(`Invalid parameter "/%d": unexpected parameter %s.`, i, f)
	}
	// A custom unmarshaler's own error carries no member name.
	if f := badField(el, v); f != "" {
		return errParams(`Invalid parameter "/%d/%s": %v.`, i, f, err)
	}
	return errParams(`Invalid parameter "/%d": %v.`, i, err)
}

// decodeIDs decodes the params of a *.delete method: an array of IDs.
func decodeIDs(params json.RawMessage) ([]uint64, error) {
	raw := bytes.TrimSpace(params)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, errParams(`Invalid parameter "/": an array is expected.`)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, errParams(`Invalid parameter "/": an array is expected.`)
	}
	if len(elems) == 0 {
		return nil, errParams(`Invalid parameter "/": cannot be empty.`)
	}
	out := make([]uint64, len(elems))
	seen := make(map[uint64]bool, len(elems))
	for i, el := range elems {
		var id flexID
		if id.UnmarshalJSON(bytes.TrimSpace(el)) != nil {
			return nil, errParams(`Invalid parameter "/%d": a number is expected.`, i+1)
		}
		if seen[id.v] {
			return nil, errParams(`Invalid parameter "/%d": value (%d) already exists.`, i+1, id.v)
		}
		seen[id.v] = true
		out[i] = id.v
	}
	return out, nil
}

func missing(i int, name string) error {
	return errParams(`Invalid parameter "/%d": the parameter "%s" is missing.`, i+1, name)
}

func empty(i int, name string) error {
	return errParams(`Invalid parameter "/%d/%s": cannot be empty.`, i+1, name)
}

func oneOf(i int, name, values string) error {
	return errParams(`Invalid parameter "/%d/%s": value must be one of %s.`, i+1, name, values)
}

func unsupported(i int, name, what string) error {
	return errParams(`Invalid parameter "/%d/%s": %s are not supported by Peregrine.`, i+1, name, what)
}

// idResult is the result of a write method: {"itemids": ["1", ...]}.
func idResult(name string, ids []uint64) any {
	s := make([]string, len(ids))
	for i, v := range ids {
		s[i] = id(v)
	}
	return object{name: s}
}

// objectElems splits member name's value, an array of objects or (as
// Zabbix allows) one object, into the objects.
func objectElems(b []byte, name string) ([]json.RawMessage, error) {
	var elems []json.RawMessage
	switch {
	case len(b) > 0 && b[0] == '{':
		return []json.RawMessage{b}, nil
	case len(b) > 0 && b[0] == '[' && json.Unmarshal(b, &elems) == nil:
		return elems, nil
	}
	return nil, &paramError{path: name, msg: "an array is expected"}
}

// decodeElem decodes one object of such a list strictly into v (a
// pointer to a struct), with errors naming path ("rights/2") and the
// member.
func decodeElem(el json.RawMessage, path string, v any) error {
	if len(el) == 0 || el[0] != '{' {
		return &paramError{path: path, msg: "an object is expected"}
	}
	dec := json.NewDecoder(bytes.NewReader(el))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return &paramError{path: path + "/" + ute.Field, msg: expected(ute.Type)}
		}
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return &paramError{path: path, msg: "unexpected parameter " + f}
		}
		return &paramError{path: path, msg: err.Error()}
	}
	return nil
}

// refList is a list of references to objects by one ID member: a user's
// "usrgrps" ([{"usrgrpid": "7"}]) or a user group's "users"
// ([{"userid": "3"}]). Other members of the objects (a whole object as a
// get method returns it) are ignored, as Zabbix does.
type refList struct {
	set bool
	ids []uint64
}

func (l *refList) decode(b []byte, name, key string) error {
	elems, err := objectElems(b, name)
	if err != nil {
		return err
	}
	l.set, l.ids = true, make([]uint64, 0, len(elems))
	for j, el := range elems {
		path := name + "/" + strconv.Itoa(j+1)
		var m map[string]json.RawMessage
		if len(el) == 0 || el[0] != '{' || json.Unmarshal(el, &m) != nil {
			return &paramError{path: path, msg: "an object is expected"}
		}
		raw, ok := m[key]
		if !ok {
			return &paramError{path: path, msg: `the parameter "` + key + `" is missing`}
		}
		id, ok := parseID(raw)
		if !ok {
			return &paramError{path: path + "/" + key, msg: "a number is expected"}
		}
		if slices.Contains(l.ids, id) {
			return &paramError{path: path, msg: "value (" + key + ")=(" + strconv.FormatUint(id, 10) + ") already exists"}
		}
		l.ids = append(l.ids, id)
	}
	return nil
}

// usrgrpRefs is a user's "usrgrps".
type usrgrpRefs struct{ refList }

func (l *usrgrpRefs) UnmarshalJSON(b []byte) error { return l.decode(b, "usrgrps", "usrgrpid") }

// userRefs is a user group's "users" (Zabbix 6.2).
type userRefs struct{ refList }

func (l *userRefs) UnmarshalJSON(b []byte) error { return l.decode(b, "users", "userid") }

// The vocabulary's lists (params_refs.go) for the former decoders: set
// records the member's presence, and problems name the member as their
// paramError did.

// legacyCtx is the decoding context of a vocabulary value under a
// former decoder.
var legacyCtx = &fieldCtx{rules: &writeRules, rule: &fieldRule{}}

// legacyAdapt words err, from decoding member's value, as the former
// types did.
func legacyAdapt(member string, err error) error {
	var ve *valueError
	if errors.As(err, &ve) {
		p := member
		if ve.sub != "" {
			p += "/" + ve.sub
		}
		return &paramError{path: p, msg: ve.msg}
	}
	return err
}

// groupList is groupRefs for the former decoders (maintenance "groups").
type groupList struct {
	set bool
	ids []uint64
}

func (l *groupList) UnmarshalJSON(b []byte) error {
	var g groupRefs
	if err := g.decodeParam(b, legacyCtx); err != nil {
		return legacyAdapt("groups", err)
	}
	l.set, l.ids = true, g
	return nil
}

// tagList is hostTags for the former decoders (trigger "tags").
type tagList struct {
	set  bool
	tags []catalog.Tag
}

func (l *tagList) UnmarshalJSON(b []byte) error {
	var t hostTags
	if err := t.decodeParam(b, legacyCtx); err != nil {
		return legacyAdapt("tags", err)
	}
	l.set, l.tags = true, t
	return nil
}
