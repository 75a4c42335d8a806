package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// obj is one API object as decoded JSON.
type obj = map[string]any

// refKinds are the kinds of object other objects name by ID, with the
// get method, ID member and name member that list them. Names are the
// join keys: an ID on the source becomes a name, the name the target's
// ID of that name.
var refKinds = map[string]struct{ api, id, name string }{
	"host group": {"hostgroup", "groupid", "name"},
	"template":   {"template", "templateid", "host"},
	"host":       {"host", "hostid", "host"},
	"proxy":      {"proxy", "proxyid", "host"},
	"user group": {"usergroup", "usrgrpid", "name"},
	"user":       {"user", "userid", "username"},
	"role":       {"role", "roleid", "name"},
	"media type": {"mediatype", "mediatypeid", "name"},
	"script":     {"script", "scriptid", "name"},
	"service":    {"service", "serviceid", "name"},
	// Network discovery rules (drules.go): action conditions name them.
	"discovery rule": {"drule", "druleid", "name"},
}

// A reference in a canonical object is a string no API value holds:
// refMark, the kind, refMark, the name. missMark marks an ID the side
// itself could not name (a dangling reference on the source).
const (
	refMark  = "\x00ref\x00"
	missMark = "\x00missing\x00"
)

// side is one API with the names of its objects by ID and back.
type side struct {
	c     *Client
	ctx   context.Context              // of the run, for what is read on first use (triggers)
	names map[string]map[string]string // kind -> id -> name
	ids   map[string]map[string]string // kind -> name -> id
}

func newSide(ctx context.Context, c *Client) *side {
	return &side{c: c, ctx: ctx, names: map[string]map[string]string{}, ids: map[string]map[string]string{}}
}

// Triggers have no name of their own: one is named by its hosts'
// technical names and its description, "h1,h2: description" (the hosts
// sorted), which is unique on a Zabbix that has no two triggers of the
// same description on the same hosts. They are read on first use only
// (actions with trigger conditions), and forgotten once the target's
// change.
const triggerKind = "trigger"

// loadTriggers reads every trigger's ID and name; a name that two
// triggers have is recorded with no ID, and resolves to none.
func (s *side) loadTriggers() error {
	var rows []struct {
		ID    string `json:"triggerid"`
		Desc  string `json:"description"`
		Hosts []struct {
			Host string `json:"host"`
		} `json:"hosts"`
	}
	if err := s.c.Call(s.ctx, "trigger.get", obj{"output": []string{"triggerid", "description"}, "selectHosts": []string{"host"}}, &rows); err != nil {
		return fmt.Errorf("cannot list triggers: %w", err)
	}
	s.names[triggerKind], s.ids[triggerKind] = map[string]string{}, map[string]string{}
	for _, r := range rows {
		hs := make([]string, 0, len(r.Hosts))
		for _, h := range r.Hosts {
			hs = append(hs, h.Host)
		}
		sort.Strings(hs)
		name := strings.Join(hs, ",") + ": " + r.Desc
		s.names[triggerKind][r.ID] = name
		if _, dup := s.ids[triggerKind][name]; dup {
			s.ids[triggerKind][name] = ""
			continue
		}
		s.ids[triggerKind][name] = r.ID
	}
	return nil
}

// dcheckKind is a network discovery rule's check, which has no name: it
// is named by its rule's name and its place among the rule's checks in
// ID order ("rule: check 2"); migrate writes a rule's checks in the
// source's order, so the places match.
const dcheckKind = "discovery check"

func (s *side) loadDChecks() error {
	var rows []struct {
		Name    string `json:"name"`
		DChecks []struct {
			ID string `json:"dcheckid"`
		} `json:"dchecks"`
	}
	if err := s.c.Call(s.ctx, "drule.get", obj{"output": []string{"name"}, "selectDChecks": []string{"dcheckid"}}, &rows); err != nil {
		return fmt.Errorf("cannot list discovery checks: %w", err)
	}
	s.names[dcheckKind], s.ids[dcheckKind] = map[string]string{}, map[string]string{}
	for _, r := range rows {
		ids := make([]string, 0, len(r.DChecks))
		for _, d := range r.DChecks {
			ids = append(ids, d.ID)
		}
		sort.Slice(ids, func(i, j int) bool { return atoi(ids[i]) < atoi(ids[j]) })
		for i, id := range ids {
			name := fmt.Sprintf("%s: check %d", r.Name, i+1)
			s.names[dcheckKind][id], s.ids[dcheckKind][name] = name, id
		}
	}
	return nil
}

// need reads kind on first use; the error is kept for the report.
func (s *side) need(kind string) error {
	if s.names[kind] != nil {
		return nil
	}
	switch kind {
	case triggerKind:
		return s.loadTriggers()
	case dcheckKind:
		return s.loadDChecks()
	}
	return nil
}

