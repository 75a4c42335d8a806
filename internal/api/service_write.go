package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/service"
)

// service.create, service.update and service.delete, checked in the
// order of Zabbix 6.0's CService: the members (decodeRuled), their
// uniqueness, the services referred to and the caller's access, the
// UUID, the propagation rule and value, problem tags against children
// (of the service, then of the parents named), then loops.

// serviceTagParam is a service tag.
type serviceTagParam struct {
	Tag   opt[zstr] `json:"tag" in:"1:255"`
	Value opt[zstr] `json:"value" in:"0:255"`
}

func (*serviceTagParam) required() []string { return []string{"tag"} }

// problemTagParam is a problem tag.
type problemTagParam struct {
	Tag      opt[zstr]  `json:"tag" in:"1:255"`
	Operator opt[int64] `json:"operator" in:"0,2"`
	Value    opt[zstr]  `json:"value" in:"0:255"`
}

func (*problemTagParam) required() []string { return []string{"tag"} }

// serviceRef is a parent or a child.
type serviceRef struct {
	ServiceID opt[uint64] `json:"serviceid"`
}

func (*serviceRef) required() []string { return []string{"serviceid"} }

// statusRuleParam is a status rule.
type statusRuleParam struct {
	Type        opt[int64] `json:"type" in:"0,1,2,3,4,5,6,7"`
	LimitValue  opt[int64] `json:"limit_value"`
	LimitStatus opt[int64] `json:"limit_status" in:"-1,0,1,2,3,4,5"`
	NewStatus   opt[int64] `json:"new_status" in:"0,1,2,3,4,5"`
}

func (*statusRuleParam) required() []string {
	return []string{"type", "limit_value", "limit_status", "new_status"}
}

// afterField checks limit_value by the rule's type: a count or weight
// of 1-1000000, a percentage of 1-100.
func (r *statusRuleParam) afterField(name string) error {
	if name != "limit_value" {
		return nil
	}
	hi := int64(1000000)
	if rulePercent(int(r.Type.Value)) {
		hi = 100
	}
	if v := r.LimitValue.Value; v < 1 || v > hi {
		return &valueError{msg: "value must be one of 1-" + i64s(hi)}
	}
	return nil
}

// rulePercent reports whether a status rule type counts a percentage.
func rulePercent(t int) bool {
	return t == service.RulePercentAtLeast || t == service.RulePercentLessThan ||
		t == service.RuleWeightPercentAtLeast || t == service.RuleWeightPercentLess
}

// serviceFieldsParams are the members service.create and .update share,
// in Zabbix's order.
type serviceFieldsParams struct {
	Name             opt[zstr]                   `json:"name" in:"1:128"`
	Algorithm        opt[int64]                  `json:"algorithm" in:"0,1,2"`
	SortOrder        opt[int64]                  `json:"sortorder" in:"0:999"`
	Weight           opt[int64]                  `json:"weight" in:"0:1000000"`
	PropagationRule  opt[int64]                  `json:"propagation_rule" in:"0,1,2,3,4"`
	PropagationValue opt[int64]                  `json:"propagation_value"`
	Description      opt[zstr]                   `json:"description" in:"0:65535"`
	Tags             opt[zobjs[serviceTagParam]] `json:"tags"`
	ProblemTags      opt[zobjs[problemTagParam]] `json:"problem_tags"`
	Parents          opt[zobjs[serviceRef]]      `json:"parents"`
	Children         opt[zobjs[serviceRef]]      `json:"children"`
	StatusRules      opt[zobjs[statusRuleParam]] `json:"status_rules"`
}

type serviceCreateParams struct {
	UUID opt[zuuid] `json:"uuid"`
	serviceFieldsParams
}

func (*serviceCreateParams) required() []string { return []string{"name", "algorithm", "sortorder"} }

type serviceUpdateParams struct {
	ServiceID opt[uint64] `json:"serviceid"`
	serviceFieldsParams
}

func (*serviceUpdateParams) required() []string { return []string{"serviceid"} }

