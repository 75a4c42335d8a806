package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Usage is the text of `peregrine bench -h`.
const Usage = `usage: peregrine bench SCENARIO[,SCENARIO...] --target URL [flags]
       peregrine bench compare --report DIR [--old-a DIR --old-b DIR] REPORT_DIR_A REPORT_DIR_B
       peregrine bench poll [flags]   (the poller against simulated agents; bench poll -h)
       peregrine bench snmp [flags]   (the SNMP poller against simulated devices; bench snmp -h)
       peregrine bench tcp-floor [flags]   (connect/write/read/close floor on loopback; tcp-floor -h)
       peregrine bench overload [flags]   (ingest at twice its capacity: bounded, nothing lost; overload -h)
       peregrine bench ha [flags]   (scenarios on a cluster node, PostgreSQL + ClickHouse, and the embedded default; ha -h)
       peregrine bench icmp [flags]   (ICMP sweeps in a network namespace, also Zabbix's; bench icmp -h)
       peregrine bench proxy --target URL [flags]   (simulated proxies pushing proxy data; bench proxy -h)
       peregrine bench checks --kind snmp|external|ssh|jmx|odbc --target URL [flags]
                                      (a server's SNMP, external, SSH, JMX or ODBC checks through its API; bench checks -h)
       peregrine bench lld [--target URL] [flags]
                                     (templates and LLD at fleet size, in process or on Zabbix; bench lld -h)
       peregrine bench discovery --target URL [flags]
                                     (a network discovery sweep over loopback addresses; bench discovery -h)

Runs the public studies' measurement methods against a server speaking the
Zabbix protocols (Peregrine or a real Zabbix server), creating the hosts and
items it needs through the API, and writes a report (report.md, SVG plots,
raw CSV) into --report DIR.

scenarios:
  write-scaling  step the number of monitored targets (each with --items-per-target
                 items every --interval); values written per window against the
                 ideal line; the knee in NVPS (HistoryGluon method)
  sender-flood   --items trapper items, send each total of --values as fast as the
                 senders go; sender completion, time until readable, loss (CW-Zabbix)
  history-read   history.get of --sizes rows, --clients concurrent × --reps calls;
                 median/p95 latency, throughput, errors (CW-Zabbix read method)
  ingest-max     step the offered rate (--rates, or --start-rate doubling); the
                 highest rate with every value readable and none lost
  backfill       --backfill-values in order, then as many in random time order
                 inside and outside the head window; rates against in order
  dashboard      --panels history.get calls at once, each --items-per-panel items
                 over the last --range (Grafana); refresh latency for --viewers
  ui-dashboard   --ui-viewers web sessions of the target's own frontend (Peregrine's UI,
                 Zabbix's PHP) on a 12-widget dashboard, each widget's refresh request
                 every --ui-every for --ui-duration; latency per widget, server CPU
  disk-bytes     --disk-values in order, then history bytes on disk per value
                 (--data-dir for Peregrine, --size-cmd for any target)
  storm          --storm-items triggers last(/host/key)>0 all fire at once, then all
                 recover; time until problem.get shows them, problem.get latency
  trigger-latency --latency-items triggers under --latency-rate values/s for
                 --latency-duration, --latency-flip of them firing each second;
                 value-to-event latency p50/p99 (acknowledged → in problem.get)
  preprocess     --pp-items trapper items with custom multiplier + discard unchanged
                 with heartbeat (and --pp-triggers last() triggers each), --pp-values
                 values; --pp-masters JSON masters with
                 --pp-dependents JSONPath dependent items each; persisted values/s
  compare        side-by-side tables with ratios and overlaid plots of two reports;
                 with --old-a/--old-b, the headline ratios of an earlier pair beside

Fair by default: realistic values (--data, --seed), the same connections and
frame size for every target, a warm-up before each scenario (--warmup-time),
60 s steps; flags that differ from their defaults are listed in the report.

target:
  --target URL          API endpoint, e.g. http://127.0.0.1:8080/api_jsonrpc.php
  --trapper HOST:PORT   trapper (default: the API's host, port 10051)
  --user NAME           API user (default Admin)
  --password-file FILE  file holding the password (Peregrine: DATA_DIR/admin-password)
  --password PASS       the password itself (Zabbix's default: zabbix)
  --name NAME           label in reports (default: "peregrine" when HOST/metrics has
                        Peregrine's counters, else "zabbix")

examples:
  peregrine bench write-scaling --target http://127.0.0.1:8080/api_jsonrpc.php \
      --password-file data/admin-password --report bench/reports/ws-peregrine
  peregrine bench write-scaling --target http://127.0.0.1:10088/api_jsonrpc.php \
      --trapper 127.0.0.1:10061 --password zabbix --cpu-ports 55432 --report bench/reports/ws-zabbix
  peregrine bench compare --report bench/reports/ws-side-by-side \
      bench/reports/ws-peregrine bench/reports/ws-zabbix

flags:
`

