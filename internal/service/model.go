package service

import (
	"cmp"
	"slices"
)

// StatusOK is the status of a service without problems (Zabbix's
// ZBX_SEVERITY_OK); any other status is a trigger severity, 0..5.
const StatusOK = -1

// Status calculation algorithms (Service.Algorithm), Zabbix's numbers.
const (
	AlgorithmSetOK        = 0 // the status is OK, unless a status rule sets it
	AlgorithmAllProblems  = 1 // the most critical child status if every child has a problem
	AlgorithmMostCritical = 2 // the most critical child status
)

// Status propagation rules (Service.PropagationRule): how a service's
// status reaches its parents.
const (
	PropagateAsIs     = 0
	PropagateIncrease = 1 // by PropagationValue, at most 5
	PropagateDecrease = 2 // by PropagationValue, at least 0
	PropagateIgnore   = 3 // the parents do not count this service
	PropagateFixed    = 4 // PropagationValue (-1..5) whatever the problem
)

// Status rule types (StatusRule.Type): "if at least/less than N (or N%)
// of the children (or of their weight) have status S or above/below".
const (
	RuleCountAtLeast         = 0
	RulePercentAtLeast       = 1
	RuleCountLessThan        = 2
	RulePercentLessThan      = 3
	RuleWeightAtLeast        = 4
	RuleWeightPercentAtLeast = 5
	RuleWeightLessThan       = 6
	RuleWeightPercentLess    = 7
)

// Tag operators of problem tags and SLA service tags.
const (
	TagEquals   = 0
	TagContains = 2
)

// SLA reporting periods (SLA.Period).
const (
	PeriodDaily     = 0
	PeriodWeekly    = 1
	PeriodMonthly   = 2
	PeriodQuarterly = 3
	PeriodAnnually  = 4
)

// Service is one IT service of Zabbix 6.0's services tree. A service
// without children takes its status from the problems its problem tags
// match; one with children from theirs (Algorithm, StatusRules, each
// child's propagation). A service has problem tags or children, never
// both (the API refuses it).
type Service struct {
	ID               uint64       `json:"-"`
	UUID             string       `json:"uuid"`
	Name             string       `json:"name"`
	Algorithm        int          `json:"algorithm"`
	SortOrder        int          `json:"sortorder"`
	Weight           int          `json:"weight"`
	PropagationRule  int          `json:"propagation_rule"`
	PropagationValue int          `json:"propagation_value"`
	Description      string       `json:"description"`
	CreatedAt        int64        `json:"created_at"`
	Children         []uint64     `json:"children,omitempty"`
	Tags             []Tag        `json:"tags,omitempty"`
	ProblemTags      []ProblemTag `json:"problem_tags,omitempty"`
	StatusRules      []StatusRule `json:"status_rules,omitempty"`
}

// Tag is a service tag.
type Tag struct {
	Tag   string `json:"tag"`
	Value string `json:"value"`
}

// ProblemTag maps problems to a service: a problem matches when it has
// every problem tag of the service (Operator TagEquals: the same value;
// TagContains: a value containing Value, case-sensitive).
type ProblemTag struct {
	Tag      string `json:"tag"`
	Operator int    `json:"operator"`
	Value    string `json:"value"`
}

// StatusRule is an additional status rule of a service with children.
type StatusRule struct {
	Type        int `json:"type"`
	LimitValue  int `json:"limit_value"`
	LimitStatus int `json:"limit_status"`
	NewStatus   int `json:"new_status"`
}

// SLA is a service level agreement: the services whose tags match its
// service tags, a target SLO (percent), reporting periods, a weekly
// schedule of when uptime counts (none: always) and excluded downtimes.
type SLA struct {
	ID                uint64     `json:"-"`
	Name              string     `json:"name"`
	Period            int        `json:"period"`
	SLO               float64    `json:"slo"`
	EffectiveDate     int64      `json:"effective_date"`
	Timezone          string     `json:"timezone"` // an IANA name or "system"
	Status            int        `json:"status"`   // 0 disabled, 1 enabled
	Description       string     `json:"description"`
	ServiceTags       []SLATag   `json:"service_tags"`
	Schedule          []Range    `json:"schedule,omitempty"`
	ExcludedDowntimes []Downtime `json:"excluded_downtimes,omitempty"`
}

// SLATag selects the services of an SLA: a service tag named Tag whose
// value equals Value (TagEquals) or contains it, ignoring case
// (TagContains).
type SLATag struct {
	Tag      string `json:"tag"`
	Operator int    `json:"operator"`
	Value    string `json:"value"`
}

// Range is a part of the week, in seconds from Sunday 00:00.
type Range struct {
	From int64 `json:"period_from"`
	To   int64 `json:"period_to"`
}

// Downtime is an excluded downtime of an SLA: Unix times.
type Downtime struct {
	Name string `json:"name"`
	From int64  `json:"period_from"`
	To   int64  `json:"period_to"`
}

