package api

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/memstore"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// refItemObject is the map form of an item that item.get used to build
// per row; it is the reference model for the typed rows.
func refItemObject(lv LastValues, st ItemStates, h *catalog.Host, it *catalog.Item, hosts sel, withTags, withSteps bool) object {
	o := object{
		"itemid": id(it.ID), "hostid": id(it.HostID), "name": it.Name, "key_": it.Key,
		"type": strconv.Itoa(int(it.Type)), "value_type": strconv.Itoa(int(it.ValueType)),
		"units": it.Units, "delay": it.Delay, "history": it.History, "trends": it.Trends,
		"status": status(it.Enabled), "state": "0", "valuemapid": id(it.ValueMapID), "flags": "0",
		"lastclock": "0", "lastns": "0", "lastvalue": "0", "prevvalue": "0",
		"error": "", "interfaceid": id(it.InterfaceID), "timeout": it.Ext().Timeout, "timestamp_precision": it.Ext().TimestampPrecision,
		"snmp_oid": it.Ext().SNMPOID, "retry_delay": it.Ext().RetryDelay, "ipmi_sensor": it.Ext().IPMISensor, "logtimefmt": it.Ext().LogTimeFmt,
		"master_itemid": id(it.MasterItemID), "params": it.Ext().Params, "description": it.Ext().Description,
		"templateid": id(it.TemplateID), "uuid": it.Ext().UUID, "inventory_link": strconv.Itoa(int(it.InventoryLink)),
		"trapper_hosts": "", "allow_traps": "0",
	}
	if t := it.Ext().Traps; t != nil {
		o["trapper_hosts"] = t.Hosts
		if t.Allow {
			o["allow_traps"] = "1"
		}
	}
	if it.ValueType != history.Float && it.ValueType != history.Uint {
		o["lastvalue"], o["prevvalue"] = "", "" // no value: "" for text
	}
	hi := it.Ext().HTTP
	if hi == nil {
		hi = &catalog.HTTPItem{StatusCodes: "200", FollowRedirects: true}
	}
	yn := func(b bool) string {
		if b {
			return "1"
		}
		return "0"
	}
	n := func(v uint8) string { return strconv.Itoa(int(v)) }
	for k, v := range map[string]string{
		"url": hi.URL, "request_method": n(hi.RequestMethod), "post_type": n(hi.PostType), "posts": hi.Posts,
		"status_codes": hi.StatusCodes, "follow_redirects": yn(hi.FollowRedirects), "retrieve_mode": n(hi.RetrieveMode),
		"output_format": n(hi.OutputFormat), "verify_peer": yn(hi.VerifyPeer), "verify_host": yn(hi.VerifyHost),
		"ssl_cert_file": hi.SSLCertFile, "ssl_key_file": hi.SSLKeyFile, "ssl_key_password": hi.SSLKeyPassword,
		"authtype": n(hi.AuthType), "username": hi.Username, "password": hi.Password, "http_proxy": hi.HTTPProxy,
		"publickey": "", "privatekey": "",
	} {
		o[k] = v
	}
	if l := it.Ext().Login; l != nil {
		o["authtype"], o["username"], o["password"], o["publickey"], o["privatekey"] = n(l.AuthType), l.Username, "", l.PublicKey, l.PrivateKey
	}
	o["jmx_endpoint"] = ""
	if it.Ext().JMX != nil {
		o["jmx_endpoint"], o["username"] = it.Ext().JMX.Endpoint, it.Ext().JMX.Username
	}
	qf := []any{}
	for _, f := range hi.QueryFields {
		qf = append(qf, object{f.Name: f.Value})
	}
	for f, v := range itemDefaults {
		o[itemFieldNames[f]] = v
	}
	// Lists, not strings: fields all the same, which output shapes.
	o["query_fields"] = field{qf}
	o["parameters"] = field{[]any{}}
	if len(hi.Headers) == 0 {
		o["headers"] = field{[]any{}}
	} else {
		hd := object{}
		for _, f := range hi.Headers {
			hd[f.Name] = f.Value
		}
		o["headers"] = field{hd}
	}
	if withSteps {
		steps := []object{}
		for _, st := range it.Preprocessing {
			steps = append(steps, object{"type": strconv.Itoa(st.Type), "params": st.Params,
				"error_handler": strconv.Itoa(st.ErrorHandler), "error_handler_params": st.ErrorHandlerParams})
		}
		o["preprocessing"] = steps
	}
	if s, ok := st.ItemState(it.ID); ok {
		o["error"] = s.Error
		if s.NotSupported {
			o["state"] = "1"
		}
	}
	if lv != nil {
		if last, prev, ok := lv.Last(it.ID); ok {
			o["lastclock"] = strconv.FormatInt(last.Clock, 10)
			o["lastns"] = strconv.Itoa(int(last.NS))
			o["lastvalue"] = string(appendSampleValue(nil, &last))
			if prev.ItemID != 0 {
				o["prevvalue"] = string(appendSampleValue(nil, &prev))
			}
		}
	}
	if hosts.list() {
		o["hosts"] = hosts.shape([]object{hostObject(h)}, "hostid")
	}
	if withTags {
		o["tags"] = []object{}
	}
	return o
}

