package bench

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

type sentValue struct {
	Host  string `json:"host"`
	Key   string `json:"key"`
	Value string `json:"value"`
	Clock int64  `json:"clock"`
	NS    int64  `json:"ns"`
}

func decodeFrame(t *testing.T, payload []byte) []sentValue {
	t.Helper()
	var req struct {
		Request string      `json:"request"`
		Data    []sentValue `json:"data"`
	}
	if err := json.Unmarshal(payload, &req); err != nil {
		t.Fatalf("frame is not JSON: %v\n%s", err, payload)
	}
	if req.Request != "sender data" {
		t.Fatalf("request %q", req.Request)
	}
	return req.Data
}

// buildAll builds every unit of a plan in order, as Send does, and
// returns the values per item in send order.
func buildAll(t *testing.T, plan SendPlan, rounds int64) map[string][]sentValue {
	t.Helper()
	if plan.PacketValues == 0 {
		plan.PacketValues = 1000
	}
	if plan.ClockStep == 0 {
		plan.ClockStep = 1
	}
	fs := newFrameSet(plan.Items, plan.PacketValues, plan.Data)
	out := map[string][]sentValue{}
	var buf []byte
	for r := int64(0); r < rounds; r++ {
		for f := 0; f < fs.frames(); f++ {
			buf = fs.build(buf, f, fs.frameLen(f), r, &plan)
			for _, v := range decodeFrame(t, buf) {
				out[v.Host+"/"+v.Key] = append(out[v.Host+"/"+v.Key], v)
			}
		}
	}
	return out
}

func testItems(hosts, keys int) ItemSet {
	return Layout{HostPrefix: "h", KeyPrefix: "k", Hosts: hosts, ItemsPerHost: keys}.ItemSet(hosts)
}

// Same seed, same data: on two targets (two builds), whatever the frame
// size and the other items around an item; another seed, other data.
func TestRealisticDeterministic(t *testing.T) {
	plan := SendPlan{Items: testItems(4, 25), StartClock: 1_700_000_000, Data: Data{Seed: 7}, PacketValues: 30}
	a := buildAll(t, plan, 20)
	b := buildAll(t, plan, 20)
	if d := cmp.Diff(a, b); d != "" {
		t.Fatalf("two builds of seed 7 differ (-a +b):\n%s", d)
	}
	// Another layout (frame size, fewer items) holding item h1/k3: its
	// series is the same.
	small := plan
	small.Items = ItemSet{Hosts: []string{"h1"}, Keys: []string{"k0", "k3"}}
	small.PacketValues = 1
	c := buildAll(t, small, 20)
	if d := cmp.Diff(a["h1/k3"], c["h1/k3"]); d != "" {
		t.Errorf("h1/k3 depends on the layout (-big +small):\n%s", d)
	}
	other := plan
	other.Data.Seed = 8
	o := buildAll(t, other, 20)
	same := 0
	for k := range a {
		if cmp.Equal(a[k], o[k]) {
			same++
		}
	}
	if same > 0 {
		t.Errorf("seeds 7 and 8 gave %d identical series of %d", same, len(a))
	}
}

// Send with 1 and with 4 connections delivers the same values: frames
// are generated in unit order under the send's lock.
func TestSendSameDataAnyConns(t *testing.T) {
	addr, got := recordingTrapper(t)
	items := testItems(3, 40)
	var runs []map[string][]sentValue
	for _, conns := range []int{1, 4} {
		s := Sender{Addr: addr, Conns: conns, Persistent: "yes", Timeout: 5 * time.Second}
		before := len(got())
		res, err := s.Send(t.Context(), SendPlan{Items: items, PacketValues: 7, Rounds: 5, StartClock: 1_700_000_000, Data: Data{Seed: 3}}, nil)
		if err != nil || res.Sent != 600 || res.Errors != 0 {
			t.Fatalf("conns %d: %+v %v", conns, res, err)
		}
		by := map[string][]sentValue{}
		for _, v := range got()[before:] {
			by[v.Host+"/"+v.Key] = append(by[v.Host+"/"+v.Key], v)
		}
		for k := range by {
			slices.SortFunc(by[k], func(a, b sentValue) int { return int(a.Clock - b.Clock) })
		}
		runs = append(runs, by)
	}
	if d := cmp.Diff(runs[0], runs[1]); d != "" {
		t.Errorf("1 and 4 connections sent different data (-1 +4):\n%s", d)
	}
}

