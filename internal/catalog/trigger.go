package catalog

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// Trigger is a configured trigger as seen in one Snapshot (Zabbix's
// trigger object). It MUST NOT be modified.
type Trigger struct {
	ID uint64
	// Description is the trigger's name (Zabbix calls the name
	// "description" in the API and "name" in exports); it may contain
	// macros, expanded when an event is made.
	Description string
	// EventName, if set, names the trigger's events instead of
	// Description (Zabbix 6.0's "Event name"), with the same macros.
	EventName string
	// Expression and RecoveryExpression are kept as written, but for
	// host and template renames and item key changes, which rewrite
	// the names in them (edit_retext.go); ItemIDs are the items they
	// reference, resolved when the trigger was stored.
	Expression         string
	RecoveryExpression string
	// The one-byte fields sit together, sharing one word (issue 30:
	// memory per trigger).
	RecoveryMode RecoveryMode
	Priority     uint8 // severity 0 (not classified) .. 5 (disaster)
	Enabled      bool  // Zabbix status 0
	// Multiple is Zabbix's type 1: every PROBLEM evaluation makes a new
	// problem event, not only the change from OK.
	Multiple        bool
	ManualClose     bool
	CorrelationMode uint8 // 0 all problems, 1 problems with the same tag value
	// MaxCheckAttempts is Peregrine's extension for Nagios-style soft
	// and hard states: a problem is raised only after this many
	// consecutive PROBLEM evaluations (1, the default, is Zabbix's
	// behaviour); meanwhile the trigger is in a soft state and its items
	// are re-checked at their retry interval (Item.RetryDelay).
	MaxCheckAttempts uint8
	Opdata           string
	Comments         string
	URL              string
	CorrelationTag   string
	Tags             []Tag
	// Dependencies are the IDs of the triggers this one depends on (its
	// masters), ascending.
	Dependencies []uint64
	// ItemIDs and HostIDs are the items and hosts the expressions
	// reference, ascending and without duplicates.
	ItemIDs []uint64
	HostIDs []uint64
	// TemplateID is the template trigger this one was copied from
	// (Zabbix's templateid), 0 for the owner's own.
	TemplateID uint64
	// UUID is the uuid of a template's own trigger; "" otherwise.
	UUID string
	// Discovery is what made a discovered trigger (lld.go), nil for
	// every other trigger.
	Discovery *Discovery
}

// RecoveryMode is Zabbix's trigger recovery_mode.
type RecoveryMode uint8

// Recovery modes.
const (
	RecoverExpression         RecoveryMode = 0 // OK when the expression is false
	RecoverRecoveryExpression RecoveryMode = 1 // OK when the expression is false and the recovery expression true
	RecoverNone               RecoveryMode = 2 // problems are only closed manually
)

// ItemRef is an item an expression references: /host/key.
type ItemRef struct {
	Host string
	Key  string
}

// RefsFunc parses a trigger expression and returns the items it
// references, or an error saying what is wrong and where. The server
// sets it (Options.ExprRefs) from the expression parser, so that the
// catalog does not depend on the evaluator.
type RefsFunc func(expr string) ([]ItemRef, error)

// ErrNoExprParser is returned for a trigger change when Options.ExprRefs
// is not set.
var ErrNoExprParser = errors.New("triggers cannot be stored: no expression parser is configured (Options.ExprRefs)")

// Trigger returns the trigger with the given ID, or nil.
func (s *Snapshot) Trigger(id uint64) *Trigger {
	if i, ok := s.trigByID[id]; ok {
		return &s.triggers[i]
	}
	return nil
}

// Triggers returns every trigger, ascending by ID. The slice is shared
// and read-only.
func (s *Snapshot) Triggers() []Trigger { return s.triggers }

// TriggersOfItem returns the triggers whose expressions reference the
// item: the triggers to evaluate when a value of it is committed. It does
// not allocate; the slice is shared and read-only.
func (s *Snapshot) TriggersOfItem(itemID uint64) []*Trigger { return s.trigByItem[itemID] }

// shareTriggers gives s old's trigger slab and indexes as they are,
// for an Edit that wrote no trigger and deleted no item: a snapshot is
// immutable, so the two share them, and an item.update or a host
// rename does not cost O(triggers).
func (s *Snapshot) shareTriggers(old *Snapshot) {
	s.triggers, s.trigByID, s.trigByItem, s.trigInherited = old.triggers, old.trigByID, old.trigByItem, old.trigInherited
}

