package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/audit"
)

// Recording: every method in auditOps is wrapped, once, when the server
// is built (wrapAudited), so no write method can forget its record and
// a method added later fails TestEveryWriteIsAudited until it is listed
// in auditOps or notAudited. The wrapper reads the objects a call names
// as stored before it (update, delete), runs the call, reads them again
// after an add or update, and appends the records, durably, before the
// call is answered. Reading goes through the family's own get method
// as a super admin, so the objects are those the API shows. A call that
// fails records nothing, as in Zabbix, where the record is part of the
// transaction; here the change is committed first, so a crash between
// the two loses the record (and an audit log that cannot be written is
// logged and counted, the call still answered as made).

// recordSets are the record set IDs of one HTTP request: Zabbix gives
// all records of a request (the calls of a batch) one record set, and
// its two audit styles each their own.
type recordSets struct {
	mu       sync.Mutex
	cur, old string
}

type recordSetsKey struct{}

// withRecordSets gives ctx, an HTTP request's, its record sets.
func withRecordSets(ctx context.Context) context.Context {
	return context.WithValue(ctx, recordSetsKey{}, &recordSets{})
}

// recordSet returns the request's record set ID of one style.
func recordSet(ctx context.Context, old bool, now time.Time) string {
	rs, _ := ctx.Value(recordSetsKey{}).(*recordSets)
	if rs == nil {
		return audit.NewCUID(now)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	p := &rs.cur
	if old {
		p = &rs.old
	}
	if *p == "" {
		*p = audit.NewCUID(now)
	}
	return *p
}

// wrapAudited makes every audited method record its changes.
func (s *Server) wrapAudited() {
	if s.opts.Audit == nil {
		return
	}
	for name, m := range s.methods {
		if op, ok := auditOps[name]; ok {
			s.wrapMethod(m, op)
		}
	}
}

// wrapMethod makes m record what op says.
func (s *Server) wrapMethod(m *method, op auditOp) {
	if m.call == nil {
		return
	}
	inner := m.call
	m.call = func(ctx context.Context, c *call) (any, error) { return s.audited(ctx, c, op, inner) }
}

// auditCall is one audited call.
type auditCall struct {
	s   *Server
	ctx context.Context
	c   *call
	op  auditOp
	// reqs are the request's objects in member order; ids the IDs it
	// names (update, delete); before the stored objects by ID.
	reqs   []jobj
	ids    []string
	before map[string]jobj
	// copies are, for a delete, the copies of the deleted host
	// prototypes, read before the call (audit_copies.go).
	copies []hostProtoCopy
}

func (s *Server) audited(ctx context.Context, c *call, op auditOp, inner func(context.Context, *call) (any, error)) (any, error) {
	if !s.opts.Audit.Enabled() && !(op.res == auditSettings && paramsName(c.params, "auditlog_enabled")) {
		return inner(ctx, c)
	}
	a := &auditCall{s: s, ctx: ctx, c: c, op: op}
	a.prepare()
	res, err := inner(ctx, c)
	recs := a.records(res, err)
	if len(recs) == 0 {
		return res, err
	}
	now := time.Now()
	ip := c.remote
	if h, _, e := net.SplitHostPort(ip); e == nil {
		ip = h
	}
	for i := range recs {
		r := &recs[i]
		r.ID = audit.NewCUID(now)
		r.Clock = now.Unix()
		r.IP = ip
		if op.kind == auditScriptExecute {
			r.RecordSetID = r.ID // Zabbix's server writes it: a set of one
		} else {
			r.RecordSetID = recordSet(ctx, op.res != nil && op.res.oldStyle, now)
		}
		if r.Username == "" && r.UserID == 0 && op.kind != auditLogin {
			r.UserID, r.Username = c.user.ID, c.user.Username
		}
		if utf8.RuneCountInString(r.ResourceName) > 255 {
			r.ResourceName = string([]rune(r.ResourceName)[:252]) + "..."
		}
	}
	if aerr := s.opts.Audit.Append(recs); aerr != nil {
		s.m.auditErrors.Inc()
		s.opts.Logger.Error("api: the change was made but not written to the audit log", "user", c.user.Username, "remote", c.remote, "records", len(recs), "err", aerr)
	}
	return res, err
}

// paramsName reports whether params (an object or a list of them) has a
// member name.
func paramsName(params []byte, name string) bool {
	for _, o := range objectsOf(params) {
		if _, ok := o.get(name); ok {
			return true
		}
	}
	return false
}

// objectsOf reads the objects of create or update params: one object or
// a list.
func objectsOf(params []byte) []jobj {
	v, err := parseOrdered(params)
	if err != nil {
		return nil
	}
	switch x := v.(type) {
	case jobj:
		return []jobj{x}
	case []any:
		var out []jobj
		for _, el := range x {
			if o, ok := el.(jobj); ok {
				out = append(out, o)
			} else {
				out = append(out, jobj{})
			}
		}
		return out
	}
	return nil
}

// idsOf reads the IDs of delete params: a list of IDs (or one).
func idsOf(params []byte) []string {
	v, err := parseOrdered(params)
	if err != nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		l = []any{v}
	}
	var out []string
	for _, el := range l {
		switch el.(type) {
		case string, json.Number:
			out = append(out, phpString(el))
		}
	}
	return out
}

