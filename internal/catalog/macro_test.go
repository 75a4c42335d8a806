package catalog

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/usermacro"
)

// macroSpecDoc links two template levels to a host and defines macros
// on each level and globally, in Zabbix's export form.
const macroSpecDoc = `
macros:
  - {macro: '{$A}', value: global}
  - {macro: '{$G}', value: global}
  - {macro: '{$CTX}', value: default}
hosts:
  - host: web-01
    groups: [Linux servers]
    macros:
      - {macro: '{$A}', value: host}
      - {macro: '{$CTX:"db"}', value: host-db}
      - {macro: '{$PW}', value: s3cret, type: SECRET_TEXT}
    templates:
      - name: Linux by Zabbix agent
      - name: Extra
  - host: db-01
    groups: [Linux servers]
zabbix_export:
  version: '6.0'
  groups:
    - {uuid: 846977d1dfed4968bc5f8bdb363285bc, name: Templates/Operating systems}
  templates:
    - template: Linux by Zabbix agent
      name: Linux by Zabbix agent
      items:
        - {name: CPU, key: system.cpu.util, type: ZABBIX_ACTIVE}
      macros:
        - {macro: '{$A}', value: linux}
        - {macro: '{$T1}', value: linux}
        - {macro: '{$CTX:regex:"^/var"}', value: linux-var}
      templates:
        - name: Generic
    - template: Extra
      macros:
        - {macro: '{$T1}', value: extra}
        - {macro: '{$T2}', value: extra}
    - template: Generic
      macros:
        - {macro: '{$T2}', value: generic}
        - {macro: '{$T3}', value: generic}
`

func TestMacrosImportAndResolve(t *testing.T) {
	c, path := openTemp(t)
	spec, err := ParseSpec([]byte(macroSpecDoc))
	if err != nil {
		t.Fatal(err)
	}
	res := mustApply(t, c, spec)
	if res.TemplatesCreated != 3 || res.MacrosChanged == 0 {
		t.Fatalf("apply result %+v", res)
	}
	if again := mustApply(t, c, spec); again.Changed() {
		t.Fatalf("second apply changed something: %+v", again)
	}
	c = reloadMatches(t, c, path)
	s := c.Snapshot()
	web, db := s.Host("web-01"), s.Host("db-01")
	linux := s.TemplateByName("Linux by Zabbix agent")
	if linux == nil || len(s.LinkedTemplates(linux.ID)) != 1 || s.Template(s.LinkedTemplates(linux.ID)[0]).Host != "Generic" {
		t.Fatalf("template %+v", linux)
	}
	if linux.ID >= 1<<40 || linux.ID == web.ID || linux.ID == db.ID || s.HostByID(linux.ID) != nil || s.HostOrTemplate(linux.ID) != linux {
		t.Fatalf("template ID %d is not of the hosts' sequence, or a host's", linux.ID)
	}
	for _, c := range []struct {
		host     uint64
		name, cx string
		want     string
		ok       bool
	}{
		{web.ID, "A", "", "host", true},
		{web.ID, "T1", "", "linux", true},   // first-level templates by ID: Linux (created first) before Extra
		{web.ID, "T2", "", "extra", true},   // first level before second
		{web.ID, "T3", "", "generic", true}, // second level
		{web.ID, "G", "", "global", true},
		{web.ID, "CTX", "db", "host-db", true},
		{web.ID, "CTX", "/var/log", "linux-var", true},
		{web.ID, "CTX", "/tmp", "default", true},
		{web.ID, "PW", "", "s3cret", true},
		{web.ID, "NONE", "", "", false},
		{db.ID, "A", "", "global", true},
		{db.ID, "T1", "", "", false},
		{linux.ID, "A", "", "linux", true},
		{linux.ID, "T3", "", "generic", true},
		{0, "A", "", "global", true},
	} {
		got, ok := s.UserMacros(c.host).UserMacro(c.name, c.cx)
		if got != c.want || ok != c.ok {
			t.Errorf("host %d {$%s:%s} = %q, %v; want %q, %v", c.host, c.name, c.cx, got, ok, c.want, c.ok)
		}
	}
	var pw *Macro
	for _, m := range s.Macros(web.ID) {
		if m.Macro == "{$PW}" {
			pw = m
		}
	}
	if pw == nil || pw.Type != usermacro.Secret {
		t.Fatalf("secret macro %+v", pw)
	}
}