// setTriggers installs trigs (in any order) into s, a snapshot whose
// items are final, as its slab: it takes trigs over (callers pass a slice
// of their own), drops triggers whose items no longer exist and
// references to deleted triggers, sorts the slab by ID and indexes it by
// ID and by item. Host IDs are derived from the items.
//
// A bulk trigger.create into a catalog of a million triggers runs this
// for every call, so it makes no allocation per trigger: the slab is
// compacted in place, host IDs a trigger already has are kept (an item
// never changes host, and a trigger whose expression changed comes
// without them), and the by-item lists are windows of one array.
func (s *Snapshot) setTriggers(trigs []Trigger) {
	trigs = slices.DeleteFunc(trigs, func(t Trigger) bool {
		for _, id := range t.ItemIDs {
			if s.Item(id) == nil {
				return true // deleted with its item; Edit deletes the row too
			}
		}
		return false
	})
	slices.SortFunc(trigs, func(a, b Trigger) int { return cmp.Compare(a.ID, b.ID) }) // linear when sorted, as Edit builds it
	s.triggers = trigs
	s.trigByID = make(map[uint64]int32, len(s.triggers))
	s.trigInherited = nil
	refs := 0
	for i := range s.triggers {
		s.trigByID[s.triggers[i].ID] = int32(i)
		refs += len(s.triggers[i].ItemIDs)
		if tid := s.triggers[i].TemplateID; tid != 0 {
			if s.trigInherited == nil {
				s.trigInherited = map[uint64][]uint64{}
			}
			s.trigInherited[tid] = append(s.trigInherited[tid], s.triggers[i].ID)
		}
	}
	// The by-item index: (item, trigger) pairs sorted by item, then one
	// map entry per item holding a window of one array of pointers.
	type pair struct {
		item uint64
		t    int32
	}
	pairs := make([]pair, 0, refs)
	for i := range s.triggers {
		t := &s.triggers[i]
		if slices.ContainsFunc(t.Dependencies, func(id uint64) bool { _, ok := s.trigByID[id]; return !ok }) {
			t.Dependencies = slices.DeleteFunc(slices.Clone(t.Dependencies), func(id uint64) bool { _, ok := s.trigByID[id]; return !ok })
		}
		if len(t.HostIDs) == 0 {
			hosts := make([]uint64, 0, 1)
			for _, id := range t.ItemIDs {
				if h := s.Item(id).HostID; !slices.Contains(hosts, h) {
					hosts = append(hosts, h)
				}
			}
			slices.Sort(hosts)
			t.HostIDs = hosts
		}
		for _, id := range t.ItemIDs {
			pairs = append(pairs, pair{id, int32(i)})
		}
	}
	// Stable: an item's triggers stay ascending by ID.
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(a.item, b.item) })
	ptrs := make([]*Trigger, len(pairs))
	s.trigByItem = make(map[uint64][]*Trigger)
	for i := 0; i < len(pairs); {
		j := i
		for j < len(pairs) && pairs[j].item == pairs[i].item {
			ptrs[j] = &s.triggers[pairs[j].t]
			j++
		}
		s.trigByItem[pairs[i].item] = ptrs[i:j:j]
		i = j
	}
}

// eventNameSchema adds the triggers' event_name (schema version 14;
// empty: events are named after the trigger).
const eventNameSchema = `
ALTER TABLE triggers ADD COLUMN event_name TEXT NOT NULL DEFAULT '';
`

// triggerSchema holds triggers (schema version 9), Zabbix's trigger
// fields; trigger_items is what the expressions reference (Zabbix's
// functions table, reduced to the item), so that loading needs no
// expression parser; trigger_deps the dependencies (trigger_id depends
// on depends_on). Tags keep their order by rowid, as host tags do.
const triggerSchema = `
CREATE TABLE triggers (
	id                  INTEGER PRIMARY KEY AUTOINCREMENT,
	description         TEXT NOT NULL,
	expression          TEXT NOT NULL,
	recovery_mode       INTEGER NOT NULL,
	recovery_expression TEXT NOT NULL,
	priority            INTEGER NOT NULL,
	status              INTEGER NOT NULL,
	type                INTEGER NOT NULL,
	manual_close        INTEGER NOT NULL,
	opdata              TEXT NOT NULL,
	comments            TEXT NOT NULL,
	url                 TEXT NOT NULL,
	correlation_mode    INTEGER NOT NULL,
	correlation_tag     TEXT NOT NULL
);
CREATE TABLE trigger_items (
	trigger_id INTEGER NOT NULL REFERENCES triggers (id),
	item_id    INTEGER NOT NULL,
	PRIMARY KEY (trigger_id, item_id)
) WITHOUT ROWID;
CREATE INDEX trigger_items_item ON trigger_items (item_id);
CREATE TABLE trigger_deps (
	trigger_id INTEGER NOT NULL REFERENCES triggers (id),
	depends_on INTEGER NOT NULL REFERENCES triggers (id),
	PRIMARY KEY (trigger_id, depends_on)
) WITHOUT ROWID;
CREATE TABLE trigger_tags (
	trigger_id INTEGER NOT NULL REFERENCES triggers (id),
	tag        TEXT NOT NULL,
	value      TEXT NOT NULL
);
CREATE INDEX trigger_tags_trigger ON trigger_tags (trigger_id);
`

