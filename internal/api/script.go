package api

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
)

// Global scripts (script.*): Zabbix 6.0's objects of type 0 ("script")
// and 5 ("webhook": JavaScript given its parameters as a JSON "value"),
// stored in the notification configuration. Only super admins create,
// change and delete them, as in Zabbix: a script is a shell command line
// or a program the server runs. script.execute runs a manual script for a host (or an
// event's host) for any user the script's user group and host access
// allow.

func (s *Server) registerScripts() {
	if s.opts.Alerting == nil {
		return
	}
	s.methods["script.get"] = &method{role: RoleUser, call: s.scriptGet}
	s.methods["script.create"] = &method{role: RoleSuperAdmin, call: s.scriptCreate}
	s.methods["script.update"] = &method{role: RoleSuperAdmin, call: s.scriptUpdate}
	s.methods["script.delete"] = &method{role: RoleSuperAdmin, call: s.scriptDelete}
	s.methods["script.execute"] = &method{role: RoleUser, call: s.scriptExecute}
	s.methods["script.getscriptsbyhosts"] = &method{role: RoleUser, call: s.scriptsByHosts}
}

// scriptParams are the objects of script.create and .update
// (params_alert.go's dialect).
type scriptParams struct {
	ScriptID     opt[uint64] `json:"scriptid"`
	Name         opt[string] `json:"name"`
	Type         opt[int64]  `json:"type"`
	Scope        opt[int64]  `json:"scope"`
	Command      opt[string] `json:"command"`
	ExecuteOn    opt[int64]  `json:"execute_on"`
	Description  opt[string] `json:"description"`
	MenuPath     opt[string] `json:"menu_path"`
	UserGroupID  opt[uint64] `json:"usrgrpid"`
	GroupID      opt[uint64] `json:"groupid"`
	HostAccess   opt[int64]  `json:"host_access"`
	Confirmation opt[string] `json:"confirmation"`
	// Timeout and Parameters are a webhook script's (type 5) only.
	Timeout    opt[string]              `json:"timeout"`
	Parameters opt[[]scriptParamParams] `json:"parameters" as:"objects"`
}

// scriptParamParams is one of a webhook script's "parameters".
type scriptParamParams struct {
	Name  opt[string] `json:"name"`
	Value opt[string] `json:"value"`
}

// webhookMembers applies the members only one kind of script has, as
// 6.0 checks them (recorded from 6.0.14): a webhook takes "timeout"
// (1-60 seconds) and "parameters" (names unique and not empty, each
// with a value) and no "execute_on"; a command script the opposite,
// and becoming one drops the webhook's. o is the request's own object
// (an update's stored members do not count as given).
func webhookMembers(o alertObject, p *scriptParams, sc *catalog.GlobalScript, i int) error {
	if sc.Type != catalog.ScriptWebhook {
		for _, m := range []string{"parameters", "timeout"} {
			if o.has(m) {
				return errParams(`Invalid parameter "/%d": unexpected parameter "%s".`, i+1, m)
			}
		}
		sc.Timeout, sc.Parameters = "", nil
		return nil
	}
	if o.has("execute_on") {
		return errParams(`Invalid parameter "/%d": unexpected parameter "execute_on".`, i+1)
	}
	sc.ExecuteOn = catalog.ExecOnProxy // what 6.0 answers for a webhook
	if p.Timeout.Given() && p.Timeout.Value != "" {
		n, err := delay.Seconds(p.Timeout.Value)
		if err != nil {
			// 6.0.14's words for a text that is no time unit.
			return errParams(`Invalid parameter "/%d/timeout": a time unit is expected.`, i+1)
		}
		if n < 1 || n > 60 {
			return errParams(`Invalid parameter "/%d/timeout": value must be one of 1-60.`, i+1)
		}
		sc.Timeout = p.Timeout.Value
	}
	sc.Parameters = nil
	seen := map[string]bool{}
	for k, q := range p.Parameters.Value {
		switch {
		case !q.Name.Given():
			return errParams(`Invalid parameter "/%d/parameters/%d": the parameter "name" is missing.`, i+1, k+1)
		case q.Name.Value == "":
			return errParams(`Invalid parameter "/%d/parameters/%d/name": cannot be empty.`, i+1, k+1)
		case !q.Value.Given():
			return errParams(`Invalid parameter "/%d/parameters/%d": the parameter "value" is missing.`, i+1, k+1)
		case seen[q.Name.Value]:
			return errParams(`Invalid parameter "/%d/parameters/%d": value (name)=(%s) already exists.`, i+1, k+1, q.Name.Value)
		}
		seen[q.Name.Value] = true
		sc.Parameters = append(sc.Parameters, catalog.ScriptParam{Name: q.Name.Value, Value: q.Value.Value})
	}
	return nil
}

