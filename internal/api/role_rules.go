package api

import (
	"context"
	"errors"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/auth"
)

// The API part of user roles (Zabbix 6.0): which methods a role's users
// may call. Every call that needs a login passes roleAllows after the
// user type check: a role with api.access 0 calls nothing, api.mode 0
// makes its "api" list a deny list and 1 an allow list, and a method
// tied to an action (token.* to manage_api_tokens, script.execute to
// execute_scripts, ...) needs the action. Refusals are Zabbix's:
// -32602 'No permissions to call "x.y".'.

// zabbixMethod is one method of Zabbix 6.0's API that a role's rules
// name: the least user type that may call it and the action it needs.
type zabbixMethod struct {
	minType auth.Role
	action  string
}

// zabbixMethodTable lists Zabbix 6.0.14's API methods that need a login,
// by least user type and action (each service's ACCESS_RULES, recorded
// from the peer's frontend): the names a role's "api" rules may use.
var zabbixMethodTable = []struct {
	minType auth.Role
	action  string
	names   string
}{
	{1, "", "action.get alert.get configuration.export configuration.import configuration.importcompare " +
		"correlation.get dashboard.get dcheck.get dhost.get discoveryrule.get drule.get dservice.get " +
		"event.get event.acknowledge graph.get graphitem.get graphprototype.get hanode.get host.get " +
		"hostgroup.get hostprototype.get history.get hostinterface.get housekeeping.get httptest.get " +
		"image.get iconmap.get item.get itemprototype.get maintenance.get map.get mediatype.get module.get " +
		"problem.get proxy.get role.get service.get service.create service.update service.delete sla.get " +
		"sla.getsli script.get script.getscriptsbyhosts settings.get template.get templatedashboard.get " +
		"trend.get trigger.get triggerprototype.get user.get user.update user.logout usergroup.get " +
		"usermacro.get valuemap.get"},
	{1, "edit_dashboards", "dashboard.create dashboard.update dashboard.delete"},
	{1, "edit_maps", "map.create map.update map.delete"},
	{1, "execute_scripts", "script.execute"},
	{1, "manage_api_tokens", "token.create token.delete token.get token.update token.generate"},
	{2, "", "action.create action.update action.delete discoveryrule.create discoveryrule.update " +
		"discoveryrule.delete drule.create drule.update drule.delete graph.create graph.update graph.delete " +
		"graphprototype.create graphprototype.update graphprototype.delete host.create host.update " +
		"host.delete host.massadd host.massupdate host.massremove hostgroup.update hostgroup.delete " +
		"hostgroup.massadd hostgroup.massupdate hostgroup.massremove hostprototype.create " +
		"hostprototype.update hostprototype.delete history.clear hostinterface.create hostinterface.update " +
		"hostinterface.delete hostinterface.replacehostinterfaces hostinterface.massadd " +
		"hostinterface.massremove httptest.create httptest.update httptest.delete item.create item.update " +
		"item.delete itemprototype.create itemprototype.update itemprototype.delete report.get " +
		"template.create template.update template.delete template.massadd template.massupdate " +
		"template.massremove templatedashboard.create templatedashboard.update templatedashboard.delete " +
		"trigger.create trigger.update trigger.delete trigger.adddependencies trigger.deletedependencies " +
		"triggerprototype.create triggerprototype.update triggerprototype.delete usermacro.create " +
		"usermacro.update usermacro.delete valuemap.create valuemap.update valuemap.delete"},
	{2, "edit_maintenance", "maintenance.create maintenance.update maintenance.delete"},
	{2, "manage_scheduled_reports", "report.create report.update report.delete"},
	{2, "manage_sla", "sla.create sla.update sla.delete"},
	{3, "", "auditlog.get authentication.get authentication.update autoregistration.get autoregistration.update " +
		"correlation.create correlation.update correlation.delete hostgroup.create housekeeping.update " +
		"image.create image.update image.delete iconmap.create iconmap.update iconmap.delete mediatype.create " +
		"mediatype.update mediatype.delete module.create module.update module.delete proxy.create " +
		"proxy.update proxy.delete regexp.get regexp.create regexp.update regexp.delete role.create " +
		"role.update role.delete script.create script.update script.delete settings.update task.get " +
		"task.create user.create user.delete user.unblock usergroup.create usergroup.update usergroup.delete " +
		"usermacro.createglobal usermacro.updateglobal usermacro.deleteglobal"},
}

// zabbixMethods is zabbixMethodTable by lowercase name, with the
// services and method names the masks "service.*" and "*.method" may
// use.
var zabbixMethods, apiServices, apiMethodNames = func() (map[string]zabbixMethod, map[string]bool, map[string]bool) {
	m, svc, names := map[string]zabbixMethod{}, map[string]bool{}, map[string]bool{}
	for _, row := range zabbixMethodTable {
		for _, n := range strings.Fields(row.names) {
			m[n] = zabbixMethod{minType: row.minType, action: row.action}
			s, meth, _ := strings.Cut(n, ".")
			svc[s], names[meth] = true, true
		}
	}
	return m, svc, names
}()

// validAPIRule reports whether rule may be in a role's "api" list: "*"
// (or "*.*"), a method of the table, "service.*" or "*.method" for a
// service or method name it has. Names are compared as given: Zabbix
// refuses "HOST.GET".
func validAPIRule(rule string) bool {
	if rule == "*" || rule == "*.*" {
		return true
	}
	if _, ok := zabbixMethods[rule]; ok {
		return true
	}
	s, m, ok := strings.Cut(rule, ".")
	switch {
	case !ok:
		return false
	case m == "*":
		return apiServices[s]
	case s == "*":
		return apiMethodNames[m]
	}
	return false
}

// apiRuleMatches reports whether rule names method (lowercase).
func apiRuleMatches(rule, method string) bool {
	if rule == "*" || rule == "*.*" || rule == method {
		return true
	}
	rs, rm, _ := strings.Cut(rule, ".")
	ms, mm, _ := strings.Cut(method, ".")
	return rs == "*" && rm == mm || rm == "*" && rs == ms
}

// roleAllows reports whether the rules of u's role let u call method.
// Without the accounts store (tests with a fake Authenticator), or for a
// role that no longer exists, the user type alone decides.
func (s *Server) roleAllows(ctx context.Context, u User, method string) (bool, error) {
	if s.opts.Accounts == nil || u.RoleID == 0 {
		return true, nil
	}
	r, err := s.opts.Accounts.RoleRules(ctx, u.RoleID)
	if errors.Is(err, auth.ErrNotFound) {
		return true, nil // deleted meanwhile: the type decides
	}
	if err != nil {
		return false, err
	}
	return rulesAllow(r, strings.ToLower(method)), nil
}

// rulesAllow is roleAllows for the rules of a role.
func rulesAllow(r *auth.RoleRules, method string) bool {
	if r.APIAccess == 0 {
		return false
	}
	listed := false
	for _, rule := range r.API {
		if apiRuleMatches(rule, method) {
			listed = true
			break
		}
	}
	if r.APIMode == 1 && !listed || r.APIMode == 0 && listed {
		return false
	}
	if zm, ok := zabbixMethods[method]; ok && zm.action != "" && r.ActionStatus(zm.action) != 1 {
		return false
	}
	return true
}
