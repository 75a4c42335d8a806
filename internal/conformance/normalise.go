package conformance

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// normaliser rewrites one run's answers into the form golden files
// keep: what legitimately differs between two servers (ids, clocks,
// tokens, undefined order) is replaced by what it means.
type normaliser struct {
	t0 int64
	// names maps an ID, as kind+"/"+raw, to its name: "$name" for an ID
	// a step bound or created, "#kind:N" for a generated one. IDs are
	// kept per kind because each server numbers each kind of object on
	// its own (host 20 and host group 20 are different objects).
	names map[string]string
	// gen counts the generated IDs seen of each kind.
	gen map[string]int
	// named are the clocks the case named (vars.clocks): only those are
	// written "T0+N"; any other clock is the server's "<now>".
	named map[int64]bool
	// sortFields are the fields the request sorts by: objects equal in
	// all of them may come in any order (Zabbix defines none), so each
	// run of them is sorted as an unsorted list is.
	sortFields []string
	// family is the ID kind of the method being normalised ("hostid"
	// for host.*): an ID quoted in its error message is of that kind
	// first.
	family string
	// resultKeys is the ID kind of the result's keys for the methods
	// that key it by another object's ID (resultKeyKinds), else "".
	resultKeys string
}

// resultKeyKinds are the methods whose result is an object keyed by IDs
// of another kind than its values': script.getscriptsbyhosts keys the
// scripts by host ID.
var resultKeyKinds = map[string]string{"script.getscriptsbyhosts": "hostid"}

// families are the ID kinds of the method families whose kind is not
// their name plus "id".
var families = map[string]string{"hostgroup": "groupid", "usergroup": "usrgrpid", "usermacro": "hostmacroid", "template": "hostid",
	"templatedashboard": "dashboardid", "graphprototype": "graphid"}

// objectKinds are the ID kinds of the objects 6.0's messages name as
// `Graph with ID "2594" is not available.`.
var objectKinds = map[string]string{"Graph": "graphid", "Item": "itemid", "Host": "hostid", "Host group": "groupid"}

var objectWithID = regexp.MustCompile(`^([A-Z][a-z]+(?: group)?) with ID "`)

func newNormaliser(t0 int64) *normaliser {
	return &normaliser{t0: t0, names: map[string]string{}, gen: map[string]int{}}
}

// sentWindow is how far after T0 a case may send values: clocks in
// [T0, T0+sentWindow) that the case named (or the hours they start) are
// its own, written "T0+N"; the run starts
// at T0+3h at the earliest (T0 is three hours before the hour the run
// starts in), so "now" is never inside it.
const sentWindow = 3 * 3600

// generated are the ID members whose values a server makes up on its
// own (not returned by a create the case made): numbered by first
// appearance in the run, per member.
var generated = map[string]bool{
	"eventid": true, "r_eventid": true, "c_eventid": true, "cause_eventid": true,
	"acknowledgeid": true, "alertid": true, "interfaceid": true, "hostmacroid": true,
	"globalmacroid": true, "mediaid": true, "auditid": true, "recordsetid": true,
	"p_eventid": true, "maintenanceid_": true, "tagid": true, "problemtagid": true,
	"servicetagid": true, "service_problem_tagid": true, "operationid": true,
	"opmessage_grpid": true, "opmessage_usrid": true, "conditionid": true,
	"mappingid": true, "item_preprocid": true, "functionid": true, "sysmapid_": true,
	"timeperiodid": true, "dependencyid": true, "sla_scheduleid": true,
	"sla_excluded_downtimeid": true, "sla_service_tagid": true, "ruleid": true,
	"dashboard_pageid": true, "widgetid": true, "gitemid": true, "lld_macro_pathid": true, "dcheckid": true, "dhostid": true, "dserviceid": true, "httpstepid": true,
}

// clocks are the members holding Unix times.
var clocks = map[string]bool{
	"clock": true, "lastclock": true, "r_clock": true, "lastchange": true,
	"lastaccess": true, "lastlogin": true, "created_at": true, "attempt_clock": true,
	"period_from": true, "period_to": true, "effective_date": true,
	"suppress_until": true, "active_since": true, "active_till": true,
	"created": true, "last_access": true, "expires_at": true, "ts_from": true, "ts_to": true,
	"lastcheck": true, "lastaccess_": true, "errors_from": true, "disable_until": true,
	"last_update": true,
}

// tokens are the members holding secrets made up per session.
var tokens = map[string]bool{"sessionid": true, "token": true, "secret": true}

var secondsSpent = regexp.MustCompile(`seconds spent: [0-9.]+`)