// refItemGet answers item.get the way the map-based code did.
func refItemGet(snap *catalog.Snapshot, lv LastValues, st ItemStates, params string) ([]byte, error) {
	var p struct {
		getParams
		ItemIDs     opt[ids]  `json:"itemids"`
		HostIDs     opt[ids]  `json:"hostids"`
		GroupIDs    opt[ids]  `json:"groupids"`
		WebItems    opt[bool] `json:"webitems"`
		Monitored   opt[bool] `json:"monitored"`
		SelectHosts sel       `json:"selectHosts"`
		SelectTags  sel       `json:"selectTags"`
		SelectSteps sel       `json:"selectPreprocessing"`
	}
	if err := decodeGet([]byte(params), &p); err != nil {
		return nil, err
	}
	var objs []object
	visit := func(h *catalog.Host) {
		if len(p.GroupIDs.Value) > 0 && !anyGroup(h.GroupIDs, p.GroupIDs.Value) {
			return
		}
		for _, it := range h.Items() {
			if len(p.ItemIDs.Value) > 0 && !containsID(p.ItemIDs.Value, it.ID) {
				continue
			}
			if p.Monitored.Given() && (it.Enabled && h.Enabled) != p.Monitored.Value {
				continue
			}
			objs = append(objs, refItemObject(lv, st, h, it, p.SelectHosts, p.SelectTags.Set, p.SelectSteps.list()))
		}
	}
	switch {
	case len(p.HostIDs.Value) > 0:
		for _, hid := range p.HostIDs.Value {
			if h := snap.HostByID(hid); h != nil {
				visit(h)
			}
		}
	case len(p.ItemIDs.Value) > 0:
		seen := map[uint64]bool{}
		for _, iid := range p.ItemIDs.Value {
			if it := snap.Item(iid); it != nil && !seen[it.HostID] {
				seen[it.HostID] = true
				visit(snap.HostByID(it.HostID))
			}
		}
	default:
		for _, h := range snap.Hosts() {
			visit(h)
		}
	}
	res, err := p.applySchema(objs, &itemSchema, "itemid", "name", "key_", "delay", "history", "trends", "type", "status")
	if err != nil {
		return nil, err
	}
	return appendValue(nil, res)
}

// fakeLast reports last values for some items.
type fakeLast map[uint64][2]history.Sample

func (f fakeLast) Last(item uint64) (last, prev history.Sample, ok bool) {
	v, ok := f[item]
	return v[0], v[1], ok
}

