package api

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/expr"
)

func (s *Server) registerConfig() {
	s.methods["hostgroup.get"] = &method{role: RoleUser, call: s.hostgroupGet}
	s.methods["host.get"] = &method{role: RoleUser, call: s.hostGet}
	s.methods["item.get"] = &method{role: RoleUser, call: s.itemGet, stream: s.itemGetStream}
	s.methods["hostinterface.get"] = &method{role: RoleUser, call: s.hostinterfaceGet}
	s.methods["valuemap.get"] = &method{role: RoleUser, call: s.valuemapGet}
	s.methods["discoveryrule.get"] = &method{role: RoleUser, call: s.discoveryruleGet}
	s.methods["itemprototype.get"] = &method{role: RoleUser, call: s.itemprototypeGet}
	s.methods["triggerprototype.get"] = &method{role: RoleUser, call: s.triggerprototypeGet}
	s.methods["hostprototype.get"] = &method{role: RoleUser, call: s.hostprototypeGet}
	s.methods["graph.get"] = &method{role: RoleUser, call: s.graphGet}                   // graph.go
	s.methods["graphitem.get"] = &method{role: RoleUser, call: s.graphitemGet}           // graph.go
	s.methods["graphprototype.get"] = &method{role: RoleUser, call: s.graphprototypeGet} // graphprototype.go
	s.methods["task.create"] = &method{role: RoleUser, call: s.taskCreate}
	s.methods["task.get"] = &method{role: RoleUser, call: s.taskGet}
	s.methods["hanode.get"] = &method{role: RoleUser, call: s.hanodeGet}
	s.methods["queue.get"] = &method{role: RoleUser, call: s.queueGet}
	s.methods["configuration.export"] = &method{role: RoleUser, call: s.configurationExport} // configuration_export.go
	s.registerConfigWrite()
	s.registerMacros()
	s.registerMaintenance()
	s.registerRegexps()
	s.registerHTTPTests() // httptest.go
}

// CatalogEditor changes the configuration; *catalog.Catalog implements
// it. When Options.Catalog also implements CatalogEditor, the API serves
// hostgroup.create/update/delete, host.create/update/delete and
// item.create/update/delete. Each call is one catalog Edit: one SQLite
// transaction and one snapshot swap, so what a call created is visible
// to the trapper and to the *.get methods as soon as it returns.
type CatalogEditor interface {
	Edit(ctx context.Context, fn func(e *catalog.Edit) error) (catalog.EditResult, error)
}

// registerConfigWrite registers the write methods if the catalog can be
// edited. hostgroup.create needs a super admin, as in Zabbix; the other
// methods an admin with read-write on the host groups concerned
// (perm.go).
func (s *Server) registerConfigWrite() {
	ed, ok := s.opts.Catalog.(CatalogEditor)
	if !ok {
		return
	}
	w := &configWriter{s: s, ed: ed, cat: s.opts.Catalog}
	s.methods["configuration.import"] = &method{role: RoleAdmin, call: s.configurationImport} // configuration.go
	s.methods["configuration.importcompare"] = &method{role: RoleAdmin, call: s.configurationImportcompare}
	s.registerLLDWrite(w) // discoveryrule_write.go
	s.methods["hostgroup.create"] = &method{role: RoleSuperAdmin, call: w.hostgroupCreate}
	s.methods["hostgroup.update"] = &method{role: RoleAdmin, call: w.hostgroupUpdate}
	s.methods["hostgroup.delete"] = &method{role: RoleAdmin, call: w.hostgroupDelete}
	s.methods["host.create"] = &method{role: RoleAdmin, call: w.hostCreate}
	s.methods["host.update"] = &method{role: RoleAdmin, call: w.hostUpdate}
	s.methods["host.delete"] = &method{role: RoleAdmin, call: w.hostDelete}
	s.methods["hostinterface.create"] = &method{role: RoleAdmin, call: w.hostinterfaceCreate}
	s.methods["hostinterface.update"] = &method{role: RoleAdmin, call: w.hostinterfaceUpdate}
	s.methods["hostinterface.delete"] = &method{role: RoleAdmin, call: w.hostinterfaceDelete}
	s.methods["host.massadd"] = &method{role: RoleAdmin, call: w.hostMassAdd}
	s.methods["host.massremove"] = &method{role: RoleAdmin, call: w.hostMassRemove}
	s.methods["host.massupdate"] = &method{role: RoleAdmin, call: w.hostMassUpdate}
	s.methods["hostgroup.massadd"] = &method{role: RoleAdmin, call: w.hostgroupMassAdd}
	s.methods["hostgroup.massremove"] = &method{role: RoleAdmin, call: w.hostgroupMassRemove}
	s.methods["hostgroup.massupdate"] = &method{role: RoleAdmin, call: w.hostgroupMassUpdate}
	s.methods["hostinterface.massadd"] = &method{role: RoleAdmin, call: w.hostinterfaceMassAdd}
	s.methods["hostinterface.massremove"] = &method{role: RoleAdmin, call: w.hostinterfaceMassRemove}
	s.methods["hostinterface.replacehostinterfaces"] = &method{role: RoleAdmin, call: w.hostinterfaceReplace}
	s.methods["item.create"] = &method{role: RoleAdmin, call: w.itemCreate}
	s.methods["item.update"] = &method{role: RoleAdmin, call: w.itemUpdate}
	s.methods["item.delete"] = &method{role: RoleAdmin, call: w.itemDelete}
	s.methods["valuemap.create"] = &method{role: RoleAdmin, call: w.valuemapCreate}
	s.methods["valuemap.update"] = &method{role: RoleAdmin, call: w.valuemapUpdate}
	s.methods["valuemap.delete"] = &method{role: RoleAdmin, call: w.valuemapDelete}
	w.registerGraphs()             // graph_write.go
	s.registerTemplateDashboards() // templatedashboard.go
}

