package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// OverloadUsage is the text of `peregrine bench overload -h`.
const OverloadUsage = `usage: peregrine bench overload [flags]

Ingest at twice its capacity (issue 30): starts ` + "`peregrine serve`" + ` (this binary)
on a fresh data directory with small, stated ingest bounds (trapper memory
budget, connections, pipeline queue, history head; durable history with the
default fsync policy), creates trapper hosts and simulated proxies through
its API, then drives its trapper with three kinds of clients at once:
simulated senders (one connection per request, as zabbix_sender), the real
zabbix_sender (when it is in PATH) and simulated 6.0 proxies ("proxy data",
one request at a time each). Phases:

  capacity   closed loop (--cap-conns senders, the proxies and one
             zabbix_sender, each back to back): values/s acknowledged =
             the capacity of this mix (or --capacity)
  baseline   --base-rate × capacity, open loop: the normal ack latency
  overload   --factor × capacity, open loop, for --duration
  recovery   --base-rate × capacity for --recovery: how soon the ack
             latency is back to the baseline's

Open loop: requests start at the offered rate whether or not earlier ones
were answered, up to --max-outstanding at once (more are counted as shed
by the generator, not sent). Reported per phase: values offered,
acknowledged and answered failed per second, requests unanswered, the
acknowledge latency p50/p99/max, the server's peak RSS against the bound
its configuration sets, and the largest backlog of every stage from its
/metrics; at the end the values readable through history.get against
those acknowledged (lost = acknowledged but not stored).

flags:
`

// Overload is `peregrine bench overload`.
type Overload struct {
	// Bin is the peregrine binary to serve (default: this executable).
	Bin          string
	Hosts        int // trapper hosts of the simulated senders
	ItemsPerHost int
	PerRequest   int // values per simulated sender request
	Proxies      int // simulated proxies (0: none)
	ProxyShare   float64
	RealShare    float64 // share of the load sent by zabbix_sender (0: none)
	Capacity     float64 // values/s; 0 = measured
	CapConns     int
	CapTime      time.Duration
	BaseRate     float64
	BaseTime     time.Duration
	Factor       float64
	Duration     time.Duration
	Recovery     time.Duration
	// MaxOutstanding bounds the generator's requests in flight.
	MaxOutstanding int
	// Server bounds (written to its configuration).
	MaxBuffered    int64 // trapper.max_buffered_bytes
	MaxFrame       int64 // trapper.max_frame_size
	MaxConns       int   // trapper.max_connections
	QueueValues    int   // pipeline.queue_values
	Shards         int   // pipeline.shards
	MaxHeadValues  int   // history.max_head_values
	RequestTimeout time.Duration
	Log            io.Writer
	// Result is the run's outcome (tests).
	Result OverloadResult
}

// OverloadPhase is one phase's figures.
type OverloadPhase struct {
	Name                       string
	Wall                       time.Duration
	Offered                    float64 // values/s
	Acked, Failed              int64   // values
	Unanswered, Shed, Requests int64   // requests
	P50, P99, Max              time.Duration
	PeakRSS                    int64 // bytes, sampled
	Backlog                    map[string]float64
	// Slices: acknowledged values/s and ack p99 per 10 s of the phase,
	// by completion time (a collapse shows as a falling rate).
	Slices []OverloadSlice
	start  time.Time
	lat    []time.Duration
	done   []ackRecord
}

// OverloadSlice is 10 s of a phase.
type OverloadSlice struct {
	From     time.Duration // since the phase's start
	AckedVPS float64
	P99      time.Duration
}

// ackRecord is one answered request.
type ackRecord struct {
	at    time.Duration // completion, since its phase's start
	lat   time.Duration
	acked int64
}

// OverloadResult is the whole run.
type OverloadResult struct {
	Capacity       float64
	Phases         []OverloadPhase
	Acked, Stored  int64
	Lost           int64
	RSSBefore      int64
	PeakRSS        int64 // VmHWM at the end
	MemoryBound    int64
	RecoveredAfter time.Duration // -1: not within the recovery phase
	BacklogSeen    map[string]bool
	RealSender     bool
}

