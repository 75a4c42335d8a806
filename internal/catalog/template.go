package catalog

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
)

// templateSchema makes templates what they are in Zabbix 6.0 (schema
// version 25): rows of hosts with status 3, sharing the hosts' ID
// sequence, whose items, triggers and value maps are ordinary rows with
// the template as their host. It is self-contained, so that a schema
// change made in parallel renumbers it by moving one line of migrations.
//
//   - items.template_id and triggers.template_id are Zabbix's templateid:
//     the template's item or trigger a copy was made from (0: the
//     owner's own). The partial indexes serve propagation, unlink and
//     clear, which look copies up by their template's item; hosts' own
//     items, the million of them, are not in them.
//   - items.inventory_link is Zabbix's item field of the name (0-70),
//     which the official templates set: stored and shown (inventory.go).
//   - uuid columns: Zabbix 6.0 gives templates and their own items,
//     triggers and value maps a uuid, which exports match them by;
//     copies and hosts' objects have "".
//   - The templates of version 10 to 24 (IDs above 2^40, in their own
//     table) move into hosts with IDs from the hosts' sequence, in their
//     order, each with a new version 4 uuid, and their macros and links
//     follow them. A template whose
//     technical name a host also had (version 24 allowed it, Zabbix
//     never did) gets " template" appended: the names of hosts and
//     templates are one namespace now.
//
// Existing items, triggers and value maps are nobody's copies.
const templateSchema = `
ALTER TABLE hosts ADD COLUMN uuid TEXT NOT NULL DEFAULT '';
ALTER TABLE items ADD COLUMN template_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE items ADD COLUMN uuid TEXT NOT NULL DEFAULT '';
ALTER TABLE triggers ADD COLUMN template_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE triggers ADD COLUMN uuid TEXT NOT NULL DEFAULT '';
ALTER TABLE valuemaps ADD COLUMN uuid TEXT NOT NULL DEFAULT '';
ALTER TABLE items ADD COLUMN inventory_link INTEGER NOT NULL DEFAULT 0;
CREATE INDEX items_template ON items (template_id) WHERE template_id != 0;
CREATE INDEX triggers_template ON triggers (template_id) WHERE template_id != 0;
CREATE TEMP TABLE template_moves AS
	SELECT id AS old,
		CASE WHEN EXISTS (SELECT 1 FROM hosts h WHERE h.host = t.host) THEN t.host || ' template' ELSE t.host END AS host,
		name,
		max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'hosts'), 0), coalesce((SELECT max(id) FROM hosts), 0), 10083)
			+ row_number() OVER (ORDER BY id) AS new,
		hex(randomblob(16)) AS h
	FROM templates t;
INSERT INTO hosts (id, host, name, status, uuid)
	SELECT new, host, name, 3, lower(substr(h, 1, 12) || '4' || substr(h, 14, 3) || substr('89AB', abs(random()) % 4 + 1, 1) || substr(h, 18, 15))
	FROM template_moves ORDER BY new;
DELETE FROM sqlite_sequence WHERE name = 'hosts' AND seq = 0;
UPDATE usermacros SET owner_id = (SELECT new FROM template_moves WHERE old = owner_id)
	WHERE owner_id IN (SELECT old FROM template_moves);
UPDATE template_links SET template_id = (SELECT new FROM template_moves WHERE old = template_id);
UPDATE template_links SET owner_id = (SELECT new FROM template_moves WHERE old = owner_id)
	WHERE owner_id IN (SELECT old FROM template_moves);
DROP TABLE template_moves;
DROP TABLE templates;
DELETE FROM sqlite_sequence WHERE name = 'templates';
`

// statusTemplate is a template's status in the hosts table, Zabbix's
// HOST_STATUS_TEMPLATE.
const statusTemplate = 3

// NewUUID returns a random uuid in Zabbix 6.0's form: 32 lower-case
// hexadecimal digits of a version 4 UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on Linux
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[:])
}

// emptyPart is the template part of a snapshot without templates.
var emptyPart = func() *Snapshot {
	s, err := buildSnapshot(0, nil, nil, itemSource{})
	if err != nil {
		panic("BUG: cannot build an empty snapshot: " + err.Error())
	}
	return s
}()

// part returns the template part: a Snapshot of its own whose hosts are
// the templates, whose items and triggers are theirs. Only its hosts,
// items and triggers are used; groups, macros and value maps are the
// main snapshot's.
func (s *Snapshot) part() *Snapshot {
	if s.tmpl == nil {
		return emptyPart
	}
	return s.tmpl
}

// Templates returns the templates sorted by technical name. The slice is
// freshly allocated; the templates are shared and read-only. A
// template's Items are its items, as a host's are.
func (s *Snapshot) Templates() []*Host { return s.part().Hosts() }

