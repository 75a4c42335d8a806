package catalog

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormHTTP(t *testing.T) {
	f := func(hs HTTPSpec, want HTTPItem) {
		t.Helper()
		var el errList
		got := normHTTP(&hs, HTTPAgent, "items[0]", &el)
		if err := el.err(); err != nil {
			t.Fatalf("normHTTP(%+v): %v", hs, err)
		}
		if d := cmp.Diff(&want, got); d != "" {
			t.Errorf("normHTTP(%+v) (-want +got):\n%s", hs, d)
		}
	}
	// Zabbix's defaults.
	f(HTTPSpec{URL: "http://h/"}, HTTPItem{URL: "http://h/", StatusCodes: "200", FollowRedirects: true})
	// Export names and API numbers.
	f(HTTPSpec{URL: "https://h/x", RequestMethod: "POST", PostType: "JSON", Posts: `{"a":1}`, RetrieveMode: "BOTH",
		OutputFormat: "JSON", FollowRedirects: "NO", VerifyPeer: "YES", VerifyHost: "1", AuthType: "basic",
		Username: "u", Password: "p", StatusCodes: "200-299,404", HTTPProxy: "http://proxy:3128",
		QueryFields: []HTTPField{{"a", "1"}}, Headers: []HTTPField{{"X-A", "b"}}},
		HTTPItem{URL: "https://h/x", RequestMethod: HTTPPost, PostType: HTTPPostJSON, Posts: `{"a":1}`, RetrieveMode: HTTPRetrieveBoth,
			OutputFormat: HTTPOutputJSON, VerifyPeer: true, VerifyHost: true, AuthType: HTTPAuthBasic, Username: "u",
			Password: "p", StatusCodes: "200-299,404", HTTPProxy: "http://proxy:3128",
			QueryFields: []HTTPField{{"a", "1"}}, Headers: []HTTPField{{"X-A", "b"}}})
	f(HTTPSpec{URL: "h:8080/p", RequestMethod: "2", PostType: "3", AuthType: "2"},
		HTTPItem{URL: "h:8080/p", RequestMethod: HTTPPut, PostType: HTTPPostXML, AuthType: HTTPAuthNTLM, StatusCodes: "200", FollowRedirects: true})
	// HEAD retrieves headers.
	f(HTTPSpec{URL: "http://h/", RequestMethod: "HEAD"}, HTTPItem{URL: "http://h/", RequestMethod: HTTPHead, RetrieveMode: HTTPRetrieveHeaders, StatusCodes: "200", FollowRedirects: true})

	// Other item types carry none.
	var el errList
	if h := normHTTP(&HTTPSpec{URL: "http://h/"}, ZabbixAgent, "i", &el); h != nil || el.err() != nil {
		t.Errorf("agent item: %+v %v", h, el.err())
	}
}

func TestNormHTTPErrors(t *testing.T) {
	f := func(hs HTTPSpec, want string) {
		t.Helper()
		var el errList
		normHTTP(&hs, HTTPAgent, "items[0]", &el)
		if err := el.err(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("normHTTP(%+v) = %v, want an error with %q", hs, err, want)
		}
	}
	u := "http://h/"
	f(HTTPSpec{}, "items[0].url: cannot be empty")
	f(HTTPSpec{URL: "ftp://h/"}, `scheme "ftp" is not supported`)
	f(HTTPSpec{URL: "http://"}, "is not a URL")
	f(HTTPSpec{URL: u, RequestMethod: "PATCH"}, `items[0].request_method: invalid value "PATCH": use one of GET (0), HEAD (3), POST (1), PUT (2)`)
	f(HTTPSpec{URL: u, PostType: "1"}, "items[0].post_type: invalid value")
	f(HTTPSpec{URL: u, RetrieveMode: "3"}, "items[0].retrieve_mode")
	f(HTTPSpec{URL: u, FollowRedirects: "maybe"}, "items[0].follow_redirects")
	f(HTTPSpec{URL: u, AuthType: "5"}, "items[0].authtype")
	f(HTTPSpec{URL: u, RequestMethod: "HEAD", RetrieveMode: "BODY"}, "must be headers (1) for request method HEAD")
	f(HTTPSpec{URL: u, StatusCodes: "200-"}, `invalid status code list "200-"`)
	f(HTTPSpec{URL: u, StatusCodes: "300-200"}, "invalid status code list")
	f(HTTPSpec{URL: u, StatusCodes: "{$CODES}"}, "invalid status code list")
	f(HTTPSpec{URL: u, SSLKeyFile: "k.pem"}, "ssl_cert_file: cannot be empty")
	f(HTTPSpec{URL: u, Headers: []HTTPField{{"Bad Name", "x"}}}, `headers[0].name: "Bad Name" is not a header name`)
	f(HTTPSpec{URL: u, Headers: []HTTPField{{"X", "a\r\nInjected: 1"}}}, "headers[0].value: must not contain line breaks")
	f(HTTPSpec{URL: u, QueryFields: []HTTPField{{"", "x"}}}, "query_fields[0].name: cannot be empty")
}

