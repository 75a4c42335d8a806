package api

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/service"
)

// Services serves service.* and sla.* (*service.Engine): the services
// and SLAs, the services' statuses and problems, and their status
// history.
type Services interface {
	Config() *service.Config
	// Edit changes the configuration through a copy (see
	// service.Engine.Edit); fn's error is returned as is.
	Edit(ctx context.Context, fn func(*service.Config) error) error
	Statuses() map[uint64]int
	ProblemEvents(ids []uint64) map[uint64][]service.ProblemEvent
	Timelines(ctx context.Context, ids []uint64, periods []service.Period) (map[uint64][]service.Timeline, error)
	// Now is the services' clock: the end of sla.getsli's last period.
	Now() time.Time
}

// registerServices registers service.* and sla.* when Options.Services
// is set. Every user may call them, as in Zabbix 6.0 (its user roles
// decide the rest): users of the User type read services and SLAs and
// change neither; admins and super admins change both (the services
// access of Zabbix's default roles, "Admin role" and "Super admin role"
// write every service, "User role" writes none).
func (s *Server) registerServices() {
	if s.opts.Services == nil {
		return
	}
	s.methods["service.get"] = &method{role: RoleUser, call: s.serviceGet}
	s.methods["service.create"] = &method{role: RoleUser, call: s.serviceCreate}
	s.methods["service.update"] = &method{role: RoleUser, call: s.serviceUpdate}
	s.methods["service.delete"] = &method{role: RoleUser, call: s.serviceDelete}
	s.methods["sla.get"] = &method{role: RoleUser, call: s.slaGet}
	s.methods["sla.getsli"] = &method{role: RoleUser, call: s.slaGetSLI}
	s.methods["sla.create"] = &method{role: RoleUser, call: s.slaCreate}
	s.methods["sla.update"] = &method{role: RoleUser, call: s.slaUpdate}
	s.methods["sla.delete"] = &method{role: RoleUser, call: s.slaDelete}
}

// servicesWritable reports whether the caller may change services.
func servicesWritable(c *call) bool { return c.user.Role >= RoleAdmin }

// The fields of a service object, in Zabbix's order.
const serviceFields = "serviceid,uuid,name,status,algorithm,sortorder,weight,propagation_rule,propagation_value,description,created_at,readonly"

// serviceTagCond is a tag condition of service.get's tags and problem_tags and
// sla.get's service_tags.
type serviceTagCond struct {
	Tag      opt[zstr]  `json:"tag"`
	Value    opt[zstr]  `json:"value"`
	Operator opt[int64] `json:"operator" in:"0,1,2,3,4,5"`
}

func (*serviceTagCond) required() []string { return []string{"tag"} }

// periodParam is a period of selectStatusTimeline.
type periodParam struct {
	From opt[int64] `json:"period_from" in:"0:2147483647"`
	To   opt[int64] `json:"period_to" in:"0:2147483647"`
}

func (*periodParam) required() []string { return []string{"period_from", "period_to"} }

