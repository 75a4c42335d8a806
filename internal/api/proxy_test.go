package api

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestProxyWrite: proxy.create/update/delete and hosts' proxy_hostid,
// with the answers of Zabbix 6.0.14 (recorded from the peer).
func TestProxyWrite(t *testing.T) {
	f := newWriteFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"PG"}`, "groupids")[0]
	h := f.ids(t, "host.create", `{"host":"ph","groups":[{"groupid":"`+g+`"}]}`, "hostids")[0]
	act := f.ids(t, "proxy.create", `{"host":"pa","status":"5","description":"d","proxy_address":"127.0.0.1, 10.0.0.0/8,localhost"}`, "proxyids")[0]
	pas := f.ids(t, "proxy.create", `{"host":"pp","status":6,"interface":{"ip":"127.0.0.1","dns":"","useip":"1","port":"10051"},
		"tls_connect":2,"tls_psk_identity":"id1","tls_psk":"0123456789abcdef0123456789abcdef"}`, "proxyids")[0]
	errs := []struct{ params, want string }{
		{`{"host":"x","status":"4"}`, `Invalid parameter "/1/status": value must be one of 5, 6.`},
		{`{"host":"x","status":"6"}`, `Invalid parameter "/1": the parameter "interface" is missing.`},
		{`{"host":"x","status":"5","interface":{"ip":"127.0.0.1","dns":"","useip":"1","port":"10051"}}`, `Invalid parameter "/1/interface": should be empty.`},
		{`{"host":"x y!","status":"5"}`, `Invalid parameter "/1/host": invalid host name.`},
		{`{"host":"x","status":"5","tls_accept":2,"tls_psk_identity":"i","tls_psk":"0123"}`, `Invalid parameter "/1/tls_psk": minimum length is 32 characters.`},
		{`{"host":"x","status":"5","tls_accept":2,"tls_psk_identity":"i","tls_psk":"0123456789abcdef0123456789abcdeX"}`, `Invalid parameter "/1/tls_psk": an even number of hexadecimal characters is expected.`},
		{`{"host":"x","status":"5","tls_accept":2,"tls_psk_identity":"","tls_psk":"0123456789abcdef0123456789abcdef"}`, `Invalid parameter "/1/tls_psk_identity": cannot be empty.`},
		{`{"host":"x","status":"5","tls_accept":1,"tls_psk_identity":"i"}`, `Invalid parameter "/1/tls_psk_identity": value must be empty.`},
		// 6.0 takes PSK without an identity or a key (a proxy that can
		// then never connect); Peregrine refuses it (docs/api.md).
		{`{"host":"x","status":"5","tls_accept":2,"tls_psk_identity":"i"}`, `Invalid parameter "/1/tls_psk": cannot be empty.`},
		{`{"host":"x","status":"5","tls_accept":2}`, `Invalid parameter "/1/tls_psk_identity": cannot be empty.`},
		{`{"host":"pa","status":"5"}`, `Proxy "pa" already exists.`},
		{`{"status":"5"}`, `Invalid parameter "/1": the parameter "host" is missing.`},
		{`{"host":"x"}`, `Invalid parameter "/1": the parameter "status" is missing.`},
		{`{"host":"x","status":"5","xyz":1}`, `Invalid parameter "/1": unexpected parameter "xyz".`},
		{`{"host":"x","status":"5","auto_compress":"0"}`, `Invalid parameter "/1": unexpected parameter "auto_compress".`},
		{`{"host":"x","status":"5","tls_connect":4}`, `Invalid parameter "/1/tls_connect": value must be 1.`},
		{`{"host":"x","status":"5","tls_accept":8}`, `Invalid parameter "/1/tls_accept": value must be one of 1-7.`},
		{`{"host":"x","status":"6","interface":{"ip":"127.0.0.1","dns":"","useip":"1","port":"10051"},"tls_accept":2}`, `Invalid parameter "/1/tls_accept": value must be 1.`},
		{`{"host":"x","status":"5","proxy_address":"not an ip"}`, `Invalid parameter "/1/proxy_address": invalid address range "not an ip".`},
		{`{"host":"x","status":"6","interface":{"ip":"","dns":"","useip":"1","port":"10051"}}`, `Invalid parameter "/1/interface/ip": cannot be empty.`},
		{`{"host":"x","status":"6","interface":{"dns":"","useip":"0","port":"10051"}}`, `Invalid parameter "/1/interface/dns": cannot be empty.`},
		{`{"host":"x","status":"6","interface":{"ip":"127.0.0.1","useip":"1"}}`, `Invalid parameter "/1/interface": the parameter "port" is missing.`},
		{`{"host":"x","status":"6","interface":{"ip":"127.0.0.1","dns":"","useip":"1","port":"10051"},"proxy_address":"127.0.0.1"}`, `Invalid parameter "/1/proxy_address": should be empty.`},
		{`{"host":"x","status":"5","hosts":[{"hostid":"999999"}]}`, `No permissions to referred object or it does not exist!`},
		{`{"host":"","status":"5"}`, `Invalid parameter "/1/host": cannot be empty.`},
		{`[]`, `Invalid parameter "/": cannot be empty.`},
	}
	for _, c := range errs {
		if _, e := f.call(t, "super", "proxy.create", c.params); e == nil || e.Data != c.want {
			t.Errorf("proxy.create %s: %+v, want %s", c.params, e, c.want)
		}
	}
	if _, e := f.call(t, "admin", "proxy.create", `{"host":"x","status":"5"}`); e == nil {
		t.Error("an admin created a proxy")
	}
	f.ok(t, "host.update", `{"hostid":"`+h+`","proxy_hostid":"`+act+`"}`)
	if _, e := f.call(t, "super", "host.update", `{"hostid":"`+h+`","proxy_hostid":"abc"}`); e == nil || e.Data != `Incorrect value "abc" for unsigned int field "proxy_hostid".` {
		t.Errorf("bad proxy_hostid: %+v", e)
	}
	if _, e := f.call(t, "super", "proxy.delete", `["`+act+`"]`); e == nil || e.Data != `Host "ph" is monitored by proxy "pa".` {
		t.Errorf("delete in use: %+v", e)
	}
	got := string(f.ok(t, "host.get", `{"output":["host","proxy_hostid"],"proxyids":["`+act+`"]}`))
	if want := `[{"host":"ph","hostid":"` + h + `","proxy_hostid":"` + act + `"}]`; got != want {
		t.Errorf("host.get proxyids: %s, want %s", got, want)
	}
	got = string(f.ok(t, "proxy.get", `{"output":["host","status","tls_connect","proxy_address","lastaccess"],"selectHosts":["host"],"selectInterface":["ip","port"],"sortfield":"host"}`))
	want := `[{"host":"pa","hosts":[{"host":"ph"}],"interface":[],"lastaccess":"0","proxy_address":"127.0.0.1, 10.0.0.0/8,localhost","proxyid":"` + act + `","status":"5","tls_connect":"1"},` +
		`{"host":"pp","hosts":[],"interface":{"ip":"127.0.0.1","port":"10051"},"lastaccess":"0","proxy_address":"","proxyid":"` + pas + `","status":"6","tls_connect":"2"}]`
	if got != want {
		t.Errorf("proxy.get:\n%s\nwant\n%s", got, want)
	}
	if ext := string(f.ok(t, "proxy.get", `{"output":"extend","proxyids":"`+pas+`"}`)); strings.Contains(ext, "psk") || strings.Contains(ext, "0123456789abcdef") {
		t.Errorf("proxy.get returned the PSK: %s", ext)
	}
	for _, c := range []struct{ params, want string }{
		{`{"proxyid":"99999","description":"x"}`, `No permissions to referred object or it does not exist!`},
		{`{"proxyid":"` + act + `","tls_psk":"0123456789abcdef0123456789abcdef"}`, `Invalid parameter "/1/tls_psk": value must be empty.`},
		{`{"proxyid":"` + act + `","host":"pp"}`, `Proxy "pp" already exists.`},
	} {
		if _, e := f.call(t, "super", "proxy.update", c.params); e == nil || e.Data != c.want {
			t.Errorf("proxy.update %s: %+v, want %s", c.params, e, c.want)
		}
	}
	// hosts replace the proxy's; status 5 drops the interface.
	f.ok(t, "proxy.update", `{"proxyid":"`+act+`","hosts":[]}`)
	f.ok(t, "proxy.update", `{"proxyid":"`+pas+`","status":"5","hosts":[{"hostid":"`+h+`"}]}`)
	got = string(f.ok(t, "proxy.get", `{"output":["status"],"selectHosts":["host"],"selectInterface":"extend","proxyids":["`+act+`","`+pas+`"]}`))
	want = `[{"hosts":[],"interface":[],"proxyid":"` + act + `","status":"5"},{"hosts":[{"host":"ph"}],"interface":[],"proxyid":"` + pas + `","status":"5"}]`
	if got != want {
		t.Errorf("after update:\n%s\nwant\n%s", got, want)
	}
	f.ok(t, "host.massupdate", `{"hosts":[{"hostid":"`+h+`"}],"proxy_hostid":"0"}`)
	f.ok(t, "proxy.delete", `["`+act+`","`+pas+`"]`)
	if got := string(f.ok(t, "proxy.get", `{"countOutput":true}`)); got != `"0"` {
		t.Errorf("after delete: %s", got)
	}
}

// TestProxyGet holds proxy.get to the answers of a Zabbix 6.0.14 without
// proxies (recorded from the peer): any member accepted, an empty list
// or "0", a bad sort field refused unless countOutput.
func TestProxyGet(t *testing.T) {
	f := newWriteFixture(t)
	cases := []struct{ params, want string }{
		{`{"output":"extend"}`, `[]`},
		{`{"output":["proxyid","host"]}`, `[]`}, // Grafana's call
		{`{"countOutput":true}`, `"0"`},
		{`{"output":["host","proxyid"],"selectHosts":["hostid"],"selectInterface":"extend"}`, `[]`},
		{`{"xyz":1}`, `[]`},
		{`{"filter":{"xyz":1}}`, `[]`},
		{`{"proxyids":[1]}`, `[]`},
		{`{"output":["host"],"sortfield":"host"}`, `[]`},
		{`{"sortfield":"xyz"}`, `-32500 Sorting by field "xyz" not allowed.`},
		{`{"sortfield":["host","xyz"]}`, `-32500 Sorting by field "xyz" not allowed.`},
		{`{"countOutput":true,"sortfield":"xyz"}`, `"0"`},
		{`{"selectHosts":"count"}`, `[]`},
		{`{"output":"count"}`, `[]`},
		{`{"limit":-1}`, `[]`},
		{`{"search":{"host":"x"},"preservekeys":true}`, `[]`},
		{`{"countOutput":"false"}`, `"0"`},
		{`{"countOutput":"0"}`, `[]`},
		{`{"countOutput":0}`, `[]`},
		{`{"countOutput":1}`, `"0"`},
		{`{"countOutput":null}`, `[]`},
		{`{"countOutput":[]}`, `[]`},
		{`{"countOutput":{}}`, `[]`},
		{`{"countOutput":[1]}`, `"0"`},
		{`{"sortfield":"host","sortorder":"xyz"}`, `[]`},
		{`{"sortfield":""}`, `[]`},
		{`[]`, `[]`},
		{`{"editable":true}`, `[]`},
	}
	for _, c := range cases {
		res, e := f.call(t, "user", "proxy.get", c.params)
		got := string(res)
		if e != nil {
			got = strconv.Itoa(e.Code) + " " + e.Data
		}
		if got != c.want {
			t.Errorf("proxy.get %s: %s, want %s", c.params, got, c.want)
		}
	}
}

// TestAuditProxy: proxy.create is recorded as 6.0.14 records it
// (recorded from the peer: resource type 26, named by the proxy, the
// members that differ from the column defaults, the identity masked;
// the peer's proxy had no key, which Peregrine refuses, so the key is
// masked here too, as host PSKs are).
func TestAuditProxy(t *testing.T) {
	f := newAuditFixture(t)
	var p struct{ ProxyIDs []string }
	json.Unmarshal(mustOK(t, f, "proxy.create", `{"host":"s4proxy-y","status":"5","tls_accept":2,"tls_psk_identity":"i","tls_psk":"0123456789abcdef0123456789abcdef"}`), &p)
	var recs []map[string]string
	json.Unmarshal(mustOK(t, f, "auditlog.get", `{"filter":{"resourcetype":26}}`), &recs)
	if len(recs) != 1 {
		t.Fatalf("records: %v", recs)
	}
	want := `{"proxy.host":["add","s4proxy-y"],"proxy.status":["add","5"],"proxy.tls_accept":["add","2"],"proxy.tls_psk_identity":["add","******"],"proxy.tls_psk":["add","******"],"proxy.proxyid":["add","` + p.ProxyIDs[0] + `"]}`
	if r := recs[0]; r["details"] != want || r["resourcename"] != "s4proxy-y" || r["action"] != "0" {
		t.Errorf("record %v\nwant details %s", r, want)
	}
}
