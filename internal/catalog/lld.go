package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Low-level discovery, as Zabbix 6.0 keeps it (recorded from 6.0.14):
//
//   - A discovery rule is an item with flags 1: a row of items with its
//     rule's configuration beside it (Item.LLD, table item_lld). It is
//     polled, pushed and preprocessed like any item of its type; its
//     value (LLD JSON) is what package lld turns into items and
//     triggers. It shares its host's key namespace with the items, as
//     in Zabbix. Its value type is text and it keeps no history
//     ("0"): the value passes through the history store for
//     durability only.
//   - Its prototypes (item prototypes, flags 2; trigger prototypes;
//     host prototypes) are part of the rule's configuration, each with
//     an ID from the items' sequence (so that an item prototype's ID is
//     never an item's) and, on copies, the template prototype it was
//     copied from (TemplateID). They are never polled: nothing but the
//     LLD engine and the API reads them.
//   - A discovered item (flags 4) is an ordinary item with
//     Item.Discovery set (table item_discovery): the rule and prototype
//     it came from and, once the rule stopped discovering it, when it
//     is deleted (TSDelete, Zabbix's ts_delete). Discovered triggers
//     carry the same (Trigger.Discovery, table trigger_discovery).
//   - Deleting a rule deletes its discovered items (and with them their
//     triggers); linking a template copies its rules with their
//     prototypes as its items are copied.

// Item flags, Zabbix's items.flags.
const (
	FlagNormal     = 0
	FlagRule       = 1
	FlagPrototype  = 2
	FlagDiscovered = 4
)

// Flags returns the item's Zabbix flags: 1 for a discovery rule, 4 for
// a discovered item, 0 otherwise (prototypes are not Items).
func (a *Item) Flags() int {
	switch {
	case a.Ext().LLD != nil:
		return FlagRule
	case a.Discovery != nil:
		return FlagDiscovered
	}
	return FlagNormal
}

// LLDRule is a discovery rule's own configuration (Zabbix 6.0's
// discoveryrule fields beyond the item's, with its prototypes). It
// belongs to its snapshot and MUST NOT be modified.
type LLDRule struct {
	// Lifetime is how long an item no longer discovered is kept
	// (Zabbix's lifetime: "30d" by default, "0" deletes at once; a
	// user macro is allowed).
	Lifetime   string         `json:"lifetime"`
	Filter     LLDFilter      `json:"filter"`
	MacroPaths []LLDMacroPath `json:"lld_macro_paths,omitempty"`
	Overrides  []LLDOverride  `json:"overrides,omitempty"`

	ItemPrototypes    []ItemPrototype    `json:"item_prototypes,omitempty"`
	TriggerPrototypes []TriggerPrototype `json:"trigger_prototypes,omitempty"`
	HostPrototypes    []HostPrototype    `json:"host_prototypes,omitempty"`
	GraphPrototypes   []GraphPrototype   `json:"graph_prototypes,omitempty"` // graph_proto.go
}

// LLDFilter is a rule's or override's filter: Zabbix's evaltype (0
// and/or, 1 and, 2 or, 3 custom formula over the conditions'
// formulaids) and conditions.
type LLDFilter struct {
	EvalType   int            `json:"evaltype"`
	Formula    string         `json:"formula,omitempty"`
	Conditions []LLDCondition `json:"conditions,omitempty"`
}

// Filter evaluation types (Zabbix's evaltype).
const (
	EvalAndOr  = 0
	EvalAnd    = 1
	EvalOr     = 2
	EvalCustom = 3
)

// Condition operators (Zabbix's operator of LLD filter conditions).
const (
	OpMatches    = 8
	OpNotMatches = 9
	OpExists     = 12
	OpNotExists  = 13
)

// LLDCondition is one filter condition: an LLD macro, an operator and a
// regular expression (or "@name" of a global one).
type LLDCondition struct {
	Macro     string `json:"macro"`
	Value     string `json:"value,omitempty"`
	Operator  int    `json:"operator"`
	FormulaID string `json:"formulaid"`
}

// LLDMacroPath maps an LLD macro to a JSONPath into each discovered
// row (Zabbix's lld_macro_paths).
type LLDMacroPath struct {
	Macro string `json:"lld_macro"`
	Path  string `json:"path"`
}