func (o *Overload) defaults() {
	set := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	set(&o.Hosts, 20)
	set(&o.ItemsPerHost, 100)
	set(&o.PerRequest, 100)
	set(&o.CapConns, 32)
	set(&o.MaxOutstanding, 1024)
	set(&o.MaxConns, 256)
	set(&o.QueueValues, 8192)
	set(&o.MaxHeadValues, 200000)
	if o.MaxFrame <= 0 {
		o.MaxFrame = 4 << 20
	}
	if o.MaxBuffered <= 0 {
		o.MaxBuffered = 32 << 20
	}
	if o.ProxyShare < 0 || o.Proxies == 0 {
		o.ProxyShare = 0
	}
	if o.CapTime <= 0 {
		o.CapTime = 20 * time.Second
	}
	if o.BaseRate <= 0 {
		o.BaseRate = 0.5
	}
	if o.BaseTime <= 0 {
		o.BaseTime = 20 * time.Second
	}
	if o.Factor <= 0 {
		o.Factor = 2
	}
	if o.Duration <= 0 {
		o.Duration = 5 * time.Minute
	}
	if o.Recovery <= 0 {
		o.Recovery = time.Minute
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

// overloadServer is the child `peregrine serve`.
type overloadServer struct {
	cmd            *exec.Cmd
	trapper, http  string
	password, data string
	logf           *os.File
}

var listenRe = regexp.MustCompile(`msg="(trapper|http) listening".* addr=(\S+)`)

func (o *Overload) startServer(dir string) (*overloadServer, error) {
	data := filepath.Join(dir, "data")
	cfg := fmt.Sprintf(`data_dir: %s
trapper:
  listen: 127.0.0.1:0
  max_connections: %d
  max_frame_size: %d
  max_buffered_bytes: %d
  timeout: 10s
http:
  listen: 127.0.0.1:0
  ui: false
pipeline:
  shards: %d
  queue_values: %d
  max_batch: %d
history:
  store: engine
  flush_interval: 10s
  max_head_values: %d
`, data, o.MaxConns, o.MaxFrame, o.MaxBuffered, o.Shards, o.QueueValues, min(o.QueueValues, 16384), o.MaxHeadValues)
	return startServe(o.Bin, dir, data, cfg, 2*time.Minute)
}

// startServe runs `peregrine serve` (bin, default this executable)
// with the configuration cfg written into dir, its log in
// dir/server.log, and waits up to wait until it logs its trapper and
// HTTP listeners (a cluster node binds its trapper once active) and
// writes the admin password into data.
func startServe(bin, dir, data, cfg string, wait time.Duration) (*overloadServer, error) {
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		bin = exe
	}
	path := filepath.Join(dir, "peregrine.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "-config", path)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	cmd.Stdout = logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("cannot start peregrine serve: %w", err)
	}
	s := &overloadServer{cmd: cmd, data: data, logf: logf}
	found := make(chan map[string]string, 1)
	go func() {
		m := map[string]string{}
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			logf.Write(append(sc.Bytes(), '\n'))
			if g := listenRe.FindStringSubmatch(sc.Text()); g != nil && len(m) < 2 {
				m[g[1]] = g[2]
				if len(m) == 2 {
					found <- m
				}
			}
		}
		close(found) // exited
	}()
	select {
	case m, ok := <-found:
		if !ok {
			s.stop()
			b, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			return nil, fmt.Errorf("peregrine serve exited: %s", bytes.TrimSpace(b))
		}
		s.trapper, s.http = m["trapper"], m["http"]
	case <-time.After(wait):
		s.stop()
		return nil, fmt.Errorf("peregrine serve did not report its listeners in %s (see %s)", wait, filepath.Join(dir, "server.log"))
	}
	for i := 0; i < 100; i++ {
		if pw, err := ReadPassword(filepath.Join(data, "admin-password")); err == nil && pw != "" {
			s.password = pw
			return s, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.stop()
	return nil, errors.New("peregrine serve wrote no admin password")
}

func (s *overloadServer) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	s.logf.Close()
}

// procKB reads a "Name: N kB" line of /proc/PID/status, in bytes.
func procKB(pid int, name string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n << 10
		}
	}
	return 0
}

// backlogGauges are the stages' backlogs /metrics shows, each summed
// over its labels: the trapper's request memory and connections, the
// pipeline shards' queues, the history head, trigger evaluation's queue.
var backlogGauges = []string{
	"peregrine_trapper_buffered_bytes",
	"peregrine_trapper_connections_active",
	"peregrine_pipeline_queue_values",
	"peregrine_history_head_values",
	"peregrine_trigger_eval_backlog",
}

