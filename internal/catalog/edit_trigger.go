package catalog

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// TriggerFields is everything configurable about a trigger (see
// Trigger): what Edit.CreateTriggers takes.
type TriggerFields struct {
	Description        string
	EventName          string
	Expression         string
	RecoveryMode       RecoveryMode
	RecoveryExpression string
	Priority           uint8
	Enabled            bool
	Multiple           bool
	ManualClose        bool
	Opdata             string
	Comments           string
	URL                string
	CorrelationMode    uint8
	CorrelationTag     string
	Tags               []Tag
	Dependencies       []uint64
	// MaxCheckAttempts is Peregrine's soft/hard state option (0 means 1).
	MaxCheckAttempts uint8
	// UUID is a template trigger's uuid (an import's); "" makes one up.
	// Hosts' triggers have none.
	UUID string
}

// TriggerUpdate changes the fields of trigger ID that are set; nil
// fields keep their value. The result is validated as a whole.
type TriggerUpdate struct {
	ID                             uint64
	Description, EventName         *string
	Expression                     *string
	RecoveryMode                   *RecoveryMode
	RecoveryExpression             *string
	Priority                       *uint8
	Enabled, Multiple, ManualClose *bool
	Opdata, Comments, URL          *string
	CorrelationMode                *uint8
	CorrelationTag                 *string
	Tags                           *[]Tag
	Dependencies                   *[]uint64
	MaxCheckAttempts               *uint8
}

// Limits from the Zabbix 6.0 database schema.
const (
	maxTriggerDescLen = 255
	maxExpressionLen  = 2048
	maxOpdataLen      = 255
	maxEventNameLen   = 2048
	maxTriggerURLLen  = 255
	maxCommentsLen    = 65535
	// maxDependencyDepth is how deep a chain of masters may be, as in
	// Zabbix (ZBX_TRIGGER_DEPENDENCY_LEVELS_MAX).
	maxDependencyDepth = 32
	// maxCheckAttempts bounds Peregrine's max_check_attempts (Nagios
	// has no bound; a hundred re-checks is past any useful setting).
	maxCheckAttempts = 100
)

func (e *Edit) trigger(id uint64) *Trigger {
	if t, ok := e.triggers[id]; ok {
		return t
	}
	return e.old.AnyTrigger(id)
}

// CreateTriggers creates triggers and returns their IDs in order. A
// trigger's expressions must reference existing items (by host technical
// name and key); the error names the field and, from the parser, the
// position.
func (e *Edit) CreateTriggers(trigs []TriggerFields) ([]uint64, error) {
	if e.err != nil {
		return nil, e.err
	}
	var el errList
	made := make([]Trigger, len(trigs))
	for i := range trigs {
		p := "triggers[" + strconv.Itoa(i) + "]"
		if t, ok := e.normTrigger(&trigs[i], p, &el); ok {
			made[i] = t
			e.checkTriggerUnique(&made[i], made[:i], p, &el)
		}
	}
	if err := el.err(); err != nil {
		return nil, err
	}
	ids := make([]uint64, len(made))
	for i := range made {
		t := &made[i]
		if e.isTemplateTrigger(t) {
			t.UUID = cmp.Or(strings.Clone(trigs[i].UUID), NewUUID())
		}
		if err := e.insertTrigger(t); err != nil {
			return nil, err
		}
		ids[i] = t.ID
	}
	e.res.TriggersCreated += len(made)
	if err := e.inheritCreatedTriggers(made); err != nil {
		return nil, err
	}
	return ids, nil
}

