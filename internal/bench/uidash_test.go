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
		"problemhosts": "hostgroup.get,host.get,trigger.get,problem.get", "tophosts": "host.get,item.get", "dataover": "item.get,trigger.get",
		"slareport": "sla.get,sla.getsli,service.get",
	} {
		body := peregrineWidgetCalls(widget{Type: typ, Fields: []widgetField{group, item, {Name: "itemids", Value: "42"}, {Name: "slaid", Value: "3"},
			{Name: "columns.name.0", Value: "Host"}, {Name: "columns.data.0", Value: "2"}, {Name: "columns.name.1", Value: "Load"}, {Name: "columns.data.1", Value: "1"},
			{Name: "columns.item.1", Value: "load"}}}, time.Unix(1e9, 0))
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

// A widget's severity and tag filter reach its problem.get as
// widgets.js sends them.
func TestPeregrineWidgetCallsFilters(t *testing.T) {
	w := widget{Type: "problems", Fields: []widgetField{{Name: "show", Value: "3"}, {Name: "severities", Value: "4"}, {Name: "severities", Value: "5"},
		{Name: "evaltype", Value: "2"}, {Name: "tags.tag.0", Value: "svc"}, {Name: "tags.operator.0", Value: "1"}, {Name: "tags.value.0", Value: "web"},
		{Name: "problem", Value: "cpu"}, {Name: "unacknowledged", Value: "1"}}}
	b, _ := json.Marshal(peregrineWidgetCalls(w, time.Unix(1e9, 0)).(rpcReq).Params)
	want := `{"acknowledged":false,"evaltype":2,"limit":25,"output":["eventid","name","severity","clock","acknowledged"],"recent":false,` +
		`"search":{"name":"cpu"},"severities":[4,5],"sortfield":["eventid"],"sortorder":"DESC","suppressed":false,"tags":[{"operator":"1","tag":"svc","value":"web"}]}`
	if string(b) != want {
		t.Errorf("problems widget params\n%s\nwant\n%s", b, want)
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
