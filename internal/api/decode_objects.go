package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
)

// The entry points of the create and update methods (params.go has the
// vocabulary): an array of objects or one object, read with the write
// rules (decode.go), in the three ways 6.0's methods read them.

// decodeObjects decodes the params of a create or update method: an
// array of objects, or one object, each into an element of out, with
// errors naming the element as Zabbix does: "/1/key_" for the first
// object's key_. A null element is an object with no members.
func decodeObjects[T any](raw json.RawMessage, out *[]T) error {
	return decodeObjectsWith(raw, out, &writeRules)
}

// decodeValidatorObjects decodes the params of a create or update
// method 6.0 checks with its API input validator (host groups,
// triggers, user macros, maintenances, value maps): as decodeObjects,
// but an empty object is PHP's empty array, as `[]` is (recorded from
// 6.0.14: hostgroup.create {} is `Invalid parameter "/": cannot be
// empty.`).
func decodeValidatorObjects[T any](raw json.RawMessage, out *[]T) error {
	if jsonKindOf(raw) == 'o' {
		if ms, ok := objectMembers(raw); ok && len(ms) == 0 {
			return errParams(`Invalid parameter "/": cannot be empty.`)
		}
	}
	return decodeObjectsWith(raw, out, &writeRules)
}

// decodeLegacyObjects decodes the params of host.create/update,
// item.create/update and hostinterface.create/update, which 6.0 checks
// with their own code: as decodeObjects, but members no field declares
// are ignored (legacyWriteRules).
func decodeLegacyObjects[T any](raw json.RawMessage, out *[]T) error {
	return decodeObjectsWith(raw, out, &legacyWriteRules)
}

// emptyParams reports whether raw is [] or {}, which PHP reads alike:
// the methods 6.0 checks with their own code answer these with their
// own quirks (recorded from 6.0.14, beside each method: host.create
// and .update refuse them with "Empty input parameter.").
func emptyParams(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	switch jsonKindOf(raw) {
	case 'o':
		ms, ok := objectMembers(raw)
		return ok && len(ms) == 0
	case 'a':
		elems, ok := arrayElems(raw)
		return ok && len(elems) == 0
	}
	return false
}

func decodeObjectsWith[T any](raw json.RawMessage, out *[]T, r *decodeRules) error {
	raw = bytes.TrimSpace(raw)
	var elems [][]byte
	switch {
	case len(raw) > 0 && raw[0] == '{':
		elems = [][]byte{raw}
	case len(raw) > 0 && raw[0] == '[':
		var ok bool
		if elems, ok = arrayElems(raw); !ok {
			return errParams(`Invalid parameter "/": an array or object is expected.`)
		}
	default:
		return errParams(`Invalid parameter "/": an array or object is expected.`)
	}
	if len(elems) == 0 {
		return errParams(`Invalid parameter "/": cannot be empty.`)
	}
	*out = make([]T, len(elems))
	for i, el := range elems {
		path := "/" + strconv.Itoa(i+1)
		ms, ok := objectMembers(el)
		switch {
		case isNull(el):
			ms = nil
		case !ok:
			return invalid(path, writeRules.kindText(reflect.Struct))
		}
		if err := decodeMembers(ms, path, &(*out)[i], r); err != nil {
			return apiError(err)
		}
	}
	return nil
}