// loadTriggers reads the triggers in tx.
func loadTriggers(ctx context.Context, tx *sql.Tx) ([]Trigger, error) {
	var trigs []Trigger
	idx := map[uint64]int{}
	in := newInterner() // texts a template gave every host's copy, held once
	err := queryEach(ctx, tx, "SELECT id, description, expression, recovery_mode, recovery_expression, priority, status, type, manual_close, opdata, comments, url, correlation_mode, correlation_tag, max_check_attempts, event_name, template_id, uuid FROM triggers", func(r *sql.Rows) error {
		var t Trigger
		var rm, prio, st, typ, mc, cm, mca int64
		if err := r.Scan(&t.ID, &t.Description, &t.Expression, &rm, &t.RecoveryExpression, &prio, &st, &typ, &mc, &t.Opdata, &t.Comments, &t.URL, &cm, &t.CorrelationTag, &mca, &t.EventName, &t.TemplateID, &t.UUID); err != nil {
			return err
		}
		if rm < 0 || rm > 2 || prio < 0 || prio > 5 || typ < 0 || typ > 1 || cm < 0 || cm > 1 || mca < 1 || mca > maxCheckAttempts {
			return fmt.Errorf("%w: trigger %d has recovery_mode %d, priority %d, type %d, correlation_mode %d, max_check_attempts %d", ErrCorrupt, t.ID, rm, prio, typ, cm, mca)
		}
		t.MaxCheckAttempts = uint8(mca)
		t.Description, t.EventName, t.Opdata = in.text(t.Description), in.text(t.EventName), in.text(t.Opdata)
		t.Comments, t.URL, t.CorrelationTag = in.text(t.Comments), in.text(t.URL), in.text(t.CorrelationTag)
		t.RecoveryMode, t.Priority, t.Enabled, t.Multiple, t.ManualClose, t.CorrelationMode = RecoveryMode(rm), uint8(prio), st == 0, typ == 1, mc == 1, uint8(cm)
		idx[t.ID] = len(trigs)
		trigs = append(trigs, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load triggers: %w", err)
	}
	each := func(what, q string, fn func(t *Trigger, a uint64, b, c string)) error {
		return queryEach(ctx, tx, q, func(r *sql.Rows) error {
			var tid, a uint64
			var b, c string
			var err error
			if what == "tag" {
				err = r.Scan(&tid, &b, &c)
			} else {
				err = r.Scan(&tid, &a)
			}
			if err != nil {
				return err
			}
			i, ok := idx[tid]
			if !ok {
				return fmt.Errorf("%w: %s of unknown trigger %d", ErrCorrupt, what, tid)
			}
			fn(&trigs[i], a, b, c)
			return nil
		})
	}
	if err := each("item", "SELECT trigger_id, item_id FROM trigger_items ORDER BY trigger_id, item_id", func(t *Trigger, a uint64, _, _ string) {
		t.ItemIDs = append(t.ItemIDs, a)
	}); err != nil {
		return nil, fmt.Errorf("cannot load trigger items: %w", err)
	}
	if err := each("dependency", "SELECT trigger_id, depends_on FROM trigger_deps ORDER BY trigger_id, depends_on", func(t *Trigger, a uint64, _, _ string) {
		t.Dependencies = append(t.Dependencies, a)
	}); err != nil {
		return nil, fmt.Errorf("cannot load trigger dependencies: %w", err)
	}
	if err := each("tag", "SELECT trigger_id, tag, value FROM trigger_tags ORDER BY trigger_id, rowid", func(t *Trigger, _ uint64, b, c string) {
		t.Tags = append(t.Tags, Tag{Tag: in.text(b), Value: in.text(c)})
	}); err != nil {
		return nil, fmt.Errorf("cannot load trigger tags: %w", err)
	}
	for i := range trigs {
		if len(trigs[i].ItemIDs) == 0 {
			return nil, fmt.Errorf("%w: trigger %d references no item", ErrCorrupt, trigs[i].ID)
		}
	}
	return trigs, nil
}

// TriggerIndex returns the position of trigger id in Triggers(), or
// false. Consumers that keep per-trigger state in slices (the trigger
// evaluator) index them by it rather than by a map of IDs.
func (s *Snapshot) TriggerIndex(id uint64) (int, bool) {
	i, ok := s.trigByID[id]
	return int(i), ok
}