// exportDate is configuration.export's date.
var exportDate = regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z`)

// bind names a raw ID (or each of a list of them) of member key name.
func (n *normaliser) bind(key string, v any, name string) {
	switch t := v.(type) {
	case []any:
		for i, e := range t {
			n.bind(key, e, name+"."+strconv.Itoa(i))
		}
	case string:
		if isID(t) && t != "0" {
			k := kinds(key)[0] + "/" + t
			if _, ok := n.names[k]; !ok {
				n.names[k] = "$" + name
			}
		}
	case json.Number:
		n.bind(key, t.String(), name)
	}
}

// aliases are the members whose IDs are of another member's kind.
var aliases = map[string][]string{
	"objectid":    {"triggerid", "itemid"},
	"templateid":  {"hostid", "itemid", "triggerid", "templateid", "graphid", "httptestid"},
	"ymin_itemid": {"itemid"}, "ymax_itemid": {"itemid"},
	"parent_itemid": {"itemid"}, "master_itemid": {"itemid"}, "prototypeid": {"itemid"},
	"r_eventid": {"eventid"}, "c_eventid": {"eventid"}, "cause_eventid": {"eventid"},
	"p_eventid": {"eventid"}, "proxy_hostid": {"proxyid", "hostid"},
	"parent_templateid": {"templateid", "hostid"}, "resourceid": {"hostid", "itemid", "triggerid", "groupid", "userid", "usrgrpid", "mediatypeid", "actionid"},
}

// kinds returns the kinds an ID of member key may be, first the one it
// is bound as.
func kinds(key string) []string {
	if k, ok := aliases[key]; ok {
		return k
	}
	if k, ok := aliases[strings.TrimSuffix(key, "s")]; ok {
		return k
	}
	return []string{strings.TrimSuffix(key, "s")}
}

func isID(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isIDKey reports a member that holds IDs.
func isIDKey(k string) bool {
	return strings.HasSuffix(k, "id") || strings.HasSuffix(k, "ids")
}

// answer normalises a whole decoded JSON-RPC answer; ordered says the
// result's top-level array keeps its order.
func (n *normaliser) answer(method string, x any, ordered bool) any {
	m, ok := x.(map[string]any)
	if !ok {
		return x
	}
	out := map[string]any{}
	fam, _, _ := strings.Cut(method, ".")
	n.family = fam + "id"
	if k, ok := families[fam]; ok {
		n.family = k
	}
	if e, ok := m["error"]; ok {
		out["error"] = n.value("error", e, false, false)
		return out
	}
	if h, ok := m["http"]; ok {
		out["http"] = h
		return out
	}
	r := m["result"]
	if method == "user.login" {
		if _, ok := r.(string); ok {
			r = "<token>"
		}
	}
	n.resultKeys = resultKeyKinds[method]
	n.number("", r)
	out["result"] = n.value("", r, true, ordered)
	return out
}

// number names the generated IDs first seen in v in the order of their
// values, per kind: both servers hand out IDs in increasing order as
// objects are made, so the names do not depend on the order of an
// answer (which, unsorted, is not defined).
func (n *normaliser) number(key string, v any) {
	seen := map[string][]uint64{}
	var walk func(key string, v any)
	add := func(key, s string) {
		kind := kinds(key)[0]
		if !generated[kind] || s == "0" {
			return
		}
		for _, k := range kinds(key) {
			if _, ok := n.names[k+"/"+s]; ok {
				return
			}
		}
		u, _ := strconv.ParseUint(s, 10, 64)
		seen[kind] = append(seen[kind], u)
	}
	walk = func(key string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				if isID(k) {
					add(keyKind(key, k, e), k)
				}
				walk(k, e)
			}
		case []any:
			for _, e := range t {
				walk(key, e)
			}
		case string:
			if isIDKey(key) && isID(t) && !clocks[key] {
				add(key, t)
			}
			if expressionKeys[key] {
				for _, m := range functionRef.FindAllStringSubmatch(t, -1) {
					add("functionid", m[1])
				}
			}
		case json.Number:
			walk(key, t.String())
		}
	}
	walk(key, v)
	kindNames := make([]string, 0, len(seen))
	for k := range seen {
		kindNames = append(kindNames, k)
	}
	sort.Strings(kindNames)
	for _, kind := range kindNames {
		vals := seen[kind]
		slices.Sort(vals)
		vals = slices.Compact(vals)
		for _, u := range vals {
			n.gen[kind]++
			n.names[kind+"/"+strconv.FormatUint(u, 10)] = "#" + kind + ":" + strconv.Itoa(n.gen[kind])
		}
	}
}

// widgetFieldKinds are the ID kinds of a dashboard widget field's value
// by the field's type (6.0's numbers).
var widgetFieldKinds = map[string]string{"2": "groupid", "3": "hostid", "4": "itemid", "5": "itemid",
	"6": "graphid", "7": "graphid", "9": "serviceid", "10": "slaid"}

// widgetFieldKind is the ID kind of m's value when m is a widget field
// naming an object, else "".
func widgetFieldKind(m map[string]any) string {
	if len(m) != 3 {
		return ""
	}
	typ, _ := m["type"].(string)
	_, named := m["name"].(string)
	v, _ := m["value"].(string)
	if !named || !isID(v) {
		return ""
	}
	return widgetFieldKinds[typ]
}

// value normalises v, the value of member key; top is the result
// itself.
func (n *normaliser) value(key string, v any, top, ordered bool) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			nk := k
			switch {
			case top && n.resultKeys != "" && isID(k):
				nk = n.id(n.resultKeys, k)
			case isID(k):
				nk = n.id(keyKind(key, k, e), k)
			}
			out[nk] = n.value(k, e, false, false)
		}
		if kind := widgetFieldKind(t); kind != "" {
			out["value"] = n.id(kind, t["value"].(string))
		}
		return out
	case []any:
		out := make([]any, len(t))
		objects := false
		for i, e := range t {
			out[i] = n.value(key, e, false, false)
			if _, ok := e.(map[string]any); ok {
				objects = true
			}
		}
		// The order of nested lists of objects (selectHosts, selectTags)
		// and of an unsorted result is not defined by Zabbix: sorted, by
		// the objects' own ID where they have one, so that two answers
		// whose objects differ still pair the same objects.
		if (top && !ordered) || (!top && objects) {
			prefer := ""
			if top {
				prefer = n.family
			}
			sortObjects(out, prefer)
		} else if top && len(n.sortFields) > 0 {
			sortTies(out, n.sortFields, n.family)
		}
		return out
	case string:
		return n.scalar(key, t)
	case json.Number:
		if key == "ms" {
			return json.Number("0") // script.execute's debug.ms: time spent
		}
		s := n.scalar(key, t.String())
		if s == t.String() {
			return t
		}
		return s
	}
	return v
}

func (n *normaliser) scalar(key, s string) any {
	switch {
	case tokens[key] && s != "":
		return "<token>"
	case clocks[key] && isID(s) && s != "0":
		c, _ := strconv.ParseInt(s, 10, 64)
		if c >= n.t0 && c < n.t0+sentWindow && (n.named == nil || n.named[c]) {
			return "T0+" + strconv.FormatInt(c-n.t0, 10)
		}
		return "<now>"
	case isIDKey(key) && isID(s):
		return n.id(key, s)
	case expressionKeys[key] && functionRef.MatchString(s):
		// A stored expression names its functions by ID ("{32835}>100").
		return functionRef.ReplaceAllStringFunc(s, func(m string) string {
			return "{" + n.id("functionid", m[1:len(m)-1]) + "}"
		})
	case key == "uuid" && isUUID(s):
		return "<uuid>"
	case key == "date" && exportDate.MatchString(s), strings.HasPrefix(s, "zabbix_export:"),
		strings.Contains(s, "<zabbix_export>"), strings.Contains(s, `"zabbix_export"`):
		// configuration.export's date is the time of the call.
		return exportDate.ReplaceAllString(s, "<date>")
	case key == "ha_nodeid" && len(s) == 25:
		// The CUID a server gives its HA node.
		return "<cuid>"
	case key == "info" && strings.Contains(s, "seconds spent"):
		return secondsSpent.ReplaceAllString(s, "seconds spent: *")
	case key == "data" && strings.ContainsAny(s, "0123456789"):
		// An error message may quote an ID ("value (10594) already
		// exists", `with ID "10594"`, "value (hostid, macro)=(10594,
		// {$A})"): the IDs the run named are written by name there too.
		// Only those shapes: a bare number in a message is a value
		// ("must be one of 0, 1, 2").
		// The message may say the ID's kind: "(hostid)=(10594)",
		// `"/hostids/2": value (10594)`.
		hint := ""
		if m := idKindHint.FindStringSubmatch(s); m != nil {
			hint = strings.TrimSuffix(m[1]+m[2], "s")
		} else if m := objectWithID.FindStringSubmatch(s); m != nil {
			hint = objectKinds[m[1]]
		}
		return quotedID.ReplaceAllStringFunc(s, func(m string) string {
			sub := quotedID.FindStringSubmatch(m)
			d := sub[1] + sub[2] + sub[3]
			if name, ok := n.names[hint+"/"+d]; ok && hint != "" {
				return strings.Replace(m, d, name, 1)
			}
			if name, ok := n.names[n.family+"/"+d]; ok {
				return strings.Replace(m, d, name, 1)
			}
			if name, ok := n.anyName(d); ok {
				return strings.Replace(m, d, name, 1)
			}
			return m
		})
	}
	return s
}

// isUUID reports the 32 hex digits Zabbix 6.0 gives objects as "uuid":
// made up per server, so only whether there is one is compared.
func isUUID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// maskUUIDs applies the uuid rule to an answer recorded before it
// existed (golden files are normalised when recorded).
func maskUUIDs(x any) any {
	switch t := x.(type) {
	case map[string]any:
		for k, v := range t {
			if s, ok := v.(string); ok && k == "uuid" && isUUID(s) {
				t[k] = "<uuid>"
				continue
			}
			t[k] = maskUUIDs(v)
		}
	case []any:
		for i, v := range t {
			t[i] = maskUUIDs(v)
		}
	}
	return x
}

// expressionKeys hold trigger expressions, whose functions Zabbix
// writes as "{functionid}" unless asked to expand them.
var expressionKeys = map[string]bool{"expression": true, "recovery_expression": true}

var functionRef = regexp.MustCompile(`\{([0-9]+)\}`)

var idKindHint = regexp.MustCompile(`\(([a-z_]+id)[,)].*=\(|"/([a-z_]+ids)/[0-9]+": value \(`)

// quotedID: "(10594)" but not an import path's element index
// ("template(1)", after a letter).
var quotedID = regexp.MustCompile(`(?:^|[^a-z])\(([0-9]+)\)|ID "([0-9]+)"|=\(([0-9]+), `)

// anyName is the name of raw ID s of any kind, when exactly one kind
// has it.
func (n *normaliser) anyName(s string) (string, bool) {
	found := ""
	for k, name := range n.names {
		if _, raw, _ := strings.Cut(k, "/"); raw == s {
			if found != "" && found != name {
				return "", false
			}
			found = name
		}
	}
	return found, found != ""
}

// id names one ID of member key.
func (n *normaliser) id(key, s string) string {
	ks := kinds(key)
	for _, k := range ks {
		if name, ok := n.names[k+"/"+s]; ok {
			return name
		}
	}
	return s
}

// keyKind finds, for a map keyed by IDs (preservekeys), the member of
// the element that repeats its key: its name gives the kind.
func keyKind(parent, k string, e any) string {
	if m, ok := e.(map[string]any); ok {
		names := make([]string, 0, len(m))
		for name := range m {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if s, ok := m[name].(string); ok && s == k && isIDKey(name) {
				return name
			}
		}
	}
	return parent
}

// sortObjects sorts a list: objects by an ID member every one of them
// has with distinct values (prefer first, else the first such member by
// name), anything else by its canonical JSON.
func sortObjects(xs []any, prefer string) {
	if key := idMember(xs, prefer); key != "" {
		sort.SliceStable(xs, func(a, b int) bool {
			return enc(xs[a].(map[string]any)[key]) < enc(xs[b].(map[string]any)[key])
		})
		return
	}
	sortCanonical(xs)
}

// sortTies sorts each run of objects equal in every field of fields, in
// place, leaving the runs where they are.
func sortTies(xs []any, fields []string, prefer string) {
	key := func(x any) (string, bool) {
		m, ok := x.(map[string]any)
		if !ok {
			return "", false
		}
		var b strings.Builder
		for _, f := range fields {
			v, ok := m[f]
			if !ok {
				return "", false
			}
			b.WriteString(enc(v))
			b.WriteByte(0)
		}
		return b.String(), true
	}
	for i := 0; i < len(xs); {
		k, ok := key(xs[i])
		j := i + 1
		for ok && j < len(xs) {
			if k2, ok2 := key(xs[j]); !ok2 || k2 != k {
				break
			}
			j++
		}
		if j-i > 1 {
			sortObjects(xs[i:j], prefer)
		}
		i = j
	}
}

// idMember is the ID member that tells xs's objects apart, or "".
func idMember(xs []any, prefer string) string {
	if len(xs) == 0 {
		return ""
	}
	first, ok := xs[0].(map[string]any)
	if !ok {
		return ""
	}
	var cands []string
	for k := range first {
		if strings.HasSuffix(k, "id") {
			cands = append(cands, k)
		}
	}
	sort.Strings(cands)
	if prefer != "" {
		cands = append([]string{prefer}, cands...)
	}
	for _, k := range cands {
		seen := map[string]bool{}
		ok := true
		for _, x := range xs {
			m, isMap := x.(map[string]any)
			v, has := m[k]
			if !isMap || !has || seen[enc(v)] {
				ok = false
				break
			}
			seen[enc(v)] = true
		}
		if ok {
			return k
		}
	}
	return ""
}

func sortCanonical(xs []any) {
	keys := make([]string, len(xs))
	idx := make([]int, len(xs))
	for i, x := range xs {
		b, _ := json.Marshal(x)
		keys[i] = string(b)
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	cp := append([]any(nil), xs...)
	for i, j := range idx {
		xs[i] = cp[j]
	}
}