// Main runs `peregrine bench` and returns the exit code.
func Main(args []string, stdout, stderr io.Writer, version string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		fs, _ := newFlags(stderr)
		if len(args) == 0 {
			fs.Usage()
			return 2
		}
		fs.SetOutput(stdout)
		fs.Usage()
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "compare":
		return compareMain(args[1:], stdout, stderr)
	case "poll":
		return pollMain(ctx, args[1:], stdout, stderr, version)
	case "poll-agents": // the child process of bench poll
		return PollAgentsMain(args[1:], stdout, stderr)
	case "tcp-floor":
		return tcpFloorMain(ctx, args[1:], stdout, stderr)
	case "tcp-floor-server": // the child process of bench tcp-floor
		return TCPFloorServerMain(args[1:], stdout, stderr)
	case "snmp":
		return snmpMain(ctx, args[1:], stdout, stderr, version)
	case "snmp-agents": // the child process of bench snmp
		return SNMPAgentsMain(args[1:], stdout, stderr)
	case "icmp":
		return icmpMain(ctx, args[1:], stdout, stderr, version)
	case "checks":
		return checksMain(ctx, args[1:], stdout, stderr, version)
	case "proxy":
		return proxyMain(ctx, args[1:], stdout, stderr)
	case "lld":
		return lldMain(ctx, args[1:], stdout, stderr)
	case "discovery":
		return discoveryMain(ctx, args[1:], stdout, stderr)
	case "overload":
		return overloadMain(ctx, args[1:], stdout, stderr, version)
	case "ha":
		return haMain(ctx, args[1:], stdout, stderr, version)
	}
	fs, o := newFlags(stderr)
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "peregrine bench: unexpected argument %q (flags go after the scenario)\n", fs.Arg(0))
		return 2
	}
	scens, err := o.scenarios(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "peregrine bench: %v\n", err)
		return 2
	}
	if _, err := ParseShape(o.data); err != nil {
		fmt.Fprintf(stderr, "peregrine bench: %v\n", err)
		return 2
	}
	o.settings = measurementSettings(fs)
	o.command = "peregrine bench " + shellJoin(maskPassword(args))
	o.version = version
	if err := o.run(ctx, scens, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "peregrine bench: %v\n", err)
		return 1
	}
	return 0
}

type options struct {
	target, trapper, user, password, passwordFile, name string
	report, group, itemsTemplate                        string
	keep, quiet, compress                               bool
	conns, packet                                       int
	data                                                string
	seed                                                uint64
	warmupTime                                          time.Duration
	warmupRate                                          float64
	persistent                                          string
	serverPIDs, cpuPorts                                string
	apiTimeout                                          time.Duration

	ws WriteScaling
	sf SenderFlood
	hr HistoryRead
	im IngestMax
	bf Backfill
	db Dashboard
	dk DiskBytes
	st Storm
	ud UIDashboard
	tl TriggerLatency
	pp Preprocess

	ppValues string

	viewers, bfValues, dkValues string

	steps, values, sizes, rates string
	items, itemsPerHost         int
	drainTimeout                time.Duration

	command, version string
	// settings is every measurement flag with its value and default, in
	// the report and in settings.csv (compare lists the differences).
	settings [][3]string
}

