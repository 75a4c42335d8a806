package server

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// The end-to-end tests of issue 26: an official Zabbix 6.0 template,
// imported unchanged but for the test overrides below, linked to a host
// whose data comes from a real agent or snmpd; discovery creates the
// file-system and network-interface items and triggers, values flow at
// the prototypes' intervals, a template trigger fires when the host
// lowers a macro threshold, and a file system excluded from discovery
// by a host macro becomes a lost resource and is deleted after the
// lifetime.
//
// Test overrides (the template file is otherwise imported as shipped):
//   - every discovery rule's delay becomes e2eLLDDelay: the template's
//     1h would make the test an hour long;
//   - every discovery rule's lifetime becomes the user macro
//     {$E2E.LLD.LIFETIME}, which the host sets to e2eLifetime: the API
//     refuses a literal lifetime under 1h (as 6.0 does), a macro is
//     resolved when the rule runs (as 6.0's server does);
//   - nothing else: dashboards and graph prototypes are imported as
//     shipped, and discovery makes graphs from the prototypes.
//
// The item prototypes keep the template's intervals (1m for the file
// systems, 3m for the interfaces).
const (
	e2eLLDDelay = "5s"
	e2eLifetime = "20s"
)

// e2eTemplate returns the official template file rel (under the
// templates' directory) with the test overrides applied, as YAML.
func e2eTemplate(t *testing.T, rel string) string {
	t.Helper()
	dir := testutil.ZabbixTemplates(t)
	raw, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	exp := doc["zabbix_export"].(map[string]any)
	for _, tm := range exp["templates"].([]any) {
		tm := tm.(map[string]any)
		rules, _ := tm["discovery_rules"].([]any)
		for _, r := range rules {
			r := r.(map[string]any)
			r["delay"] = e2eLLDDelay
			r["lifetime"] = "{$E2E.LLD.LIFETIME}"
		}
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// e2eImport imports a template document through configuration.import.
func e2eImport(c *apiClient, source string) {
	c.t.Helper()
	all := map[string]any{"createMissing": true, "updateExisting": true}
	c.ok("configuration.import", map[string]any{"format": "yaml", "source": source, "rules": map[string]any{
		"groups": all, "templates": all, "items": all, "triggers": all, "graphs": all, "valueMaps": all,
		"templateLinkage": map[string]any{"createMissing": true}, "templateDashboards": all, "discoveryRules": all,
	}}, nil)
}

// e2eHost creates a host linked to template tmpl (by name) with the
// lifetime macro and interfaces ifaces, and returns its ID.
func e2eHost(c *apiClient, host, tmpl string, ifaces []map[string]any) string {
	c.t.Helper()
	var g struct {
		IDs []string `json:"groupids"`
	}
	c.ok("hostgroup.create", map[string]any{"name": "e2e " + host}, &g)
	var tm []struct{ TemplateID string }
	c.ok("template.get", map[string]any{"filter": map[string]any{"host": tmpl}, "output": []string{"templateid"}}, &tm)
	if len(tm) != 1 {
		c.t.Fatalf("template %q: %+v", tmpl, tm)
	}
	var h struct {
		IDs []string `json:"hostids"`
	}
	params := map[string]any{"host": host, "groups": []any{map[string]any{"groupid": g.IDs[0]}},
		"templates": []any{map[string]any{"templateid": tm[0].TemplateID}},
		"macros":    []any{map[string]any{"macro": "{$E2E.LLD.LIFETIME}", "value": e2eLifetime}}}
	if len(ifaces) > 0 {
		params["interfaces"] = ifaces
	}
	c.ok("host.create", params, &h)
	return h.IDs[0]
}

// e2eSetMacro creates or updates a host macro.
func e2eSetMacro(c *apiClient, hostID, macro, value string) {
	c.t.Helper()
	var have []struct{ HostMacroID string }
	c.ok("usermacro.get", map[string]any{"hostids": []string{hostID}, "filter": map[string]any{"macro": macro}, "output": []string{"hostmacroid"}}, &have)
	if len(have) > 0 {
		c.ok("usermacro.update", map[string]any{"hostmacroid": have[0].HostMacroID, "value": value}, nil)
		return
	}
	c.ok("usermacro.create", map[string]any{"hostid": hostID, "macro": macro, "value": value}, nil)
}

type e2eItem struct {
	ItemID, Key, Name, Delay, LastClock, Flags string
	Discovery                                  struct{ TSDelete string }
}

// e2eItems returns the host's items by name (the templates' names are
// the same for the agent and for SNMP, their keys are not).
func e2eItems(c *apiClient, hostID string) map[string]e2eItem {
	c.t.Helper()
	var rows []map[string]any
	c.ok("item.get", map[string]any{"hostids": []string{hostID}, "output": []string{"itemid", "key_", "name", "delay", "lastclock", "flags"},
		"selectItemDiscovery": []string{"ts_delete"}}, &rows)
	out := map[string]e2eItem{}
	for _, r := range rows {
		it := e2eItem{ItemID: r["itemid"].(string), Key: r["key_"].(string), Name: r["name"].(string), Delay: r["delay"].(string), Flags: r["flags"].(string)}
		it.LastClock, _ = r["lastclock"].(string)
		if d, ok := r["itemDiscovery"].(map[string]any); ok {
			it.Discovery.TSDelete, _ = d["ts_delete"].(string)
		}
		out[it.Name] = it
	}
	return out
}

type e2eTrigger struct {
	TriggerID, Description, Value, Flags string
}

func e2eTriggers(c *apiClient, hostID string) []e2eTrigger {
	c.t.Helper()
	var rows []e2eTrigger
	c.ok("trigger.get", map[string]any{"hostids": []string{hostID}, "output": []string{"triggerid", "description", "value", "flags"}, "expandDescription": true}, &rows)
	return rows
}

func namesWith(items map[string]e2eItem, part string) []string {
	var out []string
	for k := range items {
		if strings.Contains(k, part) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// e2eWait polls cond every second for up to limit.
func e2eWait(t *testing.T, limit time.Duration, what func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v: %s", limit, what())
		}
		time.Sleep(time.Second)
	}
}

// e2eFlow is the part every agent test shares once the host exists:
// discovery, values at the prototypes' interval, the trigger, the lost
// file system ("/").
func e2eFlow(t *testing.T, c *apiClient, hostID string, diag func() string) {
	var items map[string]e2eItem
	state := func() string {
		keys := make([]string, 0, len(items))
		for k, it := range items {
			keys = append(keys, fmt.Sprintf("%s=%s(flags %s, last %s, ts_delete %s)", k, it.Key, it.Flags, it.LastClock, it.Discovery.TSDelete))
		}
		sort.Strings(keys)
		return fmt.Sprintf("items: %s\n%s", strings.Join(keys, " "), diag())
	}
	// Discovery: the root file system's and the network interfaces'
	// items, at the prototypes' intervals.
	e2eWait(t, 90*time.Second, state, func() bool {
		items = e2eItems(c, hostID)
		return items[fsUsedPct].ItemID != "" && len(namesWith(items, netIn)) > 0
	})
	fs := items[fsUsedPct]
	if fs.Flags != "4" || fs.Delay != "1m" {
		t.Errorf("%s: flags %s delay %q, want 4 and the prototype's 1m", fs.Key, fs.Flags, fs.Delay)
	}
	for _, k := range namesWith(items, netIn) {
		if it := items[k]; it.Flags != "4" || it.Delay != "3m" {
			t.Errorf("%s: flags %s delay %q, want 4 and the prototype's 3m", k, it.Flags, it.Delay)
		}
	}
	discovered := 0
	for _, it := range items {
		if it.Flags == "4" {
			discovered++
		}
	}
	t.Logf("discovered %d items, interfaces: %v", discovered, namesWith(items, netIn))
	// Graphs from the template's graph prototypes: the discovered ones of
	// the file system and of an interface.
	var graphs []struct{ Name, Flags string }
	e2eWait(t, 30*time.Second, func() string { return fmt.Sprintf("discovered graphs: %v", graphs) }, func() bool {
		c.ok("graph.get", map[string]any{"hostids": []string{hostID}, "output": []string{"name", "flags"}, "filter": map[string]any{"flags": 4}}, &graphs)
		return len(graphs) >= 2
	})
	var trigs []e2eTrigger
	e2eWait(t, 30*time.Second, func() string { return fmt.Sprintf("triggers %+v", trigs) }, func() bool {
		trigs = e2eTriggers(c, hostID)
		return findTrigger(trigs, "/: Disk space is critically low") != nil
	})
	t.Logf("%d triggers", len(trigs))
	// Values at the template's 1m: the first within a minute and a bit
	// when polled; an active agent learns of the new items at its next
	// refresh (RefreshActiveChecks 60 s) and collects them on its own
	// schedule, so up to two minutes and a bit.
	e2eWait(t, 150*time.Second, state, func() bool {
		items = e2eItems(c, hostID)
		return items[fsUsedPct].LastClock != "0" && items["/: Total space"].LastClock != "0" &&
			items["/: Used space"].LastClock != "0"
	})

	// The template's critical file-system trigger fires once the host
	// lowers its thresholds: used above 0 % and free under 1000 TB.
	e2eSetMacro(c, hostID, "{$VFS.FS.PUSED.MAX.CRIT}", "0")
	e2eSetMacro(c, hostID, "{$VFS.FS.FREE.MIN.CRIT}", "1000T")
	e2eWait(t, 100*time.Second, func() string { return fmt.Sprintf("triggers %+v", trigs) }, func() bool {
		trigs = e2eTriggers(c, hostID)
		tr := findTrigger(trigs, "/: Disk space is critically low")
		return tr != nil && tr.Value == "1"
	})
	var problems []map[string]any
	c.ok("problem.get", map[string]any{"hostids": []string{hostID}, "output": []string{"name", "severity"}}, &problems)
	found := false
	for _, p := range problems {
		found = found || strings.HasPrefix(p["name"].(string), "/: Disk space is critically low (used > 0%)")
	}
	if !found {
		t.Errorf("no problem named after the trigger's event name: %v", problems)
	}

	// A host macro excludes "/" from discovery: its items and triggers
	// are lost (ts_delete set) and deleted once the lifetime passed.
	e2eSetMacro(c, hostID, "{$VFS.FS.FSNAME.NOT_MATCHES}", `^(/|/dev|/sys|/run|/proc|.+/shm)$`)
	e2eWait(t, 60*time.Second, state, func() bool {
		items = e2eItems(c, hostID)
		return items[fsUsedPct].Discovery.TSDelete > "0"
	})
	lostAt := time.Now()
	e2eWait(t, 90*time.Second, state, func() bool {
		items = e2eItems(c, hostID)
		return items[fsUsedPct].ItemID == "" && items["/: Total space"].ItemID == ""
	})
	if d := time.Since(lostAt); d < 10*time.Second {
		t.Errorf("the lost file system went after %v, before its %s lifetime", d, e2eLifetime)
	}
	trigs = e2eTriggers(c, hostID)
	if tr := findTrigger(trigs, "/: Disk space is critically low"); tr != nil {
		t.Errorf("the lost file system's trigger is still there: %+v", tr)
	}
	if len(namesWith(items, netIn)) == 0 {
		t.Errorf("the interfaces' items went with the file system")
	}
}

// The names e2eFlow looks for.
const (
	fsUsedPct = "/: Space utilization"
	netIn     = ": Bits received"
)

func findTrigger(trigs []e2eTrigger, prefix string) *e2eTrigger {
	for i := range trigs {
		if strings.HasPrefix(trigs[i].Description, prefix) {
			return &trigs[i]
		}
	}
	return nil
}

// TestIntegrationLLDLinuxPassive: "Linux by Zabbix agent" on a host
// polled passively from the real zabbix_agentd.
func TestIntegrationLLDLinuxPassive(t *testing.T) {
	// Waits on agents' schedules, not the CPU: runs beside the other
	// waiting tests (CI time).
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end with the real zabbix_agentd: minutes")
	}
	src := e2eTemplate(t, "os/linux/template_os_linux.yaml")
	addr := testutil.StartAgentd(t)
	ip, port, _ := net.SplitHostPort(addr)
	s := startServer(t, catalog.Spec{})
	c := adminLogin(t, s)
	e2eImport(c, src)
	hostID := e2eHost(c, "e2e-linux-passive", "Linux by Zabbix agent",
		[]map[string]any{{"type": 1, "main": 1, "useip": 1, "ip": ip, "dns": "", "port": port}})
	e2eFlow(t, c, hostID, func() string { return "" })
}

// TestIntegrationLLDLinuxActive: "Linux by Zabbix agent active" served
// to the real zabbix_agentd and zabbix_agent2 in active mode.
func TestIntegrationLLDLinuxActive(t *testing.T) {
	// Waits on agents' schedules, not the CPU: runs beside the other
	// waiting tests (CI time).
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end with the real agents: minutes")
	}
	src := e2eTemplate(t, "os/linux_active/template_os_linux_active.yaml")
	for _, kind := range []testutil.AgentKind{testutil.Agentd, testutil.Agent2} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			s := startServer(t, catalog.Spec{})
			c := adminLogin(t, s)
			e2eImport(c, src)
			host := "e2e-linux-" + strings.ReplaceAll(string(kind), "_", "-")
			hostID := e2eHost(c, host, "Linux by Zabbix agent active", nil)
			agent := testutil.StartActiveAgent(t, kind, testutil.ActiveAgentOptions{ServerActive: s.TrapperAddr().String(), Hostname: host})
			e2eFlow(t, c, hostID, agent.Log)
		})
	}
}

