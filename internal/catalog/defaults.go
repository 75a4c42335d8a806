package catalog

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// What a fresh Zabbix 6.0 database has, as the catalog keeps it: its
// host groups, media types, trigger action and global scripts, with
// their IDs. defaults/*.json are Zabbix 6.0.14's own answers on a fresh
// database (hostgroup.get; mediatype.get with selectMessageTemplates;
// action.get with selectFilter and the three operation selects;
// script.get), stored as recorded: the webhooks' scripts and parameters
// are Zabbix's shipped data, which its users also get from Zabbix's
// published media type files. They are read here, not rewritten.
//
// EnsureDefaults adds them once per database (table catalog_defaults,
// schema version 18, records each set added), so an object a user
// deleted does not come back. On a database that has objects of its own
// it adds what is missing by name, with the default's ID when that ID
// was never handed out (an ID is never reused: rights and alerts name
// them) and the next one otherwise.
//
// Of Zabbix's five default actions the catalog holds the trigger
// action (3, "Report problems to Zabbix administrators") and the three
// internal-event actions (4-6, "Report not supported items", "... low
// level discovery rules", "Report unknown triggers"), the latter as a
// set of their own (defaultsInternal) so that a database made before
// internal events gets them once too, and the discovery action (2,
// "Auto discovery. Linux servers.", disabled) likewise
// (defaultsDiscovery).

//go:embed defaults/*.json
var defaultsFS embed.FS

// defaultsSchema records which default sets EnsureDefaults added
// (schema version 18).
const defaultsSchema = `
CREATE TABLE IF NOT EXISTS catalog_defaults (
	name    TEXT PRIMARY KEY,
	version INTEGER NOT NULL
);
`

// The default sets, by name in catalog_defaults.
const (
	defaultsHostGroups = "hostgroups"
	defaultsAlerts     = "alerts" // media types, actions, scripts
	defaultsMacros     = "globalmacros"
	defaultsHostIDs    = "hostids"
	defaultsInternal   = "internalactions"  // actions 4-6 (event source 3)
	defaultsDiscovery  = "discoveryactions" // action 2 (event source 1)
)

// FirstHostID is the ID of a fresh Zabbix 6.0's first host, "Zabbix
// server": a fresh catalog hands out host IDs from there, so that the
// self-monitoring host created at the first start has it too (scripts
// and Zabbix's own examples use "10084").
const FirstHostID = 10084

// defaultGlobalMacros are the global macros of a fresh Zabbix 6.0
// (recorded from 6.0.14: usermacro.get globalmacro, one macro).
var defaultGlobalMacros = []MacroFields{{Macro: "{$SNMP_COMMUNITY}", Value: "public"}}

// DefaultsAdded says what EnsureDefaults added, by name.
type DefaultsAdded struct {
	HostGroups, MediaTypes, Actions, Scripts, GlobalMacros []string
}

// recorded* are the recorded objects' members as Zabbix returns them
// (numbers as strings).
type recordedGroup struct {
	ID   uint64 `json:"groupid,string"`
	Name string `json:"name"`
}

type recordedMediaType struct {
	ID              uint64 `json:"mediatypeid,string"`
	Type            int    `json:"type,string"`
	Name            string `json:"name"`
	SMTPServer      string `json:"smtp_server"`
	SMTPHelo        string `json:"smtp_helo"`
	SMTPEmail       string `json:"smtp_email"`
	ExecPath        string `json:"exec_path"`
	GSMModem        string `json:"gsm_modem"`
	Username        string `json:"username"`
	Passwd          string `json:"passwd"`
	Status          int    `json:"status,string"`
	SMTPPort        int    `json:"smtp_port,string"`
	SMTPSecurity    int    `json:"smtp_security,string"`
	SMTPVerifyPeer  int    `json:"smtp_verify_peer,string"`
	SMTPVerifyHost  int    `json:"smtp_verify_host,string"`
	SMTPAuth        int    `json:"smtp_authentication,string"`
	ExecParams      string `json:"exec_params"`
	MaxSessions     int    `json:"maxsessions,string"`
	MaxAttempts     int    `json:"maxattempts,string"`
	AttemptInterval string `json:"attempt_interval"`
	ContentType     int    `json:"content_type,string"`
	Script          string `json:"script"`
	Timeout         string `json:"timeout"`
	ProcessTags     int    `json:"process_tags,string"`
	ShowEventMenu   int    `json:"show_event_menu,string"`
	EventMenuURL    string `json:"event_menu_url"`
	EventMenuName   string `json:"event_menu_name"`
	Description     string `json:"description"`
	Templates       []struct {
		EventSource int    `json:"eventsource,string"`
		Recovery    int    `json:"recovery,string"`
		Subject     string `json:"subject"`
		Message     string `json:"message"`
	} `json:"message_templates"`
	Parameters []MediaParam `json:"parameters"`
}