// scrapeURL reads the gauges of backlogGauges from a /metrics URL.
func scrapeURL(url string) (map[string]float64, error) {
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || l[0] == '#' {
			continue
		}
		name := l
		if i := strings.IndexAny(l, "{ "); i > 0 {
			name = l[:i]
		}
		if !slices.Contains(backlogGauges, name) {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		if v, err := strconv.ParseFloat(l[i+1:], 64); err == nil {
			out[name] += v
		}
	}
	return out, sc.Err()
}

// overloadLoad is the clients' shared state.
type overloadLoad struct {
	o         *Overload
	trapper   string
	hosts     []string
	keys      []string
	realHosts []string // hosts only zabbix_sender sends to
	proxies   []*simProxy
	pb        *ProxyBench
	nsSeq     atomic.Int64
	out       atomic.Int64 // requests in flight
	mu        sync.Mutex
	phase     *OverloadPhase
	realOK    bool
	tmp       string
}

// record adds one request's outcome to the current phase.
func (l *overloadLoad) record(ph *OverloadPhase, acked, failed int64, d time.Duration, answered bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ph.Requests++
	if !answered {
		ph.Unanswered++
		return
	}
	ph.Acked += acked
	ph.Failed += failed
	ph.lat = append(ph.lat, d)
	ph.done = append(ph.done, ackRecord{at: time.Since(ph.start), lat: d, acked: acked})
}

// slices cuts the phase's answered requests into width-long slices by
// completion time.
func (ph *OverloadPhase) slices(width time.Duration) []OverloadSlice {
	// Whole slices; the last also takes the requests that ended after
	// the phase (those in flight at its end).
	n := max(1, int(ph.Wall/width))
	lat := make([][]time.Duration, n)
	acked := make([]int64, n)
	for _, r := range ph.done {
		i := min(int(r.at/width), n-1)
		lat[i] = append(lat[i], r.lat)
		acked[i] += r.acked
	}
	out := make([]OverloadSlice, n)
	for i := range out {
		w := width
		if i == n-1 {
			w = max(width, ph.Wall-time.Duration(i)*width)
		}
		out[i] = OverloadSlice{From: time.Duration(i) * width, AckedVPS: float64(acked[i]) / max(w.Seconds(), 1e-3), P99: durQuantile(lat[i], 0.99)}
	}
	return out
}

// senderRequest sends one simulated zabbix_sender request: PerRequest
// values of one host's items, each with its own clock and ns.
func (l *overloadLoad) senderRequest(ph *OverloadPhase, rng *mrand.Rand) {
	o := l.o
	host := l.hosts[rng.IntN(len(l.hosts))]
	var b bytes.Buffer
	b.WriteString(`{"request":"sender data","data":[`)
	now := time.Now()
	for i := 0; i < o.PerRequest; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		ns := l.nsSeq.Add(1) % 1_000_000_000
		fmt.Fprintf(&b, `{"host":%q,"key":%q,"value":"%d","clock":%d,"ns":%d}`, host, l.keys[rng.IntN(len(l.keys))], rng.IntN(1000), now.Unix(), ns)
	}
	b.WriteString(`]}`)
	t0 := time.Now()
	processed, failed, err := l.exchange(zbx.AppendFrame(nil, b.Bytes(), zbx.FlagProtocol), o.PerRequest)
	l.record(ph, processed, failed, time.Since(t0), err == nil)
}

// exchange is one request on its own connection.
func (l *overloadLoad) exchange(frame []byte, n int) (processed, failed int64, err error) {
	conn, err := net.DialTimeout("tcp", l.trapper, l.o.RequestTimeout)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(l.o.RequestTimeout))
	if _, err := conn.Write(frame); err != nil {
		return 0, 0, err
	}
	_, reply, err := zbx.NewReader(conn, zbx.ReaderOptions{}).ReadFrame()
	if err != nil {
		return 0, 0, err
	}
	return parseReply(reply, n)
}

