package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil/catalogtest"
)

// fakeQueue is the poller's queue as queue.get reads it.
type fakeQueue struct{ checks []OverdueCheck }

func (q *fakeQueue) Overdue() []OverdueCheck { return q.checks }

type queueAnswer struct {
	Total string
	Delay map[string]string
	Hosts []struct {
		HostID, Host, Name, Total string
		Delay                     map[string]string
	}
	Types []struct {
		Type, Total string
		Delay       map[string]string
	}
}

// delays renders counts of the 5s..10m buckets as queue.get does.
func delays(n ...int) map[string]string {
	out := map[string]string{}
	for i, b := range queueBuckets {
		out[b.name] = fmt.Sprint(n[i])
	}
	return out
}

// The queue of the permission fixture: web-1 has two overdue checks (7 s
// and 12 min), both-1 one (45 s), db-1 one (3 min), secret-1 one (5.5 s),
// and an item that left the catalog one.
func fillQueue(f *permFixture) {
	f.queue.checks = []OverdueCheck{
		{ItemID: f.item("web-1"), Late: 7_000},
		{ItemID: f.snap.Lookup("web-1", "b").ID, Late: 720_000},
		{ItemID: f.item("both-1"), Late: 45_000},
		{ItemID: f.item("db-1"), Late: 180_000},
		{ItemID: f.item("secret-1"), Late: 5_500},
		{ItemID: 999_999, Late: 60_000},
	}
}

func TestQueueGet(t *testing.T) {
	f := newPermFixture(t)
	var empty queueAnswer
	f.mustDo(f.root, "queue.get", `{}`, &empty)
	if empty.Total != "0" || !cmp.Equal(empty.Delay, delays(0, 0, 0, 0, 0, 0)) || empty.Hosts != nil {
		t.Fatalf("empty queue: %+v", empty)
	}
	fillQueue(f)
	var all queueAnswer
	f.mustDo(f.root, "queue.get", `{"groupby":["host","type"]}`, &all)
	if all.Total != "5" || !cmp.Equal(all.Delay, delays(2, 0, 1, 1, 0, 1)) {
		t.Errorf("super admin's queue: total %s, delay %v", all.Total, all.Delay)
	}
	var hosts []string
	for _, h := range all.Hosts {
		hosts = append(hosts, h.Host+"="+h.Total)
	}
	// Most overdue first, then by host ID (the catalog's order).
	if got := strings.Join(hosts, ","); got != "web-1=2,both-1=1,db-1=1,secret-1=1" {
		t.Errorf("per host: %s", got)
	}
	if len(all.Hosts) > 0 && (all.Hosts[0].HostID != fmt.Sprint(f.host("web-1")) || all.Hosts[0].Name != "web-1" || !cmp.Equal(all.Hosts[0].Delay, delays(1, 0, 0, 0, 0, 1))) {
		t.Errorf("web-1's row: %+v", all.Hosts[0])
	}
	if len(all.Types) != 1 || all.Types[0].Type != "2" || all.Types[0].Total != "5" {
		t.Errorf("per type (all trappers): %+v", all.Types)
	}

	var one queueAnswer
	f.mustDo(f.root, "queue.get", fmt.Sprintf(`{"hostids":["%d"],"groupby":"host"}`, f.host("db-1")), &one)
	if one.Total != "1" || len(one.Hosts) != 1 || one.Hosts[0].Host != "db-1" || one.Types != nil {
		t.Errorf("hostids db-1: %+v", one)
	}
	var top queueAnswer
	f.mustDo(f.root, "queue.get", `{"groupby":["host"],"limit":1}`, &top)
	if top.Total != "5" || len(top.Hosts) != 1 || top.Hosts[0].Host != "web-1" {
		t.Errorf("limit 1: %+v", top)
	}
}