func TestMacrosEdit(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, testSpec())
	web := c.Snapshot().Host("web-01").ID
	var ids []uint64
	mustEdit(t, c, func(e *Edit) error {
		var err error
		ids, err = e.CreateMacros([]MacroFields{
			{Macro: "{$LIMIT}", Value: "10"},
			{HostID: web, Macro: "{$LIMIT}", Value: "20"},
			{HostID: web, Macro: "{$LIMIT:/home}", Value: "30"},
			{HostID: web, Macro: "{$KEY}", Value: "k", Type: 1},
		})
		return err
	})
	s := c.Snapshot()
	if v, _ := s.UserMacros(web).UserMacro("LIMIT", "/home"); v != "30" {
		t.Fatalf("{$LIMIT:/home} = %q", v)
	}
	// Errors change nothing and name the field.
	for _, bad := range []struct {
		m    []MacroFields
		want string
	}{
		{[]MacroFields{{HostID: web, Macro: `{$LIMIT:"/home"}`}}, `macro "{$LIMIT:\"/home\"}" already exists on "web-01"`},
		{[]MacroFields{{Macro: "{$LIMIT}"}}, `macro "{$LIMIT}" already exists`},
		{[]MacroFields{{Macro: "{$N}"}, {Macro: "{$N}"}}, `macros[1].macro: macro "{$N}" already exists`},
		{[]MacroFields{{Macro: "{$lower}"}}, "macros[0].macro: incorrect user macro syntax"},
		{[]MacroFields{{Macro: `{$R:regex:"("}`}}, "invalid regular expression"},
		{[]MacroFields{{Macro: "{$V}", Type: 2}}, "vault"},
		{[]MacroFields{{HostID: 999999, Macro: "{$V}"}}, "macros[0].hostid: no such object"},
	} {
		_, err := c.Edit(context.Background(), func(e *Edit) error { _, err := e.CreateMacros(bad.m); return err })
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("CreateMacros(%+v) = %v, want %q", bad.m, err, bad.want)
		}
	}
	var ce *ConflictError
	_, err := c.Edit(context.Background(), func(e *Edit) error { _, err := e.CreateMacros([]MacroFields{{Macro: "{$LIMIT}"}}); return err })
	if !errors.As(err, &ce) || ce.Kind != MacroExists {
		t.Fatalf("duplicate: %v", err)
	}
	if c.Snapshot() != s {
		t.Fatal("a failed edit published a snapshot")
	}
	// Update: a type change without a value keeps the secret value.
	mustEdit(t, c, func(e *Edit) error {
		return e.UpdateMacros([]MacroUpdate{{ID: ids[3], Type: ptr(0)}, {ID: ids[1], Value: ptr("25")}})
	})
	if m := c.Snapshot().Macro(ids[3]); m.Value != "k" || m.Type != usermacro.Text {
		t.Fatalf("updated %+v", m)
	}
	if v, _ := c.Snapshot().UserMacros(web).UserMacro("LIMIT", ""); v != "25" {
		t.Fatalf("{$LIMIT} after update = %q", v)
	}
	// Renaming onto an existing macro is a conflict.
	_, err = c.Edit(context.Background(), func(e *Edit) error {
		return e.UpdateMacros([]MacroUpdate{{ID: ids[2], Macro: ptr("{$LIMIT}")}})
	})
	if !errors.As(err, &ce) {
		t.Fatalf("rename onto an existing macro: %v", err)
	}
	mustEdit(t, c, func(e *Edit) error { return e.DeleteMacros([]uint64{ids[2]}) })
	if v, _ := c.Snapshot().UserMacros(web).UserMacro("LIMIT", "/home"); v != "25" {
		t.Fatalf("after delete {$LIMIT:/home} = %q, want the host's default", v)
	}
	c = reloadMatches(t, c, path)
	// Deleting the host deletes its macros; the global one stays.
	mustEdit(t, c, func(e *Edit) error { return e.DeleteHosts([]uint64{web}) })
	s = c.Snapshot()
	if len(s.Macros(web)) != 0 || s.Macro(ids[1]) != nil || s.Macro(ids[0]) == nil {
		t.Fatalf("macros after the host's deletion: %v", s.AllMacros())
	}
	reloadMatches(t, c, path)
}