type configWriter struct {
	s   *Server
	ed  CatalogEditor
	cat Catalog
}

// edit runs fn in one catalog Edit and turns catalog errors into the
// Zabbix API's. idField names the object's ID member ("itemid"). ok, if
// not nil, decides whether the caller may make the change (perm.go); it
// runs inside the Edit, on the snapshot the change applies to, so that a
// concurrent change cannot slip between the check and the write.
func (w *configWriter) edit(ctx context.Context, c *call, idField string, ok permits, fn func(e *catalog.Edit) error) error {
	var a access
	if ok != nil {
		var err error
		if a, err = w.s.access(ctx, c); err != nil {
			return err
		}
	}
	_, err := w.ed.Edit(ctx, func(e *catalog.Edit) error {
		if ok != nil && !a.all() && !ok(w.cat.Snapshot(), a) {
			return errNoPermissions
		}
		return fn(e)
	})
	if err == nil {
		return nil
	}
	return editError(err, idField)
}

// permits reports whether the caller (a) may make a change to the
// catalog as it is (snap). Objects that do not exist pass: the catalog
// then refuses the change with the same error a refusal would give.
type permits func(snap *catalog.Snapshot, a access) bool

// hostsWritable needs read-write on each host.
func hostsWritable(ids []uint64) permits {
	return func(snap *catalog.Snapshot, a access) bool {
		for _, id := range ids {
			if h := snap.HostOrTemplate(id); h != nil && !a.canWrite(h) {
				return false
			}
		}
		return true
	}
}

// itemsWritable needs read-write on each item's host.
func itemsWritable(ids []uint64) permits {
	return func(snap *catalog.Snapshot, a access) bool {
		for _, id := range ids {
			if it := snap.AnyItem(id); it != nil && !a.canWrite(it.Host) {
				return false
			}
		}
		return true
	}
}

// groupsWritable needs read-write on each host group.
func groupsWritable(ids []uint64) permits {
	return func(snap *catalog.Snapshot, a access) bool {
		for _, id := range ids {
			if snap.GroupByID(id) != nil && !a.seesGroup(id, true) {
				return false
			}
		}
		return true
	}
}

// allOf needs every one of ps.
func allOf(ps ...permits) permits {
	return func(snap *catalog.Snapshot, a access) bool {
		for _, p := range ps {
			if !p(snap, a) {
				return false
			}
		}
		return true
	}
}

