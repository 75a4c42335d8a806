package ingest

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// activeGoldenFile holds what the real Zabbix 6.0.14 server answered to
// "active checks" requests of each agent version, for the hosts, macros
// and items it describes. TestRecordActiveChecksFromZabbix writes it
// from a live server; TestActiveChecksAsZabbix60 replays it.
const activeGoldenFile = "testdata/active_checks_zabbix60.json"

type activeGolden struct {
	Comment string         `json:"comment"`
	Hosts   []goldenHost   `json:"hosts"`
	Setup   []goldenCase   `json:"setup"` // "agent data" sent before the cases
	Cases   []goldenCase   `json:"cases"`
	States  []goldenStates `json:"not_supported"` // item.get state 1 after the cases
}

type goldenHost struct {
	Host       string        `json:"host"`
	Name       string        `json:"name"`
	Interfaces []goldenIface `json:"interfaces"`
	Macros     []goldenMacro `json:"macros"`
	Items      []goldenItem  `json:"items"`
}

type goldenIface struct {
	Type  int    `json:"type"`
	UseIP bool   `json:"useip"`
	IP    string `json:"ip"`
	DNS   string `json:"dns"`
	Port  string `json:"port"`
}

type goldenMacro struct {
	Macro string `json:"macro"`
	Value string `json:"value"`
}

type goldenItem struct {
	Key       string `json:"key"`
	Delay     string `json:"delay"`
	ValueType int    `json:"value_type"`
	Disabled  bool   `json:"disabled,omitempty"`
}

type goldenCase struct {
	Name    string          `json:"name"`
	Request json.RawMessage `json:"request"`
	Reply   json.RawMessage `json:"reply"`
}

type goldenStates struct {
	Host  string `json:"host"`
	Key   string `json:"key"`
	Error string `json:"error"`
}

// activeGoldenDefs is what the recorder creates on the peer: items with
// each kind of interval, user and host macros in intervals and keys, a
// log item, a disabled item, and hosts with an agent interface, an SNMP
// one only, and none.
func activeGoldenDefs() []goldenHost {
	it := func(key, delay string, vt int) goldenItem { return goldenItem{Key: key, Delay: delay, ValueType: vt} }
	hkey := "ad.hkey[{HOST.NAME},{HOST.IP},{HOST.DNS},{HOST.CONN},{HOST.PORT},{HOST.HOST}]"
	return []goldenHost{{
		Host: "ad-host", Name: "AD host",
		Interfaces: []goldenIface{{Type: 1, UseIP: false, IP: "127.0.0.3", DNS: "agent.example", Port: "10050"}, {Type: 2, UseIP: true, IP: "127.0.0.2", DNS: "snmp.example", Port: "161"}},
		Macros: []goldenMacro{
			{"{$AD_DELAY}", "1m"}, {"{$AD_SECS}", "45"}, {"{$AD_FLEX}", "30s/1-7,00:00-24:00"},
			{"{$AD_WHOLE}", "1h;30s/1-7,00:00-24:00"}, {"{$AD_ZERO}", "0"}, {"{$AD_BIG}", "2d"},
			{"{$AD_BAD}", "abc"}, {"{$AD_GARB}", "garbage"}, {"{$AD_SEMI}", "1h;"}, {"{$AD_F}", "/etc/hostname"},
		},
		Items: []goldenItem{
			it("ad.d[30]", "30", 4), it("ad.d[1m]", "1m", 4), it("ad.d[1h]", "1h", 4), it("ad.d[1d]", "1d", 4), it("ad.d[90s]", "90s", 4),
			it("ad.flex[1h]", "1h;30s/1-7,00:00-24:00", 4), it("ad.flex0", "0;10s/1-7,00:00-24:00", 4),
			it("ad.sched[wd1-5h9]", "1h;wd1-5h9", 4), it("ad.sched0[wd1-5h9]", "0;wd1-5h9", 4), it("ad.sched[s0-59/15]", "0;s0-59/15", 4),
			it("ad.macro[delay]", "{$AD_DELAY}", 4), it("ad.macro[secs]", "{$AD_SECS}", 4), it("ad.macro[flex]", "1h;{$AD_FLEX}", 4),
			it("ad.macro[whole]", "{$AD_WHOLE}", 4), it("ad.macro[zero]", "{$AD_ZERO}", 4), it("ad.macro[big]", "{$AD_BIG}", 4),
			it("ad.macro[bad]", "{$AD_BAD}", 4), it("ad.macro[badflex]", "{$AD_BAD};10s/1-7,00:00-24:00", 4),
			it("ad.macro[undef]", "{$AD_UNDEF}", 4), it("ad.macro[garb]", "1h;{$AD_GARB}", 4), it("ad.macro[semi]", "{$AD_SEMI}", 4),
			it("ad.key[{HOST.HOST}]", "1m", 4), it("vfs.file.exists[{$AD_F}]", "30", 3), it(hkey, "1m", 4),
			it("log[/tmp/ad.log]", "1m", 2),
			{Key: "ad.disabled", Delay: "1m", ValueType: 4, Disabled: true},
		},
	}, {
		Host: "ad-snmp", Name: "ad-snmp",
		Interfaces: []goldenIface{{Type: 2, UseIP: true, IP: "127.0.0.4", DNS: "", Port: "161"}},
		Items:      []goldenItem{it(hkey, "1m", 4)},
	}, {
		Host: "ad-noif", Name: "ad-noif",
		Items: []goldenItem{it(hkey, "1m", 4)},
	}}
}

