package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
)

// TestIntegrationScriptItems polls script items with a whole server: the
// script's value through the pipeline (converted per value type), its
// parameters with a user macro, HttpRequest to a server on loopback,
// and a throwing and a looping script made not supported with Zabbix
// 6.0's words (recorded from 6.0.14), in the server's JavaScript workers.
func TestIntegrationScriptItems(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts a server and its script workers")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("17")) }))
	defer srv.Close()
	items := []catalog.ItemSpec{
		{Key: "calc", Type: "script", ValueType: "unsigned", Delay: "1s", Timeout: "3s", Params: "return parseInt(JSON.parse(value).a) + 1;",
			Parameters: []catalog.ItemParam{{Name: "a", Value: "{$A}"}}},
		{Key: "http", Type: "script", ValueType: "unsigned", Delay: "1s", Timeout: "3s", Params: "return new HttpRequest().get(JSON.parse(value).url);",
			Parameters: []catalog.ItemParam{{Name: "url", Value: srv.URL}}},
		{Key: "throw", Type: "script", ValueType: "text", Delay: "1s", Timeout: "3s", Params: `throw "boom here";`},
		{Key: "loop", Type: "script", ValueType: "text", Delay: "1s", Timeout: "1s", Params: "while (true) {}"},
	}
	s := startServerTraps(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "js", Groups: []string{"G"},
		Macros: []catalog.MacroSpec{{Macro: "{$A}", Value: "41"}}, Items: items}}},
		func(c *config.Config) { c.SNMP.TrapListen, c.JavaScript.MemoryLimit = "", 64<<20 })
	snap := s.Catalog.Snapshot()
	throw, loop := snap.Lookup("js", "throw").ID, snap.Lookup("js", "loop").ID
	end := time.Now().Add(60 * time.Second)
	for {
		th, _ := s.ItemStates.ItemState(throw)
		lo, _ := s.ItemStates.ItemState(loop)
		if len(s.readItem(t, "js", "calc")) > 0 && len(s.readItem(t, "js", "http")) > 0 && th.NotSupported && lo.NotSupported {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("after 60 s: values %d %d, %+v %+v", len(s.readItem(t, "js", "calc")), len(s.readItem(t, "js", "http")), th, lo)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v := s.readItem(t, "js", "calc")[0].U; v != 42 {
		t.Errorf("calc %d, want 42", v)
	}
	if v := s.readItem(t, "js", "http")[0].U; v != 17 {
		t.Errorf("http %d, want 17", v)
	}
	if th, _ := s.ItemStates.ItemState(throw); th.Error != "Cannot execute script: boom here" {
		t.Errorf("throw: %+v", th)
	}
	if lo, _ := s.ItemStates.ItemState(loop); lo.Error != "Cannot execute script: RangeError: execution timeout" {
		t.Errorf("loop: %+v", lo)
	}
}