func newFlags(stderr io.Writer) (*flag.FlagSet, *options) {
	o := &options{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), Usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.target, "target", "", "API URL of the server under test (required)")
	fs.StringVar(&o.trapper, "trapper", "", "trapper address (default: API host, port 10051)")
	fs.StringVar(&o.user, "user", "Admin", "API user")
	fs.StringVar(&o.password, "password", "", "API password")
	fs.StringVar(&o.passwordFile, "password-file", "", "file with the API password")
	fs.StringVar(&o.name, "name", "", "target label in the report (default: detected)")
	fs.StringVar(&o.report, "report", "", "report directory (default bench/reports/SCENARIO-NAME-TIME)")
	fs.StringVar(&o.group, "group", "Peregrine bench", "host group of the bench hosts")
	fs.BoolVar(&o.keep, "keep", false, "keep the bench hosts and items (a later run reuses them)")
	fs.StringVar(&o.itemsTemplate, "items-template", "", "put the bench items on a template of this name linked to every bench host (inherited items, as an estate has them) instead of on each host")
	fs.BoolVar(&o.quiet, "quiet", false, "no live progress line")
	fs.IntVar(&o.conns, "conns", 8, "concurrent sender connections")
	fs.IntVar(&o.packet, "packet", 1000, "values per sender frame (zabbix_sender sends 250)")
	fs.StringVar(&o.persistent, "persistent", "auto", "keep sender connections across frames: auto, yes, no")
	fs.BoolVar(&o.compress, "compress", false, "zlib-compress sender frames")
	fs.StringVar(&o.serverPIDs, "server-pid", "", "comma-separated PIDs whose process trees are the server's CPU (default: the processes listening on the trapper and API ports)")
	fs.StringVar(&o.cpuPorts, "cpu-ports", "", "extra listening ports whose processes count as the server's CPU (e.g. the peer's PostgreSQL, 55432)")
	fs.DurationVar(&o.apiTimeout, "api-timeout", 10*time.Minute, "timeout of one API call")
	fs.StringVar(&o.data, "data", "realistic", "values sent: realistic (seeded random walks, counters, sizes, status; random ns) or constant (the old data: one 2-decimal value per item)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the realistic values (the same seed sends the same values to every target)")
	fs.DurationVar(&o.warmupTime, "warmup-time", time.Minute, "unmeasured warm-up before each scenario's first step: values to all its items at --warmup-rate, then until readable (0: none)")
	fs.Float64Var(&o.warmupRate, "warmup-rate", 10000, "values/s of the warm-up")

	fs.StringVar(&o.steps, "steps", "10,20,50,100,200", "write-scaling: numbers of targets, ascending")
	fs.IntVar(&o.ws.ItemsPerTarget, "items-per-target", 100, "write-scaling: items per target")
	fs.DurationVar(&o.ws.Interval, "interval", time.Second, "write-scaling: each item's interval (whole seconds)")
	fs.DurationVar(&o.ws.Warmup, "warmup", 10*time.Second, "write-scaling: warm-up per step")
	fs.DurationVar(&o.ws.Window, "window", time.Minute, "write-scaling: measured window per step (≥ 60 s for figures that count)")
	fs.DurationVar(&o.ws.MaxTime, "max-time", 0, "write-scaling: stop stepping after this long (0: no limit)")

	fs.IntVar(&o.items, "items", 0, "sender-flood, ingest-max, backfill, disk-bytes: trapper items (default 300000, 100000, 10000, 10000)")
	fs.IntVar(&o.itemsPerHost, "items-per-host", 1000, "sender-flood, ingest-max, backfill, disk-bytes: items per host")
	fs.StringVar(&o.values, "values", "200000,900000", "sender-flood: totals of values to send, one run each")
	fs.DurationVar(&o.sf.Stall, "stall", time.Minute, "sender-flood: stop waiting for readability when the count has not grown for this long")
	fs.DurationVar(&o.drainTimeout, "drain-timeout", 0, "longest wait for sent values to become readable (default: write-scaling 2m, sender-flood 10m, ingest-max 2m, backfill and disk-bytes 10m)")

	fs.StringVar(&o.sizes, "sizes", "500000,1000000,2000000", "history-read: rows per call")
	fs.IntVar(&o.hr.Clients, "clients", 1, "history-read: concurrent clients")
	fs.IntVar(&o.hr.Reps, "reps", 5, "history-read: calls per client per size")
	fs.StringVar(&o.hr.Item, "item", "", "history-read: read this existing item, HOST:KEY, instead of filling one")
	fs.DurationVar(&o.hr.FillTimeout, "fill-timeout", 30*time.Minute, "history-read: longest wait until the filled item's values are readable (Zabbix takes ≈12 min for 2M)")

	fs.StringVar(&o.rates, "rates", "", "ingest-max: offered rates in values/s (default: --start-rate doubling to --max-rate)")
	fs.Float64Var(&o.im.StartRate, "start-rate", 25000, "ingest-max: first offered rate")
	fs.Float64Var(&o.im.MaxRate, "max-rate", 3200000, "ingest-max: last offered rate")
	fs.DurationVar(&o.im.StepDuration, "step", time.Minute, "ingest-max: duration of each rate step (≥ 60 s for figures that count)")

	fs.StringVar(&o.bfValues, "backfill-values", "5M", "backfill: values per phase (in order, random inside, random outside the head window)")
	fs.DurationVar(&o.bf.HeadWindow, "head-window", time.Hour, "backfill: the random phase inside the head window sends clocks within this of now")
	fs.DurationVar(&o.bf.OldAge, "old-age", 72*time.Hour, "backfill: the random phase outside the head window sends clocks this far back")

	fs.IntVar(&o.db.Panels, "panels", 20, "dashboard: panels, one history.get each, issued at once")
	fs.IntVar(&o.db.ItemsPerPanel, "items-per-panel", 10, "dashboard: items per panel")
	fs.DurationVar(&o.db.Range, "range", time.Hour, "dashboard: time range of every panel")
	fs.DurationVar(&o.db.Interval, "fill-interval", 10*time.Second, "dashboard: one value per item per this over the range")
	fs.StringVar(&o.viewers, "viewers", "1,4,16", "dashboard: dashboards refreshing at once, one step each")
	fs.IntVar(&o.db.Refreshes, "refreshes", 10, "dashboard: refreshes per dashboard per step")

	fs.IntVar(&o.ud.Viewers, "ui-viewers", 16, "ui-dashboard: viewers, each a web session of the target's frontend")
	fs.DurationVar(&o.ud.Every, "ui-every", 10*time.Second, "ui-dashboard: every widget's refresh interval (rf_rate)")
	fs.DurationVar(&o.ud.Duration, "ui-duration", time.Minute, "ui-dashboard: measured time")
	fs.StringVar(&o.ud.Prefix, "ui-prefix", "pb-uidash-", "ui-dashboard: prefix of its hosts, triggers and dashboard")
	fs.IntVar(&o.st.Items, "storm-items", 100000, "storm: trapper items, one trigger each, on hosts of 1,000")
	fs.DurationVar(&o.st.Timeout, "storm-timeout", 5*time.Minute, "storm: longest wait for all problems to show, and to resolve")
	fs.IntVar(&o.st.Batch, "storm-trigger-batch", 1000, "storm: triggers per trigger.create call")
	fs.IntVar(&o.tl.Items, "latency-items", 1000000, "trigger-latency: trapper items, one trigger each, on hosts of 1,000")
	fs.Float64Var(&o.tl.Rate, "latency-rate", 500000, "trigger-latency: values/s offered")
	fs.Float64Var(&o.tl.Flip, "latency-flip", 0.001, "trigger-latency: share of the triggers that fire each second (and recover the next)")
	fs.DurationVar(&o.tl.Duration, "latency-duration", time.Minute, "trigger-latency: how long the load runs")
	fs.IntVar(&o.tl.Batch, "latency-trigger-batch", 10000, "trigger-latency: triggers per trigger.create call")
	fs.IntVar(&o.pp.Items, "pp-items", 100000, "preprocess: trapper items with the two-step chain (0: skip that part)")
	fs.IntVar(&o.pp.Triggers, "pp-triggers", 0, "preprocess: last() triggers on every chain item (thresholds never reached: every value evaluated, no event)")
	fs.StringVar(&o.ppValues, "pp-values", "1M", "preprocess: values sent to the chain items")
	fs.IntVar(&o.pp.Masters, "pp-masters", 1000, "preprocess: JSON master items (0: skip that part)")
	fs.IntVar(&o.pp.Dependents, "pp-dependents", 10, "preprocess: JSONPath dependent items per master")
	fs.Int64Var(&o.pp.MasterRounds, "pp-rounds", 100, "preprocess: JSON documents sent to every master")
	fs.DurationVar(&o.pp.Settle, "pp-settle", 15*time.Second, "preprocess: wait after creating the dependent items (Zabbix: CacheUpdateFrequency + margin)")
	fs.StringVar(&o.dkValues, "disk-values", "10M", "disk-bytes: values to send")
	fs.StringVar(&o.dk.DataDir, "data-dir", "", "disk-bytes: Peregrine's data directory (its history/ is measured)")
	fs.StringVar(&o.dk.SizeCmd, "size-cmd", "", "disk-bytes: shell command printing the history's bytes (e.g. psql -tAc \"select pg_total_relation_size('history')\")")
	fs.DurationVar(&o.dk.FlushWait, "flush-wait", 5*time.Minute, "disk-bytes: longest wait for head flushes after the values are readable")
	return fs, o
}