// nestedUniq is the validator's second pass over one object's lists.
func (p *serviceFieldsParams) nestedUniq(path string) error {
	tg := p.Tags.Value
	if err := uniq(path+"/tags", len(tg), []string{"tag", "value"}, func(i int) []string {
		return []string{string(tg[i].Tag.Value), string(tg[i].Value.Value)}
	}); err != nil {
		return err
	}
	pt := p.ProblemTags.Value
	if err := uniq(path+"/problem_tags", len(pt), []string{"tag", "value"}, func(i int) []string {
		return []string{string(pt[i].Tag.Value), string(pt[i].Value.Value)}
	}); err != nil {
		return err
	}
	for _, l := range []struct {
		name string
		refs zobjs[serviceRef]
	}{{"parents", p.Parents.Value}, {"children", p.Children.Value}} {
		if err := uniq(path+"/"+l.name, len(l.refs), []string{"serviceid"}, func(i int) []string {
			return []string{id(l.refs[i].ServiceID.Value)}
		}); err != nil {
			return err
		}
	}
	sr := p.StatusRules.Value
	return uniq(path+"/status_rules", len(sr), []string{"type", "limit_value", "limit_status"}, func(i int) []string {
		return []string{i64s(sr[i].Type.Value), i64s(sr[i].LimitValue.Value), i64s(sr[i].LimitStatus.Value)}
	})
}

func refIDs(l zobjs[serviceRef]) []uint64 {
	out := make([]uint64, len(l))
	for i, r := range l {
		out[i] = r.ServiceID.Value
	}
	return out
}

// propagationOK reports whether a propagation value suits its rule.
func propagationOK(rule, value int64) bool {
	switch rule {
	case service.PropagateIncrease, service.PropagateDecrease:
		return value >= 1 && value <= 5
	case service.PropagateFixed:
		return value >= -1 && value <= 5
	}
	return value == 0
}

// checkPropagation is Zabbix's check of propagation_rule and
// propagation_value; cur is the stored rule (0 for a new service).
func (p *serviceFieldsParams) checkPropagation(name string, cur int) error {
	if p.PropagationRule.Set && !p.PropagationValue.Set {
		return errParams(`Cannot specify "propagation_rule" parameter without specifying "propagation_value" parameter for service "%s".`, name)
	}
	if !p.PropagationValue.Set {
		return nil
	}
	rule := int64(cur)
	if p.PropagationRule.Set {
		rule = p.PropagationRule.Value
	}
	if !propagationOK(rule, p.PropagationValue.Value) {
		return errParams(`Incompatible "propagation_rule" and "propagation_value" parameters for service "%s".`, name)
	}
	return nil
}

// apply sets the given members on sv. Lists replace the stored ones;
// elements that were there keep their place, new ones follow, as
// Zabbix's rows do.
func (p *serviceFieldsParams) apply(sv *service.Service) {
	if p.Name.Set {
		sv.Name = string(p.Name.Value)
	}
	if p.Algorithm.Set {
		sv.Algorithm = int(p.Algorithm.Value)
	}
	if p.SortOrder.Set {
		sv.SortOrder = int(p.SortOrder.Value)
	}
	if p.Weight.Set {
		sv.Weight = int(p.Weight.Value)
	}
	if p.PropagationRule.Set {
		sv.PropagationRule = int(p.PropagationRule.Value)
	}
	if p.PropagationValue.Set {
		sv.PropagationValue = int(p.PropagationValue.Value)
	}
	if p.Description.Set {
		sv.Description = string(p.Description.Value)
	}
	if p.Tags.Set {
		var want []service.Tag
		for _, t := range p.Tags.Value {
			want = append(want, service.Tag{Tag: string(t.Tag.Value), Value: string(t.Value.Value)})
		}
		sv.Tags = keepOrder(sv.Tags, want, func(a, b service.Tag) bool { return a == b })
	}
	if p.ProblemTags.Set {
		var want []service.ProblemTag
		for _, t := range p.ProblemTags.Value {
			want = append(want, service.ProblemTag{Tag: string(t.Tag.Value), Operator: int(t.Operator.Value), Value: string(t.Value.Value)})
		}
		sv.ProblemTags = keepOrder(sv.ProblemTags, want, func(a, b service.ProblemTag) bool { return a == b })
	}
	if p.StatusRules.Set {
		var want []service.StatusRule
		for _, r := range p.StatusRules.Value {
			want = append(want, service.StatusRule{Type: int(r.Type.Value), LimitValue: int(r.LimitValue.Value),
				LimitStatus: int(r.LimitStatus.Value), NewStatus: int(r.NewStatus.Value)})
		}
		same := func(a, b service.StatusRule) bool {
			return a.Type == b.Type && a.LimitValue == b.LimitValue && a.LimitStatus == b.LimitStatus
		}
		rules := keepOrder(sv.StatusRules, want, same)
		for i := range rules { // a kept rule takes the new status given
			if j := slices.IndexFunc(want, func(w service.StatusRule) bool { return same(w, rules[i]) }); j >= 0 {
				rules[i] = want[j]
			}
		}
		sv.StatusRules = rules
	}
	if p.Children.Set {
		sv.Children = keepOrder(sv.Children, refIDs(p.Children.Value), func(a, b uint64) bool { return a == b })
	}
}