type recordedOperation struct {
	OperationType int    `json:"operationtype,string"`
	Period        string `json:"esc_period"`
	StepFrom      string `json:"esc_step_from"`
	StepTo        string `json:"esc_step_to"`
	EvalType      int    `json:"evaltype,string"`
	Message       *struct {
		DefaultMsg  int    `json:"default_msg,string"`
		Subject     string `json:"subject"`
		Message     string `json:"message"`
		MediaTypeID uint64 `json:"mediatypeid,string"`
	} `json:"opmessage"`
	Groups []struct {
		ID uint64 `json:"usrgrpid,string"`
	} `json:"opmessage_grp"`
	Users []struct {
		ID uint64 `json:"userid,string"`
	} `json:"opmessage_usr"`
	HostGroups []struct {
		ID uint64 `json:"groupid,string"`
	} `json:"opgroup"`
	Templates []struct {
		ID uint64 `json:"templateid,string"`
	} `json:"optemplate"`
}

type recordedAction struct {
	ID               uint64 `json:"actionid,string"`
	Name             string `json:"name"`
	EventSource      int    `json:"eventsource,string"`
	Status           int    `json:"status,string"`
	Period           string `json:"esc_period"`
	PauseSuppressed  int    `json:"pause_suppressed,string"`
	NotifyIfCanceled int    `json:"notify_if_canceled,string"`
	Filter           struct {
		EvalType   int    `json:"evaltype,string"`
		Formula    string `json:"formula"`
		Conditions []struct {
			ConditionType int    `json:"conditiontype,string"`
			Operator      int    `json:"operator,string"`
			Value         string `json:"value"`
			Value2        string `json:"value2"`
			FormulaID     string `json:"formulaid"`
		} `json:"conditions"`
	} `json:"filter"`
	Operations         []recordedOperation `json:"operations"`
	RecoveryOperations []recordedOperation `json:"recovery_operations"`
	UpdateOperations   []recordedOperation `json:"update_operations"`
}

type recordedScript struct {
	ID           uint64 `json:"scriptid,string"`
	Name         string `json:"name"`
	Command      string `json:"command"`
	HostAccess   int    `json:"host_access,string"`
	UserGroupID  uint64 `json:"usrgrpid,string"`
	GroupID      uint64 `json:"groupid,string"`
	Description  string `json:"description"`
	Confirmation string `json:"confirmation"`
	Type         int    `json:"type,string"`
	ExecuteOn    int    `json:"execute_on,string"`
	Scope        int    `json:"scope,string"`
	MenuPath     string `json:"menu_path"`
}

func readDefaults[T any](name string) ([]T, error) {
	b, err := defaultsFS.ReadFile("defaults/" + name + ".json")
	if err != nil {
		return nil, err
	}
	var out []T
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("BUG: defaults/%s.json: %w", name, err)
	}
	return out, nil
}

// DefaultMediaTypes returns Zabbix 6.0's media types as recorded, for
// tests and documentation; EnsureDefaults adds them.
func DefaultMediaTypes() ([]MediaType, error) {
	rs, err := readDefaults[recordedMediaType]("mediatypes")
	if err != nil {
		return nil, err
	}
	out := make([]MediaType, len(rs))
	for i, r := range rs {
		m := MediaType{ID: r.ID, Name: r.Name, Type: r.Type, Status: r.Status, Description: r.Description,
			SMTPServer: r.SMTPServer, SMTPPort: r.SMTPPort, SMTPHelo: r.SMTPHelo, SMTPEmail: r.SMTPEmail,
			SMTPSecurity: r.SMTPSecurity, SMTPVerifyPeer: r.SMTPVerifyPeer, SMTPVerifyHost: r.SMTPVerifyHost,
			SMTPAuth: r.SMTPAuth, Username: r.Username, Passwd: r.Passwd, ContentType: r.ContentType,
			ExecPath: r.ExecPath, ExecParams: r.ExecParams, Parameters: r.Parameters, Script: r.Script,
			Timeout: r.Timeout, ProcessTags: r.ProcessTags, MaxSessions: r.MaxSessions, MaxAttempts: r.MaxAttempts,
			AttemptInterval: r.AttemptInterval, GSMModem: r.GSMModem, ShowEventMenu: r.ShowEventMenu,
			EventMenuURL: r.EventMenuURL, EventMenuName: r.EventMenuName}
		if m.Parameters == nil {
			m.Parameters = []MediaParam{}
		}
		for _, t := range r.Templates {
			m.Templates = append(m.Templates, MessageTemplate{EventSource: t.EventSource, Recovery: t.Recovery, Subject: t.Subject, Message: t.Message})
		}
		out[i] = m
	}
	return out, nil
}