// realRequest runs zabbix_sender once: one value of every item of its
// hosts (it sends them 250 a request, as it does), clocks and ns given
// (-T -N), so that no two values share a timestamp.
func (l *overloadLoad) realRequest(ph *OverloadPhase, rng *mrand.Rand) {
	var b strings.Builder
	now := time.Now().Unix()
	for _, host := range l.realHosts {
		for _, k := range l.keys {
			fmt.Fprintf(&b, "%s %s %d %d %d\n", host, k, now, l.nsSeq.Add(1)%1_000_000_000, rng.IntN(1000))
		}
	}
	f, err := os.CreateTemp(l.tmp, "sender-*.txt")
	if err != nil {
		l.record(ph, 0, 0, 0, false)
		return
	}
	defer os.Remove(f.Name())
	f.WriteString(b.String())
	f.Close()
	host, port, _ := net.SplitHostPort(l.trapper)
	t0 := time.Now()
	out, _ := exec.Command("zabbix_sender", "-z", host, "-p", port, "-T", "-N", "-i", f.Name(),
		"-t", strconv.Itoa(int(l.o.RequestTimeout/time.Second))).CombinedOutput()
	d := time.Since(t0)
	// "... processed: 100; failed: 0; total: 100; ..." per request sent.
	var processed, failed int64
	answered := false
	for _, m := range senderSummaryRe.FindAllStringSubmatch(string(out), -1) {
		p, _ := strconv.ParseInt(m[1], 10, 64)
		fl, _ := strconv.ParseInt(m[2], 10, 64)
		processed, failed, answered = processed+p, failed+fl, true
	}
	l.record(ph, processed, failed, d, answered)
}

var senderSummaryRe = regexp.MustCompile(`processed: (\d+); failed: (\d+)`)

// proxyLoop is one simulated proxy: a request of rows at a time, each
// waiting for its reply (as zabbix_proxy's data sender), at perProxy
// values/s until ctx ends.
func (l *overloadLoad) proxyLoop(ctx context.Context, p *simProxy, perProxy float64) {
	batch := l.pb.Batch
	every := time.Duration(float64(batch) / perProxy * float64(time.Second))
	next := time.Now()
	var rows strings.Builder
	for ctx.Err() == nil {
		if d := time.Until(next); d > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
		}
		next = next.Add(every)
		if time.Until(next) < -every {
			next = time.Now() // behind: a real proxy sends what it has, it does not catch up in bursts
		}
		p.mu.Lock()
		ph := l.current()
		now := time.Now()
		rows.Reset()
		for i := 0; i < batch; i++ {
			j := p.rng.IntN(len(p.items))
			p.seq++
			if i > 0 {
				rows.WriteByte(',')
			}
			fmt.Fprintf(&rows, `{"id":%d,"itemid":%d,"clock":%d,"ns":%d,"value":"%d"}`, p.seq, p.items[j], now.Unix(), l.nsSeq.Add(1)%1_000_000_000, p.rng.IntN(1000))
		}
		t0 := time.Now()
		ok, err := l.pb.send(p, []byte(l.pb.request(p, rows.String(), now)))
		var acked, failed int64
		if ok {
			acked = int64(batch)
		} else if err != nil && strings.HasPrefix(err.Error(), "refused") {
			failed = int64(batch)
			err = nil
		}
		p.mu.Unlock()
		l.record(ph, acked, failed, time.Since(t0), err == nil)
	}
}

func (l *overloadLoad) current() *OverloadPhase {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.phase
}

// openLoop starts requests of the senders (simulated and real) at rate
// values/s until ctx ends, at most MaxOutstanding at once.
func (l *overloadLoad) openLoop(ctx context.Context, ph *OverloadPhase, rate float64, wg *sync.WaitGroup) {
	o := l.o
	realRate := 0.0
	if l.realOK {
		realRate = rate * o.RealShare
	}
	simRate := rate - realRate
	perSim := float64(o.PerRequest)
	perReal := float64(len(l.keys) * len(l.realHosts))
	start := time.Now()
	var simDone, realDone float64
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	rng := mrand.New(mrand.NewPCG(uint64(start.UnixNano()), 7))
	launch := func(f func(*OverloadPhase, *mrand.Rand)) {
		if l.out.Load() >= int64(o.MaxOutstanding) {
			l.mu.Lock()
			ph.Shed++
			l.mu.Unlock()
			return
		}
		l.out.Add(1)
		wg.Add(1)
		seed := rng.Uint64()
		go func() {
			defer wg.Done()
			defer l.out.Add(-1)
			f(ph, mrand.New(mrand.NewPCG(seed, 1)))
		}()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		el := time.Since(start).Seconds()
		for ; (simDone+1)*perSim <= simRate*el; simDone++ {
			launch(l.senderRequest)
		}
		for ; realRate > 0 && (realDone+1)*perReal <= realRate*el; realDone++ {
			launch(l.realRequest)
		}
	}
}

