package historytest

import (
	"bufio"
	"bytes"
	_ "embed" // the recorded corpus
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// The recorded corpus: values of real programs, not of a generator.
// testdata/corpus.zst was recorded on this project's machine by
// TestRecordCorpus (corpus_record_test.go, which says how to re-record
// it): the real zabbix_agentd and zabbix_agent2 polled for the Linux
// templates' keys and the real snmpd for IF-MIB, TCP/UDP/IP, UCD and
// HOST-RESOURCES objects, once a second (text every 30 s), each value
// stamped when its answer arrived; two log items (the agentd's own
// debug log as it wrote it, /var/log/dpkg.log replayed 20 lines a
// second).
//
// Two corpora come from it:
//
//   - CorpusRecorded: the recording as it is, plus one "rate" item per
//     counter (the templates' "change per second" computed from the
//     recorded values and timestamps, a float with full precision, as
//     Zabbix stores it). Nothing in it is derived but the rates.
//   - CorpusDay: a day derived from the recording (see there): recorded
//     values and recorded sub-second timestamps, re-timed to intervals of
//     1 s to 15 min, with counters that wrap at 32 and at 64 bits.

//go:embed testdata/corpus.zst
var corpusZst []byte

// Corpus classes: what a value is, for per-class figures.
const (
	ClassFloat   = "float"   // a gauge of floats (CPU %, load)
	ClassUint    = "uint"    // a gauge of unsigned ints (memory, processes, status)
	ClassCounter = "counter" // a raw counter, unsigned, may wrap
	ClassRate    = "rate"    // a counter's change per second, float
	ClassText    = "text"    // character or text values
	ClassLog     = "log"     // log lines
)

// CorpusClasses lists the classes in report order.
var CorpusClasses = []string{ClassFloat, ClassUint, ClassCounter, ClassRate, ClassText, ClassLog}

// CorpusItem is one item of a corpus and its values in time order.
type CorpusItem struct {
	ID       uint64
	Source   string // agentd, agent2, snmpd, dpkg
	Class    string
	Key      string
	Interval int64 // seconds between values (0: irregular, log items)
	Samples  []history.Sample
}

// recorded is the parsed recording: per item, raw timestamps (unix ns)
// and value texts.
type recorded struct {
	items []CorpusItem
	at    [][]int64
	vals  [][]string
}

var loadRecording = sync.OnceValues(func() (*recorded, error) {
	zr, err := zstd.NewReader(bytes.NewReader(corpusZst))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	r := &recorded{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.SplitN(l, "\t", 5)
		if f[0] == "I" && len(f) == 5 {
			r.items = append(r.items, CorpusItem{Source: f[2], Class: f[3], Key: f[4]})
			r.at, r.vals = append(r.at, nil), append(r.vals, nil)
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("corpus: bad line %q", l)
		}
		i, err1 := strconv.Atoi(f[0])
		t, err2 := strconv.ParseInt(f[1], 10, 64)
		v, err3 := strconv.Unquote(f[2])
		if err1 != nil || err2 != nil || err3 != nil || i < 0 || i >= len(r.items) {
			return nil, fmt.Errorf("corpus: bad line %q", l)
		}
		// Each item's values in time order (the recorder's tickers
		// append concurrently).
		if n := len(r.at[i]); n > 0 && t <= r.at[i][n-1] {
			continue
		}
		r.at[i], r.vals[i] = append(r.at[i], t), append(r.vals[i], v)
	}
	return r, sc.Err()
})

// valueType is the Zabbix value type a class's values are stored as.
func valueType(class, v string) history.ValueType {
	switch class {
	case ClassFloat, ClassRate:
		return history.Float
	case ClassUint, ClassCounter:
		return history.Uint
	case ClassLog:
		return history.Log
	}
	if len(v) > 255 {
		return history.Text
	}
	return history.Str
}

func sample(id uint64, class string, t int64, v string) (history.Sample, bool) {
	s := history.Sample{ItemID: id, Clock: t / 1e9, NS: int32(t % 1e9), Type: valueType(class, v)}
	var err error
	switch s.Type {
	case history.Float:
		s.F, err = strconv.ParseFloat(v, 64)
	case history.Uint:
		s.U, err = strconv.ParseUint(v, 10, 64)
	default:
		s.S = v
	}
	return s, err == nil
}

// rates appends the change per second of a counter's samples, as the
// templates' preprocessing computes it (a wrap or reset gives none).
func rates(dst []history.Sample, id uint64, src []history.Sample) []history.Sample {
	for k := 1; k < len(src); k++ {
		a, b := src[k-1], src[k]
		if b.U < a.U {
			continue
		}
		dt := float64(b.Clock-a.Clock) + float64(b.NS-a.NS)/1e9
		if dt <= 0 {
			continue
		}
		dst = append(dst, history.Sample{ItemID: id, Clock: b.Clock, NS: b.NS, Type: history.Float, F: float64(b.U-a.U) / dt})
	}
	return dst
}

// CorpusRecorded returns the recording as recorded (see the comment
// above CorpusItem), items numbered from 1.
func CorpusRecorded() ([]CorpusItem, error) {
	r, err := loadRecording()
	if err != nil {
		return nil, err
	}
	var out []CorpusItem
	for i, it := range r.items {
		it.ID = uint64(len(out) + 1)
		it.Interval = 1
		if it.Class == ClassText {
			it.Interval = 30
		}
		if it.Class == ClassLog {
			it.Interval = 0
		}
		for k, t := range r.at[i] {
			if s, ok := sample(it.ID, it.Class, t, r.vals[i][k]); ok {
				it.Samples = append(it.Samples, s)
			}
		}
		if len(it.Samples) == 0 {
			continue
		}
		out = append(out, it)
		if it.Class == ClassCounter {
			rate := CorpusItem{ID: uint64(len(out) + 1), Source: it.Source, Class: ClassRate, Key: "rate(" + it.Key + ")", Interval: 1}
			rate.Samples = rates(nil, rate.ID, it.Samples)
			if len(rate.Samples) > 0 {
				out = append(out, rate)
			}
		}
	}
	return out, nil
}

// CorpusDay derives a day (from RealisticStart) from the recording,
// deterministically from seed:
//
//   - Each numeric item gets an interval of 1 s (5 %), 10 s (25 %), 30 s
//     (30 %) or 60 s (40 %), text items 15 min; a value is due at a whole
//     second (start + phase + k·interval) and stamped there plus one of
//     the item's recorded sub-second offsets (the time its answer took
//     to arrive after the poll's second began), taken in recorded order
//     from a random start: the jitter is real, its order is replayed.
//   - Gauges (float, uint) walk by the recorded change over one interval
//     at a random point of the recording (v[j+interval] − v[j]), kept in
//     the recorded range by reflection and at the recorded number of
//     decimals; a constant stays constant.
//   - Counters grow by recorded increments over one interval the same
//     way. 32-bit SNMP counters (ifInOctets, ifOutOctets, tcpInSegs, …)
//     start so that they wrap at 2^32 near midday if their day's growth
//     allows; each agent's net.if.in[eth0] has a twin "…#wrap64" that
//     wraps at 2^64 near midday.
//   - Rates are computed from the derived counters (change per second).
//   - Text values repeat as recorded; log items replay their recorded
//     lines with their recorded offsets six times a day, every four
//     hours.
func CorpusDay(seed uint64) ([]CorpusItem, error) {
	rec, err := CorpusRecorded()
	if err != nil {
		return nil, err
	}
	const day = 86400
	var out []CorpusItem
	add := func(it CorpusItem) {
		if len(it.Samples) > 0 {
			out = append(out, it)
		}
	}
	for _, ri := range rec {
		if ri.Class == ClassRate {
			continue // recomputed from the derived counter
		}
		r := rand.New(rand.NewPCG(seed, uint64(ri.ID)))
		it := CorpusItem{Source: ri.Source, Class: ri.Class, Key: ri.Key}
		switch ri.Class {
		case ClassLog:
			it.ID = uint64(len(out) + 1)
			t0 := ri.Samples[0].Clock
			for w := int64(0); w < 6; w++ {
				for _, s := range ri.Samples {
					s.ItemID = it.ID
					s.Clock = RealisticStart + w*4*3600 + (s.Clock - t0)
					it.Samples = append(it.Samples, s)
				}
			}
			add(it)
			continue
		case ClassText:
			it.Interval = 900
		default:
			switch p := r.IntN(100); {
			case p < 5:
				it.Interval = 1
			case p < 30:
				it.Interval = 10
			case p < 60:
				it.Interval = 30
			default:
				it.Interval = 60
			}
		}
		stamps := dayStamps(r, ri.Samples, it.Interval, day)
		variants := []string{""}
		if ri.Class == ClassCounter && ri.Key == "net.if.in[eth0]" {
			variants = append(variants, "#wrap64")
		}
		for _, variant := range variants {
			it := it
			it.Key += variant
			it.ID = uint64(len(out) + 1)
			it.Samples = make([]history.Sample, len(stamps))
			for k, t := range stamps {
				it.Samples[k] = history.Sample{ItemID: it.ID, Clock: t / 1e9, NS: int32(t % 1e9), Type: ri.Samples[0].Type}
			}
			dayValues(r, it.Samples, ri, it.Interval, variant)
			add(it)
			if ri.Class == ClassCounter {
				rate := CorpusItem{ID: uint64(len(out) + 1), Source: it.Source, Class: ClassRate, Key: "rate(" + it.Key + ")", Interval: it.Interval}
				rate.Samples = rates(nil, rate.ID, it.Samples) // a wrap gives no rate, as in Zabbix
				add(rate)
			}
		}
	}
	return out, nil
}

// wraps32 reports whether a recorded key is a 32-bit SNMP counter.
func wraps32(key string) bool {
	for _, p := range []string{"ifInOctets.", "ifOutOctets.", "ifInDiscards.", "ifInErrors.", "tcpInSegs", "tcpOutSegs", "udpInDatagrams", "ipInReceives", "ssCpuRaw"} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// dayStamps are an item's timestamps over a day at interval seconds, each
// a whole second plus a recorded sub-second offset (in recorded order).
func dayStamps(r *rand.Rand, rec []history.Sample, interval, day int64) []int64 {
	phase := r.Int64N(interval)
	j := r.IntN(len(rec))
	out := make([]int64, 0, day/interval+1)
	for t := RealisticStart + phase; t < RealisticStart+day; t += interval {
		out = append(out, t*1e9+int64(rec[j].NS))
		if j++; j == len(rec) {
			j = 0
		}
	}
	return out
}

// dayValues fills the derived values of one item (see CorpusDay).
func dayValues(r *rand.Rand, dst []history.Sample, ri CorpusItem, interval int64, variant string) {
	rec := ri.Samples
	step := int(interval) // the recording has one value a second
	if step >= len(rec) {
		step = len(rec) - 1
	}
	pick := func() int { return r.IntN(len(rec) - step) }
	switch ri.Class {
	case ClassText:
		j := r.IntN(len(rec))
		for k := range dst {
			dst[k].S = rec[j].S
			if j++; j == len(rec) {
				j = 0
			}
		}
	case ClassFloat:
		dec := 0
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range rec {
			lo, hi = min(lo, s.F), max(hi, s.F)
			dec = max(dec, decimals(s.F))
		}
		scale := math.Pow(10, float64(dec))
		v := rec[r.IntN(len(rec))].F
		for k := range dst {
			dst[k].F = math.Round(v*scale) / scale
			if step > 0 {
				j := pick()
				v = reflect(v+rec[j+step].F-rec[j].F, lo, hi)
			}
		}
	case ClassUint:
		lo, hi := rec[0].U, rec[0].U
		for _, s := range rec {
			lo, hi = min(lo, s.U), max(hi, s.U)
		}
		v := rec[r.IntN(len(rec))].U
		for k := range dst {
			dst[k].U = v
			if step > 0 {
				j := pick()
				d := int64(rec[j+step].U - rec[j].U)
				v = uint64(reflect(float64(int64(v)+d), float64(lo), float64(hi)))
			}
		}
	case ClassCounter:
		inc := make([]uint64, len(dst))
		var total uint64
		for k := range inc {
			if step > 0 {
				j := pick()
				if a, b := rec[j].U, rec[j+step].U; b >= a {
					inc[k] = b - a
				}
			}
			total += inc[k]
		}
		v := rec[0].U
		var mod uint64 // 0: 2^64
		switch {
		case variant == "#wrap64":
			v = -(total / 2) // 2^64 − half the day's growth
		case wraps32(ri.Key):
			mod = 1 << 32
			if total < 1<<32 {
				v = 1<<32 - total/2
			} else {
				v %= mod
			}
		}
		for k := range dst {
			dst[k].U = v
			v += inc[k]
			if mod != 0 {
				v %= mod
			}
		}
	}
}

// decimals is how many decimals (at most 6, what agents print) a
// recorded float has.
func decimals(f float64) int {
	for d := 0; d < 6; d++ {
		p := math.Pow(10, float64(d))
		if math.Abs(math.Round(f*p)/p-f) < 1e-9*math.Max(1, math.Abs(f)) {
			return d
		}
	}
	return 6
}

// reflect folds v into [lo, hi].
func reflect(v, lo, hi float64) float64 {
	if hi <= lo {
		return lo
	}
	for v < lo || v > hi {
		if v < lo {
			v = 2*lo - v
		}
		if v > hi {
			v = 2*hi - v
		}
	}
	return v
}
