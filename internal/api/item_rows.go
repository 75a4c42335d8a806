package api

import (
	"bufio"
	"sort"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/api/zjson"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
)

// item.get works on typed rows rather than one map per item: with 100k
// items, building, filtering, shaping and encoding a map[string]any of
// 18 strings per row cost about 0.6 s; the rows are filtered and sorted
// through a field accessor and encoded straight into the response. The
// semantics are those of getParams.apply on the equivalent objects, which
// TestItemGetMatchesObjects checks.

// itemField numbers the scalar fields of an item object, in the order
// they are encoded: by name, as appendValue orders object keys.
type itemField uint8

const (
	fAllowTraps itemField = iota
	fAuthType
	fDelay
	fDescription
	fError
	fEvalType
	fFlags
	fFollowRedirects
	fFormula
	fHistory
	fHostID
	fHTTPProxy
	fInterfaceID
	fInventoryLink
	fIPMISensor
	fItemID
	fJMXEndpoint
	fKey
	fLastClock
	fLastNS
	fLastValue
	fLifetime
	fLogTimeFmt
	fMasterItemID
	fName
	fOutputFormat
	fParams
	fPassword
	fPostType
	fPosts
	fPrevValue
	fPrivateKey
	fPublicKey
	fRequestMethod
	fRetrieveMode
	fRetryDelay
	fSNMPOID
	fSSLCertFile
	fSSLKeyFile
	fSSLKeyPassword
	fState
	fStatus
	fStatusCodes
	fTemplateID
	fTimeout
	fTimestampPrecision
	fTrapperHosts
	fTrends
	fType
	fUnits
	fURL
	fUsername
	fUUID
	fValueType
	fValueMapID
	fVerifyHost
	fVerifyPeer
	nItemFields
)

var itemFieldNames = [nItemFields]string{
	"allow_traps", "authtype", "delay", "description", "error", "evaltype", "flags", "follow_redirects", "formula",
	"history", "hostid", "http_proxy", "interfaceid", "inventory_link", "ipmi_sensor", "itemid", "jmx_endpoint",
	"key_", "lastclock", "lastns", "lastvalue", "lifetime", "logtimefmt", "master_itemid", "name", "output_format",
	"params", "password", "post_type", "posts", "prevvalue", "privatekey", "publickey", "request_method",
	"retrieve_mode", "retry_delay", "snmp_oid", "ssl_cert_file", "ssl_key_file", "ssl_key_password", "state",
	"status", "status_codes", "templateid", "timeout", "timestamp_precision", "trapper_hosts", "trends", "type",
	"units", "url", "username", "uuid", "value_type", "valuemapid", "verify_host", "verify_peer",
}

// itemDefaults are the fields of Zabbix 6.0's item that Peregrine does
// not model, with the value 6.0 gives an item that does not set them
// (recorded from 6.0.14): item.create accepts them and stores none.
// itemDefault holds them by field for the encoder.
var itemDefaults = map[itemField]string{
	fEvalType: "0", fFormula: "",
	fLifetime: "30d",
}

var itemDefault = func() (d [nItemFields]struct {
	v  string
	ok bool
}) {
	for f, v := range itemDefaults {
		d[f].v, d[f].ok = v, true
	}
	return d
}()

// itemSchema is Zabbix 6.0's items table as filter and search read it
// (with item_rtdata's state and error).
var itemSchema = schema{id: "itemid", types: fieldTypes(`itemid:n type:n snmp_oid:c hostid:n name:c key_:c
	delay:c history:c trends:c status:n value_type:n trapper_hosts:c units:c formula:c logtimefmt:c templateid:n
	valuemapid:n params:t ipmi_sensor:c authtype:n username:c password:c publickey:c privatekey:c flags:n
	interfaceid:n description:t inventory_link:n lifetime:c evaltype:n jmx_endpoint:c master_itemid:n timeout:c
	url:c query_fields:c posts:t status_codes:c follow_redirects:n post_type:n http_proxy:c headers:t
	retrieve_mode:n request_method:n output_format:n ssl_cert_file:c ssl_key_file:c ssl_key_password:c
	verify_peer:n verify_host:n allow_traps:n uuid:c state:n error:c`)}

