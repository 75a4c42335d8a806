package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// DiscoveryUsage is the text of `peregrine bench discovery -h`.
const DiscoveryUsage = `usage: peregrine bench discovery --target URL [flags]

Network discovery's sweep time on any server with Zabbix 6.0's drule API
(Peregrine or a real Zabbix 6.0): listens with TCP on every other address
of --net (loopback only: 127.0.0.0/8; nothing is sent off the machine),
creates one discovery rule with one TCP check of --port over the whole
range, waits until the server's dservice.get shows every listening
address up, reports, and deletes the rule (its discovered hosts and
services with it). Run it against each server in turn, on a quiet
machine (bench/discovery.sh runs both sides from a clean clone).

flags:
`

// DiscoveryBench is one run of bench discovery.
type DiscoveryBench struct {
	Target  Target
	Net     *net.IPNet // inside 127.0.0.0/8
	Port    int
	Prefix  string        // the rule's name prefix
	Delay   string        // the rule's delay: one sweep is measured
	Timeout time.Duration // longest wait for the sweep
	Poll    time.Duration // dservice.get interval
	Out     io.Writer     // progress lines, nil: none
}

// DiscoveryResult is what bench discovery measured.
type DiscoveryResult struct {
	Version          string
	Addresses, Live  int
	FirstFound       time.Duration // rule created → first service up, by the bench's clock
	AllFound         time.Duration // rule created → every listening address up
	Span             time.Duration // first → last service's lastup, by the server's clock (1 s)
	Services, Hosts  int           // up services and discovered hosts at the end
	Unexpected       int           // up services on addresses that do not listen
	TimedOut         bool
	RuleName, Target string
}

// loopbackRange checks the range and lists its addresses.
func loopbackRange(n *net.IPNet) ([]net.IP, error) {
	ip4 := n.IP.To4()
	ones, bits := n.Mask.Size()
	if ip4 == nil || bits != 32 || ip4[0] != 127 || ones < 8 {
		return nil, fmt.Errorf("--net %s: want a range inside 127.0.0.0/8 (the bench never leaves loopback)", n)
	}
	if ones < 16 {
		return nil, fmt.Errorf("--net %s: at most a /16 (Zabbix 6.0 refuses wider masks)", n)
	}
	base := binary.BigEndian.Uint32(ip4)
	size := uint32(1) << (32 - ones)
	var out []net.IP
	for i := uint32(0); i < size; i++ {
		if ones < 31 && (i == 0 || i == size-1) {
			continue // network and broadcast addresses are not swept
		}
		ip := make(net.IP, 4)
		binary.BigEndian.PutUint32(ip, base+i)
		out = append(out, ip)
	}
	return out, nil
}

// Run listens, creates the rule, waits for the sweep and cleans up.
func (b *DiscoveryBench) Run(ctx context.Context) (DiscoveryResult, error) {
	res := DiscoveryResult{Target: b.Target.APIURL}
	addrs, err := loopbackRange(b.Net)
	if err != nil {
		return res, err
	}
	live := map[string]bool{}
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for i, ip := range addrs {
		if i%2 == 1 {
			continue
		}
		l, err := net.Listen("tcp4", net.JoinHostPort(ip.String(), strconv.Itoa(b.Port)))
		if err != nil {
			return res, fmt.Errorf("listen on %s port %d: %w", ip, b.Port, err)
		}
		lns = append(lns, l)
		live[ip.String()] = true
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	res.Addresses, res.Live = len(addrs), len(lns)
	c := NewAPIClient(b.Target.APIURL, time.Minute)
	if res.Version, err = c.Version(ctx); err != nil {
		return res, err
	}
	if err := c.Login(ctx, b.Target.User, b.Target.Password); err != nil {
		return res, err
	}
	res.RuleName = fmt.Sprintf("%s-%d", b.Prefix, time.Now().UnixNano())
	var created struct {
		IDs []string `json:"druleids"`
	}
	err = c.Call(ctx, "drule.create", map[string]any{"name": res.RuleName, "iprange": b.Net.String(), "delay": b.Delay,
		"dchecks": []any{map[string]any{"type": "8", "ports": strconv.Itoa(b.Port)}}}, &created)
	if err != nil {
		return res, err
	}
	if len(created.IDs) != 1 {
		return res, errors.New("drule.create returned no rule ID")
	}
	start := time.Now()
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = c.Call(cctx, "drule.delete", []string{created.IDs[0]}, nil)
	}()
	var last int
	for {
		var rows []struct {
			IP     string `json:"ip"`
			Status string `json:"status"`
			LastUp string `json:"lastup"`
		}
		if err := c.Call(ctx, "dservice.get", map[string]any{"druleids": created.IDs, "output": []string{"ip", "status", "lastup"}}, &rows); err != nil {
			return res, err
		}
		up, unexpected := 0, 0
		var lo, hi int64
		hosts := map[string]bool{}
		for _, r := range rows {
			if r.Status != "0" {
				continue
			}
			hosts[r.IP] = true
			if !live[r.IP] {
				unexpected++
				continue
			}
			up++
			t, _ := strconv.ParseInt(r.LastUp, 10, 64)
			if lo == 0 || t < lo {
				lo = t
			}
			hi = max(hi, t)
		}
		if up > 0 && res.FirstFound == 0 {
			res.FirstFound = time.Since(start)
		}
		res.Services, res.Hosts, res.Unexpected = up, len(hosts), unexpected
		res.Span = time.Duration(hi-lo) * time.Second
		if b.Out != nil && up != last {
			fmt.Fprintf(b.Out, "%6.1fs  %d of %d listening addresses found\n", time.Since(start).Seconds(), up, res.Live)
			last = up
		}
		if up >= res.Live {
			res.AllFound = time.Since(start)
			return res, nil
		}
		if time.Since(start) > b.Timeout {
			res.TimedOut = true
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(b.Poll):
		}
	}
}