// script is the script the members give.
func (p *scriptParams) script() catalog.GlobalScript {
	return catalog.GlobalScript{ID: p.ScriptID.Value, Name: p.Name.Value, Type: int(p.Type.Value), Scope: int(p.Scope.Value),
		Command: p.Command.Value, ExecuteOn: int(p.ExecuteOn.Value), Description: p.Description.Value, MenuPath: p.MenuPath.Value,
		UserGroupID: p.UserGroupID.Value, GroupID: p.GroupID.Value, HostAccess: int(p.HostAccess.Value), Confirmation: p.Confirmation.Value}
}

// checkScript applies defaults and validates a script as Zabbix does,
// refusing the types Peregrine does not run.
func (s *Server) checkScript(ctx context.Context, cfg *catalog.AlertConfig, sc *catalog.GlobalScript, i int) error {
	p := fmt.Sprintf("/%d", i+1)
	if sc.Scope == 0 {
		sc.Scope = catalog.ScopeAction
	}
	if sc.HostAccess == 0 {
		sc.HostAccess = int(auth.PermRead)
	}
	switch {
	case strings.TrimSpace(sc.Name) == "":
		return empty(i, "name")
	case sc.Type != catalog.ScriptCustom && sc.Type != catalog.ScriptWebhook:
		if sc.Type >= 1 && sc.Type <= 3 {
			return errParams(`Invalid parameter "%s/type": only scripts of type 0 (script) and 5 (webhook) are supported by Peregrine; IPMI, SSH and Telnet scripts are not.`, p)
		}
		return oneOf(i, "type", "0, 1, 2, 3, 5")
	case strings.TrimSpace(sc.Command) == "":
		return empty(i, "command")
	case sc.Scope != catalog.ScopeAction && sc.Scope != catalog.ScopeManualHost && sc.Scope != catalog.ScopeManualEvent:
		return oneOf(i, "scope", "1, 2, 4")
	case sc.ExecuteOn < catalog.ExecOnAgent || sc.ExecuteOn > catalog.ExecOnProxy:
		return oneOf(i, "execute_on", "0, 1, 2")
	case sc.HostAccess != int(auth.PermRead) && sc.HostAccess != int(auth.PermReadWrite):
		return oneOf(i, "host_access", "2, 3")
	}
	if sc.GroupID != 0 && s.opts.Catalog.Snapshot().GroupByID(sc.GroupID) == nil {
		return errParams(`Invalid parameter "%s/groupid": No permissions to referred object or it does not exist!`, p)
	}
	if sc.UserGroupID != 0 && s.opts.Accounts != nil {
		gs, err := s.opts.Accounts.UserGroups(ctx)
		if err != nil {
			return errApp("cannot read user groups: %v", err)
		}
		if !slices.ContainsFunc(gs, func(g auth.UserGroup) bool { return g.ID == sc.UserGroupID }) {
			return errParams(`Invalid parameter "%s/usrgrpid": No permissions to referred object or it does not exist!`, p)
		}
	}
	if err := tooLong(i, "name", sc.Name, 255); err != nil {
		return err
	}
	for _, o := range cfg.Scripts {
		if o.Name == sc.Name && o.ID != sc.ID {
			return errParams(`Script "%s" already exists.`, sc.Name)
		}
	}
	return nil
}