// forget drops what was read of kind, to be read again on next use.
func (s *side) forget(kind string) {
	delete(s.names, kind)
	delete(s.ids, kind)
}

// load (re)reads the IDs and names of every object of the ref kinds.
func (s *side) load(ctx context.Context, kinds ...string) error {
	for _, k := range kinds {
		rk := refKinds[k]
		var rows []obj
		params := obj{"output": []string{rk.id, rk.name}}
		if k == "user group" || k == "role" {
			params = obj{"output": []string{rk.id, rk.name}}
		}
		if err := s.c.Call(ctx, rk.api+".get", params, &rows); err != nil {
			return fmt.Errorf("cannot list %ss: %w", k, err)
		}
		s.names[k], s.ids[k] = map[string]string{}, map[string]string{}
		for _, r := range rows {
			id, name := str(r[rk.id]), str(r[rk.name])
			s.names[k][id], s.ids[k][name] = name, id
		}
	}
	return nil
}

// ref names the object kind/id of this side in a canonical object; "0"
// (none) stays "0".
func (s *side) ref(kind string, id any) string {
	v := str(id)
	if v == "" || v == "0" {
		return "0"
	}
	_ = s.need(kind) // unread: the ID stays unnamed, and is refused by resolve
	if n, ok := s.names[kind][v]; ok {
		return refMark + kind + refMark + n
	}
	return missMark + kind + missMark + v
}

// resolve turns a canonical object into the target's request: each
// reference into the target's ID of that name. The error names the first
// reference the target lacks.
func (s *side) resolve(x any) (any, error) {
	switch v := x.(type) {
	case string:
		if k, n, ok := parseMark(v, refMark); ok {
			if err := s.need(k); err != nil {
				return nil, err
			}
			id, ok := s.ids[k][n]
			if !ok {
				return nil, fmt.Errorf("%s %q is not on the target", k, n)
			}
			if id == "" {
				return nil, fmt.Errorf("%s %q is not unique on the target", k, n)
			}
			return id, nil
		}
		if k, id, ok := parseMark(v, missMark); ok {
			return nil, fmt.Errorf("%s %s it refers to does not exist on the source", k, id)
		}
		return v, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the first error is always the same one
		for _, k := range keys {
			e := v[k]
			r, err := s.resolve(e)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			r, err := s.resolve(e)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return x, nil
}

func parseMark(v, mark string) (kind, name string, ok bool) {
	if !strings.HasPrefix(v, mark) {
		return "", "", false
	}
	kind, name, ok = strings.Cut(v[len(mark):], mark)
	return kind, name, ok
}

// refsIn calls fn for every reference a canonical object holds.
func refsIn(x any, fn func(kind, name string)) {
	switch v := x.(type) {
	case string:
		if k, n, ok := parseMark(v, refMark); ok {
			fn(k, n)
		}
	case map[string]any:
		for _, e := range v {
			refsIn(e, fn)
		}
	case []any:
		for _, e := range v {
			refsIn(e, fn)
		}
	}
}

// str is an API scalar as a string (IDs and numbers come quoted from
// Zabbix, but a caller may hold a number).
func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case float64:
		return fmt.Sprint(x)
	case json.Number:
		return x.String()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// canonical makes x comparable: scalars as strings, lists in a
// deterministic order (the API defines none for most of them).
func canonical(x any) any {
	switch v := x.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = canonical(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		keys := make([]string, len(v))
		for i, e := range v {
			out[i] = canonical(e)
		}
		idx := make([]int, len(v))
		for i := range out {
			idx[i] = i
			b, _ := json.Marshal(out[i])
			keys[i] = string(b)
		}
		sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
		sorted := make([]any, len(v))
		for i, j := range idx {
			sorted[i] = out[j]
		}
		return sorted
	case nil:
		return ""
	case bool, float64, json.Number:
		return str(v)
	}
	return x
}

// differing lists the top-level members in which a and b differ.
func differing(a, b obj) []string {
	var out []string
	for k, va := range a {
		ja, _ := json.Marshal(canonical(va))
		jb, _ := json.Marshal(canonical(b[k]))
		if string(ja) != string(jb) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// pick copies the named members of o that are present.
func pick(o obj, fields ...string) obj {
	out := obj{}
	for _, f := range fields {
		if v, ok := o[f]; ok {
			out[f] = v
		}
	}
	return out
}

// list is o[k] as a list of objects (absent: empty).
func list(o obj, k string) []obj {
	xs, _ := o[k].([]any)
	out := make([]obj, 0, len(xs))
	for _, x := range xs {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// each maps the objects of o[k] through fn into a list.
func each(o obj, k string, fn func(obj) obj) []any {
	src := list(o, k)
	out := make([]any, 0, len(src))
	for _, e := range src {
		if r := fn(e); r != nil {
			out = append(out, r)
		}
	}
	return out
}
