package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// TrapperLoad describes a sender load: Hosts × ItemsPerHost trapper items,
// one value per item per round, PacketValues values per frame, Senders
// concurrent connections.
type TrapperLoad struct {
	Addr         string
	Hosts        int
	ItemsPerHost int
	HostPrefix   string // host names are HostPrefix + index
	KeyPrefix    string // item keys are KeyPrefix + index
	PacketValues int
	Senders      int
	Duration     time.Duration
	// Rounds, if > 0, stops after that many rounds instead of Duration.
	Rounds int
	// Rate, if > 0, caps offered values per second (0 = as fast as it goes).
	Rate float64
	// Persistent keeps one connection per sender across frames; otherwise
	// each frame uses a new connection, as zabbix_sender does.
	Persistent bool
	// Compress sends zlib-compressed frames.
	Compress bool
	// StartClock is the clock of the first round (default: now − 1 day).
	StartClock int64
	Timeout    time.Duration
}

// LoadResult is what the generator saw.
type LoadResult struct {
	Sent      int64 // values in frames that got a reply
	Processed int64 // summed from replies
	Failed    int64
	Frames    int64
	Errors    int64 // frames without a valid reply
	Elapsed   time.Duration
	FirstErr  error
}

// ValuesPerSecond is processed values over elapsed time.
func (r LoadResult) ValuesPerSecond() float64 { return float64(r.Processed) / r.Elapsed.Seconds() }

func (l *TrapperLoad) defaults() {
	if l.HostPrefix == "" {
		l.HostPrefix = "bench-host-"
	}
	if l.KeyPrefix == "" {
		l.KeyPrefix = "bench.item."
	}
	if l.PacketValues <= 0 {
		l.PacketValues = 1000
	}
	if l.Senders <= 0 {
		l.Senders = 4
	}
	if l.StartClock == 0 {
		l.StartClock = time.Now().Add(-24 * time.Hour).Unix()
	}
	if l.Timeout <= 0 {
		l.Timeout = 60 * time.Second
	}
}

// packet is one pre-encoded sender data payload with the offsets of its
// 10-digit clock fields.
type packet struct {
	payload []byte
	clocks  []int
	values  int
	frame   []byte
}

// Encode builds the packets: every item appears in exactly one packet, so
// one pass over all packets is one round. Values are a slowly varying
// gauge per item; clocks are patched per round.
func (l *TrapperLoad) Encode() [][]byte {
	l.defaults()
	ps := l.encode()
	out := make([][]byte, len(ps))
	for i := range ps {
		out[i] = ps[i].payload
	}
	return out
}

func (l *TrapperLoad) encode() []*packet {
	var ps []*packet
	var cur *packet
	for h := 0; h < l.Hosts; h++ {
		for i := 0; i < l.ItemsPerHost; i++ {
			if cur == nil {
				cur = &packet{payload: []byte(`{"request":"sender data","data":[`)}
			}
			if cur.values > 0 {
				cur.payload = append(cur.payload, ',')
			}
			cur.payload = append(cur.payload, `{"host":"`...)
			cur.payload = append(cur.payload, l.HostPrefix...)
			cur.payload = strconv.AppendInt(cur.payload, int64(h), 10)
			cur.payload = append(cur.payload, `","key":"`...)
			cur.payload = append(cur.payload, l.KeyPrefix...)
			cur.payload = strconv.AppendInt(cur.payload, int64(i), 10)
			cur.payload = append(cur.payload, `","value":"`...)
			cur.payload = strconv.AppendFloat(cur.payload, 20+float64((h*31+i*7)%1000)/100, 'f', 2, 64)
			cur.payload = append(cur.payload, `","clock":`...)
			cur.clocks = append(cur.clocks, len(cur.payload))
			cur.payload = append(cur.payload, "0000000000"...)
			cur.payload = append(cur.payload, `,"ns":0}`...)
			cur.values++
			if cur.values == l.PacketValues {
				cur.payload = append(cur.payload, "]}"...)
				ps = append(ps, cur)
				cur = nil
			}
		}
	}
	if cur != nil {
		cur.payload = append(cur.payload, "]}"...)
		ps = append(ps, cur)
	}
	return ps
}

func patchClock(p *packet, clock int64) {
	var d [10]byte
	c := clock
	for i := 9; i >= 0; i-- {
		d[i] = byte('0' + c%10)
		c /= 10
	}
	for _, off := range p.clocks {
		copy(p.payload[off:off+10], d[:])
	}
}

var infoRe = regexp.MustCompile(`"info":"processed: (\d+); failed: (\d+); total: (\d+);`)

