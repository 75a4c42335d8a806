package api

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

func (s *Server) registerConfig() {
	s.methods["hostgroup.get"] = &method{role: RoleUser, call: s.hostgroupGet}
	s.methods["host.get"] = &method{role: RoleUser, call: s.hostGet}
	s.methods["item.get"] = &method{role: RoleUser, call: s.itemGet}
	s.registerConfigWrite()
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
// methods an admin (Peregrine has no per-group permissions, so an admin
// may change every host).
func (s *Server) registerConfigWrite() {
	ed, ok := s.opts.Catalog.(CatalogEditor)
	if !ok {
		return
	}
	w := &configWriter{ed: ed, cat: s.opts.Catalog}
	s.methods["hostgroup.create"] = &method{role: RoleSuperAdmin, call: w.hostgroupCreate}
	s.methods["hostgroup.update"] = &method{role: RoleAdmin, call: w.hostgroupUpdate}
	s.methods["hostgroup.delete"] = &method{role: RoleAdmin, call: w.hostgroupDelete}
	s.methods["host.create"] = &method{role: RoleAdmin, call: w.hostCreate}
	s.methods["host.update"] = &method{role: RoleAdmin, call: w.hostUpdate}
	s.methods["host.delete"] = &method{role: RoleAdmin, call: w.hostDelete}
	s.methods["item.create"] = &method{role: RoleAdmin, call: w.itemCreate}
	s.methods["item.update"] = &method{role: RoleAdmin, call: w.itemUpdate}
	s.methods["item.delete"] = &method{role: RoleAdmin, call: w.itemDelete}
}

type configWriter struct {
	ed  CatalogEditor
	cat Catalog
}

// edit runs fn in one catalog Edit and turns catalog errors into the
// Zabbix API's. idField names the object's ID member ("itemid").
func (w *configWriter) edit(ctx context.Context, idField string, fn func(e *catalog.Edit) error) error {
	_, err := w.ed.Edit(ctx, fn)
	if err == nil {
		return nil
	}
	return editError(err, idField)
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
			return errParams(`Host with the same name "%s" already exists.`, ce.Host)
		case catalog.VisibleNameExists:
			return errParams(`Host with the same visible name "%s" already exists.`, ce.Name)
		case catalog.ItemExists:
			return errParams(`Item with key "%s" already exists on "%s".`, ce.Name, ce.Host)
		case catalog.HostWithoutGroup:
			return errParams(`Host "%s" cannot be without host group.`, ce.Host)
		}
	}
	if errors.Is(err, catalog.ErrNotFound) {
		return errNoPermissions
	}
	var fe *catalog.FieldError
	if errors.As(err, &fe) {
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