// LLDOverride is one of a rule's overrides (6.0 semantics): applied in
// Step order to the rows its filter matches; Stop 1 ends the list for a
// row it matched.
type LLDOverride struct {
	Name       string         `json:"name"`
	Step       int            `json:"step"`
	Stop       int            `json:"stop"`
	Filter     LLDFilter      `json:"filter"`
	Operations []LLDOperation `json:"operations,omitempty"`
}

// Override operation objects (Zabbix's operationobject).
const (
	OpObjectItem    = 0
	OpObjectTrigger = 1
	OpObjectGraph   = 2
	OpObjectHost    = 3
)

// Override operation conditions on the prototype's name (Zabbix's
// operator): equals, does not equal, contains, does not contain,
// matches, does not match.
const (
	OpCondEquals      = 0
	OpCondNotEquals   = 1
	OpCondContains    = 2
	OpCondNotContains = 3
	OpCondMatches     = 8
	OpCondNotMatches  = 9
)

// LLDOperation is one operation of an override: which prototypes
// (Object, and Operator/Value on their name or key) and what it sets.
// Unset (nil) members leave the prototype's.
type LLDOperation struct {
	Object   int     `json:"operationobject"`
	Operator int     `json:"operator"`
	Value    string  `json:"value,omitempty"`
	Status   *int    `json:"opstatus,omitempty"`   // 0 create enabled, 1 create disabled
	Discover *int    `json:"opdiscover,omitempty"` // 0 discover, 1 do not
	Delay    *string `json:"opperiod,omitempty"`
	History  *string `json:"ophistory,omitempty"`
	Trends   *string `json:"optrends,omitempty"`
	Severity *int    `json:"opseverity,omitempty"`
	Tags     []Tag   `json:"optag,omitempty"`
	// Templates and Inventory are host prototypes' (Inventory stored,
	// not applied: Peregrine keeps no host inventory).
	Templates []string `json:"optemplate,omitempty"`
	Inventory *int     `json:"opinventory,omitempty"`
}

// ItemPrototype is an item prototype (flags 2): an item in the import
// format's form whose strings may hold LLD macros, expanded per
// discovered row.
type ItemPrototype struct {
	ID         uint64   `json:"itemid"`
	TemplateID uint64   `json:"templateid,omitempty"`
	UUID       string   `json:"uuid,omitempty"`
	Item       ItemSpec `json:"item"`
	// MasterKey is a dependent prototype's master: another prototype's
	// key or an item's of the rule's host.
	MasterKey string `json:"master_key,omitempty"`
	// ValueMap names a value map of the rule's host.
	ValueMap string `json:"valuemap,omitempty"`
	// Discover 1 makes the prototype create nothing (Zabbix's discover
	// "no discover").
	Discover int `json:"discover,omitempty"`
}

// TriggerPrototype is a trigger prototype: a trigger whose strings may
// hold LLD macros, over item prototypes of the rule (and items of its
// host).
type TriggerPrototype struct {
	ID           uint64           `json:"triggerid"`
	TemplateID   uint64           `json:"templateid,omitempty"`
	Fields       TriggerFields    `json:"fields"`
	Dependencies []TriggerRefSpec `json:"dependencies,omitempty"`
	Discover     int              `json:"discover,omitempty"`
}

// HostPrototype is a host prototype, stored and inherited; a host's
// rule makes hosts of it (lld_hosts.go). Config is what older versions
// kept of an import's host prototype (its export form), no longer
// written.
type HostPrototype struct {
	ID         uint64          `json:"hostid"`
	TemplateID uint64          `json:"templateid,omitempty"`
	UUID       string          `json:"uuid,omitempty"`
	Host       string          `json:"host"`
	Name       string          `json:"name"`
	Status     int             `json:"status"`
	Discover   int             `json:"discover,omitempty"`
	Config     json.RawMessage `json:"config,omitempty"` // the rest, as imported

	// GroupLinks are the host groups every discovered host joins (IDs);
	// GroupPrototypes group names with LLD macros, made per host.
	GroupLinks      []uint64 `json:"group_links,omitempty"`
	GroupPrototypes []string `json:"group_prototypes,omitempty"`
	// Templates are the templates linked to discovered hosts (IDs).
	Templates []uint64 `json:"templates,omitempty"`
	// GroupLinkNames and TemplateNames are an import's group links and
	// templates, by name (resolved when a host is discovered).
	GroupLinkNames []string         `json:"group_link_names,omitempty"`
	TemplateNames  []string         `json:"template_names,omitempty"`
	Macros         []HostProtoMacro `json:"macros,omitempty"`
	Tags           []Tag            `json:"tags,omitempty"`
	// InventoryMode is Zabbix's: nil for -1 disabled (the default), 0
	// manual, 1 automatic.
	InventoryMode *int `json:"inventory_mode,omitempty"`
	// CustomInterfaces 1: Interfaces are the discovered host's; 0: it
	// takes its parent host's.
	CustomInterfaces int                  `json:"custom_interfaces,omitempty"`
	Interfaces       []HostProtoInterface `json:"interfaces,omitempty"`
}

