package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

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

// --- parameter types ---

// jstring is a string member that records its presence. Like Zabbix, it
// takes only JSON strings.
type jstring struct {
	set bool
	v   string
}

func (s *jstring) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		return typeError(b, reflect.String)
	}
	s.set = true
	if len(b) >= 2 && bytes.IndexByte(b, '\\') < 0 {
		// No escapes: the bytes between the quotes are the value. Invalid
		// UTF-8 is kept and refused by the catalog, not replaced.
		s.v = string(b[1 : len(b)-1])
		return nil
	}
	return json.Unmarshal(b, &s.v)
}

// jtime is a time unit ("30s", "90d"); Zabbix also takes a bare integer.
type jtime struct {
	set bool
	v   string
}

func (s *jtime) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] >= '0' && b[0] <= '9' {
		if _, err := strconv.ParseUint(string(b), 10, 63); err != nil {
			return typeError(b, reflect.String)
		}
		s.set, s.v = true, string(b)
		return nil
	}
	var js jstring
	if err := js.UnmarshalJSON(b); err != nil {
		return err
	}
	s.set, s.v = true, js.v
	return nil
}

// jint is an integer given as a number or a numeric string (Zabbix
// API_INT32).
type jint struct {
	set bool
	v   int64
}

func (n *jint) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return typeError(b, reflect.Int64)
	}
	n.set, n.v = true, v
	return nil
}

// jid is an ID given as a number or a string.
type jid struct {
	set bool
	v   uint64
}

func (n *jid) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return typeError(b, reflect.Uint64)
	}
	n.set, n.v = true, v
	return nil
}

// groupList is a host's "groups": an array of {"groupid": ...} objects
// or, as Zabbix allows, one such object. Other members of the objects (a
// whole hostgroup.get object) are ignored.
type groupList struct {
	set bool
	ids []uint64
}

func (l *groupList) UnmarshalJSON(b []byte) error {
	var elems []json.RawMessage
	switch {
	case len(b) > 0 && b[0] == '{':
		elems = []json.RawMessage{b}
	case len(b) > 0 && b[0] == '[':
		if err := json.Unmarshal(b, &elems); err != nil {
			return err
		}
	default:
		return &paramError{path: "groups", msg: "an array is expected"}
	}
	l.set, l.ids = true, make([]uint64, 0, len(elems))
	for j, el := range elems {
		path := "groups/" + strconv.Itoa(j+1)
		var v struct {
			GroupID *jid `json:"groupid"`
		}
		if len(el) == 0 || el[0] != '{' {
			return &paramError{path: path, msg: "an object is expected"}
		}
		if err := json.Unmarshal(el, &v); err != nil {
			return &paramError{path: path + "/groupid", msg: "a number is expected"}
		}
		if v.GroupID == nil {
			return &paramError{path: path, msg: `the parameter "groupid" is missing`}
		}
		l.ids = append(l.ids, v.GroupID.v)
	}
	return nil
}

// tagList is a host's "tags": an array of {"tag": ..., "value": ...}.
type tagList struct {
	set  bool
	tags []catalog.Tag
}

func (l *tagList) UnmarshalJSON(b []byte) error {
	var elems []json.RawMessage
	if len(b) == 0 || b[0] != '[' || json.Unmarshal(b, &elems) != nil {
		return &paramError{path: "tags", msg: "an array is expected"}
	}
	l.set, l.tags = true, make([]catalog.Tag, 0, len(elems))
	for j, el := range elems {
		path := "tags/" + strconv.Itoa(j+1)
		var v struct {
			Tag   *jstring `json:"tag"`
			Value jstring  `json:"value"`
		}
		if len(el) == 0 || el[0] != '{' {
			return &paramError{path: path, msg: "an object is expected"}
		}
		dec := json.NewDecoder(bytes.NewReader(el))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) {
				return &paramError{path: path + "/" + ute.Field, msg: expected(ute.Type)}
			}
			f, _ := strings.CutPrefix(err.Error(), "json: unknown field ")
			return &paramError{path: path, msg: "unexpected parameter " + f}
		}
		switch {
		case v.Tag == nil:
			return &paramError{path: path, msg: `the parameter "tag" is missing`}
		case v.Tag.v == "":
			return &paramError{path: path + "/tag", msg: "cannot be empty"}
		}
		t := catalog.Tag{Tag: v.Tag.v, Value: v.Value.v}
		if slices.Contains(l.tags, t) {
			return &paramError{path: path, msg: "value (tag, value)=(" + t.Tag + ", " + t.Value + ") already exists"}
		}
		l.tags = append(l.tags, t)
	}
	return nil
}