// prepare reads what the records need from before the call.
func (a *auditCall) prepare() {
	res := a.op.res
	switch {
	case a.op.kind == auditTokenGenerate:
		a.ids = idsOf(a.c.params)
		a.before = a.load(res, a.ids)
	case a.op.kind != auditObjects:
	case a.op.action == audit.ActionAdd:
		a.reqs = objectsOf(a.c.params)
	case a.op.action == audit.ActionUpdate:
		a.reqs = objectsOf(a.c.params)
		if !res.singleton {
			for _, o := range a.reqs {
				v, _ := o.get(res.idField)
				a.ids = append(a.ids, phpString(v))
			}
		}
		a.before = a.load(res, a.ids)
	case a.op.action == audit.ActionDelete:
		a.ids = idsOf(a.c.params)
		a.before = a.load(res, a.ids)
		a.copies = a.hostProtoCopies(a.ids)
	}
}

// load reads objects as stored, through res's get method called as a
// super admin, by ID (string keys; "" for a singleton).
func (a *auditCall) load(res *auditRes, ids []string) map[string]jobj {
	m := a.s.methods[res.get]
	if m == nil || m.call == nil || (!res.singleton && len(ids) == 0) {
		return nil
	}
	build := func(selects bool) []byte {
		p := map[string]any{"output": "extend"}
		if !res.singleton {
			p[res.getIDs] = ids
		}
		if selects {
			for k, v := range res.selects {
				p[k] = v
			}
		}
		b, _ := json.Marshal(p)
		return b
	}
	su := a.c.user
	su.Role = RoleSuperAdmin
	r, err := m.call(a.ctx, &call{params: build(true), user: su, remote: a.c.remote})
	if err != nil && len(res.selects) > 0 {
		r, err = m.call(a.ctx, &call{params: build(false), user: su, remote: a.c.remote})
	}
	if err != nil {
		return nil
	}
	b, err := appendValue(nil, r)
	if err != nil {
		return nil
	}
	v, err := parseOrdered(b)
	if err != nil {
		return nil
	}
	out := map[string]jobj{}
	if o, ok := v.(jobj); ok && res.singleton {
		out[""] = o
		return out
	}
	l, _ := v.([]any)
	for _, el := range l {
		if o, ok := el.(jobj); ok {
			id, _ := o.get(res.idField)
			out[phpString(id)] = o
		}
	}
	return out
}

// resultIDs are the IDs a create answered with, in order.
func resultIDs(res any) []string {
	b, err := appendValue(nil, res)
	if err != nil {
		return nil
	}
	v, err := parseOrdered(b)
	if err != nil {
		return nil
	}
	o, _ := v.(jobj)
	for _, f := range o {
		if l, ok := f.v.([]any); ok {
			out := make([]string, len(l))
			for i, el := range l {
				out[i] = phpString(el)
			}
			return out
		}
	}
	return nil
}