// recordingTrapper accepts frames on kept connections, records every
// value and answers success for all.
func recordingTrapper(t *testing.T) (string, func() []sentValue) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var vals []sentValue
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				rd := zbx.NewReader(c, zbx.ReaderOptions{Timeout: 5 * time.Second})
				for {
					_, p, err := rd.ReadFrame()
					if err != nil {
						return
					}
					var req struct{ Data []sentValue }
					if err := json.Unmarshal(p, &req); err != nil {
						return
					}
					mu.Lock()
					vals = append(vals, req.Data...)
					mu.Unlock()
					n := strconv.Itoa(len(req.Data))
					c.Write(zbx.AppendFrame(nil, []byte(`{"response":"success","info":"processed: `+n+`; failed: 0; total: `+n+`; seconds spent: 0.000001"}`), zbx.FlagProtocol))
				}
			}()
		}
	}()
	return ln.Addr().String(), func() []sentValue { mu.Lock(); defer mu.Unlock(); return slices.Clone(vals) }
}

// TestRealisticShape checks what the report promises: the kind mix, full
// precision gauges, monotonic counters, 4 KiB sizes, 0/1 status, values
// that parse back to the generated float, nanoseconds spread over the
// second and shifted by the plan's NS.
func TestRealisticShape(t *testing.T) {
	const hosts, keys, rounds = 20, 100, 60
	plan := SendPlan{Items: testItems(hosts, keys), StartClock: 1_700_000_000, Data: Data{Seed: 42}, NS: 500_000_000}
	all := buildAll(t, plan, rounds)
	kinds := map[Kind]int{}
	digits, gaugeValues := 0, 0
	nsSeen := map[int64]bool{}
	for name, vals := range all {
		host, key, _ := strings.Cut(name, "/")
		seq := NewValueSeq(plan.Data, host, key)
		kinds[seq.Kind()]++
		if len(vals) != rounds {
			t.Fatalf("%s: %d values", name, len(vals))
		}
		prev := math.Inf(-1)
		for r, v := range vals {
			text, f, ns := seq.Next()
			if v.Value != text {
				t.Fatalf("%s value %d: sent %q, ValueSeq says %q", name, r, v.Value, text)
			}
			if back, err := strconv.ParseFloat(v.Value, 64); err != nil || back != f || strings.ContainsAny(v.Value, "eE") {
				t.Fatalf("%s: %q does not parse back to %v without an exponent", name, v.Value, f)
			}
			if want := (int64(ns) + 500_000_000) % 1e9; v.NS != want || v.NS < 0 || v.NS >= 1e9 {
				t.Fatalf("%s: ns %d, want %d", name, v.NS, want)
			}
			if v.Clock != plan.StartClock+int64(r) {
				t.Fatalf("%s: clock %d in round %d", name, v.Clock, r)
			}
			nsSeen[v.NS/1e8] = true
			switch seq.Kind() {
			case KindGauge:
				gaugeValues++
				if len(strings.Trim(strings.Replace(v.Value, ".", "", 1), "-0")) >= 12 {
					digits++
				}
			case KindCounter:
				if f < prev || f != math.Trunc(f) {
					t.Fatalf("%s: counter %v after %v", name, f, prev)
				}
			case KindSize:
				if math.Mod(f, 4096) != 0 {
					t.Fatalf("%s: size %v not a multiple of 4096", name, f)
				}
			case KindStatus:
				if f != 0 && f != 1 {
					t.Fatalf("%s: status %v", name, f)
				}
			}
			prev = f
		}
	}
	n := float64(hosts * keys)
	for k, want := range map[Kind]float64{KindGauge: 0.50, KindCounter: 0.22, KindSize: 0.11, KindStatus: 0.17} {
		if got := float64(kinds[k]) / n; math.Abs(got-want) > 0.04 {
			t.Errorf("%s: %.3f of the items, want %.2f ± 0.04 (%v)", k, got, want, kinds)
		}
	}
	// Full precision: nearly every gauge value has 12 or more significant
	// digits (a 2-decimal value has at most 6 here).
	if float64(digits) < 0.95*float64(gaugeValues) {
		t.Errorf("only %d of %d gauge values have ≥ 12 significant digits", digits, gaugeValues)
	}
	if len(nsSeen) != 10 {
		t.Errorf("nanoseconds fall in %d of the 10 tenths of a second", len(nsSeen))
	}
}