// itemFieldByName maps a field name to its number.
var itemFieldByName = func() map[string]itemField {
	m := make(map[string]itemField, nItemFields)
	for i, n := range itemFieldNames {
		m[n] = itemField(i)
	}
	return m
}()

// quoted reports whether a field's value can need JSON escaping; the
// others are digits.
func (f itemField) quoted() bool {
	switch f {
	case fDelay, fDescription, fError, fHistory, fKey, fLastValue, fName, fParams, fPrevValue, fSNMPOID, fIPMISensor, fLogTimeFmt, fTrapperHosts, fTimeout, fTimestampPrecision, fTrends, fUnits, fRetryDelay,
		fJMXEndpoint, fHTTPProxy, fPassword, fPosts, fSSLCertFile, fSSLKeyFile, fSSLKeyPassword, fStatusCodes, fURL, fUsername, fPublicKey, fPrivateKey:
		return true
	}
	return itemDefault[f].ok
}

// itemRow is one item of an item.get answer: a pointer, so that the
// rows of 100k items are 800 KB. What is read from elsewhere for a row
// (last values, state) is fetched when first needed and kept for that
// row alone (rowCache): filtering, sorting and encoding each go through
// the rows one at a time.
type itemRow struct {
	it *catalog.Item
}

// rowCache is what was fetched for the row at hand.
type rowCache struct {
	it *catalog.Item
	// Last values, fetched on first use.
	last, prev history.Sample
	hasLast    bool
	fetched    bool
	// Runtime state ("state", "error"), fetched on first use.
	st        itemstate.Item
	stFetched bool
}

type itemRows struct {
	rows   []itemRow
	lv     LastValues // nil: no last values
	states ItemStates // nil: every item is normal
	c      rowCache
}

func (rs *itemRows) cacheOf(r *itemRow) *rowCache {
	if rs.c.it != r.it {
		rs.c = rowCache{it: r.it}
	}
	return &rs.c
}

func (rs *itemRows) stateOf(r *itemRow) *itemstate.Item {
	c := rs.cacheOf(r)
	if !c.stFetched {
		c.stFetched = true
		if rs.states != nil {
			c.st, _ = rs.states.ItemState(r.it.ID)
		}
	}
	return &c.st
}

func (rs *itemRows) lastOf(r *itemRow) *rowCache {
	c := rs.cacheOf(r)
	if !c.fetched {
		c.fetched = true
		if rs.lv != nil {
			c.last, c.prev, c.hasLast = rs.lv.Last(r.it.ID)
		}
	}
	return c
}

