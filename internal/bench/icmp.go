package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/icmp"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// ICMPUsage is the text of `peregrine bench icmp -h`.
const ICMPUsage = `usage: peregrine bench icmp [flags]

Sweeps --live addresses that answer and --dead addresses that never do
with ICMP checks, all due at once, --rounds times, inside a network
namespace of its own: the command re-executes itself under
'unshare -rn' (a user and a network namespace; root inside is mapped to
the caller), where the live addresses are local routes on the
namespace's loopback (10.1.0.0/16) and the dead ones (10.3.0.0/16) are
routed into the loopback, which does not forward them: they vanish and
only the timeout tells. The namespace has no other interface, so no
packet leaves it.

Per round: the time until every check has its result, p50/p99 of the
results' times, checks/s, and the values checked: icmppingloss 0 for a
live address, icmppingloss 100 and icmppingsec 0 for a dead one (Zabbix's
defaults: 3 packets 1 s apart, 500 ms timeout, unless --key-params).

With --zabbix-target, the same addresses are then swept by a Zabbix
server running in the same namespace: --zabbix-start is run there first
(e.g. bench/zabbix-private.sh start, which starts a private zabbix_server
and its API), the same items are created through the API as simple
checks (icmppingloss[ADDR], icmppingsec[ADDR] on hosts of 500 items,
delay 1d), made due at once with "Execute now" (task.create), and the
time until each has a value is read back with history.get; then the hosts
are deleted and --zabbix-stop is run.

flags:
`

// ICMPBench is the icmp scenario.
type ICMPBench struct {
	Live, Dead int
	Rounds     int
	// KeyParams are the key parameters after the target (Zabbix's
	// <packets>,<interval>,<size>,<timeout>), the same on both servers.
	KeyParams string
	Rate      int // the checker's echo requests/s
	Zabbix    ZabbixInstance
	// ZabbixRounds, ZabbixTimeout: sweeps of the Zabbix server and the
	// bound of each.
	ZabbixRounds  int
	ZabbixTimeout time.Duration
	Log           io.Writer
}

// ZabbixInstance is a Zabbix server the scenario starts, measures
// through its API and stops.
type ZabbixInstance struct {
	Target, User, Password string
	Start, Stop            string // shell commands
	// Settle is the wait after creating the items: Zabbix's
	// configuration cache loads them every CacheUpdateFrequency.
	Settle time.Duration
	Name   string // label in the report
}

func (b *ICMPBench) defaults() error {
	if b.Live < 0 || b.Dead < 0 || b.Live+b.Dead == 0 || b.Live > 60000 || b.Dead > 60000 {
		return errors.New("bench icmp: --live and --dead must be 0..60000 and not both 0")
	}
	if b.Rounds <= 0 {
		b.Rounds = 3
	}
	if b.ZabbixRounds <= 0 {
		b.ZabbixRounds = 1
	}
	if b.ZabbixTimeout <= 0 {
		b.ZabbixTimeout = 7 * time.Minute
	}
	if b.Zabbix.Settle <= 0 {
		b.Zabbix.Settle = 15 * time.Second
	}
	if b.Zabbix.Name == "" {
		b.Zabbix.Name = "zabbix"
	}
	if b.Rate <= 0 {
		b.Rate = icmp.DefaultOptions().Rate
	}
	if b.Log == nil {
		b.Log = io.Discard
	}
	return nil
}

// liveAddr and deadAddr are the namespace's addresses: 250 per /24, from
// .1, so that no address is a network or broadcast one.
func liveAddr(i int) string { return fmt.Sprintf("10.1.%d.%d", 1+i/250, 1+i%250) }
func deadAddr(i int) string { return fmt.Sprintf("10.3.%d.%d", 1+i/250, 1+i%250) }

// icmpRoutes is the namespace's ip(8) batch: the loopback up, a local
// route per live address (the kernel answers for it, as for 127/8; 10,000
// local routes take well under a second where as many "address add" take
// 20 s), and the dead range routed into the loopback.
func icmpRoutes(live int) []string {
	lines := make([]string, 0, live+2)
	lines = append(lines, "link set lo up")
	for i := range live {
		lines = append(lines, "route add local "+liveAddr(i)+"/32 dev lo")
	}
	return append(lines, "route add 10.3.0.0/16 dev lo")
}

// icmpCheck is one check of the sweep and the value it must have.
type icmpCheck struct {
	addr, key, want string
}

