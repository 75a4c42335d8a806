package bench

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/snmpsim"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/snmp"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// SNMPUsage is the text of `peregrine bench snmp -h`.
const SNMPUsage = `usage: peregrine bench snmp [flags]

Measures the check scheduler and the SNMP checker (hybrid mode: one request
at a time per device, many devices in parallel) against simulated SNMPv2c
devices run by a child process, each on its own address of 127.0.0.0/8.
Hosts × items at --interval are stepped up (--steps, host counts); every
host is one device. Per step, after --warmup, the --window measures OIDs/s
with a value through the pipeline against the ideal (hosts × items /
interval), the peak of checks in flight, check latency p50/p99, the
requests sent and the poller's CPU per OID (the devices' CPU apart).

flags:
`

// SNMPBench is the snmp scenario.
type SNMPBench struct {
	Hosts        []int
	ItemsPerHost int
	Interval     time.Duration
	Warmup       time.Duration
	Window       time.Duration
	MaxInFlight  int
	MaxOIDs      int // snmp.max_oids_per_request
	Timeout      time.Duration
	StopBelow    float64
	// InProcessAgents runs the simulated devices in this process (tests).
	InProcessAgents bool
	Log             io.Writer
}

func (b *SNMPBench) defaults() error {
	if len(b.Hosts) == 0 {
		b.Hosts = []int{100, 500, 1000}
	}
	for i, n := range b.Hosts {
		if n <= 0 || n > 60000 || i > 0 && n <= b.Hosts[i-1] {
			return errors.New("bench snmp: --steps must be ascending host counts of at most 60000 (one loopback address each)")
		}
	}
	if b.ItemsPerHost <= 0 {
		b.ItemsPerHost = 64
	}
	if b.Interval <= 0 {
		b.Interval = 10 * time.Second
	}
	if b.Interval%time.Second != 0 {
		return errors.New("bench snmp: --interval must be whole seconds (Zabbix intervals are)")
	}
	if b.Warmup <= 0 {
		b.Warmup = b.Interval + 2*time.Second
	}
	if b.Window <= 0 {
		b.Window = 3 * b.Interval
	}
	if b.MaxInFlight <= 0 {
		b.MaxInFlight = 20000
	}
	if b.MaxOIDs <= 0 {
		b.MaxOIDs = 64
	}
	if b.Timeout <= 0 {
		b.Timeout = 3 * time.Second
	}
	if b.StopBelow <= 0 {
		b.StopBelow = 0.5
	}
	if b.Log == nil {
		b.Log = io.Discard
	}
	return nil
}

// SNMPColumns is the CSV header.
var SNMPColumns = []string{"hosts", "items", "interval_s", "ideal_oids_per_s", "done_oids_per_s", "ratio", "requests_per_s", "in_flight_peak",
	"p50_s", "p99_s", "poller_cpu_cores", "poller_cpu_us_per_oid", "devices_cpu_cores", "errors"}

// snmpTable is every simulated device's MIB: n Counter64 values.
func snmpTable(n int) []gosnmp.SnmpPDU {
	t := make([]gosnmp.SnmpPDU, n)
	for i := range t {
		t[i] = gosnmp.SnmpPDU{Name: ".1.3.6.1.4.1.9999.1." + strconv.Itoa(i+1) + ".0", Type: gosnmp.Counter64, Value: uint64(i) << 20}
	}
	return t
}

func startSNMPDevices(n, oids int, inProcess bool) (*agentsProc, error) {
	if inProcess {
		f, err := snmpsim.Start(snmpsim.Options{Agents: n, DistinctAddrs: true, Table: snmpTable(oids)})
		if err != nil {
			return nil, err
		}
		p := &agentsProc{snmp: f}
		for i := 0; i < n; i++ {
			p.addrs = append(p.addrs, f.Addr(i))
		}
		return p, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "bench", "snmp-agents", strconv.Itoa(n), strconv.Itoa(oids))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the simulated SNMP devices: %w", err)
	}
	p := &agentsProc{cmd: cmd, stdin: stdin, snmpChild: true}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if line := sc.Text(); line != "ready" {
			p.addrs = append(p.addrs, line)
			continue
		}
		p.out = sc
		return p, nil
	}
	p.stop()
	return nil, errors.New("the simulated SNMP devices' process exited before it was ready")
}