// paramError is a decoding error with the member path already known
// ("groups/2/groupid"); encoding/json passes it through unchanged.
type paramError struct{ path, msg string }

func (e *paramError) Error() string { return e.path + ": " + e.msg }

// notStored is a member Peregrine accepts and does not store. It takes no
// room, so a batch of 10,000 objects stays small.
type notStored struct{}

func (notStored) UnmarshalJSON([]byte) error { return nil }

// jlist is a member that is an array (or, as Zabbix allows, one object)
// of elements Peregrine accepts but does not store. present reports a
// non-empty value.
type jlist struct{ n int }

func (l *jlist) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '{':
		if string(bytes.Join(bytes.Fields(b), nil)) != "{}" {
			l.n = 1
		}
		return nil
	case len(b) > 0 && b[0] == '[':
		var v []json.RawMessage
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		l.n = len(v)
		return nil
	}
	return typeError(b, reflect.Slice)
}

// typeError reports a member of the wrong JSON type; encoding/json adds
// the member's path.
func typeError(b []byte, want reflect.Kind) error {
	var t reflect.Type
	switch want {
	case reflect.String:
		t = reflect.TypeFor[string]()
	case reflect.Int64:
		t = reflect.TypeFor[int64]()
	case reflect.Uint64:
		t = reflect.TypeFor[uint64]()
	case reflect.Slice:
		t = reflect.TypeFor[[]any]()
	default:
		t = reflect.TypeFor[struct{}]()
	}
	v := "value"
	if len(b) > 0 {
		v = string(b[:min(len(b), 32)])
	}
	return &json.UnmarshalTypeError{Value: v, Type: t}
}

// expected is Zabbix's wording for a member of the wrong type.
func expected(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a character string is expected"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "an integer is expected"
	case reflect.Uint64:
		return "a number is expected"
	case reflect.Slice:
		return "an array is expected"
	}
	return "an object is expected"
}

// decodeObjects decodes params, one object or an array of them, into
// out, rejecting unknown members. Errors name the element as Zabbix does:
// "/1/key_" for the first object's key_.
func decodeObjects[T any](params json.RawMessage, out *[]T) error {
	raw := bytes.TrimSpace(params)
	if len(raw) > 0 && raw[0] == '{' {
		raw = append(append([]byte{'['}, raw...), ']')
	}
	if len(raw) == 0 || raw[0] != '[' {
		return errParams(`Invalid parameter "/": an array or object is expected.`)
	}
	// Fast path: the whole batch at once. Only if it fails, find the
	// element to blame (encoding/json reports no index).
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(out)
	if err == nil {
		if len(*out) == 0 {
			return errParams(`Invalid parameter "/": cannot be empty.`)
		}
		return nil
	}
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return errParams(`Invalid parameter "/": an array or object is expected.`)
	}
	for i, el := range elems {
		var v T
		dec := json.NewDecoder(bytes.NewReader(el))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return memberError(i+1, el, &v, err)
		}
	}
	return errParams(`Invalid parameter "/": %v.`, err)
}

// memberError turns the error decoding element i (1-based) of a batch,
// el, into v into Zabbix's wording, naming the member at fault.
func memberError(i int, el json.RawMessage, v any, err error) error {
	var pe *paramError
	if errors.As(err, &pe) {
		return errParams(`Invalid parameter "/%d/%s": %s.`, i, pe.path, pe.msg)
	}
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		if ute.Field == "" {
			return errParams(`Invalid parameter "/%d": %s.`, i, expected(ute.Type))
		}
		return errParams(`Invalid parameter "/%d/%s": %s.`, i, strings.ReplaceAll(ute.Field, ".", "/"), expected(ute.Type))
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return errParams(`Invalid parameter "/%d": unexpected parameter %s.`, i, f)
	}
	// A custom unmarshaler's own error carries no member name.
	if f := badField(el, v); f != "" {
		return errParams(`Invalid parameter "/%d/%s": %v.`, i, f, err)
	}
	return errParams(`Invalid parameter "/%d": %v.`, i, err)
}

