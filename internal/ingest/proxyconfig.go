package ingest

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// proxyConfigTypes are the item types a proxy checks: all but the
// server's own (calculated, dependent: 6.0 computes those on the
// server from the values the proxy sends).
func proxyConfigType(t catalog.ItemType) bool {
	return t != catalog.Calculated && t != catalog.Dependent
}

// table is one table of 6.0's proxy configuration: field names, then
// rows of values in that order.
type table struct {
	Fields []string `json:"fields"`
	Data   [][]any  `json:"data"`
}

func newTable(fields ...string) *table { return &table{Fields: fields, Data: [][]any{}} }

// Fields of each table, in the order the 6.0.14 server sends them
// (recorded from 6.0.14: testdata/proxy_config_zabbix60.json).
var itemFields = []string{"itemid", "type", "snmp_oid", "hostid", "key_", "delay", "history", "status", "value_type", "trapper_hosts",
	"logtimefmt", "params", "ipmi_sensor", "authtype", "username", "password", "publickey", "privatekey", "flags", "interfaceid",
	"inventory_link", "jmx_endpoint", "master_itemid", "timeout", "url", "query_fields", "posts", "status_codes", "follow_redirects",
	"post_type", "http_proxy", "headers", "retrieve_mode", "request_method", "output_format", "ssl_cert_file", "ssl_key_file",
	"ssl_key_password", "verify_peer", "verify_host", "allow_traps"}

