package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// TCPFloorUsage is the text of `peregrine bench tcp-floor -h`.
const TCPFloorUsage = `usage: peregrine bench tcp-floor [flags]

The machine's floor for one-connection-per-check polling: the least a Go
client and a Go server can do per passive check on loopback, with nothing
of Peregrine in between. A child process listens on --addrs addresses
127.1.x.y:10050 (distinct destination addresses, so the client's 4-tuples
do not run out) and, per connection, reads one ZBXD request, writes a fixed
reply and closes. The client keeps --conns loops of connect, write, read,
close; with --rate, they start at most that many connections a second
(open loop, as a poller's schedule), so the floor can be taken at the
rate a poller ran at: below saturation every event costs its own
wake-up. Reports connections/s and the CPU per connection of each side
(getrusage of the client, /proc of the child), which is what the kernel's
TCP handshake, teardown and the runtime's netpoller cost on this machine.

flags:
`

// TCPFloor is the floor measurement.
type TCPFloor struct {
	Conns    int           // client loops (connections in flight)
	Addrs    int           // server addresses
	Duration time.Duration // measurement window after a 1 s warm-up
	// Linger0 closes the client's sockets with SO_LINGER 0: a reset
	// instead of a FIN, so no TIME_WAIT is left on the client side.
	Linger0 bool
	// Rate, when above 0, paces the loops: at most Rate connections are
	// started a second, spread over each millisecond (open loop, as a
	// poller's schedule); Conns then bounds those in flight.
	Rate float64
	// InProcess runs the server in this process (tests).
	InProcess bool
}

// TCPFloorResult is one measurement.
type TCPFloorResult struct {
	Done             uint64 // connections completed in the window
	Errors           uint64
	PerSecond        float64
	ClientCPUPerConn time.Duration
	ServerCPUPerConn time.Duration
	ClientCores      float64
	ServerCores      float64
	FirstErr         string
	LatencyP50, P99  time.Duration // connect to reply read, sampled
}

func (f *TCPFloor) defaults() {
	if f.Conns <= 0 {
		f.Conns = 256
	}
	if f.Addrs <= 0 {
		f.Addrs = 64
	}
	if f.Duration <= 0 {
		f.Duration = 10 * time.Second
	}
}

// floorReply is what the floor server answers: an agent's "1".
var floorReply = []byte("ZBXD\x01\x01\x00\x00\x00\x00\x00\x00\x001")

// floorAddr is the i-th server address: 127.1.x.y, never 127.0.0.1, so
// the floor does not meet whatever else listens there.
func floorAddr(i int) string {
	return fmt.Sprintf("127.1.%d.%d:10050", i/250, 1+i%250)
}

// floorServe is the floor server: listeners on n addresses, a goroutine
// per connection doing the least a passive agent does.
type floorServe struct {
	lns []net.Listener
	wg  sync.WaitGroup
}

func startFloorServer(n int) (*floorServe, error) {
	s := &floorServe{}
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", floorAddr(i))
		if err != nil {
			s.close()
			return nil, fmt.Errorf("cannot listen on %s (is 127.0.0.0/8 on lo?): %w", floorAddr(i), err)
		}
		s.lns = append(s.lns, ln)
	}
	for _, ln := range s.lns {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for {
				c, err := ln.Accept()
				if err != nil {
					if errors.Is(err, net.ErrClosed) {
						return
					}
					continue // EMFILE and the like: keep serving
				}
				go floorConn(c)
			}
		}()
	}
	return s, nil
}

func floorConn(c net.Conn) {
	defer c.Close()
	var buf [256]byte
	n := 0
	for n < 13 || n < 13+int(binary.LittleEndian.Uint32(buf[5:9])) {
		m, err := c.Read(buf[n:])
		if err != nil {
			return
		}
		n += m
		if n == len(buf) {
			return
		}
	}
	c.Write(floorReply)
}

func (s *floorServe) close() {
	for _, ln := range s.lns {
		ln.Close()
	}
	s.wg.Wait()
}

