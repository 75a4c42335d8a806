package bench

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// ProxyUsage is the text of `peregrine bench proxy -h`.
const ProxyUsage = `usage: peregrine bench proxy --target URL [flags]

N simulated Zabbix 6.0 active proxies push "proxy data" to the server's
trapper as zabbix_proxy 6.0 sends it: history rows of the fields the
real proxy sends (id, itemid, clock, ns, value), --batch rows a request
(the proxy's own maximum is 1,000), zlib-compressed, one session token
and increasing row ids per proxy, every request waiting for its reply
before the next. The offered rate steps through --rates (values/s, split
evenly over the proxies); for each step: values/s acknowledged, requests
refused, and the server's CPU per value (the process trees listening on
the trapper and API ports and --cpu-ports, e.g. the peer's PostgreSQL),
also net of what it spends idle (measured over one step before the
first).
At the end, the values readable through history.get against those
acknowledged.

The proxies, their hosts (--hosts-per-proxy each) and trapper items
(--items-per-host each, float) are created through the API under
--prefix, and deleted after the run unless --keep.

examples:
  peregrine bench proxy --target http://127.0.0.1:8080/api_jsonrpc.php \
      --password-file data/admin-password
  peregrine bench proxy --target http://127.0.0.1:10088/api_jsonrpc.php \
      --trapper 127.0.0.1:10061 --password zabbix --cpu-ports 55432 --prefix s5px-bench

flags:
`

// ProxyBench is the configuration of `peregrine bench proxy`.
type ProxyBench struct {
	Target        Target
	Prefix        string
	Proxies       int
	HostsPerProxy int
	ItemsPerHost  int
	Batch         int
	Rates         []float64
	Step          time.Duration
	Compress      bool
	Keep          bool
	SyncTimeout   time.Duration
	DrainTimeout  time.Duration
	Log           io.Writer
}

// ProxyStep is one rate step's result.
type ProxyStep struct {
	Offered    float64
	Acked      int64 // values in requests answered success
	Refused    int64 // requests answered failed or unanswered
	Wall       time.Duration
	CPU        CPUUse
	Behind     int64 // requests sent late (the proxy could not keep the pace)
	ReplyP50   time.Duration
	ReplyP99   time.Duration
	FirstError string
}

// PerSecond is the acknowledged rate.
func (s ProxyStep) PerSecond() float64 { return float64(s.Acked) / s.Wall.Seconds() }

// CPUPerValue is the server's CPU per acknowledged value.
func (s ProxyStep) CPUPerValue() time.Duration {
	if s.Acked == 0 || !s.CPU.Measured {
		return 0
	}
	return time.Duration(s.CPU.Server * s.Wall.Seconds() / float64(s.Acked) * 1e9)
}

// NetCPUPerValue is CPUPerValue less what the server spends idle.
func (s ProxyStep) NetCPUPerValue(idleCores float64) time.Duration {
	if s.Acked == 0 || !s.CPU.Measured {
		return 0
	}
	return time.Duration(max(0, s.CPU.Server-idleCores) * s.Wall.Seconds() / float64(s.Acked) * 1e9)
}

// ProxyResult is the whole run.
type ProxyResult struct {
	Steps          []ProxyStep
	Acked          int64
	Readable       int64
	ReadableAfter  time.Duration
	ServerProcs    string
	IdleCores      float64 // the server's CPU over one step with nothing sent
	ProvisionTook  time.Duration
	ItemsPerProxy  int
	TotalItems     int
	CompressedFrac float64 // compressed bytes / raw bytes of the last request
}

type simProxy struct {
	// mu is held for a whole request: one at a time, as a real proxy's
	// data sender (the overload bench's phases overlap by the requests
	// still in flight).
	mu      sync.Mutex
	name    string
	id      string
	session string
	items   []uint64
	hostIDs []string
	seq     uint64
	rng     *mrand.Rand
	walk    []float64
}

