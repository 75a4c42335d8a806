package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// TriggerSpec declares a trigger under a host, with the field names and
// enumeration values of Zabbix 6.0's YAML export: name is the API's
// description, description the API's comments. Numbers are accepted
// where Zabbix has names ("4" for HIGH).
type TriggerSpec struct {
	Name               string `yaml:"name"`       // required
	Expression         string `yaml:"expression"` // required
	RecoveryMode       string `yaml:"recovery_mode"`
	RecoveryExpression string `yaml:"recovery_expression"`
	// Priority: NOT_CLASSIFIED (default), INFO, WARNING, AVERAGE, HIGH,
	// DISASTER.
	Priority        string           `yaml:"priority"`
	Status          string           `yaml:"status"`       // ENABLED (default) or DISABLED
	Type            string           `yaml:"type"`         // SINGLE (default) or MULTIPLE
	ManualClose     string           `yaml:"manual_close"` // NO (default) or YES
	Opdata          string           `yaml:"opdata"`
	Description     string           `yaml:"description"`
	URL             string           `yaml:"url"`
	CorrelationMode string           `yaml:"correlation_mode"` // DISABLED (default) or TAG_VALUE
	CorrelationTag  string           `yaml:"correlation_tag"`
	Tags            []TagSpec        `yaml:"tags"`
	Dependencies    []TriggerRefSpec `yaml:"dependencies"`
	// MaxCheckAttempts is Peregrine's soft/hard option (default 1; see
	// Trigger.MaxCheckAttempts).
	MaxCheckAttempts int `yaml:"max_check_attempts"`
	// EventName names the trigger's events instead of Name when set.
	EventName string `yaml:"event_name"`
	// UUID is a template trigger's uuid in Zabbix exports (kept for a
	// template's triggers; a host's have none).
	UUID string `yaml:"uuid"`
}

// TagSpec is a tag in the import format.
type TagSpec struct {
	Tag   string `yaml:"tag"`
	Value string `yaml:"value"`
}

// TriggerRefSpec names another trigger, as Zabbix's export does for
// dependencies: by name and expression.
type TriggerRefSpec struct {
	Name               string `yaml:"name"`
	Expression         string `yaml:"expression"`
	RecoveryExpression string `yaml:"recovery_expression"`
}

// specTrigger is a validated TriggerSpec.
type specTrigger struct {
	field string // "hosts[0].triggers[1]"
	f     TriggerFields
	deps  []TriggerRefSpec
}

var (
	priorityNames = []string{"NOT_CLASSIFIED", "INFO", "WARNING", "AVERAGE", "HIGH", "DISASTER"}
	recoveryNames = []string{"EXPRESSION", "RECOVERY_EXPRESSION", "NONE"}
)