// TestIntegrationLLDLinuxSNMP: "Linux by SNMP" on a host polled from
// the real snmpd on 127.0.0.1 (SNMPv2c, the community in the template's
// {$SNMP_COMMUNITY} set on the host): discovery by discovery[] OIDs of
// IF-MIB and HOST-RESOURCES-MIB.
func TestIntegrationLLDLinuxSNMP(t *testing.T) {
	// Waits on agents' schedules, not the CPU: runs beside the other
	// waiting tests (CI time).
	t.Parallel()
	if testing.Short() {
		t.Skip("end to end with the real snmpd: minutes")
	}
	src := e2eTemplate(t, "os/linux_snmp_snmp/template_os_linux_snmp_snmp.yaml")
	sn := testutil.StartSnmpd(t)
	ip, port, _ := net.SplitHostPort(sn.Addr)
	s := startServer(t, catalog.Spec{})
	c := adminLogin(t, s)
	e2eImport(c, src)
	hostID := e2eHost(c, "e2e-linux-snmp", "Linux by SNMP", []map[string]any{{"type": 2, "main": 1, "useip": 1, "ip": ip, "dns": "", "port": port,
		"details": map[string]any{"version": 2, "bulk": 1, "community": "{$SNMP_COMMUNITY}"}}})
	e2eSetMacro(c, hostID, "{$SNMP_COMMUNITY}", sn.Community)
	e2eFlow(t, c, hostID, func() string { return "" })
}