func parseInts(s string) ([]int64, error) {
	var out []int64
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(strings.ReplaceAll(p, "_", ""))
		if p == "" {
			continue
		}
		mult := int64(1)
		switch {
		case strings.HasSuffix(p, "k"):
			mult, p = 1000, strings.TrimSuffix(p, "k")
		case strings.HasSuffix(p, "M"):
			mult, p = 1_000_000, strings.TrimSuffix(p, "M")
		}
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", p)
		}
		out = append(out, int64(v*float64(mult)))
	}
	return out, nil
}

// oneInt parses a single count with parseInts' suffixes (10k, 5M).
func oneInt(s string) (int64, error) {
	v, err := parseInts(s)
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("%q is not one number", s)
	}
	return v[0], nil
}

func (o *options) scenarios(names string) ([]Scenario, error) {
	var out []Scenario
	for _, n := range strings.Split(names, ",") {
		switch n {
		case "write-scaling":
			steps, err := parseInts(o.steps)
			if err != nil {
				return nil, fmt.Errorf("--steps: %w", err)
			}
			for _, s := range steps {
				o.ws.Targets = append(o.ws.Targets, int(s))
			}
			o.ws.DrainTimeout = o.drainTimeout
			out = append(out, &o.ws)
		case "sender-flood":
			vals, err := parseInts(o.values)
			if err != nil {
				return nil, fmt.Errorf("--values: %w", err)
			}
			o.sf.Values, o.sf.Items, o.sf.ItemsPerHost, o.sf.DrainTimeout = vals, o.items, o.itemsPerHost, o.drainTimeout
			out = append(out, &o.sf)
		case "history-read":
			sizes, err := parseInts(o.sizes)
			if err != nil {
				return nil, fmt.Errorf("--sizes: %w", err)
			}
			for _, s := range sizes {
				o.hr.Sizes = append(o.hr.Sizes, int(s))
			}
			out = append(out, &o.hr)
		case "ingest-max":
			if o.rates != "" {
				rs, err := parseInts(o.rates)
				if err != nil {
					return nil, fmt.Errorf("--rates: %w", err)
				}
				for _, r := range rs {
					o.im.Rates = append(o.im.Rates, float64(r))
				}
			}
			o.im.Items, o.im.ItemsPerHost, o.im.DrainTimeout = o.items, o.itemsPerHost, o.drainTimeout
			out = append(out, &o.im)
		case "backfill":
			v, err := oneInt(o.bfValues)
			if err != nil {
				return nil, fmt.Errorf("--backfill-values: %w", err)
			}
			o.bf.Values = v
			o.bf.Items, o.bf.ItemsPerHost, o.bf.DrainTimeout = o.items, o.itemsPerHost, o.drainTimeout
			out = append(out, &o.bf)
		case "dashboard":
			vs, err := parseInts(o.viewers)
			if err != nil {
				return nil, fmt.Errorf("--viewers: %w", err)
			}
			for _, v := range vs {
				o.db.Viewers = append(o.db.Viewers, int(v))
			}
			out = append(out, &o.db)
		case "disk-bytes":
			v, err := oneInt(o.dkValues)
			if err != nil {
				return nil, fmt.Errorf("--disk-values: %w", err)
			}
			o.dk.Values = v
			o.dk.Items, o.dk.ItemsPerHost, o.dk.DrainTimeout = o.items, o.itemsPerHost, o.drainTimeout
			out = append(out, &o.dk)
		case "ui-dashboard":
			out = append(out, &o.ud)
		case "storm":
			out = append(out, &o.st)
		case "trigger-latency":
			out = append(out, &o.tl)
		case "preprocess":
			v, err := oneInt(o.ppValues)
			if err != nil {
				return nil, fmt.Errorf("--pp-values: %w", err)
			}
			o.pp.Values, o.pp.ItemsPerHost, o.pp.DrainTimeout = v, o.itemsPerHost, o.drainTimeout
			out = append(out, &o.pp)
		default:
			return nil, fmt.Errorf("unknown scenario %q (write-scaling, sender-flood, history-read, ingest-max, backfill, dashboard, ui-dashboard, disk-bytes, storm, trigger-latency, preprocess, compare)", n)
		}
	}
	return out, nil
}