// TemplateCount returns the number of templates.
func (s *Snapshot) TemplateCount() int { return len(s.part().hosts) }

// Template returns the template with the ID, or nil (a host's ID gives
// nil).
func (s *Snapshot) Template(id uint64) *Host { return s.part().hostByID.get(id) }

// TemplateByName returns the template with the technical name, or nil.
func (s *Snapshot) TemplateByName(name string) *Host { return s.part().hostByName.get(name) }

// HostOrTemplate returns the host or template with the ID, or nil: the
// Zabbix API names both in one "hostids".
func (s *Snapshot) HostOrTemplate(id uint64) *Host {
	if h := s.hostByID.get(id); h != nil {
		return h
	}
	return s.part().hostByID.get(id)
}

// TemplateItem returns the template item with the ID, or nil (a host's
// item gives nil).
func (s *Snapshot) TemplateItem(id uint64) *Item { return s.part().Item(id) }

// AnyItem returns the item of a host or template with the ID, or nil.
func (s *Snapshot) AnyItem(id uint64) *Item {
	if it := s.Item(id); it != nil {
		return it
	}
	return s.part().Item(id)
}

// TemplateItemCount returns the number of templates' items.
func (s *Snapshot) TemplateItemCount() int { return s.part().nItems }

// TemplateTriggers returns the templates' triggers ascending by ID;
// shared and read-only. Triggers (hosts' triggers, the ones evaluated)
// never holds them.
func (s *Snapshot) TemplateTriggers() []Trigger { return s.part().triggers }

// TemplateTrigger returns the template trigger with the ID, or nil.
func (s *Snapshot) TemplateTrigger(id uint64) *Trigger { return s.part().Trigger(id) }

// TemplateTriggersOfItem returns the triggers referencing a template's
// item; shared and read-only.
func (s *Snapshot) TemplateTriggersOfItem(itemID uint64) []*Trigger {
	return s.part().trigByItem[itemID]
}

// AnyTrigger returns the trigger of a host or template with the ID, or
// nil.
func (s *Snapshot) AnyTrigger(id uint64) *Trigger {
	if t := s.Trigger(id); t != nil {
		return t
	}
	return s.part().Trigger(id)
}

// Copies returns the items copied from the item with the ID (of a
// template): on hosts and on templates linking its template, one level
// down (a copy on a template has copies of its own). Shared and
// read-only; nil for none.
func (s *Snapshot) Copies(itemID uint64) []*Item {
	if s.part().Item(itemID) == nil {
		return nil // only templates' items have copies: no index to build
	}
	out := s.copies(itemID)
	if t := s.part().copies(itemID); len(t) > 0 {
		if len(out) == 0 {
			return t
		}
		out = append(slices.Clip(out), t...)
	}
	return out
}

// TriggerCopies returns the IDs of the triggers copied from the trigger
// with the ID, one level down, ascending.
func (s *Snapshot) TriggerCopies(trigID uint64) []uint64 {
	out := slices.Clone(s.trigInherited[trigID])
	out = append(out, s.part().trigInherited[trigID]...)
	slices.Sort(out)
	return out
}

// LinkedTo returns the hosts and templates that link the template with
// the ID directly, ascending.
func (s *Snapshot) LinkedTo(tmplID uint64) []uint64 {
	return s.macroSet().linkedTo[tmplID]
}

// splitParts splits hosts and items loaded together into the hosts'
// and the templates' parts.
func splitParts(hosts []Host, items []Item) (hs []Host, ts []Host, hitems []Item, titems []Item) {
	tmpl := map[uint64]bool{}
	for i := range hosts {
		if hosts[i].IsTemplate {
			ts = append(ts, hosts[i])
			tmpl[hosts[i].ID] = true
		} else {
			hs = append(hs, hosts[i])
		}
	}
	if len(tmpl) == 0 {
		return hs, nil, items, nil
	}
	hitems = items[:0:0]
	for i := range items {
		if tmpl[items[i].HostID] {
			titems = append(titems, items[i])
		} else {
			hitems = append(hitems, items[i])
		}
	}
	return hs, ts, hitems, titems
}

// splitTriggers splits triggers by part: a trigger belongs to the
// templates' when its first item is a template's (a trigger never mixes
// them).
func splitTriggers(trigs []Trigger, isTmplItem func(uint64) bool) (host, tmpl []Trigger) {
	for i := range trigs {
		if len(trigs[i].ItemIDs) > 0 && isTmplItem(trigs[i].ItemIDs[0]) {
			tmpl = append(tmpl, trigs[i])
		} else {
			host = append(host, trigs[i])
		}
	}
	return host, tmpl
}