// records are the records of the call, once it has returned res, err.
func (a *auditCall) records(res any, err error) []audit.Record {
	switch a.op.kind {
	case auditLogin:
		return a.login(res, err)
	case auditLogout:
		if err != nil {
			return nil
		}
		return []audit.Record{{Action: audit.ActionLogout, ResourceType: audit.ResourceUser, ResourceID: a.c.user.ID}}
	case auditScriptExecute:
		if err != nil {
			return nil
		}
		return a.scriptExecute(res)
	}
	if err != nil {
		return nil
	}
	r := a.op.res
	rec := func(action int, id, name string, d *details) audit.Record {
		n, _ := strconv.ParseUint(id, 10, 64)
		if r.singleton {
			n = 1 // the configuration's row
		}
		return audit.Record{Action: action, ResourceType: r.typ, ResourceID: n, ResourceName: name, Details: d.json()}
	}
	var out []audit.Record
	switch {
	case a.op.kind == auditTokenGenerate:
		for _, id := range a.ids {
			if b, ok := a.before[id]; ok {
				d := &details{}
				d.set(r.api+".token", "update", secretMask, secretMask)
				out = append(out, rec(audit.ActionUpdate, id, str(b, r.name), d))
			}
		}
	case a.op.action == audit.ActionAdd:
		ids := resultIDs(res)
		var after map[string]jobj
		if !r.oldStyle {
			after = a.load(r, ids)
		}
		for i, req := range a.reqs {
			if i >= len(ids) {
				break
			}
			id := ids[i]
			if r.oldStyle {
				name := ""
				for _, f := range append(slices.Clone(r.addNames), r.name) {
					if name = str(req, f); name != "" {
						break
					}
				}
				out = append(out, rec(audit.ActionAdd, id, name, nil))
				continue
			}
			obj := r.auditObject(req, after[id], nil, "")
			for _, f := range r.extra {
				if v, ok := after[id].get(f); ok {
					obj.set(f, v)
				} else if v, ok := r.fixed[f]; ok {
					obj.set(f, v)
				}
			}
			obj.set(r.idField, id)
			out = append(out, rec(audit.ActionAdd, id, str(req, r.name), r.addDetails(obj)))
		}
	case a.op.action == audit.ActionUpdate:
		after := a.load(r, a.ids)
		keys := a.ids
		if r.singleton {
			keys = []string{""}
		}
		for i, req := range a.reqs {
			if i >= len(keys) {
				break
			}
			b, ok1 := a.before[keys[i]]
			af, ok2 := after[keys[i]]
			if !ok1 || !ok2 {
				continue
			}
			var d *details
			if r.oldStyle {
				d = r.oldUpdateDetails(req, b, af)
			} else {
				d = r.updateDetails(r.auditObject(req, af, b, ""), r.dbObject(req, b, ""))
			}
			if len(d.keys) == 0 {
				continue
			}
			out = append(out, rec(audit.ActionUpdate, keys[i], str(b, r.name), d))
		}
	case a.op.action == audit.ActionDelete:
		name := r.name
		if a.op.deleteName != "" {
			name = a.op.deleteName
		}
		for _, id := range a.ids {
			if b, ok := a.before[id]; ok {
				out = append(out, rec(audit.ActionDelete, id, str(b, name), nil))
			}
		}
		out = append(out, copyRecords(audit.ActionDelete, a.copies, out)...)
		return out
	}
	if r == auditHostProto && a.op.kind == auditObjects {
		var ids []string
		for _, rc := range out {
			ids = append(ids, strconv.FormatUint(rc.ResourceID, 10))
		}
		out = append(out, copyRecords(a.op.action, a.hostProtoCopies(ids), out)...)
	}
	return out
}

// str is member k of o as a string.
func str(o jobj, k string) string {
	v, _ := o.get(k)
	return phpString(v)
}

// login records a login or a failed one (one with a user name and a
// password that did not let the user in).
func (a *auditCall) login(res any, err error) []audit.Record {
	if err == nil {
		session, _ := res.(string)
		if o, ok := res.(object); ok {
			session, _ = o["sessionid"].(string)
		}
		u, aerr := a.s.opts.Auth.Authenticate(a.ctx, session)
		if aerr != nil {
			return nil
		}
		return []audit.Record{{UserID: u.ID, Username: u.Username, Action: audit.ActionLogin, ResourceType: audit.ResourceUser, ResourceID: u.ID}}
	}
	var e *Error
	if !errors.As(err, &e) || (e.Data != "Incorrect user name or password or account is temporarily blocked." && e.Data != "No permissions for system access.") {
		return nil
	}
	var p struct {
		Username *string `json:"username"`
		User     *string `json:"user"`
	}
	if json.Unmarshal(a.c.params, &p) != nil {
		return nil
	}
	name := ""
	switch {
	case p.Username != nil:
		name = *p.Username
	case p.User != nil:
		name = *p.User
	}
	var id uint64
	if a.s.opts.Accounts != nil {
		if us, err := a.s.opts.Accounts.Users(a.ctx); err == nil {
			for _, u := range us {
				if u.Username == name {
					id = u.ID
				}
			}
		}
	}
	return []audit.Record{{UserID: id, Username: name, Action: audit.ActionLoginFailed, ResourceType: audit.ResourceUser, ResourceID: id}}
}