// buildTarget resolves the target flags.
func (o *options) buildTarget(ctx context.Context) (*Target, error) {
	if o.target == "" {
		return nil, errors.New("--target URL is required (e.g. http://127.0.0.1:8080/api_jsonrpc.php)")
	}
	u, err := url.Parse(o.target)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("--target %q is not a URL", o.target)
	}
	t := &Target{Name: o.name, APIURL: o.target, Trapper: o.trapper, User: o.user, Password: o.password}
	if t.Trapper == "" {
		t.Trapper = net.JoinHostPort(u.Hostname(), "10051")
	}
	if o.passwordFile != "" {
		if t.Password, err = ReadPassword(o.passwordFile); err != nil {
			return nil, err
		}
	}
	if t.Name == "" {
		t.Name = detectName(ctx, u)
	}
	switch o.persistent {
	case "auto", "yes", "no":
	default:
		return nil, fmt.Errorf("--persistent must be auto, yes or no, not %q", o.persistent)
	}
	t.Sender = Sender{Addr: t.Trapper, Conns: o.conns, Persistent: o.persistent, Compress: o.compress}
	if o.serverPIDs != "" {
		pids, err := parseInts(o.serverPIDs)
		if err != nil {
			return nil, fmt.Errorf("--server-pid: %w", err)
		}
		for _, p := range pids {
			t.ServerCPU.PIDs = append(t.ServerCPU.PIDs, int(p))
		}
	} else {
		var extra []int
		if o.cpuPorts != "" {
			ports, err := parseInts(o.cpuPorts)
			if err != nil {
				return nil, fmt.Errorf("--cpu-ports: %w", err)
			}
			for _, p := range ports {
				extra = append(extra, int(p))
			}
		}
		t.ServerCPU = DiscoverServerCPU(t, extra)
	}
	return t, nil
}

