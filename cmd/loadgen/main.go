// Command loadgen drives a Zabbix trapper with sender data frames (the
// realistic values of bench.Data by default, -data constant for the old
// one-value-per-item data) and reports the values per second the server
// processed, with the CPU time the generator and the server each used.
//
//	loadgen -serve bin/peregrine -items-per-host 1000 -hosts 100 -duration 20s
//
// -steps gives every item a preprocessing chain and -triggers N gives it N
// last() triggers, so that the whole pipeline (trapper, preprocessing,
// history, value cache, trigger evaluation) runs under the load; the
// server's trigger counters are printed after the run.
//
// With -serve, loadgen creates a fresh data directory, writes the load's
// hosts and items into its catalog, starts `peregrine serve` on loopback
// ports as a child process, runs the load, and checks the server's own
// counters: every value the replies acknowledged must have been committed
// to the history store, none failed. Without -serve it sends to -addr.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/peregrine-mon/peregrine/internal/bench"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/server"
	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// load is what the flags describe: the items, how they are sent, and for
// how long. The sending itself is bench.Sender, the same generator
// `peregrine bench` uses.
type load struct {
	layout     bench.Layout
	sender     bench.Sender
	packet     int
	duration   time.Duration
	rate       float64
	persistent bool
	data       bench.Data
	// steps are the preprocessing steps every item gets (-steps).
	steps []catalog.PreprocSpec
	// triggers is how many last() triggers every item gets (-triggers).
	triggers int
}

func main() {
	l := load{layout: bench.Layout{Group: "Bench", HostPrefix: "bench-host-", KeyPrefix: "bench.item."}}
	flag.StringVar(&l.sender.Addr, "addr", "127.0.0.1:10051", "trapper address (ignored with -serve)")
	flag.IntVar(&l.layout.Hosts, "hosts", 100, "hosts")
	flag.IntVar(&l.layout.ItemsPerHost, "items-per-host", 1000, "trapper items per host")
	flag.IntVar(&l.packet, "packet", 1000, "values per frame (zabbix_sender uses 250)")
	flag.IntVar(&l.sender.Conns, "senders", 8, "concurrent connections")
	flag.DurationVar(&l.duration, "duration", 20*time.Second, "how long to send")
	flag.Float64Var(&l.rate, "rate", 0, "offered values per second (0 = as fast as possible)")
	flag.BoolVar(&l.persistent, "persistent", true, "keep connections open between frames")
	flag.BoolVar(&l.sender.Compress, "compress", false, "zlib-compress frames")
	shape := flag.String("data", "realistic", "values: realistic (seeded random walks, counters, sizes, status; random ns) or constant (one 2-decimal value per item, the data of the figures before issue 10)")
	flag.Uint64Var(&l.data.Seed, "seed", 1, "seed of the realistic values")
	serveBin := flag.String("serve", "", "path of the peregrine binary to start as the server under test")
	shards := flag.Int("shards", 0, "pipeline.shards for the started server")
	profile := flag.String("cpuprofile", "", "with -serve: write a CPU profile of the server during the load to this file")
	steps := flag.String("steps", "none", "preprocessing on every item: none, or mult+heartbeat (custom multiplier 8, then discard unchanged with heartbeat 1h: the typical two-step chain of the templates)")
	flag.IntVar(&l.triggers, "triggers", 0, "with -serve: last() triggers on every item (`last(/host/key)>T`, thresholds the values never reach, so each value is evaluated N times and makes no event)")
	historyYAML := flag.String("history", "", "with -serve: extra lines for the server's history section, e.g. 'flush_interval: 2s; retention_check: 2s' (';' separates lines)")
	trace := flag.String("trace", "", "with -serve: write a 3-second execution trace of the server during the load to this file")
	flag.Parse()
	var err error
	if l.data.Shape, err = bench.ParseShape(*shape); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen: -"+strings.TrimPrefix(err.Error(), "--"))
		os.Exit(2)
	}
	switch *steps {
	case "none":
	case "mult+heartbeat":
		l.steps = []catalog.PreprocSpec{{Type: "MULTIPLIER", Parameters: []string{"8"}}, {Type: "DISCARD_UNCHANGED_HEARTBEAT", Parameters: []string{"1h"}}}
	default:
		fmt.Fprintf(os.Stderr, "loadgen: -steps must be none or mult+heartbeat, not %q\n", *steps)
		os.Exit(2)
	}
	if l.triggers < 0 || l.triggers > 100 {
		fmt.Fprintf(os.Stderr, "loadgen: -triggers must be between 0 and 100, not %d\n", l.triggers)
		os.Exit(2)
	}
	if err := run(&l, *serveBin, *shards, *profile, *trace, *historyYAML); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// plan is one value per item per round for the load's duration, clocks