// SNMPAgentsMain is the child process: n simulated SNMP devices with
// oids values each; it prints their addresses, then "ready", and runs
// until its stdin closes. Each line "count" on its stdin is answered by
// one line "REQUESTS OIDS", the devices' totals so far (childcount.go):
// the count at the devices, the same for every poller (bench checks
// against Zabbix).
func SNMPAgentsMain(args []string, stdout, stderr io.Writer) int {
	var n, oids int
	if len(args) == 2 {
		n, _ = strconv.Atoi(args[0])
		oids, _ = strconv.Atoi(args[1])
	}
	if n <= 0 || oids <= 0 {
		fmt.Fprintln(stderr, "usage: peregrine bench snmp-agents DEVICES OIDS")
		return 2
	}
	f, err := snmpsim.Start(snmpsim.Options{Agents: n, DistinctAddrs: true, Table: snmpTable(oids)})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer f.Close()
	w := bufio.NewWriter(stdout)
	for i := 0; i < n; i++ {
		fmt.Fprintln(w, f.Addr(i))
	}
	fmt.Fprintln(w, "ready")
	w.Flush()
	serveChild(os.Stdin, w, func() []uint64 { return []uint64{f.Requests(), f.OIDs()} }, nil)
	return 0
}

// counts asks the devices for their totals of requests and OIDs answered.
func (p *agentsProc) counts() (requests, oids uint64, err error) {
	if p.snmp != nil {
		return p.snmp.Requests(), p.snmp.OIDs(), nil
	}
	if !p.snmpChild || p.out == nil {
		return 0, 0, errors.New("BUG: counts of devices that are not SNMP devices")
	}
	vs, err := readCounts(p.stdin, p.out, 2, "the simulated devices")
	if err != nil {
		return 0, 0, err
	}
	return vs[0], vs[1], nil
}