// With Position, each item's values go out in another time order but the
// series by clock is the in-order one.
func TestPositionKeepsSeriesInTimeOrder(t *testing.T) {
	const rounds = 50
	items := testItems(2, 10)
	in := buildAll(t, SendPlan{Items: items, StartClock: 1_700_000_000, Data: Data{Seed: 9}}, rounds)
	pos := ShuffledPositions(rounds, 9)
	out := buildAll(t, SendPlan{Items: items, StartClock: 1_700_000_000, Data: Data{Seed: 9}, Position: pos}, rounds)
	inOrder := 0
	for name, vals := range out {
		if slices.IsSortedFunc(vals, func(a, b sentValue) int { return int(a.Clock - b.Clock) }) {
			inOrder++
		}
		slices.SortFunc(vals, func(a, b sentValue) int { return int(a.Clock - b.Clock) })
		if d := cmp.Diff(in[name], vals); d != "" {
			t.Fatalf("%s: shuffled send, sorted by clock, differs from the in-order send (-in +shuffled):\n%s", name, d)
		}
	}
	if inOrder > 0 {
		t.Errorf("%d of %d items were still sent in time order", inOrder, len(out))
	}
}

func TestShuffledPositionsIsPermutationPerItem(t *testing.T) {
	for _, rounds := range []int64{1, 2, 7, 100} {
		pos := ShuffledPositions(rounds, uint64(rounds))
		for item := range 5 {
			seen := make([]bool, rounds)
			for r := range rounds {
				p := pos(item, r)
				if p < 0 || p >= rounds || seen[p] {
					t.Fatalf("rounds %d item %d: position %d repeated or out of range", rounds, item, p)
				}
				seen[p] = true
			}
		}
	}
}

func TestParseShape(t *testing.T) {
	for _, s := range []string{"realistic", "constant"} {
		if got, err := ParseShape(s); err != nil || string(got) != s {
			t.Errorf("%s: %v %v", s, got, err)
		}
	}
	if _, err := ParseShape("random"); err == nil || !strings.Contains(err.Error(), `not "random"`) {
		t.Errorf("random: %v", err)
	}
	if !strings.Contains(Data{Seed: 5}.Describe(), "seed 5") || !strings.Contains(Data{Shape: ShapeConstant}.Describe(), "constant") {
		t.Error("Describe does not name the shape and seed")
	}
}

// BenchmarkBuildFrame measures the generator's cost per value (it runs
// under the send's lock):
//
//	go test -run '^$' -bench BuildFrame -count 6 ./internal/bench/
func BenchmarkBuildFrame(b *testing.B) {
	for _, d := range []Data{{Shape: ShapeRealistic, Seed: 1}, {Shape: ShapeConstant}} {
		b.Run("data="+string(d.shape()), func(b *testing.B) {
			items := testItems(10, 1000)
			fs := newFrameSet(items, 1000, d)
			plan := SendPlan{StartClock: 1_700_000_000, ClockStep: 1, NS: rand.IntN(1e9)}
			var buf []byte
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f := i % fs.frames()
				buf = fs.build(buf, f, fs.frameLen(f), int64(i/fs.frames()), &plan)
			}
			b.SetBytes(int64(len(buf)))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/value")
		})
	}
}

func TestGaugesOnly(t *testing.T) {
	for i := range 50 {
		if k := NewValueSeq(Data{Seed: 3, Gauges: true}, "h", strconv.Itoa(i)).Kind(); k != KindGauge {
			t.Fatalf("item %d: %s with Gauges set", i, k)
		}
	}
}
