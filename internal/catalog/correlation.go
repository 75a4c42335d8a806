package catalog

import (
	"maps"
	"slices"
)

// Event correlation (Zabbix 6.0's correlation.*): global rules that
// close problems when a new problem event matches, by tags of the old
// and the new event and by host group. They are part of the
// notification configuration (AlertConfig.Correlations), stored as
// rows of (id, name, config JSON) like media types, actions and global
// scripts, read and written whole with it.

const correlationSchema = `
CREATE TABLE IF NOT EXISTS correlations (
	id     INTEGER PRIMARY KEY,
	name   TEXT NOT NULL,
	config TEXT NOT NULL
);
`

// migrateCorrelations is the migration adding event correlations, kept
// on its own so that schema changes made in parallel renumber cleanly.
// An older database has none.
func migrateCorrelations() string { return correlationSchema }

// Correlation condition types (Zabbix 6.0's "type" of a condition).
const (
	CorrOldTag       = 0 // old event tag: Tag
	CorrNewTag       = 1 // new event tag: Tag
	CorrNewGroup     = 2 // new event host group: GroupID, Operator (0 equals, 1 does not equal)
	CorrTagPair      = 3 // event tag pair: OldTag of the old event equals NewTag of the new one
	CorrOldTagValue  = 4 // old event tag value: Tag, Value, Operator (0 =, 1 <>, 2 like, 3 not like)
	CorrNewTagValue  = 5 // new event tag value: Tag, Value, Operator
	CorrCloseOld     = 0 // operation: close old events
	CorrCloseNew     = 1 // operation: close the new event
	CorrStatusActive = 0
)

// CorrCondition is one condition of a correlation's filter.
type CorrCondition struct {
	Type      int    `json:"type"`
	Tag       string `json:"tag,omitempty"`
	OldTag    string `json:"oldtag,omitempty"`
	NewTag    string `json:"newtag,omitempty"`
	Value     string `json:"value,omitempty"`
	GroupID   uint64 `json:"groupid,omitempty"`
	Operator  int    `json:"operator,omitempty"`
	FormulaID string `json:"formulaid"`
}

// Correlation is one event correlation rule.
type Correlation struct {
	ID          uint64 `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Status      int    `json:"status"` // 0 enabled, 1 disabled
	// EvalType: 0 and/or, 1 and, 2 or, 3 custom Formula.
	EvalType   int             `json:"evaltype"`
	Formula    string          `json:"formula"`
	Conditions []CorrCondition `json:"conditions"`
	// Operations are operation types (CorrCloseOld, CorrCloseNew).
	Operations []int `json:"operations"`
}

// SortedCorrelations returns the correlations by ID.
func (c *AlertConfig) SortedCorrelations() []*Correlation {
	out := slices.Collect(maps.Values(c.Correlations))
	slices.SortFunc(out, func(a, b *Correlation) int { return cmpID(a.ID, b.ID) })
	return out
}

// cloneCorrelations is a deep copy of m.
func cloneCorrelations(m map[uint64]*Correlation) map[uint64]*Correlation {
	out := make(map[uint64]*Correlation, len(m))
	for id, c := range m {
		cp := *c
		cp.Conditions = slices.Clone(c.Conditions)
		cp.Operations = slices.Clone(c.Operations)
		out[id] = &cp
	}
	return out
}