func TestTemplateLinkCycle(t *testing.T) {
	c, _ := openTemp(t)
	spec, err := ParseSpec([]byte("templates:\n  - {template: A, templates: [{name: B}]}\n  - {template: B}\n"))
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, spec)
	spec, _ = ParseSpec([]byte("templates:\n  - {template: B, templates: [{name: A}]}\n"))
	if _, err := c.Apply(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "would form a cycle A -> B -> A") {
		t.Fatalf("cycle: %v", err)
	}
	spec, _ = ParseSpec([]byte("templates:\n  - {template: B, templates: [{name: Missing}]}\n"))
	if _, err := c.Apply(context.Background(), spec); err == nil || !strings.Contains(err.Error(), `template "Missing"`) {
		t.Fatalf("missing template: %v", err)
	}
	if _, err := ParseSpec([]byte("macros:\n  - {macro: '{$V}', type: VAULT}\n")); err == nil || !strings.Contains(err.Error(), "vault") {
		t.Fatalf("vault macro in the import: %v", err)
	}
}

func TestExpandHTTPAndSteps(t *testing.T) {
	r1, _ := usermacro.ParseRef("{$URL}")
	r2, _ := usermacro.ParseRef("{$TOKEN}")
	d1, _ := usermacro.NewDef(r1, "http://127.0.0.1:8080", usermacro.Text)
	d2, _ := usermacro.NewDef(r2, "abc", usermacro.Secret)
	sc := usermacro.NewScope(usermacro.NewLevel([]usermacro.Def{d1, d2}))
	h := &HTTPItem{URL: "{$URL}/status", Headers: []HTTPField{{Name: "Authorization", Value: "Bearer {$TOKEN}"}}, StatusCodes: "200"}
	got := h.Expand(sc)
	if got.URL != "http://127.0.0.1:8080/status" || got.Headers[0].Value != "Bearer abc" || h.URL != "{$URL}/status" {
		t.Fatalf("expanded %+v, original %+v", got, h)
	}
	plain := &HTTPItem{URL: "http://x"}
	if plain.Expand(sc) != plain {
		t.Fatal("an item without macros was copied")
	}
	steps := []PreprocStep{{Type: 1, Params: "{$URL}"}, {Type: 12, Params: "$.a", ErrorHandler: 2, ErrorHandlerParams: "{$TOKEN}"}}
	if !StepsHaveMacros(steps) || StepsHaveMacros(steps[:0]) {
		t.Fatal("StepsHaveMacros")
	}
	ex := ExpandSteps(steps, sc)
	if ex[0].Params != "http://127.0.0.1:8080" || ex[1].ErrorHandlerParams != "abc" || steps[0].Params != "{$URL}" {
		t.Fatalf("ExpandSteps: %+v (original %+v)", ex, steps)
	}
}

// Intervals and timeouts may be user macros; their references must be
// well-formed.
func TestDelayMacros(t *testing.T) {
	c, _ := openTemp(t)
	spec := testSpec()
	spec.Hosts[0].Items[0].Type, spec.Hosts[0].Items[0].Delay, spec.Hosts[0].Items[0].Timeout = "zabbix_agent", "{$INTERVAL}", "{$TIMEOUT}"
	mustApply(t, c, spec)
	spec.Hosts[0].Items[0].Delay = "{$bad"
	if _, err := c.Apply(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "delay") {
		t.Fatalf("malformed macro in delay: %v", err)
	}
}