// Write prints the result in the format docs/bench/discovery.md shows.
func (r DiscoveryResult) Write(w io.Writer, b *DiscoveryBench) {
	fmt.Fprintf(w, "target %s (API version %s), rule %s\n", r.Target, r.Version, r.RuleName)
	fmt.Fprintf(w, "range %s: %d addresses, %d listening on TCP port %d, %d refusing\n", b.Net, r.Addresses, r.Live, b.Port, r.Addresses-r.Live)
	fmt.Fprintf(w, "created -> first service up: %.1f s\n", r.FirstFound.Seconds())
	if r.TimedOut {
		fmt.Fprintf(w, "TIMED OUT after %s: %d of %d listening addresses found\n", b.Timeout, r.Services, r.Live)
	} else {
		fmt.Fprintf(w, "created -> all %d found: %.1f s\n", r.Live, r.AllFound.Seconds())
	}
	fmt.Fprintf(w, "sweep (first -> last service up, server clock, 1 s steps): %.0f s\n", r.Span.Seconds())
	fmt.Fprintf(w, "up services %d, discovered hosts %d, unexpected %d\n", r.Services, r.Hosts, r.Unexpected)
}

func discoveryMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench discovery", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), DiscoveryUsage); fs.PrintDefaults() }
	b := &DiscoveryBench{Out: stderr}
	var netw, passwordFile string
	fs.StringVar(&b.Target.APIURL, "target", "", "API URL of the server under test (required)")
	fs.StringVar(&b.Target.User, "user", "Admin", "API user")
	fs.StringVar(&b.Target.Password, "password", "", "API password")
	fs.StringVar(&passwordFile, "password-file", "", "file with the API password")
	fs.StringVar(&netw, "net", "127.1.0.0/21", "address range, CIDR inside 127.0.0.0/8; every other address listens")
	fs.IntVar(&b.Port, "port", 47001, "TCP port of the listeners and of the rule's check")
	fs.StringVar(&b.Prefix, "prefix", "bench-discovery", "name prefix of the rule")
	fs.StringVar(&b.Delay, "delay", "10s", "the rule's update interval: short, see docs/bench/discovery.md (the first sweep is measured)")
	fs.DurationVar(&b.Timeout, "timeout", 10*time.Minute, "longest wait for the sweep")
	fs.DurationVar(&b.Poll, "poll", time.Second, "dservice.get interval")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "peregrine bench discovery: "+format+"\n", a...)
		return 2
	}
	if b.Target.APIURL == "" {
		return fail("--target is required")
	}
	if passwordFile != "" {
		pw, err := ReadPassword(passwordFile)
		if err != nil {
			return fail("%v", err)
		}
		b.Target.Password = pw
	}
	_, n, err := net.ParseCIDR(strings.TrimSpace(netw))
	if err != nil {
		return fail("--net: %v", err)
	}
	b.Net = n
	if _, err := loopbackRange(n); err != nil {
		return fail("%v", err)
	}
	if b.Port <= 0 || b.Port > 65535 || b.Poll <= 0 || b.Timeout <= 0 {
		return fail("--port, --poll and --timeout must be positive (port at most 65535)")
	}
	res, err := b.Run(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "peregrine bench discovery: %v\n", err)
		return 1
	}
	res.Write(stdout, b)
	if res.TimedOut {
		return 1
	}
	return 0
}