// Run provisions, steps the rates and cleans up.
func (b *ProxyBench) Run(ctx context.Context) (ProxyResult, error) {
	var res ProxyResult
	c := NewAPIClient(b.Target.APIURL, 5*time.Minute)
	if err := c.Login(ctx, b.Target.User, b.Target.Password); err != nil {
		return res, fmt.Errorf("login: %w", err)
	}
	t0 := time.Now()
	proxies, groupID, err := b.provision(ctx, c)
	if len(proxies) > 0 && !b.Keep {
		defer b.cleanup(c, proxies, groupID)
	}
	if err != nil {
		return res, err
	}
	res.ProvisionTook = time.Since(t0)
	res.ItemsPerProxy = b.HostsPerProxy * b.ItemsPerHost
	res.TotalItems = res.ItemsPerProxy * len(proxies)
	if err := b.waitSynced(ctx, c, proxies); err != nil {
		return res, err
	}
	res.ServerProcs = b.Target.ServerCPU.Describe()
	// The server's CPU with nothing sent, over one step: what it spends
	// anyway (its own polling, housekeeping; other users of a shared
	// server), subtracted in the net figure.
	idle := StartCPU(b.Target.ServerCPU)
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(b.Step):
	}
	res.IdleCores = idle.Stop().Server
	from := time.Now().Unix() - 1
	for _, rate := range b.Rates {
		st := b.step(ctx, proxies, rate)
		res.Steps = append(res.Steps, st)
		res.Acked += st.Acked
		fmt.Fprintf(b.Log, "rate %.0f: %.0f values/s acknowledged, %d refused, server %.2f cores, %v/value\n", rate, st.PerSecond(), st.Refused, st.CPU.Server, st.CPUPerValue())
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
	}
	var hostIDs []string
	for _, p := range proxies {
		hostIDs = append(hostIDs, p.hostIDs...)
	}
	d0 := time.Now()
	n, _, _, err := WaitCount(ctx, func(ctx context.Context) (int64, error) {
		return c.HistoryCount(ctx, hostIDs, from, time.Now().Unix()+1)
	}, res.Acked, 2*time.Second, 30*time.Second, b.DrainTimeout, nil)
	res.Readable = n
	res.ReadableAfter = time.Since(d0)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintf(b.Log, "counting readable values: %v\n", err)
	}
	return res, nil
}

// provision creates (or finds) the proxies, hosts and items.
func (b *ProxyBench) provision(ctx context.Context, c *APIClient) ([]*simProxy, string, error) {
	group := b.Prefix + " group"
	var groups []struct{ GroupID string }
	if err := c.Call(ctx, "hostgroup.get", map[string]any{"filter": map[string]any{"name": []string{group}}}, &groups); err != nil {
		return nil, "", err
	}
	var gid string
	if len(groups) > 0 {
		gid = groups[0].GroupID
	} else {
		var r struct{ GroupIDs []string }
		if err := c.Call(ctx, "hostgroup.create", map[string]any{"name": group}, &r); err != nil {
			return nil, "", err
		}
		gid = r.GroupIDs[0]
	}
	var out []*simProxy
	for i := range b.Proxies {
		p := &simProxy{name: fmt.Sprintf("%s-proxy-%d", b.Prefix, i), rng: mrand.New(mrand.NewPCG(uint64(i), 7))}
		var tok [16]byte
		rand.Read(tok[:])
		p.session = hex.EncodeToString(tok[:])
		var found []struct{ ProxyID string }
		if err := c.Call(ctx, "proxy.get", map[string]any{"filter": map[string]any{"host": []string{p.name}}}, &found); err != nil {
			return out, gid, err
		}
		if len(found) > 0 {
			p.id = found[0].ProxyID
		} else {
			var r struct{ ProxyIDs []string }
			if err := c.Call(ctx, "proxy.create", map[string]any{"host": p.name, "status": 5}, &r); err != nil {
				return out, gid, err
			}
			p.id = r.ProxyIDs[0]
		}
		out = append(out, p)
		for h := range b.HostsPerProxy {
			name := fmt.Sprintf("%s-%d-host-%d", b.Prefix, i, h)
			var hs []struct{ HostID string }
			if err := c.Call(ctx, "host.get", map[string]any{"filter": map[string]any{"host": []string{name}}}, &hs); err != nil {
				return out, gid, err
			}
			var hid string
			if len(hs) > 0 {
				hid = hs[0].HostID
			} else {
				var r struct{ HostIDs []string }
				if err := c.Call(ctx, "host.create", map[string]any{"host": name, "groups": []any{map[string]any{"groupid": gid}}, "proxy_hostid": p.id}, &r); err != nil {
					return out, gid, err
				}
				hid = r.HostIDs[0]
			}
			p.hostIDs = append(p.hostIDs, hid)
			var items []struct {
				ItemID string
				Key    string `json:"key_"`
			}
			if err := c.Call(ctx, "item.get", map[string]any{"hostids": []string{hid}, "output": []string{"itemid", "key_"}}, &items); err != nil {
				return out, gid, err
			}
			have := map[string]string{}
			for _, it := range items {
				have[it.Key] = it.ItemID
			}
			var create []map[string]any
			for j := range b.ItemsPerHost {
				if key := "pb." + strconv.Itoa(j); have[key] == "" {
					create = append(create, map[string]any{"hostid": hid, "name": key, "key_": key, "type": 2, "value_type": 0})
				}
			}
			if len(create) > 0 {
				var r struct{ ItemIDs []string }
				if err := c.Call(ctx, "item.create", create, &r); err != nil {
					return out, gid, err
				}
				for k, it := range create {
					have[it["key_"].(string)] = r.ItemIDs[k]
				}
			}
			for j := range b.ItemsPerHost {
				id, _ := strconv.ParseUint(have["pb."+strconv.Itoa(j)], 10, 64)
				p.items = append(p.items, id)
			}
		}
		p.walk = make([]float64, len(p.items))
		for k := range p.walk {
			p.walk[k] = p.rng.Float64() * 100
		}
	}
	return out, gid, nil
}