func editError(err error, idField string) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	// Report the first of several errors, as Zabbix stops at the first.
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		err = j.Unwrap()[0]
	}
	var ce *catalog.ConflictError
	if errors.As(err, &ce) {
		switch ce.Kind {
		case catalog.GroupExists:
			return errParams(`Host group "%s" already exists.`, ce.Name)
		case catalog.HostExists:
			if ce.Template {
				return errParams(`Template with the same name "%s" already exists.`, ce.Host)
			}
			return errParams(`Host with the same name "%s" already exists.`, ce.Host)
		case catalog.VisibleNameExists:
			if ce.Template {
				return errParams(`Template with the same visible name "%s" already exists.`, ce.Name)
			}
			return errParams(`Host with the same visible name "%s" already exists.`, ce.Name)
		case catalog.ItemExists:
			if ce.Template {
				return errParams(`Item "%s" already exists on "%s", inherited from another template.`, ce.Name, ce.Host)
			}
			return errParams(`Item with key "%s" already exists on "%s".`, ce.Name, ce.Host)
		case catalog.MacroExists:
			if ce.Host == "" {
				return errParams(`Macro "%s" already exists.`, ce.Name)
			}
			return errParams(`Macro "%s" already exists on "%s".`, ce.Name, ce.Host)
		case catalog.TriggerExists:
			return errParams(`Trigger "%s" already exists on "%s".`, ce.Name, ce.Host)
		case catalog.MaintenanceExists:
			return errParams(`Maintenance "%s" already exists.`, ce.Name)
		case catalog.HostWithoutGroup:
			if ce.Template {
				return errParams(`Template "%s" cannot be without host group.`, ce.Host)
			}
			return errParams(`Host "%s" cannot be without host group.`, ce.Host)
		case catalog.TwoDefaultInterfaces:
			return errParams("Host cannot have more than one default interface of the same type.")
		case catalog.NoDefaultInterface:
			return errParams(`No default interface for "%s" type on "%s".`, ce.Name, ce.Host)
		case catalog.InterfaceInUse:
			return errParams(`Interface is linked to item "%s" on "%s".`, ce.Name, ce.Host)
		case catalog.NoInterface:
			return errParams("No interface found.")
		case catalog.ForeignInterface:
			return errParams("Item uses host interface from non-parent host.")
		case catalog.WrongInterfaceType:
			return errParams("Item uses incorrect interface type.")
		case catalog.RegexpExists:
			return errParams(`Regular expression "%s" already exists.`, ce.Name)
		}
	}
	var px *catalog.ProxyExistsError
	if errors.As(err, &px) {
		return errParams("%s", px.Error())
	}
	var pu *catalog.ProxyInUseError
	if errors.As(err, &pu) {
		return errParams("%s", pu.Error())
	}
	if e := ifaceProblem(err); e != nil {
		return e
	}
	if e := inheritProblem(err); e != nil {
		return e
	}
	var re *catalog.ExprRefError
	if errors.As(err, &re) {
		return errParams("%s", re.Error())
	}
	var iv *catalog.IncorrectValue
	if errors.As(err, &iv) {
		return errParams(`Incorrect value for field "%s": %s.`, iv.Field, iv.Reason)
	}
	if errors.Is(err, catalog.ErrMaintenanceEmpty) {
		// Recorded from 6.0.14: no path, a capital.
		return errParams("At least one host group or host must be selected.")
	}
	if errors.Is(err, catalog.ErrNotFound) {
		return errNoPermissions
	}
	var fe *catalog.FieldError
	if errors.As(err, &fe) {
		if e := masterError(fe, idField); e != nil {
			return e
		}
		var pe *expr.ParseError
		if errors.As(fe.Err, &pe) {
			// An expression that does not parse, in 6.0's words.
			return errParams(`Invalid parameter "%s": %s.`, apiPath(fe.Field, idField), pe.Zabbix())
		}
		return errParams(`Invalid parameter "%s": %s.`, apiPath(fe.Field, idField), strings.TrimSuffix(fe.Err.Error(), "."))
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errApp("The request was cancelled before the change was committed; nothing was changed.")
	}
	return errApp("%v", err)
}

// apiPath turns a catalog field path into the API's: "items[3].key"
// becomes "/4/key_", "hosts[0].groups[1]" "/1/groups/2", "groups[2].id"
// "/3/groupid" (for idField "groupid").
func apiPath(field, idField string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(field, ".") {
		name, idx, hasIdx := strings.Cut(part, "[")
		if b.Len() > 0 || !hasIdx { // the leading collection name is the params array itself
			switch name {
			case "key":
				name = "key_"
			case "id":
				name = idField
			}
			b.WriteByte('/')
			b.WriteString(name)
		}
		if hasIdx {
			n, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			if err != nil {
				n = -1
			}
			b.WriteByte('/')
			b.WriteString(strconv.Itoa(n + 1))
		}
	}
	return b.String()
}