func TestParseStatusCodes(t *testing.T) {
	got, err := ParseStatusCodes("200, 201,300-399")
	if err != nil || !cmp.Equal(got, []StatusRange{{200, 200}, {201, 201}, {300, 399}}) {
		t.Errorf("got %v %v", got, err)
	}
	if got, err := ParseStatusCodes(""); got != nil || err != nil {
		t.Errorf("empty: %v %v", got, err)
	}
}

// TestHTTPItemStored: an HTTP agent item's request survives create,
// update (of its HTTP fields and of others), reopen, and is dropped with
// the item and with its host.
func TestHTTPItemStored(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "web", Groups: []string{"G"}, Items: []ItemSpec{
		{Key: "api.health", Type: "http_agent", ValueType: "text", HTTPSpec: HTTPSpec{URL: "http://127.0.0.1/health", RetrieveMode: "BOTH"}},
	}}}})
	it := c.Snapshot().Lookup("web", "api.health")
	if it.Ext().HTTP == nil || it.Ext().HTTP.URL != "http://127.0.0.1/health" || it.Ext().HTTP.RetrieveMode != HTTPRetrieveBoth {
		t.Fatalf("imported: %+v", it.Ext().HTTP)
	}
	hid := it.HostID
	var id2 uint64
	mustEdit(t, c, func(e *Edit) error {
		ids, err := e.CreateItems([]NewItem{{HostID: hid, ItemSpec: ItemSpec{Key: "api.post", Type: "19", ValueType: "4",
			HTTPSpec: HTTPSpec{URL: "http://127.0.0.1/p", RequestMethod: "1", Posts: "x=1", Headers: []HTTPField{{"X-Token", "t"}}}}}})
		if err != nil {
			return err
		}
		id2 = ids[0]
		return e.UpdateItems([]ItemUpdate{
			{ID: it.ID, HTTP: func(h *HTTPSpec) { h.StatusCodes = "200,503"; h.FollowRedirects = "0" }},
			{ID: id2, Name: new("renamed")},
		})
	})
	check := func(c *Catalog) {
		t.Helper()
		s := c.Snapshot()
		a, b := s.Item(it.ID), s.Item(id2)
		if a.Ext().HTTP == nil || a.Ext().HTTP.StatusCodes != "200,503" || a.Ext().HTTP.FollowRedirects || a.Ext().HTTP.URL != "http://127.0.0.1/health" {
			t.Errorf("updated item: %+v", a.Ext().HTTP)
		}
		if b.Ext().HTTP == nil || b.Ext().HTTP.Posts != "x=1" || b.Ext().HTTP.RequestMethod != HTTPPost || len(b.Ext().HTTP.Headers) != 1 || b.Name != "renamed" {
			t.Errorf("created item: %+v %q", b.Ext().HTTP, b.Name)
		}
	}
	check(c)
	c.Close()
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	check(c2)
	// The item becomes a trapper item: its request goes.
	mustEdit(t, c2, func(e *Edit) error {
		return e.UpdateItems([]ItemUpdate{{ID: id2, Type: new("trapper"), Delay: new("0")}})
	})
	if h := c2.Snapshot().Item(id2).Ext().HTTP; h != nil {
		t.Errorf("trapper item kept its HTTP request: %+v", h)
	}
	mustEdit(t, c2, func(e *Edit) error { return e.DeleteItems([]uint64{id2}) })
	mustEdit(t, c2, func(e *Edit) error { return e.DeleteHosts([]uint64{hid}) })
	var rows int
	if err := c2.db.QueryRow("SELECT count(*) FROM item_http").Scan(&rows); err != nil || rows != 0 {
		t.Errorf("item_http rows left: %d (%v)", rows, err)
	}
}

// TestMigrateV7HTTP opens a database of schema version 7 (no item_http):
// HTTP agent items load without a request, and one can then be set.
func TestMigrateV7HTTP(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "web", Groups: []string{"G"}, Items: []ItemSpec{
		{Key: "api.health", Type: "http_agent", ValueType: "text", HTTPSpec: HTTPSpec{URL: "http://127.0.0.1/health"}},
	}}}})
	id := c.Snapshot().Lookup("web", "api.health").ID
	c.Close()
	execAll(t, path, downgradeHTTP...)
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if h := c2.Snapshot().Item(id).Ext().HTTP; h != nil {
		t.Fatalf("migrated item has a request: %+v", h)
	}
	mustEdit(t, c2, func(e *Edit) error {
		return e.UpdateItems([]ItemUpdate{{ID: id, HTTP: func(h *HTTPSpec) { h.URL = "http://127.0.0.1/v2" }}})
	})
	if h := c2.Snapshot().Item(id).Ext().HTTP; h == nil || h.URL != "http://127.0.0.1/v2" {
		t.Fatalf("after update: %+v", h)
	}
	var ver int
	if err := c2.db.QueryRow("SELECT schema_version FROM catalog_meta").Scan(&ver); err != nil || ver != schemaVersion {
		t.Fatalf("schema version %d after the upgrade (%v)", ver, err)
	}
}