// TestItemGetMatchesObjects checks that item.get over typed rows answers
// byte for byte what the map-based getter (the generic getParams.apply)
// answers, for every get parameter.
func TestItemGetMatchesObjects(t *testing.T) {
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{
		{Host: "h1", Name: `Host "one" <&>`, Groups: []string{"G1"}, Interfaces: []catalog.InterfaceSpec{{IP: "127.0.0.1"}}, Items: []catalog.ItemSpec{
			{Key: "f1", ValueType: "float", Units: "B"}, {Key: "u1", ValueType: "unsigned", Name: "load x"},
			{Key: `s["a b",c]`, ValueType: "character", Name: "Ünïcode \u2028 name"}, {Key: "k10", Type: "zabbix_agent", Delay: "10s", Status: "disabled"},
			{Key: "k9", Type: "zabbix_agent", Delay: "9s", History: "7d", Trends: "0", Timeout: "7s"},
			{Key: "json", ValueType: "text"},
			{Key: "dep", Type: "dependent", MasterItem: &catalog.MasterItemSpec{Key: "json"}, ValueType: "unsigned", Preprocessing: []catalog.PreprocSpec{
				{Type: "JSONPATH", Parameters: []string{`$.a["b c"]`}, ErrorHandler: "CUSTOM_VALUE", ErrorHandlerParams: "0"},
				{Type: "JAVASCRIPT", Parameters: []string{"var x = value;", "return x * 2;"}}}},
			{Key: "calc", Type: "calculated", Params: `last(//f1) * 2`, Delay: "1m"},
		}},
		{Host: "h2", Status: "disabled", Groups: []string{"G2"}, Items: []catalog.ItemSpec{
			{Key: "f1", ValueType: "float"}, {Key: "text", ValueType: "text", Name: "lo"}, {Key: "x.log", ValueType: "log"},
			{Key: "web", Type: "http_agent", ValueType: "text", HTTPSpec: catalog.HTTPSpec{URL: "http://h/\"q\"", Posts: "<p>",
				QueryFields: []catalog.HTTPField{{Name: "a", Value: "1"}}, Headers: []catalog.HTTPField{{Name: "X-A", Value: "é"}}}},
		}},
	}})
	snap := cat.Snapshot()
	h1, h2 := snap.Host("h1"), snap.Host("h2")
	lv := fakeLast{
		snap.Lookup("h1", "f1").ID:         {{ItemID: 1, Clock: 1700000000, NS: 5, Type: history.Float, F: 1.5}, {ItemID: 1, Type: history.Float, F: -2}},
		snap.Lookup("h1", "u1").ID:         {{ItemID: 2, Clock: 1700000001, Type: history.Uint, U: 18446744073709551615}, {}},
		snap.Lookup("h1", `s["a b",c]`).ID: {{ItemID: 3, Clock: 1700000002, Type: history.Str, S: "say \"hi\"\n<b>"}, {ItemID: 3, Type: history.Str, S: "é"}},
	}
	rt := itemstate.New()
	rt.SetItemState(snap.Lookup("h1", "k9").ID, itemstate.Item{NotSupported: true, Error: `Unsupported item key "k9".` + "\n<x>", Clock: 5})
	srv := New(Options{Catalog: cat, History: memstore.New(), Last: lv, States: rt})
	hid := func(h *catalog.Host) string { return strconv.FormatUint(h.ID, 10) }
	iid := func(host, key string) string { return strconv.FormatUint(snap.Lookup(host, key).ID, 10) }
	cases := []string{
		`{}`,
		`{"output":"extend"}`,
		`{"output":["name","key_","value_type","hostid","status","state","units","delay"],"webitems":true,"filter":{"value_type":[0,3]}}`,
		`{"output":["itemid"],"preservekeys":true}`,
		`{"preservekeys":true,"selectHosts":["host"],"selectTags":"extend","output":["name","trends"]}`,
		`{"selectHosts":"extend","selectTags":"extend"}`,
		`{"selectHosts":"extend","output":["itemid","valuemapid"]}`,
		`{"selectHosts":"extend","selectTags":"extend","output":["url","headers","query_fields","posts","itemid","verify_peer"]}`,
		`{"search":{"key_":"F"},"countOutput":true}`,
		`{"search":{"name":"LO","key_":"x"},"searchByAny":true}`,
		`{"search":{"name":"lo","key_":"x"}}`,
		`{"search":{"key_":"k"},"startSearch":true,"excludeSearch":true}`,
		`{"search":{"lastvalue":"HI"}}`,
		`{"sortfield":["type","name"],"sortorder":"DESC","limit":3}`,
		`{"sortfield":["delay","itemid"]}`,
		`{"sortfield":"name","sortorder":"ASC","output":["name"]}`,
		`{"sortfield":"itemid","limit":"2","output":["lastvalue","prevvalue","lastclock","lastns"]}`,
		`{"filter":{"lastvalue":"1.5"}}`,
		`{"filter":{"key_":"f1","status":"0"}}`,
		`{"filter":{"nosuch":""},"countOutput":true}`,
		`{"filter":{"nosuch":"x"}}`,
		`{"hostids":["` + hid(h2) + `","` + hid(h1) + `"],"output":["key_"]}`,
		`{"itemids":["` + iid("h2", "f1") + `",` + iid("h1", "u1") + `,"999"]}`,
		`{"monitored":true,"output":["key_","hostid"]}`,
		`{"groupids":"` + strconv.FormatUint(snap.Group("G2").ID, 10) + `"}`,
		`{"limit":0}`,
		`{"output":[]}`,
		`{"sortfield":"color"}`,
		`{"output":["name","xyz"],"selectHosts":["name"]}`,
		`{"output":"xyz","selectHosts":"count"}`,
		`{"search":{"key_":["k","1"]}}`,
		`{"search":{"key_":["k","1"]},"searchByAny":"1"}`,
		`{"filter":{"key_":"f1","name":"load x"},"searchByAny":"0"}`,
		`{"filter":{"type":"abc"}}`,
		`{"sortfield":["type","name"],"sortorder":["DESC"]}`,
		`{"filter":{"state":"1"},"output":["key_","state","error","interfaceid","timeout"]}`,
		`{"search":{"error":"unsupported"},"output":["error"]}`,
		`{"filter":{"interfaceid":"0"},"countOutput":true}`,
		`{"selectPreprocessing":"extend","output":["key_","master_itemid","params"]}`,
		`{"selectPreprocessing":"extend","selectHosts":"extend","selectTags":"extend"}`,
		`{"selectPreprocessing":"extend","preservekeys":true,"output":["itemid"]}`,
		`{"filter":{"master_itemid":"` + iid("h1", "json") + `"},"output":["key_"]}`,
		`{"search":{"params":"last"},"output":["key_","params"]}`,
	}
	for _, params := range cases {
		want, wantErr := refItemGet(snap, lv, rt, params)
		res, gotErr := srv.itemGet(context.Background(), &call{params: json.RawMessage(params), user: User{Role: RoleSuperAdmin}})
		if (wantErr != nil) != (gotErr != nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
			t.Errorf("%s: error %v, want %v", params, gotErr, wantErr)
			continue
		}
		if wantErr != nil {
			continue
		}
		got, err := appendValue(nil, res)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			var w, g any
			json.Unmarshal(want, &w)
			if err := json.Unmarshal(got, &g); err != nil {
				t.Errorf("%s: invalid JSON %s: %v", params, got, err)
				continue
			}
			t.Errorf("%s: answers differ (-maps +rows):\n%s\nrows: %s", params, cmp.Diff(w, g), got)
		}
	}
}
