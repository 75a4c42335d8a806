package chunkenc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Generators of realistic and adversarial data, shared by tests,
// benchmarks and fuzz seeds. All take a seeded *rand.Rand.

const (
	baseT  = int64(1_700_000_000) * 1e9 // 2023-11-14, unix ns
	minute = int64(60e9)
)

// tsShapes lists the timestamp generators by name.
var tsShapes = []string{"sec", "jitter", "ms", "irregular", "gaps", "agent-ms", "agent-ns", "agent-neg"}

// genTS returns n strictly ascending timestamps starting at start.
//
//	sec:       exact one-minute interval, ns = 0
//	jitter:    one-minute grid plus a uniform 0..1 ms nanosecond jitter,
//	           like a poller's receive time
//	ms:        one-minute grid plus a millisecond-precision jitter (0..999 ms)
//	irregular: random intervals of 1 ns to 1 h with random nanoseconds
//	gaps:      exact seconds, one-minute interval with missed polls
func genTS(rng *rand.Rand, shape string, start int64, n int) []int64 {
	ts := make([]int64, n)
	t := start
	for i := range ts {
		switch shape {
		case "sec":
			ts[i] = start + int64(i)*minute
		case "jitter":
			ts[i] = start + int64(i)*minute + rng.Int64N(1e6)
		case "ms":
			ts[i] = start + int64(i)*minute + rng.Int64N(1000)*1e6
		case "agent-ms", "agent-ns", "agent-neg":
			// As agents send (historytest.Realistic): a 10 s grid, a
			// value a second early or late one time in ten, a random
			// sub-second part (whole milliseconds for agent-ms); agent-neg
			// before 1970, where seconds and sub-second parts are floored.
			sec := start/1e9 + int64(i)*10
			if shape == "agent-neg" {
				sec = -start/1e9 + int64(i)*10
			}
			switch rng.IntN(20) {
			case 0:
				sec--
			case 1:
				sec++
			}
			sub := rng.Int64N(1e9)
			if shape == "agent-ms" {
				sub = sub / 1e6 * 1e6
			}
			ts[i] = sec*1e9 + sub
			if i > 0 && ts[i] <= ts[i-1] {
				ts[i] = ts[i-1] + 1e6
			}
		case "irregular":
			t += 1 + rng.Int64N(3600e9)
			ts[i] = t
		case "gaps":
			if i > 0 && rng.IntN(20) == 0 {
				t += minute * int64(1+rng.IntN(5))
			}
			ts[i] = t
			t += minute
		default:
			panic("unknown ts shape " + shape)
		}
	}
	return ts
}

