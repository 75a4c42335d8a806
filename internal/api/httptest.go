package api

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
)

// Web scenarios (Zabbix 6.0's httptest.*): a host's or template's
// scenario with its steps and tags (catalog.HTTPTest); the catalog
// makes and keeps its items (type 9). Reading needs read access to the
// scenario's host, writing read-write, as for the host's items. The
// checks of create and update are 6.0's validator's, in its words
// (recorded from 6.0.14). http_password and ssl_key_password are
// returned empty: secrets never leave the server (6.0 returns them).

func (s *Server) registerHTTPTests() {
	s.methods["httptest.get"] = &method{role: RoleUser, call: s.httptestGet}
	ed, ok := s.opts.Catalog.(CatalogEditor)
	if !ok {
		return
	}
	w := &configWriter{s: s, ed: ed, cat: s.opts.Catalog}
	s.methods["httptest.create"] = &method{role: RoleAdmin, call: w.httptestCreate}
	s.methods["httptest.update"] = &method{role: RoleAdmin, call: w.httptestUpdate}
	s.methods["httptest.delete"] = &method{role: RoleAdmin, call: w.httptestDelete}
}

// httptestGetParams are httptest.get's parameters, a legacy get.
type httptestGetParams struct {
	getParams
	HTTPTestIDs    opt[ids]      `json:"httptestids"`
	HostIDs        opt[ids]      `json:"hostids"`
	GroupIDs       opt[ids]      `json:"groupids"`
	TemplateIDs    opt[ids]      `json:"templateids"`
	Templated      opt[bool]     `json:"templated"`
	Inherited      opt[bool]     `json:"inherited"`
	Monitored      opt[bool]     `json:"monitored" as:"isset"`
	ExpandName     opt[bool]     `json:"expandName"`
	ExpandStepName opt[bool]     `json:"expandStepName"`
	EvalType       opt[int64]    `json:"evaltype"`
	Tags           opt[tagConds] `json:"tags"`
	SelectHosts    sel           `json:"selectHosts"`
	SelectSteps    sel           `json:"selectSteps"`
	SelectTags     sel           `json:"selectTags"`
}

// httptestSchema is 6.0's httptest table, which filter and search read.
var httptestSchema = schema{id: "httptestid", types: fieldTypes(`httptestid:n name:c nextcheck:n delay:c status:n agent:c
	authentication:n http_user:c http_password:c hostid:n templateid:n http_proxy:c retries:n ssl_cert_file:c ssl_key_file:c
	ssl_key_password:c verify_peer:n verify_host:n uuid:c`)}

func httpFieldObjects(fs []catalog.HTTPField) []object {
	out := make([]object, 0, len(fs))
	for _, f := range fs {
		out = append(out, object{"name": f.Name, "value": f.Value})
	}
	return out
}

func httptestObject(t *catalog.HTTPTest) object {
	return object{
		"httptestid": id(t.ID), "name": t.Name, "nextcheck": "0", "delay": t.Delay, "status": strconv.Itoa(t.Status),
		"agent": t.Agent, "authentication": strconv.Itoa(t.Authentication), "http_user": t.HTTPUser, "http_password": "",
		"hostid": id(t.HostID), "templateid": id(t.TemplateID), "http_proxy": t.HTTPProxy, "retries": strconv.Itoa(t.Retries),
		"ssl_cert_file": t.SSLCertFile, "ssl_key_file": t.SSLKeyFile, "ssl_key_password": "",
		"verify_peer": strconv.Itoa(t.VerifyPeer), "verify_host": strconv.Itoa(t.VerifyHost), "uuid": t.UUID,
		"headers": field{httpFieldObjects(t.Headers)}, "variables": field{httpFieldObjects(t.Variables)},
	}
}

func httpstepObjects(t *catalog.HTTPTest, expand func(string) string) []object {
	out := make([]object, 0, len(t.Steps))
	for _, st := range t.Steps {
		var posts any = st.Posts
		if st.PostType == catalog.StepPostForm {
			posts = httpFieldObjects(st.PostFields)
		}
		name := st.Name
		if expand != nil {
			name = expand(name)
		}
		out = append(out, object{
			"httpstepid": id(st.ID), "httptestid": id(t.ID), "name": name, "no": strconv.Itoa(st.No), "url": st.URL,
			"timeout": st.Timeout, "posts": posts, "required": st.Required, "status_codes": st.StatusCodes,
			"follow_redirects": strconv.Itoa(st.FollowRedirects), "retrieve_mode": strconv.Itoa(st.RetrieveMode),
			"post_type": strconv.Itoa(st.PostType), "headers": httpFieldObjects(st.Headers),
			"variables": httpFieldObjects(st.Variables), "query_fields": httpFieldObjects(st.QueryFields),
		})
	}
	return out
}