// scriptExecute records a script run as Zabbix 6.0's server does: the
// host as the resource, the script's command and its output.
func (a *auditCall) scriptExecute(res any) []audit.Record {
	var p struct {
		ScriptID json.Number `json:"scriptid"`
		HostID   json.Number `json:"hostid"`
	}
	dec := json.NewDecoder(bytes.NewReader(a.c.params))
	dec.UseNumber()
	if dec.Decode(&p) != nil || p.HostID == "" {
		return nil
	}
	hid := string(p.HostID)
	hosts := a.load(auditHost, []string{hid})
	scripts := a.load(auditScript, []string{string(p.ScriptID)})
	sc, ok := scripts[string(p.ScriptID)]
	if !ok {
		return nil
	}
	o, _ := res.(object)
	out, _ := o["value"].(string)
	d := &details{}
	d.set("script.execute_on", "add", str(sc, "execute_on"))
	d.set("script.hostid", "add", hid)
	d.set("script.command", "add", str(sc, "command"))
	d.set("script.output", "add", out)
	n, _ := strconv.ParseUint(hid, 10, 64)
	return []audit.Record{{Action: audit.ActionExecute, ResourceType: audit.ResourceScript, ResourceID: n,
		ResourceName: str(hosts[hid], "host"), Details: d.json()}}
}

// oldUpdateDetails are the details of an update in Zabbix 6.0's older
// audit: each scalar member of the request whose stored value changed,
// in the order of res.fields, with the value as the request gave it and
// the stored one before.
func (r *auditRes) oldUpdateDetails(req, before, after jobj) *details {
	d := &details{}
	for _, k := range r.fields {
		rv, given := req.get(k)
		if !given || k == r.idField {
			continue
		}
		switch rv.(type) {
		case jobj, []any:
			continue
		}
		f := jfield{k, rv}
		bv, ok1 := before.get(f.k)
		av, ok2 := after.get(f.k)
		if !ok1 || !ok2 {
			continue
		}
		bs, as := phpString(bv), phpString(av)
		if phpEqual(bs, as) {
			continue
		}
		nv := f.v
		if s, isStr := nv.(string); isStr && slices.Contains(r.ints, f.k) {
			if _, err := strconv.ParseInt(s, 10, 64); err == nil {
				nv = json.Number(s)
			}
		}
		if slices.ContainsFunc(r.masked, func(m auditMask) bool { return m.path == f.k }) {
			nv, bs = secretMask, secretMask
		}
		d.set(r.api+"."+f.k, "update", nv, bs)
	}
	return d
}

// auditObject is the object Zabbix 6.0 details for a request object: its
// members in the request's order, with their values as stored (after),
// nested lists' elements named by the IDs nestedIDs gives them, and
// the members Peregrine does not store left out (secrets kept, masked
// later). sub is the nested path of req under the resource.
func (r *auditRes) auditObject(req, after, before jobj, sub string) jobj {
	out := jobj{}
	for _, f := range req {
		sp := joinPath(sub, f.k)
		if i := slices.IndexFunc(r.masked, func(m auditMask) bool { return m.path == sp }); i >= 0 {
			out = append(out, jfield{f.k, f.v})
			if c := r.masked[i].ifSecret; c != "" {
				// Whether it is a secret is the stored object's to say
				// when the request does not.
				if _, given := req.get(c); !given {
					if v, ok := after.get(c); ok {
						out = append(out, jfield{c, v})
					}
				}
			}
			continue
		}
		av, ok := after.get(f.k)
		if !ok && sub == "" && slices.Contains(r.fromReq, f.k) {
			av, ok = f.v, true
		}
		if !ok {
			continue
		}
		bv, _ := before.get(f.k)
		ns, nested := r.nested[sp]
		switch rv := f.v.(type) {
		case []any:
			if !nested || ns.idField == "" {
				out = append(out, jfield{f.k, av})
				continue
			}
			al, _ := av.([]any)
			bl, _ := bv.([]any)
			var l []any
			for _, e := range nestedIDs(ns, rv, al, bl) {
				var be jobj
				if e.before >= 0 {
					be = asObj(bl[e.before])
				}
				o := r.auditObject(asObj(rv[e.req]), e.after, be, sp)
				o.set(ns.idField, e.id)
				l = append(l, o)
			}
			out = append(out, jfield{f.k, l})
		case jobj:
			out = append(out, jfield{f.k, r.auditObject(rv, asObj(av), asObj(bv), sp)})
		default:
			if l, isList := av.([]any); isList {
				av = joinScalars(l)
			}
			out = append(out, jfield{f.k, av})
		}
	}
	return out
}