// insertTrigger writes a new trigger (its ID is set) and adds it to the
// overlay.
func (e *Edit) insertTrigger(t *Trigger) error {
	initMap(&e.triggers)
	id, err := e.exec("INSERT INTO triggers (description, expression, recovery_mode, recovery_expression, priority, status, type, manual_close, opdata, comments, url, correlation_mode, correlation_tag, max_check_attempts, event_name, template_id, uuid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		t.Description, t.Expression, int64(t.RecoveryMode), t.RecoveryExpression, int64(t.Priority), status(t.Enabled), b2i(t.Multiple), b2i(t.ManualClose), t.Opdata, t.Comments, t.URL, int64(t.CorrelationMode), t.CorrelationTag, int64(t.MaxCheckAttempts), t.EventName, t.TemplateID, t.UUID)
	if err != nil {
		return e.fail(fmt.Errorf("cannot create trigger %q: %w", t.Description, err))
	}
	t.ID = id
	if err := e.writeTriggerRefs(t, false); err != nil {
		return err
	}
	if err := e.writeTriggerDiscovery(t, false); err != nil {
		return err
	}
	e.setTrigger(id, t)
	e.indexTrigger(t)
	e.newTriggers = append(e.newTriggers, id)
	return nil
}

// updateTrigger writes t, the new state of an existing trigger, with
// its items, dependencies and tags, and puts it in the overlay.
func (e *Edit) updateTrigger(t *Trigger) error {
	initMap(&e.triggers)
	_, err := e.exec("UPDATE triggers SET description = ?, expression = ?, recovery_mode = ?, recovery_expression = ?, priority = ?, status = ?, type = ?, manual_close = ?, opdata = ?, comments = ?, url = ?, correlation_mode = ?, correlation_tag = ?, max_check_attempts = ?, event_name = ?, template_id = ?, uuid = ? WHERE id = ?",
		t.Description, t.Expression, int64(t.RecoveryMode), t.RecoveryExpression, int64(t.Priority), status(t.Enabled), b2i(t.Multiple), b2i(t.ManualClose), t.Opdata, t.Comments, t.URL, int64(t.CorrelationMode), t.CorrelationTag, int64(t.MaxCheckAttempts), t.EventName, t.TemplateID, t.UUID, t.ID)
	if err != nil {
		return e.fail(fmt.Errorf("cannot update trigger %d: %w", t.ID, err))
	}
	if err := e.writeTriggerRefs(t, true); err != nil {
		return err
	}
	if err := e.writeTriggerDiscovery(t, true); err != nil {
		return err
	}
	e.setTrigger(t.ID, t)
	e.indexTrigger(t)
	return nil
}

// checkTriggerUnique refuses t when a trigger of its first item (so of
// its host) has the same name and expression, as Zabbix 6.0 does
// (recorded: internal/conformance, write_errors t-create-dup), among the
// catalog's and the batch's earlier ones.
func (e *Edit) checkTriggerUnique(t *Trigger, batch []Trigger, p string, el *errList) {
	if len(t.ItemIDs) == 0 {
		return
	}
	same := func(o *Trigger) bool {
		return o != nil && o.ID != t.ID && o.Description == t.Description && o.Expression == t.Expression
	}
	found := false
	for i := range batch {
		// New triggers have no ID yet: the batch's earlier ones are
		// others whatever their IDs.
		b := &batch[i]
		found = found || (b.ItemIDs != nil && b.ItemIDs[0] == t.ItemIDs[0] && b.Description == t.Description && b.Expression == t.Expression)
	}
	for _, o := range e.old.TriggersOfItem(t.ItemIDs[0]) {
		found = found || same(e.trigger(o.ID))
	}
	for _, o := range e.old.TemplateTriggersOfItem(t.ItemIDs[0]) {
		found = found || same(e.trigger(o.ID))
	}
	for _, id := range e.trigByItem[t.ItemIDs[0]] {
		if o := e.triggers[id]; o != nil && slices.Contains(o.ItemIDs, t.ItemIDs[0]) {
			found = found || same(o)
		}
	}
	if !found {
		return
	}
	host := ""
	if it := e.item(t.ItemIDs[0]); it != nil {
		if h := e.host(it.HostID); h != nil {
			host = h.Host
		}
	}
	el.add(p+".description", &ConflictError{Kind: TriggerExists, Host: host, Name: t.Description})
}

// UpdateTriggers changes triggers.
func (e *Edit) UpdateTriggers(ups []TriggerUpdate) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	next := make([]Trigger, len(ups))
	ids := make([]uint64, len(ups))
	for i := range ups {
		u := &ups[i]
		ids[i] = u.ID
		p := "triggers[" + strconv.Itoa(i) + "]"
		cur := e.trigger(u.ID)
		if cur == nil {
			el.add(p+".triggerid", notFound("trigger", u.ID))
			continue
		}
		if cur.TemplateID != 0 && !e.propagating {
			if f := templatedTriggerField(u); f != "" {
				name := cur.Description
				if u.Description != nil {
					name = *u.Description
				}
				el.add(p+"."+f, &TemplatedError{Kind: "trigger", Name: name, Field: f})
				continue
			}
		}
		f := fieldsOf(cur)
		setp(&f.Description, u.Description)
		setp(&f.Expression, u.Expression)
		setp(&f.RecoveryMode, u.RecoveryMode)
		setp(&f.RecoveryExpression, u.RecoveryExpression)
		setp(&f.Priority, u.Priority)
		setp(&f.Enabled, u.Enabled)
		setp(&f.Multiple, u.Multiple)
		setp(&f.ManualClose, u.ManualClose)
		setp(&f.Opdata, u.Opdata)
		setp(&f.EventName, u.EventName)
		setp(&f.Comments, u.Comments)
		setp(&f.URL, u.URL)
		setp(&f.CorrelationMode, u.CorrelationMode)
		setp(&f.CorrelationTag, u.CorrelationTag)
		setp(&f.Tags, u.Tags)
		setp(&f.Dependencies, u.Dependencies)
		setp(&f.MaxCheckAttempts, u.MaxCheckAttempts)
		if u.RecoveryMode != nil && *u.RecoveryMode != RecoverRecoveryExpression && u.RecoveryExpression == nil {
			f.RecoveryExpression = "" // dropped with the mode that needs it, as Zabbix does
		}
		// Correlation by tag needs a recovery: recovery mode "none"
		// turns it off, and turning it off drops its tag (6.0.14; the
		// correlation_mode conformance case).
		if u.RecoveryMode != nil && *u.RecoveryMode == RecoverNone && u.CorrelationMode == nil {
			f.CorrelationMode = 0
		}
		if f.CorrelationMode == 0 && u.CorrelationTag == nil {
			f.CorrelationTag = ""
		}
		if t, ok := e.normTrigger(&f, p, &el); ok {
			t.ID, t.TemplateID, t.UUID = u.ID, cur.TemplateID, cur.UUID
			if cur.Discovery != nil {
				// A discovered trigger stays its prototype's (the API
				// lets its status change only).
				d := *cur.Discovery
				t.Discovery = &d
			}
			next[i] = t
			e.checkTriggerUnique(&next[i], next[:i], p, &el)
		}
	}
	dupIDs("triggers", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	// Cycles are checked over the graph with all of the batch applied.
	initMap(&e.triggers)
	saved := make(map[uint64]*Trigger, len(next))
	for i := range next {
		saved[next[i].ID] = e.triggers[next[i].ID]
		e.setTrigger(next[i].ID, &next[i])
	}
	for i := range next {
		if err := e.checkDepCycle(next[i].ID); err != nil {
			el.add("triggers["+strconv.Itoa(i)+"].dependencies", err)
		}
	}
	if err := el.err(); err != nil {
		for id, t := range saved {
			if t == nil {
				delete(e.triggers, id)
			} else {
				e.setTrigger(id, t)
			}
		}
		return err
	}
	for i := range next {
		if err := e.updateTrigger(&next[i]); err != nil {
			return err
		}
	}
	e.res.TriggersUpdated += len(next)
	return e.propagateTriggerUpdates(ups)
}

// DeleteTriggers deletes triggers. Dependencies on them go with them, as
// in Zabbix.
func (e *Edit) DeleteTriggers(ids []uint64) error {
	if e.err != nil {
		return e.err
	}
	var el errList
	for i, id := range ids {
		t := e.trigger(id)
		switch {
		case t == nil:
			el.add("triggers["+strconv.Itoa(i)+"]", notFound("trigger", id))
		case t.TemplateID != 0 && !e.propagating:
			el.add("triggers["+strconv.Itoa(i)+"]", &TemplatedError{Kind: "trigger", Name: t.Description, Expression: t.Expression, Op: "delete"})
		}
	}
	dupIDs("triggers", ids, &el)
	if err := el.err(); err != nil {
		return err
	}
	ids = e.withTriggerCopies(ids)
	initMap(&e.triggers)
	for _, id := range ids {
		if err := e.deleteTriggerRows(id); err != nil {
			return err
		}
		e.setTrigger(id, nil)
	}
	e.res.TriggersDeleted += len(ids)
	return nil
}

func (e *Edit) deleteTriggerRows(id uint64) error {
	for _, q := range []string{
		"DELETE FROM trigger_items WHERE trigger_id = ?",
		"DELETE FROM trigger_tags WHERE trigger_id = ?",
		"DELETE FROM trigger_deps WHERE trigger_id = ?1 OR depends_on = ?1",
		"DELETE FROM trigger_discovery WHERE trigger_id = ?",
		"DELETE FROM triggers WHERE id = ?",
	} {
		if _, err := e.exec(q, id); err != nil {
			return e.fail(fmt.Errorf("cannot delete trigger %d: %w", id, err))
		}
	}
	return nil
}

// writeTriggerRefs writes t's items, dependencies and tags, replacing
// the old rows if replace is set.
func (e *Edit) writeTriggerRefs(t *Trigger, replace bool) error {
	if replace {
		for _, q := range []string{"DELETE FROM trigger_items WHERE trigger_id = ?", "DELETE FROM trigger_tags WHERE trigger_id = ?", "DELETE FROM trigger_deps WHERE trigger_id = ?"} {
			if _, err := e.exec(q, t.ID); err != nil {
				return e.fail(fmt.Errorf("cannot update trigger %d: %w", t.ID, err))
			}
		}
	}
	for _, id := range t.ItemIDs {
		if _, err := e.exec("INSERT INTO trigger_items (trigger_id, item_id) VALUES (?, ?)", t.ID, id); err != nil {
			return e.fail(fmt.Errorf("cannot store the items of trigger %d: %w", t.ID, err))
		}
	}
	for _, id := range t.Dependencies {
		if _, err := e.exec("INSERT INTO trigger_deps (trigger_id, depends_on) VALUES (?, ?)", t.ID, id); err != nil {
			return e.fail(fmt.Errorf("cannot store the dependencies of trigger %d: %w", t.ID, err))
		}
	}
	for _, tg := range t.Tags {
		if _, err := e.exec("INSERT INTO trigger_tags (trigger_id, tag, value) VALUES (?, ?, ?)", t.ID, tg.Tag, tg.Value); err != nil {
			return e.fail(fmt.Errorf("cannot store the tags of trigger %d: %w", t.ID, err))
		}
	}
	return nil
}

// cascadeTriggers deletes the triggers that reference an item deleted
// in this Edit (directly or with its host), as Zabbix does. It runs
// before commit, only when the Edit deleted items or hosts.
func (e *Edit) cascadeTriggers() error {
	gone := func(t *Trigger) bool {
		for _, id := range t.ItemIDs {
			if e.item(id) == nil {
				return true
			}
		}
		return false
	}
	var dead []uint64
	for _, part := range []*Snapshot{e.old, e.old.part()} {
		for i := range part.triggers {
			if t := e.trigger(part.triggers[i].ID); t != nil && gone(t) {
				dead = append(dead, t.ID)
			}
		}
	}
	for _, id := range e.newTriggers {
		if t := e.trigger(id); t != nil && gone(t) {
			dead = append(dead, id)
		}
	}
	initMap(&e.triggers)
	for _, id := range dead {
		if err := e.deleteTriggerRows(id); err != nil {
			return err
		}
		e.setTrigger(id, nil)
	}
	e.res.TriggersDeleted += len(dead)
	return nil
}

// DepCycleError is a dependency that would close a cycle: Trigger would
// depend on DependsOn, which already depends on Trigger, directly or
// through others. Path is the cycle as Zabbix 6.0 words it: from
// DependsOn through the triggers that depend on one another back to
// DependsOn ([DependsOn, Trigger, ..., DependsOn]; a trigger made to
// depend on itself gives [T, T]).
type DepCycleError struct {
	Trigger, DependsOn uint64
	Path               []uint64
}

func (e *DepCycleError) Error() string {
	return fmt.Sprintf("trigger %d cannot depend on trigger %d: the dependencies would form a cycle %v", e.Trigger, e.DependsOn, e.Path)
}

// checkDepCycle reports a dependency chain from trigger id back to
// itself (a *DepCycleError), or one deeper than Zabbix allows. The
// masters are walked in ascending ID order, so that of several cycles
// the same one is reported each time.
func (e *Edit) checkDepCycle(id uint64) error {
	t := e.trigger(id)
	if t == nil {
		return nil
	}
	for _, up := range t.Dependencies {
		// chain is a path of dependencies from up down to id, if any.
		var chain []uint64
		var walk func(cur uint64, depth int) (bool, error)
		walk = func(cur uint64, depth int) (bool, error) {
			chain = append(chain, cur)
			if cur == id {
				return true, nil
			}
			if depth > maxDependencyDepth {
				return false, fmt.Errorf("the chain of dependencies is deeper than %d triggers", maxDependencyDepth)
			}
			if ct := e.trigger(cur); ct != nil {
				for _, d := range ct.Dependencies {
					if found, err := walk(d, depth+1); found || err != nil {
						return found, err
					}
				}
			}
			chain = chain[:len(chain)-1]
			return false, nil
		}
		found, err := walk(up, 1)
		if err != nil {
			return err
		}
		if found {
			// chain runs up ... id along "depends on"; Zabbix names the
			// cycle the other way, from up through its dependents.
			path := []uint64{up}
			for i := len(chain) - 1; i >= 0; i-- {
				path = append(path, chain[i])
			}
			return &DepCycleError{Trigger: id, DependsOn: up, Path: path}
		}
	}
	return nil
}

// normTrigger validates f and resolves its expressions' items,
// reporting to el under p.
func (e *Edit) normTrigger(f *TriggerFields, p string, el *errList) (Trigger, bool) {
	n := len(el.errs) + el.dropped
	t := Trigger{
		Description: e.text(f.Description), EventName: e.text(f.EventName), Expression: strings.Clone(f.Expression),
		RecoveryMode: f.RecoveryMode, RecoveryExpression: strings.Clone(f.RecoveryExpression),
		Priority: f.Priority, Enabled: f.Enabled, Multiple: f.Multiple, ManualClose: f.ManualClose,
		Opdata: e.text(f.Opdata), Comments: e.text(f.Comments), URL: e.text(f.URL),
		CorrelationMode: f.CorrelationMode, CorrelationTag: e.text(f.CorrelationTag),
		Tags: e.tags(f.Tags), MaxCheckAttempts: max(f.MaxCheckAttempts, 1),
	}
	if t.MaxCheckAttempts > maxCheckAttempts {
		el.addf(p+".max_check_attempts", "must be between 1 and %d, not %d", maxCheckAttempts, t.MaxCheckAttempts)
	}
	text := func(field, v string, max int, required bool) {
		switch {
		case required && strings.TrimSpace(v) == "" && (field == "recovery_expression" || field == "correlation_tag"):
			// Required by another field: Zabbix words it so.
			el.add(p+"."+field, &IncorrectValue{Field: field, Reason: "cannot be empty", msg: "cannot be empty"})
		case required && strings.TrimSpace(v) == "":
			el.addf(p+"."+field, "cannot be empty")
		default:
			if err := checkText(v, max); err != nil {
				el.add(p+"."+field, err)
			}
		}
	}
	text("description", t.Description, maxTriggerDescLen, true)
	text("expression", t.Expression, maxExpressionLen, true)
	text("recovery_expression", t.RecoveryExpression, maxExpressionLen, t.RecoveryMode == RecoverRecoveryExpression)
	text("opdata", t.Opdata, maxOpdataLen, false)
	text("event_name", t.EventName, maxEventNameLen, false)
	text("comments", t.Comments, maxCommentsLen, false)
	text("url", t.URL, maxTriggerURLLen, false)
	text("correlation_tag", t.CorrelationTag, maxTagLen, t.CorrelationMode == 1)
	switch {
	case t.RecoveryMode > RecoverNone:
		el.addf(p+".recovery_mode", "must be one of 0 (expression), 1 (recovery expression), 2 (none), not %d", t.RecoveryMode)
	case t.RecoveryMode != RecoverRecoveryExpression && t.RecoveryExpression != "":
		el.add(p+".recovery_expression", &IncorrectValue{Field: "recovery_expression", Reason: "should be empty",
			msg: "must be empty unless recovery_mode is 1 (recovery expression)"})
	}
	if t.Priority > 5 {
		el.addf(p+".priority", "must be between 0 (not classified) and 5 (disaster), not %d", t.Priority)
	}
	switch {
	case t.CorrelationMode > 1:
		el.addf(p+".correlation_mode", "must be 0 (all problems) or 1 (problems with the same tag value), not %d", t.CorrelationMode)
	case t.CorrelationMode == 1 && t.RecoveryMode == RecoverNone:
		el.add(p+".correlation_mode", &IncorrectValue{Field: "correlation_mode", Reason: `unexpected value "1"`,
			msg: "must be 0 (all problems) when recovery_mode is 2 (none)"})
	case t.CorrelationMode == 0 && t.CorrelationTag != "":
		el.add(p+".correlation_tag", &IncorrectValue{Field: "correlation_tag", Reason: "should be empty",
			msg: "must be empty unless correlation_mode is 1 (problems with the same tag value)"})
	}
	checkTags(p+".tags", t.Tags, el)
	if len(el.errs)+el.dropped > n {
		return t, false
	}
	items := e.resolveRefs(t.Expression, p+".expression", el)
	if t.RecoveryMode == RecoverRecoveryExpression {
		items = append(items, e.resolveRefs(t.RecoveryExpression, p+".recovery_expression", el)...)
	}
	slices.Sort(items)
	t.ItemIDs = slices.Compact(items)
	tmpl, hosts := false, false
	for _, id := range t.ItemIDs {
		if it := e.item(id); it != nil && e.host(it.HostID).IsTemplate {
			tmpl = true
		} else {
			hosts = true
		}
	}
	if tmpl && hosts {
		el.add(p+".expression", ErrMixedTrigger)
	}
	seen := map[uint64]bool{}
	for j, d := range f.Dependencies {
		fp := p + ".dependencies[" + strconv.Itoa(j) + "]"
		switch {
		case seen[d]:
			el.addf(fp, "trigger %d is listed twice", d)
		case e.trigger(d) == nil:
			el.add(fp, notFound("trigger", d))
		default:
			t.Dependencies = append(t.Dependencies, d)
		}
		seen[d] = true
	}
	slices.Sort(t.Dependencies)
	return t, len(el.errs)+el.dropped == n
}

// IncorrectValue is a value refused that Zabbix 6.0's API refuses with
// `Incorrect value for field "Field": Reason.` (recorded from 6.0.14: a
// recovery expression given or missing against the recovery mode);
// Error is Peregrine's text.
type IncorrectValue struct {
	Field, Reason string
	msg           string
}

func (e *IncorrectValue) Error() string { return e.msg }

// ExprRefError is an expression's reference to a host or an item that
// does not exist, in Zabbix 6.0's words, which its API gives without the
// expression's path (recorded from 6.0.14).
type ExprRefError struct{ msg string }

func (e *ExprRefError) Error() string { return e.msg }

// resolveRefs parses expr with the catalog's RefsFunc and returns the
// IDs of the items it references.
func (e *Edit) resolveRefs(expr, field string, el *errList) []uint64 {
	if e.refs == nil {
		el.add(field, ErrNoExprParser)
		return nil
	}
	refs, err := e.refs(expr)
	if err != nil {
		el.add(field, err)
		return nil
	}
	if len(refs) == 0 {
		el.addf(field, "trigger expression must contain at least one /host/key reference") // Zabbix 6.0.14's words (recorded)
		return nil
	}
	ids := make([]uint64, 0, len(refs))
	for _, r := range refs {
		hid := e.hostByName(r.Host)
		if hid == 0 || e.host(hid) == nil {
			el.add(field, &ExprRefError{`Incorrect trigger expression. Host "` + r.Host + `" does not exist or you have no access to this host.`})
			return nil
		}
		iid := e.itemByKey(hid, r.Key)
		if iid == 0 || e.item(iid) == nil {
			el.add(field, &ExprRefError{`Incorrect item key "` + r.Key + `" provided for trigger expression on "` + r.Host + `".`})
			return nil
		}
		ids = append(ids, iid)
	}
	return ids
}

func fieldsOf(t *Trigger) TriggerFields {
	return TriggerFields{
		Description: t.Description, EventName: t.EventName, Expression: t.Expression, RecoveryMode: t.RecoveryMode,
		RecoveryExpression: t.RecoveryExpression, Priority: t.Priority, Enabled: t.Enabled,
		Multiple: t.Multiple, ManualClose: t.ManualClose, Opdata: t.Opdata, Comments: t.Comments,
		URL: t.URL, CorrelationMode: t.CorrelationMode, CorrelationTag: t.CorrelationTag,
		Tags: t.Tags, Dependencies: t.Dependencies, MaxCheckAttempts: t.MaxCheckAttempts,
	}
}

func setp[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// buildTriggers is the trigger lists of the snapshot after the Edit,
// the hosts' and the templates': the old triggers with the overlay
// applied, then the created ones. A trigger the Edit touched goes where
// its first item is; the others stay in their part.
func (e *Edit) buildTriggers() (host, tmpl []Trigger) {
	inTmpl := func(t *Trigger) bool {
		if len(t.ItemIDs) == 0 {
			return false
		}
		it := e.item(t.ItemIDs[0])
		return it != nil && e.host(it.HostID).IsTemplate
	}
	tp := e.old.part()
	host = make([]Trigger, 0, len(e.old.triggers)+len(e.newTriggers))
	for _, part := range []*Snapshot{e.old, tp} {
		for i := range part.triggers {
			t := &part.triggers[i]
			if o, ok := e.triggers[t.ID]; ok {
				switch {
				case o == nil:
				case inTmpl(o):
					tmpl = append(tmpl, *o)
				default:
					host = append(host, *o)
				}
				continue
			}
			if part == tp {
				tmpl = append(tmpl, *t)
			} else {
				host = append(host, *t)
			}
		}
	}
	for _, id := range e.newTriggers {
		if t := e.triggers[id]; t != nil {
			if inTmpl(t) {
				tmpl = append(tmpl, *t)
			} else {
				host = append(host, *t)
			}
		}
	}
	return host, tmpl
}

// TriggerHosts returns the IDs of the hosts trigger id references as the
// Edit sees it (nil if there is no such trigger), so that a caller can
// check permissions on what it just created or changed before the Edit
// commits.
func (e *Edit) TriggerHosts(id uint64) []uint64 {
	t := e.trigger(id)
	if t == nil {
		return nil
	}
	var hosts []uint64
	for _, iid := range t.ItemIDs {
		if it := e.item(iid); it != nil && !slices.Contains(hosts, it.HostID) {
			hosts = append(hosts, it.HostID)
		}
	}
	slices.Sort(hosts)
	return hosts
}

// setTrigger writes trigger id into the Edit's overlay (nil: deleted)
// and indexes it by its items, so that checks over the triggers of one
// item cost what that item has, not what the Edit wrote.
func (e *Edit) setTrigger(id uint64, t *Trigger) {
	initMap(&e.triggers)
	e.triggers[id] = t
	if t == nil {
		return
	}
	initMap(&e.trigByItem)
	for _, iid := range t.ItemIDs {
		if l := e.trigByItem[iid]; len(l) == 0 || l[len(l)-1] != id {
			e.trigByItem[iid] = append(l, id)
		}
	}
}
