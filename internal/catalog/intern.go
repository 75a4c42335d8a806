package catalog

import (
	"reflect"
	"strconv"
	"strings"
)

// strPool is the Catalog's table of shared strings: the texts that
// repeat across hosts because templates and prototypes put them there
// (item keys and names, units, intervals, descriptions, trigger
// comments and URLs, tags). It lives as long as the Catalog, so each
// distinct value is held once however many hosts and Edits carry it
// (issue 30: the heap per item). Only the writers use it, under the
// Catalog's mutex. It is bounded: a string longer than maxPooledLen is
// cloned on its own, and the table starts over once it holds
// maxPoolEntries strings (strings already handed out stay valid: they
// are immutable and owned by the snapshots that hold them).
type strPool struct {
	m map[string]string
	// tagSets holds whole tag lists by content (tagSetKey): the
	// discovered items of one prototype carry the same tags on every
	// host. A shared list's capacity is its length, so an append makes
	// a new one; nothing writes the elements of a stored list.
	tagSets map[string][]Tag
	// extras holds shared ItemExtras by content (item_extra.go).
	extras map[extraKey]*ItemExtra
}

const (
	maxPooledLen   = 4096
	maxPoolEntries = 1 << 20
)

// get returns a string equal to s that does not alias s's bytes (s may
// be a part of a request's buffer): the pooled one if there is one.
func (p *strPool) get(s string) string {
	if s == "" {
		return ""
	}
	if len(s) > maxPooledLen {
		return strings.Clone(s)
	}
	if v, ok := p.m[s]; ok {
		return v
	}
	if p.m == nil || len(p.m) >= maxPoolEntries {
		p.m = make(map[string]string, 1024)
	}
	s = strings.Clone(s)
	p.m[s] = s
	return s
}

// text returns s pooled (see strPool): for the fields of items,
// triggers and tags that templates and prototypes repeat on every host.
func (e *Edit) text(s string) string {
	if e.pool == nil {
		e.pool = &strPool{}
	}
	return e.pool.get(s)
}

// tags is cloneTags with pooled strings, and the list itself shared
// with every other equal list the pool holds.
func (e *Edit) tags(tags []Tag) []Tag {
	if len(tags) == 0 {
		return nil
	}
	if e.pool == nil {
		e.pool = &strPool{}
	}
	p := e.pool
	k := tagSetKey(tags)
	if l, ok := p.tagSets[k]; ok && len(k) <= maxPooledLen {
		return l
	}
	out := make([]Tag, len(tags))
	for i, t := range tags {
		out[i] = Tag{Tag: e.text(t.Tag), Value: e.text(t.Value)}
	}
	if len(k) <= maxPooledLen {
		if p.tagSets == nil || len(p.tagSets) >= maxPoolEntries {
			p.tagSets = make(map[string][]Tag, 256)
		}
		p.tagSets[strings.Clone(k)] = out[:len(out):len(out)]
	}
	return out
}

// tagSetKey is tags' content as one string: each tag and value with its
// length before it, so that no two different lists have the same key.
func tagSetKey(tags []Tag) string {
	var b strings.Builder
	for _, t := range tags {
		b.WriteString(strconv.Itoa(len(t.Tag)))
		b.WriteByte(':')
		b.WriteString(t.Tag)
		b.WriteString(strconv.Itoa(len(t.Value)))
		b.WriteByte(':')
		b.WriteString(t.Value)
	}
	return b.String()
}

// shareStrings makes every string reachable from dst that equals the
// string at the same place in src share src's bytes. dst and src are
// pointers to values of the same type, dst typically a deep copy of
// src made by a JSON round trip (cloneLLD), which gives every copy of a
// template's discovery rule its own bytes for texts that are the same
// on every host. Maps and interfaces are left alone; slices are walked
// up to the shorter length.
func shareStrings(dst, src any) {
	d, s := reflect.ValueOf(dst), reflect.ValueOf(src)
	if d.Kind() != reflect.Pointer || d.IsNil() || s.Kind() != reflect.Pointer || s.IsNil() || d.Type() != s.Type() {
		return
	}
	shareValue(d.Elem(), s.Elem(), 0)
}

func shareValue(d, s reflect.Value, depth int) {
	if depth > 32 {
		return
	}
	switch d.Kind() {
	case reflect.String:
		if d.CanSet() && d.String() == s.String() {
			d.SetString(s.String())
		}
	case reflect.Struct:
		for i := range d.NumField() {
			if d.Type().Field(i).IsExported() {
				shareValue(d.Field(i), s.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		for i := range min(d.Len(), s.Len()) {
			shareValue(d.Index(i), s.Index(i), depth+1)
		}
	case reflect.Array:
		for i := range d.Len() {
			shareValue(d.Index(i), s.Index(i), depth+1)
		}
	case reflect.Pointer:
		if !d.IsNil() && !s.IsNil() {
			shareValue(d.Elem(), s.Elem(), depth+1)
		}
	}
}

// compact trims every slice reachable from ptr (a pointer) to its
// length, copying it when its capacity is larger, and, if str is not
// nil, replaces every string with str's. encoding/json grows the
// slices it decodes to at least 4 elements and by half again, so a
// discovery rule decoded from JSON (cloneLLD, loadLLD) held up to 4
// prototypes of 832 bytes where it had one. Maps and interfaces are
// left alone.
func compact(ptr any, str func(string) string) {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	compactValue(v.Elem(), str, 0)
}

func compactValue(v reflect.Value, str func(string) string, depth int) {
	if depth > 32 || !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if str != nil && v.Len() > 0 {
			v.SetString(str(v.String()))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				compactValue(v.Field(i), str, depth+1)
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			return
		}
		if v.Cap() > v.Len() {
			c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(c, v)
			v.Set(c)
		}
		for i := range v.Len() {
			compactValue(v.Index(i), str, depth+1)
		}
	case reflect.Array:
		for i := range v.Len() {
			compactValue(v.Index(i), str, depth+1)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			compactValue(v.Elem(), str, depth+1)
		}
	}
}