// decodeIDs decodes the params of a *.delete method: an array of IDs.
func decodeIDs(params json.RawMessage) ([]uint64, error) {
	raw := bytes.TrimSpace(params)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, errParams(`Invalid parameter "/": an array is expected.`)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, errParams(`Invalid parameter "/": an array is expected.`)
	}
	if len(elems) == 0 {
		return nil, errParams(`Invalid parameter "/": cannot be empty.`)
	}
	out := make([]uint64, len(elems))
	seen := make(map[uint64]bool, len(elems))
	for i, el := range elems {
		var id jid
		if id.UnmarshalJSON(bytes.TrimSpace(el)) != nil {
			return nil, errParams(`Invalid parameter "/%d": a number is expected.`, i+1)
		}
		if seen[id.v] {
			return nil, errParams(`Invalid parameter "/%d": value (%d) already exists.`, i+1, id.v)
		}
		seen[id.v] = true
		out[i] = id.v
	}
	return out, nil
}

func missing(i int, name string) error {
	return errParams(`Invalid parameter "/%d": the parameter "%s" is missing.`, i+1, name)
}

func empty(i int, name string) error {
	return errParams(`Invalid parameter "/%d/%s": cannot be empty.`, i+1, name)
}

func oneOf(i int, name, values string) error {
	return errParams(`Invalid parameter "/%d/%s": value must be one of %s.`, i+1, name, values)
}

func unsupported(i int, name, what string) error {
	return errParams(`Invalid parameter "/%d/%s": %s are not supported by Peregrine.`, i+1, name, what)
}