// activeGoldenRequests are the cases: every agent version's shape
// (6.0 zabbix_agentd and agent 2 as captured from the agents installed
// here through a loopback proxy), older and newer versions, and the
// version texts whose reading decides the form.
func activeGoldenRequests() []goldenCase {
	c := func(name, req string) goldenCase { return goldenCase{Name: name, Request: json.RawMessage(req)} }
	out := []goldenCase{
		c("zabbix_agentd 6.0.14 (captured: no version)", `{"request":"active checks","host":"ad-host"}`),
		c("zabbix_agentd 6.0.14 with HostMetadata", `{"request":"active checks","host":"ad-host","host_metadata":"Linux ad"}`),
		c("zabbix_agent2 6.0.14 (captured)", `{"request":"active checks","host":"ad-host","version":"6.0","ip":"127.0.0.1","port":10979}`),
		c("7.0 agentd shape", `{"request":"active checks","host":"ad-host","version":"7.0.0","variant":1,"session":"aaaabbbbccccddddaaaabbbbccccdddd","config_revision":5}`),
		c("version as a JSON number", `{"request":"active checks","host":"ad-host","version":6.0}`),
	}
	for _, v := range []string{"", "3.0", "4.2", "4.3", "4.4", "4.4.10", "5.0", "5.0.3", "5.4", "6.0.14", "6.4", "7.0", "abc", "5", "x4.4", " 6.0", "+4.4", "4.-1", "-4.4", "4.0x10", "3.150", "4.100", "32767.0", "32768.0"} {
		out = append(out, c("version "+strconv.Quote(v), `{"request":"active checks","host":"ad-host","version":`+strconv.Quote(v)+`}`))
	}
	for _, h := range []string{"ad-snmp", "ad-noif"} {
		out = append(out, c(h+" no version", `{"request":"active checks","host":"`+h+`"}`),
			c(h+" 6.0", `{"request":"active checks","host":"`+h+`","version":"6.0"}`))
	}
	return out
}

// activeGoldenSetup makes ad.d[30] not supported (listed all the same)
// and gives the log item a position, as 6.0 zabbix_agentd reports them.
func activeGoldenSetup() []goldenCase {
	return []goldenCase{{Name: "agent data", Request: json.RawMessage(`{"request":"agent data","session":"aaaabbbbccccddddaaaabbbbccccdddd","data":[` +
		`{"host":"ad-host","key":"ad.d[30]","value":"Unsupported item key.","state":1,"id":1,"clock":1700000000,"ns":0},` +
		`{"host":"ad-host","key":"log[/tmp/ad.log]","value":"line one","lastlogsize":9,"mtime":7,"id":2,"clock":1700000000,"ns":1}],"clock":1700000000,"ns":2}`)}}
}

