package bench

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/peregrine-mon/peregrine/internal/bench/sim/agentsim"
	"github.com/peregrine-mon/peregrine/internal/bench/sim/snmpsim"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/agent"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// PollUsage is the text of `peregrine bench poll -h`.
const PollUsage = `usage: peregrine bench poll [flags]
       peregrine bench poll --target http://127.0.0.1:10088/api_jsonrpc.php --trapper 127.0.0.1:10061 [flags]

Measures Peregrine's check scheduler and passive agent checker: a poller
(catalog, scheduler, agent checker, pipeline; values are discarded after the
pipeline, write-scaling measures the store) polls simulated passive agents
run by a child process on 127.0.0.1 ports. Hosts × items at --interval are
stepped up (--steps, host counts); per step, after --warmup, the --window
measures checks/s done against the ideal (hosts × items / interval), the
peak of checks in flight, check latency p50/p99 (scheduled time to value
through the pipeline) and the poller's CPU per check (getrusage; the agents'
CPU is reported apart). Hosts share the --agents endpoints round robin (the
HistoryGluon method of many dummy hosts pointed at few agents).

With --target, a real Zabbix server polls the same agents instead: the bench
creates the hosts (agent interfaces on the agents) and items through its API
in host group peregrine-bench-poll, counts the checks the agents answer (the
counter both targets are reported by), asks the server's queue.get for the
items more than 5 s late, samples its CPU, and deletes what it created at the
end.

flags:
`

// PollBench is the poll scenario.
type PollBench struct {
	Hosts        []int // steps, ascending host counts
	ItemsPerHost int
	Interval     time.Duration
	Agents       int // simulated agent endpoints
	Warmup       time.Duration
	Window       time.Duration
	MaxInFlight  int
	// MaxInFlightBehind is poll.max_in_flight_behind (0: adaptive; -1:
	// off, MaxInFlight alone, to compare).
	MaxInFlightBehind int
	Timeout           time.Duration
	// StopBelow stops stepping once a step does less than this fraction
	// of the ideal (default 0.5).
	StopBelow float64
	// InProcessAgents runs the simulated agents in this process (tests:
	// a test binary cannot re-execute itself as the agents).
	InProcessAgents bool
	// ProfileDir, when set, receives CPU profiles of every step's window:
	// poller-HOSTS.pprof (this process) and agents-HOSTS.pprof (the
	// agents' child process), to tell the poller's cost from the fleet's.
	ProfileDir string
	// Target, when set, is a real Zabbix server polling the simulated
	// agents instead of Peregrine's in-process poller.
	Target *PollTarget
	// Overload, when above 0, adds one step after the others at this
	// many times the knee's offered rate (the knee: the step with the
	// most checks done among those that did at least 95 % of their
	// ideal): graceful overload is the done rate staying at the knee's
	// and no healthy interface blamed (issue 30).
	Overload float64
	// AgentDelay is how long each simulated agent takes to answer (0:
	// at once); with a small MaxInFlight it sets the poller's capacity
	// (MaxInFlight / AgentDelay checks/s), as tests do.
	AgentDelay time.Duration
	// Floor, when set, is measured first in the same run (bench
	// tcp-floor: a bare client and server, nothing of Peregrine), and
	// the knee is reported as a share of it (issue 30 item 5).
	Floor *TCPFloor
	// Steps receives every step's figures (tests).
	Steps []PollStepResult
	Log   io.Writer
}

// PollStepResult is one step's figures.
type PollStepResult struct {
	Hosts int
	// Overload marks the step run at Overload × the knee.
	Overload bool
	Ideal    float64 // checks/s offered
	Done     float64 // checks/s with a value (Peregrine), at the agents (a target)
	// Postponed: checks postponed because the server was behind, in the
	// window; Unavailable: interfaces that became unavailable in it;
	// InError: interfaces unreachable or unavailable at its end
	// (Peregrine only).
	Postponed, Unavailable, InError float64
	// PerCheck and AgentsPerCheck: CPU seconds per check done of the
	// poller (or target) and of the simulated agents.
	PerCheck, AgentsPerCheck float64
}

