package api

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// configuration.export (Zabbix 6.0's): host groups, hosts and templates
// by ID written as 6.0.14 writes them (catalog.Snapshot.Export), in
// YAML, XML, JSON or raw (the document as a JSON object). What the
// caller cannot read is left out, as 6.0's gets leave it out; IDs that
// name nothing are skipped, as 6.0 skips them. Peregrine keeps no
// network maps or images: a request naming any is refused rather than
// answered with less than it asked. Media types (catalog.AlertConfig's)
// are written as 6.0 writes them, without the SMTP password (Peregrine
// returns no secret), to the users mediatype.get answers (admins).

type exportParams struct {
	format string
	pretty bool
	opts   map[string][]uint64
}

// exportOptions are 6.0's options of configuration.export (recorded
// from 6.0.14: anything else, valueMaps included, is an unexpected
// parameter).
var exportOptions = []string{"groups", "hosts", "images", "maps", "mediaTypes", "templates"}

// decodeExportParams reads configuration.export's params with 6.0's
// checks and texts (recorded from 6.0.14): unexpected members first,
// then format, prettyprint and options in that order.
func decodeExportParams(raw json.RawMessage) (exportParams, error) {
	p := exportParams{opts: map[string][]uint64{}}
	ms, ok := validatorMembers(raw)
	if !ok {
		return p, invalid("/", "an array is expected")
	}
	top := map[string][]byte{}
	for _, m := range ms {
		if m.name != "format" && m.name != "prettyprint" && m.name != "options" {
			return p, errParams(`Invalid parameter "/": unexpected parameter "%s".`, m.name)
		}
		top[m.name] = m.raw
	}
	f, ok := top["format"]
	if !ok {
		return p, errParams(`Invalid parameter "/": the parameter "format" is missing.`)
	}
	if json.Unmarshal(f, &p.format) != nil || jsonKindOf(f) != 's' {
		return p, invalid("/format", "a character string is expected")
	}
	if !slices.Contains([]string{"yaml", "xml", "json", "raw"}, p.format) {
		return p, invalid("/format", `value must be one of "yaml", "xml", "json", "raw"`)
	}
	if v, ok := top["prettyprint"]; ok {
		if jsonKindOf(v) != 'b' {
			return p, invalid("/prettyprint", "a boolean is expected")
		}
		p.pretty = string(v) == "true"
	}
	o, ok := top["options"]
	if !ok {
		return p, errParams(`Invalid parameter "/": the parameter "options" is missing.`)
	}
	oms, ok := validatorMembers(o)
	if !ok {
		return p, invalid("/options", "an array is expected")
	}
	for _, m := range oms {
		if !slices.Contains(exportOptions, m.name) {
			return p, errParams(`Invalid parameter "/options": unexpected parameter "%s".`, m.name)
		}
	}
	for _, m := range oms {
		path := "/options/" + m.name
		elems, ok := arrayElems(m.raw)
		if jsonKindOf(m.raw) != 'a' && jsonKindOf(m.raw) != 'o' || !ok && jsonKindOf(m.raw) == 'a' {
			return p, invalid(path, "an array is expected")
		}
		if jsonKindOf(m.raw) == 'o' {
			sub, _ := validatorMembers(m.raw)
			elems = elems[:0]
			for _, s := range sub {
				elems = append(elems, s.raw)
			}
		}
		for i, e := range elems {
			id, ok := parseID(e)
			if !ok {
				return p, invalid(path+"/"+strconv.Itoa(i+1), "a number is expected")
			}
			p.opts[m.name] = append(p.opts[m.name], id)
		}
	}
	return p, nil
}

func (s *Server) configurationExport(ctx context.Context, c *call) (any, error) {
	p, err := decodeExportParams(c.params)
	if err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	o := catalog.ExportOptions{Format: p.format, Pretty: p.pretty}
	switch {
	case len(p.opts["maps"]) > 0:
		return nil, errParams(`Invalid parameter "/options/maps": Peregrine has no network maps.`)
	case len(p.opts["images"]) > 0:
		return nil, errParams(`Invalid parameter "/options/images": Peregrine has no images.`)
	}
	if ids := p.opts["mediaTypes"]; len(ids) > 0 && s.opts.Alerting != nil && c.user.Role >= RoleAdmin {
		cfg := s.opts.Alerting.AlertConfig()
		for _, id := range ids {
			if m := cfg.MediaTypes[id]; m != nil && !slices.Contains(o.MediaTypes, m) {
				o.MediaTypes = append(o.MediaTypes, m)
			}
		}
	}
	for _, id := range p.opts["groups"] {
		if a.all() || a.seesGroup(id, false) {
			o.Groups = append(o.Groups, id)
		}
	}
	for _, id := range p.opts["hosts"] {
		if h := snap.HostByID(id); h != nil && (a.all() || a.canRead(h)) {
			o.Hosts = append(o.Hosts, id)
		}
	}
	for _, id := range p.opts["templates"] {
		if t := snap.Template(id); t != nil && (a.all() || a.canRead(t)) {
			o.Templates = append(o.Templates, id)
		}
	}
	out, err := snap.Export(o)
	if err != nil {
		return nil, errApp("%s", err.Error())
	}
	if p.format == "raw" {
		return json.RawMessage(out), nil
	}
	return string(out), nil
}