// closedLoop runs conns simulated senders back to back until ctx ends.
func (l *overloadLoad) closedLoop(ctx context.Context, ph *OverloadPhase, conns int) {
	var wg sync.WaitGroup
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rng := mrand.New(mrand.NewPCG(uint64(i), 3))
			for ctx.Err() == nil {
				l.senderRequest(ph, rng)
			}
		}(i)
	}
	wg.Wait()
}

// Run starts the server, provisions, runs the phases and checks the
// values acknowledged against those stored.
func (o *Overload) Run(ctx context.Context, dir string) (Section, error) {
	o.defaults()
	sec := Section{Title: "overload: ingest at " + strconv.FormatFloat(o.Factor, 'f', -1, 64) + "× its capacity"}
	res := &o.Result
	res.RecoveredAfter = -1
	srv, err := o.startServer(dir)
	if err != nil {
		return sec, err
	}
	defer srv.stop()
	pid := srv.cmd.Process.Pid
	api := "http://" + srv.http + "/api_jsonrpc.php"
	metricsURL := "http://" + srv.http + "/metrics"
	t := &Target{Name: "peregrine", APIURL: api, Trapper: srv.trapper, User: "Admin", Password: srv.password,
		Sender: Sender{Addr: srv.trapper, Persistent: "no", Timeout: o.RequestTimeout}}
	c := NewAPIClient(api, 5*time.Minute)
	if err := c.Login(ctx, t.User, t.Password); err != nil {
		return sec, fmt.Errorf("login: %w", err)
	}
	l := &overloadLoad{o: o, trapper: srv.trapper, tmp: dir}
	_, lookErr := exec.LookPath("zabbix_sender")
	l.realOK = o.RealShare > 0 && lookErr == nil
	res.RealSender = l.realOK
	realHosts := 0
	if l.realOK {
		realHosts = max(2, o.Hosts/10)
	}
	lay := Layout{Group: "overload", HostPrefix: "ovl-", Hosts: o.Hosts + realHosts, ItemsPerHost: o.ItemsPerHost, KeyPrefix: "v."}
	prov, err := Provision(ctx, c, t, lay, func(s string) { fmt.Fprintln(o.Log, "overload:", s) })
	if err != nil {
		return sec, fmt.Errorf("provision: %w", err)
	}
	set := lay.ItemSet(o.Hosts + realHosts)
	l.hosts, l.realHosts, l.keys = set.Hosts[:o.Hosts], set.Hosts[o.Hosts:], set.Keys
	hostIDs := slices.Clone(prov.HostIDs)
	if o.Proxies > 0 {
		l.pb = &ProxyBench{Target: *t, Prefix: "ovl-proxy", Proxies: o.Proxies, HostsPerProxy: 2, ItemsPerHost: o.ItemsPerHost, Batch: 500,
			Compress: true, SyncTimeout: 2 * time.Minute, Log: o.Log}
		proxies, _, err := l.pb.provision(ctx, c)
		if err != nil {
			return sec, fmt.Errorf("provision proxies: %w", err)
		}
		if err := l.pb.waitSynced(ctx, c, proxies); err != nil {
			return sec, err
		}
		l.proxies = proxies
		for _, p := range proxies {
			hostIDs = append(hostIDs, p.hostIDs...)
		}
	}
	from := time.Now().Unix() - 1

	// Sampler: RSS and the stages' backlogs, once a second.
	res.BacklogSeen = map[string]bool{}
	// The peak is the load's own: VmHWM reset to the current RSS
	// (Linux >= 4.0) once the server has its items and is idle.
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		fmt.Fprintf(o.Log, "overload: cannot reset the server's peak RSS (the peak includes its start): %v\n", err)
	}
	res.RSSBefore = procKB(pid, "VmRSS")
	sctx, stopSample := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tk := time.NewTicker(time.Second)
		defer tk.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-tk.C:
			}
			ph := l.current()
			if ph == nil {
				continue
			}
			rss := procKB(pid, "VmRSS")
			g, _ := scrapeURL(metricsURL)
			l.mu.Lock()
			ph.PeakRSS = max(ph.PeakRSS, rss)
			if ph.Backlog == nil {
				ph.Backlog = map[string]float64{}
			}
			for k, v := range g {
				res.BacklogSeen[k] = true
				ph.Backlog[k] = max(ph.Backlog[k], v)
			}
			l.mu.Unlock()
		}
	}()

	runPhase := func(name string, d time.Duration, rate float64, closed bool) *OverloadPhase {
		ph := &OverloadPhase{Name: name, Offered: rate, start: time.Now()}
		l.mu.Lock()
		l.phase = ph
		l.mu.Unlock()
		pctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		t0 := time.Now()
		var wg sync.WaitGroup
		if l.proxies != nil {
			// Closed loop: every proxy back to back, as the
			// senders.
			per := math.Inf(1)
			if !closed {
				per = rate * o.ProxyShare / float64(len(l.proxies))
			}
			for _, p := range l.proxies {
				wg.Add(1)
				go func() { defer wg.Done(); l.proxyLoop(pctx, p, per) }()
			}
			rate -= rate * o.ProxyShare
		}
		if closed {
			if l.realOK {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := mrand.New(mrand.NewPCG(9, 9))
					for pctx.Err() == nil {
						l.realRequest(ph, rng)
					}
				}()
			}
			l.closedLoop(pctx, ph, o.CapConns)
		} else {
			l.openLoop(pctx, ph, rate, &wg)
		}
		<-pctx.Done()
		ph.Wall = time.Since(t0)
		// Requests still in flight finish into their phase; the next
		// phase starts now.
		go func() { wg.Wait() }()
		return ph
	}
	capPh := runPhase("capacity (closed loop)", o.CapTime, 0, true)
	res.Capacity = o.Capacity
	if res.Capacity <= 0 {
		res.Capacity = float64(capPh.Acked) / capPh.Wall.Seconds()
	}
	capPh.Offered = res.Capacity
	fmt.Fprintf(o.Log, "overload: capacity %.0f values/s\n", res.Capacity)
	phases := []*OverloadPhase{capPh}
	phases = append(phases, runPhase("baseline", o.BaseTime, o.BaseRate*res.Capacity, false))
	fmt.Fprintf(o.Log, "overload: baseline done; offering %.0f values/s for %s\n", o.Factor*res.Capacity, o.Duration)
	phases = append(phases, runPhase("overload", o.Duration, o.Factor*res.Capacity, false))
	rec := runPhase("recovery", o.Recovery, o.BaseRate*res.Capacity, false)
	phases = append(phases, rec)
	// Let every request in flight end (each is bounded by RequestTimeout).
	for i := 0; l.out.Load() > 0 && i < int(o.RequestTimeout/(100*time.Millisecond))+10; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	stopSample()
	<-sampled
	res.PeakRSS = procKB(pid, "VmHWM")

	l.mu.Lock()
	for _, ph := range phases {
		ph.P50, ph.P99 = durQuantile(ph.lat, 0.5), durQuantile(ph.lat, 0.99)
		if len(ph.lat) > 0 {
			ph.Max = slices.Max(ph.lat)
		}
		res.Acked += ph.Acked
		ph.Slices = ph.slices(10 * time.Second)
	}
	l.mu.Unlock()
	res.RecoveredAfter = recovery(phases[1].P99, rec)

	// Every value acknowledged must be readable.
	n, _, _, err := WaitCount(ctx, func(ctx context.Context) (int64, error) {
		return c.HistoryCount(ctx, hostIDs, from, time.Now().Unix()+1)
	}, res.Acked, time.Second, 30*time.Second, 3*time.Minute, nil)
	if err != nil {
		return sec, fmt.Errorf("counting the stored values: %w", err)
	}
	res.Stored = n
	res.Lost = max(0, res.Acked-n)
	res.MemoryBound = o.memoryBound(res.RSSBefore)
	for _, ph := range phases {
		res.Phases = append(res.Phases, *ph)
	}
	o.report(&sec)
	return sec, nil
}

