package server

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// preprocessYAML imports, as Zabbix's templates define them, a trapper
// master receiving JSON like zabbix_agent2's docker.container_stats and
// one receiving a Prometheus exporter's text, with dependent items
// picking values out of them.
const preprocessYAML = `
hosts:
  - host: pp-host
    groups: [Preprocessing]
    items:
      - key: stats
        value_type: text
        trends: "0"
      - key: cpu.total
        type: dependent
        master_item: {key: stats}
        value_type: unsigned
        preprocessing:
          - type: JSONPATH
            parameters: ['$.cpu_stats.cpu_usage.total_usage']
      - key: mem.usage.kb
        type: dependent
        master_item: {key: stats}
        preprocessing:
          - type: JSONPATH
            parameters: ['$.memory_stats.usage']
          - type: MULTIPLIER
            parameters: ['0.0009765625'] # /1024
      - key: net.rx.rate
        type: dependent
        master_item: {key: stats}
        preprocessing:
          - type: JSONPATH
            parameters: ['$.networks.eth0.rx_bytes']
          - type: CHANGE_PER_SECOND
            parameters: ['']
      - key: pids
        type: dependent
        master_item: {key: stats}
        value_type: unsigned
        preprocessing:
          - type: JSONPATH
            parameters: ['$.pids_stats.current']
      - key: metrics
        value_type: text
        trends: "0"
      - key: load1
        type: dependent
        master_item: {key: metrics}
        preprocessing:
          - type: PROMETHEUS_PATTERN
            parameters: ['node_load1', value, '']
      - key: fs.free.root
        type: dependent
        master_item: {key: metrics}
        preprocessing:
          - type: PROMETHEUS_PATTERN
            parameters: ['node_filesystem_avail_bytes{mountpoint="/"}', value, '']
      - key: fs.count
        type: dependent
        master_item: {key: metrics}
        value_type: unsigned
        preprocessing:
          - type: PROMETHEUS_PATTERN
            parameters: ['node_filesystem_avail_bytes', function, count]
`

func containerStats(totalUsage, rx int) string {
	return `{"read":"2024-05-01T10:00:00.000000000Z","pids_stats":{"current":12},` +
		`"networks":{"eth0":{"rx_bytes":` + strconv.Itoa(rx) + `,"rx_packets":1200,"tx_bytes":5000}},` +
		`"memory_stats":{"usage":52428800,"limit":2147483648},` +
		`"cpu_stats":{"cpu_usage":{"total_usage":` + strconv.Itoa(totalUsage) + `,"percpu_usage":[1,2]},"online_cpus":2}}`
}

const nodeExporter = `# HELP node_load1 1m load average.
# TYPE node_load1 gauge
node_load1 0.42
# HELP node_filesystem_avail_bytes Filesystem space available to non-root users in bytes.
# TYPE node_filesystem_avail_bytes gauge
node_filesystem_avail_bytes{device="/dev/sda1",fstype="ext4",mountpoint="/"} 1.2345e+10
node_filesystem_avail_bytes{device="tmpfs",fstype="tmpfs",mountpoint="/run"} 8.1e+08
`

