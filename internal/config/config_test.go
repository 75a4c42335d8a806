package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

func TestDefaultIsValid(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	if c.DataDir != "./data" || c.Trapper.Listen != ":10051" || c.HTTP.Listen != ":8080" {
		t.Fatalf("unexpected defaults: %+v", c)
	}
}

func TestGoodFiles(t *testing.T) {
	full, err := Load("testdata/full.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		DataDir: "/var/lib/peregrine",
		Log:     LogConfig{Level: "debug", Format: "json"},
		Trapper: TrapperConfig{
			Listen: "127.0.0.1:10051", MaxConnections: 100, MaxFrameSize: 64 << 20,
			MaxBufferedBytes: 1 << 30, Timeout: Duration(10 * time.Second), IdleTimeout: Duration(time.Minute),
		},
		HTTP: HTTPConfig{Listen: "127.0.0.1:8080", Pprof: true, TLSCertFile: "testdata/full.good.yaml", TLSKeyFile: "testdata/full.good.yaml",
			HSTSMaxAge: Duration(24 * time.Hour), MetricsAllow: []string{"10.1.0.0/16", "192.0.2.7", "fd00::/8"}, MetricsTokenFile: "testdata/full.good.yaml"},
		Pipeline:   PipelineConfig{Shards: 4, QueueValues: 65536, MaxBatch: 8192},
		JavaScript: JavaScriptConfig{Workers: 6, MemoryLimit: 256 << 20},
		History: HistoryConfig{Store: "memory", Fsync: "interval", FsyncInterval: Duration(50 * time.Millisecond),
			FlushInterval: Duration(30 * time.Minute), MaxHeadValues: 20_000_000, RetentionCheck: Duration(10 * time.Minute),
			TimestampPrecision: "ms", MinFreeSpace: 1 << 30, ClickHouse: Default().History.ClickHouse},
		Events:   EventsConfig{Fsync: "interval", FsyncInterval: Duration(20 * time.Millisecond), Retention: "90d"},
		Audit:    AuditConfig{Fsync: "interval", FsyncInterval: Duration(30 * time.Millisecond), Retention: "0", MaxRecords: 5000},
		Triggers: TriggersConfig{TimerInterval: Duration(10 * time.Second), MaxPending: 200_000, ValueCacheSize: 512 << 20, ValueCacheMaxPeriod: Duration(2 * time.Hour)},
		Alerts: AlertsConfig{Fsync: "interval", FsyncInterval: Duration(100 * time.Millisecond), QueueSize: 500, RateLimit: 0, MaxSessions: 100,
			KeepAlerts: 100_000, InboxSize: 1_000_000, ScriptsDir: "/usr/lib/zabbix/alertscripts", WebhookMaxBody: 1 << 20, MinStepDuration: Duration(time.Second),
			CommandTimeout: Duration(10 * time.Second), EnableGlobalScripts: false},
		API: APIConfig{MaxBodySize: 16 << 20, MaxRows: 10_000_000, MaxBatchCalls: 50, Timeout: Duration(60 * time.Second)},
		Poll: PollConfig{MaxInFlight: 20000, AgentMaxInFlight: 5000, MaxInFlightBehind: 2000, ConnectTimeout: Duration(time.Second), DefaultTimeout: Duration(5 * time.Second),
			MaxReplySize: 256 << 10, UnreachablePeriod: Duration(30 * time.Second), UnreachableDelay: Duration(5 * time.Second), UnavailableDelay: Duration(2 * time.Minute),
			TimestampTolerance: Duration(5 * time.Millisecond), SimpleMaxInFlight: 3000, ICMPRate: 2000, ICMPSocket: "dgram",
			HTTPMaxInFlight: 4000, HTTPMaxBodySize: 4 << 20, HTTPMaxHeaderSize: 64 << 10, HTTPMaxConnsPerHost: 8,
			IPMIMaxSessionsPerBMC: 2, IPMIIdleClose: Duration(10 * time.Minute),
			ExternalScripts: []string{"/opt/plugins", "/usr/lib/nagios/plugins"}, ExternalMaxProcesses: 16, ExternalMaxOutput: 128 << 10,
			SSHKeyLocation: "/var/lib/zabbix/.ssh", SSHKnownHosts: "/etc/peregrine/known_hosts", CommandMaxOutput: 256 << 10},
		SNMP: SNMPConfig{MaxInFlight: 1000, MaxOIDsPerRequest: 32, MaxRepetitions: 20, MaxWalkValues: 5000,
			IdleClose: Duration(time.Minute), TrapListen: "127.0.0.1:1162"},
		JMX:   JMXConfig{Gateway: "127.0.0.1", GatewayPort: 10062, MaxConnections: 10, MaxKeysPerRequest: 16, MaxReplySize: 4 << 20, MaxInFlight: 2000},
		ODBC:  ODBCConfig{SysIniDir: "/etc", Workers: 4, MaxConnsPerSource: 2, IdleTimeout: Duration(5 * time.Minute), MaxValueSize: 4 << 20, MaxInFlight: 500},
		Proxy: ProxyConfig{ConfigFrequency: Duration(time.Minute), DataFrequency: Duration(2 * time.Second)},
		State: defaultState(),
		HA:    defaultHA(),
	}
	if d := cmp.Diff(want, full); d != "" {
		t.Fatalf("full.good.yaml (-want +got):\n%s", d)
	}
	empty, err := Load("testdata/empty.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(Default(), empty); d != "" {
		t.Fatalf("empty file must equal the defaults (-want +got):\n%s", d)
	}
}