// idResult is the result of a write method: {"itemids": ["1", ...]}.
func idResult(name string, ids []uint64) any {
	s := make([]string, len(ids))
	for i, v := range ids {
		s[i] = id(v)
	}
	return object{name: s}
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

// --- host groups ---

type hostgroupParams struct {
	GroupID  jid       `json:"groupid"`
	Name     jstring   `json:"name"`
	UUID     notStored `json:"uuid"`     // accepted, not stored
	Flags    notStored `json:"flags"`    // read-only in Zabbix; accepted as hostgroup.get returns it
	Internal notStored `json:"internal"` // likewise
}

func (w *configWriter) hostgroupCreate(ctx context.Context, c *call) (any, error) {
	var ps []hostgroupParams
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		switch {
		case p.GroupID.set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "groupid".`, i+1)
		case !p.Name.set:
			return nil, missing(i, "name")
		case p.Name.v == "":
			return nil, empty(i, "name")
		}
		names[i] = p.Name.v
	}
	var ids []uint64
	err := w.edit(ctx, "groupid", func(e *catalog.Edit) (err error) {
		ids, err = e.CreateGroups(names)
		return err
	})
	if err != nil {
		return nil, err
	}
	return idResult("groupids", ids), nil
}

func (w *configWriter) hostgroupUpdate(ctx context.Context, c *call) (any, error) {
	var ps []hostgroupParams
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	var renames []catalog.Group
	ids := make([]uint64, len(ps))
	for i, p := range ps {
		if !p.GroupID.set {
			return nil, missing(i, "groupid")
		}
		ids[i] = p.GroupID.v
		if p.Name.set {
			if p.Name.v == "" {
				return nil, empty(i, "name")
			}
			renames = append(renames, catalog.Group{ID: p.GroupID.v, Name: p.Name.v})
		}
	}
	err := w.edit(ctx, "groupid", func(e *catalog.Edit) error {
		if len(renames) < len(ids) {
			// Groups named by ID only must exist all the same.
			for i, id := range ids {
				if w.cat.Snapshot().GroupByID(id) == nil && !slices.ContainsFunc(renames, func(g catalog.Group) bool { return g.ID == id }) {
					return &catalog.FieldError{Field: "groups[" + strconv.Itoa(i) + "].id", Err: catalog.ErrNotFound}
				}
			}
		}
		return e.RenameGroups(renames)
	})
	if err != nil {
		return nil, err
	}
	return idResult("groupids", ids), nil
}

func (w *configWriter) hostgroupDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	if err := w.edit(ctx, "groupid", func(e *catalog.Edit) error { return e.DeleteGroups(ids) }); err != nil {
		return nil, err
	}
	return idResult("groupids", ids), nil
}

// --- hosts ---

// hostParams are the members of a Zabbix 6.0 host object that host.create
// and host.update take. Those Peregrine does not model are accepted and
// ignored (interfaces, inventory, TLS and IPMI settings), except
// templates and macros: ignoring those would silently lose items and
// configuration, so they must be empty.
type hostParams struct {
	HostID     jid       `json:"hostid"`
	Host       jstring   `json:"host"`
	Name       jstring   `json:"name"`
	Status     jint      `json:"status"`
	Groups     groupList `json:"groups"`
	Templates  jlist     `json:"templates"`
	Macros     jlist     `json:"macros"`
	TemplClear jlist     `json:"templates_clear"`
	Tags       tagList   `json:"tags"`

	Interfaces     notStored `json:"interfaces"`
	Description    notStored `json:"description"`
	Inventory      notStored `json:"inventory"`
	InventoryMode  notStored `json:"inventory_mode"`
	ProxyHostID    notStored `json:"proxy_hostid"`
	IPMIAuthType   notStored `json:"ipmi_authtype"`
	IPMIPrivilege  notStored `json:"ipmi_privilege"`
	IPMIUsername   notStored `json:"ipmi_username"`
	IPMIPassword   notStored `json:"ipmi_password"`
	TLSConnect     notStored `json:"tls_connect"`
	TLSAccept      notStored `json:"tls_accept"`
	TLSIssuer      notStored `json:"tls_issuer"`
	TLSSubject     notStored `json:"tls_subject"`
	TLSPSKIdentity notStored `json:"tls_psk_identity"`
	TLSPSK         notStored `json:"tls_psk"`
	UUID           notStored `json:"uuid"`
	Flags          notStored `json:"flags"`
	Available      notStored `json:"available"`
}

// common validates the members host.create and host.update share.
func (p *hostParams) common(i int) error {
	switch {
	case p.Status.set && p.Status.v != 0 && p.Status.v != 1:
		return oneOf(i, "status", "0, 1")
	case p.Templates.n > 0:
		return unsupported(i, "templates", "templates")
	case p.TemplClear.n > 0:
		return unsupported(i, "templates_clear", "templates")
	case p.Macros.n > 0:
		return unsupported(i, "macros", "user macros")
	case p.Groups.set && len(p.Groups.ids) == 0:
		return empty(i, "groups")
	}
	for j, g := range p.Groups.ids {
		if slices.Contains(p.Groups.ids[:j], g) {
			return errParams(`Invalid parameter "/%d/groups/%d": value (groupid)=(%d) already exists.`, i+1, j+1, g)
		}
	}
	return nil
}

func (w *configWriter) hostCreate(ctx context.Context, c *call) (any, error) {
	var ps []hostParams
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	hosts := make([]catalog.NewHost, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case p.HostID.set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "hostid".`, i+1)
		case !p.Host.set:
			return nil, missing(i, "host")
		case p.Host.v == "":
			return nil, empty(i, "host")
		case !p.Groups.set:
			return nil, missing(i, "groups")
		}
		if err := p.common(i); err != nil {
			return nil, err
		}
		hosts[i] = catalog.NewHost{Host: p.Host.v, Name: p.Name.v, Disabled: p.Status.v == 1, GroupIDs: p.Groups.ids, Tags: p.Tags.tags}
	}
	var ids []uint64
	err := w.edit(ctx, "hostid", func(e *catalog.Edit) (err error) {
		ids, err = e.CreateHosts(hosts)
		return err
	})
	if err != nil {
		return nil, err
	}
	return idResult("hostids", ids), nil
}

func (w *configWriter) hostUpdate(ctx context.Context, c *call) (any, error) {
	var ps []hostParams
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	ups := make([]catalog.HostUpdate, len(ps))
	ids := make([]uint64, len(ps))
	for i := range ps {
		p := &ps[i]
		if !p.HostID.set {
			return nil, missing(i, "hostid")
		}
		if p.Host.set && p.Host.v == "" {
			return nil, empty(i, "host")
		}
		if err := p.common(i); err != nil {
			return nil, err
		}
		u := catalog.HostUpdate{ID: p.HostID.v}
		if p.Host.set {
			u.Host = &p.Host.v
		}
		if p.Name.set {
			u.Name = &p.Name.v
		}
		if p.Status.set {
			u.Enabled = new(p.Status.v == 0)
		}
		if p.Groups.set {
			u.GroupIDs = p.Groups.ids
		}
		if p.Tags.set {
			u.Tags = &p.Tags.tags
		}
		ups[i], ids[i] = u, p.HostID.v
	}
	if err := w.edit(ctx, "hostid", func(e *catalog.Edit) error { return e.UpdateHosts(ups) }); err != nil {
		return nil, err
	}
	return idResult("hostids", ids), nil
}