// appendField appends field f of r as plain text (not JSON-escaped).
func (rs *itemRows) appendField(dst []byte, r *itemRow, f itemField) []byte {
	it := r.it
	if f == fLifetime && it.Ext().LLD != nil {
		return append(dst, it.Ext().LLD.Lifetime...)
	}
	if d := &itemDefault[f]; d.ok {
		return append(dst, d.v...)
	}
	switch f {
	case fDelay:
		return append(dst, it.Delay...)
	case fFlags:
		return strconv.AppendInt(dst, int64(it.Flags()), 10)
	case fValueMapID:
		return strconv.AppendUint(dst, it.ValueMapID, 10)
	case fTemplateID:
		return strconv.AppendUint(dst, it.TemplateID, 10)
	case fUUID:
		return append(dst, it.Ext().UUID...)
	case fInventoryLink:
		return strconv.AppendUint(dst, uint64(it.InventoryLink), 10)
	case fState:
		if rs.stateOf(r).NotSupported {
			return append(dst, '1')
		}
		return append(dst, '0')
	case fError:
		return append(dst, rs.stateOf(r).Error...)
	case fInterfaceID:
		return strconv.AppendUint(dst, it.InterfaceID, 10)
	case fTimeout:
		return append(dst, it.Ext().Timeout...)
	case fRetryDelay:
		return append(dst, it.Ext().RetryDelay...)
	case fSNMPOID:
		return append(dst, it.Ext().SNMPOID...)
	case fIPMISensor:
		return append(dst, it.Ext().IPMISensor...)
	case fLogTimeFmt:
		return append(dst, it.Ext().LogTimeFmt...)
	case fTrapperHosts:
		if t := it.Ext().Traps; t != nil {
			return append(dst, t.Hosts...)
		}
		return dst
	case fAllowTraps:
		if t := it.Ext().Traps; t != nil && t.Allow {
			return append(dst, '1')
		}
		return append(dst, '0')
	case fTimestampPrecision:
		return append(dst, it.Ext().TimestampPrecision...)
	case fHistory:
		return append(dst, it.History...)
	case fHostID:
		return strconv.AppendUint(dst, it.HostID, 10)
	case fItemID:
		return strconv.AppendUint(dst, it.ID, 10)
	case fMasterItemID:
		return strconv.AppendUint(dst, it.MasterItemID, 10)
	case fParams:
		return append(dst, it.Ext().Params...)
	case fDescription:
		return append(dst, it.Ext().Description...)
	case fKey:
		return append(dst, it.Key...)
	case fName:
		return append(dst, it.Name...)
	case fStatus:
		if it.Enabled {
			return append(dst, '0')
		}
		return append(dst, '1')
	case fTrends:
		return append(dst, it.Trends...)
	case fType:
		return strconv.AppendUint(dst, uint64(it.Type), 10)
	case fUnits:
		return append(dst, it.Units...)
	case fValueType:
		return strconv.AppendUint(dst, uint64(it.ValueType), 10)
	case fAuthType, fFollowRedirects, fOutputFormat, fPostType, fRequestMethod, fRetrieveMode, fVerifyHost, fVerifyPeer:
		return strconv.AppendUint(dst, uint64(itemNumber(it, f)), 10)
	case fJMXEndpoint, fHTTPProxy, fPassword, fPosts, fSSLCertFile, fSSLKeyFile, fSSLKeyPassword, fStatusCodes, fURL, fUsername, fPublicKey, fPrivateKey:
		return append(dst, itemString(it, f)...)
	}
	c := rs.lastOf(r)
	switch f {
	case fLastClock:
		if c.hasLast {
			return strconv.AppendInt(dst, c.last.Clock, 10)
		}
	case fLastNS:
		if c.hasLast {
			return strconv.AppendInt(dst, int64(c.last.NS), 10)
		}
	case fLastValue:
		if c.hasLast {
			return appendSampleValue(dst, &c.last)
		}
	case fPrevValue:
		if c.hasLast && c.prev.ItemID != 0 {
			return appendSampleValue(dst, &c.prev)
		}
	}
	return append(dst, '0')
}

// appendSampleValue appends a value as item.get shows it (valueString).
func appendSampleValue(dst []byte, v *history.Sample) []byte {
	switch v.Type {
	case history.Float:
		return zjson.AppendFloat(dst, v.F)
	case history.Uint:
		return strconv.AppendUint(dst, v.U, 10)
	}
	return append(dst, v.S...)
}

// fieldOf resolves a field name; ok is false for names item objects do
// not have, whose value getParams.apply takes as "".
func fieldOf(name string) (itemField, bool) {
	f, ok := itemFieldByName[name]
	return f, ok
}

