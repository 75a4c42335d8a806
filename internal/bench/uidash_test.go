package bench

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestZabbixFieldsRepeatedNamesAreLists(t *testing.T) {
	w := widget{Fields: []widgetField{{Name: "groupids", Value: "2"}, {Name: "groupids", Value: "4"}, {Name: "groupids", Value: "5"}, {Name: "rf_rate", Value: "10"}}}
	b, _ := json.Marshal(zabbixFields(w))
	if got := string(b); got != `{"groupids":["2","4","5"],"rf_rate":"10"}` {
		t.Errorf("fields %s", got)
	}
}

// Every widget Peregrine draws from the API sends one request a refresh;
// the clock and the URL send none.
func TestPeregrineWidgetCallsOneRequestEach(t *testing.T) {
	group := widgetField{Name: "groupids", Value: "7"}
	item := widgetField{Name: "itemid", Value: "42"}
	for typ, want := range map[string]string{
		"problems": "problem.get", "problemsbysv": "problem.get,problem.get,problem.get,problem.get,problem.get,problem.get",
		"hostavail": "host.get", "item": "item.get", "graph": "item.get,history.get", "plaintext": "item.get,history.get",
		"trigover": "trigger.get", "systeminfo": "apiinfo.version,host.get,item.get,trigger.get", "clock": "", "url": "",
	} {
		body := peregrineWidgetCalls(widget{Type: typ, Fields: []widgetField{group, item, {Name: "itemids", Value: "42"}}}, time.Unix(1e9, 0))
		var methods []string
		switch b := body.(type) {
		case rpcReq:
			methods = []string{b.Method}
		case []rpcReq:
			for _, c := range b {
				methods = append(methods, c.Method)
			}
		}
		if got := strings.Join(methods, ","); got != want {
			t.Errorf("%s: %q, want %q", typ, got, want)
		}
	}
}

func TestRPCErrors(t *testing.T) {
	if err := rpcErrors(`{"jsonrpc":"2.0","result":[],"id":1}`); err != nil {
		t.Error(err)
	}
	if err := rpcErrors(`[{"result":"1","id":1},{"error":{"code":-32602,"message":"Invalid params.","data":"x"},"id":2}]`); err == nil || !strings.Contains(err.Error(), "Invalid params.") {
		t.Errorf("batch error: %v", err)
	}
	if err := rpcErrors(`<html>`); err == nil {
		t.Error("not JSON: no error")
	}
}