func (b *PollBench) defaults() error {
	if len(b.Hosts) == 0 {
		b.Hosts = []int{100, 200, 500, 1000, 2000}
	}
	if !slices.IsSorted(b.Hosts) || b.Hosts[0] <= 0 {
		return errors.New("bench poll: --steps must be ascending positive host counts")
	}
	if b.ItemsPerHost <= 0 {
		b.ItemsPerHost = 50
	}
	if b.Interval <= 0 {
		b.Interval = 10 * time.Second
	}
	if b.Interval%time.Second != 0 {
		return errors.New("bench poll: --interval must be whole seconds (Zabbix intervals are)")
	}
	if b.Agents <= 0 {
		b.Agents = min(b.Hosts[len(b.Hosts)-1], 1000)
	}
	if b.Warmup <= 0 {
		b.Warmup = b.Interval + 2*time.Second
		if b.Target != nil {
			b.Warmup += b.Target.ConfigDelay
		}
	}
	if b.Window <= 0 {
		b.Window = 3 * b.Interval
	}
	if b.MaxInFlight <= 0 {
		b.MaxInFlight = 20000
	}
	// Each check in flight holds a socket: stay under the open-files
	// limit (Go raises the soft limit to the hard one at start), keeping
	// room for the catalog and the runtime.
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Cur > 4096 {
		b.MaxInFlight = min(b.MaxInFlight, int(rl.Cur)-2048)
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

// PollColumns is the CSV header.
var PollColumns = []string{"hosts", "items", "interval_s", "ideal_cps", "done_cps", "ratio", "in_flight_peak",
	"p50_s", "p99_s", "poller_cpu_cores", "poller_cpu_us_per_check", "agents_cpu_cores", "errors", "at_agents_cps", "queue",
	"postponed", "interfaces_unavailable", "interfaces_in_error", "overload", "limit_hits", "limit_min"}

// discard is the pipeline's store: values are converted and batched by
// the pipeline, then dropped (the history store has its own benchmark).
type discard struct{}

func (discard) Write(context.Context, []history.Sample) error { return nil }

// agentsProc is the simulated agents' process (or, in tests, a fleet in
// this process).
type agentsProc struct {
	addrs []string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// snmpChild: the child is bench snmp-agents, whose counters are
	// requests and OIDs (counts), not bench poll-agents' one number
	// (count); both answer through childcount.go's protocol.
	snmpChild bool
	out       *bufio.Scanner
	fleet     *agentsim.Fleet
	snmp      *snmpsim.Fleet // bench snmp's devices, in this process
}

func startAgents(n int, inProcess bool, delay time.Duration) (*agentsProc, error) {
	if inProcess {
		f, err := agentsim.Start(n, func(int, string) agentsim.Reply { return agentsim.Reply{Value: "1", Delay: delay} })
		if err != nil {
			return nil, err
		}
		p := &agentsProc{fleet: f}
		for i := 0; i < n; i++ {
			p.addrs = append(p.addrs, f.Addr(i))
		}
		return p, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "bench", "poll-agents", strconv.Itoa(n), delay.String())
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
		return nil, fmt.Errorf("cannot start the simulated agents: %w", err)
	}
	sc := bufio.NewScanner(out)
	p := &agentsProc{cmd: cmd, stdin: stdin, out: sc}
	for sc.Scan() {
		line := sc.Text()
		if line == "ready" {
			return p, nil
		}
		p.addrs = append(p.addrs, line)
	}
	p.stop()
	return nil, errors.New("the simulated agents' process exited before it was ready")
}

func (p *agentsProc) cpu() time.Duration {
	if p.cmd == nil {
		return 0
	}
	st, ok := readProcStat(p.cmd.Process.Pid)
	if !ok {
		return 0
	}
	return st.cpu
}

// profile starts (path set) or stops (empty) a CPU profile in the
// agents' child process and waits for its acknowledgement.
func (p *agentsProc) profile(path string) error {
	if p.cmd == nil {
		return nil
	}
	if _, err := fmt.Fprintf(p.stdin, "profile %s\n", path); err != nil {
		return err
	}
	if !p.out.Scan() {
		return errors.New("the simulated agents' process exited")
	}
	if l := p.out.Text(); l != "ok" {
		return fmt.Errorf("the simulated agents' process: %s", l)
	}
	return nil
}

// count is the number of checks the agents have answered with a value:
// the counter every target is measured by.
func (p *agentsProc) count() (uint64, error) {
	switch {
	case p.fleet != nil:
		return p.fleet.Replies.Load(), nil
	case p.snmp != nil || p.snmpChild:
		return 0, nil // bench snmp counts through the poller only
	case p.cmd == nil:
		return 0, errors.New("BUG: count of agents that are not bench poll's")
	}
	vs, err := readCounts(p.stdin, p.out, 1, "the simulated agents")
	if err != nil {
		return 0, err
	}
	return vs[0], nil
}

func (p *agentsProc) stop() {
	if p.fleet != nil {
		p.fleet.Close()
		return
	}
	if p.snmp != nil {
		p.snmp.Close()
		return
	}
	p.stdin.Close() // the child exits when its stdin closes
	p.cmd.Wait()
}

// PollAgentsMain is the child process: n simulated agents; it prints
// their addresses, then "ready", and runs until its stdin closes. A line
// "profile PATH" on stdin starts a CPU profile into PATH, "profile "
// stops it; each is answered "ok" or the error. "count" is answered with
// the number of checks answered with a value so far (childcount.go).
func PollAgentsMain(args []string, stdout, stderr io.Writer) int {
	var n int
	var delay time.Duration
	err := errors.New("no N")
	if len(args) >= 1 {
		n, err = strconv.Atoi(args[0])
	}
	if err == nil && len(args) >= 2 {
		delay, err = time.ParseDuration(args[1])
	}
	if err != nil || n <= 0 || len(args) > 2 {
		fmt.Fprintln(stderr, "usage: peregrine bench poll-agents N [DELAY]")
		return 2
	}
	f, err := agentsim.Start(n, func(int, string) agentsim.Reply { return agentsim.Reply{Value: "1", Delay: delay} })
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
	var prof *os.File
	counts := func() []uint64 { return []uint64{f.Replies.Load()} }
	serveChild(os.Stdin, w, counts, func(line string) {
		path, ok := strings.CutPrefix(line, "profile ")
		if !ok {
			return
		}
		var err error
		if path == "" {
			if prof != nil {
				pprof.StopCPUProfile()
				err = prof.Close()
				prof = nil
			}
		} else if prof, err = os.Create(path); err == nil {
			if err = pprof.StartCPUProfile(prof); err != nil {
				prof.Close()
				prof = nil
			}
		}
		if err != nil {
			fmt.Fprintln(w, err)
		} else {
			fmt.Fprintln(w, "ok")
		}
		w.Flush()
	})
	if prof != nil {
		pprof.StopCPUProfile()
		prof.Close()
	}
	return 0
}

// Run measures every step and returns the report section.
func (b *PollBench) Run(ctx context.Context, dir string) (Section, error) {
	sec := Section{Title: "poll: passive agent checks"}
	if err := b.defaults(); err != nil {
		return sec, err
	}
	var floor TCPFloorResult
	if b.Floor != nil {
		// First, alone: the agents and the poller not yet started.
		var err error
		if floor, err = b.Floor.Run(ctx); err != nil {
			return sec, fmt.Errorf("tcp floor: %w", err)
		}
		fmt.Fprintf(b.Log, "tcp floor: %.0f connections/s with %d in flight, client %.1f µs + server %.1f µs of CPU per connection\n",
			floor.PerSecond, b.Floor.Conns, float64(floor.ClientCPUPerConn)/1e3, float64(floor.ServerCPUPerConn)/1e3)
	}
	agents, err := startAgents(b.Agents, b.InProcessAgents, b.AgentDelay)
	if err != nil {
		return sec, err
	}
	defer agents.stop()
	var provision func(from, to int) error
	var measure func() (pollStep, error)
	name := "peregrine"
	if b.Target != nil {
		name = b.Target.Name
		sec.Title += " — " + name
		z, err := b.startZabbix(ctx)
		if err != nil {
			return sec, err
		}
		defer func() {
			// A background context: an interrupted run still leaves
			// the server as it found it.
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			if cerr := z.cleanup(cctx); cerr != nil {
				fmt.Fprintf(b.Log, "poll: cannot delete the bench hosts on %s (delete host group %q by hand): %v\n", b.Target.APIURL, pollGroup, cerr)
			}
		}()
		provision = func(from, to int) error { return z.provision(ctx, b, from, to, agents.addrs) }
		measure = func() (pollStep, error) { return z.measure(ctx, b, agents) }
	} else {
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
		rt := itemstate.New()
		behind := b.MaxInFlightBehind
		if behind < 0 {
			behind = b.MaxInFlight
		}
		s, err := poll.New(poll.Options{
			Catalog: cat, ItemStates: rt, Metrics: m, Logger: log,
			Submit:      func(v []history.Sample) error { return p.Submit(v, pipeline.NewTicket()) },
			MaxInFlight: b.MaxInFlight, MaxInFlightBehind: behind, DefaultTimeout: b.Timeout,
			Checkers: map[catalog.ItemType]poll.CheckerSpec{catalog.ZabbixAgent: {Checker: agent.New(agent.Options{Metrics: m, Logger: log})}},
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
		provision = func(from, to int) error { return b.provision(ctx, cat, from, to, agents.addrs) }
		measure = func() (pollStep, error) {
			r, err := b.measure(ctx, m, agents, s)
			for _, h := range cat.Snapshot().Hosts() {
				if i := h.MainInterface(catalog.InterfaceAgent); i != nil {
					if a, _ := rt.Availability(i.ID); a.ErrorsFrom != 0 || a.Available == 2 {
						r.inError++
					}
				}
			}
			return r, err
		}
	}

	csv := &CSV{File: "poll.csv", Header: PollColumns}
	table := Table{Header: []string{"hosts", "items", "ideal checks/s", "done checks/s", "of ideal", "answered at the agents/s", "queue (> 5 s late)", "in flight (peak)", "latency p50", "latency p99", name + " CPU", name + " CPU per check", "agents CPU", "errors", "postponed (server behind)", "interfaces in error", "in-flight limit hits (lowest bound)"}}
	made := 0
	// step adds hosts up to n and measures; over reports whether
	// stepping should stop.
	step := func(n int, overload bool) (over bool, err error) {
		if n > made {
			if err := provision(made, n); err != nil {
				return true, err
			}
			made = n
		}
		n = made // hosts are never removed: the offered rate is made's
		select {
		case <-time.After(b.Warmup):
		case <-ctx.Done():
			return true, ctx.Err()
		}
		stopProf, err := b.startProfiles(agents, n)
		if err != nil {
			return true, err
		}
		r, err := measure()
		if perr := stopProf(); err == nil {
			err = perr
		}
		if err != nil {
			return true, err
		}
		items := n * b.ItemsPerHost
		ideal := float64(items) / b.Interval.Seconds()
		ratio := r.done / ideal
		label := human(float64(n))
		if overload {
			label += " (overload step)"
		}
		table.Rows = append(table.Rows, []string{label, human(float64(items)), human(ideal), human(r.done), pct(ratio),
			human(r.atAgents), human(r.queue), human(r.peak), secs(r.p50), secs(r.p99), fmt.Sprintf("%.2f cores", r.cpu), fmt.Sprintf("%.1f µs", r.perCheck*1e6),
			fmt.Sprintf("%.2f cores", r.agentsCPU), human(r.errors), human(r.postponed), human(r.inError), limitCell(r)})
		ov := "0"
		if overload {
			ov = "1"
		}
		csv.Rows = append(csv.Rows, []string{fi(int64(n)), fi(int64(items)), fi(int64(b.Interval / time.Second)), f(ideal), f(r.done), f(ratio),
			f(r.peak), f(r.p50), f(r.p99), f(r.cpu), f(r.perCheck * 1e6), f(r.agentsCPU), f(r.errors), f(r.atAgents), f(r.queue),
			f(r.postponed), f(r.unavailable), f(r.inError), ov, f(r.limitHits), f(r.limitMin)})
		var agentsPer float64
		if r.done > 0 {
			agentsPer = r.agentsCPU / r.done
		}
		b.Steps = append(b.Steps, PollStepResult{Hosts: n, Overload: overload, Ideal: ideal, Done: r.done, Postponed: r.postponed, Unavailable: r.unavailable, InError: r.inError,
			PerCheck: r.perCheck, AgentsPerCheck: agentsPer})
		fmt.Fprintf(b.Log, "poll %s %d hosts × %d items at %s: %.0f checks/s of %.0f ideal (%.1f %%), %.0f/s at the agents, queue %.0f, in flight peak %.0f, p50 %s p99 %s, %s %.2f cores (%.1f µs/check), agents %.2f cores, %.0f postponed, %.0f interfaces in error\n",
			name, n, b.ItemsPerHost, b.Interval, r.done, ideal, 100*ratio, r.atAgents, r.queue, r.peak, secs(r.p50), secs(r.p99), name, r.cpu, r.perCheck*1e6, r.agentsCPU, r.postponed, r.inError)
		if !overload && b.Overload > 0 && ratio < 0.95 {
			// Past the knee: the overload step is next.
			return true, nil
		}
		if !overload && ratio < b.StopBelow {
			sec.Notes = append(sec.Notes, fmt.Sprintf("Stopped after %d hosts: %s did only %.0f %% of the ideal checks.", n, name, 100*ratio))
			return true, nil
		}
		return false, nil
	}
	for _, n := range b.Hosts {
		over, err := step(n, false)
		if err != nil {
			return sec, err
		}
		if over {
			break
		}
	}
	if b.Overload > 0 && len(b.Steps) > 0 {
		knee := kneeStep(b.Steps)
		n := int(math.Ceil(b.Overload * float64(knee.Hosts)))
		if _, err := step(n, true); err != nil {
			return sec, err
		}
		last := b.Steps[len(b.Steps)-1]
		sec.Notes = append(sec.Notes, fmt.Sprintf("Overload: the knee is %d hosts (%.0f checks/s done of %.0f offered); offered %g× that (%.0f checks/s), %s did %.0f checks/s, %.0f %% of the knee's, with %.0f checks postponed because it was behind, %.0f interfaces made unavailable and %.0f in error at the end.",
			knee.Hosts, knee.Done, knee.Ideal, b.Overload, last.Ideal, name, last.Done, 100*last.Done/max(knee.Done, 1e-9), last.Postponed, last.Unavailable, last.InError))
	}
	sec.CSV = csv
	sec.Tables = append(sec.Tables, table)
	if b.Floor != nil && len(b.Steps) > 0 {
		sec.Tables = append(sec.Tables, b.floorTable(floor, kneeStep(b.Steps), name))
	}
	sec.Text = append(sec.Text, fmt.Sprintf("Each host has %d passive agent items (unsigned, delay %s) on an agent interface; %d simulated agents (a child process) answer \"1\" to every key, hosts sharing them round robin. "+
		"Per step: %s warm-up, then a %s window. Answered at the agents = replies with a value the simulated agents sent in the window, the counter every target is measured by; "+
		"queue = the server's items overdue by more than 5 s at the end of the window (Peregrine: zabbix[queue]; Zabbix: queue.get, its Queue page).",
		b.ItemsPerHost, b.Interval, b.Agents, b.Warmup, b.Window))
	if b.Target == nil {
		sec.Text = append(sec.Text, "Done = checks with a value through the pipeline in the window; latency = the check's scheduled time to its value through the pipeline "+
			"(histogram buckets: the figure is the upper bound of the bucket holding the quantile); CPU in cores over the window (1 = one core busy), the poller's by getrusage.")
	} else {
		sec.Text = append(sec.Text, fmt.Sprintf("Done = answered at the agents (%s has no per-check latency or in-flight figure: n/a); CPU = the process tree listening on %s (its pollers, preprocessing and history syncers; not its database), from /proc.",
			name, b.Target.Trapper))
	}
	return sec, nil
}

// startProfiles starts the step's CPU profiles when ProfileDir is set
// and returns what stops them.
func (b *PollBench) startProfiles(agents *agentsProc, hosts int) (func() error, error) {
	if b.ProfileDir == "" {
		return func() error { return nil }, nil
	}
	pf, err := os.Create(filepath.Join(b.ProfileDir, fmt.Sprintf("poller-%d.pprof", hosts)))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, fmt.Errorf("cannot profile the poller: %w", err)
	}
	abs, _ := filepath.Abs(filepath.Join(b.ProfileDir, fmt.Sprintf("agents-%d.pprof", hosts)))
	if err := agents.profile(abs); err != nil {
		pprof.StopCPUProfile()
		pf.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return errors.Join(pf.Close(), agents.profile(""))
	}, nil
}

// provision adds hosts [from, to) with their interfaces and items.
func (b *PollBench) provision(ctx context.Context, cat *catalog.Catalog, from, to int, addrs []string) error {
	for start := from; start < to; start += 500 {
		var spec catalog.Spec
		for h := start; h < min(to, start+500); h++ {
			addr := addrs[h%len(addrs)]
			ip, port, _ := strings.Cut(addr, ":")
			hs := catalog.HostSpec{Host: fmt.Sprintf("pb-poll-%06d", h), Interfaces: []catalog.InterfaceSpec{{Type: "agent", IP: ip, Port: port}}}
			for i := 0; i < b.ItemsPerHost; i++ {
				hs.Items = append(hs.Items, catalog.ItemSpec{Key: "bench.item[" + strconv.Itoa(i) + "]", Type: "zabbix_agent", ValueType: "unsigned",
					Delay: strconv.Itoa(int(b.Interval / time.Second)), History: "1h", Trends: "0"})
			}
			spec.Hosts = append(spec.Hosts, hs)
		}
		if _, err := cat.Apply(ctx, spec); err != nil {
			return fmt.Errorf("cannot create the bench hosts: %w", err)
		}
	}
	return nil
}

type pollStep struct {
	done, peak, p50, p99, cpu, perCheck, agentsCPU, errors float64
	atAgents, queue                                        float64
	postponed, unavailable, inError                        float64
	// limitHits: turns the in-flight limit while behind held checks
	// back; limitMin: its lowest bound seen in the window (Peregrine).
	limitHits, limitMin float64
}

// limitCell shows the in-flight limit's hits and lowest bound.
func limitCell(r pollStep) string {
	if r.limitHits == 0 {
		return "0"
	}
	return fmt.Sprintf("%s (%s)", human(r.limitHits), human(r.limitMin))
}

// floorTable sets the knee beside the TCP floor measured in the same
// run: checks/s against bare connections/s, and CPU per check (poller +
// agents) against CPU per bare connection (client + server).
func (b *PollBench) floorTable(fl TCPFloorResult, knee PollStepResult, name string) Table {
	floorCPU := (fl.ClientCPUPerConn + fl.ServerCPUPerConn).Seconds()
	kneeCPU := knee.PerCheck + knee.AgentsPerCheck
	ratio := func(a, b float64) string {
		if b <= 0 {
			return "n/a"
		}
		return pct(a / b)
	}
	return Table{
		Header: []string{"the knee beside the TCP floor (same run)", "per second", "CPU per check or connection (both ends)", "client side", "server / agents side"},
		Rows: [][]string{
			{fmt.Sprintf("TCP floor (%d connections in flight, %d addresses)", b.Floor.Conns, b.Floor.Addrs), human(fl.PerSecond),
				fmt.Sprintf("%.1f µs", floorCPU*1e6), fmt.Sprintf("%.1f µs", fl.ClientCPUPerConn.Seconds()*1e6), fmt.Sprintf("%.1f µs", fl.ServerCPUPerConn.Seconds()*1e6)},
			{fmt.Sprintf("%s at the knee (%d hosts)", name, knee.Hosts), human(knee.Done), fmt.Sprintf("%.1f µs", kneeCPU*1e6),
				fmt.Sprintf("%.1f µs", knee.PerCheck*1e6), fmt.Sprintf("%.1f µs", knee.AgentsPerCheck*1e6)},
			{"knee / floor", ratio(knee.Done, fl.PerSecond), ratio(floorCPU, kneeCPU) + " (floor CPU / check CPU)", "", ""},
		},
	}
}

// kneeStep is the step with the most checks done among those that did
// at least 95 % of their ideal (the first step if none did).
func kneeStep(steps []PollStepResult) PollStepResult {
	k := steps[0]
	for _, s := range steps {
		if !s.Overload && s.Done >= 0.95*s.Ideal && s.Done > k.Done {
			k = s
		}
	}
	return k
}

// measure samples the poller's metrics over one window.
func (b *PollBench) measure(ctx context.Context, m *selfmon.Registry, agents *agentsProc, s *poll.Scheduler) (pollStep, error) {
	var r pollStep
	a0, err := agents.count()
	if err != nil {
		return r, err
	}
	m0 := scrape(m)
	s.TakeInFlightPeak()
	self0, ag0, t0 := SelfCPU(), agents.cpu(), time.Now()
	lowest := float64(s.InFlightLimit())
	tick := time.NewTicker(250 * time.Millisecond)
	end := time.After(b.Window)
sample:
	for {
		select {
		case <-tick.C:
			lowest = min(lowest, float64(s.InFlightLimit()))
		case <-end:
			break sample
		case <-ctx.Done():
			break sample
		}
	}
	tick.Stop()
	a1, err := agents.count()
	if err != nil {
		return r, err
	}
	r.peak = float64(s.TakeInFlightPeak())
	r.queue = float64(s.Queue().Total)
	m1 := scrape(m)
	wall := time.Since(t0).Seconds()
	ok := m1[`peregrine_poll_checks_total{result="ok"}`] - m0[`peregrine_poll_checks_total{result="ok"}`]
	r.done = ok / wall
	r.errors = m1[`peregrine_poll_checks_total{result="network_error"}`] - m0[`peregrine_poll_checks_total{result="network_error"}`] +
		m1[`peregrine_poll_checks_total{result="not_supported"}`] - m0[`peregrine_poll_checks_total{result="not_supported"}`]
	cpu := (SelfCPU() - self0).Seconds()
	r.cpu = cpu / wall
	if ok > 0 {
		r.perCheck = cpu / ok
	}
	r.agentsCPU = (agents.cpu() - ag0).Seconds() / wall
	r.p50, r.p99 = latencyQuantile(m0, m1, 0.5), latencyQuantile(m0, m1, 0.99)
	r.atAgents = float64(a1-a0) / wall
	const postponed = `peregrine_poll_checks_postponed_total{reason="server_behind"}`
	r.postponed = m1[postponed] - m0[postponed]
	r.unavailable = m1["peregrine_poll_interfaces_unavailable_total"] - m0["peregrine_poll_interfaces_unavailable_total"]
	const hits = `peregrine_poll_in_flight_limit_hits_total{reason="server_behind"}`
	r.limitHits = m1[hits] - m0[hits]
	r.limitMin = lowest
	return r, nil
}

// scrape reads every sample of the registry's text exposition.
func scrape(m *selfmon.Registry) map[string]float64 {
	var sb strings.Builder
	m.WriteText(&sb)
	out := map[string]float64{}
	for _, l := range strings.Split(sb.String(), "\n") {
		if l == "" || l[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		if v, err := strconv.ParseFloat(l[i+1:], 64); err == nil {
			out[l[:i]] = v
		}
	}
	return out
}

// latencyQuantile is the q-quantile of the check latency histogram's
// increase between two scrapes: the upper bound of the bucket holding it.
func latencyQuantile(m0, m1 map[string]float64, q float64) float64 {
	const prefix = `peregrine_poll_check_latency_seconds_bucket{le="`
	type bucket struct{ le, n float64 }
	var bs []bucket
	for k, v := range m1 {
		if s, ok := strings.CutPrefix(k, prefix); ok {
			le, err := strconv.ParseFloat(strings.TrimSuffix(s, `"}`), 64)
			if err != nil {
				le = math.Inf(1)
			}
			bs = append(bs, bucket{le, v - m0[k]})
		}
	}
	slices.SortFunc(bs, func(a, b bucket) int { return cmpFloat(a.le, b.le) })
	if len(bs) == 0 || bs[len(bs)-1].n == 0 {
		return math.NaN()
	}
	rank := q * bs[len(bs)-1].n
	for _, b := range bs {
		if b.n >= rank {
			return b.le
		}
	}
	return math.Inf(1)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pollMain runs `peregrine bench poll`.
func pollMain(ctx context.Context, args []string, stdout, stderr io.Writer, version string) int {
	fs := flag.NewFlagSet("bench poll", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), PollUsage); fs.PrintDefaults() }
	var b PollBench
	var floorT TCPFloor
	steps := fs.String("steps", "100,200,500,1000,2000", "host counts to step through, ascending")
	fs.IntVar(&b.ItemsPerHost, "items-per-host", 50, "passive agent items per host")
	fs.DurationVar(&b.Interval, "interval", 10*time.Second, "update interval of every item (whole seconds)")
	fs.IntVar(&b.Agents, "agents", 0, "simulated agent endpoints (default: hosts of the last step, at most 1000)")
	fs.DurationVar(&b.Warmup, "warmup", 0, "wait after adding a step's hosts (default interval + 2s; with --target also + --config-delay)")
	fs.DurationVar(&b.Window, "window", 0, "measurement window per step (default 3 intervals)")
	fs.IntVar(&b.MaxInFlight, "max-in-flight", 20000, "poll.max_in_flight of the poller")
	fs.IntVar(&b.MaxInFlightBehind, "max-in-flight-behind", 0, "poll.max_in_flight_behind of the poller (0: adaptive; -1: no limit while behind, to compare)")
	fs.DurationVar(&b.Timeout, "timeout", 3*time.Second, "check timeout")
	fs.Float64Var(&b.Overload, "overload", 0, "after the steps, one more at this many times the knee's offered rate (the step with the most checks done at >= 95 % of its ideal), e.g. 2")
	fs.DurationVar(&b.AgentDelay, "agent-delay", 0, "how long each simulated agent takes to answer")
	floor := fs.Bool("floor", false, "measure bench tcp-floor first in the same run and report the knee as a share of it")
	fs.IntVar(&floorT.Conns, "floor-conns", 256, "with --floor: connections in flight")
	fs.IntVar(&floorT.Addrs, "floor-addrs", 64, "with --floor: server addresses")
	fs.DurationVar(&floorT.Duration, "floor-duration", 10*time.Second, "with --floor: its measurement window")
	report := fs.String("report", "", "report directory (default bench/reports/poll-TIME)")
	fs.StringVar(&b.ProfileDir, "profile", "", "directory for CPU profiles of each step's window (poller-HOSTS.pprof, agents-HOSTS.pprof)")
	var t PollTarget
	fs.StringVar(&t.APIURL, "target", "", "a real Zabbix server's API URL: its pollers poll the agents instead of Peregrine's in-process poller")
	fs.StringVar(&t.Trapper, "trapper", "", "that server's port, for queue.get and its CPU (default: the API's host, port 10051)")
	fs.StringVar(&t.User, "user", "Admin", "API user")
	fs.StringVar(&t.Password, "password", "zabbix", "API password")
	fs.StringVar(&t.Name, "name", "zabbix", "the target's label in the report")
	fs.DurationVar(&t.ConfigDelay, "config-delay", 10*time.Second, "how long the target takes to load new items (its CacheUpdateFrequency), added to the default warm-up")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *floor {
		b.Floor = &floorT
	}
	if t.APIURL != "" {
		if t.Trapper == "" {
			u, err := url.Parse(t.APIURL)
			if err != nil {
				fmt.Fprintf(stderr, "peregrine bench poll: --target: %v\n", err)
				return 2
			}
			t.Trapper = net.JoinHostPort(u.Hostname(), "10051")
		}
		b.Target = &t
	}
	return runLocalBench(stdout, stderr, "poll", args, version, *steps, *report, func(hosts []int, work string) (Section, error) {
		b.Hosts, b.Log = hosts, stderr
		return b.Run(ctx, work)
	})
}

// runLocalBench is what the in-process benches (poll, snmp) share once
// their flags are parsed: the --steps host counts, the report directory
// (default bench/reports/NAME-TIME), a temporary work directory, the run
// and its report, and the exit code.
func runLocalBench(stdout, stderr io.Writer, name string, args []string, version, steps, report string, run func(hosts []int, work string) (Section, error)) int {
	var hosts []int
	for _, s := range strings.Split(steps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			fmt.Fprintf(stderr, "peregrine bench %s: --steps: %q is not a host count\n", name, s)
			return 2
		}
		hosts = append(hosts, n)
	}
	dir := report
	if dir == "" {
		dir = filepath.Join("bench", "reports", name+"-"+time.Now().UTC().Format("20060102-150405"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "peregrine bench %s: cannot create the report directory (set --report): %v\n", name, err)
		return 1
	}
	work, err := os.MkdirTemp("", "peregrine-bench-"+name+"-")
	if err != nil {
		fmt.Fprintf(stderr, "peregrine bench %s: %v\n", name, err)
		return 1
	}
	defer os.RemoveAll(work)
	mach := DescribeMachine()
	sec, err := run(hosts, work)
	rep := &Report{Title: "Peregrine bench: " + name, Header: [][2]string{
		{"command", "peregrine bench " + name + " " + shellJoin(maskPassword(args))}, {"version", version},
		{"date", time.Now().UTC().Format(time.RFC3339)},
		{"machine", fmt.Sprintf("%d cores, %.1f GB, %s, kernel %s, %s, load %s at start", mach.Cores, mach.MemoryGB, mach.CPUModel, mach.Kernel, mach.Go, mach.LoadAvg)},
	}, Sections: []Section{sec}}
	if werr := rep.Write(dir); werr != nil {
		fmt.Fprintf(stderr, "peregrine bench %s: %v\n", name, werr)
		return 1
	}
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(dir, "report.md"))
	if err != nil {
		fmt.Fprintf(stderr, "peregrine bench %s: %v\n", name, err)
		return 1
	}
	return 0
}