// itemSelect holds what item.get shapes beyond getParams.
type itemSelect struct {
	// headers, queryFields, parameters: the output asks for the item's
	// list fields (set by applyItems from the output).
	headers, queryFields, parameters bool
	// preprocessing lists the step fields selectPreprocessing asks for,
	// in name order (preproc false: not selected).
	preproc       bool
	preprocessing []string
	// nested are the other selects, by name; a nil value leaves the
	// member out.
	nested []itemNested
}

// itemNested is one select of item.get.
type itemNested struct {
	name  string
	value func(it *catalog.Item) any
}

// preprocFields are a preprocessing object's fields, in name order.
var preprocFields = []string{"error_handler", "error_handler_params", "params", "type"}

// itemSelect reads item.get's selects as Zabbix 6.0 answers them
// (recorded from 6.0.14): selectHosts, selectInterfaces and
// selectPreprocessing "count" leave the member out; selectTriggers
// "count" is a count and selectGraphs' is "0"; a list of fields adds
// the ID of hosts, interfaces and triggers; selectTags gives an empty
// object per tag for anything but "extend" or a list of fields.
func (p *itemGetParams) itemSelect(s *Server, snap *catalog.Snapshot, a access) itemSelect {
	var out itemSelect
	if sp := &p.SelectPreprocessing; sp.list() {
		out.preproc = true
		for _, f := range preprocFields {
			if sp.has(f) {
				out.preprocessing = append(out.preprocessing, f)
			}
		}
	}
	add := func(name string, v func(it *catalog.Item) any) {
		out.nested = append(out.nested, itemNested{name, v})
	}
	if sd := p.SelectDiscoveryRule; sd.list() {
		add("discoveryRule", func(it *catalog.Item) any { return s.discoveryRuleOf(snap, it, sd) })
	}
	if sg := p.SelectGraphs; sg.Set {
		gx := newGraphIndex(snap)
		add("graphs", func(it *catalog.Item) any { return graphsSelect(gx.byItem[it.ID], sg, p.limitSelect) })
	}
	if sh := p.SelectHosts; sh.list() {
		add("hosts", func(it *catalog.Item) any {
			return sh.shape([]object{hostObject(it.Host)}, "hostid")
		})
	}
	if si := p.SelectInterfaces; si.list() {
		add("interfaces", func(it *catalog.Item) any {
			f := snap.Interface(it.InterfaceID)
			if f == nil {
				return []object{}
			}
			return si.shape([]object{s.ifaceObject(f, si.has("details"))}, "interfaceid")
		})
	}
	if p.SelectItemDiscovery.list() {
		sd := p.SelectItemDiscovery
		add("itemDiscovery", func(it *catalog.Item) any { return s.itemDiscoveryOf(snap, it, sd) })
	}
	if st := p.SelectTags; st.Set {
		add("tags", func(it *catalog.Item) any { return st.shape(itemTagObjects(it.Tags), "") })
	}
	if st := p.SelectTriggers; st.Set {
		add("triggers", func(it *catalog.Item) any {
			var l []object
			for _, t := range triggersOfItem(snap, it) {
				if triggerReadable(snap, a, t, false) {
					l = append(l, triggerObject(t, s.runtime(t.ID)))
				}
			}
			if st.Count {
				return countOf(len(l))
			}
			return nonNil(st.shape(p.limitSelect(l), "triggerid"))
		})
	}
	if sv := p.SelectValueMap; sv.Given() {
		vo := output{all: true}
		if !(len(sv.Value) == 1 && sv.Value[0] == "extend") {
			vo = output{fields: map[string]bool{}}
			for _, f := range sv.Value {
				vo.fields[f] = true
			}
		}
		add("valuemap", func(it *catalog.Item) any {
			vm := snap.ValueMap(it.ValueMapID)
			if vm == nil {
				return []object{}
			}
			o := object{"valuemapid": id(vm.ID), "name": vm.Name, "mappings": mappingObjects(vm.Mappings)}
			for k := range o {
				if !vo.has(k) {
					delete(o, k)
				}
			}
			return o
		})
	}
	return out
}