// dbObject is the stored object an update compares with: the members
// the request names, nested lists whole (each element named by its
// position), as Zabbix 6.0 intersects its stored object with the
// request.
func (r *auditRes) dbObject(req, before jobj, sub string) jobj {
	out := jobj{}
	for _, f := range req {
		sp := joinPath(sub, f.k)
		if i := slices.IndexFunc(r.masked, func(m auditMask) bool { return m.path == sp }); i >= 0 {
			if c := r.masked[i].ifSecret; c != "" {
				if _, given := req.get(c); !given {
					if v, ok := before.get(c); ok {
						out = append(out, jfield{c, v})
					}
				}
			}
		}
		bv, ok := before.get(f.k)
		if !ok {
			continue
		}
		ns, nested := r.nested[sp]
		switch rv := f.v.(type) {
		case []any:
			bl, isList := bv.([]any)
			if !nested || ns.idField == "" || !isList {
				out = append(out, jfield{f.k, bv})
				continue
			}
			l := make([]any, len(bl))
			for i, el := range bl {
				o := slices.Clone(asObj(el))
				o.set(ns.idField, strconv.Itoa(i+1))
				l[i] = o
			}
			out = append(out, jfield{f.k, l})
		case jobj:
			out = append(out, jfield{f.k, r.dbObject(rv, asObj(bv), sp)})
		default:
			if l, isList := bv.([]any); isList {
				bv = joinScalars(l)
			}
			out = append(out, jfield{f.k, bv})
		}
	}
	return out
}

func joinPath(sub, k string) string {
	if sub == "" {
		return k
	}
	return sub + "." + k
}

func asObj(v any) jobj {
	o, _ := v.(jobj)
	return o
}

// joinScalars is a stored list of strings given as one (a medium's
// sendto), as Zabbix keeps it: one per line.
func joinScalars(l []any) string {
	var b []byte
	for i, v := range l {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, phpString(v)...)
	}
	return string(b)
}

// nestedElem pairs a request's element with its stored forms and its ID.
type nestedElem struct {
	req    int
	after  jobj
	before int // index in the stored list before, or -1
	id     string
}

// nestedIDs pairs each element of a request's nested list with the
// stored elements after and before the change, by key members (or by
// position for lists without a key), and names it: an element that was
// there before keeps its position before as its ID, a new one gets the
// next numbers. Zabbix names them by their rows' IDs, which Peregrine
// does not have.
func nestedIDs(ns auditNested, req, after, before []any) []nestedElem {
	same := func(a, b jobj) bool {
		if len(ns.key) == 0 {
			return false
		}
		for _, k := range ns.key {
			av, ok1 := a.get(k)
			bv, ok2 := b.get(k)
			if ok1 != ok2 || phpString(av) != phpString(bv) {
				return false
			}
		}
		return true
	}
	hasKey := func(o jobj) bool {
		for _, k := range ns.key {
			if _, ok := o.get(k); !ok {
				return false
			}
		}
		return len(ns.key) > 0
	}
	var out []nestedElem
	usedA, usedB := map[int]bool{}, map[int]bool{}
	next := len(before)
	for i, re := range req {
		ro := asObj(re)
		ai := -1
		if hasKey(ro) {
			for j, ae := range after {
				if !usedA[j] && same(ro, asObj(ae)) {
					ai = j
					break
				}
			}
		}
		if ai < 0 && i < len(after) && !usedA[i] {
			ai = i
		}
		e := nestedElem{req: i, before: -1}
		if ai >= 0 {
			usedA[ai] = true
			e.after = asObj(after[ai])
		}
		ref := ro
		if e.after != nil {
			ref = e.after
		}
		for j, be := range before {
			if !usedB[j] && same(ref, asObj(be)) {
				e.before = j
				break
			}
		}
		if e.before < 0 && len(ns.key) == 0 && i < len(before) && !usedB[i] {
			e.before = i
		}
		if e.before >= 0 {
			usedB[e.before] = true
			e.id = strconv.Itoa(e.before + 1)
		} else {
			next++
			e.id = strconv.Itoa(next)
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].req < out[j].req })
	return out
}