// detectName asks HOST/metrics: Peregrine serves its counters there, the
// Zabbix frontend does not.
func detectName(ctx context.Context, api *url.URL) string {
	m := *api
	m.Path, m.RawQuery = "/metrics", ""
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.String(), nil)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode == http.StatusOK && strings.Contains(string(b), "peregrine_") {
			return "peregrine"
		}
	}
	return "zabbix"
}

func (o *options) run(ctx context.Context, scens []Scenario, stdout, stderr io.Writer) error {
	t, err := o.buildTarget(ctx)
	if err != nil {
		return err
	}
	var names []string
	for _, s := range scens {
		names = append(names, s.Name())
	}
	started := time.Now().UTC()
	if o.report == "" {
		o.report = filepath.Join("bench", "reports", strings.Join(names, "+")+"-"+t.Name+"-"+started.Format("20060102-150405"))
	}
	api := NewAPIClient(t.APIURL, o.apiTimeout)
	apiVersion, err := api.Version(ctx)
	if err != nil {
		return fmt.Errorf("cannot reach the API at %s (check --target): %w", t.APIURL, err)
	}
	if err := api.Login(ctx, t.User, t.Password); err != nil {
		return fmt.Errorf("cannot log in as %q (check --user and --password/--password-file): %w", t.User, err)
	}
	var pw io.Writer = stderr
	if o.quiet {
		pw = nil
	}
	m := DescribeMachine()
	env := &Env{Target: t, API: api, Progress: NewProgress(pw), Keep: o.keep, Group: o.group, ItemsTemplate: o.itemsTemplate, Cores: m.Cores, Packet: o.packet,
		Data: Data{Shape: Shape(o.data), Seed: o.seed}, Warmup: o.warmupTime, WarmupRate: o.warmupRate}
	rep := &Report{Title: fmt.Sprintf("peregrine bench: %s against %s", strings.Join(names, ", "), t.Name)}
	env.Progress.Logf("peregrine bench %s → %s (API %s, version %s; trapper %s); server CPU: %s",
		strings.Join(names, ","), t.Name, t.APIURL, apiVersion, t.Trapper, t.ServerCPU.Describe())
	var runErr error
	for _, s := range scens {
		sec, err := s.Run(ctx, env)
		if err != nil {
			sec.Notes = append(sec.Notes, fmt.Sprintf("The scenario stopped with an error: %v", err))
			if runErr == nil {
				runErr = fmt.Errorf("%s: %w", s.Name(), err)
			}
		}
		if sec.Title == "" {
			sec.Title = s.Name()
		}
		sec.Text = append(sec.Text, fmt.Sprintf("Configuration: `%s`", describeScenario(s)))
		rep.Sections = append(rep.Sections, sec)
		if ctx.Err() != nil {
			break
		}
	}
	ended := time.Now().UTC()
	rep.Header = runHeader(o, t, m, apiVersion, started, ended)
	if err := rep.Write(o.report); err != nil {
		return err
	}
	if err := settingsCSV(o.settings).Write(filepath.Join(o.report, settingsFile)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(o.report, "report.md"))
	return runErr
}