// masterError words the catalog's refusals of a dependent item's master
// as Zabbix's API does (`Incorrect value for field "master_itemid": ...`);
// nil for other errors. The catalog's messages are matched by their
// words: TestItemDependentErrors pins them.
func masterError(fe *catalog.FieldError, idField string) *Error {
	field := fe.Field
	if !strings.HasSuffix(field, ".master_itemid") && !strings.HasSuffix(field, ".master_item") {
		return nil
	}
	msg := fe.Err.Error()
	switch {
	case strings.Contains(msg, "cycle"):
		return errParams(`Incorrect value for field "master_itemid": circular item dependency is not allowed.`)
	case strings.Contains(msg, "levels"):
		return errParams(`Incorrect value for field "master_itemid": maximum number of dependency levels reached.`)
	case strings.Contains(msg, "another host"):
		return errParams(`Incorrect value for field "master_itemid": hostid of dependent item and master item should match.`)
	case strings.Contains(msg, "does not exist"), errors.Is(fe.Err, catalog.ErrNotFound):
		return errNoPermissions
	case strings.Contains(msg, "needs a master"):
		obj, _, _ := strings.Cut(apiPath(field, idField), "/master_item")
		return errParams(`Invalid parameter "%s": the parameter "master_itemid" is missing.`, obj)
	}
	return nil
}

// ifaceProblem words a host interface's refused address or port as
// Zabbix 6.0's host.create/update and hostinterface.create/update do
// (recorded from 6.0.14); nil for other errors.
func ifaceProblem(err error) *Error {
	var ie *catalog.IfaceError
	if !errors.As(err, &ie) {
		return nil
	}
	switch ie.Problem {
	case catalog.IfaceNoAddress:
		return errParams("IP and DNS cannot be empty for host interface.")
	case catalog.IfaceNoIP:
		return errParams(`Interface with DNS "%s" cannot have empty IP address.`, ie.Value)
	case catalog.IfaceNoDNS:
		return errParams(`Interface with IP "%s" cannot have empty DNS name while having "Use DNS" property on "%s".`, ie.Value, ie.Host)
	case catalog.IfaceBadIP:
		return errParams(`Invalid IP address "%s".`, ie.Value)
	case catalog.IfaceBadDNS:
		return errParams(`Incorrect interface DNS parameter "%s" provided.`, ie.Value)
	case catalog.IfaceBadPort:
		return errParams(`Incorrect interface port "%s" provided.`, ie.Value)
	}
	return nil
}

// inheritProblem words the catalog's refusals about templates and their
// copies as Zabbix 6.0 does (recorded from 6.0.14: internal/conformance
// case templates); nil for other errors.
func inheritProblem(err error) *Error {
	var le *catalog.LinkError
	if errors.As(err, &le) {
		switch {
		case len(le.Cycle) > 0:
			return errParams(`Cannot link template "%s" to template "%s", because a circular linkage ("%s") would occur.`,
				le.Template, le.Host, strings.Join(le.Cycle, `" -> "`))
		case le.Twice:
			return errParams("Template cannot be linked to another template more than once even through other templates.")
		case le.Template != "":
			return errParams(`Trigger has items from template "%s" that is not linked to host.`, le.Template)
		}
		return errParams(`Cannot find host interface on "%s" for item key "%s".`, le.Host, le.Key)
	}
	var te *catalog.TemplatedError
	if errors.As(err, &te) {
		switch {
		case te.Kind == "item" && te.Op == "delete":
			return errParams("Cannot delete templated item.")
		case te.Op == "delete":
			return errParams(`Cannot delete templated trigger "%s:%s".`, te.Name, te.Expression)
		case te.Kind == "trigger":
			return errParams(`Cannot update "%s" for templated trigger "%s".`, te.Field, te.Name)
		}
		return errParams(`Cannot update "%s" for templated item "%s".`, te.Field, te.Name)
	}
	if errors.Is(err, catalog.ErrMixedTrigger) {
		return errParams("Incorrect trigger expression. Trigger expression elements should not belong to a template and a host simultaneously.")
	}
	return nil
}
