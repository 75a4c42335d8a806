package service

import (
	"slices"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/event"
)

// The status calculation, as Zabbix 6.0's server does it (recorded from
// Zabbix 6.0.14, see eval_test.go):
//
//   - A service without children has the highest severity of the open
//     problems its problem tags match, or OK. A problem matches when it
//     has every problem tag (same name, case-sensitive; value equal, or
//     containing the tag's value, case-sensitive, for "contains").
//     Suppressed problems count. The algorithm and the status rules of
//     such a service play no part.
//   - A service with children looks at each child's status as it
//     propagates (as is, increased or decreased by the propagation
//     value within 0..5, a fixed value, or ignored: the child does not
//     count at all); an OK child stays OK unless fixed. Algorithm 0
//     gives OK, 1 the highest child status when every counted child has
//     a problem, 2 the highest child status. Then each status rule that
//     holds raises the status to its new status if that is higher.
//
// The time of a status change (the service alarm's clock, which the SLI
// counts from) is the clock of the problem that set the status of a
// service without children: the highest severity's, the earliest event
// of several; when none is left, the clock of what resolved it (the OK
// event, or the configuration change). A parent changes at the clock of
// the child change that changed it.

// problem is an open problem as the services see it.
type problem struct {
	id       uint64
	severity int
	clock    int64
	name     string
	tags     []event.Tag
}

