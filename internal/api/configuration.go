package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// configuration.import (Zabbix 6.0's): a Zabbix export document in
// YAML, XML or JSON applied under rules, in one catalog transaction
// (catalog.Import), parsed by catalog.ParseExport as `peregrine import`
// parses files. Errors name the element by 6.0's path
// ("/zabbix_export/templates/template(1)/items/item(2)/key").

// Importer is the catalog's side of configuration.import.
type Importer interface {
	Import(ctx context.Context, spec catalog.Spec, rules catalog.ImportRules) (catalog.ApplyResult, error)
}

// importRuleOptions are the options 6.0 takes per kind of rules
// (recorded from 6.0.14's validator: mediaTypes has no deleteMissing);
// the kinds Peregrine does not store are accepted and their objects
// refused where a document has them.
var importRuleOptions = map[string][]string{
	"discoveryRules":     {"createMissing", "updateExisting", "deleteMissing"},
	"graphs":             {"createMissing", "updateExisting", "deleteMissing"},
	"groups":             {"createMissing", "updateExisting"},
	"hosts":              {"createMissing", "updateExisting"},
	"httptests":          {"createMissing", "updateExisting", "deleteMissing"},
	"images":             {"createMissing", "updateExisting"},
	"items":              {"createMissing", "updateExisting", "deleteMissing"},
	"maps":               {"createMissing", "updateExisting"},
	"mediaTypes":         {"createMissing", "updateExisting"},
	"templateLinkage":    {"createMissing", "deleteMissing"},
	"templates":          {"createMissing", "updateExisting"},
	"templateDashboards": {"createMissing", "updateExisting", "deleteMissing"},
	"triggers":           {"createMissing", "updateExisting", "deleteMissing"},
	"valueMaps":          {"createMissing", "updateExisting", "deleteMissing"},
}

type importParams struct {
	format, source string
	rules          map[string]catalog.ImportRule
}

// decodeImportParams reads configuration.import's params with 6.0's
// checks, in its order.
func decodeImportParams(raw json.RawMessage) (importParams, error) {
	var p importParams
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || jsonKindOf(bytes.TrimSpace(raw)) != 'o' {
		return p, invalid("/", "an array is expected")
	}
	for _, k := range sortedKeys(top) {
		if k != "format" && k != "source" && k != "rules" {
			return p, errParams(`Invalid parameter "/": unexpected parameter "%s".`, k)
		}
	}
	str := func(name string, out *string) error {
		v, ok := top[name]
		if !ok {
			return errParams(`Invalid parameter "/": the parameter "%s" is missing.`, name)
		}
		if json.Unmarshal(v, out) != nil {
			return invalid("/"+name, "a character string is expected")
		}
		return nil
	}
	if err := str("format", &p.format); err != nil {
		return p, err
	}
	if p.format != "yaml" && p.format != "xml" && p.format != "json" {
		return p, invalid("/format", `value must be one of "yaml", "xml", "json"`)
	}
	if err := str("source", &p.source); err != nil {
		return p, err
	}
	rv, ok := top["rules"]
	if !ok {
		return p, errParams(`Invalid parameter "/": the parameter "rules" is missing.`)
	}
	var rules map[string]json.RawMessage
	if json.Unmarshal(rv, &rules) != nil || jsonKindOf(bytes.TrimSpace(rv)) != 'o' && string(bytes.TrimSpace(rv)) != "[]" {
		return p, invalid("/rules", "an array is expected")
	}
	p.rules = map[string]catalog.ImportRule{}
	for _, kind := range sortedKeys(rules) {
		opts, known := importRuleOptions[kind]
		if !known {
			return p, errParams(`Invalid parameter "/rules": unexpected parameter "%s".`, kind)
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(rules[kind], &m) != nil {
			return p, invalid("/rules/"+kind, "an array is expected")
		}
		var r catalog.ImportRule
		for _, o := range sortedKeys(m) {
			if !slices.Contains(opts, o) {
				return p, errParams(`Invalid parameter "/rules/%s": unexpected parameter "%s".`, kind, o)
			}
			var b bool
			if json.Unmarshal(m[o], &b) != nil {
				return p, invalid("/rules/"+kind+"/"+o, "a boolean is expected")
			}
			switch o {
			case "createMissing":
				r.CreateMissing = b
			case "updateExisting":
				r.UpdateExisting = b
			case "deleteMissing":
				r.DeleteMissing = b
			}
		}
		p.rules[kind] = r
	}
	return p, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (s *Server) configurationImport(ctx context.Context, c *call) (any, error) {
	p, err := decodeImportParams(c.params)
	if err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	if !a.all() {
		// Peregrine's rule: an import may touch any template, so it
		// needs rights on every group.
		return nil, errNoPermissions
	}
	im, ok := s.opts.Catalog.(Importer)
	if !ok {
		return nil, errParams("configuration.import is not available: the catalog is read-only")
	}
	spec, err := parseImportSource(p)
	if err != nil {
		return nil, err
	}
	r := p.rules
	rules := catalog.ImportRules{Groups: r["groups"], Templates: r["templates"], Items: r["items"],
		Triggers: r["triggers"], Graphs: r["graphs"], ValueMaps: r["valueMaps"],
		TemplateLinkage: r["templateLinkage"], TemplateDashboards: r["templateDashboards"], HTTPTests: r["httptests"], Hosts: r["hosts"],
		// Media types are checked as mediatype.create and .update check
		// them: 6.0's import creates and updates them through those.
		MediaTypes: r["mediaTypes"], CheckMediaType: CheckMediaType}
	if _, err := im.Import(ctx, spec, rules); err != nil {
		return nil, importError(err)
	}
	return true, nil
}

// parseImportSource reads configuration.import's and importcompare's
// document, refusing a 6.0 document's object without uuid as 6.0 does.
func parseImportSource(p importParams) (catalog.Spec, error) {
	spec, err := catalog.ParseExport(p.format, []byte(p.source))
	if err == nil {
		err = spec.ZabbixExport.RequireUUIDs()
	}
	if err != nil {
		return catalog.Spec{}, importError(err)
	}
	return spec, nil
}

// importError is an import's error as 6.0's application error: the
// first element refused, by its path in 6.0's form.
func importError(err error) error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae // a media type refused by mediatype.create's checks
	}
	var pe *catalog.ParamError
	if errors.As(err, &pe) {
		return errParams(`Invalid parameter "%s": %s.`, pe.Path, pe.Text)
	}
	var me *catalog.MalformedError
	if errors.As(err, &me) {
		return errApp("%s", me.Text)
	}
	var fe *catalog.FieldError
	if errors.As(err, &fe) {
		return errApp("Invalid tag %q: %s.", catalog.ZabbixPath(fe.Field), strings.TrimSuffix(fe.Err.Error(), "."))
	}
	return errApp("%s", strings.SplitN(err.Error(), "\n", 2)[0])
}