// recovery is how long after the recovery phase began the server was
// back to normal: the end of the first 5 s slice (by completion time) in
// which it acknowledged at least 90 % of the values offered and the ack
// p99 was within twice the baseline's (at least 50 ms); -1 if none was.
func recovery(baseP99 time.Duration, rec *OverloadPhase) time.Duration {
	limit := max(2*baseP99, 50*time.Millisecond)
	for _, sl := range rec.slices(5 * time.Second) {
		if sl.AckedVPS >= 0.9*rec.Offered && sl.P99 > 0 && sl.P99 <= limit {
			return sl.From + 5*time.Second
		}
	}
	return -1
}

// memoryBound is the peak RSS the configuration allows: what the server
// had before the load, plus the trapper's budget with the runtime's
// slack and 8 KiB per connection (internal/ingest/doc.go), plus the
// pipeline's queues and the history head at 64 bytes a value (a
// decoded sample with its share of the batch).
func (o *Overload) memoryBound(before int64) int64 {
	shards := o.Shards
	if shards <= 0 {
		shards = 2 // this machine's GOMAXPROCS in the runs here; the report says
	}
	return before + o.MaxBuffered + 48<<20 + int64(o.MaxConns)*8<<10 + int64(shards*o.QueueValues)*64 + int64(o.MaxHeadValues)*64
}