func TestBadFiles(t *testing.T) {
	expected := map[string]string{
		"unknown_field.bad.yaml":       "field listn not found",
		"bad_size.bad.yaml":            `"12 parsecs" is not a size`,
		"bad_duration.bad.yaml":        `"soon" is not a duration`,
		"bad_listen.bad.yaml":          "trapper.listen",
		"bad_shards.bad.yaml":          "pipeline.shards",
		"bad_store.bad.yaml":           "history.store",
		"bad_precision.bad.yaml":       "history.timestamp_precision",
		"bad_events.bad.yaml":          "events.retention: must be between 1d",
		"bad_audit.bad.yaml":           "audit.retention: must be 0 (keep everything) or between 1d",
		"bad_triggers.bad.yaml":        "triggers.timer_interval: must be between 1s and 1h",
		"bad_alerts.bad.yaml":          "alerts.queue_size: must be between 1 and 10000000, not 0",
		"bad_command_timeout.bad.yaml": "alerts.command_timeout: must be between 1s and 10m, not 1h0m0s",
		"bad_value_cache.bad.yaml":     "triggers.value_cache_size: must be between 1MiB and 64GiB",
		"bad_level.bad.yaml":           "log.level",
		"bad_batch.bad.yaml":           "api.max_batch_calls",
		"bad_buffered.bad.yaml":        "trapper.max_buffered_bytes: must be at least twice",
		"frame_too_big.bad.yaml":       "trapper.max_frame_size",
		"wrong_shape.bad.yaml":         "cannot unmarshal",
		"bad_poll.bad.yaml":            "poll.agent_max_in_flight: must be between 0",
		"bad_poll_behind.bad.yaml":     "poll.max_in_flight_behind: must be between 0",
		"bad_snmp.bad.yaml":            "snmp.max_oids_per_request: must be between 1 and 128",
		"bad_jmx.bad.yaml":             "jmx.gateway: must be the Java gateway's IP address or DNS name, without a port",
		"bad_odbc.bad.yaml":            "odbc.ini: \"odbc.ini\" must be an absolute path",
		"bad_odbc_workers.bad.yaml":    "odbc.workers: must be between 1 and 1000",
		"bad_unreach.bad.yaml":         "poll.unreachable_delay: must be whole seconds",
		"bad_icmp.bad.yaml":            "poll.icmp_socket: must be auto, raw or dgram",
		"bad_http_body.bad.yaml":       "poll.http_max_body_size: must be between 1KiB and 1GiB",
		"bad_external.bad.yaml":        `poll.external_scripts: "plugins" must be an absolute path`,
		"bad_ssh_keys.bad.yaml":        `poll.ssh_key_location: ".ssh" must be an absolute path`,
		"bad_command_output.bad.yaml":  "poll.command_max_output: must be between 4KiB and 64MiB",
		"bad_tls_partial.bad.yaml":     "tls.key_file: must be set",
		"bad_tls_crl.bad.yaml":         "tls.crl_file: needs tls.ca_file",
		"bad_tls_missing.bad.yaml":     "tls.ca_file: cannot be read",
		"bad_https_partial.bad.yaml":   "http.tls_cert_file: and http.tls_key_file must be set together",
		"bad_hsts.bad.yaml":            "http.hsts_max_age: must be between",
		"bad_metrics_allow.bad.yaml":   "http.metrics_allow[1]: must be a network",
		"bad_metrics_token.bad.yaml":   "http.metrics_token_file: cannot be read",
		"bad_clickhouse_url.bad.yaml":  `history.clickhouse.urls: "ftp://u@127.0.0.1:8123/" is not`,
		"bad_javascript.bad.yaml":      "javascript.memory_limit: must be between 16MiB and 64GiB",
		"bad_proxy.bad.yaml":           "proxy.data_frequency: must be between 1s and 1h",
	}
	files, err := filepath.Glob("testdata/*.bad.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(expected) {
		t.Fatalf("%d bad files on disk, %d expectations", len(files), len(expected))
	}
	for _, f := range files {
		want, ok := expected[filepath.Base(f)]
		if !ok {
			t.Fatalf("no expectation for %s", f)
		}
		_, err := Load(f)
		if err == nil {
			t.Errorf("%s: expected an error containing %q, got none", f, want)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q does not contain %q", f, err, want)
		}
		if !strings.Contains(err.Error(), f) {
			t.Errorf("%s: error %q does not name the file", f, err)
		}
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !os.IsNotExist(errorsUnwrapAll(err)) {
		t.Fatalf("want a not-exist error, got %v", err)
	}
}

func errorsUnwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func TestParseByteSize(t *testing.T) {
	f := func(in string, want int64, ok bool) {
		t.Helper()
		got, err := ParseByteSize(in)
		if (err == nil) != ok || got != want {
			t.Fatalf("ParseByteSize(%q) = %d, %v; want %d, ok=%v", in, got, err, want, ok)
		}
	}
	f("1024", 1024, true)
	f("64KiB", 64<<10, true)
	f("128MiB", 128<<20, true)
	f("1GiB", 1<<30, true)
	f("2 MB", 2<<20, true)
	f("-1", 0, false)
	f("lots", 0, false)
	f("99999999999GiB", 0, false)
}

func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/full.good.yaml", "testdata/unknown_field.bad.yaml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err == nil {
			if verr := c.Validate(); verr != nil {
				t.Fatalf("Parse accepted a config that does not validate: %v", verr)
			}
		}
	})
}