// enumValue parses a Zabbix export enumeration: a name of names (its
// index) or the number; "" is def.
func enumValue(s string, names []string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	if i := slices.Index(names, s); i >= 0 {
		return i, nil
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 0 && n < len(names) {
		return n, nil
	}
	return 0, fmt.Errorf("%q is not one of %s (or 0..%d)", s, strings.Join(names, ", "), len(names)-1)
}

// triggerSpecs validates the triggers of s's hosts.
func (s Spec) triggerSpecs() ([]specTrigger, error) {
	var el errList
	var out []specTrigger
	for hi := range s.Hosts {
		for ti := range s.Hosts[hi].Triggers {
			p := "hosts[" + strconv.Itoa(hi) + "].triggers[" + strconv.Itoa(ti) + "]"
			out = append(out, triggerSpec(&s.Hosts[hi].Triggers[ti], p, &el))
		}
	}
	return out, el.err()
}

// triggerSpec validates one trigger of the import, reporting to el
// under p.
func triggerSpec(ts *TriggerSpec, p string, el *errList) specTrigger {
	st := specTrigger{field: p, deps: ts.Dependencies}
	f := &st.f
	f.Description, f.Expression, f.RecoveryExpression, f.EventName = ts.Name, ts.Expression, ts.RecoveryExpression, ts.EventName
	f.Opdata, f.Comments, f.URL, f.CorrelationTag, f.UUID = ts.Opdata, ts.Description, ts.URL, ts.CorrelationTag, ts.UUID
	enum := func(field, v string, names []string) int {
		n, err := enumValue(v, names, 0)
		if err != nil {
			el.add(p+"."+field, err)
		}
		return n
	}
	f.Priority = uint8(enum("priority", ts.Priority, priorityNames))
	f.RecoveryMode = RecoveryMode(enum("recovery_mode", ts.RecoveryMode, recoveryNames))
	f.Enabled = enum("status", ts.Status, []string{"ENABLED", "DISABLED"}) == 0
	f.Multiple = enum("type", ts.Type, []string{"SINGLE", "MULTIPLE"}) == 1
	f.ManualClose = enum("manual_close", ts.ManualClose, []string{"NO", "YES"}) == 1
	f.CorrelationMode = uint8(enum("correlation_mode", ts.CorrelationMode, []string{"DISABLED", "TAG_VALUE"}))
	for _, t := range ts.Tags {
		f.Tags = append(f.Tags, Tag(t))
	}
	if ts.Name == "" {
		el.addf(p+".name", "is required")
	}
	if ts.Expression == "" {
		el.addf(p+".expression", "is required")
	}
	if ts.MaxCheckAttempts < 0 || ts.MaxCheckAttempts > maxCheckAttempts {
		el.addf(p+".max_check_attempts", "must be between 1 and %d, not %d", maxCheckAttempts, ts.MaxCheckAttempts)
	} else {
		f.MaxCheckAttempts = uint8(ts.MaxCheckAttempts)
	}
	for di, d := range ts.Dependencies {
		if d.Name == "" || d.Expression == "" {
			el.addf(p+".dependencies["+strconv.Itoa(di)+"]", "needs the name and expression of the trigger depended on")
		}
	}
	return st
}

// applyTriggers creates or updates the spec's triggers in e. A trigger
// is the same as an existing one with the same name and expression, as
// Zabbix's import matches them; Apply never deletes triggers.
// Dependencies are set in a second pass so that a trigger may depend on
// one declared after it.
func (e *Edit) applyTriggers(specs []specTrigger) (created, updated int, err error) {
	type key struct{ name, expr string }
	existing := map[key]uint64{}
	for _, part := range []*Snapshot{e.old, e.old.part()} {
		for i := range part.triggers {
			if t := e.trigger(part.triggers[i].ID); t != nil {
				existing[key{t.Description, t.Expression}] = t.ID
			}
		}
	}
	for _, id := range e.newTriggers {
		if t := e.trigger(id); t != nil {
			existing[key{t.Description, t.Expression}] = id
		}
	}
	ids := make([]uint64, len(specs))
	var creates []TriggerFields
	var createAt []int
	var updates []TriggerUpdate
	for i := range specs {
		f := specs[i].f
		if id, ok := existing[key{f.Description, f.Expression}]; ok {
			ids[i] = id
			cur := e.trigger(id)
			f.Dependencies = cur.Dependencies // set below
			if sameTriggerFields(fieldsOf(cur), f) {
				continue
			}
			u := TriggerUpdate{ID: id}
			u.Description, u.Expression, u.RecoveryMode, u.RecoveryExpression = &f.Description, &f.Expression, &f.RecoveryMode, &f.RecoveryExpression
			u.Priority, u.Enabled, u.Multiple, u.ManualClose = &f.Priority, &f.Enabled, &f.Multiple, &f.ManualClose
			u.Opdata, u.Comments, u.URL, u.CorrelationMode, u.CorrelationTag, u.Tags = &f.Opdata, &f.Comments, &f.URL, &f.CorrelationMode, &f.CorrelationTag, &f.Tags
			u.EventName, u.MaxCheckAttempts = &f.EventName, &f.MaxCheckAttempts
			updates = append(updates, u)
			continue
		}
		f.Dependencies = nil
		creates = append(creates, f)
		createAt = append(createAt, i)
	}
	if len(creates) > 0 {
		newIDs, err := e.CreateTriggers(creates)
		if err != nil {
			return 0, 0, renameTriggerErr(err, specs, createAt)
		}
		for j, id := range newIDs {
			ids[createAt[j]] = id
			existing[key{creates[j].Description, creates[j].Expression}] = id
		}
	}
	if len(updates) > 0 {
		if err := e.UpdateTriggers(updates); err != nil {
			return 0, 0, err
		}
	}
	var deps []TriggerUpdate
	var el errList
	for i := range specs {
		want := make([]uint64, 0, len(specs[i].deps))
		for di, d := range specs[i].deps {
			id, ok := existing[key{d.Name, d.Expression}]
			if !ok {
				el.addf(specs[i].field+".dependencies["+strconv.Itoa(di)+"]", "no trigger %q with expression %q", d.Name, d.Expression)
				continue
			}
			want = append(want, id)
		}
		slices.Sort(want)
		if cur := e.trigger(ids[i]); cur != nil && !slices.Equal(cur.Dependencies, want) {
			deps = append(deps, TriggerUpdate{ID: ids[i], Dependencies: &want})
		}
	}
	if err := el.err(); err != nil {
		return 0, 0, err
	}
	if len(deps) > 0 {
		if err := e.UpdateTriggers(deps); err != nil {
			return 0, 0, err
		}
	}
	return len(creates), len(updates), nil
}

// renameTriggerErr is err with the batch's field paths
// ("triggers[3].expression") replaced by the spec's
// ("hosts[0].triggers[5].expression").
func renameTriggerErr(err error, specs []specTrigger, at []int) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, renameTriggerErr(e, specs, at))
		}
		return errors.Join(out...)
	}
	fe, ok := err.(*FieldError)
	if !ok {
		return err
	}
	rest, found := strings.CutPrefix(fe.Field, "triggers[")
	n, tail, _ := strings.Cut(rest, "]")
	i, perr := strconv.Atoi(n)
	if !found || perr != nil || i < 0 || i >= len(at) {
		return err
	}
	return &FieldError{Field: specs[at[i]].field + tail, Err: fe.Err}
}

func sameTriggerFields(a, b TriggerFields) bool {
	return a.Description == b.Description && a.Expression == b.Expression && a.RecoveryMode == b.RecoveryMode &&
		a.RecoveryExpression == b.RecoveryExpression && a.Priority == b.Priority && a.Enabled == b.Enabled &&
		a.Multiple == b.Multiple && a.ManualClose == b.ManualClose && a.Opdata == b.Opdata && a.EventName == b.EventName &&
		a.Comments == b.Comments && a.URL == b.URL && a.CorrelationMode == b.CorrelationMode &&
		a.CorrelationTag == b.CorrelationTag && slices.Equal(a.Tags, b.Tags) && slices.Equal(a.Dependencies, b.Dependencies) &&
		max(a.MaxCheckAttempts, 1) == max(b.MaxCheckAttempts, 1)
}

// applyTriggerSpecs runs applyTriggers in its own Edit; c.mu is held.
func (c *Catalog) applyTriggerSpecs(ctx context.Context, specs []specTrigger) (created, updated int, err error) {
	_, err = c.editLocked(ctx, func(e *Edit) error {
		var err error
		created, updated, err = e.applyTriggers(specs)
		return err
	})
	return created, updated, err
}