func TestMaintenancesEdit(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, testSpec())
	s := c.Snapshot()
	web, g := s.Host("web-01").ID, s.Group("Network").ID
	m := Maintenance{Name: "night", ActiveSince: 1000, ActiveTill: 100000, HostIDs: []uint64{web}, GroupIDs: []uint64{g},
		Periods: []MaintenancePeriod{{Type: PeriodDaily, StartTime: 3630, Period: 3659, Every: 1}},
		Tags:    []MaintenanceTag{{Tag: "service", Operator: 2, Value: "db"}}}
	var ids []uint64
	mustEdit(t, c, func(e *Edit) (err error) { ids, err = e.CreateMaintenances([]Maintenance{m}); return err })
	got := c.Snapshot().Maintenance(ids[0])
	if got == nil || got.ActiveSince != 960 || got.Periods[0].StartTime != 3600 || got.Periods[0].Period != 3600 {
		t.Fatalf("stored %+v: want times rounded down to minutes", got)
	}
	for _, bad := range []struct {
		f    func(*Maintenance)
		want string
	}{
		{func(m *Maintenance) {}, "already exists"},
		{func(m *Maintenance) { m.Name, m.ActiveTill = "x", 0 }, "active_till: must be after active_since"},
		{func(m *Maintenance) { m.Name, m.HostIDs, m.GroupIDs = "x", nil, nil }, "at least one host group or host"},
		{func(m *Maintenance) {
			m.Name = "x"
			m.Periods = []MaintenancePeriod{{Type: PeriodMonthly, Period: 3600}}
		}, "monthly periods (4) are not supported"},
		{func(m *Maintenance) {
			m.Name = "x"
			m.Periods = []MaintenancePeriod{{Type: PeriodWeekly, Period: 3600, Every: 1}}
		}, "dayofweek"},
		{func(m *Maintenance) { m.Name = "x"; m.Periods = []MaintenancePeriod{{Type: PeriodOnce, Period: 60}} }, "at least 300 seconds"},
		{func(m *Maintenance) { m.Name, m.HostIDs = "x", []uint64{99999} }, "no such object"},
	} {
		mm := m
		mm.Periods = slices.Clone(m.Periods)
		bad.f(&mm)
		_, err := c.Edit(context.Background(), func(e *Edit) error { _, err := e.CreateMaintenances([]Maintenance{mm}); return err })
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("CreateMaintenances(%+v) = %v, want %q", mm, err, bad.want)
		}
	}
	up := *got
	up.Name, up.Periods = "night2", []MaintenancePeriod{{Type: PeriodWeekly, StartTime: 0, Period: 7200, Every: 2, DayOfWeek: 1 | 64}}
	mustEdit(t, c, func(e *Edit) error { return e.UpdateMaintenances([]Maintenance{up}) })
	c = reloadMatches(t, c, path)
	if m := c.Snapshot().Maintenance(ids[0]); m.Name != "night2" || m.Periods[0].DayOfWeek != 65 {
		t.Fatalf("after update and reload: %+v", m)
	}
	mustEdit(t, c, func(e *Edit) error { return e.DeleteMaintenances(ids) })
	if len(c.Snapshot().Maintenances()) != 0 {
		t.Fatal("maintenance not deleted")
	}
	reloadMatches(t, c, path)
}

// TestSoftHardFields: triggers' max_check_attempts and items'
// retry_delay are stored, validated and reloaded.
func TestSoftHardFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	c := reopenTrig(t, path)
	spec := testSpec()
	spec.Hosts[0].Items[0].RetryDelay = "10s"
	spec.Hosts[0].Triggers = []TriggerSpec{{Name: "t", Expression: "last(/web-01/app.requests)>0", MaxCheckAttempts: 3}}
	mustApply(t, c, spec)
	s := c.Snapshot()
	if it := s.Lookup("web-01", "app.requests"); it.Ext().RetryDelay != "10s" {
		t.Fatalf("retry_delay %q", it.Ext().RetryDelay)
	}
	if tr := s.Triggers()[0]; tr.MaxCheckAttempts != 3 {
		t.Fatalf("max_check_attempts %d", tr.MaxCheckAttempts)
	}
	if again := mustApply(t, c, spec); again.Changed() {
		t.Fatalf("second apply changed %+v", again)
	}
	want := c.Snapshot()
	c.Close()
	c = reopenTrig(t, path)
	if d := diffViews(want, c.Snapshot()); d != "" {
		t.Fatalf("reloaded differs:\n%s", d)
	}
	for _, bad := range []struct {
		f    func(*Spec)
		want string
	}{
		{func(s *Spec) { s.Hosts[0].Items[0].RetryDelay = "2d" }, "retry_delay"},
		{func(s *Spec) { s.Hosts[0].Triggers[0].MaxCheckAttempts = 101 }, "max_check_attempts"},
	} {
		sp := testSpec()
		sp.Hosts[0].Triggers = []TriggerSpec{{Name: "t", Expression: "last(/web-01/app.requests)>0"}}
		bad.f(&sp)
		if _, err := c.Apply(context.Background(), sp); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v", bad.want, err)
		}
	}
	// The default is 1.
	id := c.Snapshot().Triggers()[0].ID
	mustEdit(t, c, func(e *Edit) error {
		return e.UpdateTriggers([]TriggerUpdate{{ID: id, MaxCheckAttempts: ptr(uint8(0))}})
	})
	if got := c.Snapshot().Trigger(id).MaxCheckAttempts; got != 1 {
		t.Fatalf("max_check_attempts 0 stored as %d, want 1", got)
	}
}