func (w *configWriter) hostDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	if err := w.edit(ctx, "hostid", func(e *catalog.Edit) error { return e.DeleteHosts(ids) }); err != nil {
		return nil, err
	}
	return idResult("hostids", ids), nil
}

// --- items ---

// itemParams are the members of a Zabbix 6.0 item object that item.create
// and item.update take. Members Peregrine does not model (type-specific
// settings such as snmp_oid or url, interfaceid, tags, value maps) are
// accepted and ignored; preprocessing must be empty, since ignoring it
// would store unprocessed values.
type itemParams struct {
	ItemID        jid     `json:"itemid"`
	HostID        jid     `json:"hostid"`
	Name          jstring `json:"name"`
	Key           jstring `json:"key_"`
	Type          jint    `json:"type"`
	ValueType     jint    `json:"value_type"`
	Delay         jtime   `json:"delay"`
	History       jtime   `json:"history"`
	Trends        jtime   `json:"trends"`
	Units         jstring `json:"units"`
	Status        jint    `json:"status"`
	Preprocessing jlist   `json:"preprocessing"`

	Tags            notStored `json:"tags"`
	Description     notStored `json:"description"`
	InterfaceID     notStored `json:"interfaceid"`
	InventoryLink   notStored `json:"inventory_link"`
	LogTimeFmt      notStored `json:"logtimefmt"`
	ValueMapID      notStored `json:"valuemapid"`
	AllowTraps      notStored `json:"allow_traps"`
	TrapperHosts    notStored `json:"trapper_hosts"`
	SNMPOID         notStored `json:"snmp_oid"`
	URL             notStored `json:"url"`
	QueryFields     notStored `json:"query_fields"`
	Posts           notStored `json:"posts"`
	StatusCodes     notStored `json:"status_codes"`
	FollowRedirects notStored `json:"follow_redirects"`
	PostType        notStored `json:"post_type"`
	HTTPProxy       notStored `json:"http_proxy"`
	Headers         notStored `json:"headers"`
	RetrieveMode    notStored `json:"retrieve_mode"`
	RequestMethod   notStored `json:"request_method"`
	OutputFormat    notStored `json:"output_format"`
	SSLCertFile     notStored `json:"ssl_cert_file"`
	SSLKeyFile      notStored `json:"ssl_key_file"`
	SSLKeyPassword  notStored `json:"ssl_key_password"`
	VerifyPeer      notStored `json:"verify_peer"`
	VerifyHost      notStored `json:"verify_host"`
	AuthType        notStored `json:"authtype"`
	Username        notStored `json:"username"`
	Password        notStored `json:"password"`
	PublicKey       notStored `json:"publickey"`
	PrivateKey      notStored `json:"privatekey"`
	Params          notStored `json:"params"`
	IPMISensor      notStored `json:"ipmi_sensor"`
	JMXEndpoint     notStored `json:"jmx_endpoint"`
	MasterItemID    notStored `json:"master_itemid"`
	Timeout         notStored `json:"timeout"`
	Parameters      notStored `json:"parameters"`
	UUID            notStored `json:"uuid"`
}

// itemTypes lists the supported item types for error messages.
const itemTypes = "0, 2, 3, 5, 7, 10, 19, 20"

