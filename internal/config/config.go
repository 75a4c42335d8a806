package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
)

// Config is the whole server configuration. The YAML field names are the
// documented ones: docs/configuration.md describes every field, its
// default (Default) and its valid range (Validate); keep it in step.
type Config struct {
	// DataDir holds the catalog and auth databases, the history files and
	// the first admin password; the server keeps it owner-only.
	DataDir  string         `yaml:"data_dir"`
	Log      LogConfig      `yaml:"log"`
	Trapper  TrapperConfig  `yaml:"trapper"`
	HTTP     HTTPConfig     `yaml:"http"`
	Pipeline PipelineConfig `yaml:"pipeline"`
	// JavaScript bounds the scripts users write: preprocessing steps and
	// webhooks.
	JavaScript JavaScriptConfig `yaml:"javascript"`
	History    HistoryConfig    `yaml:"history"`
	Events     EventsConfig     `yaml:"events"`
	Audit      AuditConfig      `yaml:"audit"`
	Triggers   TriggersConfig   `yaml:"triggers"`
	Alerts     AlertsConfig     `yaml:"alerts"`
	API        APIConfig        `yaml:"api"`
	Poll       PollConfig       `yaml:"poll"`
	SNMP       SNMPConfig       `yaml:"snmp"`
	JMX        JMXConfig        `yaml:"jmx"`
	ODBC       ODBCConfig       `yaml:"odbc"`
	TLS        TLSConfig        `yaml:"tls"`
	Proxy      ProxyConfig      `yaml:"proxy"`
	// State is where the server's state lives (embedded or PostgreSQL).
	State StateConfig `yaml:"state"`
	// HA makes the server a node of a high-availability cluster.
	HA HAConfig `yaml:"ha"`
}

// TLSConfig is the server's certificate material for encrypted agent
// and sender connections, Zabbix's TLSCAFile, TLSCertFile, TLSKeyFile
// and TLSCRLFile: all of ca_file, cert_file and key_file, or none (then
// only unencrypted connections are possible). Restart to change.
type TLSConfig struct {
	CAFile   string `yaml:"ca_file"`
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	CRLFile  string `yaml:"crl_file"`
}

// Enabled reports whether certificates are configured.
func (t *TLSConfig) Enabled() bool { return t.CAFile != "" }

func (t *TLSConfig) validate() error {
	if t.CAFile == "" && t.CertFile == "" && t.KeyFile == "" {
		if t.CRLFile != "" {
			return fieldErr("tls.crl_file", "needs tls.ca_file, tls.cert_file and tls.key_file")
		}
		return nil
	}
	for _, f := range []struct{ name, path string }{
		{"tls.ca_file", t.CAFile}, {"tls.cert_file", t.CertFile}, {"tls.key_file", t.KeyFile}, {"tls.crl_file", t.CRLFile},
	} {
		if f.path == "" {
			if f.name == "tls.crl_file" {
				continue
			}
			return fieldErr(f.name, "must be set: certificates need all of tls.ca_file, tls.cert_file and tls.key_file")
		}
		if _, err := os.Stat(f.path); err != nil {
			return fieldErr(f.name, "cannot be read: %v", err)
		}
	}
	return nil
}

// PollConfig configures the check scheduler and its checkers
// (internal/poll: passive agent, ICMP, TCP service, HTTP agent). The availability fields are Zabbix's
// UnreachablePeriod, UnreachableDelay and UnavailableDelay.
type PollConfig struct {
	// MaxInFlight bounds the checks of all types in flight together,
	// from hand-over to a checker until the result is stored.
	MaxInFlight int `yaml:"max_in_flight"`
	// AgentMaxInFlight bounds passive agent checks in flight; 0 leaves
	// only max_in_flight.
	AgentMaxInFlight int `yaml:"agent_max_in_flight"`
	// MaxInFlightBehind bounds the checks in flight while the server
	// is behind (short of CPU); 0: adaptive (poll.Options).
	MaxInFlightBehind int `yaml:"max_in_flight_behind"`
	// ConnectTimeout bounds connecting to an agent.
	ConnectTimeout Duration `yaml:"connect_timeout"`
	// DefaultTimeout is a check's timeout when its item sets none.
	DefaultTimeout Duration `yaml:"default_timeout"`
	// MaxReplySize bounds one agent reply.
	MaxReplySize ByteSize `yaml:"max_reply_size"`
	// UnreachablePeriod is how long an interface may fail before it is
	// unavailable; UnreachableDelay is the wait between probes until
	// then, UnavailableDelay the wait between probes after.
	UnreachablePeriod Duration `yaml:"unreachable_period"`
	UnreachableDelay  Duration `yaml:"unreachable_delay"`
	UnavailableDelay  Duration `yaml:"unavailable_delay"`
	// TimestampTolerance: a polled value received within this of its
	// scheduled time is stamped at that time (history.SnapStamp), so a
	// regular series costs next to nothing for its timestamps; 0 stamps
	// every value with its receive time.
	TimestampTolerance Duration `yaml:"timestamp_tolerance"`
	// SimpleMaxInFlight bounds simple checks (ICMP, TCP service) in
	// flight; 0 leaves only max_in_flight.
	SimpleMaxInFlight int `yaml:"simple_max_in_flight"`
	// ICMPRate bounds the ICMP echo requests sent per second.
	ICMPRate int `yaml:"icmp_rate"`
	// ICMPSocket is "auto" (raw if permitted, else datagram ICMP),
	// "raw" or "dgram".
	ICMPSocket string `yaml:"icmp_socket"`
	// HTTPMaxInFlight bounds HTTP agent checks in flight; 0 leaves only
	// max_in_flight.
	HTTPMaxInFlight int `yaml:"http_max_in_flight"`
	// HTTPMaxBodySize bounds one HTTP agent response body; a larger one
	// makes the item not supported.
	HTTPMaxBodySize ByteSize `yaml:"http_max_body_size"`
	// HTTPMaxHeaderSize bounds one HTTP agent response's headers.
	HTTPMaxHeaderSize ByteSize `yaml:"http_max_header_size"`
	// HTTPMaxConnsPerHost bounds the HTTP agent's connections to one
	// host (kept alive and reused between checks).
	HTTPMaxConnsPerHost int `yaml:"http_max_conns_per_host"`
	// IPMIMaxInFlight bounds IPMI checks in flight (Zabbix's
	// StartIPMIPollers: each of its pollers has one request out); 0
	// leaves only max_in_flight.
	IPMIMaxInFlight int `yaml:"ipmi_max_in_flight"`
	// IPMIMaxSessionsPerBMC bounds the IPMI sessions open to one BMC
	// (address and credentials), so the requests it answers at once.
	IPMIMaxSessionsPerBMC int `yaml:"ipmi_max_sessions_per_bmc"`
	// IPMIIdleClose closes an IPMI session unused this long (sessions
	// are kept between checks, as Zabbix keeps them).
	IPMIIdleClose Duration `yaml:"ipmi_idle_close"`
	// ExternalScripts are the directories external checks and nagios[]
	// plugins are run from, searched in order (Zabbix's
	// ExternalScripts, plus Debian's Nagios plugin directory).
	ExternalScripts []string `yaml:"external_scripts"`
	// ExternalMaxProcesses bounds the external check processes running
	// at once; further checks wait for a slot.
	ExternalMaxProcesses int `yaml:"external_max_processes"`
	// ExternalMaxOutput bounds what is read of one process's output; a
	// process writing more is killed and its item not supported.
	ExternalMaxOutput ByteSize `yaml:"external_max_output"`
	// SSHKeyLocation is the directory where SSH items' publickey and
	// privatekey files are found (Zabbix's SSHKeyLocation); "" (the
	// default, as in Zabbix) makes public-key items not supported.
	SSHKeyLocation string `yaml:"ssh_key_location"`
	// SSHKnownHosts, if set, is an OpenSSH known_hosts file: SSH checks
	// then refuse a server whose host key it does not list. "" (the
	// default) accepts any host key, as Zabbix 6.0 does.
	SSHKnownHosts string `yaml:"ssh_known_hosts"`
	// CommandMaxOutput bounds the output of one SSH or Telnet item's
	// command; more makes the item not supported.
	CommandMaxOutput ByteSize `yaml:"command_max_output"`
}