// TCPFloorServerMain is the child process of tcp-floor: n listeners; it
// prints "ready" and serves until its stdin closes.
func TCPFloorServerMain(args []string, stdout, stderr io.Writer) int {
	n, err := strconv.Atoi(strings.Join(args, ""))
	if err != nil || n <= 0 {
		fmt.Fprintln(stderr, "usage: peregrine bench tcp-floor-server N")
		return 2
	}
	s, err := startFloorServer(n)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer s.close()
	fmt.Fprintln(stdout, "ready")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// Run measures the floor.
func (f *TCPFloor) Run(ctx context.Context) (TCPFloorResult, error) {
	f.defaults()
	var res TCPFloorResult
	serverCPU := func() time.Duration { return 0 }
	if f.InProcess {
		s, err := startFloorServer(f.Addrs)
		if err != nil {
			return res, err
		}
		defer s.close()
	} else {
		exe, err := os.Executable()
		if err != nil {
			return res, err
		}
		cmd := exec.Command(exe, "bench", "tcp-floor-server", strconv.Itoa(f.Addrs))
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return res, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return res, err
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return res, err
		}
		defer func() { stdin.Close(); cmd.Wait() }()
		line, _ := bufio.NewReader(out).ReadString('\n')
		if strings.TrimSpace(line) != "ready" {
			return res, errors.New("the floor server exited before it was ready")
		}
		serverCPU = func() time.Duration { st, _ := readProcStat(cmd.Process.Pid); return st.cpu }
	}
	addrs := make([]*net.TCPAddr, f.Addrs)
	for i := range addrs {
		addrs[i], _ = net.ResolveTCPAddr("tcp", floorAddr(i))
	}
	var done, errs atomic.Uint64
	var firstErr atomic.Value
	var measuring atomic.Bool
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	const sampleEvery = 64
	lat := make([][]time.Duration, f.Conns)
	var wg sync.WaitGroup
	var tokens chan struct{} // nil: closed loop
	if f.Rate > 0 {
		tokens = make(chan struct{}, f.Conns)
		wg.Add(1)
		go func() { defer wg.Done(); pace(cctx, f.Rate, tokens) }()
	}
	for w := 0; w < f.Conns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var req [13 + 9]byte
			copy(req[:], "ZBXD\x01")
			binary.LittleEndian.PutUint32(req[5:9], 9)
			copy(req[13:], "agent.pin")
			var reply [64]byte
			for i := w; cctx.Err() == nil; i++ {
				if tokens != nil {
					select {
					case <-tokens:
					case <-cctx.Done():
						return
					}
				}
				t0 := time.Now()
				err := floorCheck(addrs[i%len(addrs)], req[:], reply[:], f.Linger0)
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				if measuring.Load() {
					n := done.Add(1)
					if n%sampleEvery == 0 {
						lat[w] = append(lat[w], time.Since(t0))
					}
				}
			}
		}(w)
	}
	select {
	case <-time.After(time.Second):
	case <-ctx.Done():
	}
	c0, s0, t0 := SelfCPU(), serverCPU(), time.Now()
	e0 := errs.Load()
	measuring.Store(true)
	select {
	case <-time.After(f.Duration):
	case <-ctx.Done():
	}
	measuring.Store(false)
	wall := time.Since(t0)
	c1, s1 := SelfCPU(), serverCPU()
	cancel()
	wg.Wait()
	res.Done, res.Errors = done.Load(), errs.Load()-e0
	if v, ok := firstErr.Load().(string); ok {
		res.FirstErr = v
	}
	res.PerSecond = float64(res.Done) / wall.Seconds()
	res.ClientCores = (c1 - c0).Seconds() / wall.Seconds()
	res.ServerCores = (s1 - s0).Seconds() / wall.Seconds()
	if res.Done > 0 {
		res.ClientCPUPerConn = (c1 - c0) / time.Duration(res.Done)
		res.ServerCPUPerConn = (s1 - s0) / time.Duration(res.Done)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	if len(all) > 0 {
		slices.Sort(all)
		res.LatencyP50, res.P99 = all[len(all)/2], all[len(all)*99/100]
	}
	return res, nil
}

// pace hands out rate tokens a second until ctx ends, a millisecond's
// worth at a time; a token nobody is free to take is dropped (the loops
// are all in flight), as a poller's check waits when it is at its bound.
func pace(ctx context.Context, rate float64, tokens chan<- struct{}) {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	start, sent := time.Now(), 0.0
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			due := now.Sub(start).Seconds() * rate
			for ; sent+1 <= due; sent++ {
				select {
				case tokens <- struct{}{}:
				default:
				}
			}
		}
	}
}

// floorCheck is one passive check's worth of socket work.
func floorCheck(addr *net.TCPAddr, req, reply []byte, linger0 bool) error {
	c, err := net.DialTCP("tcp", nil, addr)
	if err != nil {
		return err
	}
	if linger0 {
		c.SetLinger(0)
	}
	defer c.Close()
	if _, err := c.Write(req); err != nil {
		return err
	}
	n := 0
	for n < len(floorReply) {
		m, err := c.Read(reply[n:])
		if err != nil {
			return err
		}
		n += m
	}
	return nil
}

// tcpFloorMain runs `peregrine bench tcp-floor`.
func tcpFloorMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench tcp-floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), TCPFloorUsage); fs.PrintDefaults() }
	var f TCPFloor
	conns := fs.String("conns", "256", "client loops (connections in flight), comma-separated to step")
	fs.IntVar(&f.Addrs, "addrs", 64, "server addresses 127.1.x.y")
	fs.DurationVar(&f.Duration, "duration", 10*time.Second, "measurement window per step")
	fs.BoolVar(&f.Linger0, "linger0", false, "close client sockets with SO_LINGER 0 (reset, no TIME_WAIT)")
	fs.Float64Var(&f.Rate, "rate", 0, "connections started a second at most (open loop; 0: each loop starts the next at once)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fmt.Fprintf(stdout, "conns\taddrs\tlinger0\tconn/s\tp50\tp99\tclient_cores\tclient_us/conn\tserver_cores\tserver_us/conn\terrors\n")
	for _, s := range strings.Split(*conns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(stderr, "peregrine bench tcp-floor: --conns: %q is not a count\n", s)
			return 2
		}
		f.Conns = n
		r, err := f.Run(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "peregrine bench tcp-floor: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "%d\t%d\t%v\t%.0f\t%s\t%s\t%.2f\t%.1f\t%.2f\t%.1f\t%d\n", n, f.Addrs, f.Linger0, r.PerSecond,
			r.LatencyP50.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.ClientCores, float64(r.ClientCPUPerConn)/1e3,
			r.ServerCores, float64(r.ServerCPUPerConn)/1e3, r.Errors)
		if r.FirstErr != "" {
			fmt.Fprintf(stderr, "first error: %s\n", r.FirstErr)
		}
	}
	return 0
}
