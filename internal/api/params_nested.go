package api

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Nested objects: a member whose value is an object (as:"object": a
// task's request, preprocessing.test's history, an action's filter) or
// a list of objects (as:"objects": a value map's mappings, a
// maintenance's time periods and tags, event.get's tag filters, an
// action's operations) declared as params structs of opt fields, like
// the parameters themselves, and read by the walker member by member.
//
// They are read as encoding/json read them for the former decoders, so
// that every answer stays as it was (the conformance work can change
// them deliberately):
//
//   - members match their fields whatever their case (the exact name
//     first); a repeated member's last value wins, a null leaves a
//     scalar as it was and empties a list;
//   - an element of a list that is null is an empty object; the list
//     reuses the elements a repeated member already gave (encoding/json
//     decodes into them);
//   - a problem's path names the members down to it but no element
//     ("/1/mappings/type" for the type of the second mapping) and an
//     unknown member (refused where the entry point refuses them below
//     the top, decodeRules.strictNested) is reported at the object the
//     params name ("/1": unexpected parameter "x");
//   - of several problems, a value of the wrong type for a field that
//     reads itself (an ID, an integer, a string: the former types)
//     stops the reading at once, while a mismatch of a plain value,
//     a list or an object, and an unknown member, are kept while the
//     reading goes on (keptError): the first kept is reported at the
//     end unless one that stops comes after it.
//
// The notification families' dialect (params_alert.go) reads its
// nested objects so too, in the order of the member names, keeping
// every problem.

// keptError is a problem the reading goes on after (see above).
type keptError struct{ err error }

func (e *keptError) Error() string { return e.err.Error() }
func (e *keptError) Unwrap() error { return e.err }

// unknownMember is a member of a nested object no field declares,
// reported at the object the params name.
type unknownMember struct{ name string }

func (e *unknownMember) Error() string { return "unexpected parameter " + strconv.Quote(e.name) }

// kept reports whether reading goes on after err (see above).
func (r *decodeRules) kept(err error) bool {
	return r.dialect == dialectAlert || jsonSaved(err)
}

// decodeNested reads the members ms of a nested object into v, a
// pointer to its params struct.
func decodeNested(ms []member, v any, r *decodeRules) error {
	if r.sorted {
		ms = patchOrder(ms)
	}
	rv := reflect.ValueOf(v).Elem()
	si := structInfoOf(rv.Type())
	var first error
	for _, m := range ms {
		k := si.lookupJSON(m.name)
		if k < 0 {
			if r.strictNested && first == nil {
				first = &keptError{&unknownMember{m.name}}
			}
			continue
		}
		f := &si.fields[k]
		err := decodeValue(m.raw, rv.FieldByIndex(f.index).Addr().Interface(), &fieldCtx{rules: r, rule: &f.rule})
		if err == nil {
			continue
		}
		kept := r.kept(err)
		err = below(strings.ReplaceAll(f.embed, ".", "/")+f.rule.name, err)
		if !kept {
			return err
		}
		if first == nil {
			first = &keptError{err}
		}
	}
	return first
}

// below names the member name of a nested object in a problem found in
// its value: the members' path of a wrong type grows ("type",
// "conditions/value"), an unknown member is the object's own.
func below(name string, err error) error {
	var ke kindError
	var ute *json.UnmarshalTypeError
	var u *unknownMember
	switch {
	case errors.As(err, &ke):
		ke.field = joinField(name, ke.field)
		return ke
	case errors.As(err, &ute):
		return kindError{kind: ute.Type.Kind(), field: joinField(name, strings.ReplaceAll(ute.Field, ".", "/"))}
	case errors.As(err, &u):
		return u
	}
	return err
}

func joinField(name, field string) string {
	if field == "" {
		return name
	}
	return name + "/" + field
}

// decodeObjectValue reads an object member (as:"object") into p, a
// pointer to its params struct: into the value a repeated member gave,
// as encoding/json did. null is the rule's (decodeParam).
func decodeObjectValue(raw []byte, p any, r *decodeRules) error {
	ms, ok := objectMembers(raw)
	if !ok {
		return &keptError{kindError{kind: reflect.Struct}}
	}
	return decodeNested(ms, p, r)
}

// decodeObjectList reads a list of objects (as:"objects") into p, a
// pointer to a slice of params structs, as encoding/json read one: null
// empties it, an element goes into the one a repeated member left in
// its place, a null element reads nothing.
func decodeObjectList(raw []byte, p any, r *decodeRules) error {
	sv := reflect.ValueOf(p).Elem()
	if isNull(raw) {
		sv.SetZero()
		return nil
	}
	elems, ok := arrayElems(raw)
	if !ok {
		return &keptError{kindError{kind: reflect.Slice}}
	}
	var first error
	for i, el := range elems {
		if i >= sv.Cap() {
			sv.Grow(1)
		}
		if i >= sv.Len() {
			sv.SetLen(i + 1)
		}
		if isNull(el) {
			continue
		}
		var err error
		if ms, ok := objectMembers(el); ok {
			err = decodeNested(ms, sv.Index(i).Addr().Interface(), r)
		} else {
			err = &keptError{kindError{kind: reflect.Struct}}
		}
		switch {
		case err == nil:
		case !r.kept(err):
			return err
		case first == nil:
			first = err
		}
	}
	if len(elems) < sv.Len() {
		sv.SetLen(len(elems))
	}
	if len(elems) == 0 {
		sv.Set(reflect.MakeSlice(sv.Type(), 0, 0))
	}
	return first
}

// lookupJSON returns the field that takes member name as encoding/json
// matched them (the exact name, else the first whose name folds to the
// same), or -1.
func (si *structInfo) lookupJSON(name string) int {
	if k, ok := si.byName[name]; ok {
		return k
	}
	folded := foldName(name)
	for k := range si.fields {
		if f := &si.fields[k]; f.index != nil && foldName(f.rule.name) == folded {
			return k
		}
	}
	return -1
}

// foldName folds s as encoding/json folds member names: ASCII letters
// to upper case, any other rune to the upper case of its lower case.
func foldName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(unicode.ToUpper(unicode.ToLower(r)))
		i += n
	}
	return b.String()
}
