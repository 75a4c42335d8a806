package service

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/event"
)

// fakeEvents is an event store's open problems.
type fakeEvents struct {
	mu   sync.Mutex
	open []event.Event
}

func (f *fakeEvents) OpenProblems() []event.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.open)
}

func openTest(t *testing.T, ev Events, now func() time.Time) *Engine {
	t.Helper()
	if ev == nil {
		ev = &fakeEvents{}
	}
	path := filepath.Join(t.TempDir(), "services.db")
	e, err := Open(context.Background(), Options{Path: path, Postgres: pgPlace(t, path), Events: ev, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// setServices replaces the configuration's services (IDs kept).
func setServices(t *testing.T, e *Engine, ss []Service) {
	t.Helper()
	err := e.Edit(context.Background(), func(c *Config) error {
		c.Services = ss
		for _, s := range ss {
			c.NextServiceID = max(c.NextServiceID, s.ID+1)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStatusGolden: 31 services and 3 open problems on Zabbix 6.0.14
// (every algorithm, propagation rule, status rule type, problem tag
// operator; testdata/status.json, recorded with service.get
// selectProblemEvents and problem.get): the same statuses and problem
// events.
func TestStatusGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/status.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Services []struct {
			ServiceID, Status, Algorithm, Weight string
			Children                             []struct{ ServiceID string }
			ProblemTags                          []struct{ Tag, Operator, Value string } `json:"problem_tags"`
			StatusRules                          []struct {
				Type        string
				LimitValue  string `json:"limit_value"`
				LimitStatus string `json:"limit_status"`
				NewStatus   string `json:"new_status"`
			} `json:"status_rules"`
			ProblemEvents []struct{ EventID, Severity, Name string } `json:"problem_events"`
		}
		Problems []struct {
			EventID, Clock, Severity, Name string
			Tags                           []struct{ Tag, Value string }
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	// encoding/json matches names case-insensitively but not across
	// underscores: the rest is read from the raw objects.
	var raw struct {
		Services []map[string]json.RawMessage
	}
	json.Unmarshal(b, &raw)
	str := func(m map[string]json.RawMessage, k string) string {
		var s string
		json.Unmarshal(m[k], &s)
		return s
	}
	fev := &fakeEvents{}
	for _, p := range g.Problems {
		ev := event.Event{ID: uint64(atoi(t, p.EventID)), Clock: int64(atoi(t, p.Clock)), Value: event.ValueProblem,
			Severity: uint8(atoi(t, p.Severity)), Name: p.Name}
		for _, tg := range p.Tags {
			ev.Tags = append(ev.Tags, event.Tag{Tag: tg.Tag, Value: tg.Value})
		}
		fev.open = append(fev.open, ev)
	}
	var ss []Service
	for i, gs := range g.Services {
		m := raw.Services[i]
		s := Service{ID: uint64(atoi(t, gs.ServiceID)), Name: str(m, "name"), Algorithm: atoi(t, gs.Algorithm), Weight: atoi(t, gs.Weight),
			PropagationRule: atoi(t, str(m, "propagation_rule")), PropagationValue: atoi(t, str(m, "propagation_value"))}
		for _, c := range gs.Children {
			s.Children = append(s.Children, uint64(atoi(t, c.ServiceID)))
		}
		for _, pt := range gs.ProblemTags {
			s.ProblemTags = append(s.ProblemTags, ProblemTag{Tag: pt.Tag, Operator: atoi(t, pt.Operator), Value: pt.Value})
		}
		for _, r := range gs.StatusRules {
			s.StatusRules = append(s.StatusRules, StatusRule{Type: atoi(t, r.Type), LimitValue: atoi(t, r.LimitValue),
				LimitStatus: atoi(t, r.LimitStatus), NewStatus: atoi(t, r.NewStatus)})
		}
		ss = append(ss, s)
	}
	e := openTest(t, fev, nil)
	setServices(t, e, ss)
	st := e.Statuses()
	ids := make([]uint64, len(ss))
	for i, s := range ss {
		ids[i] = s.ID
	}
	pe := e.ProblemEvents(ids)
	for i, gs := range g.Services {
		id := ss[i].ID
		if want := atoi(t, gs.Status); st[id] != want {
			t.Errorf("%s (%d): status %d, Zabbix %d", ss[i].Name, id, st[id], want)
		}
		var want, got []string
		for _, p := range gs.ProblemEvents {
			want = append(want, p.EventID+"/"+p.Severity+"/"+p.Name)
		}
		for _, p := range pe[id] {
			got = append(got, fmt.Sprintf("%d/%d/%s", p.EventID, p.Severity, p.Name))
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s (%d): problem events %v, Zabbix %v", ss[i].Name, id, got, want)
		}
	}
}

// The tree of the alarm recording (IDs as on Zabbix).
func recordedTree() []Service {
	pt := func(tags ...string) []ProblemTag {
		var out []ProblemTag
		for i := 0; i < len(tags); i += 3 {
			op, _ := strconv.Atoi(tags[i+1])
			out = append(out, ProblemTag{Tag: tags[i], Operator: op, Value: tags[i+2]})
		}
		return out
	}
	return []Service{
		{ID: 4, Name: "web", Algorithm: 2, ProblemTags: pt("svc", "0", "web")},
		{ID: 5, Name: "db", Algorithm: 2, ProblemTags: pt("svc", "0", "db")},
		{ID: 6, Name: "like", Algorithm: 2, ProblemTags: pt("svc", "2", "web")},
		{ID: 7, Name: "and", Algorithm: 2, ProblemTags: pt("svc", "0", "web", "env", "0", "prod")},
		{ID: 8, Name: "or", Algorithm: 2, ProblemTags: pt("svc", "0", "web", "svc", "0", "db")},
		{ID: 9, Name: "leaf0", Algorithm: 0, ProblemTags: pt("svc", "0", "db")},
		{ID: 10, Name: "leaf1", Algorithm: 1, ProblemTags: pt("svc", "0", "db")},
		{ID: 11, Name: "hosttag", Algorithm: 2, ProblemTags: pt("hosttag", "0", "h1")},
		{ID: 12, Name: "leafrule", Algorithm: 2, ProblemTags: pt("svc", "0", "nomatch"), StatusRules: []StatusRule{{Type: 2, LimitValue: 1, LimitStatus: -1, NewStatus: 3}}},
		{ID: 13, Name: "empty", Algorithm: 2, StatusRules: []StatusRule{{Type: 2, LimitValue: 1, LimitStatus: -1, NewStatus: 2}}},
		{ID: 14, Name: "root", Algorithm: 2, Children: []uint64{4, 5}},
		{ID: 15, Name: "all", Algorithm: 1, Children: []uint64{4, 5}},
		{ID: 16, Name: "okrule", Algorithm: 0, Children: []uint64{4, 5}, StatusRules: []StatusRule{{Type: 0, LimitValue: 2, LimitStatus: 2, NewStatus: 1}}},
		{ID: 17, Name: "top", Algorithm: 2, Children: []uint64{14}},
	}
}

// TestAlarmSequence replays the problems, recoveries and a severity
// change given to Zabbix 6.0.14 over recordedTree and expects the
// service alarms (status changes with their clocks) Zabbix stored after
// each step, as (service, clock, value) sets: Zabbix's order inside
// one step is its hash order.
func TestAlarmSequence(t *testing.T) {
	tags := func(kv ...string) []event.Tag {
		var out []event.Tag
		for i := 0; i < len(kv); i += 2 {
			out = append(out, event.Tag{Tag: kv[i], Value: kv[i+1]})
		}
		return out
	}
	problem := func(id uint64, sev uint8, clock int64, name string, tg []event.Tag) *event.Batch {
		return &event.Batch{Events: []event.Event{{ID: id, Value: event.ValueProblem, Severity: sev, Clock: clock, Name: name, Tags: tg}}}
	}
	ok := func(id uint64, clock int64, resolves uint64) *event.Batch {
		return &event.Batch{Events: []event.Event{{ID: id, Value: event.ValueOK, Clock: clock, Resolves: []uint64{resolves}}}}
	}
	steps := []struct {
		b    *event.Batch
		want [][3]int64
	}{
		{problem(101, 4, 1795938047, "sv-T1", tags("svc", "web", "env", "prod", "hosttag", "h1")),
			[][3]int64{{6, 1795938047, 4}, {7, 1795938047, 4}, {4, 1795938047, 4}, {14, 1795938047, 4}, {17, 1795938047, 4}, {11, 1795938047, 4}}},
		{problem(102, 2, 1795938054, "sv-T2", tags("svc", "db", "hosttag", "h1")),
			[][3]int64{{10, 1795938054, 2}, {9, 1795938054, 2}, {5, 1795938054, 2}, {15, 1795938054, 4}, {16, 1795938054, 1}}},
		{problem(103, 3, 1795938060, "sv-T3", tags("svc", "WebShop", "hosttag", "h1")), nil},
		// A value sent with a past timestamp: the problem's clock.
		{problem(104, 5, 1795937069, "sv-T4", tags("svc", "web", "env", "test", "hosttag", "h1")),
			[][3]int64{{6, 1795937069, 5}, {4, 1795937069, 5}, {14, 1795937069, 5}, {17, 1795937069, 5}, {15, 1795937069, 5}, {11, 1795937069, 5}}},
		// The highest problem resolved: the next highest's clock.
		{ok(105, 1795938075, 104),
			[][3]int64{{6, 1795938047, 4}, {4, 1795938047, 4}, {14, 1795938047, 4}, {17, 1795938047, 4}, {15, 1795938047, 4}, {11, 1795938047, 4}}},
		{ok(109, 1795938083, 101),
			[][3]int64{{6, 1795938083, -1}, {7, 1795938083, -1}, {4, 1795938083, -1}, {14, 1795938083, 2}, {17, 1795938083, 2}, {15, 1795938083, -1}, {16, 1795938083, -1}, {11, 1795938060, 3}}},
		// A severity change: the problem's own clock.
		{&event.Batch{Acks: []event.Ack{{ID: 1, EventID: 102, Action: event.ActionSeverity, OldSeverity: 2, NewSeverity: 5}}},
			[][3]int64{{10, 1795938054, 5}, {9, 1795938054, 5}, {11, 1795938054, 5}, {5, 1795938054, 5}, {14, 1795938054, 5}, {17, 1795938054, 5}}},
	}
	e := openTest(t, nil, nil)
	setServices(t, e, recordedTree())
	ctx := context.Background()
	seen := 0
	for i, s := range steps {
		e.Notify(s.b)
		if err := e.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		got := alarmsSince(t, e, seen)
		seen += len(got)
		sortAlarms(got)
		sortAlarms(s.want)
		if !slices.Equal(got, s.want) {
			t.Errorf("step %d: alarms\n got %v\nwant %v", i, got, s.want)
		}
	}
}

func sortAlarms(a [][3]int64) {
	slices.SortFunc(a, func(x, y [3]int64) int {
		for i := range x {
			if x[i] != y[i] {
				return int(x[i] - y[i])
			}
		}
		return 0
	})
}

// alarmsSince reads the alarms stored after the first n.
func alarmsSince(t *testing.T, e *Engine, n int) [][3]int64 {
	t.Helper()
	rows, err := e.db.sql.Query("SELECT service_id, clock, value FROM service_alarms ORDER BY id LIMIT -1 OFFSET ?", n)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][3]int64
	for rows.Next() {
		var a [3]int64
		if err := rows.Scan(&a[0], &a[1], &a[2]); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}
