package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Options is one migration.
type Options struct {
	// Source is the Zabbix 6.0 API, Target Peregrine's.
	Source, Target *Client
	// Prefix, when set, limits the copy to objects whose name starts with
	// it, and what they need (their groups, linked templates, proxies,
	// roles, user groups, media types, scripts).
	Prefix string
	// HistoryDays > 0 copies the last HistoryDays days of history of the
	// copied hosts' items (history.go).
	HistoryDays int
	// Checkpoint is the file recording how far the history copy got;
	// a run given the same file resumes after it.
	Checkpoint string
	// Progress, when set, gets the history copy's progress line.
	Progress io.Writer
	// Now is the end of the history window (zero: time.Now()).
	Now time.Time
}

// order is the kinds in the order they are written: what is referred to
// before what refers to it. Templates go between host groups and
// proxies (templates.go).
func order() []*kindDef {
	return []*kindDef{hostGroups(), proxies(), hosts(), valueMaps(), globalMacros(), regexps(),
		mediaTypes(), roles(), userGroups(), users(), scripts(), drules(), actions(), maintenances(), services(), slas()}
}

// selection is one kind's source objects to copy, with their canonical
// forms.
type selection struct {
	k     *kindDef
	objs  []obj
	canon []obj
}

// Run copies the configuration, then (HistoryDays > 0) the history, and
// returns the report. The error is a failure to talk to either API at
// all; an object that cannot be copied is a report entry.
func Run(ctx context.Context, o Options) (*Report, error) {
	src, tgt := newSide(ctx, o.Source), newSide(ctx, o.Target)
	kinds := make([]string, 0, len(refKinds))
	for k := range refKinds {
		kinds = append(kinds, k)
	}
	if err := src.load(ctx, kinds...); err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	if err := tgt.load(ctx, kinds...); err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	rep := &Report{}
	defs := order()
	// Pass 1, dependents first: choose the source objects and collect
	// the names they refer to, which are chosen in turn.
	need := map[string]map[string]bool{}
	sels := make([]*selection, len(defs))
	var hostIDs []string
	for i := len(defs) - 1; i >= 0; i-- {
		k := defs[i]
		if k.kind == "value map" { // read once the hosts are chosen, below
			sels[i] = &selection{k: k}
			continue
		}
		objs, err := fetchSource(ctx, src, k, o.Prefix, need[k.kind], hostIDs)
		if err != nil {
			return nil, fmt.Errorf("source: %w", err)
		}
		sel := &selection{k: k}
		for _, x := range objs {
			c := k.canon(x, src)
			sel.objs, sel.canon = append(sel.objs, x), append(sel.canon, c)
			refsIn(c, func(kind, name string) {
				if need[kind] == nil {
					need[kind] = map[string]bool{}
				}
				need[kind][name] = true
			})
		}
		if k.kind == "host" {
			for _, x := range objs {
				hostIDs = append(hostIDs, str(x["hostid"]))
			}
		}
		sels[i] = sel
	}
	// Pass 2, in order: templates after host groups, then the rest.
	for i, sel := range sels {
		if i == 1 {
			if err := copyTemplates(ctx, src, tgt, o.Prefix, need["template"], rep); err != nil {
				return nil, err
			}
			if err := tgt.load(ctx, "template", "host group"); err != nil {
				return nil, fmt.Errorf("target: %w", err)
			}
		}
		if sel.k.kind == "value map" {
			objs, err := fetchSource(ctx, src, sel.k, o.Prefix, nil, hostIDs)
			if err != nil {
				return nil, fmt.Errorf("source: %w", err)
			}
			for _, x := range objs {
				sel.objs, sel.canon = append(sel.objs, x), append(sel.canon, sel.k.canon(x, src))
			}
		}
		if err := copyKind(ctx, src, tgt, sel, rep); err != nil {
			return nil, err
		}
		if _, ok := refKinds[sel.k.kind]; ok {
			if err := tgt.load(ctx, sel.k.kind); err != nil {
				return nil, fmt.Errorf("target: %w", err)
			}
		}
		if sel.k.kind == "discovery rule" {
			tgt.forget(dcheckKind) // the rules' checks were written: read them again
		}
		if sel.k.kind == "value map" { // the hosts' own contents, their value maps made
			if err := copyHostParts(ctx, src, tgt, sels[2].objs, rep); err != nil {
				return nil, err
			}
		}
	}
	if o.HistoryDays > 0 {
		h, err := copyHistory(ctx, src, tgt, sels[2].objs, o)
		rep.History = h
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// matches reports whether name is chosen by prefix (global macros are
// matched inside their braces, upper-cased as macro names are).
func matches(prefix, name string) bool {
	return prefix == "" || strings.HasPrefix(name, prefix) || strings.HasPrefix(name, "{$"+strings.ToUpper(prefix))
}

// fetchSource reads the source objects of one kind that the run copies.
func fetchSource(ctx context.Context, s *side, k *kindDef, prefix string, needed map[string]bool, hostIDs []string) ([]obj, error) {
	base := func() obj {
		p := obj{"output": extend}
		for key, v := range k.get {
			p[key] = v
		}
		return p
	}
	if k.kind == "value map" { // those of the copied hosts
		if len(hostIDs) == 0 {
			return nil, nil
		}
		p := base()
		p["hostids"] = hostIDs
		return getAll(ctx, s.c, k.api, p)
	}
	var out []obj
	seen := map[string]bool{}
	addAll := func(objs []obj) {
		for _, x := range objs {
			id := str(x[k.id])
			if !seen[id] && (matches(prefix, str(x[k.name])) || needed[str(x[k.name])]) {
				seen[id] = true
				out = append(out, x)
			}
		}
	}
	p := base()
	if prefix != "" && k.kind != "global macro" {
		p["search"] = obj{k.name: prefix}
		p["startSearch"] = true
	}
	objs, err := getAll(ctx, s.c, k.api, p)
	if err != nil {
		return nil, err
	}
	addAll(objs)
	if prefix != "" && len(needed) > 0 {
		names := make([]string, 0, len(needed))
		for n := range needed {
			names = append(names, n)
		}
		p := base()
		p["filter"] = obj{k.name: names}
		objs, err := getAll(ctx, s.c, k.api, p)
		if err != nil {
			return nil, err
		}
		addAll(objs)
	}
	return out, nil
}

func getAll(ctx context.Context, c *Client, api string, params obj) ([]obj, error) {
	var rows []obj
	if err := c.Call(ctx, api+".get", params, &rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// copyKind writes one kind's chosen objects to the target: unchanged
// when the target's object has the same canonical form, else created or
// updated.
func copyKind(ctx context.Context, src, tgt *side, sel *selection, rep *Report) error {
	k := sel.k
	if len(sel.objs) == 0 {
		return nil
	}
	names := make([]string, 0, len(sel.objs))
	for _, x := range sel.objs {
		names = append(names, str(x[k.name]))
	}
	p := obj{"output": extend, "filter": obj{k.name: names}}
	for key, v := range k.get {
		p[key] = v
	}
	existing, err := getAll(ctx, tgt.c, k.api, p)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	have := map[string]obj{}
	haveCanon := map[string]obj{}
	for _, x := range existing {
		c := k.canon(x, tgt)
		key := k.keyOf(c, x)
		have[key], haveCanon[key] = x, c
	}
	idx := make([]int, len(sel.objs))
	for i := range idx {
		idx[i] = i
	}
	if k.kind == "service" {
		idx = serviceOrder(sel.objs, sel.canon)
	}
	for _, i := range idx {
		x, c := sel.objs[i], sel.canon[i]
		key := k.keyOf(c, x)
		name := str(x[k.name])
		if k.kind == "value map" {
			_, h, _ := parseMark(str(c["hostid"]), refMark)
			name = h + ": " + name
		}
		cur, exists := have[key]
		var diff []string
		if exists {
			// Compare with the target's references as names.
			diff = differing(c, haveCanon[key])
			if len(diff) == 0 {
				rep.add(k.kind, name, Unchanged, "")
				continue
			}
		}
		if k.skip != nil {
			if why := k.skip(x); why != "" {
				rep.add(k.kind, name, Failed, why)
				continue
			}
		}
		r, err := tgt.resolve(c)
		if err != nil {
			rep.add(k.kind, name, Failed, err.Error())
			continue
		}
		req := r.(map[string]any)
		if exists {
			// Only what differs: what the target has that the source
			// API cannot tell (secrets) stays as it is.
			for m := range req {
				if !slices.Contains(diff, m) {
					delete(req, m)
				}
			}
			if k.update != nil {
				k.update(x, cur, req)
			}
			req[k.id] = cur[k.id]
			method := k.api + ".update"
			if k.kind == "global macro" {
				method = "usermacro.updateglobal"
			}
			if err := tgt.c.Call(ctx, method, req, nil); err != nil {
				rep.add(k.kind, name, Failed, "update refused: "+reason(err))
				continue
			}
			rep.add(k.kind, name, Updated, "differed in "+strings.Join(diff, ", "))
			continue
		}
		if k.create != nil {
			k.create(x, req, rep)
		}
		var res map[string]json.RawMessage
		method := k.api + ".create"
		if k.kind == "global macro" {
			method = "usermacro.createglobal"
		}
		if err := tgt.c.Call(ctx, method, req, &res); err != nil {
			rep.add(k.kind, name, Failed, "create refused: "+reason(err))
			continue
		}
		rep.add(k.kind, name, Created, "")
		// What the rest of this kind may refer to (a service's parent).
		if _, ok := refKinds[k.kind]; ok {
			var ids []string
			if json.Unmarshal(res[k.id+"s"], &ids) == nil && len(ids) == 1 {
				tgt.names[k.kind][ids[0]], tgt.ids[k.kind][name] = name, ids[0]
			}
		}
	}
	return nil
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
func itoa(n int) string { return strconv.Itoa(n) }