func (o *Overload) report(sec *Section) {
	res := &o.Result
	tb := Table{Header: []string{"phase", "seconds", "offered values/s", "acknowledged values/s", "answered failed values/s", "requests", "unanswered", "shed by the generator",
		"ack p50", "ack p99", "ack max", "peak RSS"}}
	csv := &CSV{File: "overload.csv", Header: []string{"phase", "wall_s", "offered_vps", "acked_vps", "failed_vps", "requests", "unanswered", "shed", "p50_s", "p99_s", "max_s", "peak_rss_bytes"}}
	for _, ph := range res.Phases {
		w := ph.Wall.Seconds()
		tb.Rows = append(tb.Rows, []string{ph.Name, fmt.Sprintf("%.0f", w), human(ph.Offered), human(float64(ph.Acked) / w), human(float64(ph.Failed) / w),
			human(float64(ph.Requests)), human(float64(ph.Unanswered)), human(float64(ph.Shed)), secs(ph.P50.Seconds()), secs(ph.P99.Seconds()), secs(ph.Max.Seconds()),
			fmt.Sprintf("%.0f MiB", float64(ph.PeakRSS)/(1<<20))})
		csv.Rows = append(csv.Rows, []string{ph.Name, f(w), f(ph.Offered), f(float64(ph.Acked) / w), f(float64(ph.Failed) / w), fi(ph.Requests), fi(ph.Unanswered), fi(ph.Shed),
			f(ph.P50.Seconds()), f(ph.P99.Seconds()), f(ph.Max.Seconds()), fi(ph.PeakRSS)})
	}
	bl := Table{Header: append([]string{"largest backlog (from /metrics)"}, backlogGauges...)}
	for _, ph := range res.Phases {
		row := []string{ph.Name}
		for _, g := range backlogGauges {
			if v, ok := ph.Backlog[g]; ok {
				row = append(row, human(v))
			} else {
				row = append(row, "not exposed")
			}
		}
		bl.Rows = append(bl.Rows, row)
	}
	sl := Table{Header: []string{"phase", "from (s)", "acknowledged values/s", "ack p99"}}
	for _, ph := range res.Phases {
		for _, x := range ph.Slices {
			sl.Rows = append(sl.Rows, []string{ph.Name, fmt.Sprintf("%.0f", x.From.Seconds()), human(x.AckedVPS), secs(x.P99.Seconds())})
		}
	}
	sec.Tables = append(sec.Tables, tb, bl, sl)
	sec.CSV = csv
	sec.Text = append(sec.Text, fmt.Sprintf("Server bounds: trapper.max_buffered_bytes %d MiB, trapper.max_frame_size %d MiB, trapper.max_connections %d, pipeline.queue_values %d per shard (shards %d, 0 = one per CPU), history.max_head_values %d; durable history (engine, fsync batch). "+
		"Clients: simulated senders of %d values a request on their own connection, %s, %s; open loop up to %d requests in flight.",
		o.MaxBuffered>>20, o.MaxFrame>>20, o.MaxConns, o.QueueValues, o.Shards, o.MaxHeadValues, o.PerRequest,
		map[bool]string{true: fmt.Sprintf("zabbix_sender for %.0f %% of the load", 100*o.RealShare), false: "no zabbix_sender (not in PATH or --real-share 0)"}[res.RealSender],
		map[bool]string{true: fmt.Sprintf("%d simulated proxies for %.0f %%", o.Proxies, 100*o.ProxyShare), false: "no proxies"}[o.Proxies > 0], o.MaxOutstanding))
	rec := "not within the recovery phase"
	if res.RecoveredAfter >= 0 {
		rec = fmt.Sprintf("within %.0f s", res.RecoveredAfter.Seconds())
	}
	sec.Notes = append(sec.Notes,
		fmt.Sprintf("Capacity %.0f values/s; %d values acknowledged, %d readable through history.get, %d acknowledged and lost.", res.Capacity, res.Acked, res.Stored, res.Lost),
		fmt.Sprintf("Memory: RSS %.0f MiB before the load, peak (VmHWM) %.0f MiB; the configuration's bound %.0f MiB (before + trapper budget + 48 MiB + 8 KiB a connection + pipeline queues and history head at 64 B a value).",
			float64(res.RSSBefore)/(1<<20), float64(res.PeakRSS)/(1<<20), float64(res.MemoryBound)/(1<<20)),
		"Back to normal after the load dropped (a 5 s slice with ≥ 90 % of the offered values acknowledged and the ack p99 within twice the baseline's, at least 50 ms): "+rec+".")
}