// TestUserMacrosOfHosts: the scope of a trigger over several hosts is
// the hosts' own macros (in the order given), then their templates
// depth by depth, then global, a context match winning at any depth.
func TestUserMacrosOfHosts(t *testing.T) {
	c, _ := openTemp(t)
	spec, err := ParseSpec([]byte(`
macros:
  - {macro: '{$Z}', value: global}
templates:
  - template: TA
    macros:
      - {macro: '{$X}', value: ta}
    templates: [{name: TX}]
  - template: TB
    macros:
      - {macro: '{$X}', value: tb}
      - {macro: '{$Y}', value: tb}
      - {macro: '{$Z:"c"}', value: tb-c}
  - template: TX
    macros:
      - {macro: '{$DEEP}', value: tx}
hosts:
  - host: x
    groups: [G]
    templates: [{name: TA}]
    macros:
      - {macro: '{$A}', value: x}
  - host: y
    groups: [G]
    templates: [{name: TB}]
    macros:
      - {macro: '{$A}', value: y}
      - {macro: '{$Y}', value: y}
`))
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, spec)
	s := c.Snapshot()
	x, y := s.Host("x").ID, s.Host("y").ID
	for _, c := range []struct {
		hosts    []uint64
		name, cx string
		want     string
		ok       bool
	}{
		{[]uint64{x, y}, "A", "", "x", true},      // own macros in the order given
		{[]uint64{y, x}, "A", "", "y", true},      //
		{[]uint64{x, y}, "Y", "", "y", true},      // y's own before x's and y's templates
		{[]uint64{x, y}, "X", "", "ta", true},     // first-level templates by ID: TA before TB
		{[]uint64{x, y}, "Z", "c", "tb-c", true},  // a context match at any depth before the default
		{[]uint64{x, y}, "Z", "", "global", true}, //
		{[]uint64{x, y}, "DEEP", "", "tx", true},  // second level
		{[]uint64{x}, "Y", "", "", false},         // one host: its scope only
		{nil, "Z", "", "global", true},            // no host: global
	} {
		got, ok := s.UserMacrosOfHosts(c.hosts).UserMacro(c.name, c.cx)
		if got != c.want || ok != c.ok {
			t.Errorf("hosts %v {$%s:%s} = %q, %v; want %q, %v", c.hosts, c.name, c.cx, got, ok, c.want, c.ok)
		}
	}
}

// TestHostUserMacrosFollowEdits: a host reaches its macros through the
// snapshot holding it (Host.UserMacros, as checkers do through an item's
// Host), so an Apply or Edit that changes only macros must still put
// every host in the new snapshot: the macros a spec brings, and those an
// Edit adds, resolve through the host and its items at once.
func TestHostUserMacrosFollowEdits(t *testing.T) {
	c, _ := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "app", Groups: []string{"G"},
		Macros: []MacroSpec{{Macro: "{$USER}", Value: "monitorRole"}},
		Items:  []ItemSpec{{Key: "a", Type: "trapper"}}}}})
	s := c.Snapshot()
	if got := s.Host("app").UserMacros().Expand("{$USER}"); got != "monitorRole" {
		t.Fatalf("after Apply, the host resolves {$USER} to %q", got)
	}
	id := s.Host("app").ID
	mustEdit(t, c, func(e *Edit) error {
		_, err := e.CreateMacros([]MacroFields{{HostID: id, Macro: "{$PASS}", Value: "p"}})
		return err
	})
	s = c.Snapshot()
	if got := s.Lookup("app", "a").Host.UserMacros().Expand("{$USER}/{$PASS}"); got != "monitorRole/p" {
		t.Fatalf("after an Edit of macros only, the item's host resolves %q", got)
	}
}