// keepOrder is want with the elements of have that it keeps first, in
// their order, then the others of want in theirs.
func keepOrder[T any](have, want []T, eq func(a, b T) bool) []T {
	var out []T
	for _, h := range have {
		if slices.ContainsFunc(want, func(w T) bool { return eq(w, h) }) {
			out = append(out, h)
		}
	}
	for _, w := range want {
		if !slices.ContainsFunc(out, func(o T) bool { return eq(o, w) }) {
			out = append(out, w)
		}
	}
	return out
}

// setParents makes parents the parents of service id: it leaves the
// others and is added to the new ones.
func setParents(cfg *service.Config, id uint64, parents []uint64) {
	for i := range cfg.Services {
		p := &cfg.Services[i]
		has := slices.Contains(p.Children, id)
		want := slices.Contains(parents, p.ID)
		switch {
		case has && !want:
			p.Children = slices.DeleteFunc(p.Children, func(c uint64) bool { return c == id })
		case !has && want:
			p.Children = append(p.Children, id)
		}
	}
}

// hasLoop reports whether the services' links form a loop.
func hasLoop(cfg *service.Config) bool {
	state := map[uint64]uint8{} // 1 on the path, 2 done
	var visit func(id uint64) bool
	visit = func(id uint64) bool {
		switch state[id] {
		case 1:
			return true
		case 2:
			return false
		}
		state[id] = 1
		if s := cfg.Service(id); s != nil {
			for _, ch := range s.Children {
				if visit(ch) {
					return true
				}
			}
		}
		state[id] = 2
		return false
	}
	for i := range cfg.Services {
		if visit(cfg.Services[i].ID) {
			return true
		}
	}
	return false
}

// problemTagParents is the first parent named (ascending ID) that has
// problem tags, whose name the error gives.
func problemTagParents(cfg *service.Config, parents []uint64) error {
	ids := slices.Clone(parents)
	slices.Sort(ids)
	for _, pid := range ids {
		if p := cfg.Service(pid); p != nil && len(p.ProblemTags) > 0 {
			return errParams(`Service "%s" cannot have problem tags and children at the same time.`, p.Name)
		}
	}
	return nil
}

// newUUID is a random UUID version 4 in 32 hexadecimal digits.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[:])
}

// editServices runs fn in an edit and words a failure to store.
func (s *Server) editServices(ctx context.Context, fn func(*service.Config) error) error {
	err := s.opts.Services.Edit(ctx, fn)
	var e *Error
	if err != nil && !errors.As(err, &e) {
		s.opts.Logger.Error("api: cannot store services", "err", err)
		return errApp("Cannot store the services: %v.", err)
	}
	return err
}