func describeScenario(s Scenario) string {
	txt := fmt.Sprintf("%+v", s)
	return strings.TrimPrefix(txt, "&")
}

func runHeader(o *options, t *Target, m Machine, apiVersion string, started, ended time.Time) [][2]string {
	return [][2]string{
		{"command", "`" + o.command + "`"},
		{"started / ended (UTC)", started.Format(time.DateTime) + " / " + ended.Format(time.DateTime)},
		{"target", fmt.Sprintf("%s — API %s (apiinfo.version %s), trapper %s", t.Name, t.APIURL, apiVersion, t.Trapper)},
		{"server CPU measured from", t.ServerCPU.Describe()},
		{"sender", fmt.Sprintf("harness's own compliant Zabbix sender: %d connections, %d values per frame, persistent=%s, compress=%v", t.Sender.Conns, o.packet, t.Sender.Persistent, t.Sender.Compress)},
		{"data", Data{Shape: Shape(o.data), Seed: o.seed}.Describe()},
		{"warm-up", warmupText(o)},
		{"settings that differ from the defaults", differingSettings(o.settings)},
		{"machine", fmt.Sprintf("%d cores (%s), %.1f GiB memory, Linux %s", m.Cores, m.CPUModel, m.MemoryGB, m.Kernel)},
		{"load average at start / end", m.LoadAvg + " / " + LoadAvg()},
		{"harness", fmt.Sprintf("peregrine %s, %s", o.version, m.Go)},
	}
}