// Run sends the load and returns what the replies said. Each sender owns a
// disjoint subset of packets and sends them round after round, so every
// (item, clock) pair is sent exactly once.
func (l *TrapperLoad) Run(ctx context.Context) (LoadResult, error) {
	l.defaults()
	if l.Hosts <= 0 || l.ItemsPerHost <= 0 {
		return LoadResult{}, errors.New("loadgen: Hosts and ItemsPerHost must be positive")
	}
	packets := l.encode()
	senders := min(l.Senders, len(packets))
	var sent, processed, failed, frames, errs atomic.Int64
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) {
		errs.Add(1)
		errOnce.Do(func() { firstErr = err })
	}
	deadline := time.Now().Add(l.Duration)
	var limiter *rateLimiter
	if l.Rate > 0 {
		limiter = newRateLimiter(l.Rate)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for s := 0; s < senders; s++ {
		var mine []*packet
		for i := s; i < len(packets); i += senders {
			// Each sender patches its own copy: packets are not shared.
			p := *packets[i]
			p.payload = append([]byte(nil), p.payload...)
			mine = append(mine, &p)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var conn net.Conn
			var rd *zbx.Reader
			defer func() {
				if conn != nil {
					conn.Close()
				}
			}()
			for round := 0; ; round++ {
				if l.Rounds > 0 && round >= l.Rounds || l.Rounds == 0 && time.Now().After(deadline) || ctx.Err() != nil {
					return
				}
				clock := l.StartClock + int64(round)
				for _, p := range mine {
					if limiter != nil {
						limiter.wait(p.values)
					}
					patchClock(p, clock)
					flags := zbx.FlagProtocol
					if l.Compress {
						flags |= zbx.FlagCompressed
					}
					p.frame = zbx.AppendFrame(p.frame[:0], p.payload, flags)
					if conn == nil {
						c, err := net.DialTimeout("tcp", l.Addr, l.Timeout)
						if err != nil {
							fail(err)
							time.Sleep(10 * time.Millisecond)
							continue
						}
						conn = c
						rd = zbx.NewReader(conn, zbx.ReaderOptions{Timeout: l.Timeout})
					}
					conn.SetWriteDeadline(time.Now().Add(l.Timeout))
					_, err := conn.Write(p.frame)
					var reply []byte
					if err == nil {
						_, reply, err = rd.ReadFrame()
					}
					if err != nil {
						fail(err)
						conn.Close()
						conn = nil
						continue
					}
					frames.Add(1)
					m := infoRe.FindSubmatch(reply)
					if m == nil {
						fail(fmt.Errorf("unexpected reply %q", reply))
					} else {
						pr, _ := strconv.ParseInt(string(m[1]), 10, 64)
						fl, _ := strconv.ParseInt(string(m[2]), 10, 64)
						processed.Add(pr)
						failed.Add(fl)
						sent.Add(int64(p.values))
					}
					if !l.Persistent {
						conn.Close()
						conn = nil
					}
				}
			}
		}()
	}
	wg.Wait()
	return LoadResult{
		Sent: sent.Load(), Processed: processed.Load(), Failed: failed.Load(),
		Frames: frames.Load(), Errors: errs.Load(), Elapsed: time.Since(start), FirstErr: firstErr,
	}, nil
}

// rateLimiter paces offered values to a rate, shared by all senders.
type rateLimiter struct {
	mu    sync.Mutex
	rate  float64
	start time.Time
	sent  float64
}

func newRateLimiter(rate float64) *rateLimiter { return &rateLimiter{rate: rate, start: time.Now()} }

func (r *rateLimiter) wait(n int) {
	r.mu.Lock()
	r.sent += float64(n)
	due := r.start.Add(time.Duration(r.sent / r.rate * float64(time.Second)))
	r.mu.Unlock()
	if d := time.Until(due); d > 0 {
		time.Sleep(d)
	}
}

// CatalogSpec is the catalog that creates the load's hosts and items
// (float trapper items).
func (l *TrapperLoad) CatalogSpec() catalog.Spec {
	l.defaults()
	spec := catalog.Spec{Groups: []catalog.GroupSpec{{Name: "Bench"}}}
	for h := 0; h < l.Hosts; h++ {
		hs := catalog.HostSpec{Host: l.HostPrefix + strconv.Itoa(h), Groups: []string{"Bench"}}
		hs.Items = make([]catalog.ItemSpec, l.ItemsPerHost)
		for i := range hs.Items {
			hs.Items[i] = catalog.ItemSpec{Key: l.KeyPrefix + strconv.Itoa(i), ValueType: "float"}
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	return spec
}