// APIConfig bounds the JSON-RPC API at /api_jsonrpc.php on the HTTP port.
type APIConfig struct {
	MaxBodySize ByteSize `yaml:"max_body_size"`
	// MaxRows bounds the rows of one history.get; beyond it the caller
	// gets an error asking for a limit or a narrower range.
	MaxRows int `yaml:"max_rows"`
	// MaxBatchCalls bounds the calls of one JSON-RPC batch; a longer
	// batch is refused whole. Responses stream, so this bounds the work
	// one request asks for, not memory.
	MaxBatchCalls int      `yaml:"max_batch_calls"`
	Timeout       Duration `yaml:"timeout"`
	// MaxConcurrentCalls bounds the API calls running at once (0: 8 per
	// CPU, at least 16); MaxWaitingCallsPerUser bounds one user's calls
	// waiting for a slot (0: 256), beyond which a call is refused at
	// once. Freed slots go to the waiting user with the fewest calls
	// running, so one user's flood does not starve the others.
	MaxConcurrentCalls     int `yaml:"max_concurrent_calls"`
	MaxWaitingCallsPerUser int `yaml:"max_waiting_calls_per_user"`
}

// LogConfig selects the log level and format.
type LogConfig struct {
	Level  string `yaml:"level"`  // debug, info, warn, error
	Format string `yaml:"format"` // text or json
}

// TrapperConfig configures the Zabbix trapper listener (sender data and,
// later, active agents).
type TrapperConfig struct {
	Listen string `yaml:"listen"`
	// MaxConnections bounds concurrently served connections; further
	// connections wait in the kernel's accept queue.
	MaxConnections int `yaml:"max_connections"`
	// MaxFrameSize bounds one frame's payload (compressed and inflated).
	MaxFrameSize ByteSize `yaml:"max_frame_size"`
	// MaxBufferedBytes bounds the memory all connections hold together
	// for their requests, taken as bytes arrive; a request that does not
	// fit waits for room, and one connection holds at most 7/8 of it
	// (see internal/ingest).
	MaxBufferedBytes ByteSize `yaml:"max_buffered_bytes"`
	// Timeout bounds reading one frame and writing one reply; a client
	// slower than this is disconnected.
	Timeout Duration `yaml:"timeout"`
	// IdleTimeout bounds the wait for a further frame on a connection that
	// already sent one (zabbix_sender closes after the reply; persistent
	// clients may send more).
	IdleTimeout Duration `yaml:"idle_timeout"`
}

// HTTPConfig configures the HTTP listener: the web UI at /, the
// JSON-RPC API, /metrics and /healthz.
type HTTPConfig struct {
	Listen string `yaml:"listen"`
	// TLSCertFile and TLSKeyFile (PEM), both or neither, make the port
	// serve HTTPS only; the UI then sends Strict-Transport-Security and
	// marks its session cookie Secure. Restart to change.
	TLSCertFile string `yaml:"tls_cert_file"`
	TLSKeyFile  string `yaml:"tls_key_file"`
	// HSTSMaxAge is the max-age of Strict-Transport-Security under HTTPS.
	HSTSMaxAge Duration `yaml:"hsts_max_age"`
	// UI serves the web UI at /; false leaves the port to the API and
	// metrics.
	UI bool `yaml:"ui"`
	// Pprof serves Go's profiler at /debug/pprof/. Off by default: it
	// exposes internals and can cost CPU, so an operator turns it on to
	// investigate.
	Pprof bool `yaml:"pprof"`
	// MetricsAllow are the client networks (CIDR, or single addresses)
	// served /metrics without a token: by default the loopback only, as
	// exporters do; [] serves it to token holders only.
	MetricsAllow []string `yaml:"metrics_allow"`
	// MetricsTokenFile holds a bearer token: a request with
	// "Authorization: Bearer <token>" is served /metrics from any
	// address. Empty: no token. Read at start.
	MetricsTokenFile string `yaml:"metrics_token_file"`
}

