package server

import (
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// selfHostItems returns the self-monitoring host's item IDs by key, or
// nil if the host is not there.
func selfHostItems(t *testing.T, s *Server) map[string]uint64 {
	t.Helper()
	h := s.Catalog.Snapshot().Host(SelfHostName)
	if h == nil {
		return nil
	}
	out := map[string]uint64{}
	for _, it := range h.Items() {
		out[it.Key] = it.ID
	}
	return out
}

// TestSelfMonitoringHost: the first start of a data directory creates
// the host "Zabbix server" (group "Zabbix servers") with internal
// items, whose values arrive through the poller and are read back
// through history.get; a restart does not duplicate it; once deleted it
// stays deleted.
func TestSelfMonitoringHost(t *testing.T) {
	cfg := testConfig(t, integrationSpec())
	s, stop := runServer(t, cfg)

	snap := s.Catalog.Snapshot()
	h := snap.Host(SelfHostName)
	if h == nil {
		t.Fatalf("no host %q after the first start", SelfHostName)
	}
	g := snap.Group(SelfHostGroup)
	if g == nil || !slices.Contains(h.GroupIDs, g.ID) {
		t.Fatalf("host %q is not in group %q (groups %v)", SelfHostName, SelfHostGroup, h.GroupIDs)
	}
	ids := selfHostItems(t, s)
	spec := SelfHostSpec()
	if len(ids) != len(spec.Items) {
		t.Fatalf("self host has %d items, want %d: %v", len(ids), len(spec.Items), ids)
	}
	for _, want := range spec.Items {
		it := snap.Item(ids[want.Key])
		if it == nil || it.Type != catalog.Internal || it.Delay != want.Delay || !it.Enabled {
			t.Errorf("item %s: %+v; want an enabled internal item every %s", want.Key, it, want.Delay)
		}
	}
	if ids["zabbix[version]"] == 0 || snap.Item(ids["zabbix[version]"]).Delay != "1h" || snap.Item(ids["zabbix[uptime]"]).Delay != "1m" {
		t.Error("version is not hourly or uptime not every minute")
	}
	if _, err := os.Stat(SelfHostMarkerPath(cfg.DataDir)); err != nil {
		t.Fatalf("no marker after creating the host: %v", err)
	}

	// Short intervals for the test: nine items every second.
	admin := adminLogin(t, s)
	fast := []string{"zabbix[uptime]", "zabbix[version]", "zabbix[hosts]", "zabbix[items]", "zabbix[items_unsupported]",
		"zabbix[wcache,values,float]", "zabbix[requiredperformance]", "zabbix[queue]", "zabbix[process,pipeline shard,avg,busy]"}
	var upd []map[string]any
	for _, k := range fast {
		upd = append(upd, map[string]any{"itemid": strconv.FormatUint(ids[k], 10), "delay": "1s"})
	}
	admin.ok("item.update", upd, nil)
	trap := snap.Lookup("peregrine-test", "trap.float").ID
	admin.ok("history.push", []map[string]any{
		{"itemid": trap, "value": 1.5, "clock": 1700000000}, {"itemid": trap, "value": 2.5, "clock": 1700000001}, {"itemid": trap, "value": 3.5, "clock": 1700000002},
	}, nil)

	// Value types as history.get numbers them.
	const float, str, uint = 0, 1, 3
	last := func(key string, vt int) string {
		rows := historyGet(admin, ids[key], vt)
		if len(rows) == 0 {
			return ""
		}
		return rows[len(rows)-1].Value
	}
	waitUntil := func(key string, vt int, ok func(v string) bool) string {
		t.Helper()
		var v string
		waitFor(t, func() string { return key + " last value " + strconv.Quote(v) }, func() bool {
			v = last(key, vt)
			return v != "" && ok(v)
		})
		return v
	}
	is := func(want string) func(string) bool { return func(v string) bool { return v == want } }
	atLeast := func(n float64) func(string) bool {
		return func(v string) bool { f, err := strconv.ParseFloat(v, 64); return err == nil && f >= n }
	}
	waitUntil("zabbix[version]", str, is(Version))
	waitUntil("zabbix[hosts]", uint, is("2"))
	// 106 items of the test host and the self host's own.
	waitUntil("zabbix[items]", uint, is(strconv.Itoa(106+len(spec.Items))))
	// agent.ping has no agent interface to be polled through.
	waitUntil("zabbix[items_unsupported]", uint, is("1"))
	// The three pushed floats, and the float values of the self host's
	// own float items stored since.
	waitUntil("zabbix[wcache,values,float]", uint, atLeast(3))
	// Nine items every second; agent.ping and ten self items every
	// minute; the version now every second too; trappers not counted.
	waitUntil("zabbix[requiredperformance]", float, func(v string) bool {
		f, err := strconv.ParseFloat(v, 64)
		return err == nil && math.Abs(f-(9+11.0/60)) < 1e-5
	})
	waitUntil("zabbix[queue]", uint, is("0"))
	waitUntil("zabbix[process,pipeline shard,avg,busy]", float, func(v string) bool {
		f, err := strconv.ParseFloat(v, 64)
		return err == nil && f >= 0 && f <= 100
	})
	// The queue through the API (empty: nothing is late here) and the
	// figures on /metrics.
	var q struct {
		Total string
		Delay map[string]string
		Types []any
	}
	admin.ok("queue.get", map[string]any{"groupby": []string{"type"}}, &q)
	if q.Total != "0" || len(q.Delay) != 6 || q.Delay["10m"] != "0" || q.Types == nil {
		t.Errorf("queue.get: %+v", q)
	}
	var metrics strings.Builder
	if err := s.Metrics.WriteText(&metrics); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"peregrine_poll_busy_seconds_total ", "peregrine_trapper_busy_seconds_total ", "peregrine_pipeline_busy_seconds_total ",
		"peregrine_history_housekeeping_busy_seconds_total ", `peregrine_pipeline_values_committed_by_type_total{type="float"} `} {
		if !strings.Contains(metrics.String(), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	up := waitUntil("zabbix[uptime]", uint, atLeast(0))
	waitUntil("zabbix[uptime]", uint, func(v string) bool { return v != up })
	stop()

	// A restart keeps the host as it is, once.
	s2, stop2 := runServer(t, cfg)
	ids2 := selfHostItems(t, s2)
	if len(ids2) != len(ids) {
		t.Fatalf("after a restart the self host has %d items, want %d", len(ids2), len(ids))
	}
	for k, id := range ids {
		if ids2[k] != id {
			t.Errorf("after a restart item %s is %d, was %d", k, ids2[k], id)
		}
	}
	n := 0
	for _, h := range s2.Catalog.Snapshot().Hosts() {
		if h.Host == SelfHostName {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d hosts named %q after a restart", n, SelfHostName)
	}
	// Deleted, it stays deleted.
	adminLogin(t, s2).ok("host.delete", []string{strconv.FormatUint(s2.Catalog.Snapshot().Host(SelfHostName).ID, 10)}, nil)
	stop2()
	s3, _ := runServer(t, cfg)
	if s3.Catalog.Snapshot().Host(SelfHostName) != nil {
		t.Fatalf("host %q came back after it was deleted", SelfHostName)
	}
}
