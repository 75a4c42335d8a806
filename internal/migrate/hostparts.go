package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// hostPartRules are configuration.import's rules for what a host holds
// of its own: its items, discovery rules (with their prototypes), web
// scenarios, value maps, and the triggers and graphs over its items are
// created or updated; nothing is deleted. The hosts rule is off: the
// host's own properties are copied member by member with host.create
// and host.update (kinds.go), and 6.0.14 too imports an existing host's
// items with it off and leaves the host's properties alone.
var hostPartRules = obj{
	"items":          obj{"createMissing": true, "updateExisting": true},
	"triggers":       obj{"createMissing": true, "updateExisting": true},
	"graphs":         obj{"createMissing": true, "updateExisting": true},
	"valueMaps":      obj{"createMissing": true, "updateExisting": true},
	"discoveryRules": obj{"createMissing": true, "updateExisting": true},
	"httptests":      obj{"createMissing": true, "updateExisting": true},
}

// hostPartKeys are the members of an exported host that are its own
// contents; top-level triggers and graphs are the document's.
var hostPartKeys = []string{"items", "discovery_rules", "httptests", "valuemaps"}

// hostParts is the contents of a one-host export, in a comparable form:
// the host's own items, rules, web scenarios and value maps, and the
// document's triggers and graphs (those over the host's items); what
// counts them ("3 items"); own reports whether the host has items,
// rules or web scenarios (value maps are copied as a kind of their own).
func hostParts(doc string) (parts string, what []string, own bool, err error) {
	var d struct {
		X map[string]json.RawMessage `json:"zabbix_export"`
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		return "", nil, false, fmt.Errorf("not an export document: %w", err)
	}
	var hosts []map[string]json.RawMessage
	_ = json.Unmarshal(d.X["hosts"], &hosts)
	m := map[string]json.RawMessage{}
	count := func(name string, raw json.RawMessage) {
		var l []any
		if json.Unmarshal(raw, &l) == nil && len(l) > 0 {
			what = append(what, fmt.Sprintf("%d %s", len(l), name))
			own = own || name != "valuemaps"
		}
	}
	if len(hosts) == 1 {
		for _, k := range hostPartKeys {
			if v, ok := hosts[0][k]; ok {
				m[k] = v
				count(strings.ReplaceAll(k, "_", " "), v)
			}
		}
	}
	for _, k := range []string{"triggers", "graphs"} {
		if v, ok := d.X[k]; ok {
			m[k] = v
			count(k, v)
		}
	}
	if len(hosts) == 1 {
		// Triggers over one item are written under it.
		var items []struct {
			Triggers []any `json:"triggers"`
		}
		_ = json.Unmarshal(hosts[0]["items"], &items)
		n := 0
		for _, it := range items {
			n += len(it.Triggers)
		}
		if n > 0 {
			what = append(what, fmt.Sprintf("%d item triggers", n))
		}
	}
	if len(m) == 0 {
		return "", nil, false, nil
	}
	b, _ := json.Marshal(m) // map keys sorted: comparable
	return string(b), what, own, nil
}

// copyHostParts copies what the copied hosts hold of their own (not
// inherited from a template) through the source's configuration.export
// and the target's configuration.import, one host at a time. A host
// whose contents on the target are the source's is unchanged without an
// import; otherwise the target's contents before and after the import
// tell whether it changed anything. A host refused for a reference to
// another host's trigger not yet copied (a dependency) is tried again
// after the others.
func copyHostParts(ctx context.Context, src, tgt *side, hosts []obj, rep *Report) error {
	var retry []obj
	for pass := 0; pass < 2; pass++ {
		for _, h := range hosts {
			name := str(h["host"])
			tid, ok := tgt.ids["host"][name]
			if !ok {
				continue // not copied: the host's entry says why
			}
			o, why, err := copyHostPart(ctx, src, tgt, str(h["hostid"]), tid)
			if err != nil {
				return err
			}
			if o == Failed && pass == 0 {
				retry = append(retry, h)
				continue
			}
			if o >= 0 {
				rep.add("host contents", name, o, why)
			}
		}
		hosts, retry = retry, nil
	}
	tgt.forget("trigger")
	return nil
}

// copyHostPart copies one host's contents; outcome -1: it has none.
func copyHostPart(ctx context.Context, src, tgt *side, sid, tid string) (Outcome, string, error) {
	export := func(s *side, id string) (string, error) {
		var d string
		err := s.c.Call(ctx, "configuration.export", obj{"format": "json", "options": obj{"hosts": []string{id}}}, &d)
		return d, err
	}
	doc, err := export(src, sid)
	if err != nil {
		return Failed, "the source's export failed: " + reason(err), nil
	}
	want, what, own, err := hostParts(doc)
	if err != nil {
		return Failed, "the source's export: " + err.Error(), nil
	}
	if !own {
		return -1, "", nil // nothing but value maps, copied as a kind
	}
	d, err := export(tgt, tid)
	if err != nil {
		return 0, "", fmt.Errorf("target: %w", err)
	}
	before, _, had, err := hostParts(d)
	if err != nil {
		return 0, "", fmt.Errorf("target: %w", err)
	}
	if before == want {
		return Unchanged, "", nil
	}
	if err := tgt.c.Call(ctx, "configuration.import", obj{"format": "json", "source": doc, "rules": hostPartRules}, nil); err != nil {
		return Failed, "import refused: " + reason(err), nil
	}
	if d, err = export(tgt, tid); err != nil {
		return 0, "", fmt.Errorf("target: %w", err)
	}
	after, _, _, err := hostParts(d)
	if err != nil {
		return 0, "", fmt.Errorf("target: %w", err)
	}
	switch {
	case after == before:
		return Unchanged, "", nil
	case !had:
		return Created, strings.Join(what, ", "), nil
	}
	return Updated, "its export differed", nil
}