// common validates the members item.create and item.update share.
func (p *itemParams) common(i int) error {
	switch {
	case p.Name.set && p.Name.v == "":
		return empty(i, "name")
	case p.Key.set && p.Key.v == "":
		return empty(i, "key_")
	case p.Type.set && (p.Type.v < 0 || p.Type.v > 255 || !catalog.ItemType(p.Type.v).Valid()):
		return oneOf(i, "type", itemTypes)
	case p.ValueType.set && (p.ValueType.v < 0 || p.ValueType.v > 4):
		return oneOf(i, "value_type", "0, 1, 2, 3, 4")
	case p.Status.set && p.Status.v != 0 && p.Status.v != 1:
		return oneOf(i, "status", "0, 1")
	case p.Delay.set && p.Delay.v == "":
		return empty(i, "delay")
	case p.History.set && p.History.v == "":
		return empty(i, "history")
	case p.Trends.set && p.Trends.v == "":
		return empty(i, "trends")
	case p.Preprocessing.n > 0:
		return unsupported(i, "preprocessing", "preprocessing steps")
	}
	return nil
}

func itemStatus(v int64) string {
	if v == 1 {
		return "disabled"
	}
	return "enabled"
}

func (w *configWriter) itemCreate(ctx context.Context, c *call) (any, error) {
	var ps []itemParams
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	items := make([]catalog.NewItem, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case p.ItemID.set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "itemid".`, i+1)
		case !p.Name.set:
			return nil, missing(i, "name")
		case !p.Key.set:
			return nil, missing(i, "key_")
		case !p.HostID.set:
			return nil, missing(i, "hostid")
		case !p.Type.set:
			return nil, missing(i, "type")
		case !p.ValueType.set:
			return nil, missing(i, "value_type")
		}
		if err := p.common(i); err != nil {
			return nil, err
		}
		items[i] = catalog.NewItem{HostID: p.HostID.v, ItemSpec: catalog.ItemSpec{
			Key: p.Key.v, Name: p.Name.v, Type: strconv.FormatInt(p.Type.v, 10), ValueType: strconv.FormatInt(p.ValueType.v, 10),
			Units: p.Units.v, Delay: p.Delay.v, History: p.History.v, Trends: p.Trends.v, Status: itemStatus(p.Status.v),
		}}
	}
	var ids []uint64
	err := w.edit(ctx, "itemid", func(e *catalog.Edit) (err error) {
		ids, err = e.CreateItems(items)
		return err
	})
	if err != nil {
		return nil, err
	}
	return idResult("itemids", ids), nil
}

func (w *configWriter) itemUpdate(ctx context.Context, c *call) (any, error) {
	var ps []itemParams
	if err := decodeObjects(c.params, &ps); err != nil {
		return nil, err
	}
	ups := make([]catalog.ItemUpdate, len(ps))
	ids := make([]uint64, len(ps))
	snap := w.cat.Snapshot()
	for i := range ps {
		p := &ps[i]
		if !p.ItemID.set {
			return nil, missing(i, "itemid")
		}
		if err := p.common(i); err != nil {
			return nil, err
		}
		if p.HostID.set {
			// Items do not move between hosts; an unchanged hostid (as
			// item.get returns it) is accepted. An item's host never
			// changes, so the current snapshot is good enough here.
			if it := snap.Item(p.ItemID.v); it != nil && it.HostID != p.HostID.v {
				return nil, errParams(`Invalid parameter "/%d/hostid": cannot be changed.`, i+1)
			}
		}
		u := catalog.ItemUpdate{ID: p.ItemID.v}
		str := func(s jstring) *string {
			if s.set {
				return &s.v
			}
			return nil
		}
		tim := func(s jtime) *string {
			if s.set {
				return &s.v
			}
			return nil
		}
		num := func(n jint) *string {
			if n.set {
				return new(strconv.FormatInt(n.v, 10))
			}
			return nil
		}
		u.Name, u.Key, u.Units = str(p.Name), str(p.Key), str(p.Units)
		u.Delay, u.History, u.Trends = tim(p.Delay), tim(p.History), tim(p.Trends)
		u.Type, u.ValueType = num(p.Type), num(p.ValueType)
		if p.Status.set {
			u.Status = new(itemStatus(p.Status.v))
		}
		ups[i], ids[i] = u, p.ItemID.v
	}
	if err := w.edit(ctx, "itemid", func(e *catalog.Edit) error { return e.UpdateItems(ups) }); err != nil {
		return nil, err
	}
	return idResult("itemids", ids), nil
}

func (w *configWriter) itemDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	if err := w.edit(ctx, "itemid", func(e *catalog.Edit) error { return e.DeleteItems(ids) }); err != nil {
		return nil, err
	}
	return idResult("itemids", ids), nil
}