// ProxyConfig builds the configuration proxy p needs, in Zabbix 6.0's
// "proxy config" reply form: its hosts (status, encryption, IPMI),
// their interfaces and SNMP details, their items with user macros
// expanded (so no macro tables are needed: globalmacro and hostmacro are
// sent empty), the global regular expressions, and the enabled network
// discovery rules the proxy runs (drules, dchecks; proxyDRules). Web
// scenarios of the proxy's hosts go in 6.0's httptest tables
// (proxyWebScenarios).
func ProxyConfig(snap *catalog.Snapshot, p *catalog.Proxy, logpos LogPositionStore, ar catalog.AutoregSettings, rules []catalog.DRule) []byte {
	t := map[string]*table{
		"globalmacro":     newTable("globalmacroid", "macro", "value", "type"),
		"hosts":           newTable("hostid", "host", "status", "ipmi_authtype", "ipmi_privilege", "ipmi_username", "ipmi_password", "name", "tls_connect", "tls_accept", "tls_issuer", "tls_subject", "tls_psk_identity", "tls_psk"),
		"interface":       newTable("interfaceid", "hostid", "main", "type", "useip", "ip", "dns", "port", "available"),
		"interface_snmp":  newTable("interfaceid", "version", "bulk", "community", "securityname", "securitylevel", "authpassphrase", "privpassphrase", "authprotocol", "privprotocol", "contextname"),
		"hosts_templates": newTable("hosttemplateid", "hostid", "templateid"),
		"hostmacro":       newTable("hostmacroid", "hostid", "macro", "value", "type"),
		"items":           newTable(itemFields...),
		"item_rtdata":     newTable("itemid", "lastlogsize", "mtime"),
		"item_preproc":    newTable("item_preprocid", "itemid", "step", "type", "params", "error_handler", "error_handler_params"),
		"item_parameter":  newTable("item_parameterid", "itemid", "name", "value"),
		"drules":          newTable("druleid", "name", "iprange", "delay"),
		"dchecks": newTable("dcheckid", "druleid", "type", "key_", "snmp_community", "ports", "snmpv3_securityname", "snmpv3_securitylevel",
			"snmpv3_authpassphrase", "snmpv3_privpassphrase", "uniq", "snmpv3_authprotocol", "snmpv3_privprotocol", "snmpv3_contextname", "host_source", "name_source"),
		"regexps":     newTable("regexpid", "name"),
		"expressions": newTable("expressionid", "regexpid", "expression", "expression_type", "exp_delimiter", "case_sensitive"),
		"hstgrp":      newTable("groupid"),
		"config":      newTable("configid", "discovery_groupid", "snmptrap_logging", "hk_history_global", "hk_history", "autoreg_tls_accept"),
		"httptest": newTable("httptestid", "name", "delay", "agent", "authentication", "http_user", "http_password", "hostid", "http_proxy",
			"retries", "ssl_cert_file", "ssl_key_file", "ssl_key_password", "verify_peer", "verify_host"),
		"httptestitem":       newTable("httptestitemid", "httptestid", "itemid", "type"),
		"httptest_field":     newTable("httptest_fieldid", "httptestid", "type", "name", "value"),
		"httpstep":           newTable("httpstepid", "httptestid", "name", "no", "url", "timeout", "posts", "required", "status_codes", "follow_redirects", "retrieve_mode", "post_type"),
		"httpstepitem":       newTable("httpstepitemid", "httpstepid", "itemid", "type"),
		"httpstep_field":     newTable("httpstep_fieldid", "httpstepid", "type", "name", "value"),
		"config_autoreg_tls": newTable("autoreg_tlsid", "tls_psk_identity", "tls_psk"),
	}
	paramID := 0
	for _, h := range snap.ProxyHosts(p.ID) {
		status := 1
		if h.Enabled {
			status = 0
		}
		t["hosts"].Data = append(t["hosts"].Data, []any{h.ID, h.Host, status, h.Ext().IPMI.AuthType, h.Ext().IPMI.Privilege, h.Ext().IPMI.Username, h.Ext().IPMI.Password, h.Name,
			h.Ext().TLS.Connect, h.Ext().TLS.Accept, h.Ext().TLS.Issuer, h.Ext().TLS.Subject, h.Ext().TLS.PSKIdentity, string(h.Ext().TLS.PSK)})
		for _, ifc := range h.Interfaces {
			t["interface"].Data = append(t["interface"].Data, []any{ifc.ID, h.ID, b2i(ifc.Main), int(ifc.Type), b2i(ifc.UseIP), ifc.IP, ifc.DNS, ifc.Port, 0})
			if ifc.Type == catalog.InterfaceSNMP {
				d := ifc.Details
				t["interface_snmp"].Data = append(t["interface_snmp"].Data, []any{ifc.ID, detailInt(d["version"]), detailInt(d["bulk"]), d["community"], d["securityname"],
					detailInt(d["securitylevel"]), d["authpassphrase"], d["privpassphrase"], detailInt(d["authprotocol"]), detailInt(d["privprotocol"]), d["contextname"]})
			}
		}
		macros := snap.UserMacros(h.ID)
		for _, it := range h.Items() {
			if !proxyConfigType(it.Type) {
				continue
			}
			t["items"].Data = append(t["items"].Data, proxyItemRow(it, macros))
			for _, prm := range it.Ext().Parameters {
				paramID++
				t["item_parameter"].Data = append(t["item_parameter"].Data, []any{paramID, it.ID, prm.Name, macros.Expand(prm.Value)})
			}
			var size uint64
			var mtime int64
			if logpos != nil {
				if lp, ok := logpos.Get(it.ID); ok {
					size, mtime = lp.LastLogSize, lp.Mtime
				}
			}
			t["item_rtdata"].Data = append(t["item_rtdata"].Data, []any{it.ID, size, mtime})
		}
	}
	proxyWebScenarios(snap, p, t)
	proxyDRules(snap, p, rules, t)
	eid := 0
	for _, r := range snap.Regexps() {
		t["regexps"].Data = append(t["regexps"].Data, []any{r.ID, r.Name})
		for _, x := range r.Expressions {
			eid++
			t["expressions"].Data = append(t["expressions"].Data, []any{eid, r.ID, x.Expression, int(x.Type), x.Delimiter, b2i(x.CaseSensitive)})
		}
	}
	// The proxy's database needs a discovery group that hstgrp lists:
	// "Discovered hosts" (5 in a fresh 6.0) or 5 when there is none.
	dg := uint64(5)
	if g := snap.Group("Discovered hosts"); g != nil {
		dg = g.ID
	}
	t["hstgrp"].Data = append(t["hstgrp"].Data, []any{dg})
	// The autoregistration encryption policy: the proxy applies it to
	// the agents that register through it.
	accept := ar.TLSAccept
	if accept == 0 {
		accept = catalog.DefaultAutoregSettings.TLSAccept
	}
	t["config"].Data = append(t["config"].Data, []any{1, dg, 1, 0, "90d", int(accept)})
	t["config_autoreg_tls"].Data = append(t["config_autoreg_tls"].Data, []any{1, ar.PSKIdentity, string(ar.PSK)})
	names := make([]string, 0, len(t))
	for k := range t {
		names = append(names, k)
	}
	slices.Sort(names)
	m := make(map[string]any, len(t)+1)
	for _, k := range names {
		m[k] = t[k]
	}
	m["macro.secrets"] = struct{}{}
	b, err := json.Marshal(m)
	if err != nil {
		panic("BUG: proxy configuration does not marshal: " + err.Error())
	}
	return b
}

// drules are the discovery rules (Options.DRules), none without it.
func (s *Server) drules() []catalog.DRule {
	if s.opts.DRules == nil {
		return nil
	}
	return s.opts.DRules()
}

// autoregSettings are the autoregistration settings proxies apply
// (Options.AutoregSettings), 6.0's defaults without them.
func (s *Server) autoregSettings() catalog.AutoregSettings {
	if s.opts.AutoregSettings == nil {
		return catalog.DefaultAutoregSettings
	}
	return s.opts.AutoregSettings()
}

