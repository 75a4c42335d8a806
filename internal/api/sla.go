package api

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/api/zjson"
	"github.com/peregrine-mon/peregrine/internal/service"
)

// sla.get, sla.create, sla.update, sla.delete and sla.getsli, as Zabbix
// 6.0's CSla: every user reads every SLA (the read access of the default
// roles); admins and super admins change them (Zabbix's "manage SLA"
// action, on for the Admin and Super admin roles).

// The fields of an SLA object, in Zabbix's order.
const slaFields = "slaid,name,period,slo,effective_date,timezone,status,description"

// slaGetParams are sla.get's parameters, in Zabbix's order.
type slaGetParams struct {
	SLAIDs                  opt[ids]                   `json:"slaids"`
	EvalType                opt[int64]                 `json:"evaltype" in:"0,2"`
	ServiceTags             opt[zobjs[serviceTagCond]] `json:"service_tags"`
	ServiceIDs              opt[ids]                   `json:"serviceids"`
	Filter                  opt[map[string][]string]   `json:"filter" as:"filter" in:"slaid,name,period,slo,effective_date,timezone,status"`
	Search                  opt[map[string][]string]   `json:"search" as:"filter" in:"name,timezone,description"`
	SearchByAny             opt[bool]                  `json:"searchByAny"`
	StartSearch             opt[bool]                  `json:"startSearch" as:"flag"`
	ExcludeSearch           opt[bool]                  `json:"excludeSearch" as:"flag"`
	SearchWildcards         opt[bool]                  `json:"searchWildcardsEnabled"`
	Output                  opt[zoutput]               `json:"output" in:"slaid,name,period,slo,effective_date,timezone,status,description"`
	CountOutput             opt[bool]                  `json:"countOutput" as:"flag"`
	SelectServiceTags       opt[zoutput]               `json:"selectServiceTags" zbx:"null" in:"tag,operator,value,count"`
	SelectSchedule          opt[zoutput]               `json:"selectSchedule" zbx:"null" in:"period_from,period_to,count"`
	SelectExcludedDowntimes opt[zoutput]               `json:"selectExcludedDowntimes" zbx:"null" in:"name,period_from,period_to,count"`
	SortField               opt[zwords]                `json:"sortfield" in:"slaid,name,period,slo,effective_date,timezone,status,description"`
	SortOrder               opt[zorder]                `json:"sortorder"`
	Limit                   opt[int64]                 `json:"limit" in:"1:2147483647" zbx:"null"`
	Editable                opt[bool]                  `json:"editable"`
	PreserveKeys            opt[bool]                  `json:"preservekeys"`
}