// Config is the services and SLAs, published whole: a Config returned
// by Engine.Config is never modified; Edit hands its function a copy.
type Config struct {
	Services []Service // ascending ID
	SLAs     []SLA     // ascending ID
	// NextServiceID and NextSLAID are the next IDs to assign; IDs are
	// never reused.
	NextServiceID, NextSLAID uint64

	parents map[uint64][]uint64 // child → parents, ascending
	byID    map[uint64]int      // service → index in Services
}

// index builds the derived maps; Services and SLAs must be sorted.
func (c *Config) index() {
	c.parents = map[uint64][]uint64{}
	c.byID = make(map[uint64]int, len(c.Services))
	for i := range c.Services {
		c.byID[c.Services[i].ID] = i
		for _, ch := range c.Services[i].Children {
			c.parents[ch] = append(c.parents[ch], c.Services[i].ID)
		}
	}
}

// Service returns the service with the ID, or nil.
func (c *Config) Service(id uint64) *Service {
	if i, ok := c.byID[id]; ok && i < len(c.Services) && c.Services[i].ID == id {
		return &c.Services[i]
	}
	// Services added or removed since the last index (during an edit).
	i, ok := slices.BinarySearchFunc(c.Services, id, func(s Service, id uint64) int { return cmp.Compare(s.ID, id) })
	if ok {
		return &c.Services[i]
	}
	for i := range c.Services {
		if c.Services[i].ID == id {
			return &c.Services[i]
		}
	}
	return nil
}

// SLA returns the SLA with the ID, or nil.
func (c *Config) SLA(id uint64) *SLA {
	i, ok := slices.BinarySearchFunc(c.SLAs, id, func(s SLA, id uint64) int { return cmp.Compare(s.ID, id) })
	if !ok {
		return nil
	}
	return &c.SLAs[i]
}

// Parents returns the parents of service id, ascending; shared.
func (c *Config) Parents(id uint64) []uint64 { return c.parents[id] }

// Clone returns a copy whose slices may be changed freely.
func (c *Config) Clone() *Config {
	n := &Config{NextServiceID: c.NextServiceID, NextSLAID: c.NextSLAID,
		Services: make([]Service, len(c.Services)), SLAs: make([]SLA, len(c.SLAs))}
	for i, s := range c.Services {
		s.Children = slices.Clone(s.Children)
		s.Tags = slices.Clone(s.Tags)
		s.ProblemTags = slices.Clone(s.ProblemTags)
		s.StatusRules = slices.Clone(s.StatusRules)
		n.Services[i] = s
	}
	for i, s := range c.SLAs {
		s.ServiceTags = slices.Clone(s.ServiceTags)
		s.Schedule = slices.Clone(s.Schedule)
		s.ExcludedDowntimes = slices.Clone(s.ExcludedDowntimes)
		n.SLAs[i] = s
	}
	n.index()
	return n
}

// AddService appends s with the next ID and returns the ID.
func (c *Config) AddService(s Service) uint64 {
	c.NextServiceID = max(c.NextServiceID, 1)
	s.ID = c.NextServiceID
	c.NextServiceID++
	c.Services = append(c.Services, s)
	return s.ID
}

// AddSLA appends s with the next ID and returns the ID.
func (c *Config) AddSLA(s SLA) uint64 {
	c.NextSLAID = max(c.NextSLAID, 1)
	s.ID = c.NextSLAID
	c.NextSLAID++
	c.SLAs = append(c.SLAs, s)
	return s.ID
}

// DeleteServices removes services and every link to them.
func (c *Config) DeleteServices(ids []uint64) {
	gone := map[uint64]bool{}
	for _, id := range ids {
		gone[id] = true
	}
	c.Services = slices.DeleteFunc(c.Services, func(s Service) bool { return gone[s.ID] })
	for i := range c.Services {
		c.Services[i].Children = slices.DeleteFunc(c.Services[i].Children, func(id uint64) bool { return gone[id] })
	}
	c.index()
}

// DeleteSLAs removes SLAs.
func (c *Config) DeleteSLAs(ids []uint64) {
	c.SLAs = slices.DeleteFunc(c.SLAs, func(s SLA) bool { return slices.Contains(ids, s.ID) })
}

// Reindex restores the order and the derived maps after services were
// added or their children changed.
func (c *Config) Reindex() {
	slices.SortFunc(c.Services, func(a, b Service) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(c.SLAs, func(a, b SLA) int { return cmp.Compare(a.ID, b.ID) })
	c.index()
}

// Services of an SLA: a service belongs to an SLA when one of its tags
// matches one of the SLA's service tags.
func (s *SLA) Covers(svc *Service) bool {
	for _, st := range svc.Tags {
		for _, t := range s.ServiceTags {
			if st.Tag != t.Tag {
				continue
			}
			if t.Operator == TagEquals && st.Value == t.Value ||
				t.Operator == TagContains && containsFold(st.Value, t.Value) {
				return true
			}
		}
	}
	return false
}