// Run measures every step and returns the report section.
func (b *SNMPBench) Run(ctx context.Context, dir string) (Section, error) {
	sec := Section{Title: "snmp: SNMP agent checks (hybrid mode)"}
	if err := b.defaults(); err != nil {
		return sec, err
	}
	devices, err := startSNMPDevices(b.Hosts[len(b.Hosts)-1], b.ItemsPerHost, b.InProcessAgents)
	if err != nil {
		return sec, err
	}
	defer devices.stop()
	cat, err := catalog.Open(ctx, catalog.Options{Path: filepath.Join(dir, "catalog.db")})
	if err != nil {
		return sec, err
	}
	defer cat.Close()
	m := selfmon.NewRegistry()
	log := slog.New(slog.NewTextHandler(b.Log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p, err := pipeline.New(pipeline.Options{Store: discard{}, Metrics: m, Logger: log})
	if err != nil {
		return sec, err
	}
	s, err := poll.New(poll.Options{
		Catalog: cat, ItemStates: itemstate.New(), Metrics: m, Logger: log,
		Submit:      func(v []history.Sample) error { return p.Submit(v, pipeline.NewTicket()) },
		MaxInFlight: b.MaxInFlight, DefaultTimeout: b.Timeout,
		Checkers: map[catalog.ItemType]poll.CheckerSpec{catalog.SNMPAgent: {Checker: snmp.New(snmp.Options{
			Snapshot: cat.Snapshot, MaxOIDsPerRequest: b.MaxOIDs, Metrics: m, Logger: log})}},
	})
	if err != nil {
		return sec, err
	}
	pctx, stopPipe := context.WithCancel(context.Background())
	pipeDone := make(chan struct{})
	go func() { defer close(pipeDone); p.Run(pctx) }()
	sctx, stopPoll := context.WithCancel(context.Background())
	pollDone := make(chan struct{})
	go func() { defer close(pollDone); s.Run(sctx) }()
	defer func() { stopPoll(); <-pollDone; stopPipe(); <-pipeDone }()

	pb := PollBench{Window: b.Window}
	csv := &CSV{File: "snmp.csv", Header: SNMPColumns}
	table := Table{Header: []string{"hosts", "items", "ideal OIDs/s", "done OIDs/s", "of ideal", "requests/s", "in flight (peak)", "latency p50", "latency p99", "poller CPU", "poller CPU per OID", "devices CPU", "errors"}}
	made := 0
	for _, n := range b.Hosts {
		if err := b.provision(ctx, cat, made, n, devices.addrs); err != nil {
			return sec, err
		}
		made = n
		select {
		case <-time.After(b.Warmup):
		case <-ctx.Done():
			return sec, ctx.Err()
		}
		req0 := scrape(m)[`peregrine_poll_snmp_requests_total{pdu="get"}`]
		t0 := time.Now()
		r, err := pb.measure(ctx, m, devices, s)
		if err != nil {
			return sec, err
		}
		reqs := (scrape(m)[`peregrine_poll_snmp_requests_total{pdu="get"}`] - req0) / time.Since(t0).Seconds()
		items := n * b.ItemsPerHost
		ideal := float64(items) / b.Interval.Seconds()
		ratio := r.done / ideal
		table.Rows = append(table.Rows, []string{human(float64(n)), human(float64(items)), human(ideal), human(r.done), pct(ratio), human(reqs),
			human(r.peak), secs(r.p50), secs(r.p99), fmt.Sprintf("%.2f cores", r.cpu), fmt.Sprintf("%.1f µs", r.perCheck*1e6),
			fmt.Sprintf("%.2f cores", r.agentsCPU), human(r.errors)})
		csv.Rows = append(csv.Rows, []string{fi(int64(n)), fi(int64(items)), fi(int64(b.Interval / time.Second)), f(ideal), f(r.done), f(ratio), f(reqs),
			f(r.peak), f(r.p50), f(r.p99), f(r.cpu), f(r.perCheck * 1e6), f(r.agentsCPU), f(r.errors)})
		fmt.Fprintf(b.Log, "snmp %d devices × %d items at %s: %.0f OIDs/s of %.0f ideal (%.1f %%) in %.0f requests/s, in flight peak %.0f, p50 %s p99 %s, poller %.2f cores (%.1f µs/OID), devices %.2f cores\n",
			n, b.ItemsPerHost, b.Interval, r.done, ideal, 100*ratio, reqs, r.peak, secs(r.p50), secs(r.p99), r.cpu, r.perCheck*1e6, r.agentsCPU)
		if ratio < b.StopBelow {
			sec.Notes = append(sec.Notes, fmt.Sprintf("Stopped after %d hosts: the poller did only %.0f %% of the ideal OIDs.", n, 100*ratio))
			break
		}
	}
	sec.CSV = csv
	sec.Tables = append(sec.Tables, table)
	sec.Text = append(sec.Text, fmt.Sprintf("Each host is one simulated SNMPv2c device on its own loopback address (a child process), with %d SNMP agent items "+
		"(Counter64, unsigned, delay %s), asked in GETs of up to %d OIDs. Per step: %s warm-up, then a %s window. Done = OIDs with a value through the pipeline in the window; "+
		"latency = the check's scheduled time to its value through the pipeline (bucket upper bounds); CPU in cores over the window.",
		b.ItemsPerHost, b.Interval, b.MaxOIDs, b.Warmup, b.Window))
	return sec, nil
}

// provision adds hosts [from, to), host h on device h.
func (b *SNMPBench) provision(ctx context.Context, cat *catalog.Catalog, from, to int, addrs []string) error {
	for start := from; start < to; start += 500 {
		var spec catalog.Spec
		for h := start; h < min(to, start+500); h++ {
			ip, port, _ := strings.Cut(addrs[h], ":")
			hs := catalog.HostSpec{Host: fmt.Sprintf("pb-snmp-%06d", h), Interfaces: []catalog.InterfaceSpec{{Type: "snmp", IP: ip, Port: port,
				Details: map[string]string{"version": "2", "community": "public"}}}}
			for i := 0; i < b.ItemsPerHost; i++ {
				hs.Items = append(hs.Items, catalog.ItemSpec{Key: "bench.oid[" + strconv.Itoa(i) + "]", Type: "snmp_agent", ValueType: "unsigned",
					SNMPOID: "1.3.6.1.4.1.9999.1." + strconv.Itoa(i+1) + ".0", Delay: strconv.Itoa(int(b.Interval / time.Second)), History: "1h", Trends: "0"})
			}
			spec.Hosts = append(spec.Hosts, hs)
		}
		if _, err := cat.Apply(ctx, spec); err != nil {
			return fmt.Errorf("cannot create the bench hosts: %w", err)
		}
	}
	return nil
}

// snmpMain runs `peregrine bench snmp`.
func snmpMain(ctx context.Context, args []string, stdout, stderr io.Writer, version string) int {
	fs := flag.NewFlagSet("bench snmp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), SNMPUsage); fs.PrintDefaults() }
	var b SNMPBench
	steps := fs.String("steps", "100,500,1000", "host (device) counts to step through, ascending")
	fs.IntVar(&b.ItemsPerHost, "items-per-host", 64, "SNMP items per host")
	fs.DurationVar(&b.Interval, "interval", 10*time.Second, "update interval of every item (whole seconds)")
	fs.DurationVar(&b.Warmup, "warmup", 0, "wait after adding a step's hosts (default interval + 2s)")
	fs.DurationVar(&b.Window, "window", 0, "measurement window per step (default 3 intervals)")
	fs.IntVar(&b.MaxInFlight, "max-in-flight", 20000, "poll.max_in_flight of the poller")
	fs.IntVar(&b.MaxOIDs, "max-oids", 64, "snmp.max_oids_per_request")
	fs.DurationVar(&b.Timeout, "timeout", 3*time.Second, "check timeout")
	report := fs.String("report", "", "report directory (default bench/reports/snmp-TIME)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	return runLocalBench(stdout, stderr, "snmp", args, version, *steps, *report, func(hosts []int, work string) (Section, error) {
		b.Hosts, b.Log = hosts, stderr
		return b.Run(ctx, work)
	})
}