// sloText is an SLO as Zabbix's database gives it back.
func sloText(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func slaText(s *service.SLA, f string) string {
	switch f {
	case "slaid":
		return id(s.ID)
	case "name":
		return s.Name
	case "period":
		return strconv.Itoa(s.Period)
	case "slo":
		return sloText(s.SLO)
	case "effective_date":
		return strconv.FormatInt(s.EffectiveDate, 10)
	case "timezone":
		return s.Timezone
	case "status":
		return strconv.Itoa(s.Status)
	case "description":
		return s.Description
	}
	return ""
}

// slaCoversAny reports whether the SLA covers one of the services.
func slaCoversAny(cfg *service.Config, sla *service.SLA, serviceIDs []uint64) bool {
	for _, sid := range serviceIDs {
		if sv := cfg.Service(sid); sv != nil && sla.Covers(sv) {
			return true
		}
	}
	return false
}

func (s *Server) slaGet(ctx context.Context, c *call) (any, error) {
	var p slaGetParams
	if err := decodeRuledParams(c.params, &p); err != nil {
		return nil, err
	}
	cfg := s.opts.Services.Config()
	search := searchOpts{terms: p.Search.Value, byAny: p.SearchByAny.Value, start: p.StartSearch.Value, wildcards: p.SearchWildcards.Value}
	var list []*service.SLA
	for i := range cfg.SLAs {
		sla := &cfg.SLAs[i]
		field := func(f string) string { return slaText(sla, f) }
		tags := make([]service.Tag, len(sla.ServiceTags))
		for j, t := range sla.ServiceTags {
			tags[j] = service.Tag{Tag: t.Tag, Value: t.Value}
		}
		switch {
		case p.SLAIDs.Given() && !slices.Contains(p.SLAIDs.Value, sla.ID),
			p.ServiceIDs.Given() && !slaCoversAny(cfg, sla, p.ServiceIDs.Value),
			len(p.ServiceTags.Value) > 0 && !tagsFilter(p.ServiceTags.Value, p.EvalType.Value, tags),
			!filterMatch(p.Filter.Value, field),
			!search.match(field):
			continue
		}
		list = append(list, sla)
	}
	slices.SortStableFunc(list, func(a, b *service.SLA) int {
		for i, f := range p.SortField.Value {
			var r int
			switch f {
			case "slaid":
				r = cmp.Compare(a.ID, b.ID)
			case "period":
				r = cmp.Compare(a.Period, b.Period)
			case "slo":
				r = cmp.Compare(a.SLO, b.SLO)
			case "effective_date":
				r = cmp.Compare(a.EffectiveDate, b.EffectiveDate)
			case "status":
				r = cmp.Compare(a.Status, b.Status)
			default:
				r = strings.Compare(slaText(a, f), slaText(b, f))
			}
			if p.SortOrder.Value.at(i) {
				r = -r
			}
			if r != 0 {
				return r
			}
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if p.CountOutput.Value {
		return strconv.Itoa(len(list)), nil
	}
	if p.Limit.Given() && int(p.Limit.Value) < len(list) {
		list = list[:p.Limit.Value]
	}
	out := make([]object, 0, len(list))
	for _, sla := range list {
		o := object{}
		for _, f := range strings.Split(slaFields, ",") {
			if p.Output.Value.has(f) {
				o[f] = slaText(sla, f)
			}
		}
		if sel := &p.SelectServiceTags; sel.Given() {
			o["service_tags"] = selectList(sel.Value, len(sla.ServiceTags), func(i int, f string) any {
				t := sla.ServiceTags[i]
				return map[string]string{"tag": t.Tag, "operator": strconv.Itoa(t.Operator), "value": t.Value}[f]
			}, "tag", "operator", "value")
		}
		if sel := &p.SelectSchedule; sel.Given() {
			o["schedule"] = selectList(sel.Value, len(sla.Schedule), func(i int, f string) any {
				r := sla.Schedule[i]
				return map[string]string{"period_from": i64s(r.From), "period_to": i64s(r.To)}[f]
			}, "period_from", "period_to")
		}
		if sel := &p.SelectExcludedDowntimes; sel.Given() {
			ds := sortedDowntimes(sla.ExcludedDowntimes)
			o["excluded_downtimes"] = selectList(sel.Value, len(ds), func(i int, f string) any {
				d := ds[i]
				return map[string]string{"name": d.Name, "period_from": i64s(d.From), "period_to": i64s(d.To)}[f]
			}, "name", "period_from", "period_to")
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

// sortedDowntimes are excluded downtimes by their start, as Zabbix
// returns them.
func sortedDowntimes(ds []service.Downtime) []service.Downtime {
	out := slices.Clone(ds)
	slices.SortStableFunc(out, func(a, b service.Downtime) int { return cmp.Compare(a.From, b.From) })
	return out
}

// ztz is an SLA's time zone: "system" or a zone of the IANA database,
// at most 50 characters.
type ztz string

func (z *ztz) decodeParam(raw []byte, _ *fieldCtx) error {
	v, ok := strValue(raw)
	if jsonKindOf(raw) != 's' || !ok {
		return &valueError{msg: "a character string is expected"}
	}
	if _, ok := service.Location(v, time.Local); !ok || strings.HasPrefix(v, "/") {
		return &valueError{msg: `value must be one of "system" or a time zone of the IANA database ("Europe/Riga")`}
	}
	if utf8.RuneCountInString(v) > 50 {
		return &valueError{msg: "value is too long"}
	}
	*z = ztz(v)
	return nil
}

// slaTagParam is a service tag of an SLA.
type slaTagParam struct {
	Tag      opt[zstr]  `json:"tag" in:"1:255"`
	Operator opt[int64] `json:"operator" in:"0,2"`
	Value    opt[zstr]  `json:"value" in:"0:255"`
}

func (*slaTagParam) required() []string { return []string{"tag"} }

// scheduleParam is a part of an SLA's week.
type scheduleParam struct {
	From opt[int64] `json:"period_from" in:"0:604800"`
	To   opt[int64] `json:"period_to" in:"0:604800"`
}

func (*scheduleParam) required() []string { return []string{"period_from", "period_to"} }

// downtimeParam is an excluded downtime.
type downtimeParam struct {
	Name opt[zstr]  `json:"name" in:"1:255"`
	From opt[int64] `json:"period_from" in:"0:2147483647"`
	To   opt[int64] `json:"period_to" in:"0:2147483647"`
}

func (*downtimeParam) required() []string { return []string{"name", "period_from", "period_to"} }

// slaFieldsParams are the members sla.create and .update share, in
// Zabbix's order.
type slaFieldsParams struct {
	Name              opt[zstr]                 `json:"name" in:"1:255"`
	Period            opt[int64]                `json:"period" in:"0,1,2,3,4"`
	SLO               opt[zfloat]               `json:"slo" in:"0:100"`
	EffectiveDate     opt[int64]                `json:"effective_date" in:"0:2147483647"`
	Timezone          opt[ztz]                  `json:"timezone"`
	Status            opt[int64]                `json:"status" in:"0,1"`
	Description       opt[zstr]                 `json:"description" in:"0:65535"`
	ServiceTags       opt[zobjs[slaTagParam]]   `json:"service_tags" in:"notempty"`
	Schedule          opt[zobjs[scheduleParam]] `json:"schedule"`
	ExcludedDowntimes opt[zobjs[downtimeParam]] `json:"excluded_downtimes"`
}

type slaCreateParams struct{ slaFieldsParams }

func (*slaCreateParams) required() []string {
	return []string{"name", "period", "slo", "effective_date", "timezone", "service_tags"}
}

type slaUpdateParams struct {
	SLAID opt[uint64] `json:"slaid"`
	slaFieldsParams
}

func (*slaUpdateParams) required() []string { return []string{"slaid"} }

// nestedUniq is the validator's second pass over one object's lists.
func (p *slaFieldsParams) nestedUniq(path string) error {
	st := p.ServiceTags.Value
	if err := uniq(path+"/service_tags", len(st), []string{"tag", "value"}, func(i int) []string {
		return []string{string(st[i].Tag.Value), string(st[i].Value.Value)}
	}); err != nil {
		return err
	}
	sc := p.Schedule.Value
	if err := uniq(path+"/schedule", len(sc), []string{"period_from", "period_to"}, func(i int) []string {
		return []string{i64s(sc[i].From.Value), i64s(sc[i].To.Value)}
	}); err != nil {
		return err
	}
	ed := p.ExcludedDowntimes.Value
	return uniq(path+"/excluded_downtimes", len(ed), []string{"period_from", "period_to"}, func(i int) []string {
		return []string{i64s(ed[i].From.Value), i64s(ed[i].To.Value)}
	})
}

// check is Zabbix's checks after the names: the SLO's fraction, the
// schedule's and the downtimes' order; name is the SLA's (stored) name.
func (p *slaFieldsParams) check(name string) error {
	if p.SLO.Set {
		v := float64(p.SLO.Value)
		if math.Round(v*1e4)/1e4 != v {
			return errParams(`SLA "%s" SLO must have no more than 4 fractional digits.`, name)
		}
	}
	for _, r := range p.Schedule.Value {
		if r.From.Value >= r.To.Value {
			return errParams(`Start time must be less than end time for SLA "%s".`, name)
		}
	}
	for _, d := range p.ExcludedDowntimes.Value {
		if d.From.Value >= d.To.Value {
			return errParams(`Start time must be less than end time for excluded downtime "%s" of SLA "%s".`, d.Name.Value, name)
		}
	}
	return nil
}

// apply sets the given members on sla; lists keep the elements that
// stay in their place, as Zabbix's rows do.
func (p *slaFieldsParams) apply(sla *service.SLA) {
	if p.Name.Set {
		sla.Name = string(p.Name.Value)
	}
	if p.Period.Set {
		sla.Period = int(p.Period.Value)
	}
	if p.SLO.Set {
		sla.SLO = float64(p.SLO.Value)
	}
	if p.EffectiveDate.Set {
		sla.EffectiveDate = p.EffectiveDate.Value
	}
	if p.Timezone.Set {
		sla.Timezone = string(p.Timezone.Value)
	}
	if p.Status.Set {
		sla.Status = int(p.Status.Value)
	}
	if p.Description.Set {
		sla.Description = string(p.Description.Value)
	}
	if p.ServiceTags.Set {
		var want []service.SLATag
		for _, t := range p.ServiceTags.Value {
			want = append(want, service.SLATag{Tag: string(t.Tag.Value), Operator: int(t.Operator.Value), Value: string(t.Value.Value)})
		}
		sla.ServiceTags = keepOrder(sla.ServiceTags, want, func(a, b service.SLATag) bool { return a == b })
	}
	if p.Schedule.Set {
		var want []service.Range
		for _, r := range p.Schedule.Value {
			want = append(want, service.Range{From: r.From.Value, To: r.To.Value})
		}
		sla.Schedule = service.NormalizeSchedule(want)
	}
	if p.ExcludedDowntimes.Set {
		var want []service.Downtime
		for _, d := range p.ExcludedDowntimes.Value {
			want = append(want, service.Downtime{Name: string(d.Name.Value), From: d.From.Value, To: d.To.Value})
		}
		same := func(a, b service.Downtime) bool { return a.From == b.From && a.To == b.To }
		ds := keepOrder(sla.ExcludedDowntimes, want, same)
		for i := range ds { // a kept downtime takes the new name
			if j := slices.IndexFunc(want, func(w service.Downtime) bool { return same(w, ds[i]) }); j >= 0 {
				ds[i] = want[j]
			}
		}
		sla.ExcludedDowntimes = ds
	}
}

// slaWriter refuses a caller who may not manage SLAs, as Zabbix does.
func slaWriter(c *call, method string) error {
	if c.user.Role < RoleAdmin {
		return errParams(`No permissions to call "%s".`, method)
	}
	return nil
}

func (s *Server) slaCreate(ctx context.Context, c *call) (any, error) {
	if err := slaWriter(c, "sla.create"); err != nil {
		return nil, err
	}
	var ps []slaCreateParams
	if err := decodeRuledObjects(c.params, &ps); err != nil {
		return nil, err
	}
	if err := uniq("/", len(ps), []string{"name"}, func(i int) []string { return []string{string(ps[i].Name.Value)} }); err != nil {
		return nil, err
	}
	for i := range ps {
		if err := ps[i].nestedUniq("/" + strconv.Itoa(i+1)); err != nil {
			return nil, err
		}
	}
	var created []uint64
	err := s.editServices(ctx, func(cfg *service.Config) error {
		for i := range ps {
			if slaNamed(cfg, string(ps[i].Name.Value)) {
				return errParams(`SLA "%s" already exists.`, ps[i].Name.Value)
			}
		}
		for i := range ps {
			if err := ps[i].check(string(ps[i].Name.Value)); err != nil {
				return err
			}
		}
		for i := range ps {
			sla := service.SLA{Status: 1} // enabled, Zabbix's default
			ps[i].apply(&sla)
			created = append(created, cfg.AddSLA(sla))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("slaids", created), nil
}

func slaNamed(cfg *service.Config, name string) bool {
	return slices.ContainsFunc(cfg.SLAs, func(s service.SLA) bool { return s.Name == name })
}

func (s *Server) slaUpdate(ctx context.Context, c *call) (any, error) {
	if err := slaWriter(c, "sla.update"); err != nil {
		return nil, err
	}
	var ps []slaUpdateParams
	if err := decodeRuledObjects(c.params, &ps); err != nil {
		return nil, err
	}
	if err := uniq("/", len(ps), []string{"slaid"}, func(i int) []string { return []string{id(ps[i].SLAID.Value)} }); err != nil {
		return nil, err
	}
	if err := uniqGiven("/", len(ps), "name", func(i int) opt[zstr] { return ps[i].Name }); err != nil {
		return nil, err
	}
	for i := range ps {
		if err := ps[i].nestedUniq("/" + strconv.Itoa(i+1)); err != nil {
			return nil, err
		}
	}
	ids := make([]uint64, len(ps))
	for i := range ps {
		ids[i] = ps[i].SLAID.Value
	}
	err := s.editServices(ctx, func(cfg *service.Config) error {
		for _, sid := range ids {
			if cfg.SLA(sid) == nil {
				return errNoPermissions
			}
		}
		for i := range ps {
			if n := string(ps[i].Name.Value); ps[i].Name.Set && n != cfg.SLA(ids[i]).Name && slaNamed(cfg, n) {
				return errParams(`SLA "%s" already exists.`, n)
			}
		}
		for i := range ps {
			if err := ps[i].check(cfg.SLA(ids[i]).Name); err != nil {
				return err
			}
		}
		for i := range ps {
			ps[i].apply(cfg.SLA(ids[i]))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("slaids", ids), nil
}

func (s *Server) slaDelete(ctx context.Context, c *call) (any, error) {
	if err := slaWriter(c, "sla.delete"); err != nil {
		return nil, err
	}
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	err = s.editServices(ctx, func(cfg *service.Config) error {
		for _, sid := range ids {
			if cfg.SLA(sid) == nil {
				return errNoPermissions
			}
		}
		cfg.DeleteSLAs(ids)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("slaids", ids), nil
}

// sliParams are sla.getsli's parameters.
type sliParams struct {
	SLAID      opt[uint64] `json:"slaid"`
	PeriodFrom opt[int64]  `json:"period_from" in:"0:2147483647" zbx:"null"`
	PeriodTo   opt[int64]  `json:"period_to" in:"0:2147483647" zbx:"null"`
	Periods    opt[int64]  `json:"periods" in:"1:100" zbx:"null"`
	ServiceIDs opt[ids]    `json:"serviceids"`
}

func (*sliParams) required() []string { return []string{"slaid"} }

func (s *Server) slaGetSLI(ctx context.Context, c *call) (any, error) {
	var p sliParams
	if err := decodeRuledParams(c.params, &p); err != nil {
		return nil, err
	}
	cfg := s.opts.Services.Config()
	sla := cfg.SLA(p.SLAID.Value)
	if sla == nil {
		return nil, errNoPermissions
	}
	loc, ok := service.Location(sla.Timezone, time.Local)
	if !ok {
		loc = time.UTC
	}
	var from, to *int64
	var periods *int
	if p.PeriodFrom.Given() {
		from = &p.PeriodFrom.Value
	}
	if p.PeriodTo.Given() {
		to = &p.PeriodTo.Value
	}
	if p.Periods.Given() {
		n := int(p.Periods.Value)
		periods = &n
	}
	now := s.opts.Services.Now()
	rps := service.ReportingPeriods(sla, loc, from, to, periods, now)
	var svcs []service.SLIService
	var sids []uint64
	if len(rps) > 0 {
		for i := range cfg.Services {
			sv := &cfg.Services[i]
			if !sla.Covers(sv) || p.ServiceIDs.Given() && !slices.Contains(p.ServiceIDs.Value, sv.ID) {
				continue
			}
			svcs = append(svcs, service.SLIService{ID: sv.ID, CreatedAt: sv.CreatedAt})
			sids = append(sids, sv.ID)
		}
	}
	tls, err := s.opts.Services.Timelines(ctx, sids, rps)
	if err != nil {
		s.opts.Logger.Error("api: cannot read service status changes", "err", err)
		return nil, errApp("Cannot read the status history of services.")
	}
	for i := range svcs {
		svcs[i].Timelines = tls[svcs[i].ID]
	}
	sla2 := *sla
	sla2.ExcludedDowntimes = sortedDowntimes(sla.ExcludedDowntimes)
	cells := service.ComputeSLI(&sla2, loc, rps, svcs, now.Unix())
	return sliJSON(rps, sids, cells), nil
}

// sliJSON writes sla.getsli's answer as Zabbix's PHP encodes it: numbers
// as numbers, the SLI as PHP prints a float.
func sliJSON(periods []service.Period, sids []uint64, cells [][]service.SLI) rawJSON {
	b := []byte(`{"periods":[`)
	for i, p := range periods {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"period_from":`...)
		b = strconv.AppendInt(b, p.From, 10)
		b = append(b, `,"period_to":`...)
		b = strconv.AppendInt(b, p.To, 10)
		b = append(b, '}')
	}
	b = append(b, `],"serviceids":[`...)
	for i, sid := range sids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, sid, 10)
	}
	b = append(b, `],"sli":[`...)
	for i, row := range cells {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j, c := range row {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"uptime":`...)
			b = strconv.AppendInt(b, c.Uptime, 10)
			b = append(b, `,"downtime":`...)
			b = strconv.AppendInt(b, c.Downtime, 10)
			b = append(b, `,"sli":`...)
			b = appendPHPFloat(b, c.SLI)
			b = append(b, `,"error_budget":`...)
			b = strconv.AppendInt(b, c.ErrorBudget, 10)
			b = append(b, `,"excluded_downtimes":[`...)
			for k, d := range c.ExcludedDowntimes {
				if k > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"name":`...)
				b = zjson.AppendString(b, d.Name)
				b = append(b, `,"period_from":`...)
				b = strconv.AppendInt(b, d.From, 10)
				b = append(b, `,"period_to":`...)
				b = strconv.AppendInt(b, d.To, 10)
				b = append(b, '}')
			}
			b = append(b, "]}"...)
		}
		b = append(b, ']')
	}
	return append(b, "]}"...)
}

// appendPHPFloat writes f as PHP's json_encode does (serialize_precision
// -1): the shortest decimal, an integral value without a fraction, an
// exponent below 1e-4 or from 1e15 ("1.0e-5").
func appendPHPFloat(b []byte, f float64) []byte {
	if a := math.Abs(f); a == 0 || a >= 1e-4 && a < 1e15 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	b = append(b, mant...)
	b = append(b, 'e')
	if e >= 0 {
		b = append(b, '+')
	}
	return strconv.AppendInt(b, int64(e), 10)
}