// HostProtoMacro is a host prototype's user macro (type 0 text, 1
// secret, 2 vault).
type HostProtoMacro struct {
	Macro       string `json:"macro"`
	Value       string `json:"value"`
	Type        int    `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
}

// HostProtoInterface is a custom interface of a host prototype; its
// strings may hold LLD macros. Details are an SNMP interface's, as the
// API gives them.
type HostProtoInterface struct {
	Type    int               `json:"type"`
	Main    int               `json:"main"`
	UseIP   int               `json:"useip"`
	IP      string            `json:"ip,omitempty"`
	DNS     string            `json:"dns,omitempty"`
	Port    string            `json:"port"`
	Details map[string]string `json:"details,omitempty"`
}

// Discovery links a discovered item or trigger to what made it: the
// rule, the prototype, and when it goes (TSDelete, Unix seconds, 0
// while it is discovered).
type Discovery struct {
	RuleID   uint64 `json:"ruleid"`
	ProtoID  uint64 `json:"parent"`
	TSDelete int64  `json:"ts_delete,omitempty"`
}

// DefaultLifetime is Zabbix's default lifetime of lost resources.
const DefaultLifetime = "30d"

// lldSchema (schema version 28) holds discovery rules' configuration
// (one row per rule item, its LLDRule as JSON, prototypes included) and
// which items and triggers were discovered by what. Self-contained, so
// that a schema change made in parallel renumbers it by moving one line.
const lldSchema = `
CREATE TABLE IF NOT EXISTS item_lld (
	item_id INTEGER PRIMARY KEY,
	config  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS item_discovery (
	item_id   INTEGER PRIMARY KEY,
	rule_id   INTEGER NOT NULL,
	proto_id  INTEGER NOT NULL,
	ts_delete INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS item_discovery_rule ON item_discovery (rule_id);
CREATE TABLE IF NOT EXISTS trigger_discovery (
	trigger_id INTEGER PRIMARY KEY,
	rule_id    INTEGER NOT NULL,
	proto_id   INTEGER NOT NULL,
	ts_delete  INTEGER NOT NULL DEFAULT 0
);
`

// migrateLLD is the migration to the version with low-level discovery.
// An older database has no rules.
func migrateLLD() string { return lldSchema }

func encodeLLD(r *LLDRule) string {
	b, err := json.Marshal(r)
	if err != nil {
		panic("BUG: LLDRule does not marshal: " + err.Error())
	}
	return string(b)
}

// loadLLD attaches rules' configurations and discovered items' links to
// their items.
func loadLLD(ctx context.Context, tx *sql.Tx, items []Item) error {
	byID := make(map[uint64]int, len(items))
	for i := range items {
		byID[items[i].ID] = i
	}
	in := newInterner()
	err := queryEach(ctx, tx, "SELECT item_id, config FROM item_lld", func(r *sql.Rows) error {
		var id uint64
		var config string
		if err := r.Scan(&id, &config); err != nil {
			return err
		}
		i, ok := byID[id]
		if !ok {
			return fmt.Errorf("%w: discovery rule configuration of unknown item %d", ErrCorrupt, id)
		}
		var l LLDRule
		if err := json.Unmarshal([]byte(config), &l); err != nil {
			return fmt.Errorf("%w: discovery rule %d: %v", ErrCorrupt, id, err)
		}
		compact(&l, in.text) // every host's copy of a template's rule: its texts held once
		items[i].MutExt().LLD = &l
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot load discovery rules: %w", err)
	}
	err = queryEach(ctx, tx, "SELECT item_id, rule_id, proto_id, ts_delete FROM item_discovery", func(r *sql.Rows) error {
		var d Discovery
		var id uint64
		if err := r.Scan(&id, &d.RuleID, &d.ProtoID, &d.TSDelete); err != nil {
			return err
		}
		i, ok := byID[id]
		if !ok {
			return fmt.Errorf("%w: discovery of unknown item %d", ErrCorrupt, id)
		}
		items[i].Discovery = &d
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot load discovered items: %w", err)
	}
	return nil
}

// loadTriggerDiscovery attaches discovered triggers' links.
func loadTriggerDiscovery(ctx context.Context, tx *sql.Tx, trigs []Trigger) error {
	byID := make(map[uint64]int, len(trigs))
	for i := range trigs {
		byID[trigs[i].ID] = i
	}
	err := queryEach(ctx, tx, "SELECT trigger_id, rule_id, proto_id, ts_delete FROM trigger_discovery", func(r *sql.Rows) error {
		var d Discovery
		var id uint64
		if err := r.Scan(&id, &d.RuleID, &d.ProtoID, &d.TSDelete); err != nil {
			return err
		}
		i, ok := byID[id]
		if !ok {
			return fmt.Errorf("%w: discovery of unknown trigger %d", ErrCorrupt, id)
		}
		trigs[i].Discovery = &d
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot load discovered triggers: %w", err)
	}
	return nil
}

func (a *LLDRule) equal(b *LLDRule) bool {
	if a == nil || b == nil {
		return a == b
	}
	return encodeLLD(a) == encodeLLD(b)
}

func (a *Discovery) equal(b *Discovery) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// ItemPrototype returns the item prototype with the ID and its rule, or
// nils. It walks the rules of hosts and templates (the API's lookups,
// not a hot path).
func (s *Snapshot) ItemPrototype(id uint64) (*ItemPrototype, *Item) {
	for _, r := range s.Rules() {
		for i := range r.Ext().LLD.ItemPrototypes {
			if r.Ext().LLD.ItemPrototypes[i].ID == id {
				return &r.Ext().LLD.ItemPrototypes[i], r
			}
		}
	}
	return nil, nil
}

// Rules returns every discovery rule of hosts and templates, in no
// particular order; shared and read-only.
func (s *Snapshot) Rules() []*Item {
	var out []*Item
	for _, part := range []*Snapshot{s, s.part()} {
		for it := range part.allItems {
			if it.Ext().LLD != nil {
				out = append(out, it)
			}
		}
	}
	return out
}

// PrototypeItem returns an item prototype of rule as an Item of the
// rule's host, for the API's views: the prototype's ID, TemplateID and
// UUID, its master resolved (another prototype of the rule or an item
// of the host). Fields that do not check as an item's (an LLD macro
// where a number is wanted) leave the Item with its key, name and
// type only.
func PrototypeItem(rule *Item, p *ItemPrototype) Item {
	var el errList
	// Fields holding LLD or user macros are checked once expanded, on
	// the discovered item: stand-ins pass the check, the prototype's
	// text is put back.
	is := p.Item
	is.Delay = macroFree(is.Delay, "1m")
	is.History = macroFree(is.History, "")
	is.Trends = macroFree(is.Trends, "")
	is.SNMPOID = macroFree(is.SNMPOID, "1.3.6.1")
	it, ok := normItem(&is, "item", &el, nil, p.MasterKey != "")
	if ok {
		for _, f := range []struct {
			dst      *string
			src, std string
		}{
			{&it.Delay, p.Item.Delay, is.Delay}, {&it.History, p.Item.History, is.History},
			{&it.Trends, p.Item.Trends, is.Trends}, {&it.MutExt().SNMPOID, p.Item.SNMPOID, is.SNMPOID},
		} {
			if f.src != f.std {
				*f.dst = f.src
			}
		}
	}
	if !ok {
		it = Item{Key: p.Item.Key, Name: p.Item.Name, Delay: p.Item.Delay, History: p.Item.History, Trends: p.Item.Trends}
	}
	it.ID, it.TemplateID, it.MutExt().UUID = p.ID, p.TemplateID, p.UUID
	it.HostID, it.Host = rule.HostID, rule.Host
	if !ok {
		it.Enabled, _ = parseStatus(p.Item.Status)
	}
	if p.MasterKey != "" {
		for i := range rule.Ext().LLD.ItemPrototypes {
			if q := &rule.Ext().LLD.ItemPrototypes[i]; q.Item.Key == p.MasterKey {
				it.MasterItemID = q.ID
			}
		}
		if it.MasterItemID == 0 && rule.Host != nil {
			for _, m := range rule.Host.Items() {
				if m.Key == p.MasterKey {
					it.MasterItemID = m.ID
				}
			}
		}
	}
	return it
}
