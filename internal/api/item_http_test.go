package api

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func itemIDOf(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestItemHTTPFields: an HTTP agent item through item.create, item.update
// and item.get with Zabbix 6.0's members (query_fields as one-member
// objects, headers as an object) and 7.0's name/value lists, and the
// validation errors naming the member.
func TestItemHTTPFields(t *testing.T) {
	f := newWriteFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	h := f.ids(t, "host.create", fmt.Sprintf(`{"host":"a","groups":[{"groupid":"%s"}]}`, g), "hostids")[0]
	id := f.ids(t, "item.create", fmt.Sprintf(`{"name":"api","key_":"api.health","hostid":"%s","type":19,"value_type":4,"delay":"1m",
		"url":"http://127.0.0.1:8080/health","query_fields":[{"a":"1"},{"b":"2"}],"request_method":"1","post_type":2,
		"posts":"{\"x\":1}","headers":{"X-B":"2","X-A":"1"},"status_codes":"200,201-299","follow_redirects":0,
		"retrieve_mode":2,"output_format":1,"verify_peer":1,"authtype":1,"username":"u","password":"p","timeout":"5s"}`, h), "itemids")[0]
	get := func() map[string]any {
		t.Helper()
		items := f.get(t, "item.get", fmt.Sprintf(`{"itemids":"%s","output":"extend"}`, id))
		if len(items) != 1 {
			t.Fatalf("item.get: %v", items)
		}
		return items[0]
	}
	want := map[string]any{"url": "http://127.0.0.1:8080/health", "request_method": "1", "post_type": "2", "posts": `{"x":1}`,
		"status_codes": "200,201-299", "follow_redirects": "0", "retrieve_mode": "2", "output_format": "1", "verify_peer": "1",
		"verify_host": "0", "authtype": "1", "username": "u", "password": "", "http_proxy": "", "timeout": "5s"}
	check := func(want map[string]any) {
		t.Helper()
		got := get()
		for k, v := range want {
			if got[k] != v {
				t.Errorf("item.get %s = %v, want %v", k, got[k], v)
			}
		}
	}
	check(want) // the password is kept, never returned
	it := f.cat.Snapshot().Item(itemIDOf(t, id))
	if it.Ext().HTTP.Password != "p" {
		t.Errorf("stored password %q, want p", it.Ext().HTTP.Password)
	}
	if q := it.Ext().HTTP.QueryFields; len(q) != 2 || q[0].Name != "a" || q[1].Value != "2" {
		t.Errorf("query fields %+v", q)
	}
	if hd := it.Ext().HTTP.Headers; len(hd) != 2 || hd[0].Name != "X-B" || hd[1].Name != "X-A" {
		t.Errorf("headers %+v, want in the order given", hd)
	}
	lists := f.get(t, "item.get", fmt.Sprintf(`{"itemids":"%s","output":["query_fields","headers","url"]}`, id))[0]
	if q, _ := json.Marshal(lists["query_fields"]); string(q) != `[{"a":"1"},{"b":"2"}]` {
		t.Errorf("item.get query_fields = %s", q)
	}
	if hd, _ := json.Marshal(lists["headers"]); string(hd) != `{"X-A":"1","X-B":"2"}` { // a map here: order not kept by the decoder
		t.Errorf("item.get headers = %s", hd)
	}
	f.ok(t, "item.update", fmt.Sprintf(`{"itemid":"%s","url":"https://h/x","headers":[{"name":"X-C","value":"3"}],"authtype":"0"}`, id))
	want["url"], want["authtype"] = "https://h/x", "0"
	check(want)
	if pw := f.cat.Snapshot().Item(itemIDOf(t, id)).Ext().HTTP.Password; pw != "p" {
		t.Errorf("password after an update without it: %q", pw)
	}
	if hd := f.cat.Snapshot().Item(itemIDOf(t, id)).Ext().HTTP.Headers; len(hd) != 1 || hd[0].Name != "X-C" {
		t.Errorf("headers after update %+v", hd)
	}
	// A trapper item shows Zabbix's defaults.
	tid := f.ids(t, "item.create", fmt.Sprintf(`{"name":"t","key_":"t","hostid":"%s","type":2,"value_type":3}`, h), "itemids")[0]
	tr := f.get(t, "item.get", fmt.Sprintf(`{"itemids":"%s","output":["url","status_codes","follow_redirects"]}`, tid))[0]
	if tr["url"] != "" || tr["status_codes"] != "200" || tr["follow_redirects"] != "1" {
		t.Errorf("trapper item's HTTP fields: %v", tr)
	}
	for params, wantErr := range map[string]string{
		`"type":19,"value_type":4`:                              "url",
		`"type":19,"value_type":4,"url":"ftp://x/"`:             "url",
		`"type":19,"value_type":4,"url":"h","request_method":9`: "request_method",
		`"type":19,"value_type":4,"url":"h","status_codes":"x"`: "status_codes",
		`"type":19,"value_type":4,"url":"h","headers":"x"`:      "headers",
	} {
		_, e := f.call(t, "super", "item.create", fmt.Sprintf(`{"name":"b","key_":"b","hostid":"%s","delay":"1m",%s}`, h, params))
		if e == nil || !strings.Contains(e.Data, wantErr) {
			t.Errorf("item.create with %s: %+v, want an error naming %s", params, e, wantErr)
		}
	}
}