func (s *Server) serviceCreate(ctx context.Context, c *call) (any, error) {
	var ps []serviceCreateParams
	if err := decodeRuledObjects(c.params, &ps); err != nil {
		return nil, err
	}
	if err := uniq("/", len(ps), []string{"uuid"}, func(i int) []string {
		if !ps[i].UUID.Set {
			return nil
		}
		return []string{string(ps[i].UUID.Value)}
	}); err != nil {
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
			for _, ref := range append(refIDs(ps[i].Parents.Value), refIDs(ps[i].Children.Value)...) {
				if cfg.Service(ref) == nil {
					return errNoPermissions
				}
			}
		}
		if !servicesWritable(c) {
			return errApp(`Cannot create service "%s": read-write access to the service is required.`, ps[0].Name.Value)
		}
		for i := range ps {
			if u := string(ps[i].UUID.Value); u != "" && slices.ContainsFunc(cfg.Services, func(sv service.Service) bool { return sv.UUID == u }) {
				return errParams(`Entry with UUID "%s" already exists.`, u)
			}
		}
		for i := range ps {
			if err := ps[i].checkPropagation(string(ps[i].Name.Value), 0); err != nil {
				return err
			}
		}
		for i := range ps {
			if len(ps[i].ProblemTags.Value) > 0 && len(ps[i].Children.Value) > 0 {
				return errParams(`Service "%s" cannot have problem tags and children at the same time.`, ps[i].Name.Value)
			}
		}
		var parents []uint64
		for i := range ps {
			parents = append(parents, refIDs(ps[i].Parents.Value)...)
		}
		if err := problemTagParents(cfg, parents); err != nil {
			return err
		}
		now := s.opts.Services.Now().Unix()
		for i := range ps {
			sv := service.Service{UUID: string(ps[i].UUID.Value), CreatedAt: now}
			if sv.UUID == "" {
				sv.UUID = newUUID()
			}
			ps[i].apply(&sv)
			created = append(created, cfg.AddService(sv))
		}
		cfg.Reindex()
		for i := range ps {
			if ps[i].Parents.Set {
				setParents(cfg, created[i], refIDs(ps[i].Parents.Value))
			}
		}
		cfg.Reindex()
		if hasLoop(cfg) {
			return errParams("Services form a circular dependency.")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("serviceids", created), nil
}

func (s *Server) serviceUpdate(ctx context.Context, c *call) (any, error) {
	var ps []serviceUpdateParams
	if err := decodeRuledObjects(c.params, &ps); err != nil {
		return nil, err
	}
	if err := uniq("/", len(ps), []string{"serviceid"}, func(i int) []string {
		return []string{id(ps[i].ServiceID.Value)}
	}); err != nil {
		return nil, err
	}
	for i := range ps {
		if err := ps[i].nestedUniq("/" + strconv.Itoa(i+1)); err != nil {
			return nil, err
		}
	}
	ids := make([]uint64, len(ps))
	for i := range ps {
		ids[i] = ps[i].ServiceID.Value
	}
	err := s.editServices(ctx, func(cfg *service.Config) error {
		old := cfg.Clone()
		for _, sid := range ids {
			if cfg.Service(sid) == nil {
				return errNoPermissions
			}
		}
		for i := range ps {
			for _, ref := range append(refIDs(ps[i].Parents.Value), refIDs(ps[i].Children.Value)...) {
				if cfg.Service(ref) == nil {
					return errNoPermissions
				}
			}
		}
		if !servicesWritable(c) {
			return errApp(`Cannot update service "%s": read-write access to the service is required.`, old.Service(ids[0]).Name)
		}
		// A service named as a parent that also lists its children must
		// list this one.
		for i := range ps {
			if !ps[i].Parents.Set {
				continue
			}
			for _, pid := range refIDs(ps[i].Parents.Value) {
				j := slices.Index(ids, pid)
				if j < 0 || !ps[j].Children.Set || slices.Contains(refIDs(ps[j].Children.Value), ids[i]) {
					continue
				}
				return errParams(`Parent-child relation conflict in services "%s" and "%s".`, old.Service(pid).Name, old.Service(ids[i]).Name)
			}
		}
		for i := range ps {
			cur := old.Service(ids[i])
			if err := ps[i].checkPropagation(cur.Name, cur.PropagationRule); err != nil {
				return err
			}
		}
		for i := range ps {
			cur := old.Service(ids[i])
			hasTags := len(cur.ProblemTags) > 0
			if ps[i].ProblemTags.Set {
				hasTags = len(ps[i].ProblemTags.Value) > 0
			}
			hasChildren := len(cur.Children) > 0
			if ps[i].Children.Set {
				hasChildren = len(ps[i].Children.Value) > 0
			}
			if hasTags && hasChildren {
				return errParams(`Service "%s" cannot have problem tags and children at the same time.`, cur.Name)
			}
		}
		var parents []uint64
		for i := range ps {
			parents = append(parents, refIDs(ps[i].Parents.Value)...)
		}
		if err := problemTagParents(old, parents); err != nil {
			return err
		}
		for i := range ps {
			if ps[i].Parents.Set {
				setParents(cfg, ids[i], refIDs(ps[i].Parents.Value))
			}
		}
		for i := range ps {
			ps[i].apply(cfg.Service(ids[i]))
		}
		cfg.Reindex()
		if hasLoop(cfg) {
			return errParams("Services form a circular dependency.")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("serviceids", ids), nil
}

func (s *Server) serviceDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	err = s.editServices(ctx, func(cfg *service.Config) error {
		for _, sid := range ids {
			if cfg.Service(sid) == nil {
				return errNoPermissions
			}
		}
		if !servicesWritable(c) {
			first := slices.Min(ids)
			return errApp(`Cannot delete service "%s": read-write access to the service is required.`, cfg.Service(first).Name)
		}
		cfg.DeleteServices(ids)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return idResult("serviceids", ids), nil
}
