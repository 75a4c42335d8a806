package catalog

import (
	"errors"
	"strconv"
	"strings"
)

// errNoUUID is 6.0's refusal of an object of a version 6.0 export
// without its uuid (recorded from 6.0.14: `Invalid tag "/zabbix_export/
// templates/template(1)/items/item(3)": the tag "uuid" is missing.`).
var errNoUUID = errors.New(`the tag "uuid" is missing`)

// RequireUUIDs refuses the first object of a version 6.0 document that
// 6.0 requires a uuid of and that has none, in the order 6.0's
// validator walks the document: host groups, templates with their
// items (and their triggers), discovery rules, web scenarios (recorded
// from 6.0.14: before dashboards), dashboards and value maps, then triggers and graphs. Older versions' documents have none.
// configuration.import and importcompare check it; `peregrine import`
// and the catalog's own tests take documents without uuids.
func (x *ZabbixExport) RequireUUIDs() error {
	if x.Version != "6.0" {
		return nil
	}
	at := func(p string, i int) string { return p + "[" + strconv.Itoa(i) + "]" }
	for i, g := range x.Groups {
		if g.UUID == "" {
			return &FieldError{Field: at("zabbix_export.groups", i), Err: errNoUUID}
		}
	}
	for i := range x.Templates {
		t := &x.Templates[i]
		tp := at("zabbix_export.templates", i)
		if t.UUID == "" {
			return &FieldError{Field: tp, Err: errNoUUID}
		}
		for j := range t.Items {
			ip := at(tp+".items", j)
			if t.Items[j].UUID == "" {
				return &FieldError{Field: ip, Err: errNoUUID}
			}
			for k, tr := range t.Items[j].Triggers {
				if tr.UUID == "" {
					return &FieldError{Field: at(ip+".triggers", k), Err: errNoUUID}
				}
			}
		}
		for j, r := range t.DiscoveryRules {
			if r.UUID == "" {
				return &FieldError{Field: at(tp+".discovery_rules", j), Err: errNoUUID}
			}
		}
		for j, w := range t.HTTPTests {
			if w.UUID == "" {
				return &FieldError{Field: at(tp+".httptests", j), Err: errNoUUID}
			}
		}
		for j, d := range t.Dashboards {
			if d.UUID == "" {
				return &FieldError{Field: at(tp+".dashboards", j), Err: errNoUUID}
			}
		}
		for j, v := range t.ValueMaps {
			if v.UUID == "" {
				return &FieldError{Field: at(tp+".valuemaps", j), Err: errNoUUID}
			}
		}
	}
	// A trigger or graph over the document's hosts has none (recorded
	// from 6.0.14: its own host export has none, and imports).
	ofHosts := func(expr string) bool {
		for _, h := range x.Hosts {
			if strings.Contains(expr, "/"+h.Host+"/") {
				return true
			}
		}
		return false
	}
	for i, tr := range x.Triggers {
		if tr.UUID == "" && !ofHosts(tr.Expression) {
			return &FieldError{Field: at("zabbix_export.triggers", i), Err: errNoUUID}
		}
	}
	for i, g := range x.Graphs {
		if g.UUID == "" && (len(g.GraphItems) == 0 || !ofHosts("/"+g.GraphItems[0].Item.Host+"/")) {
			return &FieldError{Field: at("zabbix_export.graphs", i), Err: errNoUUID}
		}
	}
	return nil
}