// waitSynced sends one probe value per proxy until each is readable:
// Zabbix reads new proxies, hosts and items into its configuration
// cache only every CacheUpdateFrequency seconds and drops values for
// items it does not know yet.
func (b *ProxyBench) waitSynced(ctx context.Context, c *APIClient, proxies []*simProxy) error {
	deadline := time.Now().Add(b.SyncTimeout)
	for _, p := range proxies {
		itemID := strconv.FormatUint(p.items[0], 10)
		for {
			// Probes carry a clock an hour back: outside the range the
			// run's values are counted in.
			now := time.Now()
			clock := now.Unix() - 3600
			p.seq++
			row := fmt.Sprintf(`{"id":%d,"itemid":%d,"clock":%d,"ns":%d,"value":"1"}`, p.seq, p.items[0], clock, now.Nanosecond())
			if _, err := b.send(p, []byte(b.request(p, row, now))); err != nil {
				fmt.Fprintf(b.Log, "probe of %s: %v\n", p.name, err)
			}
			n, err := c.HistoryCountItems(ctx, []string{itemID}, clock-1, clock+1)
			if err == nil && n > 0 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("proxy %s: the server did not store a probe value within %v (its configuration cache not updated?)", p.name, b.SyncTimeout)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(2 * time.Second):
			}
		}
	}
	return nil
}

func (b *ProxyBench) request(p *simProxy, rows string, now time.Time) string {
	return `{"request":"proxy data","host":"` + p.name + `","session":"` + p.session + `","history data":[` + rows +
		`],"version":"6.0.14","clock":` + strconv.FormatInt(now.Unix(), 10) + `,"ns":` + strconv.Itoa(now.Nanosecond()) + `}`
}

// send sends one request on a new connection (the proxy's data sender
// connects for each request) and reports whether it was taken.
func (b *ProxyBench) send(p *simProxy, payload []byte) (bool, error) {
	conn, err := net.DialTimeout("tcp", b.Target.Trapper, 5*time.Second)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := conn.Write(b.frame(payload)); err != nil {
		return false, err
	}
	_, reply, err := zbx.NewReader(conn, zbx.ReaderOptions{}).ReadFrame()
	if err != nil {
		return false, err
	}
	if !bytes.Contains(reply, []byte(`"response":"success"`)) {
		return false, fmt.Errorf("refused: %.200s", reply)
	}
	return true, nil
}