// floatShapes lists the float value generators by name.
var floatShapes = []string{"gauge", "load", "counter", "bytes", "constant", "random", "special", "decimals", "mixed", "stepped"}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// genFloats returns n float values of the named shape.
//
//	gauge:    temperature-like random walk, 2 decimals (23.45, 23.47, ...)
//	load:     CPU-load-like mean-reverting series, 2 decimals
//	counter:  steady integer counter (about 6000 per minute, small noise)
//	bytes:    bursty bytes counter (7.5 MB per minute ± 20 %)
//	constant: one value
//	random:   random float64 bits (NaN payloads, ±Inf, subnormals included)
//	special:  -0, NaN, ±Inf, subnormals, extremes, mixed with decimals
//	decimals: random values with 0..6 decimals and large magnitudes
//	mixed:    a gauge with one NaN in it
//	stepped:  a status-like value that changes rarely
func genFloats(rng *rand.Rand, shape string, n int) []float64 {
	v := make([]float64, n)
	switch shape {
	case "gauge":
		x := 21 + 4*rng.Float64()
		for i := range v {
			x += 0.05*rng.NormFloat64() + 0.01*(22-x)
			v[i] = round2(x)
		}
	case "load":
		x := rng.Float64()
		for i := range v {
			x = 0.9*x + 0.1*0.8 + 0.08*rng.NormFloat64()
			if x < 0 {
				x = 0
			}
			v[i] = round2(x)
		}
	case "counter":
		c := float64(rng.Int64N(1e9))
		for i := range v {
			c += 6000 + math.Round(8*rng.NormFloat64())
			v[i] = c
		}
	case "bytes":
		c := float64(rng.Int64N(1e12))
		for i := range v {
			c += math.Round(7.5e6 * (1 + 0.2*rng.NormFloat64()))
			v[i] = c
		}
	case "constant":
		for i := range v {
			v[i] = 42.5
		}
	case "random":
		for i := range v {
			v[i] = math.Float64frombits(rng.Uint64())
		}
	case "special":
		specials := []float64{
			math.Copysign(0, -1), 0, math.NaN(), math.Float64frombits(0x7ff0000000000001),
			math.Float64frombits(0xfff8dead00000000), math.Inf(1), math.Inf(-1),
			math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
			math.Float64frombits(0x000fffffffffffff), math.MaxFloat64, -math.MaxFloat64,
			1 << 63, -(1 << 63), 1 << 53, 1<<53 + 2, 1e22, 1e23, 0.1, 1.7976931348623157e300,
		}
		for i := range v {
			if rng.IntN(2) == 0 {
				v[i] = specials[rng.IntN(len(specials))]
			} else {
				v[i] = round2(100 * rng.NormFloat64())
			}
		}
	case "decimals":
		for i := range v {
			d := rng.IntN(7)
			m := rng.Int64N(1e12) - 5e11
			v[i] = float64(m) / math.Pow10(d)
		}
	case "mixed":
		v = genFloats(rng, "gauge", n)
		v[rng.IntN(n)] = math.NaN()
	case "stepped":
		x := float64(rng.IntN(3))
		for i := range v {
			if rng.IntN(100) == 0 {
				x = float64(rng.IntN(3))
			}
			v[i] = x
		}
	default:
		panic("unknown float shape " + shape)
	}
	return v
}

// uintShapes lists the unsigned value generators by name.
var uintShapes = []string{"counter", "bytes", "constant", "random", "nearmax", "wrap", "small", "pages", "pagesdod"}

// genUints returns n unsigned values of the named shape.
//
//	counter:  steady counter (about 6000 per minute, small noise)
//	bytes:    bursty bytes counter (7.5 MB per minute ± 20 %)
//	constant: one value
//	random:   random uint64
//	nearmax:  values within a few thousand of MaxUint64
//	wrap:     a counter that wraps past MaxUint64 and resets to 0
//	small:    small gauge-like integers (0..100)
func genUints(rng *rand.Rand, shape string, n int) []uint64 {
	v := make([]uint64, n)
	switch shape {
	case "counter":
		c := rng.Uint64N(1e9)
		for i := range v {
			c += uint64(6000 + math.Round(8*rng.NormFloat64()))
			v[i] = c
		}
	case "bytes":
		c := rng.Uint64N(1e12)
		for i := range v {
			c += uint64(math.Round(7.5e6 * (1 + 0.2*rng.NormFloat64())))
			v[i] = c
		}
	case "constant":
		for i := range v {
			v[i] = 7
		}
	case "random":
		for i := range v {
			v[i] = rng.Uint64()
		}
	case "pages", "pagesdod":
		// A size in 4 KiB pages that changes in three values out of ten
		// (historytest.Realistic's sizes), starting off the page grid;
		// pagesdod grows by a near-steady number of pages instead, wrapping.
		x := uint64(1e9 + 17)
		for i := range v {
			switch {
			case shape == "pagesdod":
				x += 4096 * (1e12 + rng.Uint64N(100))
			case rng.IntN(10) < 3:
				d := rng.Uint64N(1<<24) &^ 4095
				if rng.IntN(3) == 0 {
					x -= d
				} else {
					x += d
				}
			}
			v[i] = x
		}
	case "nearmax":
		for i := range v {
			v[i] = math.MaxUint64 - rng.Uint64N(5000)
		}
	case "wrap":
		c := uint64(math.MaxUint64 - 100000)
		for i := range v {
			c += 1000 + rng.Uint64N(100)
			if rng.IntN(200) == 0 {
				c = 0
			}
			v[i] = c
		}
	case "small":
		for i := range v {
			v[i] = rng.Uint64N(101)
		}
	default:
		panic("unknown uint shape " + shape)
	}
	return v
}

