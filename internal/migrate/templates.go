package migrate

import (
	"context"
	"fmt"
	"sort"
)

// importRules are configuration.import's rules for a template copied
// from the source: create what is missing and update what differs;
// nothing on the target is deleted.
var importRules = obj{
	"groups":             obj{"createMissing": true},
	"templates":          obj{"createMissing": true, "updateExisting": true},
	"items":              obj{"createMissing": true, "updateExisting": true},
	"triggers":           obj{"createMissing": true, "updateExisting": true},
	"graphs":             obj{"createMissing": true, "updateExisting": true},
	"valueMaps":          obj{"createMissing": true, "updateExisting": true},
	"templateDashboards": obj{"createMissing": true, "updateExisting": true},
	"templateLinkage":    obj{"createMissing": true},
	"discoveryRules":     obj{"createMissing": true, "updateExisting": true},
	"httptests":          obj{"createMissing": true, "updateExisting": true},
}

// copyTemplates copies the chosen templates (the prefix's, those the
// copied objects link or name, and the templates those link) one at a
// time, parents first, through the source's configuration.export and
// the target's configuration.import: one the target refuses is reported
// with the target's reason and does not hold up the others. A template
// whose target export is the source's export is unchanged without an
// import; otherwise the target's export before and after the import
// tells whether the import changed anything.
func copyTemplates(ctx context.Context, src, tgt *side, prefix string, needed map[string]bool, rep *Report) error {
	var all []obj
	if err := src.c.Call(ctx, "template.get", obj{"output": []string{"templateid", "host"},
		"selectParentTemplates": []string{"templateid", "host"}}, &all); err != nil {
		return fmt.Errorf("source: %w", err)
	}
	byName := map[string]obj{}
	for _, t := range all {
		byName[str(t["host"])] = t
	}
	chosen := map[string]bool{}
	var add func(name string)
	add = func(name string) {
		t, ok := byName[name]
		if !ok || chosen[name] {
			return
		}
		chosen[name] = true
		for _, p := range list(t, "parentTemplates") {
			add(str(p["host"]))
		}
	}
	for _, t := range all {
		if name := str(t["host"]); (prefix != "" && matches(prefix, name)) || prefix == "" || needed[name] {
			add(name)
		}
	}
	// Parents first: depth is the longest chain of links below.
	depth := map[string]int{}
	var dep func(name string, seen map[string]bool) int
	dep = func(name string, seen map[string]bool) int {
		if d, ok := depth[name]; ok {
			return d
		}
		if seen[name] {
			return 0
		}
		seen[name] = true
		d := 0
		for _, p := range list(byName[name], "parentTemplates") {
			d = max(d, 1+dep(str(p["host"]), seen))
		}
		depth[name] = d
		return d
	}
	names := make([]string, 0, len(chosen))
	for n := range chosen {
		names = append(names, n)
		dep(n, map[string]bool{})
	}
	sort.Slice(names, func(a, b int) bool {
		if depth[names[a]] != depth[names[b]] {
			return depth[names[a]] < depth[names[b]]
		}
		return names[a] < names[b]
	})
	failed := map[string]string{}
	for _, name := range names {
		for _, p := range list(byName[name], "parentTemplates") {
			if why, bad := failed[str(p["host"])]; bad {
				failed[name] = fmt.Sprintf("it links template %q, not copied (%s)", str(p["host"]), why)
			}
		}
		if why, bad := failed[name]; bad {
			rep.add("template", name, Failed, why)
			continue
		}
		o, why, err := copyTemplate(ctx, src, tgt, str(byName[name]["templateid"]), name)
		if err != nil {
			return err
		}
		if o == Failed {
			failed[name] = why
		}
		rep.add("template", name, o, why)
	}
	return nil
}

func copyTemplate(ctx context.Context, src, tgt *side, id, name string) (Outcome, string, error) {
	var doc string
	if err := src.c.Call(ctx, "configuration.export", obj{"format": "json", "options": obj{"templates": []string{id}}}, &doc); err != nil {
		return Failed, "the source's export failed: " + reason(err), nil
	}
	export := func() (string, bool, error) {
		var rows []obj
		if err := tgt.c.Call(ctx, "template.get", obj{"output": []string{"templateid"}, "filter": obj{"host": name}}, &rows); err != nil {
			return "", false, fmt.Errorf("target: %w", err)
		}
		if len(rows) == 0 {
			return "", false, nil
		}
		var d string
		if err := tgt.c.Call(ctx, "configuration.export", obj{"format": "json", "options": obj{"templates": []string{str(rows[0]["templateid"])}}}, &d); err != nil {
			return "", true, fmt.Errorf("target: %w", err)
		}
		return d, true, nil
	}
	before, existed, err := export()
	if err != nil {
		return 0, "", err
	}
	if existed && before == doc {
		return Unchanged, "", nil
	}
	if err := tgt.c.Call(ctx, "configuration.import", obj{"format": "json", "source": doc, "rules": importRules}, nil); err != nil {
		return Failed, "import refused: " + reason(err), nil
	}
	after, _, err := export()
	if err != nil {
		return 0, "", err
	}
	switch {
	case !existed:
		return Created, "", nil
	case after == before:
		return Unchanged, "", nil
	}
	return Updated, "its export differed", nil
}