// MetricsNetworks returns MetricsAllow parsed (valid after Validate).
func (h HTTPConfig) MetricsNetworks() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(h.MetricsAllow))
	for _, s := range h.MetricsAllow {
		if p, err := parseNetwork(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// parseNetwork reads a CIDR ("10.0.0.0/8") or a single address.
func parseNetwork(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// PipelineConfig configures the sharded value pipeline.
type PipelineConfig struct {
	// Shards is the number of pipeline shards; 0 means one per CPU.
	Shards int `yaml:"shards"`
	// QueueValues bounds the values waiting in one shard; senders block
	// (back-pressure) while a shard's queue is full.
	QueueValues int `yaml:"queue_values"`
	// MaxBatch is the most values a shard hands to the store at once.
	MaxBatch int `yaml:"max_batch"`
}

// JavaScriptConfig configures the worker processes that run users'
// scripts (JavaScript preprocessing steps and webhook media types), so
// that a script that loops or allocates costs only its own item or
// alert. Restart to change.
type JavaScriptConfig struct {
	// Workers bounds the scripts of each kind (preprocessing, webhooks)
	// that run at once, each in a worker process; 0 means twice the
	// CPUs, at least 4. A script waits for a free worker of its kind
	// when all run.
	Workers int `yaml:"workers"`
	// MemoryLimit bounds how far one script may grow its heap (Zabbix's
	// limit, 512MiB by default); past it the script fails, its item
	// becomes not supported or its alert attempt fails.
	MemoryLimit ByteSize `yaml:"memory_limit"`
}

// HistoryConfig selects and tunes the history backend.
type HistoryConfig struct {
	// Store is "engine" (the embedded store under data_dir/history),
	// "clickhouse" (ClickHouse servers, with a spool under
	// data_dir/clickhouse-spool) or "memory" (nothing survives a restart;
	// for tests and benchmarks).
	Store string `yaml:"store"`
	// Fsync is the WAL policy and so what an acknowledgement means:
	// "batch" (default) acknowledges a value only after the fsync of the
	// group commit that holds it; "interval" acknowledges after write(2)
	// and fsyncs every fsync_interval (a power loss may lose that much,
	// a process crash loses nothing).
	Fsync         string   `yaml:"fsync"`
	FsyncInterval Duration `yaml:"fsync_interval"`
	// FlushInterval and MaxHeadValues say when the head is written into
	// block files (whichever comes first); they bound the head's memory
	// and the WAL replayed after a crash.
	FlushInterval Duration `yaml:"flush_interval"`
	MaxHeadValues int64    `yaml:"max_head_values"`
	// RetentionCheck is how often the housekeeper drops partitions older
	// than the longest item retention and compacts finished days.
	RetentionCheck Duration `yaml:"retention_check"`
	// TimestampPrecision is how finely the engine keeps timestamps: "ns"
	// (default: exact, as Zabbix keeps them), "us", "ms" or "s". Coarser
	// is smaller on disk; two values of one item that differ only below
	// the precision keep the later one (docs/configuration.md).
	TimestampPrecision string `yaml:"timestamp_precision"`
	// MinFreeSpace: while the file system of data_dir has less free
	// space than this, values are refused (senders are told, /healthz
	// reports not ready) before anything is written, so that a disk
	// never fills in the middle of a write and the rest of the data
	// directory keeps a reserve. 0 disables the check.
	MinFreeSpace ByteSize `yaml:"min_free_space"`
	// ClickHouse configures history.store: clickhouse.
	ClickHouse ClickHouseConfig `yaml:"clickhouse"`
}

// ClickHouseConfig is the ClickHouse history backend's connection and
// shipping. The spool's fsync policy is history.fsync.
type ClickHouseConfig struct {
	// URLs are HTTP(S) endpoints of equivalent servers: a request that
	// cannot reach one tries the next.
	URLs     []string `yaml:"urls"`
	Database string   `yaml:"database"`
	User     string   `yaml:"user"`
	// Password is sent in HTTP Basic auth and never logged.
	Password string `yaml:"password"`
	// TLS for https:// URLs: a CA to trust instead of the system's, and a
	// client certificate when the server asks for one.
	TLS ClickHouseTLS `yaml:"tls"`
	// BatchSize is the most rows per INSERT, and shipping starts early
	// once that many values wait.
	BatchSize int `yaml:"batch_size"`
	// FlushInterval is the longest a value waits in the spool before its
	// insert starts.
	FlushInterval Duration `yaml:"flush_interval"`
	// SpoolLimit is the most acknowledged values waiting for ClickHouse;
	// beyond it Write fails and senders are told so.
	SpoolLimit int64 `yaml:"spool_limit"`
	// QueryTimeout bounds one HTTP request.
	QueryTimeout Duration `yaml:"query_timeout"`
	// Cluster names a cluster of the servers' remote_servers: URLs are
	// then its shards in order, and reads go through Distributed tables.
	Cluster string `yaml:"cluster"`
	// DirectWrites sends each item's rows to its shard's local table
	// instead of through the Distributed table.
	DirectWrites bool `yaml:"direct_writes"`
	// Ack is when a value is acknowledged to its sender, agent or
	// proxy: "spooled" (once in the spool on this node's disk; shipped
	// later) or "inserted" (only once ClickHouse accepted its insert,
	// group-committed with the values that arrived meanwhile; on a
	// failed insert the batch is answered failed). Empty: "inserted"
	// with state.store: postgres, "spooled" otherwise. A cluster node
	// (ha.node_name) must use "inserted": its disk may be gone after a
	// failover.
	Ack string `yaml:"ack"`
	// AckTimeout bounds how long an "inserted" acknowledgement waits
	// for its insert; past it the batch is answered failed.
	AckTimeout Duration `yaml:"ack_timeout"`
}

// ClickHouseTLS is the client side of https:// ClickHouse URLs.
type ClickHouseTLS struct {
	CAFile   string `yaml:"ca_file"`
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// EventsConfig configures the event store (data_dir/events): trigger
// events, acknowledge actions and trigger runtime. Restart to change.
type EventsConfig struct {
	// Fsync and FsyncInterval are the event log's policy, with the
	// meaning of history.fsync: "batch" makes an event durable before
	// it counts as made, "interval" fsyncs every fsync_interval.
	Fsync         string   `yaml:"fsync"`
	FsyncInterval Duration `yaml:"fsync_interval"`
	// Retention is how long events are kept, a Zabbix time value
	// ("365d", Zabbix's default); whole days older than it are deleted.
	Retention string `yaml:"retention"`
}

// AuditConfig configures the audit log (data_dir/audit): what the API
// changed, who changed it and from where, read by auditlog.get.
// Restart to change.
type AuditConfig struct {
	// Fsync and FsyncInterval are the log's policy, with the meaning of
	// events.fsync: "batch" makes a record durable before the API call
	// that made it is answered.
	Fsync         string   `yaml:"fsync"`
	FsyncInterval Duration `yaml:"fsync_interval"`
	// Retention is how long records are kept, a Zabbix time value
	// ("365d", Zabbix's hk_audit default; "0" keeps them all); whole
	// days older than it are deleted.
	Retention string `yaml:"retention"`
	// MaxRecords bounds the records kept in memory for auditlog.get,
	// the oldest dropped first.
	MaxRecords int `yaml:"max_records"`
}

// RetentionSeconds is Retention parsed (valid after Validate).
func (a AuditConfig) RetentionSeconds() int64 {
	v, _ := delay.ParseSeconds(a.Retention)
	return v
}

// TriggersConfig configures trigger evaluation. Restart to change.
type TriggersConfig struct {
	// TimerInterval is how often triggers with time-based functions
	// (nodata, date and time, trends) are evaluated without new values;
	// Zabbix's timer process runs every 30 s.
	TimerInterval Duration `yaml:"timer_interval"`
	// MaxPending bounds the trigger evaluations queued in each
	// evaluation shard after their items' values were committed (one
	// per value and trigger, one per distinct timestamp at the pass);
	// past it the shard keeps only each trigger's span of times and
	// re-reads its values from the history store, so nothing is lost
	// and ingest is not slowed.
	MaxPending int `yaml:"max_pending"`
	// EvalShards is the number of evaluation goroutines, each owning the
	// triggers whose id modulo EvalShards is its index; 0: GOMAXPROCS.
	EvalShards int `yaml:"eval_shards"`
	// ValueCacheSize bounds the value cache (recent values of the items
	// trigger functions and calculated items read); past it the items
	// read least recently are evicted. Zabbix's ValueCacheSize.
	ValueCacheSize ByteSize `yaml:"value_cache_size"`
	// ValueCacheMaxPeriod is the longest function period the value cache
	// keeps; longer ones (avg(/h/k,1d)) read the history store.
	ValueCacheMaxPeriod Duration `yaml:"value_cache_max_period"`
}

// AlertsConfig configures notifications (package alert): the alert log
// under data_dir/alerts and the delivery bounds. Restart to change.
type AlertsConfig struct {
	// Fsync and FsyncInterval are the alert log's policy, as events'.
	Fsync         string   `yaml:"fsync"`
	FsyncInterval Duration `yaml:"fsync_interval"`
	// QueueSize bounds the alerts waiting per media type; while it is
	// full, escalation steps that would add to it wait (back-pressure:
	// a flood never grows memory without bound and loses nothing).
	QueueSize int `yaml:"queue_size"`
	// RateLimit bounds the sends started per second per media type; 0
	// is unlimited.
	RateLimit float64 `yaml:"rate_limit"`
	// MaxSessions is the concurrency of a media type whose maxsessions
	// is 0 (Zabbix: unlimited).
	MaxSessions int `yaml:"max_sessions"`
	// KeepAlerts bounds the finished alerts kept for alert.get.
	KeepAlerts int `yaml:"keep_alerts"`
	// InboxSize bounds the events waiting to be matched to actions.
	InboxSize int `yaml:"inbox_size"`
	// ScriptsDir holds the programs of script media types (Zabbix's
	// AlertScriptsPath); "" disables script media types.
	ScriptsDir string `yaml:"scripts_dir"`
	// WebhookMaxBody bounds a response body a webhook reads.
	WebhookMaxBody ByteSize `yaml:"webhook_max_body"`
	// MinStepDuration is the shortest esc_period the API accepts
	// (Zabbix: 60s); tests and demonstrations may lower it.
	MinStepDuration Duration `yaml:"min_step_duration"`
	// CommandTimeout bounds one remote command or script.execute.
	CommandTimeout Duration `yaml:"command_timeout"`
	// EnableGlobalScripts lets global scripts run on the server (actions'
	// remote commands and script.execute with execute_on 1 or 2); false
	// refuses them there. Agent execution is the agent's own choice
	// (AllowKey=system.run[*]).
	EnableGlobalScripts bool `yaml:"enable_global_scripts"`
}

// RetentionSeconds is Retention parsed (valid after Validate).
func (e EventsConfig) RetentionSeconds() int64 {
	v, _ := delay.ParseSeconds(e.Retention)
	return v
}

// Default returns the configuration used when a field is not set.
func Default() Config {
	return Config{
		DataDir: "./data",
		Log:     LogConfig{Level: "info", Format: "text"},
		Trapper: TrapperConfig{
			Listen:           ":10051",
			MaxConnections:   4096,
			MaxFrameSize:     128 << 20,
			MaxBufferedBytes: 512 << 20,
			Timeout:          Duration(30 * time.Second),
			IdleTimeout:      Duration(30 * time.Second),
		},
		HTTP: HTTPConfig{Listen: ":8080", HSTSMaxAge: Duration(365 * 24 * time.Hour), UI: true,
			MetricsAllow: []string{"127.0.0.0/8", "::1/128"}},
		Pipeline: PipelineConfig{
			Shards:      0,
			QueueValues: 1 << 17,
			MaxBatch:    1 << 14,
		},
		JavaScript: JavaScriptConfig{MemoryLimit: 512 << 20},
		History: HistoryConfig{
			Store: "engine", Fsync: "batch", FsyncInterval: Duration(100 * time.Millisecond),
			FlushInterval: Duration(30 * time.Minute), MaxHeadValues: 20_000_000, RetentionCheck: Duration(10 * time.Minute),
			TimestampPrecision: "ns", MinFreeSpace: 256 << 20,
			ClickHouse: ClickHouseConfig{URLs: []string{"http://127.0.0.1:8123/"}, Database: "peregrine", User: "default",
				BatchSize: 100_000, FlushInterval: Duration(time.Second), SpoolLimit: 20_000_000, QueryTimeout: Duration(60 * time.Second),
				AckTimeout: Duration(10 * time.Second)},
		},
		Events: EventsConfig{Fsync: "batch", FsyncInterval: Duration(100 * time.Millisecond), Retention: "365d"},
		Audit:  AuditConfig{Fsync: "batch", FsyncInterval: Duration(100 * time.Millisecond), Retention: "365d", MaxRecords: 1_000_000},
		// 1M pending triggers cost ~40 MB at most and cover a storm over
		// every trigger of a large installation.
		Triggers: TriggersConfig{TimerInterval: Duration(30 * time.Second), MaxPending: 1 << 22, ValueCacheSize: 256 << 20, ValueCacheMaxPeriod: Duration(time.Hour)},
		Alerts: AlertsConfig{Fsync: "batch", FsyncInterval: Duration(100 * time.Millisecond), QueueSize: 10_000, RateLimit: 100,
			MaxSessions: 100, KeepAlerts: 100_000, InboxSize: 1_000_000, WebhookMaxBody: 1 << 20, MinStepDuration: Duration(time.Minute),
			CommandTimeout: Duration(30 * time.Second), EnableGlobalScripts: true},
		API: APIConfig{MaxBodySize: 16 << 20, MaxRows: 10_000_000, MaxBatchCalls: 1000, Timeout: Duration(60 * time.Second)},
		Poll: PollConfig{
			MaxInFlight: 10000, ConnectTimeout: Duration(3 * time.Second), DefaultTimeout: Duration(3 * time.Second),
			MaxReplySize: 1 << 20, UnreachablePeriod: Duration(45 * time.Second),
			UnreachableDelay: Duration(15 * time.Second), UnavailableDelay: Duration(60 * time.Second),
			TimestampTolerance: Duration(2 * time.Millisecond),
			ICMPRate:           10000, ICMPSocket: "auto",
			HTTPMaxBodySize: 16 << 20, HTTPMaxHeaderSize: 1 << 20, HTTPMaxConnsPerHost: 32,
			IPMIMaxSessionsPerBMC: 2, IPMIIdleClose: Duration(10 * time.Minute),
			ExternalScripts:      []string{"/usr/lib/zabbix/externalscripts", "/usr/lib/nagios/plugins"},
			ExternalMaxProcesses: 32, ExternalMaxOutput: 64 << 10,
			CommandMaxOutput: 512 << 10,
		},
		SNMP:  defaultSNMP(),
		JMX:   defaultJMX(),
		ODBC:  defaultODBC(),
		Proxy: defaultProxy(),
		State: defaultState(),
		HA:    defaultHA(),
	}
}

// Load reads the file at path over the defaults and validates the result.
// An empty path means "no file": the defaults alone.
func Load(path string) (Config, error) {
	if path == "" {
		c := Default()
		return c, c.Validate()
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("cannot read config file: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return Config{}, fmt.Errorf("config file %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes YAML over the defaults and validates the result. Unknown
// fields are errors, so a misspelt setting is not silently ignored.
func Parse(b []byte) (Config, error) {
	c := Default()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate checks the configuration after defaults were applied. The error
// names the first offending field.
func (c *Config) Validate() error {
	if strings.TrimSpace(c.DataDir) == "" {
		return fieldErr("data_dir", "must not be empty")
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		return fieldErr("log.level", "must be one of debug, info, warn, error, not %q", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		return fieldErr("log.format", "must be text or json, not %q", c.Log.Format)
	}
	if err := validAddr(c.Trapper.Listen); err != nil {
		return fieldErr("trapper.listen", "%v", err)
	}
	if c.Trapper.MaxConnections < 1 || c.Trapper.MaxConnections > 1<<20 {
		return fieldErr("trapper.max_connections", "must be between 1 and 1048576, not %d", c.Trapper.MaxConnections)
	}
	if c.Trapper.MaxFrameSize < 1024 || c.Trapper.MaxFrameSize > 1<<30 {
		return fieldErr("trapper.max_frame_size", "must be between 1KiB and 1GiB, not %d bytes", c.Trapper.MaxFrameSize)
	}
	// One connection may hold at most 7/8 of the budget (internal/ingest),
	// and decoding a frame needs more than the frame: below twice the
	// frame size, a maximum-size frame could never be served.
	if c.Trapper.MaxBufferedBytes < 2*c.Trapper.MaxFrameSize {
		return fieldErr("trapper.max_buffered_bytes", "must be at least twice trapper.max_frame_size (%d bytes), not %d: one connection may hold 7/8 of it, and decoding a frame needs more than the frame", 2*c.Trapper.MaxFrameSize, c.Trapper.MaxBufferedBytes)
	}
	if c.Trapper.Timeout < Duration(100*time.Millisecond) || c.Trapper.Timeout > Duration(time.Hour) {
		return fieldErr("trapper.timeout", "must be between 100ms and 1h, not %s", c.Trapper.Timeout)
	}
	if c.Trapper.IdleTimeout < Duration(100*time.Millisecond) || c.Trapper.IdleTimeout > Duration(time.Hour) {
		return fieldErr("trapper.idle_timeout", "must be between 100ms and 1h, not %s", c.Trapper.IdleTimeout)
	}
	if err := validAddr(c.HTTP.Listen); err != nil {
		return fieldErr("http.listen", "%v", err)
	}
	if (c.HTTP.TLSCertFile == "") != (c.HTTP.TLSKeyFile == "") {
		return fieldErr("http.tls_cert_file", "and http.tls_key_file must be set together (HTTPS needs both) or both left empty")
	}
	for _, f := range []struct{ name, path string }{{"http.tls_cert_file", c.HTTP.TLSCertFile}, {"http.tls_key_file", c.HTTP.TLSKeyFile}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			return fieldErr(f.name, "cannot be read: %v", err)
		}
	}
	if c.HTTP.HSTSMaxAge < 0 || c.HTTP.HSTSMaxAge > Duration(2*365*24*time.Hour) {
		return fieldErr("http.hsts_max_age", "must be between 0s and 2 years (17520h), not %s", c.HTTP.HSTSMaxAge)
	}
	for i, n := range c.HTTP.MetricsAllow {
		if _, err := parseNetwork(n); err != nil {
			return fieldErr(fmt.Sprintf("http.metrics_allow[%d]", i), "must be a network (127.0.0.0/8, ::1/128) or an address, not %q", n)
		}
	}
	if c.HTTP.MetricsTokenFile != "" {
		if _, err := os.Stat(c.HTTP.MetricsTokenFile); err != nil {
			return fieldErr("http.metrics_token_file", "cannot be read: %v", err)
		}
	}
	if c.Pipeline.Shards < 0 || c.Pipeline.Shards > 1024 {
		return fieldErr("pipeline.shards", "must be between 0 (one per CPU) and 1024, not %d", c.Pipeline.Shards)
	}
	if c.Pipeline.QueueValues < 1024 {
		return fieldErr("pipeline.queue_values", "must be at least 1024, not %d", c.Pipeline.QueueValues)
	}
	if c.Pipeline.MaxBatch < 1 || c.Pipeline.MaxBatch > c.Pipeline.QueueValues {
		return fieldErr("pipeline.max_batch", "must be between 1 and pipeline.queue_values (%d), not %d", c.Pipeline.QueueValues, c.Pipeline.MaxBatch)
	}
	if c.JavaScript.Workers < 0 || c.JavaScript.Workers > 1024 {
		return fieldErr("javascript.workers", "must be between 0 (twice the CPUs) and 1024, not %d", c.JavaScript.Workers)
	}
	if c.JavaScript.MemoryLimit < 16<<20 || c.JavaScript.MemoryLimit > 64<<30 {
		return fieldErr("javascript.memory_limit", "must be between 16MiB and 64GiB, not %d", c.JavaScript.MemoryLimit)
	}
	switch c.History.Store {
	case "engine", "memory":
	case "clickhouse":
		if err := c.History.ClickHouse.validate(); err != nil {
			return err
		}
	default:
		return fieldErr("history.store", "must be \"engine\", \"clickhouse\" or \"memory\", not %q", c.History.Store)
	}
	switch c.History.Fsync {
	case "batch", "interval":
	default:
		return fieldErr("history.fsync", "must be \"batch\" or \"interval\", not %q", c.History.Fsync)
	}
	if c.History.FsyncInterval < Duration(time.Millisecond) || c.History.FsyncInterval > Duration(time.Minute) {
		return fieldErr("history.fsync_interval", "must be between 1ms and 1m, not %s", c.History.FsyncInterval)
	}
	if c.History.FlushInterval < Duration(time.Second) || c.History.FlushInterval > Duration(24*time.Hour) {
		return fieldErr("history.flush_interval", "must be between 1s and 24h, not %s", c.History.FlushInterval)
	}
	if c.History.MaxHeadValues < 10_000 {
		return fieldErr("history.max_head_values", "must be at least 10000, not %d", c.History.MaxHeadValues)
	}
	if c.History.RetentionCheck < Duration(time.Second) || c.History.RetentionCheck > Duration(24*time.Hour) {
		return fieldErr("history.retention_check", "must be between 1s and 24h, not %s", c.History.RetentionCheck)
	}
	if c.History.MinFreeSpace < 0 {
		return fieldErr("history.min_free_space", "must be 0 (no check) or a size, not %d bytes", c.History.MinFreeSpace)
	}
	switch c.History.TimestampPrecision {
	case "ns", "us", "ms", "s":
	default:
		return fieldErr("history.timestamp_precision", "must be one of \"ns\", \"us\", \"ms\", \"s\", not %q", c.History.TimestampPrecision)
	}
	switch c.Events.Fsync {
	case "batch", "interval":
	default:
		return fieldErr("events.fsync", "must be \"batch\" or \"interval\", not %q", c.Events.Fsync)
	}
	if c.Events.FsyncInterval < Duration(time.Millisecond) || c.Events.FsyncInterval > Duration(time.Minute) {
		return fieldErr("events.fsync_interval", "must be between 1ms and 1m, not %s", c.Events.FsyncInterval)
	}
	if r, err := delay.ParseSeconds(c.Events.Retention); err != nil {
		return fieldErr("events.retention", "must be a time such as 365d: %v", err)
	} else if r < 86400 || r > 25*365*86400 {
		return fieldErr("events.retention", "must be between 1d and 25 years (events are kept in whole days), not %s", c.Events.Retention)
	}
	if err := c.Audit.validate(); err != nil {
		return err
	}
	if err := c.Alerts.validate(); err != nil {
		return err
	}
	if c.Triggers.TimerInterval < Duration(time.Second) || c.Triggers.TimerInterval > Duration(time.Hour) {
		return fieldErr("triggers.timer_interval", "must be between 1s and 1h, not %s", c.Triggers.TimerInterval)
	}
	if c.Triggers.MaxPending < 1024 || c.Triggers.MaxPending > 1<<26 {
		return fieldErr("triggers.max_pending", "must be between 1024 and 67108864, not %d", c.Triggers.MaxPending)
	}
	if c.Triggers.EvalShards < 0 || c.Triggers.EvalShards > 256 {
		return fieldErr("triggers.eval_shards", "must be between 0 (GOMAXPROCS) and 256, not %d", c.Triggers.EvalShards)
	}
	if c.Triggers.ValueCacheSize < 1<<20 || c.Triggers.ValueCacheSize > 64<<30 {
		return fieldErr("triggers.value_cache_size", "must be between 1MiB and 64GiB, not %d bytes", c.Triggers.ValueCacheSize)
	}
	if c.Triggers.ValueCacheMaxPeriod < Duration(time.Minute) || c.Triggers.ValueCacheMaxPeriod > Duration(7*24*time.Hour) {
		return fieldErr("triggers.value_cache_max_period", "must be between 1m and 168h, not %s", c.Triggers.ValueCacheMaxPeriod)
	}
	if c.API.MaxBodySize < 1024 || c.API.MaxBodySize > 1<<30 {
		return fieldErr("api.max_body_size", "must be between 1KiB and 1GiB, not %d bytes", c.API.MaxBodySize)
	}
	if c.API.MaxRows < 1 {
		return fieldErr("api.max_rows", "must be at least 1, not %d", c.API.MaxRows)
	}
	if c.API.MaxConcurrentCalls < 0 || c.API.MaxConcurrentCalls > 100_000 {
		return fieldErr("api.max_concurrent_calls", "must be between 0 (8 per CPU) and 100000, not %d", c.API.MaxConcurrentCalls)
	}
	if c.API.MaxWaitingCallsPerUser < 0 || c.API.MaxWaitingCallsPerUser > 1_000_000 {
		return fieldErr("api.max_waiting_calls_per_user", "must be between 0 (256) and 1000000, not %d", c.API.MaxWaitingCallsPerUser)
	}
	if c.API.MaxBatchCalls < 1 || c.API.MaxBatchCalls > 1_000_000 {
		return fieldErr("api.max_batch_calls", "must be between 1 and 1000000, not %d", c.API.MaxBatchCalls)
	}
	if c.API.Timeout < Duration(time.Second) || c.API.Timeout > Duration(time.Hour) {
		return fieldErr("api.timeout", "must be between 1s and 1h, not %s", c.API.Timeout)
	}
	if err := c.Poll.validate(); err != nil {
		return err
	}
	if err := c.SNMP.validate(&c.Poll); err != nil {
		return err
	}
	if err := c.JMX.validate(&c.Poll); err != nil {
		return err
	}
	if err := c.ODBC.validate(&c.Poll); err != nil {
		return err
	}
	if err := c.Proxy.validate(); err != nil {
		return err
	}
	if err := c.State.validate(); err != nil {
		return err
	}
	if err := c.HA.validate(c); err != nil {
		return err
	}
	return c.TLS.validate()
}

func (p *PollConfig) validate() error {
	if p.MaxInFlight < 1 || p.MaxInFlight > 1_000_000 {
		return fieldErr("poll.max_in_flight", "must be between 1 and 1000000, not %d", p.MaxInFlight)
	}
	if p.AgentMaxInFlight < 0 || p.AgentMaxInFlight > p.MaxInFlight {
		return fieldErr("poll.agent_max_in_flight", "must be between 0 (no own bound) and poll.max_in_flight (%d), not %d", p.MaxInFlight, p.AgentMaxInFlight)
	}
	if p.MaxInFlightBehind < 0 || p.MaxInFlightBehind > p.MaxInFlight {
		return fieldErr("poll.max_in_flight_behind", "must be between 0 (adaptive) and poll.max_in_flight (%d), not %d", p.MaxInFlight, p.MaxInFlightBehind)
	}
	if p.ConnectTimeout < Duration(100*time.Millisecond) || p.ConnectTimeout > Duration(time.Minute) {
		return fieldErr("poll.connect_timeout", "must be between 100ms and 1m, not %s", p.ConnectTimeout)
	}
	if p.DefaultTimeout < Duration(time.Second) || p.DefaultTimeout > Duration(10*time.Minute) {
		return fieldErr("poll.default_timeout", "must be between 1s and 10m, not %s", p.DefaultTimeout)
	}
	if p.MaxReplySize < 1024 || p.MaxReplySize > 64<<20 {
		return fieldErr("poll.max_reply_size", "must be between 1KiB and 64MiB, not %d bytes", p.MaxReplySize)
	}
	for _, f := range []struct {
		name string
		v    Duration
	}{{"poll.unreachable_period", p.UnreachablePeriod}, {"poll.unreachable_delay", p.UnreachableDelay}, {"poll.unavailable_delay", p.UnavailableDelay}} {
		// Zabbix allows 1..3600 seconds for each.
		if f.v < Duration(time.Second) || f.v > Duration(time.Hour) || f.v%Duration(time.Second) != 0 {
			return fieldErr(f.name, "must be whole seconds between 1s and 1h, not %s", f.v)
		}
	}
	if p.TimestampTolerance < 0 || p.TimestampTolerance > Duration(time.Second) {
		return fieldErr("poll.timestamp_tolerance", "must be between 0 (off) and 1s, not %s", p.TimestampTolerance)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"poll.simple_max_in_flight", p.SimpleMaxInFlight}, {"poll.http_max_in_flight", p.HTTPMaxInFlight}} {
		if f.v < 0 || f.v > p.MaxInFlight {
			return fieldErr(f.name, "must be between 0 (no own bound) and poll.max_in_flight (%d), not %d", p.MaxInFlight, f.v)
		}
	}
	if p.ICMPRate < 1 || p.ICMPRate > 1_000_000 {
		return fieldErr("poll.icmp_rate", "must be between 1 and 1000000 packets per second, not %d", p.ICMPRate)
	}
	switch p.ICMPSocket {
	case "auto", "raw", "dgram":
	default:
		return fieldErr("poll.icmp_socket", "must be auto, raw or dgram, not %q", p.ICMPSocket)
	}
	if p.HTTPMaxBodySize < 1024 || p.HTTPMaxBodySize > 1<<30 {
		return fieldErr("poll.http_max_body_size", "must be between 1KiB and 1GiB, not %d bytes", p.HTTPMaxBodySize)
	}
	if p.HTTPMaxHeaderSize < 4096 || p.HTTPMaxHeaderSize > 16<<20 {
		return fieldErr("poll.http_max_header_size", "must be between 4KiB and 16MiB, not %d bytes", p.HTTPMaxHeaderSize)
	}
	if p.IPMIMaxInFlight < 0 || p.IPMIMaxInFlight > p.MaxInFlight {
		return fieldErr("poll.ipmi_max_in_flight", "must be between 0 (no own bound) and poll.max_in_flight (%d), not %d", p.MaxInFlight, p.IPMIMaxInFlight)
	}
	if p.IPMIMaxSessionsPerBMC < 1 || p.IPMIMaxSessionsPerBMC > 64 {
		return fieldErr("poll.ipmi_max_sessions_per_bmc", "must be between 1 and 64 (a BMC allows few sessions), not %d", p.IPMIMaxSessionsPerBMC)
	}
	if p.IPMIIdleClose < Duration(time.Minute) || p.IPMIIdleClose > Duration(24*time.Hour) {
		return fieldErr("poll.ipmi_idle_close", "must be between 1m and 24h, not %s", p.IPMIIdleClose)
	}
	if p.HTTPMaxConnsPerHost < 1 || p.HTTPMaxConnsPerHost > 10000 {
		return fieldErr("poll.http_max_conns_per_host", "must be between 1 and 10000, not %d", p.HTTPMaxConnsPerHost)
	}
	if len(p.ExternalScripts) == 0 {
		return fieldErr("poll.external_scripts", "must name at least one directory")
	}
	for _, d := range p.ExternalScripts {
		// A relative directory would depend on the server's working
		// directory, which the operator does not see in the config.
		if !filepath.IsAbs(d) {
			return fieldErr("poll.external_scripts", "%q must be an absolute path", d)
		}
	}
	if p.ExternalMaxProcesses < 1 || p.ExternalMaxProcesses > 10000 {
		return fieldErr("poll.external_max_processes", "must be between 1 and 10000, not %d", p.ExternalMaxProcesses)
	}
	// The Nagios plugin guidelines ask a server to keep 8 KiB at least.
	if p.ExternalMaxOutput < 8<<10 || p.ExternalMaxOutput > 64<<20 {
		return fieldErr("poll.external_max_output", "must be between 8KiB and 64MiB, not %d bytes", p.ExternalMaxOutput)
	}
	for _, f := range []struct{ name, path string }{{"poll.ssh_key_location", p.SSHKeyLocation}, {"poll.ssh_known_hosts", p.SSHKnownHosts}} {
		if f.path != "" && !filepath.IsAbs(f.path) {
			return fieldErr(f.name, "%q must be an absolute path", f.path)
		}
	}
	if p.CommandMaxOutput < 4<<10 || p.CommandMaxOutput > 64<<20 {
		return fieldErr("poll.command_max_output", "must be between 4KiB and 64MiB, not %d bytes", p.CommandMaxOutput)
	}
	return nil
}

// EffectiveShards is the shard count with 0 resolved to the CPU count.
func (p PipelineConfig) EffectiveShards() int {
	if p.Shards > 0 {
		return p.Shards
	}
	return runtime.GOMAXPROCS(0)
}

func fieldErr(field, format string, args ...any) error {
	return fmt.Errorf("invalid config field %s: %s", field, fmt.Sprintf(format, args...))
}

func validAddr(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("must be host:port or :port, not %q", s)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("port must be 0..65535, not %q", port)
	}
	if host != "" && host != "localhost" && net.ParseIP(host) == nil {
		return fmt.Errorf("host must be an IP address or localhost, not %q", host)
	}
	return nil
}

// redactURL drops a password from a URL for an error message.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}

func (a AlertsConfig) validate() error {
	switch {
	case a.Fsync != "batch" && a.Fsync != "interval":
		return fieldErr("alerts.fsync", "must be \"batch\" or \"interval\", not %q", a.Fsync)
	case a.FsyncInterval < Duration(time.Millisecond) || a.FsyncInterval > Duration(time.Minute):
		return fieldErr("alerts.fsync_interval", "must be between 1ms and 1m, not %s", a.FsyncInterval)
	case a.QueueSize < 1 || a.QueueSize > 10_000_000:
		return fieldErr("alerts.queue_size", "must be between 1 and 10000000, not %d", a.QueueSize)
	case a.RateLimit < 0:
		return fieldErr("alerts.rate_limit", "must be 0 (unlimited) or positive, not %g", a.RateLimit)
	case a.MaxSessions < 1 || a.MaxSessions > 10_000:
		return fieldErr("alerts.max_sessions", "must be between 1 and 10000, not %d", a.MaxSessions)
	case a.KeepAlerts < 1000:
		return fieldErr("alerts.keep_alerts", "must be at least 1000, not %d", a.KeepAlerts)
	case a.InboxSize < 1000:
		return fieldErr("alerts.inbox_size", "must be at least 1000, not %d", a.InboxSize)
	case a.WebhookMaxBody < 1024:
		return fieldErr("alerts.webhook_max_body", "must be at least 1KiB, not %d", a.WebhookMaxBody)
	case a.MinStepDuration < Duration(time.Second) || a.MinStepDuration > Duration(time.Hour):
		return fieldErr("alerts.min_step_duration", "must be between 1s and 1h, not %s", a.MinStepDuration)
	case a.CommandTimeout < Duration(time.Second) || a.CommandTimeout > Duration(10*time.Minute):
		return fieldErr("alerts.command_timeout", "must be between 1s and 10m, not %s", a.CommandTimeout)
	}
	return nil
}

func (a *AuditConfig) validate() error {
	switch a.Fsync {
	case "batch", "interval":
	default:
		return fieldErr("audit.fsync", "must be \"batch\" or \"interval\", not %q", a.Fsync)
	}
	if a.FsyncInterval < Duration(time.Millisecond) || a.FsyncInterval > Duration(time.Minute) {
		return fieldErr("audit.fsync_interval", "must be between 1ms and 1m, not %s", a.FsyncInterval)
	}
	if r, err := delay.ParseSeconds(a.Retention); err != nil {
		return fieldErr("audit.retention", "must be a time such as 365d, or 0 to keep everything: %v", err)
	} else if r != 0 && (r < 86400 || r > 25*365*86400) {
		return fieldErr("audit.retention", "must be 0 (keep everything) or between 1d and 25 years (records are kept in whole days), not %s", a.Retention)
	}
	if a.MaxRecords < 1000 || a.MaxRecords > 100_000_000 {
		return fieldErr("audit.max_records", "must be between 1000 and 100000000, not %d", a.MaxRecords)
	}
	return nil
}