// matches reports whether a problem with tags matches the problem tags
// pts (all of them; none matches nothing).
func matches(pts []ProblemTag, tags []event.Tag) bool {
	if len(pts) == 0 {
		return false
	}
	for _, pt := range pts {
		ok := false
		for _, t := range tags {
			if t.Tag == pt.Tag && (pt.Operator == TagEquals && t.Value == pt.Value ||
				pt.Operator == TagContains && strings.Contains(t.Value, pt.Value)) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// containsFold reports whether s contains sub, ignoring case as the
// Zabbix frontend's UPPER() LIKE does.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToUpper(s), strings.ToUpper(sub))
}

// leafStatus is the status of a service without children with the
// problems ps, and the clock of the change: the deciding problem's, or
// okClock when there is none.
func leafStatus(ps []*problem, okClock int64) (int, int64) {
	var best *problem
	for _, p := range ps {
		if best == nil || p.severity > best.severity || p.severity == best.severity && p.id < best.id {
			best = p
		}
	}
	if best == nil {
		return StatusOK, okClock
	}
	return best.severity, best.clock
}

// upstream is the status child s with status st gives its parents.
func upstream(s *Service, st int) int {
	if st == StatusOK && s.PropagationRule != PropagateFixed {
		return StatusOK
	}
	switch s.PropagationRule {
	case PropagateIncrease:
		return min(5, st+s.PropagationValue)
	case PropagateDecrease:
		return max(0, st-s.PropagationValue)
	case PropagateFixed:
		return s.PropagationValue
	}
	return st
}

// childState is a counted child of a parent: its service and the status
// it propagates.
type childState struct {
	s  *Service
	up int
}

// countedChildren are the children of p that count (not ignored), with
// their propagated status per status.
func countedChildren(cfg *Config, p *Service, status func(uint64) int) []childState {
	out := make([]childState, 0, len(p.Children))
	for _, id := range p.Children {
		c := cfg.Service(id)
		if c == nil || c.PropagationRule == PropagateIgnore {
			continue
		}
		out = append(out, childState{s: c, up: upstream(c, status(id))})
	}
	return out
}

// parentStatus is the status of p, which has children, given their
// statuses; top is the counted child whose status decided it (nil when
// the status is OK or came from a rule alone).
func parentStatus(cfg *Config, p *Service, status func(uint64) int) (st int, top *Service) {
	children := countedChildren(cfg, p, status)
	st = StatusOK
	highest := func() {
		for _, c := range children {
			if c.up > st {
				st, top = c.up, c.s
			}
		}
	}
	switch p.Algorithm {
	case AlgorithmAllProblems:
		all := len(children) > 0
		for _, c := range children {
			all = all && c.up != StatusOK
		}
		if all {
			highest()
		}
	case AlgorithmMostCritical:
		highest()
	}
	for _, r := range p.StatusRules {
		if ruleHolds(r, children) && r.NewStatus > st {
			st = r.NewStatus
		}
	}
	if top == nil && st != StatusOK {
		// A rule set it: the child with the highest status decides
		// the time.
		topUp := StatusOK
		for _, c := range children {
			if c.up > topUp {
				top, topUp = c.s, c.up
			}
		}
	}
	return st, top
}

// ruleKinds tells what a status rule counts.
func ruleKinds(t int) (lessThan, weight, percent bool) {
	lessThan = t == RuleCountLessThan || t == RulePercentLessThan || t == RuleWeightLessThan || t == RuleWeightPercentLess
	weight = t >= RuleWeightAtLeast
	percent = t == RulePercentAtLeast || t == RulePercentLessThan || t == RuleWeightPercentAtLeast || t == RuleWeightPercentLess
	return
}

// ruleMatched are the children a rule counts: status at least the
// limit ("at least" rules) or above it ("less than" rules: those not at
// the limit or below), with a weight for weight rules.
func ruleMatched(r StatusRule, children []childState) []childState {
	lessThan, weight, _ := ruleKinds(r.Type)
	var out []childState
	for _, c := range children {
		ok := c.up >= r.LimitStatus
		if lessThan {
			ok = c.up > r.LimitStatus
		}
		if ok && (!weight || c.s.Weight > 0) {
			out = append(out, c)
		}
	}
	return out
}

// ruleHolds evaluates a status rule over the counted children.
func ruleHolds(r StatusRule, children []childState) bool {
	lessThan, weight, percent := ruleKinds(r.Type)
	matched := ruleMatched(r, children)
	var value, total float64
	if weight {
		for _, c := range matched {
			value += float64(c.s.Weight)
		}
		for _, c := range children {
			total += float64(c.s.Weight)
		}
	} else {
		value, total = float64(len(matched)), float64(len(children))
	}
	limit := float64(r.LimitValue)
	if percent {
		limit = float64(r.LimitValue) * total / 100
	}
	if lessThan {
		return total-value < limit
	}
	return value >= limit
}

// problemEvents returns the problems behind the status of service id:
// those of the services without children below it that decide its
// status (Zabbix's selectProblemEvents). minStatus, when set, keeps
// only problems of at least that severity. status gives the services'
// current statuses and problems the open problems of each service
// without children. A problem reached twice is returned once.
func problemEvents(cfg *Config, id uint64, minStatus *int, status func(uint64) int, problems func(uint64) []*problem, out map[uint64]*problem, depth int) {
	s := cfg.Service(id)
	if s == nil || depth > len(cfg.Services) {
		return
	}
	if len(s.Children) == 0 {
		for _, p := range problems(id) {
			if minStatus == nil || p.severity >= *minStatus {
				out[p.id] = p
			}
		}
		return
	}
	children := countedChildren(cfg, s, status)
	var notOK []childState
	for _, c := range children {
		if c.up != StatusOK {
			notOK = append(notOK, c)
		}
	}
	// evaluate: child → the least severity of its problems that counts
	// (nil: all).
	evaluate := map[uint64]*int{}
	var order []uint64
	add := func(cid uint64, v *int) {
		if _, ok := evaluate[cid]; !ok {
			order = append(order, cid)
		}
		evaluate[cid] = v
	}
	rules := true
	switch s.Algorithm {
	case AlgorithmAllProblems:
		if len(notOK) == len(children) {
			for _, c := range notOK {
				add(c.s.ID, nil)
			}
			rules = false
		}
	case AlgorithmMostCritical:
		if minStatus != nil {
			for _, c := range notOK {
				if status(c.s.ID) < *minStatus {
					continue
				}
				add(c.s.ID, reverseMin(c.s, *minStatus))
			}
		} else {
			for _, c := range notOK {
				add(c.s.ID, nil)
			}
			rules = false
		}
	}
	if rules {
		for _, r := range s.StatusRules {
			if minStatus != nil && r.NewStatus < *minStatus {
				continue
			}
			if !ruleHolds(r, children) {
				continue
			}
			lessThan, _, _ := ruleKinds(r.Type)
			ruleMin := r.LimitStatus
			if lessThan {
				ruleMin++
			}
			for _, c := range ruleMatched(r, children) {
				rev := reverseMin(c.s, ruleMin)
				cur, seen := evaluate[c.s.ID]
				switch {
				case !seen:
					add(c.s.ID, rev)
				case cur != nil:
					if rev == nil {
						evaluate[c.s.ID] = nil
					} else {
						evaluate[c.s.ID] = new(min(*cur, *rev))
					}
				}
			}
		}
	}
	for _, cid := range order {
		v := evaluate[cid]
		// Zabbix passes an absent least severity on as 0 to the
		// children of a child.
		least := 0
		if v != nil {
			least = *v
		}
		problemEvents(cfg, cid, &least, status, problems, out, depth+1)
	}
}

// reverseMin is the least status child c must have for its propagated
// status to reach least (nil: any, for a fixed propagation).
func reverseMin(c *Service, least int) *int {
	switch c.PropagationRule {
	case PropagateIncrease:
		return new(max(0, least-c.PropagationValue))
	case PropagateDecrease:
		return new(min(5, least+c.PropagationValue))
	case PropagateFixed:
		return nil
	}
	return new(least)
}

// sortProblems orders problems by event ID.
func sortProblems(m map[uint64]*problem) []*problem {
	out := make([]*problem, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *problem) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	return out
}
