package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
)

// The former params types that remain, as value types with an
// UnmarshalJSON for the nested objects still read by encoding/json:
// a value map's mappings (mappingParams), a maintenance's time periods
// and tags, event.get's and problem.get's tag filters (tagFilter), a
// task's request (taskReq), preprocessing.test's history (testHist).
// Each records its own presence ("set"); a problem is a type error
// (typeError) that encoding/json names with the member's path, as it
// always was. The conformance work can read those objects with the
// walker too (decodeElement), which names the element in the path
// ("/1/mappings/2/type" where these give "/1/mappings/type").
//
//   - flexID: one ID, a number or a numeric string;
//   - flexInt: an integer, a number or a numeric string; null is absent;
//   - jstring: a JSON string that records its presence;
//   - notStored: a member accepted and not stored.

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

// paramError is a decoding error with the member path already known
// ("groups/2/groupid"); encoding/json passes it through unchanged.
type paramError struct{ path, msg string }

func (e *paramError) Error() string { return e.path + ": " + e.msg }

// notStored is a member Peregrine accepts and does not store. It takes no
// room, so a batch of 10,000 objects stays small.
type notStored struct{}

func (notStored) UnmarshalJSON([]byte) error { return nil }

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
