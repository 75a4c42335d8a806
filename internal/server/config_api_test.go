package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// TestAPIConfigReachesTrapper creates a host and a trapper item through
// the API and sends a value for it right after item.create returns: the
// trapper must accept it, with no reload or delay. Deleting the item must
// make the trapper refuse values for it at once.
func TestAPIConfigReachesTrapper(t *testing.T) {
	s := startServer(t, catalog.Spec{})
	pw, err := os.ReadFile(filepath.Join(s.cfg.DataDir, "admin-password"))
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + s.HTTPAddr().String() + "/api_jsonrpc.php"
	auth := ""
	call := func(method, params string) json.RawMessage {
		t.Helper()
		body := `{"jsonrpc":"2.0","method":"` + method + `","params":` + params + `,"id":1`
		if auth != "" {
			body += `,"auth":"` + auth + `"`
		}
		resp, err := http.Post(url, "application/json-rpc", strings.NewReader(body+"}"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var r struct {
			Result json.RawMessage
			Error  json.RawMessage
		}
		if err := json.Unmarshal(b, &r); err != nil || r.Error != nil {
			t.Fatalf("%s: %s", method, b)
		}
		return r.Result
	}
	var session string
	json.Unmarshal(call("user.login", `{"username":"Admin","password":"`+strings.TrimSpace(string(pw))+`"}`), &session)
	auth = session
	ids := func(raw json.RawMessage, name string) []string {
		var r map[string][]string
		json.Unmarshal(raw, &r)
		return r[name]
	}
	g := ids(call("hostgroup.create", `{"name":"API"}`), "groupids")[0]
	h := ids(call("host.create", `{"host":"api-host","groups":[{"groupid":"`+g+`"}]}`), "hostids")[0]
	items := ids(call("item.create", `[{"name":"t","key_":"api.trap","hostid":"`+h+`","type":2,"value_type":0},
		{"name":"u","key_":"api.trap.uint","hostid":"`+h+`","type":2,"value_type":3}]`), "itemids")

	send := func(key, value string) string {
		t.Helper()
		conn, err := net.Dial("tcp", s.TrapperAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		payload := fmt.Sprintf(`{"request":"sender data","data":[{"host":"api-host","key":%q,"value":%q}]}`, key, value)
		if err := zbx.WriteFrame(conn, []byte(payload), 0, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		_, reply, err := zbx.NewReader(conn, zbx.ReaderOptions{}).ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		return string(reply)
	}
	if got := send("api.trap", "1.5"); !strings.Contains(got, "processed: 1; failed: 0") {
		t.Fatalf("value for an item created a moment ago: %s", got)
	}
	if got := s.readItem(t, "api-host", "api.trap"); len(got) != 1 || got[0].F != 1.5 {
		t.Fatalf("stored %+v", got)
	}
	if got := string(call("history.get", `{"history":0,"itemids":"`+items[0]+`"}`)); !strings.Contains(got, `"value":"1.5"`) {
		t.Fatalf("history.get: %s", got)
	}

	call("item.delete", `["`+items[0]+`"]`)
	if got := send("api.trap", "2.5"); !strings.Contains(got, "processed: 0; failed: 1") {
		t.Fatalf("value for a deleted item: %s", got)
	}
	call("host.delete", `["`+h+`"]`)
	if got := send("api.trap.uint", "7"); !strings.Contains(got, "processed: 0; failed: 1") {
		t.Fatalf("value for an item of a deleted host: %s", got)
	}
	if got := string(call("item.get", `{"hostids":"`+h+`"}`)); got != "[]" {
		t.Fatalf("item.get of a deleted host: %s", got)
	}
}
