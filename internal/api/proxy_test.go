package api

import (
	"strconv"
	"testing"
)

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