// starting a day ago (inside every retention, older than live data).
func (l *load) plan(now time.Time) (bench.SendPlan, error) {
	if l.layout.Hosts <= 0 || l.layout.ItemsPerHost <= 0 {
		return bench.SendPlan{}, fmt.Errorf("-hosts and -items-per-host must be positive, not %d and %d", l.layout.Hosts, l.layout.ItemsPerHost)
	}
	if l.duration <= 0 {
		return bench.SendPlan{}, fmt.Errorf("-duration must be positive, not %s", l.duration)
	}
	return bench.SendPlan{
		Items:        l.layout.ItemSet(l.layout.Hosts),
		PacketValues: l.packet,
		StartClock:   now.Add(-24 * time.Hour).Unix(),
		Duration:     l.duration,
		Rate:         l.rate,
		Data:         l.data,
	}, nil
}

// catalogSpec creates hosts [lo, hi) of the layout with their float
// trapper items, each with the preprocessing steps and triggers last()
// triggers, directly in a catalog file, for a server that is not running
// yet.
func catalogSpec(lay bench.Layout, lo, hi int, steps []catalog.PreprocSpec, triggers int) catalog.Spec {
	spec := catalog.Spec{Groups: []catalog.GroupSpec{{Name: lay.Group}}}
	for h := lo; h < hi; h++ {
		hs := catalog.HostSpec{Host: lay.HostName(h), Groups: []string{lay.Group}}
		hs.Items = make([]catalog.ItemSpec, lay.ItemsPerHost)
		for i := range hs.Items {
			hs.Items[i] = catalog.ItemSpec{Key: lay.Key(i), ValueType: "float", Preprocessing: steps}
			for j := range triggers {
				hs.Triggers = append(hs.Triggers, catalog.TriggerSpec{
					Name:       fmt.Sprintf("%s %d above threshold %d", lay.Key(i), j, j),
					Expression: fmt.Sprintf("last(/%s/%s)>%d", hs.Host, lay.Key(i), int64(j+1)*1e15),
				})
			}
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	return spec
}

func run(l *load, serveBin string, shards int, profile, trace, historyYAML string) error {
	ctx := context.Background()
	plan, err := l.plan(time.Now())
	if err != nil {
		return err
	}
	// Each frame's reply is checked either way; "no" opens a connection
	// per frame as zabbix_sender does.
	l.sender.Persistent = "no"
	if l.persistent {
		l.sender.Persistent = "yes"
	}
	var child *exec.Cmd
	var metricsURL string
	if serveBin != "" {
		dir, err := os.MkdirTemp("", "peregrine-loadgen-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		t0 := time.Now()
		cat, err := catalog.Open(ctx, catalog.Options{Path: filepath.Join(dir, "catalog.db"), ExprRefs: trigger.ItemRefs})
		if err != nil {
			return err
		}
		// 100 hosts per edit: one spec of a million items and triggers
		// needs several GB.
		for lo := 0; lo < l.layout.Hosts; lo += 100 {
			if _, err := cat.Apply(ctx, catalogSpec(l.layout, lo, min(lo+100, l.layout.Hosts), l.steps, l.triggers)); err != nil {
				cat.Close()
				return err
			}
		}
		cat.Close()
		fmt.Printf("catalog: %d items, %d triggers written in %.1fs\n", plan.Items.Len(), plan.Items.Len()*l.triggers, time.Since(t0).Seconds())
		cfg := fmt.Sprintf("data_dir: %s\ntrapper:\n  listen: 127.0.0.1:0\nhttp:\n  listen: 127.0.0.1:0\n  pprof: true\npipeline:\n  shards: %d\nlog:\n  level: info\n", dir, shards)
		if historyYAML != "" {
			cfg += "history:\n"
			for _, line := range strings.Split(historyYAML, ";") {
				cfg += "  " + strings.TrimSpace(line) + "\n"
			}
		}
		// No self-monitoring host: its values would count as committed
		// beside the load's, and have no triggers (the server creates it
		// on a data directory's first start unless this marker is there).
		if err := os.WriteFile(server.SelfHostMarkerPath(dir), []byte("loadgen\n"), 0o600); err != nil {
			return err
		}
		cfgPath := filepath.Join(dir, "peregrine.yaml")
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
			return err
		}
		child = exec.Command(serveBin, "serve", "-config", cfgPath)
		stderr, err := child.StderrPipe()
		if err != nil {
			return err
		}
		if err := child.Start(); err != nil {
			return err
		}
		defer func() {
			child.Process.Signal(syscall.SIGTERM)
			child.Wait()
		}()
		trapper, httpAddr, err := waitListening(stderr, 2*time.Minute)
		if err != nil {
			return err
		}
		l.sender.Addr, metricsURL = trapper, "http://"+httpAddr+"/metrics"
	}

	var server bench.ServerCPU
	if child != nil {
		server.PIDs = []int{child.Process.Pid}
	}
	selfBefore, serverBefore := bench.SelfCPU(), server.Sample()
	fmt.Printf("load: %d items, %d values/frame, %d connections, persistent=%s, compress=%v, rate=%.0f, %s\n",
		plan.Items.Len(), l.packet, l.sender.Conns, l.sender.Persistent, l.sender.Compress, l.rate, l.duration)
	fmt.Printf("data: %s\n", l.data.Describe())
	profDone := make(chan error, 1)
	if profile != "" && metricsURL != "" {
		go func() {
			secs := max(1, int(l.duration.Seconds())-2)
			profDone <- fetchTo(strings.TrimSuffix(metricsURL, "/metrics")+"/debug/pprof/profile?seconds="+strconv.Itoa(secs), profile)
		}()
	} else if trace != "" && metricsURL != "" {
		go func() {
			time.Sleep(2 * time.Second)
			profDone <- fetchTo(strings.TrimSuffix(metricsURL, "/metrics")+"/debug/pprof/trace?seconds=3", trace)
		}()
	} else {
		profDone <- nil
	}
	res, err := l.sender.Send(ctx, plan, nil)
	loadEnd := time.Now()
	if perr := <-profDone; perr != nil {
		fmt.Fprintln(os.Stderr, "cpu profile:", perr)
	}
	if err != nil {
		return err
	}
	genCPU := bench.SelfCPU() - selfBefore
	el := res.Elapsed.Seconds()
	fmt.Printf("sent %d values in %d frames over %.2fs: processed %d, failed %d, frame errors %d, reconnects %d\n",
		res.Sent, res.Frames, el, res.Processed, res.Failed, res.Errors, res.Reconnect)
	fmt.Printf("throughput: %.0f values/s processed (acknowledged after the store accepted them)\n", float64(res.Processed)/el)
	fmt.Printf("acknowledge latency (frame sent to reply): p50 %s, p99 %s\n", res.ReplyP50.Round(10*time.Microsecond), res.ReplyP99.Round(10*time.Microsecond))
	fmt.Printf("generator CPU: %.2fs (%.0f%% of one core)\n", genCPU.Seconds(), 100*genCPU.Seconds()/el)
	if res.FirstErr != nil {
		fmt.Printf("first error: %v\n", res.FirstErr)
	}
	if child != nil {
		srvCPU := server.Sample() - serverBefore
		fmt.Printf("server CPU: %.2fs (%.0f%% of one core), %.2f µs per value\n", srvCPU.Seconds(), 100*srvCPU.Seconds()/el, 1e6*srvCPU.Seconds()/float64(max(res.Processed, 1)))
		m, err := scrape(metricsURL)
		if err != nil {
			return err
		}
		committed := m["peregrine_pipeline_values_committed_total"]
		processed := m["peregrine_trapper_values_processed_total"]
		// With -steps, "discard unchanged" drops repeated values on
		// purpose: they are acknowledged and not stored.
		discarded := m["peregrine_preprocessing_discarded_total"]
		fmt.Printf("server counters: processed %.0f, committed to store %.0f, discarded by preprocessing %.0f, received %.0f\n", processed, committed, discarded, m["peregrine_trapper_values_received_total"])
		lost := float64(res.Sent) - committed - discarded
		fmt.Printf("lost (sent with a reply - committed - discarded): %.0f; failed: %d\n", lost, res.Failed)
		if l.triggers > 0 {
			// Evaluation runs behind ingest: what it did by the end of
			// the load and what was waiting, then how long it took to
			// catch up and the server's CPU for the whole, which is the
			// figure with triggers (the CPU above stops with the load).
			fmt.Printf("triggers at the end of the load: %.0f evaluations (%.2f per committed value), queued %.0f, backlogged %.0f, re-read %.0f, pending %.0f, backlog %.0f triggers\n",
				m["peregrine_trigger_evaluations_total"], m["peregrine_trigger_evaluations_total"]/max(committed, 1),
				m["peregrine_trigger_eval_queued_total"], m["peregrine_trigger_eval_backlogged_total"], m["peregrine_trigger_eval_reread_total"],
				m["peregrine_trigger_eval_pending"], m["peregrine_trigger_eval_backlog"])
			// The load's values only: a value discarded by
			// preprocessing is not committed and queues nothing.
			want := (float64(res.Processed) - discarded) * float64(l.triggers)
			caught, err := waitEvaluated(metricsURL, want, 5*time.Minute)
			if err != nil {
				return err
			}
			all := server.Sample() - serverBefore
			fmt.Printf("triggers: %.0f of %.0f evaluations (one per value and trigger) done %.2fs after the load; server CPU load + catch-up %.2fs, %.2f µs per value\n",
				caught, want, time.Since(loadEnd).Seconds(), all.Seconds(), 1e6*all.Seconds()/float64(max(res.Processed, 1)))
		}
		if lost != 0 || res.Failed != 0 || res.Errors != 0 || float64(res.Processed) != committed+discarded {
			return fmt.Errorf("not a clean run: lost %.0f, failed %d, frame errors %d", lost, res.Failed, res.Errors)
		}
	}
	return nil
}

// waitEvaluated polls the server's counters until want trigger
// evaluations were made with nothing pending or backlogged, or until
// timeout; it returns the evaluations made.
func waitEvaluated(metricsURL string, want float64, timeout time.Duration) (float64, error) {
	deadline := time.Now().Add(timeout)
	for {
		m, err := scrape(metricsURL)
		if err != nil {
			return 0, err
		}
		n := m["peregrine_trigger_evaluations_total"]
		if n >= want && m["peregrine_trigger_eval_pending"] == 0 && m["peregrine_trigger_eval_backlog"] == 0 {
			return n, nil
		}
		if time.Now().After(deadline) {
			return n, fmt.Errorf("trigger evaluation did not catch up within %s: %.0f of %.0f evaluations", timeout, n, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var listenRe = regexp.MustCompile(`msg="(trapper|http) listening".* addr=(\S+)`)

// waitListening reads the child's log until both listeners report their
// addresses, then keeps draining the log to our stderr.
func waitListening(r io.Reader, timeout time.Duration) (trapper, httpAddr string, err error) {
	found := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		var t, h string
		for sc.Scan() {
			line := sc.Text()
			if m := listenRe.FindStringSubmatch(line); m != nil {
				if m[1] == "trapper" {
					t = m[2]
				} else {
					h = m[2]
				}
				if t != "" && h != "" {
					found <- [2]string{t, h}
				}
			}
			if strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN") || strings.Contains(line, "compacted") || strings.Contains(line, "flushed") {
				fmt.Fprintln(os.Stderr, "server:", line)
			}
		}
	}()
	select {
	case a := <-found:
		return a[0], a[1], nil
	case <-time.After(timeout):
		return "", "", fmt.Errorf("server did not report its listeners within %s", timeout)
	}
}

func scrape(url string) (map[string]float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			v, _ := strconv.ParseFloat(line[i+1:], 64)
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

func fetchTo(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