// frame is the request's frame, zlib-compressed as the proxy sends it.
func (b *ProxyBench) frame(payload []byte) []byte {
	if !b.Compress {
		return zbx.AppendFrame(nil, payload, zbx.FlagProtocol)
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(payload)
	w.Close()
	out := make([]byte, 13, 13+z.Len())
	copy(out, "ZBXD")
	out[4] = zbx.FlagProtocol | zbx.FlagCompressed
	binary.LittleEndian.PutUint32(out[5:], uint32(z.Len()))
	binary.LittleEndian.PutUint32(out[9:], uint32(len(payload)))
	return append(out, z.Bytes()...)
}

// step offers rate values/s for b.Step, spread over the proxies.
func (b *ProxyBench) step(ctx context.Context, proxies []*simProxy, rate float64) ProxyStep {
	st := ProxyStep{Offered: rate}
	perProxy := rate / float64(len(proxies))
	every := time.Duration(float64(b.Batch) / perProxy * float64(time.Second))
	var acked, refused, behind atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var firstErr string
	sctx, cancel := context.WithTimeout(ctx, b.Step)
	defer cancel()
	meter := StartCPU(b.Target.ServerCPU)
	t0 := time.Now()
	var wg sync.WaitGroup
	for k, p := range proxies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := t0.Add(time.Duration(k) * every / time.Duration(len(proxies)))
			var rows strings.Builder
			for sctx.Err() == nil {
				if d := time.Until(next); d > 0 {
					select {
					case <-sctx.Done():
						return
					case <-time.After(d):
					}
				} else if d < -every {
					behind.Add(1)
				}
				next = next.Add(every)
				now := time.Now()
				rows.Reset()
				for i := range b.Batch {
					j := p.rng.IntN(len(p.items))
					p.walk[j] += p.rng.NormFloat64()
					p.seq++
					if i > 0 {
						rows.WriteByte(',')
					}
					// The proxy's rows: its own clock and ns at collection,
					// distinct per row.
					ns := (now.Nanosecond() + i) % 1_000_000_000
					fmt.Fprintf(&rows, `{"id":%d,"itemid":%d,"clock":%d,"ns":%d,"value":"%s"}`, p.seq, p.items[j], now.Unix(), ns,
						strconv.FormatFloat(math.Round(p.walk[j]*1e4)/1e4, 'f', -1, 64))
				}
				s := time.Now()
				ok, err := b.send(p, []byte(b.request(p, rows.String(), now)))
				d := time.Since(s)
				mu.Lock()
				lat = append(lat, d)
				if err != nil && firstErr == "" {
					firstErr = err.Error()
				}
				mu.Unlock()
				if ok {
					acked.Add(int64(b.Batch))
				} else {
					refused.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	st.CPU = meter.Stop()
	st.Wall = time.Since(t0)
	st.Acked, st.Refused, st.Behind, st.FirstError = acked.Load(), refused.Load(), behind.Load(), firstErr
	st.ReplyP50, st.ReplyP99 = durQuantile(lat, 0.5), durQuantile(lat, 0.99)
	return st
}

func durQuantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	for i := 1; i < len(s); i++ { // insertion sort: a few thousand at most
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// cleanup deletes what provision created (bounded: a few API calls).
func (b *ProxyBench) cleanup(c *APIClient, proxies []*simProxy, groupID string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var hosts, ids []string
	for _, p := range proxies {
		hosts = append(hosts, p.hostIDs...)
		ids = append(ids, p.id)
	}
	for _, call := range []struct {
		method string
		ids    []string
	}{{"host.delete", hosts}, {"proxy.delete", ids}, {"hostgroup.delete", []string{groupID}}} {
		if len(call.ids) == 0 || call.ids[0] == "" {
			continue
		}
		if err := c.Call(ctx, call.method, call.ids, nil); err != nil {
			fmt.Fprintf(b.Log, "cleanup %s: %v\n", call.method, err)
		}
	}
}

func proxyMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), ProxyUsage); fs.PrintDefaults() }
	b := ProxyBench{Log: stderr}
	var passwordFile, rates, cpuPorts string
	fs.StringVar(&b.Target.APIURL, "target", "", "API URL of the server under test (required)")
	fs.StringVar(&b.Target.Trapper, "trapper", "", "trapper address (default: the API's host, port 10051)")
	fs.StringVar(&b.Target.User, "user", "Admin", "API user")
	fs.StringVar(&b.Target.Password, "password", "", "API password")
	fs.StringVar(&passwordFile, "password-file", "", "file with the API password")
	fs.StringVar(&b.Prefix, "prefix", "bench-proxy", "name prefix of the proxies, hosts and group created")
	fs.IntVar(&b.Proxies, "proxies", 4, "simulated proxies")
	fs.IntVar(&b.HostsPerProxy, "hosts-per-proxy", 5, "hosts behind each proxy")
	fs.IntVar(&b.ItemsPerHost, "items-per-host", 100, "trapper items per host")
	fs.IntVar(&b.Batch, "batch", 1000, "history rows per request (zabbix_proxy 6.0 sends at most 1,000)")
	fs.StringVar(&rates, "rates", "5000,10000,20000,40000", "offered values/s, one step each")
	fs.DurationVar(&b.Step, "step", 20*time.Second, "duration of each rate step")
	fs.BoolVar(&b.Compress, "compress", true, "zlib-compress requests, as zabbix_proxy does")
	fs.BoolVar(&b.Keep, "keep", false, "keep the proxies, hosts and items")
	fs.DurationVar(&b.SyncTimeout, "sync-timeout", 3*time.Minute, "longest wait for the server to store a probe value of each proxy")
	fs.DurationVar(&b.DrainTimeout, "drain-timeout", 2*time.Minute, "longest wait for acknowledged values to become readable")
	fs.StringVar(&cpuPorts, "cpu-ports", "", "extra listening ports whose processes count as the server's CPU (the peer's PostgreSQL: 55432)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "peregrine bench proxy: "+format+"\n", a...)
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
	if b.Target.Trapper == "" {
		host := "127.0.0.1"
		if i := strings.Index(b.Target.APIURL, "://"); i >= 0 {
			rest := b.Target.APIURL[i+3:]
			if j := strings.IndexAny(rest, ":/"); j >= 0 {
				host = rest[:j]
			}
		}
		b.Target.Trapper = net.JoinHostPort(host, "10051")
	}
	for _, s := range strings.Split(rates, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || r <= 0 {
			return fail("--rates: %q is not a rate", s)
		}
		b.Rates = append(b.Rates, r)
	}
	if b.Proxies <= 0 || b.HostsPerProxy <= 0 || b.ItemsPerHost <= 0 || b.Batch <= 0 {
		return fail("--proxies, --hosts-per-proxy, --items-per-host and --batch must be positive")
	}
	var extra []int
	for _, s := range strings.Split(cpuPorts, ",") {
		if s = strings.TrimSpace(s); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				return fail("--cpu-ports: %q is not a port", s)
			}
			extra = append(extra, n)
		}
	}
	b.Target.ServerCPU = DiscoverServerCPU(&b.Target, extra)
	res, err := b.Run(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "peregrine bench proxy: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "proxies %d, items %d (%d a proxy), batch %d, compress %v; server CPU: %s\n", b.Proxies, res.TotalItems, res.ItemsPerProxy, b.Batch, b.Compress, res.ServerProcs)
	fmt.Fprintf(stdout, "server idle: %.2f cores\n", res.IdleCores)
	fmt.Fprintf(stdout, "offered/s\tacked/s\trefused\tbehind\treply_p50\treply_p99\tserver_cores\tserver_us/value\tnet_us/value\tgen_cores\n")
	for _, s := range res.Steps {
		fmt.Fprintf(stdout, "%.0f\t%.0f\t%d\t%d\t%v\t%v\t%.2f\t%.2f\t%.2f\t%.2f\n", s.Offered, s.PerSecond(), s.Refused, s.Behind,
			s.ReplyP50.Round(100*time.Microsecond), s.ReplyP99.Round(100*time.Microsecond), s.CPU.Server,
			float64(s.CPUPerValue())/1e3, float64(s.NetCPUPerValue(res.IdleCores))/1e3, s.CPU.Generator)
		if s.FirstError != "" {
			fmt.Fprintf(stdout, "  first error: %s\n", s.FirstError)
		}
	}
	fmt.Fprintf(stdout, "acknowledged %d, readable %d (after %v)\n", res.Acked, res.Readable, res.ReadableAfter.Round(time.Second))
	return 0
}