// icmpChecks lists the sweep: icmppingloss of every live address, and
// icmppingloss and icmppingsec of every dead one.
func icmpChecks(live, dead int) []icmpCheck {
	cs := make([]icmpCheck, 0, live+2*dead)
	for i := range live {
		cs = append(cs, icmpCheck{liveAddr(i), "icmppingloss", "0"})
	}
	for i := range dead {
		a := deadAddr(i)
		cs = append(cs, icmpCheck{a, "icmppingloss", "100"}, icmpCheck{a, "icmppingsec", "0"})
	}
	return cs
}

// zabbixKey is the check's item key with the target in it.
func (c icmpCheck) zabbixKey(params string) string {
	if params == "" {
		return c.key + "[" + c.addr + "]"
	}
	return c.key + "[" + c.addr + "," + params + "]"
}

// ICMPColumns is the CSV header.
var ICMPColumns = SweepColumns

// netnsEnv marks the re-executed bench inside its namespace.
const netnsEnv = "PEREGRINE_BENCH_NETNS"

// Run sets up the namespace's routes (it must run inside one), sweeps
// with Peregrine's checker, then with the Zabbix instance if any.
func (b *ICMPBench) Run(ctx context.Context) (Section, error) {
	sec := Section{Title: "icmp: ICMP sweeps in a network namespace"}
	if err := b.defaults(); err != nil {
		return sec, err
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		return sec, errors.New("bench icmp: ip(8) is needed (Debian package iproute2)")
	}
	cmd := exec.CommandContext(ctx, ip, "-batch", "-")
	cmd.Stdin = strings.NewReader(strings.Join(icmpRoutes(b.Live), "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return sec, fmt.Errorf("bench icmp: ip -batch in the namespace: %v\n%s", err, out)
	}
	checks := icmpChecks(b.Live, b.Dead)
	table := Table{Header: sweepHeader}
	csv := &CSV{File: "icmp.csv", Header: ICMPColumns}
	m := selfmon.NewRegistry()
	opts := icmp.DefaultOptions()
	opts.Rate, opts.Metrics = b.Rate, m
	opts.Logger = slog.New(slog.NewTextHandler(b.Log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c := icmp.New(opts)
	defer c.Close()
	for round := 1; round <= b.Rounds; round++ {
		r, err := b.peregrineSweep(ctx, c, checks, round)
		if err != nil {
			return sec, err
		}
		tr, cr := sweepRow("peregrine", round, r)
		table.Rows, csv.Rows = append(table.Rows, tr), append(csv.Rows, cr)
		fmt.Fprintf(b.Log, "icmp peregrine round %d: %d checks in %.2f s (p50 %.2f s, p99 %.2f s), %d missing, %d wrong %s\n",
			round, r.Items, r.All.Seconds(), r.P50.Seconds(), r.P99.Seconds(), r.Missing, r.Wrong, r.Example)
	}
	sc := scrape(m)
	sec.Text = append(sec.Text, fmt.Sprintf("Peregrine: the ICMP checker of `peregrine serve` (one raw socket, echo requests at most %d/s), "+
		"all checks handed over at once in batches of 512 as the scheduler does; over all rounds %.0f echo requests, %.0f replies, %.0f lost.",
		b.Rate, sc["peregrine_poll_icmp_requests_total"], sc["peregrine_poll_icmp_replies_total"], sc["peregrine_poll_icmp_lost_total"]))
	if b.Zabbix.Target != "" {
		if err := b.zabbixSweeps(ctx, checks, &table, csv, &sec); err != nil {
			sec.Tables, sec.CSV = append(sec.Tables, table), csv
			return sec, err
		}
	}
	sec.Tables, sec.CSV = append(sec.Tables, table), csv
	sec.Text = append(sec.Text, fmt.Sprintf("%d live addresses (icmppingloss each) and %d dead ones (icmppingloss and icmppingsec each): %d checks, key parameters %q "+
		"(empty: Zabbix's defaults, 3 packets 1 s apart, 500 ms timeout). \"All done after\": from the moment every check is due to the last result; "+
		"p50/p99 over the checks' results; wrong: a value other than loss 0 (live), loss 100 or 0 s (dead).", b.Live, b.Dead, len(checks), b.KeyParams))
	return sec, nil
}

// peregrineSweep runs one sweep through the checker.
func (b *ICMPBench) peregrineSweep(ctx context.Context, c *icmp.Checker, checks []icmpCheck, round int) (SweepResult, error) {
	r := SweepResult{Items: len(checks)}
	var mu sync.Mutex
	got := make([]*poll.Result, len(checks))
	left := len(checks)
	done := make(chan struct{})
	base := uint64(round) << 32
	report := func(res *poll.Result) {
		mu.Lock()
		defer mu.Unlock()
		i := int(res.ItemID - base)
		if i < 0 || i >= len(got) || got[i] != nil {
			return
		}
		got[i] = res
		if left--; left == 0 {
			close(done)
		}
	}
	batch := make([]poll.Check, len(checks))
	start := time.Now()
	for i, ch := range checks {
		key := ch.key
		if b.KeyParams != "" {
			key += "[," + b.KeyParams + "]"
		}
		batch[i] = poll.Check{ItemID: base + uint64(i), Key: key, Addr: ch.addr + ":10050", Due: start}
	}
	for i := 0; i < len(batch); i += 512 {
		c.Check(ctx, batch[i:min(i+512, len(batch))], report)
	}
	select {
	case <-done:
	case <-ctx.Done():
		return r, ctx.Err()
	}
	lat := make([]time.Duration, 0, len(got))
	for i, res := range got {
		lat = append(lat, res.Clock.Sub(start))
		if res.Status != poll.OK {
			r.Missing++
			continue
		}
		if string(res.Value) != checks[i].want {
			if r.Wrong++; r.Example == "" {
				r.Example = fmt.Sprintf("%s on %s = %q, want %s", checks[i].key, checks[i].addr, res.Value, checks[i].want)
			}
		}
	}
	slices.Sort(lat)
	r.All = time.Since(start)
	r.First, r.P50, r.P99 = lat[0], lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	return r, nil
}

// zabbixSweeps starts the Zabbix instance, sweeps with it and stops it.
func (b *ICMPBench) zabbixSweeps(ctx context.Context, checks []icmpCheck, table *Table, csv *CSV, sec *Section) (err error) {
	z := &b.Zabbix
	c, stop, err := z.start(ctx, b.Log)
	if err != nil {
		return err
	}
	defer func() {
		if serr := stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	k := &Checks{Group: "Peregrine bench icmp", History: 0, Log: b.Log}
	for lo := 0; lo < len(checks); lo += 500 {
		h := CheckHost{Name: fmt.Sprintf("pb-icmp-%03d", lo/500), Iface: CheckIface{Type: 1, IP: "127.0.0.1", Port: "10050"}}
		for _, ch := range checks[lo:min(len(checks), lo+500)] {
			h.Items = append(h.Items, CheckItem{Key: ch.zabbixKey(b.KeyParams), Type: 3, ValueType: 0, Delay: "1d"})
		}
		k.Hosts = append(k.Hosts, h)
	}
	k.Expect = func(i int, v string) string {
		if zabbixNumber(v) != checks[i].want {
			return fmt.Sprintf("%s = %q, want %s", checks[i].zabbixKey(b.KeyParams), v, checks[i].want)
		}
		return ""
	}
	set, err := k.provision(ctx, c)
	if set != nil {
		defer func() {
			if cerr := k.cleanup(c, set); cerr != nil && err == nil {
				err = cerr
			}
		}()
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(b.Log, "icmp %s: %d items created; waiting %s for its configuration cache\n", z.Name, len(set.itemIDs), z.Settle)
	time.Sleep(z.Settle)
	for round := 1; round <= b.ZabbixRounds; round++ {
		r, err := k.sweep(ctx, c, set, b.ZabbixTimeout)
		if err != nil {
			return err
		}
		tr, cr := sweepRow(z.Name, round, r)
		table.Rows, csv.Rows = append(table.Rows, tr), append(csv.Rows, cr)
		fmt.Fprintf(b.Log, "icmp %s round %d: %d checks, all after %.2f s (first %.2f s, p50 %.2f s, p99 %.2f s; task.create %.2f s), %d missing, %d wrong %s\n",
			z.Name, round, r.Items, r.All.Seconds(), r.First.Seconds(), r.P50.Seconds(), r.P99.Seconds(), r.Requests.Seconds(), r.Missing, r.Wrong, r.Example)
	}
	sec.Text = append(sec.Text, fmt.Sprintf("%s: a Zabbix server started in the same namespace by %q, its API at %s; simple checks with the target in the key, "+
		"made due at once by \"Execute now\" (task.create type 6; its task manager picks tasks up every 5 s, which is in its times).", z.Name, z.Start, z.Target))
	return nil
}

// zabbixNumber normalises a stored float as Zabbix prints it ("100.0000",
// "0.0000") to the checker's form ("100", "0").
func zabbixNumber(v string) string {
	if strings.Contains(v, ".") {
		v = strings.TrimRight(strings.TrimRight(v, "0"), ".")
	}
	if v == "" || v == "-0" {
		return "0"
	}
	return v
}

// start runs the instance's start command, logs in (retrying while its
// API comes up) and returns the client and the stop function.
func (z *ZabbixInstance) start(ctx context.Context, log io.Writer) (*APIClient, func() error, error) {
	stop := func() error {
		if z.Stop == "" {
			return nil
		}
		cmd := exec.Command("sh", "-c", z.Stop)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("zabbix stop command %q: %w", z.Stop, err)
		}
		return nil
	}
	if z.Start != "" {
		cmd := exec.CommandContext(ctx, "sh", "-c", z.Start)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			stop()
			return nil, nil, fmt.Errorf("zabbix start command %q: %w", z.Start, err)
		}
	}
	c := NewAPIClient(z.Target, 10*time.Minute)
	user := z.User
	if user == "" {
		user = "Admin"
	}
	var err error
	for i := 0; i < 60; i++ {
		if err = c.Login(ctx, user, z.Password); err == nil {
			return c, stop, nil
		}
		time.Sleep(time.Second)
	}
	stop()
	return nil, nil, fmt.Errorf("cannot log in to %s: %w", z.Target, err)
}

// serverFlags adds the flags of a measured server's instance, each name
// prefixed (bench icmp: "zabbix-"; bench checks: none).
func serverFlags(fs *flag.FlagSet, z *ZabbixInstance, prefix, what string) {
	fs.StringVar(&z.Target, prefix+"target", "", "API URL of "+what)
	fs.StringVar(&z.User, prefix+"user", "Admin", "its API user")
	fs.StringVar(&z.Password, prefix+"password", "zabbix", "its API password")
	fs.StringVar(&z.Start, prefix+"start", "", "shell command starting it first (e.g. bench/zabbix-private.sh start)")
	fs.StringVar(&z.Stop, prefix+"stop", "", "shell command stopping it at the end")
	fs.DurationVar(&z.Settle, prefix+"settle", 15*time.Second, "wait after creating its items (Zabbix: CacheUpdateFrequency + margin)")
	fs.StringVar(&z.Name, prefix+"name", "zabbix", "its label in the report (e.g. zabbix-pingers-1)")
}

// icmpMain runs `peregrine bench icmp`.
func icmpMain(ctx context.Context, args []string, stdout, stderr io.Writer, version string) int {
	fs := flag.NewFlagSet("bench icmp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), ICMPUsage); fs.PrintDefaults() }
	var b ICMPBench
	fs.IntVar(&b.Live, "live", 10000, "addresses that answer")
	fs.IntVar(&b.Dead, "dead", 1000, "addresses that never answer")
	fs.IntVar(&b.Rounds, "rounds", 3, "Peregrine's sweeps")
	fs.StringVar(&b.KeyParams, "key-params", "", "key parameters after the target: packets,interval,size,timeout (empty: Zabbix's defaults)")
	fs.IntVar(&b.Rate, "rate", icmp.DefaultOptions().Rate, "the checker's echo requests per second")
	fs.IntVar(&b.ZabbixRounds, "zabbix-rounds", 1, "the Zabbix server's sweeps")
	fs.DurationVar(&b.ZabbixTimeout, "zabbix-timeout", 7*time.Minute, "bound of one Zabbix sweep")
	serverFlags(fs, &b.Zabbix, "zabbix-", "a Zabbix server to measure the same way (empty: Peregrine only)")
	report := fs.String("report", "", "report directory (default bench/reports/icmp-TIME)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if os.Getenv(netnsEnv) == "" {
		return reexecInNetns(ctx, "icmp", args, stdout, stderr)
	}
	return runLocalBench(stdout, stderr, "icmp", args, version, "1", *report, func(_ []int, _ string) (Section, error) {
		b.Log = stderr
		return b.Run(ctx)
	})
}

// reexecInNetns runs `peregrine bench NAME ARGS` again under
// `unshare -rn`: a new user namespace (root inside mapped to the caller,
// which grants raw sockets and ip(8) there) and a new network namespace
// with nothing but its own loopback.
func reexecInNetns(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		fmt.Fprintf(stderr, "peregrine bench %s: unshare(1) is needed (Debian package util-linux)\n", name)
		return 1
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "peregrine bench %s: %v\n", name, err)
		return 1
	}
	cmd := exec.CommandContext(ctx, unshare, append([]string{"-rn", exe, "bench", name}, args...)...)
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintf(stderr, "peregrine bench %s: cannot run it in a network namespace: %v\n", name, err)
		return 1
	}
	return 0
}