// serviceGetParams are service.get's parameters, in Zabbix's order.
type serviceGetParams struct {
	ServiceIDs           opt[ids]                   `json:"serviceids"`
	ParentIDs            opt[ids]                   `json:"parentids"`
	DeepParentIDs        opt[bool]                  `json:"deep_parentids"`
	ChildIDs             opt[ids]                   `json:"childids"`
	EvalType             opt[int64]                 `json:"evaltype" in:"0,2"`
	Tags                 opt[zobjs[serviceTagCond]] `json:"tags"`
	ProblemTags          opt[zobjs[serviceTagCond]] `json:"problem_tags"`
	WithoutProblemTags   opt[bool]                  `json:"without_problem_tags"`
	SLAIDs               opt[ids]                   `json:"slaids"`
	Filter               opt[map[string][]string]   `json:"filter" as:"filter" in:"uuid,serviceid,name,status,algorithm"`
	Search               opt[map[string][]string]   `json:"search" as:"filter" in:"name"`
	SearchByAny          opt[bool]                  `json:"searchByAny"`
	StartSearch          opt[bool]                  `json:"startSearch" as:"flag"`
	ExcludeSearch        opt[bool]                  `json:"excludeSearch" as:"flag"`
	SearchWildcards      opt[bool]                  `json:"searchWildcardsEnabled"`
	Output               opt[zoutput]               `json:"output" in:"serviceid,uuid,name,status,algorithm,sortorder,weight,propagation_rule,propagation_value,description,created_at,readonly"`
	CountOutput          opt[bool]                  `json:"countOutput" as:"flag"`
	SelectParents        opt[zoutput]               `json:"selectParents" zbx:"null" in:"serviceid,uuid,name,status,algorithm,sortorder,weight,propagation_rule,propagation_value,description,created_at,readonly,count"`
	SelectChildren       opt[zoutput]               `json:"selectChildren" zbx:"null" in:"serviceid,uuid,name,status,algorithm,sortorder,weight,propagation_rule,propagation_value,description,created_at,readonly,count"`
	SelectTags           opt[zoutput]               `json:"selectTags" zbx:"null" in:"tag,value,count"`
	SelectProblemTags    opt[zoutput]               `json:"selectProblemTags" zbx:"null" in:"tag,operator,value,count"`
	SelectProblemEvents  opt[zoutput]               `json:"selectProblemEvents" zbx:"null" in:"eventid,severity,name,count"`
	SelectStatusRules    opt[zoutput]               `json:"selectStatusRules" zbx:"null" in:"type,limit_value,limit_status,new_status,count"`
	SelectStatusTimeline opt[zobjs[periodParam]]    `json:"selectStatusTimeline" zbx:"null" in:"notempty"`
	SortField            opt[zwords]                `json:"sortfield" in:"serviceid,name,status,sortorder,created_at"`
	SortOrder            opt[zorder]                `json:"sortorder"`
	Limit                opt[int64]                 `json:"limit" in:"1:2147483647" zbx:"null"`
	Editable             opt[bool]                  `json:"editable"`
	PreserveKeys         opt[bool]                  `json:"preservekeys"`
}

// searchOpts is the "search" of service.get and sla.get as Zabbix 6.0
// applies it: case-insensitive, a value containing the pattern (or
// starting with it, with startSearch), or, with searchWildcardsEnabled,
// the whole value matching the pattern with "*" for any run; several
// patterns of a field and several fields are and-ed (or-ed with
// searchByAny); empty patterns are skipped; excludeSearch changes
// nothing (6.0.14 reads it and never applies it).
type searchOpts struct {
	terms                   map[string][]string
	byAny, start, wildcards bool
}

func (o *searchOpts) match(field func(string) string) bool {
	var results []bool
	for f, ws := range o.terms {
		v := strings.ToUpper(field(f))
		var per []bool
		for _, w := range ws {
			if w == "" {
				continue
			}
			w = strings.ToUpper(w)
			var ok bool
			switch {
			case o.wildcards:
				ok = globMatch(w, v)
			case o.start:
				ok = strings.HasPrefix(v, w)
			default:
				ok = strings.Contains(v, w)
			}
			per = append(per, ok)
		}
		if len(per) == 0 {
			continue
		}
		results = append(results, o.combine(per))
	}
	return len(results) == 0 || o.combine(results)
}

func (o *searchOpts) combine(l []bool) bool {
	if o.byAny {
		return slices.Contains(l, true)
	}
	return !slices.Contains(l, false)
}