// proxyWebScenarios fills 6.0's httptest tables with the enabled web
// scenarios of the proxy's hosts: the scenario, its headers (field type
// 0) and variables (1), its items by 6.0's httptestitem types (2 speed,
// 3 failed step, 4 error), its steps with their headers (0), variables
// (1), form fields (2) and query fields (3), and their items (0 response
// code, 1 time, 2 speed). The rows of items take the item's ID, the
// fields IDs numbered here (a proxy keeps none across configurations).
func proxyWebScenarios(snap *catalog.Snapshot, p *catalog.Proxy, t map[string]*table) {
	hosts := map[uint64]bool{}
	for _, h := range snap.ProxyHosts(p.ID) {
		hosts[h.ID] = true
	}
	fid, sfid := 0, 0
	for i := range snap.HTTPTests() {
		ht := &snap.HTTPTests()[i]
		if !hosts[ht.HostID] || ht.Status != 0 {
			continue
		}
		sc := snap.UserMacros(ht.HostID)
		t["httptest"].Data = append(t["httptest"].Data, []any{ht.ID, ht.Name, sc.Expand(ht.Delay), ht.Agent, ht.Authentication, ht.HTTPUser,
			ht.HTTPPassword, ht.HostID, ht.HTTPProxy, ht.Retries, ht.SSLCertFile, ht.SSLKeyFile, ht.SSLKeyPassword, ht.VerifyPeer, ht.VerifyHost})
		for typ, fs := range [][]catalog.HTTPField{ht.Headers, ht.Variables} {
			for _, f := range fs {
				fid++
				t["httptest_field"].Data = append(t["httptest_field"].Data, []any{fid, ht.ID, typ, f.Name, f.Value})
			}
		}
		for k, typ := range []int{2, 3, 4} {
			if id := ht.ItemIDs[k]; id != 0 {
				t["httptestitem"].Data = append(t["httptestitem"].Data, []any{id, ht.ID, id, typ})
			}
		}
		for _, st := range ht.Steps {
			t["httpstep"].Data = append(t["httpstep"].Data, []any{st.ID, ht.ID, st.Name, st.No, st.URL, sc.Expand(st.Timeout), st.Posts,
				st.Required, st.StatusCodes, st.FollowRedirects, st.RetrieveMode, st.PostType})
			for typ, fs := range [][]catalog.HTTPField{st.Headers, st.Variables, st.PostFields, st.QueryFields} {
				for _, f := range fs {
					sfid++
					t["httpstep_field"].Data = append(t["httpstep_field"].Data, []any{sfid, st.ID, typ, f.Name, f.Value})
				}
			}
			for k, typ := range []int{2, 1, 0} { // ItemIDs: speed, time, response code
				if id := st.ItemIDs[k]; id != 0 {
					t["httpstepitem"].Data = append(t["httpstepitem"].Data, []any{id, st.ID, id, typ})
				}
			}
		}
	}
}

// proxyDRules fills the drules and dchecks tables with the enabled
// discovery rules of proxy p, as 6.0.14 sends them (recorded:
// testdata/proxy_config_drules_zabbix60.json; disabled rules are left
// out). 6.0 sends a delay or a check field holding global macros as is,
// with the macros in globalmacro; Peregrine sends them expanded (its
// globalmacro table is empty), which the proxy reads the same.
func proxyDRules(snap *catalog.Snapshot, p *catalog.Proxy, rules []catalog.DRule, t map[string]*table) {
	gm := snap.UserMacros(0)
	for i := range rules {
		r := &rules[i]
		if r.ProxyID != p.ID || r.Status != 0 {
			continue
		}
		t["drules"].Data = append(t["drules"].Data, []any{r.ID, r.Name, r.IPRange, gm.Expand(r.Delay)})
		for _, k := range r.Checks {
			t["dchecks"].Data = append(t["dchecks"].Data, []any{k.ID, r.ID, k.Type, gm.Expand(k.Key), gm.Expand(k.SNMPCommunity), k.Ports,
				gm.Expand(k.SNMPv3SecurityName), k.SNMPv3SecurityLevel, gm.Expand(k.SNMPv3AuthPassphrase), gm.Expand(k.SNMPv3PrivPassphrase),
				b2i(k.Uniq), k.SNMPv3AuthProtocol, k.SNMPv3PrivProtocol, gm.Expand(k.SNMPv3ContextName), k.HostSource, k.NameSource})
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func detailInt(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// proxyConfig answers "proxy config" from an active proxy. 6.0 serves
// it to a known proxy whatever version it sends (recorded from 6.0.14),
// and closes the connection for an unknown one; Peregrine answers that
// one with a failed reply saying why.
func (s *Server) proxyConfig(cs *connState, payload []byte, recv time.Time, remote string) []byte {
	var r proxyRequest
	if err := json.Unmarshal(payload, &r); err != nil {
		return s.proxyRefuse("config", "bad_request", remote, "cannot parse the configuration request: "+err.Error())
	}
	snap, p, refusal := s.findProxy(cs, "config", r.Host, remote)
	if refusal != nil {
		return refusal
	}
	s.SetProxyLastAccess(p.ID, recv)
	out := ProxyConfig(snap, p, s.opts.LogPositions, s.autoregSettings(), s.drules())
	s.proxyCount("config", "ok")
	return out
}