// The documented example must stay equal to the defaults.
func TestExampleFileIsDefaults(t *testing.T) {
	c, err := Load("../../docs/peregrine.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(Default(), c); d != "" {
		t.Fatalf("docs/peregrine.example.yaml differs from Default() (-default +file):\n%s", d)
	}
}

// TestEveryFieldDocumented checks that docs/configuration.md names every
// YAML field of Config by its full path, so that a new field cannot ship
// undocumented.
func TestEveryFieldDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			if f.Type.Kind() == reflect.Struct {
				walk(prefix+name+".", f.Type)
				continue
			}
			paths = append(paths, prefix+name)
		}
	}
	walk("", reflect.TypeOf(Config{}))
	if len(paths) < 20 {
		t.Fatalf("found only %d fields: %v", len(paths), paths)
	}
	for _, p := range paths {
		if !strings.Contains(string(doc), "| `"+p+"` |") {
			t.Errorf("docs/configuration.md has no table row for %s", p)
		}
	}
}

// TestTLSSection: the three files together (and a CRL) are valid.
func TestTLSSection(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, n := range []string{"ca.crt", "server.crt", "server.key", "ca.crl"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	c, err := Parse([]byte("tls:\n  ca_file: " + paths[0] + "\n  cert_file: " + paths[1] + "\n  key_file: " + paths[2] + "\n  crl_file: " + paths[3] + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (TLSConfig{CAFile: paths[0], CertFile: paths[1], KeyFile: paths[2], CRLFile: paths[3]}); c.TLS != want || !c.TLS.Enabled() {
		t.Fatalf("tls %+v, want %+v", c.TLS, want)
	}
	if d := Default(); d.TLS.Enabled() {
		t.Fatal("TLS enabled by default")
	}
}

// yamlPaths returns the YAML path of every setting of typ ("trapper.listen",
// "history.clickhouse.tls.ca_file"), and separately the fields of list
// elements, such as snmp.trap_users' "securityname", keyed by the list's
// path.
func yamlPaths(prefix string, typ reflect.Type, elems map[string][]string) []string {
	var out []string
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		switch {
		case f.Type.Kind() == reflect.Struct:
			out = append(out, yamlPaths(prefix+name+".", f.Type, elems)...)
			continue
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			elems[prefix+name] = yamlPaths("", f.Type.Elem(), map[string][]string{})
		}
		out = append(out, prefix+name)
	}
	return out
}

// yamlKeys returns the path of every key set in the YAML mapping n (lists
// are not entered), and whether each has a comment of its own.
func yamlKeys(prefix string, n *yaml.Node, out map[string]bool) {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		yamlKeys(prefix, n.Content[0], out)
		return
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		path := prefix + k.Value
		out[path] = k.HeadComment != "" || k.LineComment != "" || v.LineComment != ""
		yamlKeys(path+".", v, out)
	}
}

// TestExampleListsEverySetting checks that docs/peregrine.example.yaml sets
// every field of Config by its YAML path, each with a comment, describes the
// fields of list elements, and loads and validates with the real loader (its
// values are the defaults: TestExampleFileIsDefaults).
func TestExampleListsEverySetting(t *testing.T) {
	const path = "../../docs/peregrine.example.yaml"
	if _, err := Load(path); err != nil {
		t.Fatalf("%s does not load: %v", path, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	yamlKeys("", &doc, have)
	elems := map[string][]string{}
	want := yamlPaths("", reflect.TypeOf(Config{}), elems)
	if len(want) < 80 {
		t.Fatalf("found only %d settings in Config: %v", len(want), want)
	}
	var missing, uncommented []string
	for _, p := range want {
		commented, ok := have[p]
		switch {
		case !ok:
			missing = append(missing, p)
		case !commented:
			uncommented = append(uncommented, p)
		}
	}
	for list, fields := range elems {
		for _, f := range fields {
			if !strings.Contains(string(b), " "+f+":") {
				missing = append(missing, list+"[]."+f+" (in a commented example entry)")
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("%s does not set %d settings; add each with its default and a comment:\n  %s", path, len(missing), strings.Join(missing, "\n  "))
	}
	if len(uncommented) > 0 {
		t.Errorf("%s has settings without a comment saying what they are:\n  %s", path, strings.Join(uncommented, "\n  "))
	}
}