func (s *Server) scriptCreate(ctx context.Context, c *call) (any, error) {
	objs, err := alertObjects(c.params)
	if err != nil {
		return nil, err
	}
	var out []uint64
	err = s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		out = out[:0]
		for i, o := range objs {
			if o.has("scriptid") {
				return errParams(`Invalid parameter "/%d": unexpected parameter "scriptid".`, i+1)
			}
			for _, need := range []string{"name", "type", "command"} {
				if !o.has(need) {
					return missing(i, need)
				}
			}
			given := o
			if !o.has("execute_on") {
				o = append(o[:len(o):len(o)], member{"execute_on", []byte("2")}) // Zabbix's default: "Zabbix server (proxy)"
			}
			var p scriptParams
			if err := decodeAlert(o, fmt.Sprintf("/%d", i+1), &p); err != nil {
				return err
			}
			sc := p.script()
			if err := webhookMembers(given, &p, &sc, i); err != nil {
				return err
			}
			if err := s.checkScript(ctx, cfg, &sc, i); err != nil {
				return err
			}
			sc.ID = cfg.NextID("script")
			cfg.Scripts[sc.ID] = &sc
			out = append(out, sc.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.opts.Logger.Info("api: scripts created", "by", c.user.Username, "scriptids", out)
	return idResult("scriptids", out), nil
}

func (s *Server) scriptUpdate(ctx context.Context, c *call) (any, error) {
	objs, err := alertObjects(c.params)
	if err != nil {
		return nil, err
	}
	var out []uint64
	err = s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		out = out[:0]
		for i, o := range objs {
			id, old, err := existingOf(o, i, "scriptid", cfg.Scripts)
			if err != nil {
				return err
			}
			var p scriptParams
			if err := decodeAlert(alertOver(old, o), fmt.Sprintf("/%d", i+1), &p); err != nil {
				return err
			}
			sc := p.script()
			sc.ID = id
			if err := webhookMembers(o, &p, &sc, i); err != nil {
				return err
			}
			if err := s.checkScript(ctx, cfg, &sc, i); err != nil {
				return err
			}
			if sc.Scope != catalog.ScopeAction {
				if a := actionUsing(cfg, id); a != nil {
					return errParams(`Cannot update script scope. Script "%s" is used in action "%s".`, sc.Name, a.Name)
				}
			}
			cfg.Scripts[id] = &sc
			out = append(out, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.opts.Logger.Info("api: scripts updated", "by", c.user.Username, "scriptids", out)
	return idResult("scriptids", out), nil
}

// actionUsing returns an action with an operation that runs the script.
func actionUsing(cfg *catalog.AlertConfig, scriptID uint64) *catalog.Action {
	for _, a := range cfg.SortedActions() {
		for _, op := range slices.Concat(a.Operations, a.RecoveryOperations, a.UpdateOperations) {
			if op.OperationType == catalog.OpRemoteCommand && op.ScriptID == scriptID {
				return a
			}
		}
	}
	return nil
}

func (s *Server) scriptDelete(ctx context.Context, c *call) (any, error) {
	list, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	err = s.opts.Alerting.EditAlerts(ctx, func(cfg *catalog.AlertConfig) error {
		for _, id := range list {
			sc := cfg.Scripts[id]
			if sc == nil {
				return errNoPermissions
			}
			if a := actionUsing(cfg, id); a != nil {
				return errApp(`Cannot delete scripts. Script "%s" is used in action operation "%s".`, sc.Name, a.Name)
			}
			delete(cfg.Scripts, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.opts.Logger.Info("api: scripts deleted", "by", c.user.Username, "scriptids", list)
	return idResult("scriptids", list), nil
}

func scriptObject(sc *catalog.GlobalScript) object {
	timeout := sc.Timeout
	if timeout == "" {
		timeout = "30s"
	}
	params := []object{}
	for _, q := range sc.Parameters {
		params = append(params, object{"name": q.Name, "value": q.Value})
	}
	return object{"scriptid": u64(sc.ID), "name": sc.Name, "type": istr(sc.Type), "scope": istr(sc.Scope), "command": sc.Command,
		"execute_on": istr(sc.ExecuteOn), "description": sc.Description, "menu_path": sc.MenuPath, "usrgrpid": u64(sc.UserGroupID),
		"groupid": u64(sc.GroupID), "host_access": istr(sc.HostAccess), "confirmation": sc.Confirmation, "timeout": timeout,
		"authtype": "0", "username": "", "password": "", "publickey": "", "privatekey": "", "port": "", "parameters": field{params}}
}

// userGroupsOf returns the IDs of the user groups user is a member of.
func (s *Server) userGroupsOf(ctx context.Context, user uint64) (map[uint64]bool, error) {
	out := map[uint64]bool{}
	if s.opts.Accounts == nil {
		return out, nil
	}
	gs, err := s.opts.Accounts.UserGroups(ctx)
	if err != nil {
		return nil, errApp("cannot read user groups: %v", err)
	}
	for _, g := range gs {
		if slices.Contains(g.UserIDs, user) {
			out[g.ID] = true
		}
	}
	return out, nil
}

// scriptGetParams are script.get's parameters, a validated get
// (get_valid.go) in the order of 6.0's rules (recorded from 6.0.14).
// The selects take "extend" or a list of fields, never "count"; an
// empty list selects nothing.
type scriptGetParams struct {
	ScriptIDs opt[ids] `json:"scriptids" zbx:"null"`
	HostIDs   opt[ids] `json:"hostids" zbx:"null"`
	GroupIDs  opt[ids] `json:"groupids" zbx:"null"`
	UsrgrpIDs opt[ids] `json:"usrgrpids" zbx:"null"`
	validQuery
	SelectGroups  opt[zoutput] `json:"selectGroups" zbx:"null" in:"groupid,name,flags,internal"`
	SelectHosts   opt[zoutput] `json:"selectHosts" zbx:"null" in:"hostid,host,name,description,status,proxy_hostid,inventory_mode,flags,ipmi_authtype,ipmi_privilege,ipmi_username,ipmi_password,maintenanceid,maintenance_status,maintenance_type,maintenance_from,tls_connect,tls_accept,tls_issuer,tls_subject"`
	SelectActions opt[zoutput] `json:"selectActions" zbx:"null" in:"actionid,name,eventsource,status,esc_period,pause_suppressed,notify_if_canceled"`
	validPage
	Editable     opt[bool] `json:"editable"`
	PreserveKeys opt[bool] `json:"preservekeys"`
}

var scriptNames = validNames{
	output: []string{"scriptid", "name", "command", "host_access", "usrgrpid", "groupid", "description", "confirmation", "type",
		"execute_on", "timeout", "parameters", "scope", "port", "authtype", "username", "password", "publickey", "privatekey", "menu_path"},
	filter: []string{"scriptid", "name", "command", "host_access", "usrgrpid", "groupid", "confirmation", "type", "execute_on", "scope", "menu_path"},
	search: []string{"name", "command", "description", "confirmation", "username", "menu_path"},
	sort:   []string{"scriptid", "name"},
}

func (p *scriptGetParams) adjustRule(r *fieldRule, _ func(string) bool) { scriptNames.adjust(r) }

// scriptSchema is Zabbix 6.0's scripts table, which filter and search
// read.
var scriptSchema = schema{id: "scriptid", named: true, types: fieldTypes(`scriptid:n name:c command:t host_access:n
	usrgrpid:n groupid:n description:t confirmation:c type:n execute_on:n timeout:c scope:n port:c authtype:n
	username:c password:c publickey:c privatekey:c menu_path:c`)}

// selected shapes the objects of a select: every field for "extend",
// else the fields listed; nil when the select is absent or an empty
// list (6.0 then leaves the member out).
func selected(sl opt[zoutput], objs []object) []object {
	if !sl.Given() || sl.Value.fields != nil && len(sl.Value.fields) == 0 {
		return nil
	}
	for i, o := range objs {
		if sl.Value.fields == nil {
			continue
		}
		shaped := object{}
		for _, f := range sl.Value.fields {
			if v, ok := o[f]; ok {
				shaped[f] = v
			}
		}
		objs[i] = shaped
	}
	return objs
}

func (s *Server) scriptGet(ctx context.Context, c *call) (any, error) {
	var p scriptGetParams
	if err := decodeValidated(c.params, &p); err != nil {
		return nil, err
	}
	// A user sees the scripts of their user groups (or of all); a super
	// admin every script.
	var mine map[uint64]bool
	if c.user.Role != RoleSuperAdmin {
		var err error
		if mine, err = s.userGroupsOf(ctx, c.user.ID); err != nil {
			return nil, err
		}
	}
	cfg := s.opts.Alerting.AlertConfig()
	snap := s.opts.Catalog.Snapshot()
	want, wantUG, wantG := idSet(p.ScriptIDs.Value), idSet(p.UsrgrpIDs.Value), idSet(p.GroupIDs.Value)
	var hostGroups map[uint64]bool
	if len(p.HostIDs.Value) > 0 {
		hostGroups = map[uint64]bool{}
		for _, id := range p.HostIDs.Value {
			if h := snap.HostByID(id); h != nil {
				for _, g := range h.GroupIDs {
					hostGroups[g] = true
				}
			}
		}
	}
	var objs []object
	for _, sc := range cfg.SortedScripts() {
		switch {
		case want != nil && !want[sc.ID],
			wantUG != nil && !wantUG[sc.UserGroupID],
			wantG != nil && sc.GroupID != 0 && !wantG[sc.GroupID],
			hostGroups != nil && sc.GroupID != 0 && !hostGroups[sc.GroupID],
			mine != nil && sc.UserGroupID != 0 && !mine[sc.UserGroupID]:
			continue
		}
		o := scriptObject(sc)
		var acts, gs, hs []object
		if p.SelectActions.Given() {
			acts = []object{}
			for _, a := range cfg.SortedActions() {
				if slices.ContainsFunc(slices.Concat(a.Operations, a.RecoveryOperations, a.UpdateOperations), func(op catalog.Operation) bool {
					return op.OperationType == catalog.OpRemoteCommand && op.ScriptID == sc.ID
				}) {
					acts = append(acts, object{"actionid": u64(a.ID), "name": a.Name, "eventsource": istr(a.EventSource),
						"status": istr(a.Status), "esc_period": a.Period, "pause_suppressed": istr(a.PauseSuppressed),
						"notify_if_canceled": istr(a.NotifyIfCanceled)})
				}
			}
		}
		if p.SelectGroups.Given() {
			gs = []object{}
			for _, g := range snap.Groups() {
				if sc.GroupID == 0 || g.ID == sc.GroupID {
					gs = append(gs, groupObject(g))
				}
			}
		}
		if p.SelectHosts.Given() {
			hs = []object{}
			for _, h := range snap.Hosts() {
				if sc.GroupID == 0 || slices.Contains(h.GroupIDs, sc.GroupID) {
					hs = append(hs, hostObject(h))
				}
			}
		}
		for k, l := range map[string][]object{"actions": selected(p.SelectActions, acts), "groups": selected(p.SelectGroups, gs), "hosts": selected(p.SelectHosts, hs)} {
			if l != nil {
				o[k] = l
			}
		}
		objs = append(objs, o)
	}
	g := validGet(&p.validQuery, &p.validPage, p.PreserveKeys)
	return g.applySchema(objs, &scriptSchema, scriptNames.sort...)
}

// scriptsByHosts is script.getscriptsbyhosts: for each host ID given (an
// array, or an object's values), the scripts of every scope the caller
// may run on it, each as script.get's "extend" with the host's macros
// expanded in its confirmation; a host the caller cannot read, or none,
// gets [] (recorded from 6.0.14; 6.0's order is its database's, by name
// here).
func (s *Server) scriptsByHosts(ctx context.Context, c *call) (any, error) {
	raw := bytes.TrimSpace(c.params)
	if k := jsonKindOf(raw); k != 'a' && k != 'o' {
		return nil, errParams(`Invalid parameter "/": an array is expected.`)
	}
	elems := listValues(raw)
	if len(elems) == 0 {
		return []object{}, nil
	}
	hostIDs := make([]uint64, len(elems))
	for i, el := range elems {
		id, ok := parseID(el)
		if !ok {
			return nil, errParams(`Invalid parameter "/hostids/%d": a number is expected.`, i+1)
		}
		hostIDs[i] = id
	}
	acc, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	var mine map[uint64]bool
	if c.user.Role != RoleSuperAdmin {
		if mine, err = s.userGroupsOf(ctx, c.user.ID); err != nil {
			return nil, err
		}
	}
	snap := s.opts.Catalog.Snapshot()
	scripts := s.opts.Alerting.AlertConfig().SortedScripts()
	slices.SortStableFunc(scripts, func(a, b *catalog.GlobalScript) int { return strings.Compare(a.Name, b.Name) })
	out := make(object, len(hostIDs))
	for _, hid := range hostIDs {
		l := []object{}
		if h := snap.HostByID(hid); h != nil && acc.canRead(h) {
			for _, sc := range scripts {
				switch {
				case sc.GroupID != 0 && !slices.Contains(h.GroupIDs, sc.GroupID),
					mine != nil && sc.UserGroupID != 0 && !mine[sc.UserGroupID],
					sc.HostAccess == int(auth.PermReadWrite) && !acc.canWrite(h):
					continue
				}
				o := scriptObject(sc)
				o["confirmation"] = alert.ExpandHost(sc.Confirmation, h)
				l = append(l, o)
			}
		}
		out[id(hid)] = l
	}
	return out, nil
}

// scriptExecute runs a manual script for a host (scope 2, hostid) or an
// event's host (scope 4, eventid), synchronously, bounded by the alert
// engine's command timeout. The caller needs the script's user group
// (unless super admin) and its host access on the host; a host outside
// the script's host group is refused. Answers as Zabbix 6.0:
// {"response": "success", "value": output}, or an application error
// with the command's error.
// scriptExecuteParams are script.execute's parameters; other members
// are ignored, as they always were.
type scriptExecuteParams struct {
	ScriptID opt[uint64] `json:"scriptid"`
	HostID   opt[uint64] `json:"hostid"`
	EventID  opt[uint64] `json:"eventid"`
}

func (s *Server) scriptExecute(ctx context.Context, c *call) (any, error) {
	var p scriptExecuteParams
	if err := decodeLenient(c.params, &p); err != nil {
		return nil, err
	}
	if !p.ScriptID.Set {
		return nil, errParams(`Invalid parameter "/": the parameter "scriptid" is missing.`)
	}
	if p.HostID.Set == p.EventID.Set {
		return nil, errParams(`Invalid parameter "/": either "hostid" or "eventid" is required.`)
	}
	sc := s.opts.Alerting.AlertConfig().Scripts[p.ScriptID.Value]
	if sc == nil {
		return nil, errNoPermissions
	}
	snap := s.opts.Catalog.Snapshot()
	var host *catalog.Host
	var eventTrigger uint64
	if p.HostID.Set {
		if sc.Scope != catalog.ScopeManualHost {
			return nil, errApp("Cannot execute script: it is not a manual host action script.")
		}
		host = snap.HostByID(p.HostID.Value)
	} else {
		if sc.Scope != catalog.ScopeManualEvent {
			return nil, errApp("Cannot execute script: it is not a manual event action script.")
		}
		if s.opts.Events == nil {
			return nil, errNoPermissions
		}
		ev, ok := s.opts.Events.Event(p.EventID.Value)
		if !ok {
			return nil, errNoPermissions
		}
		eventTrigger = ev.ObjectID
	}
	acc, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	if !p.HostID.Set {
		// The event's host: the first of its trigger's hosts the caller
		// can read.
		if t := snap.Trigger(eventTrigger); t != nil {
			for _, hid := range t.HostIDs {
				if h := snap.HostByID(hid); h != nil && acc.canRead(h) {
					host = h
					break
				}
			}
		}
	}
	if host == nil {
		return nil, errNoPermissions
	}
	// Without read permission the host "does not exist"; with read only
	// where the script needs write, the refusal says so.
	if !acc.canRead(host) {
		return nil, errNoPermissions
	}
	if sc.HostAccess == int(auth.PermReadWrite) && !acc.canWrite(host) {
		return nil, errApp("Cannot execute script: write permission on the host is required.")
	}
	if c.user.Role != RoleSuperAdmin && sc.UserGroupID != 0 {
		mine, err := s.userGroupsOf(ctx, c.user.ID)
		if err != nil {
			return nil, err
		}
		if !mine[sc.UserGroupID] {
			return nil, errNoPermissions
		}
	}
	if sc.GroupID != 0 && !slices.Contains(host.GroupIDs, sc.GroupID) {
		return nil, errApp("Cannot execute script: host %q is not in the script's host group.", host.Host)
	}
	s.opts.Logger.Info("api: script executed", "by", c.user.Username, "remote", c.remote, "scriptid", sc.ID, "host", host.Host)
	start := time.Now()
	out, err := s.opts.Alerting.RunScript(ctx, sc, host, alert.ScriptInput(sc, host, nil))
	if err != nil {
		if sc.Type == catalog.ScriptWebhook {
			return nil, errApp("cannot execute script: %s", err.Error()) // 6.0's words
		}
		return nil, errApp("%s", err.Error())
	}
	// 6.0's "debug": a webhook's log lines and run time, [] for a
	// command (recorded from 6.0.14).
	var debug any = []object{}
	if sc.Type == catalog.ScriptWebhook {
		debug = object{"logs": []object{}, "ms": rawJSON(strconv.FormatInt(time.Since(start).Milliseconds(), 10))}
	}
	return object{"response": "success", "value": out, "debug": debug}, nil
}