// trapperAsk sends one request frame and returns the reply's payload.
func trapperAsk(t *testing.T, addr string, payload []byte) []byte {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(zbx.AppendFrame(nil, payload, zbx.FlagProtocol)); err != nil {
		t.Fatal(err)
	}
	_, reply, err := zbx.NewReader(conn, zbx.ReaderOptions{Timeout: 10 * time.Second}).ReadFrame()
	if err != nil {
		t.Fatalf("%s: %v", payload, err)
	}
	return bytes.Clone(reply)
}

// peerAPI calls the peer's JSON-RPC API.
type peerAPI struct {
	t          *testing.T
	url, token string
}

func (p *peerAPI) call(method string, params any, out any) {
	p.t.Helper()
	req := map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": 1}
	if p.token != "" {
		req["auth"] = p.token
	}
	body, _ := json.Marshal(req)
	resp, err := http.Post(p.url, "application/json-rpc", bytes.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage
		Error  *struct{ Message, Data string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
	if r.Error != nil {
		p.t.Fatalf("%s %s: %s %s", method, body, r.Error.Message, r.Error.Data)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			p.t.Fatalf("%s: %s: %v", method, r.Result, err)
		}
	}
}

// TestRecordActiveChecksFromZabbix records activeGoldenFile from a live
// Zabbix 6.0 server: PEREGRINE_PEER_API (its api_jsonrpc.php, user Admin,
// password zabbix) and PEREGRINE_PEER_TRAPPER (host:port). It creates
// the hosts (group ad-group) through the API, waits for the server's
// configuration cache (CacheUpdateFrequency) to list them, sends the
// requests and deletes what it created.
//
//	PEREGRINE_PEER_API=http://127.0.0.1:10088/api_jsonrpc.php PEREGRINE_PEER_TRAPPER=127.0.0.1:10061 \
//	  go test -run TestRecordActiveChecksFromZabbix ./internal/ingest/
func TestRecordActiveChecksFromZabbix(t *testing.T) {
	api, trapper := os.Getenv("PEREGRINE_PEER_API"), os.Getenv("PEREGRINE_PEER_TRAPPER")
	if api == "" || trapper == "" {
		t.Skip("set PEREGRINE_PEER_API and PEREGRINE_PEER_TRAPPER to record from a Zabbix 6.0 server")
	}
	p := &peerAPI{t: t, url: api}
	p.call("user.login", map[string]any{"username": "Admin", "password": "zabbix"}, &p.token)
	var g struct{ GroupIDs []string }
	p.call("hostgroup.create", map[string]any{"name": "ad-group"}, &g)
	var hostIDs []string
	t.Cleanup(func() {
		if len(hostIDs) > 0 {
			p.call("host.delete", hostIDs, nil)
		}
		p.call("hostgroup.delete", g.GroupIDs, nil)
	})
	gold := activeGolden{
		Comment: "Recorded from the Zabbix 6.0.14 server by TestRecordActiveChecksFromZabbix: its answers to \"active checks\" for these hosts.",
		Hosts:   activeGoldenDefs(), Setup: activeGoldenSetup(), Cases: activeGoldenRequests(),
	}
	for _, h := range gold.Hosts {
		ifaces := []map[string]any{}
		for _, f := range h.Interfaces {
			m := map[string]any{"type": f.Type, "main": 1, "useip": map[bool]int{true: 1}[f.UseIP], "ip": f.IP, "dns": f.DNS, "port": f.Port}
			if f.Type == 2 {
				m["details"] = map[string]any{"version": 2, "community": "public"}
			}
			ifaces = append(ifaces, m)
		}
		macros := []map[string]string{}
		for _, m := range h.Macros {
			macros = append(macros, map[string]string{"macro": m.Macro, "value": m.Value})
		}
		var r struct{ HostIDs []string }
		p.call("host.create", map[string]any{"host": h.Host, "name": h.Name, "groups": []map[string]string{{"groupid": g.GroupIDs[0]}}, "interfaces": ifaces, "macros": macros}, &r)
		hostIDs = append(hostIDs, r.HostIDs...)
		for _, it := range h.Items {
			p.call("item.create", map[string]any{"hostid": r.HostIDs[0], "name": it.Key, "key_": it.Key, "type": 7, "value_type": it.ValueType,
				"delay": it.Delay, "status": map[bool]int{true: 1}[it.Disabled]}, nil)
		}
	}
	// The configuration cache lists the hosts within CacheUpdateFrequency.
	// Every host's items were created in one go: the last enabled one
	// listed means all are.
	deadline := time.Now().Add(90 * time.Second)
	for _, h := range gold.Hosts {
		last := h.Items[len(h.Items)-1]
		if last.Disabled {
			last = h.Items[len(h.Items)-2]
		}
		for !bytes.Contains(trapperAsk(t, trapper, []byte(`{"request":"active checks","host":"`+h.Host+`","version":"6.0"}`)), []byte(`,"itemid":`)) ||
			!bytes.Contains(trapperAsk(t, trapper, []byte(`{"request":"active checks","host":"`+h.Host+`"}`)), []byte(strconv.Quote(last.Key))) {
			if time.Now().After(deadline) {
				t.Fatalf("the peer does not list host %s after 90 s", h.Host)
			}
			time.Sleep(time.Second)
		}
	}
	for i := range gold.Setup {
		gold.Setup[i].Reply = trapperAsk(t, trapper, gold.Setup[i].Request)
		if !bytes.Contains(gold.Setup[i].Reply, []byte("processed: 2;")) {
			t.Fatalf("%s: %s", gold.Setup[i].Name, gold.Setup[i].Reply)
		}
	}
	// The history syncer applies the state and log position shortly.
	for !bytes.Contains(trapperAsk(t, trapper, []byte(`{"request":"active checks","host":"ad-host","version":"6.0"}`)), []byte(`"lastlogsize":9`)) {
		if time.Now().After(deadline) {
			t.Fatal("the peer does not give the log position after 90 s")
		}
		time.Sleep(time.Second)
	}
	for i := range gold.Cases {
		gold.Cases[i].Reply = trapperAsk(t, trapper, gold.Cases[i].Request)
	}
	var items []struct {
		Key   string `json:"key_"`
		State string
		Error string
		Hosts []struct{ Host string }
	}
	p.call("item.get", map[string]any{"hostids": hostIDs, "output": []string{"key_", "state", "error"}, "selectHosts": []string{"host"}, "sortfield": "key_"}, &items)
	for _, it := range items {
		if it.State == "1" {
			gold.States = append(gold.States, goldenStates{Host: it.Hosts[0].Host, Key: it.Key, Error: it.Error})
		}
	}
	out, err := json.MarshalIndent(gold, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(activeGoldenFile, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func loadActiveGolden(t *testing.T) activeGolden {
	t.Helper()
	b, err := os.ReadFile(activeGoldenFile)
	if err != nil {
		t.Fatal(err)
	}
	var g activeGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// activeGoldenSpec is the golden hosts as a Peregrine catalog.
func activeGoldenSpec(g activeGolden) catalog.Spec {
	var spec catalog.Spec
	for _, h := range g.Hosts {
		hs := catalog.HostSpec{Host: h.Host, Name: h.Name, Groups: []string{"ad-group"}, Interfaces: []catalog.InterfaceSpec{}}
		for _, f := range h.Interfaces {
			useIP := f.UseIP
			is := catalog.InterfaceSpec{Type: strconv.Itoa(f.Type), Main: true, IP: f.IP, DNS: f.DNS, UseIP: &useIP, Port: f.Port}
			if f.Type == 2 {
				is.Details = map[string]string{"version": "2", "community": "public"}
			}
			hs.Interfaces = append(hs.Interfaces, is)
		}
		for _, m := range h.Macros {
			hs.Macros = append(hs.Macros, catalog.MacroSpec{Macro: m.Macro, Value: m.Value})
		}
		for _, it := range h.Items {
			status := ""
			if it.Disabled {
				status = "disabled"
			}
			vt := map[int]string{2: "log", 3: "unsigned", 4: "text"}[it.ValueType]
			hs.Items = append(hs.Items, catalog.ItemSpec{Key: it.Key, Type: "zabbix_agent_active", ValueType: vt, Delay: it.Delay, Status: status})
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	return spec
}

// normalActiveReply makes an "active checks" reply comparable: rows
// sorted by key, each itemid passed to check with the row's key and
// replaced by a placeholder (the peer's ids are its own).
func normalActiveReply(t *testing.T, raw []byte, check func(key string, id uint64)) map[string]any {
	t.Helper()
	var r map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&r); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	rows, _ := r["data"].([]any)
	for _, row := range rows {
		m := row.(map[string]any)
		if id, ok := m["itemid"].(json.Number); ok {
			n, _ := strconv.ParseUint(string(id), 10, 64)
			check(m["key"].(string), n)
			m["itemid"] = "an item id"
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].(map[string]any)["key"].(string) < rows[j].(map[string]any)["key"].(string)
	})
	return r
}

// TestActiveChecksAsZabbix60 replays activeGoldenFile: Peregrine gives
// every request the reply the Zabbix 6.0.14 server gave (rows in key
// order, item ids mapped to keys), and leaves out and makes not
// supported the items whose interval does not start with a time value,
// with the server's message.
func TestActiveChecksAsZabbix60(t *testing.T) {
	g := loadActiveGolden(t)
	lp, err := OpenLogPositions(t.Context(), filepath.Join(t.TempDir(), "agent-state.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lp.Close() })
	states := itemstate.New()
	ts := startTrapper(t, activeGoldenSpec(g), func(o *Options) { o.ItemStates, o.LogPositions = states, lp })
	for _, c := range g.Setup {
		if got := request(t, ts.addr, c.Request); !bytes.Contains(got, []byte(`"processed: 2; failed: 0; total: 2;`)) {
			t.Fatalf("%s: %s", c.Name, got)
		}
	}
	// The configured key of each listed key: the older form names it
	// (key_orig when the macros changed it).
	configured := map[string]map[string]string{}
	for _, c := range g.Cases {
		var r struct {
			Data []struct {
				Key     string
				KeyOrig string `json:"key_orig"`
			}
		}
		json.Unmarshal(c.Reply, &r)
		host := hostOf(t, c.Request)
		if configured[host] == nil {
			configured[host] = map[string]string{}
		}
		for _, d := range r.Data {
			if d.KeyOrig != "" {
				configured[host][d.Key] = d.KeyOrig
			} else if configured[host][d.Key] == "" {
				configured[host][d.Key] = d.Key
			}
		}
	}
	snap := ts.cat.Snapshot()
	for _, c := range g.Cases {
		host := hostOf(t, c.Request)
		got := request(t, ts.addr, c.Request)
		gotN := normalActiveReply(t, got, func(key string, id uint64) {
			if it := snap.Lookup(host, configured[host][key]); it == nil || it.ID != id {
				t.Errorf("%s: row %s has itemid %d, not the id of %s", c.Name, key, id, configured[host][key])
			}
		})
		wantN := normalActiveReply(t, c.Reply, func(string, uint64) {})
		if !reflect.DeepEqual(gotN, wantN) {
			t.Errorf("%s:\n got %s\nwant %s", c.Name, got, c.Reply)
		}
	}
	// Left out of the list: made not supported with Zabbix's message.
	// (Zabbix's configuration syncer also flags intervals it would not
	// schedule itself, "0", "2d", "1h;garbage", which are still listed;
	// Peregrine leaves those to the agent, which reports its own error.)
	for _, st := range g.States {
		it := snap.Lookup(st.Host, st.Key)
		if it == nil {
			t.Fatalf("no item %s of %s", st.Key, st.Host)
		}
		listed := false
		for _, k := range configured[st.Host] {
			listed = listed || k == st.Key
		}
		if listed {
			continue // ad.d[30] was made not supported by the agent (setup)
		}
		s, _ := states.ItemState(it.ID)
		if !s.NotSupported || s.Error != st.Error {
			t.Errorf("item %s: state %+v, want not supported %q", st.Key, s, st.Error)
		}
	}
}

// hostOf returns the "host" of a request.
func hostOf(t *testing.T, req []byte) string {
	t.Helper()
	var r struct{ Host string }
	if err := json.Unmarshal(req, &r); err != nil {
		t.Fatal(err)
	}
	return r.Host
}
