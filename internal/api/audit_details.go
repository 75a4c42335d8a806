package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The details of an audit record, computed as Zabbix 6.0 computes them
// (its frontend's CAudit): an object and its stored form are flattened
// into paths ("usergroup.rights[1].permission"), nested objects of the
// kinds that have IDs of their own are named by them in brackets, and
// each path gets ["add", value], ["update", new, old] or ["delete"],
// with the parent object of a nested path marked once too. A value
// equal to its column's default is left out of an add, and secrets are
// "******". The order of the paths is that of the request's members.

// jfield is a member of an object read in order.
type jfield struct {
	k string
	v any
}

// jobj is a JSON object read in member order; its values are jobj,
// []any, string, json.Number, bool or nil.
type jobj []jfield

func (o jobj) get(k string) (any, bool) {
	for i := len(o) - 1; i >= 0; i-- { // a repeated member keeps its last value, as in PHP
		if o[i].k == k {
			return o[i].v, true
		}
	}
	return nil, false
}

// set replaces k's value or appends it.
func (o *jobj) set(k string, v any) {
	for i := range *o {
		if (*o)[i].k == k {
			(*o)[i].v = v
			return
		}
	}
	*o = append(*o, jfield{k, v})
}

// parseOrdered reads a JSON value keeping the order of object members.
func parseOrdered(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := readOrdered(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func readOrdered(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := jobj{}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := readOrdered(d)
				if err != nil {
					return nil, err
				}
				o = append(o, jfield{kt.(string), v})
			}
			_, err := d.Token()
			return o, err
		case '[':
			l := []any{}
			for d.More() {
				v, err := readOrdered(d)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := d.Token()
			return l, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

// phpString is a scalar as PHP's (string) cast gives it.
func phpString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		if f, err := x.Float64(); err == nil && strings.ContainsAny(string(x), ".eE") {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
		return string(x)
	case bool:
		if x {
			return "1"
		}
		return ""
	}
	return ""
}

// phpEqual is PHP's loose == of two strings: numerically when both are
// numbers.
func phpEqual(a, b string) bool {
	if a == b {
		return true
	}
	fa, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	fb, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	return err1 == nil && err2 == nil && fa == fb
}

// flatPath is a flattened scalar of an object.
type flatPath struct {
	path string
	v    any
}

// flatObj is an object flattened to paths, in order.
type flatObj struct {
	paths []flatPath
	at    map[string]int
}

func (f *flatObj) add(path string, v any) {
	if f.at == nil {
		f.at = map[string]int{}
	}
	if i, ok := f.at[path]; ok {
		f.paths[i].v = v
		return
	}
	f.at[path] = len(f.paths)
	f.paths = append(f.paths, flatPath{path, v})
}

func (f *flatObj) lookup(path string) (any, bool) {
	i, ok := f.at[path]
	if !ok {
		return nil, false
	}
	return f.paths[i].v, true
}

var indexRE = regexp.MustCompile(`\[[0-9]+\]`)

// abstractPath drops the bracketed IDs of a path.
func abstractPath(p string) string {
	if !strings.Contains(p, "[") {
		return p
	}
	return indexRE.ReplaceAllString(p, "")
}

// parentPath is a path without its last member.
func parentPath(p string) string {
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

// isNested reports whether p is a member of a nested object.
func isNested(p string) bool { return strings.Count(p, ".") >= 2 }

// flatten turns v, the object at path, into paths (Zabbix's
// convertKeysToPaths).
func (r *auditRes) flatten(path string, v any, out *flatObj) {
	nested := strings.Contains(path, ".") && !strings.HasSuffix(path, "]")
	if nested {
		if ns, ok := r.nested[strings.TrimPrefix(abstractPath(path), r.api+".")]; ok && (ns.idField != "" || ns.byPosition) {
			l, _ := v.([]any)
			for i, el := range l {
				o, _ := el.(jobj)
				key := strconv.Itoa(i + 1)
				if ns.idField != "" {
					id, _ := o.get(ns.idField)
					key = phpString(id)
				}
				r.flatten(path+"["+key+"]", o, out)
			}
			return
		}
	}
	each := func(k string, fv any) {
		p := path + "." + k
		if r.skipped(abstractPath(p)) {
			return
		}
		switch fv.(type) {
		case jobj, []any:
			r.flatten(p, fv, out)
		default:
			out.add(p, fv)
		}
	}
	switch x := v.(type) {
	case jobj:
		for _, f := range x {
			each(f.k, f.v)
		}
	case []any:
		for i, el := range x {
			each(strconv.Itoa(i), el)
		}
	}
}

func (r *auditRes) skipped(abstract string) bool {
	for _, s := range r.skip {
		if r.api+"."+s == abstract {
			return true
		}
	}
	return false
}

// isDefault reports whether value is its column's default (Zabbix's
// isDefaultValue).
func (r *auditRes) isDefault(path, value string) bool {
	obj := parentPath(path)
	table := r.table
	if obj != r.api {
		ns, ok := r.nested[strings.TrimPrefix(abstractPath(obj), r.api+".")]
		if !ok {
			return false
		}
		table = ns.table
	}
	d, ok := auditDefaults[table][path[strings.LastIndexByte(path, '.')+1:]]
	return ok && phpEqual(value, d)
}

// masked reports whether the value at path is a secret (Zabbix's
// isValueToMask), given the flattened object it belongs to.
func (r *auditRes) isMasked(path string, f *flatObj) bool {
	abstract := strings.TrimPrefix(abstractPath(path), r.api+".")
	for _, m := range r.masked {
		if m.path != abstract {
			continue
		}
		if m.ifSecret == "" {
			return true
		}
		v, _ := f.lookup(parentPath(path) + "." + m.ifSecret)
		return phpString(v) == "1"
	}
	return false
}

// secretMask is what Zabbix writes for a secret.
const secretMask = "******"

// details is an ordered details object.
type details struct {
	keys []string
	vals map[string][]any
}

// set sets path's entry; an entry set again keeps its place.
func (d *details) set(path string, v ...any) {
	if d.vals == nil {
		d.vals = map[string][]any{}
	}
	if _, ok := d.vals[path]; !ok {
		d.keys = append(d.keys, path)
	}
	d.vals[path] = v
}

// addDetails are the details of a created object (Zabbix's handleAdd).
func (r *auditRes) addDetails(obj jobj) *details {
	var f flatObj
	r.flatten(r.api, obj, &f)
	d := &details{}
	for _, p := range f.paths {
		if isNested(p.path) {
			d.set(parentPath(p.path), "add")
		}
		s := phpString(p.v)
		if r.isDefault(p.path, s) {
			continue
		}
		if r.isMasked(p.path, &f) {
			d.set(p.path, "add", secretMask)
		} else {
			d.set(p.path, "add", s)
		}
	}
	return d
}

// nestedPaths are the paths of the nested objects of f, in order.
func nestedPaths(f *flatObj) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range f.paths {
		if !isNested(p.path) {
			continue
		}
		if o := parentPath(p.path); !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out
}

// updateDetails are the details of an update from the stored object db
// to obj, both limited to what the request named (Zabbix's
// handleUpdate).
func (r *auditRes) updateDetails(obj, db jobj) *details {
	var f, fdb flatObj
	r.flatten(r.api, obj, &f)
	r.flatten(r.api, db, &fdb)
	d := &details{}
	np, dbnp := nestedPaths(&f), nestedPaths(&fdb)
	in := func(l []string, s string) bool {
		for _, x := range l {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, p := range dbnp {
		if !in(np, p) {
			d.set(p, "delete")
		}
	}
	for _, p := range np {
		if !in(dbnp, p) {
			d.set(p, "add")
		}
	}
	for _, p := range f.paths {
		s := phpString(p.v)
		dbv, ok := fdb.lookup(p.path)
		if !ok && r.isMasked(p.path, &f) {
			// Secrets are never read back (a password, a secret macro's
			// value), but Zabbix has them stored: an update.
			ok, dbv = true, secretMask
		}
		if !ok {
			if r.isDefault(p.path, s) {
				continue
			}
			if r.isMasked(p.path, &f) {
				s = secretMask
			}
			d.set(p.path, "add", s)
			continue
		}
		dbs := phpString(dbv)
		mask, dbMask := r.isMasked(p.path, &f), r.isMasked(p.path, &fdb)
		if !mask && !dbMask && phpEqual(s, dbs) {
			continue
		}
		if isNested(p.path) {
			d.set(parentPath(p.path), "update")
		}
		if mask {
			s = secretMask
		}
		if dbMask {
			dbs = secretMask
		}
		d.set(p.path, "update", s, dbs)
	}
	return d
}

// json writes the details as PHP's json_encode does ("\/" for "/",
// non-ASCII as \u escapes); "" when there are none.
func (d *details) json() string {
	if d == nil || len(d.keys) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range d.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		phpQuote(&b, k)
		b.WriteString(":[")
		for j, v := range d.vals[k] {
			if j > 0 {
				b.WriteByte(',')
			}
			switch x := v.(type) {
			case string:
				phpQuote(&b, x)
			case json.Number:
				b.WriteString(string(x))
			default:
				phpQuote(&b, phpString(x))
			}
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.String()
}

// phpQuote writes s as a JSON string the way PHP's json_encode does by
// default.
func phpQuote(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\', '/':
				b.WriteByte('\\')
				b.WriteByte(c)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			default:
				if c < 0x20 {
					fmt.Fprintf(b, `\u%04x`, c)
				} else {
					b.WriteByte(c)
				}
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r >= 0x10000 {
			r -= 0x10000
			fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			continue
		}
		fmt.Fprintf(b, `\u%04x`, r)
	}
	b.WriteByte('"')
}