// maskPassword hides a --password value (and --zabbix-password's,
// --odbc-password's) in the recorded command.
func maskPassword(args []string) []string {
	out := append([]string(nil), args...)
	secret := func(flag string) bool {
		switch strings.TrimLeft(flag, "-") {
		case "password", "zabbix-password", "odbc-password":
			return strings.HasPrefix(flag, "-")
		}
		return false
	}
	for i, a := range out {
		k, _, hasValue := strings.Cut(a, "=")
		switch {
		case hasValue && secret(k):
			out[i] = k + "=***"
		case !hasValue && secret(a) && i+1 < len(out):
			out[i+1] = "***"
		}
	}
	return out
}

// shellJoin quotes args for a copy-pastable command line.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'$\\*?;&|<>()") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// nonMeasurement are the flags that say where and how to reach the
// target or where to write, not what is measured: they are left out of
// the settings a comparison must hold equal.
var nonMeasurement = map[string]bool{"target": true, "trapper": true, "user": true, "password": true, "password-file": true,
	"name": true, "report": true, "group": true, "keep": true, "quiet": true, "server-pid": true, "cpu-ports": true, "api-timeout": true,
	"item": true, "data-dir": true, "size-cmd": true}

// measurementSettings lists every measurement flag: name, value, default.
func measurementSettings(fs *flag.FlagSet) [][3]string {
	var out [][3]string
	fs.VisitAll(func(f *flag.Flag) {
		if !nonMeasurement[f.Name] {
			out = append(out, [3]string{f.Name, f.Value.String(), f.DefValue})
		}
	})
	return out
}

// settingsFile holds a run's measurement settings for compare.
const settingsFile = "settings.csv"

func settingsCSV(s [][3]string) *CSV {
	c := &CSV{File: settingsFile, Header: []string{"flag", "value", "default"}}
	for _, r := range s {
		c.Rows = append(c.Rows, []string{r[0], r[1], r[2]})
	}
	return c
}

func differingSettings(s [][3]string) string {
	var d []string
	for _, r := range s {
		if r[1] != r[2] {
			d = append(d, fmt.Sprintf("`--%s %s` (default %s)", r[0], r[1], r[2]))
		}
	}
	if len(d) == 0 {
		return "none: every target gets the same connections, frame size, data and step lengths"
	}
	return strings.Join(d, ", ")
}

func warmupText(o *options) string {
	if o.warmupTime <= 0 {
		return "none (--warmup-time 0): first steps measured a cold server"
	}
	return fmt.Sprintf("%s at %s values/s to all of a scenario's items before its first step, then until readable; not measured", o.warmupTime, human(o.warmupRate))
}