// overloadMain runs `peregrine bench overload`.
func overloadMain(ctx context.Context, args []string, stdout, stderr io.Writer, version string) int {
	fs := flag.NewFlagSet("bench overload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), OverloadUsage); fs.PrintDefaults() }
	var o Overload
	fs.IntVar(&o.Hosts, "hosts", 20, "trapper hosts of the simulated senders")
	fs.IntVar(&o.ItemsPerHost, "items-per-host", 100, "float trapper items per host")
	fs.IntVar(&o.PerRequest, "per-request", 100, "values per simulated sender request")
	fs.IntVar(&o.Proxies, "proxies", 4, "simulated proxies")
	fs.Float64Var(&o.ProxyShare, "proxy-share", 0.2, "share of the offered load the proxies send")
	fs.Float64Var(&o.RealShare, "real-share", 0.05, "share of the offered load zabbix_sender sends (0: none)")
	fs.Float64Var(&o.Capacity, "capacity", 0, "values/s taken as the capacity (0: measured in the capacity phase)")
	fs.IntVar(&o.CapConns, "cap-conns", 32, "closed-loop senders of the capacity phase")
	fs.DurationVar(&o.CapTime, "cap-time", 20*time.Second, "capacity phase")
	fs.Float64Var(&o.BaseRate, "base-rate", 0.5, "baseline and recovery load, a fraction of the capacity")
	fs.DurationVar(&o.BaseTime, "base-time", 20*time.Second, "baseline phase")
	fs.Float64Var(&o.Factor, "factor", 2, "overload, a multiple of the capacity")
	fs.DurationVar(&o.Duration, "duration", 5*time.Minute, "overload phase")
	fs.DurationVar(&o.Recovery, "recovery", time.Minute, "recovery phase")
	fs.IntVar(&o.MaxOutstanding, "max-outstanding", 1024, "requests the generator keeps in flight at most")
	fs.Int64Var(&o.MaxBuffered, "max-buffered-bytes", 32<<20, "the server's trapper.max_buffered_bytes")
	fs.Int64Var(&o.MaxFrame, "max-frame-size", 4<<20, "the server's trapper.max_frame_size")
	fs.IntVar(&o.MaxConns, "max-connections", 256, "the server's trapper.max_connections")
	fs.IntVar(&o.QueueValues, "queue-values", 8192, "the server's pipeline.queue_values")
	fs.IntVar(&o.Shards, "shards", 0, "the server's pipeline.shards (0: one per CPU)")
	fs.IntVar(&o.MaxHeadValues, "max-head-values", 200000, "the server's history.max_head_values")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", 30*time.Second, "a client's wait for its reply")
	fs.StringVar(&o.Bin, "bin", "", "peregrine binary to serve (default: this one)")
	report := fs.String("report", "", "report directory (default bench/reports/overload-TIME)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	return runLocalBench(stdout, stderr, "overload", args, version, "1", *report, func(_ []int, work string) (Section, error) {
		o.Log = stderr
		sec, err := o.Run(ctx, work)
		if err == nil && o.Result.Lost > 0 {
			err = fmt.Errorf("%d acknowledged values lost", o.Result.Lost)
		}
		if err == nil && o.Result.PeakRSS > o.Result.MemoryBound {
			err = fmt.Errorf("peak RSS %d MiB over the configuration's bound %d MiB", o.Result.PeakRSS>>20, o.Result.MemoryBound>>20)
		}
		return sec, err
	})
}