// TestIntegrationPreprocessing: the real zabbix_sender sends a container
// stats document and a Prometheus exporter's text to trapper items;
// their dependent items' JSONPath and Prometheus pattern steps pick the
// values out in the pipeline, and history.get returns them. A document
// without the member makes that dependent item not supported (item.get
// state and error) until a good one arrives.
func TestIntegrationPreprocessing(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the real zabbix_sender")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	spec, err := catalog.ParseSpec([]byte(preprocessYAML))
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, spec)
	addr := s.TrapperAddr().String()
	send := func(clock int, key, value string) {
		t.Helper()
		// -T with an input file carries the clock; the values have
		// spaces and quotes, so they go in quoted with the escapes the
		// input format has.
		path := t.TempDir() + "/in.txt"
		quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(value)
		if err := os.WriteFile(path, []byte("pp-host "+key+" "+strconv.Itoa(clock)+` "`+quoted+`"`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r := testutil.RunSender(t, addr, "-T", "-i", path)
		if r.ExitCode != 0 || r.Processed != 1 {
			t.Fatalf("zabbix_sender %s: %+v\n%s", key, r, r.Output)
		}
	}
	send(1700000000, "stats", containerStats(1000, 10000))
	send(1700000060, "stats", containerStats(2500, 70000))
	r := testutil.RunSender(t, addr, "-s", "pp-host", "-k", "metrics", "-o", nodeExporter)
	if r.ExitCode != 0 || r.Processed != 1 {
		t.Fatalf("zabbix_sender metrics: %+v\n%s", r, r.Output)
	}
	c := adminLogin(t, s)
	snap := s.Catalog.Snapshot()
	values := func(key string, vt int) []string {
		t.Helper()
		var out []string
		for _, row := range historyGet(c, snap.Lookup("pp-host", key).ID, vt) {
			out = append(out, row.Value)
		}
		return out
	}
	check := func(key string, vt int, want ...string) {
		t.Helper()
		if got := values(key, vt); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("history.get %s: %q, want %q", key, got, want)
		}
	}
	check("cpu.total", 3, "1000", "2500")
	check("mem.usage.kb", 0, "51200", "51200")
	check("net.rx.rate", 0, "1000") // (70000-10000)/60; the first value only primes the step
	check("pids", 3, "12", "12")
	check("load1", 0, "0.42")
	check("fs.free.root", 0, "12345000000")
	check("fs.count", 3, "2")
	if got := values("stats", 4); len(got) != 2 || !strings.Contains(got[0], `"total_usage":1000`) {
		t.Errorf("the master's own values: %q", got)
	}

	type itemRow struct {
		Key   string `json:"key_"`
		State string `json:"state"`
		Error string `json:"error"`
	}
	state := func(key string) itemRow {
		t.Helper()
		var rows []itemRow
		c.ok("item.get", map[string]any{"itemids": []string{strconv.FormatUint(snap.Lookup("pp-host", key).ID, 10)}, "output": []string{"key_", "state", "error"}}, &rows)
		if len(rows) != 1 {
			t.Fatalf("item.get %s: %v", key, rows)
		}
		return rows[0]
	}
	// No pids_stats member: that item becomes not supported with the
	// step's message, the others carry on.
	send(1700000120, "stats", strings.Replace(containerStats(4000, 130000), `"pids_stats":{"current":12},`, "", 1))
	if st := state("pids"); st.State != "1" || !strings.Contains(st.Error, `cannot extract value from json by path "$.pids_stats.current"`) {
		t.Errorf("pids after a document without it: %+v", st)
	}
	if st := state("cpu.total"); st.State != "0" || st.Error != "" {
		t.Errorf("cpu.total: %+v", st)
	}
	check("cpu.total", 3, "1000", "2500", "4000")
	send(1700000180, "stats", containerStats(5000, 190000))
	if st := state("pids"); st.State != "0" || st.Error != "" {
		t.Errorf("pids after a good document: %+v", st)
	}
	check("pids", 3, "12", "12", "12")
}

// TestPreprocessStateSurvivesServerRestart: a "change per second" item
// gets a value, the server stops and starts again on the same data
// directory, and the next value gives a rate at once (the step's
// previous value came back from the state file) instead of being
// discarded as a first value.
func TestPreprocessStateSurvivesServerRestart(t *testing.T) {
	cfg := testConfig(t, catalog.Spec{Hosts: []catalog.HostSpec{{Host: "h", Groups: []string{"G"}, Items: []catalog.ItemSpec{
		{Key: "bytes", Preprocessing: []catalog.PreprocSpec{{Type: "CHANGE_PER_SECOND", Parameters: []string{""}}}},
	}}}})
	push := func(s *Server, value, clock int) {
		t.Helper()
		var res struct{ Response string }
		adminLogin(t, s).ok("history.push", []map[string]any{{"host": "h", "key": "bytes", "value": value, "clock": clock}}, &res)
		if res.Response != "success" {
			t.Fatalf("history.push: %+v", res)
		}
	}
	s, stop := runServer(t, cfg)
	push(s, 1000, 1700000000)
	stop()
	if _, err := os.Stat(PreprocessStatePath(cfg.DataDir)); err != nil {
		t.Fatalf("no state file after the stop: %v", err)
	}
	s, _ = runServer(t, cfg)
	push(s, 4000, 1700000030)
	if got := s.readItem(t, "h", "bytes"); len(got) != 1 || got[0].F != 100 || got[0].Clock != 1700000030 {
		t.Fatalf("stored after the restart: %+v, want one value of 100 per second", got)
	}
}