func (r recordedOperation) operation() Operation {
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	op := Operation{OperationType: r.OperationType, StepFrom: atoi(r.StepFrom), StepTo: atoi(r.StepTo), Period: r.Period, EvalType: r.EvalType}
	if m := r.Message; m != nil {
		op.DefaultMsg, op.Subject, op.Message, op.MediaTypeID = m.DefaultMsg, m.Subject, m.Message, m.MediaTypeID
	}
	for _, g := range r.Groups {
		op.GroupIDs = append(op.GroupIDs, g.ID)
	}
	for _, u := range r.Users {
		op.UserIDs = append(op.UserIDs, u.ID)
	}
	for _, g := range r.HostGroups {
		op.OpGroups = append(op.OpGroups, g.ID)
	}
	for _, t := range r.Templates {
		op.OpTemplates = append(op.OpTemplates, t.ID)
	}
	return op
}

// DefaultActions returns the default actions the catalog holds (trigger
// and internal-event actions; see the package's defaults note), as
// recorded.
func DefaultActions() ([]Action, error) {
	rs, err := readDefaults[recordedAction]("actions")
	if err != nil {
		return nil, err
	}
	var out []Action
	for _, r := range rs {
		a := Action{ID: r.ID, Name: r.Name, EventSource: r.EventSource, Status: r.Status, Period: r.Period,
			PauseSuppressed: r.PauseSuppressed, NotifyIfCanceled: r.NotifyIfCanceled,
			Filter: Filter{EvalType: r.Filter.EvalType, Formula: r.Filter.Formula, Conditions: []Condition{}}}
		for _, c := range r.Filter.Conditions {
			a.Filter.Conditions = append(a.Filter.Conditions, Condition(c))
		}
		for _, l := range []struct {
			in  []recordedOperation
			out *[]Operation
		}{{r.Operations, &a.Operations}, {r.RecoveryOperations, &a.RecoveryOperations}, {r.UpdateOperations, &a.UpdateOperations}} {
			*l.out = []Operation{}
			for _, op := range l.in {
				*l.out = append(*l.out, op.operation())
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// DefaultScripts returns Zabbix 6.0's global scripts as recorded.
func DefaultScripts() ([]GlobalScript, error) {
	rs, err := readDefaults[recordedScript]("scripts")
	if err != nil {
		return nil, err
	}
	out := make([]GlobalScript, len(rs))
	for i, r := range rs {
		out[i] = GlobalScript{ID: r.ID, Name: r.Name, Type: r.Type, Scope: r.Scope, Command: r.Command, ExecuteOn: r.ExecuteOn,
			Description: r.Description, MenuPath: r.MenuPath, UserGroupID: r.UserGroupID, GroupID: r.GroupID,
			HostAccess: r.HostAccess, Confirmation: r.Confirmation}
	}
	return out, nil
}

// DefaultHostGroups returns Zabbix 6.0's host groups with their IDs.
func DefaultHostGroups() ([]Group, error) {
	rs, err := readDefaults[recordedGroup]("hostgroups")
	if err != nil {
		return nil, err
	}
	out := make([]Group, len(rs))
	for i, r := range rs {
		out[i] = Group(r)
	}
	return out, nil
}

// EnsureDefaults adds Zabbix 6.0's default host groups, media types,
// trigger action and global scripts (see the note at the top of this
// file), each set once per database. Call it before anything creates
// objects in a new database, so that they get their Zabbix IDs and new
// objects the IDs after them.
func (c *Catalog) EnsureDefaults(ctx context.Context) (DefaultsAdded, error) {
	var d DefaultsAdded
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return d, ErrClosed
	}
	done := map[string]bool{}
	rows, err := c.db.QueryContext(ctx, "SELECT name FROM catalog_defaults")
	if err != nil {
		return d, fmt.Errorf("catalog: cannot read the defaults added: %w", err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return d, fmt.Errorf("catalog: cannot read the defaults added: %w", err)
		}
		done[n] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return d, fmt.Errorf("catalog: cannot read the defaults added: %w", err)
	}
	if !done[defaultsHostGroups] {
		gs, err := DefaultHostGroups()
		if err != nil {
			return d, err
		}
		var seq uint64
		if err := c.db.QueryRowContext(ctx, "SELECT seq FROM sqlite_sequence WHERE name = 'host_groups'").Scan(&seq); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return d, fmt.Errorf("catalog: cannot read the host group sequence: %w", err)
		}
		_, err = c.editLocked(ctx, func(e *Edit) error {
			initMap(&e.groups)
			initMap(&e.groupName)
			// Ascending IDs, so that each default never handed out keeps
			// its own; the others come after.
			slices.SortFunc(gs, func(a, b Group) int { return cmpID(a.ID, b.ID) })
			var later []string
			for _, g := range gs {
				if e.groupByName(g.Name) != 0 {
					continue
				}
				if g.ID <= seq || e.group(g.ID) != nil {
					later = append(later, g.Name)
					continue
				}
				if _, err := e.exec("INSERT INTO host_groups (id, name) VALUES (?, ?)", int64(g.ID), g.Name); err != nil {
					return e.fail(fmt.Errorf("cannot create group %q: %w", g.Name, err))
				}
				e.addGroup(g.ID, g.Name)
				d.HostGroups = append(d.HostGroups, g.Name)
			}
			for _, name := range later {
				id, err := e.exec("INSERT INTO host_groups (name) VALUES (?)", name)
				if err != nil {
					return e.fail(fmt.Errorf("cannot create group %q: %w", name, err))
				}
				e.addGroup(id, name)
				d.HostGroups = append(d.HostGroups, name)
			}
			_, err := e.exec("INSERT INTO catalog_defaults (name, version) VALUES (?, 1)", defaultsHostGroups)
			return err
		})
		if err != nil {
			return d, fmt.Errorf("catalog: cannot add the default host groups: %w", err)
		}
	}
	if !done[defaultsMacros] {
		_, err = c.editLocked(ctx, func(e *Edit) error {
			var add []MacroFields
			for _, m := range defaultGlobalMacros {
				exists := false
				for _, o := range e.macros().macros {
					exists = exists || (o.HostID == 0 && o.Macro == m.Macro)
				}
				if !exists {
					add = append(add, m)
					d.GlobalMacros = append(d.GlobalMacros, m.Macro)
				}
			}
			if len(add) > 0 {
				if _, err := e.CreateMacros(add); err != nil {
					return err
				}
			}
			_, err := e.exec("INSERT INTO catalog_defaults (name, version) VALUES (?, 1)", defaultsMacros)
			return err
		})
		if err != nil {
			return d, fmt.Errorf("catalog: cannot add the default global macros: %w", err)
		}
	}
	if !done[defaultsHostIDs] {
		// Only a catalog that never had a host: the IDs of one that did
		// stay as they are.
		var n int
		if err := c.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_sequence WHERE name = 'hosts'").Scan(&n); err != nil {
			return d, fmt.Errorf("catalog: cannot read the host sequence: %w", err)
		}
		_, err = c.editLocked(ctx, func(e *Edit) error {
			if n == 0 {
				if _, err := e.exec("INSERT INTO sqlite_sequence (name, seq) VALUES ('hosts', ?)", FirstHostID-1); err != nil {
					return err
				}
			}
			_, err := e.exec("INSERT INTO catalog_defaults (name, version) VALUES (?, 1)", defaultsHostIDs)
			return err
		})
		if err != nil {
			return d, fmt.Errorf("catalog: cannot set where host IDs start: %w", err)
		}
	}
	if !done[defaultsAlerts] {
		if err := c.ensureAlertDefaults(ctx, &d); err != nil {
			return d, fmt.Errorf("catalog: cannot add the default media types, actions and scripts: %w", err)
		}
	}
	if !done[defaultsDiscovery] {
		if err := c.ensureSourceActions(ctx, &d, SourceDiscovery, defaultsDiscovery); err != nil {
			return d, fmt.Errorf("catalog: cannot add the default discovery action: %w", err)
		}
	}
	if !done[defaultsInternal] {
		if err := c.ensureInternalActions(ctx, &d); err != nil {
			return d, fmt.Errorf("catalog: cannot add the default internal-event actions: %w", err)
		}
	}
	if len(d.HostGroups)+len(d.MediaTypes)+len(d.Actions)+len(d.Scripts)+len(d.GlobalMacros) > 0 {
		c.log.Info("added Zabbix 6.0's default objects", "hostgroups", len(d.HostGroups), "mediatypes", len(d.MediaTypes),
			"actions", len(d.Actions), "scripts", len(d.Scripts), "globalmacros", len(d.GlobalMacros))
	}
	return d, nil
}

// addGroup records a group created in e.
func (e *Edit) addGroup(id uint64, name string) {
	e.groups[id] = &Group{ID: id, Name: name}
	e.groupName[name] = id
	e.newGroups = append(e.newGroups, id)
	e.res.GroupsCreated++
}

// ensureAlertDefaults adds the default media types, actions and scripts
// missing by name, in one write of the notification configuration with
// the catalog_defaults row. c.mu is held.
func (c *Catalog) ensureAlertDefaults(ctx context.Context, d *DefaultsAdded) error {
	mts, err := DefaultMediaTypes()
	if err != nil {
		return err
	}
	acts, err := DefaultActions()
	if err != nil {
		return err
	}
	scs, err := DefaultScripts()
	if err != nil {
		return err
	}
	// Ascending IDs, so that each default whose ID was never handed out
	// keeps it (the recorded order is not the IDs').
	slices.SortFunc(mts, func(a, b MediaType) int { return cmpID(a.ID, b.ID) })
	slices.SortFunc(acts, func(a, b Action) int { return cmpID(a.ID, b.ID) })
	slices.SortFunc(scs, func(a, b GlobalScript) int { return cmpID(a.ID, b.ID) })
	next := c.alerts.Load().clone()
	// idFor is id when it was never handed out for kind, else the next
	// one; the sequence then continues after it.
	idFor := func(kind string, id uint64) uint64 {
		if id < max(next.next[kind], 1) {
			return next.NextID(kind)
		}
		next.next[kind] = max(next.next[kind], id+1)
		return id
	}
	for _, m := range mts {
		if slices.ContainsFunc(next.SortedMediaTypes(), func(o *MediaType) bool { return o.Name == m.Name }) {
			continue
		}
		m.ID = idFor("mediatype", m.ID)
		next.MediaTypes[m.ID] = &m
		d.MediaTypes = append(d.MediaTypes, m.Name)
	}
	for _, a := range acts {
		if a.EventSource == SourceInternal || a.EventSource == SourceDiscovery {
			continue // their own sets: ensureInternalActions, ensureSourceActions
		}
		if slices.ContainsFunc(next.SortedActions(), func(o *Action) bool { return o.Name == a.Name }) {
			continue
		}
		a.ID = idFor("action", a.ID)
		next.Actions[a.ID] = &a
		d.Actions = append(d.Actions, a.Name)
	}
	if len(d.Actions) > 0 {
		// Zabbix's discovery and internal-event actions have the IDs up
		// to 6: its next action is 7, and so is Peregrine's.
		next.next["action"] = max(next.next["action"], 7)
	}
	for _, sc := range scs {
		if slices.ContainsFunc(next.SortedScripts(), func(o *GlobalScript) bool { return o.Name == sc.Name }) {
			continue
		}
		sc.ID = idFor("script", sc.ID)
		next.Scripts[sc.ID] = &sc
		d.Scripts = append(d.Scripts, sc.Name)
	}
	next.Revision++
	if err := writeAlerts(ctx, c.begin, next, defaultsAlerts); err != nil {
		return err
	}
	c.alerts.Store(next)
	c.notifyAlerts()
	return nil
}

// ensureInternalActions adds the default internal-event actions (4-6)
// missing by name, with their Zabbix IDs where no action has them:
// Peregrine started its action IDs at 7 and never handed those out.
// c.mu is held.
func (c *Catalog) ensureInternalActions(ctx context.Context, d *DefaultsAdded) error {
	return c.ensureSourceActions(ctx, d, SourceInternal, defaultsInternal)
}

// ensureSourceActions adds the default actions of event source src
// missing by name, recording the set mark. c.mu is held.
func (c *Catalog) ensureSourceActions(ctx context.Context, d *DefaultsAdded, src int, mark string) error {
	acts, err := DefaultActions()
	if err != nil {
		return err
	}
	slices.SortFunc(acts, func(a, b Action) int { return cmpID(a.ID, b.ID) })
	next := c.alerts.Load().clone()
	for _, a := range acts {
		if a.EventSource != src || slices.ContainsFunc(next.SortedActions(), func(o *Action) bool { return o.Name == a.Name }) {
			continue
		}
		if next.Actions[a.ID] != nil {
			a.ID = next.NextID("action")
		}
		next.next["action"] = max(next.next["action"], a.ID+1, 7)
		next.Actions[a.ID] = &a
		d.Actions = append(d.Actions, a.Name)
	}
	next.Revision++
	if err := writeAlerts(ctx, c.begin, next, mark); err != nil {
		return err
	}
	c.alerts.Store(next)
	c.notifyAlerts()
	return nil
}