// expandHostMacros expands what 6.0's expandName and expandStepName
// expand: {HOST.HOST}, {HOST.NAME} and the host's user macros.
func expandHostMacros(h *catalog.Host, s string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	if strings.Contains(s, "{$") {
		s = h.UserMacros().Expand(s)
	}
	name := h.Name
	if name == "" {
		name = h.Host
	}
	return strings.NewReplacer("{HOST.HOST}", h.Host, "{HOSTNAME}", h.Host, "{HOST.NAME}", name).Replace(s)
}

func (s *Server) httptestGet(ctx context.Context, c *call) (any, error) {
	var p httptestGetParams
	if err := decodeGet(c.params, &p); err != nil {
		return nil, err
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	snap := s.opts.Catalog.Snapshot()
	if p.TemplateIDs.Given() {
		p.HostIDs = given(append(slices.Clone(p.HostIDs.Value), p.TemplateIDs.Value...))
	}
	tags := compileTags(p.Tags.Value, p.EvalType.Value)
	var objs []object
	byID := map[string]*catalog.HTTPTest{}
	for i := range snap.HTTPTests() {
		t := &snap.HTTPTests()[i]
		h := snap.HostOrTemplate(t.HostID)
		if h == nil || p.noRows || !a.sees(h, p.Editable.Value) || !idsPass(p.HTTPTestIDs, t.ID) || !idsPass(p.HostIDs, t.HostID) ||
			!idsAny(p.GroupIDs, h.GroupIDs) ||
			p.Templated.Given() && h.IsTemplate != p.Templated.Value ||
			p.Inherited.Given() && (t.TemplateID != 0) != p.Inherited.Value ||
			p.Monitored.Given() && !(t.Status == 0 && h.Enabled && !h.IsTemplate) ||
			tags != nil && !tags.match(len(t.Tags), func(i int) (string, string) { return t.Tags[i].Tag, t.Tags[i].Value }) {
			continue
		}
		o := httptestObject(t)
		byID[id(t.ID)] = t
		objs = append(objs, o)
	}
	res, err := p.applySchema(objs, &httptestSchema, "httptestid", "name")
	if err != nil || p.CountOutput.Value {
		return res, err
	}
	eachObject(res, func(o object) {
		oid, _ := o["httptestid"].(string)
		t := byID[oid]
		if t == nil {
			return
		}
		h := snap.HostOrTemplate(t.HostID)
		if _, ok := o["name"]; ok && p.ExpandName.Value {
			o["name"] = expandHostMacros(h, t.Name) // after sorting: 6.0 sorts by the name stored
		}
		if sl := p.SelectSteps; sl.Count {
			o["steps"] = countOf(len(t.Steps))
		} else if sl.list() {
			var ex func(string) string
			if p.ExpandStepName.Value {
				ex = func(s string) string { return expandHostMacros(h, s) }
			}
			o["steps"] = nonNil(sl.shape(httpstepObjects(t, ex), ""))
		}
		if sl := p.SelectTags; sl.Count {
			o["tags"] = countOf(len(t.Tags))
		} else if sl.list() {
			o["tags"] = nonNil(sl.shape(itemTagObjects(t.Tags), ""))
		}
		if sl := p.SelectHosts; sl.list() {
			o["hosts"] = sl.shape([]object{hostObject(h)}, "hostid")
		}
	})
	return res, nil
}

// httpFieldParams is a header, variable, query field or form field.
type httpFieldParams struct {
	Name  opt[string] `json:"name"`
	Value opt[string] `json:"value"`
}

type httpstepParams struct {
	HTTPStepID      opt[uint64]            `json:"httpstepid"`
	Name            opt[string]            `json:"name"`
	No              opt[int64]             `json:"no"`
	URL             opt[string]            `json:"url"`
	Timeout         opt[string]            `json:"timeout"`
	Posts           opt[json.RawMessage]   `json:"posts" as:"json"`
	Required        opt[string]            `json:"required"`
	StatusCodes     opt[string]            `json:"status_codes"`
	FollowRedirects opt[int64]             `json:"follow_redirects"`
	RetrieveMode    opt[int64]             `json:"retrieve_mode"`
	Headers         opt[[]httpFieldParams] `json:"headers" as:"objects"`
	Variables       opt[[]httpFieldParams] `json:"variables" as:"objects"`
	QueryFields     opt[[]httpFieldParams] `json:"query_fields" as:"objects"`
}

type httptestParams struct {
	HTTPTestID     opt[uint64]            `json:"httptestid"`
	HostID         opt[uint64]            `json:"hostid"`
	UUID           opt[string]            `json:"uuid"`
	Name           opt[string]            `json:"name"`
	Delay          opt[string]            `json:"delay"`
	Status         opt[int64]             `json:"status"`
	Agent          opt[string]            `json:"agent"`
	Authentication opt[int64]             `json:"authentication"`
	HTTPUser       opt[string]            `json:"http_user"`
	HTTPPassword   opt[string]            `json:"http_password"`
	HTTPProxy      opt[string]            `json:"http_proxy"`
	Retries        opt[int64]             `json:"retries"`
	SSLCertFile    opt[string]            `json:"ssl_cert_file"`
	SSLKeyFile     opt[string]            `json:"ssl_key_file"`
	SSLKeyPassword opt[string]            `json:"ssl_key_password"`
	VerifyPeer     opt[int64]             `json:"verify_peer"`
	VerifyHost     opt[int64]             `json:"verify_host"`
	Headers        opt[[]httpFieldParams] `json:"headers" as:"objects"`
	Variables      opt[[]httpFieldParams] `json:"variables" as:"objects"`
	// Steps are read element by element (steps), so that a problem's
	// path names the step as 6.0's validator does.
	Steps opt[json.RawMessage] `json:"steps" as:"json"`
	Tags  opt[hostTags]        `json:"tags"`
}

// timeSecs reports whether v is a time in lo..hi seconds or a user
// macro, as 6.0 checks delay and timeout.
func timeSecs(v string, lo, hi int64) bool {
	if strings.HasPrefix(v, "{$") && strings.HasSuffix(v, "}") {
		return true
	}
	n, err := delay.Seconds(v)
	return err == nil && n >= lo && n <= hi
}

// timeUnit: v is a number of seconds with an optional time suffix, or
// a user macro (6.0.14 answers "a time unit is expected" otherwise). A
// time unit out of a field's range ("25h" for a scenario's delay) is
// one: the range check answers it.
func timeUnit(v string) bool {
	if strings.HasPrefix(v, "{$") && strings.HasSuffix(v, "}") {
		return true
	}
	_, err := delay.ParseSeconds(v)
	return err == nil
}

// httpFields checks and converts a list of name/value pairs at path;
// vars: names must be {...}, unique.
func httpFields(path string, l []httpFieldParams, vars bool) ([]catalog.HTTPField, error) {
	out := make([]catalog.HTTPField, 0, len(l))
	seen := map[string]bool{}
	for j, f := range l {
		fp := path + "/" + strconv.Itoa(j+1)
		switch {
		case !f.Name.Set:
			return nil, errParams(`Invalid parameter "%s": the parameter "name" is missing.`, fp)
		case f.Name.Value == "":
			return nil, errParams(`Invalid parameter "%s/name": cannot be empty.`, fp)
		case vars && (len(f.Name.Value) < 3 || f.Name.Value[0] != '{' || f.Name.Value[len(f.Name.Value)-1] != '}'):
			return nil, errParams(`Invalid parameter "%s/name": is not enclosed in {} or is malformed.`, fp)
		case vars && seen[f.Name.Value]:
			return nil, errParams(`Invalid parameter "%s": value (name)=(%s) already exists.`, fp, f.Name.Value)
		}
		seen[f.Name.Value] = true
		out = append(out, catalog.HTTPField{Name: f.Name.Value, Value: f.Value.Value})
	}
	return out, nil
}

func inSet(v int64, vals ...int64) bool { return slices.Contains(vals, v) }

// apply checks p (object i) and sets t's fields from it: on create t
// holds the defaults, on update the scenario as it is.
func (p *httptestParams) apply(i int, t *catalog.HTTPTest, create bool) error {
	pre := "/" + strconv.Itoa(i+1)
	if p.Name.Set {
		if p.Name.Value == "" {
			return empty(i, "name")
		}
		t.Name = p.Name.Value
	}
	if p.Delay.Set {
		if !timeUnit(p.Delay.Value) {
			return errParams(`Invalid parameter "/%d/delay": a time unit is expected.`, i+1)
		}
		if !timeSecs(p.Delay.Value, 1, 86400) {
			return oneOf(i, "delay", "1-86400")
		}
		t.Delay = p.Delay.Value
	}
	ints := []struct {
		name string
		o    opt[int64]
		dst  *int
		ok   func(int64) bool
		vals string
	}{
		{"status", p.Status, &t.Status, func(v int64) bool { return inSet(v, 0, 1) }, "0, 1"},
		{"authentication", p.Authentication, &t.Authentication, func(v int64) bool { return v >= 0 && v <= 4 }, "0, 1, 2, 3, 4"},
		{"retries", p.Retries, &t.Retries, func(v int64) bool { return v >= 1 && v <= 10 }, "1-10"},
		{"verify_peer", p.VerifyPeer, &t.VerifyPeer, func(v int64) bool { return inSet(v, 0, 1) }, "0, 1"},
		{"verify_host", p.VerifyHost, &t.VerifyHost, func(v int64) bool { return inSet(v, 0, 1) }, "0, 1"},
	}
	for _, f := range ints {
		if f.o.Set {
			if !f.ok(f.o.Value) {
				return oneOf(i, f.name, f.vals)
			}
			*f.dst = int(f.o.Value)
		}
	}
	for _, f := range []struct {
		o   opt[string]
		dst *string
	}{{p.Agent, &t.Agent}, {p.HTTPUser, &t.HTTPUser}, {p.HTTPPassword, &t.HTTPPassword}, {p.HTTPProxy, &t.HTTPProxy},
		{p.SSLCertFile, &t.SSLCertFile}, {p.SSLKeyFile, &t.SSLKeyFile}, {p.SSLKeyPassword, &t.SSLKeyPassword}} {
		if f.o.Set {
			*f.dst = f.o.Value
		}
	}
	var err error
	if p.Headers.Set {
		if t.Headers, err = httpFields(pre+"/headers", p.Headers.Value, false); err != nil {
			return err
		}
	}
	if p.Variables.Set {
		if t.Variables, err = httpFields(pre+"/variables", p.Variables.Value, true); err != nil {
			return err
		}
	}
	if p.Tags.Set {
		t.Tags = []catalog.Tag(p.Tags.Value)
	}
	if p.Steps.Set {
		svs, err := decodeWebSteps(pre, p.Steps.Value)
		if err != nil {
			return err
		}
		if len(svs) == 0 {
			return empty(i, "steps")
		}
		steps := make([]catalog.HTTPStep, len(svs))
		names, nos := map[string]bool{}, map[int64]bool{}
		for j := range svs {
			sp := pre + "/steps/" + strconv.Itoa(j+1)
			if err := svs[j].apply(sp, &steps[j], t); err != nil {
				return err
			}
			sv := &svs[j]
			if names[sv.Name.Value] {
				return errParams(`Invalid parameter "%s": value (name)=(%s) already exists.`, sp, sv.Name.Value)
			}
			if nos[sv.No.Value] {
				return errParams(`Invalid parameter "%s": value (no)=(%d) already exists.`, sp, sv.No.Value)
			}
			names[sv.Name.Value], nos[sv.No.Value] = true, true
		}
		slices.SortStableFunc(steps, func(a, b catalog.HTTPStep) int { return a.No - b.No })
		t.Steps = steps
	}
	for _, st := range t.Steps {
		if _, err := catalog.ParseStatusCodes(st.StatusCodes); err != nil && !strings.Contains(st.StatusCodes, "{") {
			return errParams(`Invalid response code "%s".`, st.StatusCodes)
		}
	}
	return nil
}

// decodeWebSteps reads the steps of the object at path pre one by one,
// each problem's path rebased from "/1" to the step's ("/1/steps/2").
func decodeWebSteps(pre string, raw json.RawMessage) ([]httpstepParams, error) {
	if isNull(raw) {
		return nil, nil
	}
	elems, ok := arrayElems(raw)
	if !ok {
		return nil, errParams(`Invalid parameter "%s/steps": an array is expected.`, pre)
	}
	out := make([]httpstepParams, len(elems))
	for j, el := range elems {
		if jsonKindOf(el) != 'o' {
			return nil, errParams(`Invalid parameter "%s/steps/%d": an array is expected.`, pre, j+1)
		}
		var one []httpstepParams
		if err := decodeObjectsWith(el, &one, &writeRules); err != nil {
			var e *Error
			if errors.As(err, &e) {
				sp := pre + "/steps/" + strconv.Itoa(j+1)
				return nil, &Error{Code: e.Code, Data: strings.Replace(e.Data, `"/1`, `"`+sp, 1)}
			}
			return nil, err
		}
		out[j] = one[0]
	}
	return out, nil
}

// apply checks a step (at path sp) and makes it; its ID is kept when
// it names one of the scenario's steps.
func (sv *httpstepParams) apply(sp string, st *catalog.HTTPStep, t *catalog.HTTPTest) error {
	switch {
	case !sv.Name.Set:
		return errParams(`Invalid parameter "%s": the parameter "name" is missing.`, sp)
	case !sv.URL.Set:
		return errParams(`Invalid parameter "%s": the parameter "url" is missing.`, sp)
	case !sv.No.Set:
		return errParams(`Invalid parameter "%s": the parameter "no" is missing.`, sp)
	case sv.Name.Value == "":
		return errParams(`Invalid parameter "%s/name": cannot be empty.`, sp)
	case sv.URL.Value == "":
		return errParams(`Invalid parameter "%s/url": cannot be empty.`, sp)
	}
	*st = catalog.HTTPStep{Name: sv.Name.Value, No: int(sv.No.Value), URL: sv.URL.Value, Timeout: catalog.DefaultStepTimeout,
		Required: sv.Required.Value, StatusCodes: sv.StatusCodes.Value, FollowRedirects: 1}
	if sv.HTTPStepID.Set {
		for _, cur := range t.Steps {
			if cur.ID == sv.HTTPStepID.Value {
				st.ID, st.ItemIDs = cur.ID, cur.ItemIDs
			}
		}
	}
	if sv.Timeout.Set {
		if !timeSecs(sv.Timeout.Value, 1, 3600) {
			return errParams(`Invalid parameter "%s/timeout": value must be one of 1-3600.`, sp)
		}
		st.Timeout = sv.Timeout.Value
	}
	if sv.FollowRedirects.Set {
		if !inSet(sv.FollowRedirects.Value, 0, 1) {
			return errParams(`Invalid parameter "%s/follow_redirects": value must be one of 0, 1.`, sp)
		}
		st.FollowRedirects = int(sv.FollowRedirects.Value)
	}
	if sv.RetrieveMode.Set {
		if !inSet(sv.RetrieveMode.Value, 0, 1, 2) {
			return errParams(`Invalid parameter "%s/retrieve_mode": value must be one of 0, 1, 2.`, sp)
		}
		st.RetrieveMode = int(sv.RetrieveMode.Value)
	}
	var err error
	if st.Headers, err = httpFields(sp+"/headers", sv.Headers.Value, false); err != nil {
		return err
	}
	if st.Variables, err = httpFields(sp+"/variables", sv.Variables.Value, true); err != nil {
		return err
	}
	if st.QueryFields, err = httpFields(sp+"/query_fields", sv.QueryFields.Value, false); err != nil {
		return err
	}
	if sv.Posts.Set {
		raw := sv.Posts.Value
		switch jsonKindOf(raw) {
		case 'a':
			var l []httpFieldParams
			if err := decodeObjectsWith(raw, &l, &writeRules); err != nil {
				return errParams(`Invalid parameter "%s/posts": an array of objects with name and value is expected.`, sp)
			}
			if st.PostFields, err = httpFields(sp+"/posts", l, false); err != nil {
				return err
			}
			st.PostType = catalog.StepPostForm
		case 's':
			_ = json.Unmarshal(raw, &st.Posts)
		case 'n':
		default:
			return errParams(`Invalid parameter "%s/posts": a character string is expected.`, sp)
		}
	}
	if st.RetrieveMode == catalog.HTTPRetrieveHeaders && (st.Posts != "" || len(st.PostFields) > 0) {
		return errParams(`Incorrect value for field "posts": should be empty.`)
	}
	return nil
}

func (w *configWriter) httptestCreate(ctx context.Context, c *call) (any, error) {
	var ps []httptestParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	ts := make([]catalog.HTTPTest, len(ps))
	hosts := make([]uint64, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case p.HTTPTestID.Set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "httptestid".`, i+1)
		case !p.Name.Set:
			return nil, missing(i, "name")
		case !p.HostID.Set:
			return nil, missing(i, "hostid")
		case !p.Steps.Set:
			return nil, missing(i, "steps")
		}
		ts[i] = catalog.HTTPTest{HostID: p.HostID.Value, UUID: p.UUID.Value, HTTPTestFields: catalog.DefaultHTTPTestFields}
		if err := p.apply(i, &ts[i], true); err != nil {
			return nil, err
		}
		hosts[i] = p.HostID.Value
	}
	var ids []uint64
	err := w.edit(ctx, c, "httptestid", hostsWritable(hosts), func(e *catalog.Edit) (err error) {
		for i := range ts {
			if w.cat.Snapshot().HostOrTemplate(ts[i].HostID) == nil {
				return errNoPermissions
			}
			if e.HTTPTestByName(ts[i].HostID, ts[i].Name) != nil || slices.ContainsFunc(ts[:i], func(o catalog.HTTPTest) bool {
				return o.HostID == ts[i].HostID && o.Name == ts[i].Name
			}) {
				return errParams(`Web scenario "%s" already exists.`, ts[i].Name)
			}
		}
		ids, err = e.CreateHTTPTests(ts)
		return err
	})
	if err != nil {
		return nil, err
	}
	return idResult("httptestids", ids), nil
}

func (w *configWriter) httptestUpdate(ctx context.Context, c *call) (any, error) {
	var ps []httptestParams
	if err := decodeValidatorObjects(c.params, &ps); err != nil {
		return nil, err
	}
	ids := make([]uint64, len(ps))
	for i := range ps {
		p := &ps[i]
		switch {
		case !p.HTTPTestID.Set:
			return nil, missing(i, "httptestid")
		case p.HostID.Set:
			return nil, errParams(`Invalid parameter "/%d": unexpected parameter "hostid".`, i+1)
		}
		ids[i] = p.HTTPTestID.Value
	}
	err := w.edit(ctx, c, "httptestid", httptestsWritable(ids), func(e *catalog.Edit) error {
		ts := make([]catalog.HTTPTest, len(ps))
		for i := range ps {
			p := &ps[i]
			cur := e.HTTPTest(p.HTTPTestID.Value)
			if cur == nil {
				return errNoPermissions
			}
			if cur.TemplateID != 0 {
				// Recorded from 6.0.14.
				if p.Name.Set {
					return errParams(`Cannot update a templated web scenario "%s": unexpected parameter "name".`, p.Name.Value)
				}
				if p.Steps.Set {
					return errParams(`Cannot update step for a templated web scenario "%s": unexpected parameter "name".`, cur.Name)
				}
			}
			t := *cur
			t.Steps = slices.Clone(cur.Steps)
			if err := p.apply(i, &t, false); err != nil {
				return err
			}
			if o := e.HTTPTestByName(t.HostID, t.Name); o != nil && o.ID != t.ID {
				return errParams(`Web scenario "%s" already exists.`, t.Name)
			}
			ts[i] = t
		}
		return e.UpdateHTTPTests(ts)
	})
	if err != nil {
		return nil, err
	}
	return idResult("httptestids", ids), nil
}

func (w *configWriter) httptestDelete(ctx context.Context, c *call) (any, error) {
	ids, err := decodeIDs(c.params)
	if err != nil {
		return nil, err
	}
	err = w.edit(ctx, c, "httptestid", httptestsWritable(ids), func(e *catalog.Edit) error {
		for _, id := range ids {
			t := e.HTTPTest(id)
			if t == nil {
				return errNoPermissions
			}
			if t.TemplateID != 0 {
				return errParams(`Cannot delete templated web scenario "%s".`, t.Name) // recorded from 6.0.14
			}
		}
		return e.DeleteHTTPTests(ids)
	})
	if err != nil {
		return nil, err
	}
	return idResult("httptestids", ids), nil
}

// httptestsWritable needs read-write on each scenario's host.
func httptestsWritable(ids []uint64) permits {
	return func(snap *catalog.Snapshot, a access) bool {
		for _, id := range ids {
			if t := snap.HTTPTest(id); t != nil {
				if h := snap.HostOrTemplate(t.HostID); h != nil && !a.canWrite(h) {
					return false
				}
			}
		}
		return true
	}
}