// stringShapes lists the string value generators by name.
var stringShapes = []string{"status", "lines", "empty", "utf8", "long", "one"}

// genStrings returns n strings of the named shape.
//
//	status: a few distinct values that change rarely ("up", "down", ...)
//	lines:  mostly unique log-like lines
//	empty:  empty strings
//	utf8:   random UTF-8 incl. multibyte runes and empty strings
//	long:   long mostly unique text values (up to 4 KiB)
//	one:    a single repeated non-empty string
func genStrings(rng *rand.Rand, shape string, n int) []string {
	v := make([]string, n)
	switch shape {
	case "status":
		states := []string{"up", "down", "degraded", "maintenance", ""}
		s := states[0]
		for i := range v {
			if rng.IntN(30) == 0 {
				s = states[rng.IntN(len(states))]
			}
			v[i] = s
		}
	case "lines":
		for i := range v {
			v[i] = logLine(rng, i)
		}
	case "empty":
	case "utf8":
		runes := []rune("aZ09 ,.-äöüß€日本語🙂\u0000\u00ff\n\t")
		for i := range v {
			var b strings.Builder
			for range rng.IntN(20) {
				b.WriteRune(runes[rng.IntN(len(runes))])
			}
			v[i] = b.String()
		}
	case "long":
		for i := range v {
			var b strings.Builder
			for b.Len() < rng.IntN(4096) {
				b.WriteString(logLine(rng, i))
				b.WriteByte('\n')
			}
			v[i] = b.String()
		}
	case "one":
		for i := range v {
			v[i] = "OK: all checks passed"
		}
	default:
		panic("unknown string shape " + shape)
	}
	return v
}

func logLine(rng *rand.Rand, i int) string {
	users := []string{"root", "admin", "zabbix", "backup", "www-data"}
	switch rng.IntN(4) {
	case 0:
		return fmt.Sprintf("sshd[%d]: Accepted publickey for %s from 10.0.%d.%d port %d ssh2",
			1000+rng.IntN(30000), users[rng.IntN(len(users))], rng.IntN(256), rng.IntN(256), 1024+rng.IntN(60000))
	case 1:
		return fmt.Sprintf("kernel: [%d.%06d] eth0: link up, 1000Mbps, full-duplex", 100000+i, rng.IntN(1e6))
	case 2:
		return fmt.Sprintf("CRON[%d]: (%s) CMD (/usr/local/bin/job-%d.sh)", 1000+rng.IntN(30000), users[rng.IntN(len(users))], rng.IntN(20))
	}
	return fmt.Sprintf("nginx: 10.1.%d.%d - - \"GET /api/v1/items/%d HTTP/1.1\" %d %d",
		rng.IntN(256), rng.IntN(256), rng.IntN(100000), []int{200, 200, 200, 304, 404, 500}[rng.IntN(6)], rng.IntN(50000))
}

// genLogs returns n log messages with metadata.
func genLogs(rng *rand.Rand, n int, tsSec []int64) ([]string, []LogMeta) {
	vals := make([]string, n)
	meta := make([]LogMeta, n)
	sources := []string{"Security", "Application", "System", ""}
	for i := range vals {
		vals[i] = logLine(rng, i)
		meta[i] = LogMeta{
			Source:   sources[rng.IntN(len(sources))],
			Severity: int32(rng.IntN(5)),
			EventID:  int64(4624 + rng.IntN(3)),
		}
		if rng.IntN(3) > 0 && tsSec != nil {
			meta[i].Timestamp = tsSec[i]/1e9 - int64(rng.IntN(3))
		}
	}
	if n > 0 && rng.IntN(2) == 0 {
		meta[0].Severity = math.MinInt32
		meta[n-1].Severity = math.MaxInt32
		meta[n-1].EventID = math.MinInt64
		meta[0].Timestamp = math.MaxInt64
	}
	return vals, meta
}