// filterMatch applies "filter": each field one of its values; numeric
// fields compare as numbers.
func filterMatch(filter map[string][]string, field func(string) string) bool {
	for f, want := range filter {
		v := field(f)
		ok := false
		for _, w := range want {
			if v == w {
				ok = true
				break
			}
			if a, err := strconv.ParseFloat(v, 64); err == nil {
				if b, err := strconv.ParseFloat(w, 64); err == nil && a == b {
					ok = true
					break
				}
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// tagsFilter applies tag conditions to tags as Zabbix's API does: per
// tag name, the conditions "exists", "equals" and "contains" (any of
// them) and "does not exist", "not equal", "does not contain" (none of
// them) are or-ed; evaltype 0 and-s the names, 2 or-s them. "contains"
// with an empty value is "exists", "does not contain" with an empty
// value "does not exist"; "exists" and "does not exist" cancel the
// value conditions of their side.
func tagsFilter(conds zobjs[serviceTagCond], evaltype int64, tags []service.Tag) bool {
	type side struct {
		any    bool // exists / does not exist: no value condition
		values []func(string) bool
		used   bool
	}
	type group struct{ pos, neg side }
	var names []string
	groups := map[string]*group{}
	for _, c := range conds {
		name, value := string(c.Tag.Value), string(c.Value.Value)
		op := c.Operator.Value
		switch {
		case op == 2 && value == "":
			op = 5
		case op == 0 && value == "":
			op = 4
		}
		g := groups[name]
		if g == nil {
			g = &group{}
			groups[name] = g
			names = append(names, name)
		}
		sd := &g.pos
		if op == 2 || op == 3 || op == 5 {
			sd = &g.neg
		}
		sd.used = true
		switch op {
		case 0, 2:
			up := strings.ToUpper(value)
			sd.values = append(sd.values, func(v string) bool { return strings.Contains(strings.ToUpper(v), up) })
		case 1, 3:
			sd.values = append(sd.values, func(v string) bool { return v == value })
		default:
			sd.any = true
		}
	}
	has := func(name string, sd *side) bool {
		for _, t := range tags {
			if t.Tag != name {
				continue
			}
			if sd.any {
				return true
			}
			for _, f := range sd.values {
				if f(t.Value) {
					return true
				}
			}
		}
		return false
	}
	results := make([]bool, 0, len(names))
	for _, name := range names {
		g := groups[name]
		pos, neg := &g.pos, &g.neg
		switch {
		case pos.used && pos.any:
			neg = &side{}
		case neg.used && neg.any:
			pos = &side{}
		}
		var terms []bool
		if pos.used {
			terms = append(terms, has(name, pos))
		}
		if neg.used {
			terms = append(terms, !has(name, neg))
		}
		results = append(results, slices.Contains(terms, true))
	}
	if evaltype == 2 {
		return slices.Contains(results, true)
	}
	return !slices.Contains(results, false)
}

// serviceValue is one field of service s as service.get writes it.
func serviceValue(s *service.Service, status int, readonly bool, f string) any {
	switch f {
	case "serviceid":
		return id(s.ID)
	case "uuid":
		return s.UUID
	case "name":
		return s.Name
	case "status":
		return strconv.Itoa(status)
	case "algorithm":
		return strconv.Itoa(s.Algorithm)
	case "sortorder":
		return strconv.Itoa(s.SortOrder)
	case "weight":
		return strconv.Itoa(s.Weight)
	case "propagation_rule":
		return strconv.Itoa(s.PropagationRule)
	case "propagation_value":
		return strconv.Itoa(s.PropagationValue)
	case "description":
		return s.Description
	case "created_at":
		return strconv.FormatInt(s.CreatedAt, 10)
	case "readonly":
		return readonly
	}
	return nil
}

func serviceText(s *service.Service, status int, f string) string {
	v, _ := serviceValue(s, status, false, f).(string)
	return v
}

// serviceObject is s with the fields of out.
func serviceObject(s *service.Service, status int, readonly bool, out *zoutput) object {
	o := object{}
	for _, f := range strings.Split(serviceFields, ",") {
		if out.has(f) {
			o[f] = serviceValue(s, status, readonly, f)
		}
	}
	return o
}

// sortServices orders services by the sort fields (ID without any).
func sortServices(l []*service.Service, fields []string, order zorder, status map[uint64]int) {
	slices.SortStableFunc(l, func(a, b *service.Service) int {
		for i, f := range fields {
			var c int
			switch f {
			case "name":
				c = strings.Compare(a.Name, b.Name)
			case "status":
				c = cmp.Compare(status[a.ID], status[b.ID])
			case "sortorder":
				c = cmp.Compare(a.SortOrder, b.SortOrder)
			case "created_at":
				c = cmp.Compare(a.CreatedAt, b.CreatedAt)
			default:
				c = cmp.Compare(a.ID, b.ID)
			}
			if order.at(i) {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// descendants are the services below ids (not ids themselves).
func descendants(cfg *service.Config, ids []uint64) map[uint64]bool {
	out := map[uint64]bool{}
	next := ids
	for len(next) > 0 {
		var more []uint64
		for _, id := range next {
			if s := cfg.Service(id); s != nil {
				for _, ch := range s.Children {
					if !out[ch] {
						out[ch] = true
						more = append(more, ch)
					}
				}
			}
		}
		next = more
	}
	return out
}

func (s *Server) serviceGet(ctx context.Context, c *call) (any, error) {
	var p serviceGetParams
	if err := decodeRuledParams(c.params, &p); err != nil {
		return nil, err
	}
	if p.SelectStatusTimeline.Given() {
		tl := p.SelectStatusTimeline.Value
		if err := uniq("/selectStatusTimeline", len(tl), []string{"period_from", "period_to"}, func(i int) []string {
			return []string{i64s(tl[i].From.Value), i64s(tl[i].To.Value)}
		}); err != nil {
			return nil, err
		}
	}
	cfg := s.opts.Services.Config()
	status := s.opts.Services.Statuses()
	readonly := !servicesWritable(c)
	var deep map[uint64]bool
	parentIDs := p.ParentIDs
	if parentIDs.Given() && p.DeepParentIDs.Value {
		if !slices.Contains(parentIDs.Value, 0) {
			deep = descendants(cfg, parentIDs.Value)
		}
		parentIDs = opt[ids]{}
	}
	search := searchOpts{terms: p.Search.Value, byAny: p.SearchByAny.Value, start: p.StartSearch.Value, wildcards: p.SearchWildcards.Value}
	var list []*service.Service
	for i := range cfg.Services {
		sv := &cfg.Services[i]
		field := func(f string) string { return serviceText(sv, status[sv.ID], f) }
		switch {
		case p.Editable.Value && readonly,
			p.ServiceIDs.Given() && !slices.Contains(p.ServiceIDs.Value, sv.ID),
			deep != nil && !deep[sv.ID],
			parentIDs.Given() && !inParents(cfg, sv.ID, parentIDs.Value),
			p.ChildIDs.Given() && !slices.ContainsFunc(sv.Children, func(ch uint64) bool { return slices.Contains(p.ChildIDs.Value, ch) }),
			len(p.Tags.Value) > 0 && !tagsFilter(p.Tags.Value, p.EvalType.Value, sv.Tags),
			len(p.ProblemTags.Value) > 0 && !tagsFilter(p.ProblemTags.Value, p.EvalType.Value, problemTagsAsTags(sv.ProblemTags)),
			len(p.ProblemTags.Value) == 0 && p.WithoutProblemTags.Value && len(sv.ProblemTags) > 0,
			p.SLAIDs.Given() && !coveredBySLAs(cfg, sv, p.SLAIDs.Value),
			!filterMatch(p.Filter.Value, field),
			!search.match(field):
			continue
		}
		list = append(list, sv)
	}
	sortServices(list, p.SortField.Value, p.SortOrder.Value, status)
	if p.CountOutput.Value {
		return strconv.Itoa(len(list)), nil
	}
	if p.Limit.Given() && int(p.Limit.Value) < len(list) {
		list = list[:p.Limit.Value]
	}
	ids := make([]uint64, len(list))
	for i, sv := range list {
		ids[i] = sv.ID
	}
	var events map[uint64][]service.ProblemEvent
	if p.SelectProblemEvents.Given() {
		events = s.opts.Services.ProblemEvents(ids)
	}
	var timelines map[uint64][]service.Timeline
	if p.SelectStatusTimeline.Given() {
		periods := make([]service.Period, len(p.SelectStatusTimeline.Value))
		for i, tp := range p.SelectStatusTimeline.Value {
			periods[i] = service.Period{From: tp.From.Value, To: tp.To.Value}
		}
		var err error
		if timelines, err = s.opts.Services.Timelines(ctx, ids, periods); err != nil {
			s.opts.Logger.Error("api: cannot read service status changes", "err", err)
			return nil, errApp("Cannot read the status history of services.")
		}
	}
	out := make([]object, 0, len(list))
	for _, sv := range list {
		o := serviceObject(sv, status[sv.ID], readonly, &p.Output.Value)
		related := func(rel []uint64, sel *zoutput) any {
			var l []*service.Service
			for _, rid := range rel {
				if r := cfg.Service(rid); r != nil {
					l = append(l, r)
				}
			}
			if sel.count {
				return strconv.Itoa(len(l))
			}
			sortServices(l, p.SortField.Value, p.SortOrder.Value, status)
			objs := make([]object, 0, len(l))
			for _, r := range l {
				objs = append(objs, serviceObject(r, status[r.ID], readonly, sel))
			}
			return objs
		}
		if p.SelectParents.Given() {
			o["parents"] = related(cfg.Parents(sv.ID), &p.SelectParents.Value)
		}
		if p.SelectChildren.Given() {
			o["children"] = related(sv.Children, &p.SelectChildren.Value)
		}
		if sel := &p.SelectTags; sel.Given() {
			o["tags"] = selectList(sel.Value, len(sv.Tags), func(i int, f string) any {
				return map[string]string{"tag": sv.Tags[i].Tag, "value": sv.Tags[i].Value}[f]
			}, "tag", "value")
		}
		if sel := &p.SelectProblemTags; sel.Given() {
			o["problem_tags"] = selectList(sel.Value, len(sv.ProblemTags), func(i int, f string) any {
				t := sv.ProblemTags[i]
				return map[string]string{"tag": t.Tag, "operator": strconv.Itoa(t.Operator), "value": t.Value}[f]
			}, "tag", "operator", "value")
		}
		if sel := &p.SelectProblemEvents; sel.Given() {
			evs := events[sv.ID]
			if sel.Value.count {
				o["problem_events"] = len(evs) // a number, as Zabbix 6.0 gives it
			} else {
				o["problem_events"] = selectList(sel.Value, len(evs), func(i int, f string) any {
					e := evs[i]
					return map[string]string{"eventid": id(e.EventID), "severity": strconv.Itoa(e.Severity), "name": e.Name}[f]
				}, "eventid", "severity", "name")
			}
		}
		if sel := &p.SelectStatusRules; sel.Given() {
			o["status_rules"] = selectList(sel.Value, len(sv.StatusRules), func(i int, f string) any {
				r := sv.StatusRules[i]
				return map[string]string{"type": strconv.Itoa(r.Type), "limit_value": strconv.Itoa(r.LimitValue),
					"limit_status": strconv.Itoa(r.LimitStatus), "new_status": strconv.Itoa(r.NewStatus)}[f]
			}, "type", "limit_value", "limit_status", "new_status")
		}
		if p.SelectStatusTimeline.Given() {
			var tl []object
			for _, t := range timelines[sv.ID] {
				alarms := make([]object, 0, len(t.Alarms))
				for _, a := range t.Alarms {
					alarms = append(alarms, object{"clock": strconv.FormatInt(a.Clock, 10), "value": strconv.Itoa(a.Value)})
				}
				// Zabbix gives the value of a stored change as a string,
				// the OK of none as a number.
				var start any = service.StatusOK
				if t.StartValue != service.StatusOK {
					start = strconv.Itoa(t.StartValue)
				}
				tl = append(tl, object{"start_value": start, "alarms": alarms})
			}
			o["status_timeline"] = nonNil(tl)
		}
		out = append(out, o)
	}
	if p.PreserveKeys.Value {
		m := make(map[string]object, len(out))
		for i, o := range out {
			m[id(list[i].ID)] = o
		}
		return m, nil
	}
	return out, nil
}

// selectList is a selectX of n related rows: "count", or each row with
// the selected fields (fields lists them all, in Zabbix's order).
func selectList(sel zoutput, n int, value func(i int, f string) any, fields ...string) any {
	if sel.count {
		return strconv.Itoa(n)
	}
	out := make([]object, 0, n)
	for i := range n {
		o := object{}
		for _, f := range fields {
			if sel.has(f) {
				o[f] = value(i, f)
			}
		}
		out = append(out, o)
	}
	return out
}

// inParents reports whether service id has a parent among parents; 0
// stands for "none" (the root services).
func inParents(cfg *service.Config, id uint64, parents []uint64) bool {
	ps := cfg.Parents(id)
	if len(ps) == 0 && slices.Contains(parents, 0) {
		return true
	}
	return slices.ContainsFunc(ps, func(p uint64) bool { return slices.Contains(parents, p) })
}

func problemTagsAsTags(pts []service.ProblemTag) []service.Tag {
	out := make([]service.Tag, len(pts))
	for i, t := range pts {
		out[i] = service.Tag{Tag: t.Tag, Value: t.Value}
	}
	return out
}

// coveredBySLAs reports whether one of the SLAs covers service sv.
func coveredBySLAs(cfg *service.Config, sv *service.Service, slaIDs []uint64) bool {
	for _, id := range slaIDs {
		if sla := cfg.SLA(id); sla != nil && sla.Covers(sv) {
			return true
		}
	}
	return false
}