// A user sees the checks of the hosts they may read only, in the totals
// too.
func TestQueueGetPermissions(t *testing.T) {
	f := newPermFixture(t)
	fillQueue(f)
	f.usergroup("Readers", map[string]int{"Linux": 2}, "reader")
	f.usergroup("No secrets", map[string]int{"Secret": 0}, "reader")
	var q queueAnswer
	f.mustDo(f.login("reader"), "queue.get", `{"groupby":["host"]}`, &q)
	var hosts []string
	for _, h := range q.Hosts {
		hosts = append(hosts, h.Host)
	}
	if q.Total != "3" || !cmp.Equal(q.Delay, delays(1, 0, 1, 0, 0, 1)) || strings.Join(hosts, ",") != "web-1,both-1" {
		t.Errorf("reader's queue: total %s, delay %v, hosts %v", q.Total, q.Delay, hosts)
	}
	f.mustDo(f.login("reader"), "queue.get", fmt.Sprintf(`{"hostids":["%d"]}`, f.host("db-1")), &q)
	if q.Total != "0" {
		t.Errorf("reader asking for db-1's checks: %+v", q)
	}
	var none queueAnswer
	f.mustDo(f.login("lonely"), "queue.get", `{}`, &none)
	if none.Total != "0" {
		t.Errorf("a user without rights sees %s overdue checks", none.Total)
	}
}

// Unknown or malformed parameters are refused as by the get methods.
func TestQueueGetStrictParams(t *testing.T) {
	f := newPermFixture(t)
	for _, c := range []struct {
		params string
		code   int
		want   string
	}{
		{`{"output":"extend"}`, -32602, `unexpected parameter "output"`},
		{`{"hostid":"1"}`, -32602, `unexpected parameter "hostid"`},
		{`{"groupby":["item"]}`, -32602, `"/groupby/1": value must be one of "host", "type"`},
		{`{"hostids":{"a":1}}`, -32602, ``},
		{`"x"`, -32600, `an array or object is expected`},
	} {
		_, e := f.do(f.root, "queue.get", c.params)
		if e == nil || e.Code != c.code || !strings.Contains(e.Data, c.want) {
			t.Errorf("queue.get %s: error %+v; want %d containing %q", c.params, e, c.code, c.want)
		}
	}
	if _, e := f.do("", "queue.get", `{}`); e == nil {
		t.Error("queue.get without auth answered")
	}
	var raw json.RawMessage
	f.mustDo(f.root, "queue.get", `[]`, &raw)
}

// askQueue is a queue asked for with the caller's secret (QueueAsker,
// an HA standby's): it records the secrets and answers checks or err.
type askQueue struct {
	checks  []OverdueCheck
	err     error
	secrets []string
}

func (q *askQueue) Overdue() []OverdueCheck { panic("BUG: queue.get asked Overdue of a QueueAsker") }

func (q *askQueue) OverdueAs(_ context.Context, secret string) ([]OverdueCheck, error) {
	q.secrets = append(q.secrets, secret)
	return q.checks, q.err
}

// TestQueueGetAsks: a QueueAsker (an HA standby's queue, the active
// node's) is asked with the caller's session, its checks counted as
// Overdue's are, and its error answered with -32500 and its text.
func TestQueueGetAsks(t *testing.T) {
	cat := catalogtest.Open(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Items: []catalog.ItemSpec{{Key: "k", Type: "trapper", ValueType: "float"}}}}})
	q := &askQueue{}
	f := &serviceFixture{api: New(Options{Catalog: cat, Queue: q, Auth: &fakeAuth{sessions: map[string]User{
		"admin": {ID: 1, Username: "Admin", Role: RoleSuperAdmin}}}})}
	q.checks = []OverdueCheck{{ItemID: cat.Snapshot().Lookup("h", "k").ID, Late: 65_000}}
	if got := string(f.call(t, "admin", "queue.get", []byte(`{}`))); !strings.Contains(got, `"total":"1"`) || !strings.Contains(got, `"1m":"1"`) {
		t.Fatalf("queue.get through the asker: %s", got)
	}
	q.err = errors.New("The active node at 127.0.0.1:10051 gives its queue to super admins only (as Zabbix 6.0's server): Permission denied.")
	got := string(f.call(t, "admin", "queue.get", []byte(`{}`)))
	if !strings.Contains(got, `"code":-32500`) || !strings.Contains(got, "gives its queue to super admins only") {
		t.Fatalf("queue.get with the asker failing: %s", got)
	}
	if !slices.Equal(q.secrets, []string{"admin", "admin"}) {
		t.Fatalf("the asker was given %q, want the caller's session twice", q.secrets)
	}
}