// appendPreprocessing appends "preprocessing":[...] with the selected
// fields of each step, all strings as Zabbix returns them.
func appendPreprocessing(dst []byte, it *catalog.Item, fields []string) []byte {
	dst = append(dst, `"preprocessing":[`...)
	for i, st := range it.Preprocessing {
		if i > 0 {
			dst = append(dst, ',')
		}
		if len(fields) == 0 {
			dst = append(dst, "[]"...) // PHP's empty array
			continue
		}
		dst = append(dst, '{')
		for j, f := range fields {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = zjson.AppendString(dst, f)
			dst = append(dst, ':')
			switch f {
			case "error_handler":
				dst = append(dst, '"')
				dst = strconv.AppendInt(dst, int64(st.ErrorHandler), 10)
				dst = append(dst, '"')
			case "error_handler_params":
				dst = zjson.AppendString(dst, st.ErrorHandlerParams)
			case "params":
				dst = zjson.AppendString(dst, st.Params)
			case "type":
				dst = append(dst, '"')
				dst = strconv.AppendInt(dst, int64(st.Type), 10)
				dst = append(dst, '"')
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// applyItems does for rows what getParams.apply does for objects, with
// the items table's field types (itemSchema); the answer encodes itself
// (itemAnswer).
func (p *getParams) applyItems(rs *itemRows, sel itemSelect) (*itemAnswer, error) {
	var scratch []byte
	value := func(r *itemRow, name string) []byte {
		f, ok := fieldOf(name)
		if !ok {
			return scratch[:0]
		}
		scratch = rs.appendField(scratch[:0], r, f)
		return scratch
	}
	rows := rs.rows
	if p.noRows {
		rows = nil
	}
	if fs := p.filterConds(&itemSchema, nil); len(fs) > 0 {
		kept := rows[:0]
		for i := range rows {
			r := &rows[i]
			if p.filterHit(fs, func(c *filterCond) bool { return c.match(value(r, c.name)) }) {
				kept = append(kept, rows[i])
			}
		}
		rows = kept
	}
	if ss := p.searchConds(&itemSchema, nil); len(ss) > 0 {
		kept := rows[:0]
		for i := range rows {
			r := &rows[i]
			if p.searchHit(ss, func(c *searchCond, w string) bool { return p.searchMatch(string(value(r, c.name)), w) }) {
				kept = append(kept, rows[i])
			}
		}
		rows = kept
	}
	fields, idx, err := p.sortFields([]string{"itemid", "name", "key_", "delay", "history", "trends", "type", "status"})
	if err != nil {
		return nil, err
	}
	if len(fields) > 0 {
		// One key per row and field, parsed once.
		type key struct {
			s     string
			n     int64
			isNum bool
		}
		nf := len(fields)
		keys := make([]key, len(rows)*nf)
		for i := range rows {
			for j, f := range fields {
				v := string(value(&rows[i], f))
				n, err := strconv.ParseInt(v, 10, 64)
				keys[i*nf+j] = key{s: v, n: n, isNum: err == nil && itemSchema.types[f] == 'n'}
			}
		}
		perm := make([]int, len(rows))
		for i := range perm {
			perm[i] = i
		}
		sort.SliceStable(perm, func(a, b int) bool {
			ka, kb := keys[perm[a]*nf:perm[a]*nf+nf], keys[perm[b]*nf:perm[b]*nf+nf]
			for j := range ka {
				x, y := &ka[j], &kb[j]
				if x.s == y.s {
					continue
				}
				less := x.s < y.s
				if x.isNum && y.isNum {
					less = x.n < y.n
				}
				return less != p.SortOrder.Value.desc(idx[j])
			}
			return false
		})
		sorted := make([]itemRow, len(rows))
		for i, k := range perm {
			sorted[i] = rows[k]
		}
		rows = sorted
	}
	a := &itemAnswer{rs: rs, count: p.CountOutput.Value, preserve: p.PreserveKeys.Value}
	if a.count {
		a.rows = rows
		return a, nil
	}
	if p.Limit.Given() && p.Limit.Value >= 0 && int(p.Limit.Value) < len(rows) {
		rows = rows[:p.Limit.Value]
	}
	a.rows = rows

	out := p.outputFields()
	sel.headers, sel.queryFields, sel.parameters = out.has("headers"), out.has("query_fields"), out.has("parameters")
	a.sel = sel
	a.ms = a.sel.members()
	for f := range nItemFields {
		if out.has(itemFieldNames[f]) || f == fItemID {
			a.want = append(a.want, f)
		}
	}
	return a, nil
}

// itemAnswer is item.get's answer, selected, filtered, sorted and cut
// to the limit, ready to encode: encoding streams it row by row, so a
// call holds the rows (8 bytes an item) and one row's JSON, not
// the whole answer (100k items with every field are about 100 MB of
// JSON; issue 25 measured 160 MB held per concurrent call).
type itemAnswer struct {
	rs       *itemRows
	rows     []itemRow
	count    bool // countOutput: the number of rows
	preserve bool // preservekeys: an object keyed by item ID
	sel      itemSelect
	ms       []itemMember
	want     []itemField
}

// encode writes the answer through emit in pieces of about one row;
// emit must copy what it keeps.
func (a *itemAnswer) encode(emit func([]byte)) {
	rows := a.rows
	if a.count {
		emit(strconv.AppendQuote(nil, strconv.Itoa(len(rows))))
		return
	}
	var buf []byte
	if a.preserve {
		if len(rows) == 0 {
			emit([]byte("[]")) // PHP's empty array
			return
		}
		// Keys in string order, as a map's keys are encoded.
		ids := make([]string, len(rows))
		perm := make([]int, len(rows))
		for i := range rows {
			ids[i], perm[i] = strconv.FormatUint(rows[i].it.ID, 10), i
		}
		sort.Slice(perm, func(x, y int) bool { return ids[perm[x]] < ids[perm[y]] })
		buf = append(buf[:0], '{')
		for n, i := range perm {
			if n > 0 {
				buf = append(buf, ',')
			}
			buf = zjson.AppendString(buf, ids[i])
			buf = append(buf, ':')
			buf = a.rs.appendRow(buf, &rows[i], a.want, &a.sel, a.ms)
			emit(buf)
			buf = buf[:0]
		}
		emit(append(buf, '}'))
		return
	}
	buf = append(buf, '[')
	for i := range rows {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = a.rs.appendRow(buf, &rows[i], a.want, &a.sel, a.ms)
		emit(buf)
		buf = buf[:0]
	}
	emit(append(buf, ']'))
}

// write streams the answer to w (the stream path of item.get).
func (a *itemAnswer) write(w *bufio.Writer) error {
	a.encode(func(b []byte) { w.Write(b) })
	return nil
}

// value is the answer in memory, for the callers of item.get that need
// the whole of it (the audit log's records of what a change changed).
func (a *itemAnswer) value() any {
	if a.count {
		return strconv.Itoa(len(a.rows))
	}
	var out []byte
	a.encode(func(b []byte) { out = append(out, b...) })
	return rawJSON(out)
}

// itemMember is one list member of an item answer: a list field the
// output asks for or a select, in the order appendRow writes them.
type itemMember struct {
	name   string
	kind   uint8 // memberHeaders...memberNested
	nested func(it *catalog.Item) any
}

const (
	memberHeaders = iota
	memberParameters
	memberPreprocessing
	memberQueryFields
	memberNested
)

// members are sel's list members in name order, made once per request.
func (sel *itemSelect) members() []itemMember {
	var ms []itemMember
	add := func(name string, on bool, kind uint8) {
		if on {
			ms = append(ms, itemMember{name: name, kind: kind})
		}
	}
	add("headers", sel.headers, memberHeaders)
	add("parameters", sel.parameters, memberParameters)
	add("preprocessing", sel.preproc, memberPreprocessing)
	add("query_fields", sel.queryFields, memberQueryFields)
	for _, x := range sel.nested {
		ms = append(ms, itemMember{name: x.name, kind: memberNested, nested: x.value})
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].name < ms[j].name })
	return ms
}

// appendRow encodes one item object with the given fields (ascending)
// and the list members ms (members), keys in name order.
func (rs *itemRows) appendRow(dst []byte, r *itemRow, fields []itemField, sel *itemSelect, ms []itemMember) []byte {
	dst = append(dst, '{')
	first := true
	next := 0
	// flush writes the members that sort before the field named before
	// ("": all that are left).
	flush := func(before string) {
		for ; next < len(ms) && (before == "" || ms[next].name < before); next++ {
			m := &ms[next]
			var v any
			if m.kind == memberNested {
				if v = m.nested(r.it); v == nil {
					continue // the select leaves this member out
				}
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			switch m.kind {
			case memberHeaders:
				dst = appendHTTPHeaders(dst, r.it.Ext().HTTP)
			case memberParameters:
				dst = appendItemParameters(dst, r.it.Ext().Parameters)
			case memberPreprocessing:
				dst = appendPreprocessing(dst, r.it, sel.preprocessing)
			case memberQueryFields:
				dst = appendQueryFields(dst, r.it.Ext().HTTP)
			default:
				dst = zjson.AppendString(dst, m.name)
				dst = append(dst, ':')
				dst, _ = appendValue(dst, v)
			}
		}
	}
	for _, f := range fields {
		name := itemFieldNames[f]
		if next < len(ms) {
			flush(name)
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, '"', ':')
		if f.quoted() {
			dst = rs.appendQuoted(dst, r, f)
		} else {
			dst = append(dst, '"')
			dst = rs.appendField(dst, r, f)
			dst = append(dst, '"')
		}
	}
	flush("")
	return append(dst, '}')
}

// appendQuoted appends a field that may need escaping as a JSON string.
func (rs *itemRows) appendQuoted(dst []byte, r *itemRow, f itemField) []byte {
	it := r.it
	if f == fLifetime && it.Ext().LLD != nil {
		return zjson.AppendString(dst, it.Ext().LLD.Lifetime)
	}
	if d := &itemDefault[f]; d.ok {
		return zjson.AppendString(dst, d.v)
	}
	switch f {
	case fDelay:
		return zjson.AppendString(dst, it.Delay)
	case fHistory:
		return zjson.AppendString(dst, it.History)
	case fKey:
		return zjson.AppendString(dst, it.Key)
	case fName:
		return zjson.AppendString(dst, it.Name)
	case fTrends:
		return zjson.AppendString(dst, it.Trends)
	case fUnits:
		return zjson.AppendString(dst, it.Units)
	case fTimeout:
		return zjson.AppendString(dst, it.Ext().Timeout)
	case fRetryDelay:
		return zjson.AppendString(dst, it.Ext().RetryDelay)
	case fSNMPOID:
		return zjson.AppendString(dst, it.Ext().SNMPOID)
	case fIPMISensor:
		return zjson.AppendString(dst, it.Ext().IPMISensor)
	case fLogTimeFmt:
		return zjson.AppendString(dst, it.Ext().LogTimeFmt)
	case fTrapperHosts:
		if t := it.Ext().Traps; t != nil {
			return zjson.AppendString(dst, t.Hosts)
		}
		return zjson.AppendString(dst, "")
	case fAllowTraps:
		if t := it.Ext().Traps; t != nil && t.Allow {
			return append(dst, `"1"`...)
		}
		return append(dst, `"0"`...)
	case fTimestampPrecision:
		return zjson.AppendString(dst, it.Ext().TimestampPrecision)
	case fParams:
		return zjson.AppendString(dst, it.Ext().Params)
	case fDescription:
		return zjson.AppendString(dst, it.Ext().Description)
	case fError:
		return zjson.AppendString(dst, rs.stateOf(r).Error)
	case fJMXEndpoint, fHTTPProxy, fPassword, fPosts, fSSLCertFile, fSSLKeyFile, fSSLKeyPassword, fStatusCodes, fURL, fUsername, fPublicKey, fPrivateKey:
		return zjson.AppendString(dst, itemString(it, f))
	}
	c := rs.lastOf(r)
	v := &c.last
	if f == fPrevValue {
		v = &c.prev
	}
	if !c.hasLast || f == fPrevValue && c.prev.ItemID == 0 {
		// No value: "0" for a number, "" for text (recorded from 6.0.14).
		if it.ValueType == history.Float || it.ValueType == history.Uint {
			return append(dst, `"0"`...)
		}
		return append(dst, `""`...)
	}
	switch v.Type {
	case history.Float, history.Uint:
		dst = append(dst, '"')
		dst = appendSampleValue(dst, v)
		return append(dst, '"')
	}
	return zjson.AppendString(dst, v.S)
}

// rawJSON is an encoded JSON value that appendValue copies as is.
type rawJSON []byte

// httpDefaults are the HTTP agent fields of items of other types, as
// Zabbix 6.0 returns them (its column defaults).
var httpDefaults = catalog.HTTPItem{StatusCodes: "200", FollowRedirects: true}

// itemString is a string field of how an item connects: the login of
// SSH, Telnet and database monitor items, a JMX item's endpoint and
// username, the request of HTTP agent items (httpString). Passwords are
// never returned (6.0 returns them; Peregrine never returns a secret).
func itemString(it *catalog.Item, f itemField) string {
	switch {
	case f == fJMXEndpoint && it.Ext().JMX != nil:
		return it.Ext().JMX.Endpoint
	case f == fJMXEndpoint:
		return ""
	case f == fUsername && it.Ext().JMX != nil:
		return it.Ext().JMX.Username
	case f == fUsername && it.Ext().ODBC != nil:
		return it.Ext().ODBC.Username
	}
	if l := it.Ext().Login; l != nil {
		switch f {
		case fUsername:
			return l.Username
		case fPassword:
			return ""
		case fPublicKey:
			return l.PublicKey
		case fPrivateKey:
			return l.PrivateKey
		}
	}
	if f == fPublicKey || f == fPrivateKey {
		return ""
	}
	return httpString(it.Ext().HTTP, f)
}

// itemNumber is a numeric login or HTTP agent field of an item.
func itemNumber(it *catalog.Item, f itemField) uint8 {
	if f == fAuthType && it.Ext().Login != nil {
		return it.Ext().Login.AuthType
	}
	return httpNumber(it.Ext().HTTP, f)
}

// itemObjects encodes items as a select of another object returns them
// (host.get's selectItems): the fields sl asks for, every one for
// "extend"; the ID only when asked for.
func (s *Server) itemObjects(items []*catalog.Item, sl sel) rawJSON {
	rs := &itemRows{lv: s.opts.Last, states: s.opts.States}
	var want []itemField
	for f := range nItemFields {
		if sl.has(itemFieldNames[f]) {
			want = append(want, f)
		}
	}
	is := itemSelect{headers: sl.has("headers"), queryFields: sl.has("query_fields"), parameters: sl.has("parameters")}
	dst := []byte{'['}
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		r := itemRow{it: it}
		if len(want) == 0 && !is.headers && !is.queryFields && !is.parameters {
			dst = append(dst, "[]"...) // PHP's empty array
			continue
		}
		dst = rs.appendRow(dst, &r, want, &is, is.members())
	}
	return rawJSON(append(dst, ']'))
}
