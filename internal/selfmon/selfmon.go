package selfmon

import (
	"bufio"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Counter is a monotonically increasing count.
type Counter struct {
	v atomic.Uint64
	_ [56]byte // pad to a cache line: shards bump counters concurrently
}

// Add adds n.
func (c *Counter) Add(n uint64) { c.v.Add(n) }

// Inc adds one.
func (c *Counter) Inc() { c.v.Add(1) }

// Load returns the current count.
func (c *Counter) Load() uint64 { return c.v.Load() }

// Gauge is a value that goes up and down.
type Gauge struct {
	v atomic.Int64
	_ [56]byte
}

// Set sets the gauge.
func (g *Gauge) Set(v int64) { g.v.Store(v) }

// Add adds d (which may be negative).
func (g *Gauge) Add(d int64) { g.v.Add(d) }

// Load returns the current value.
func (g *Gauge) Load() int64 { return g.v.Load() }

type kind int

const (
	kindCounter kind = iota
	kindGauge
	kindHistogram
)

type series struct {
	labels string // rendered `{a="b"}` or ""
	value  func() float64
	// hist and raw are set for histograms, whose series render as
	// several lines.
	hist *Histogram
	raw  Labels
}

type family struct {
	name, help string
	kind       kind
	series     []series
}

// Registry is a set of metric families.
type Registry struct {
	mu       sync.Mutex
	families map[string]*family
	rates    []*rate
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{families: map[string]*family{}} }

// Labels are label name/value pairs, in order.
type Labels []string

func (l Labels) render() string {
	if len(l) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(l); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l[i])
		b.WriteString(`="`)
		b.WriteString(escapeLabel(l[i+1]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(s)
}

func (r *Registry) add(name, help string, k kind, labels Labels, value func() float64) {
	r.addSeries(name, help, k, labels, series{labels: labels.render(), value: value})
}

func (r *Registry) addHistogram(name, help string, labels Labels, h *Histogram) {
	r.addSeries(name, help, kindHistogram, labels, series{labels: labels.render(), hist: h, raw: labels})
}

func (r *Registry) addSeries(name, help string, k kind, labels Labels, s series) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.families[name]
	if f == nil {
		f = &family{name: name, help: help, kind: k}
		r.families[name] = f
	}
	if f.kind != k {
		panic("BUG: metric " + name + " registered with two kinds")
	}
	for _, o := range f.series {
		if o.labels == s.labels {
			panic("BUG: metric " + name + s.labels + " registered twice")
		}
	}
	f.series = append(f.series, s)
}

// Counter registers and returns a new counter.
func (r *Registry) Counter(name, help string, labels ...string) *Counter {
	c := &Counter{}
	r.add(name, help, kindCounter, labels, func() float64 { return float64(c.Load()) })
	return c
}

// Gauge registers and returns a new gauge.
func (r *Registry) Gauge(name, help string, labels ...string) *Gauge {
	g := &Gauge{}
	r.add(name, help, kindGauge, labels, func() float64 { return float64(g.Load()) })
	return g
}

// GaugeFunc registers a gauge whose value is read from fn at scrape time.
// fn must be cheap and safe to call from any goroutine.
func (r *Registry) GaugeFunc(name, help string, fn func() float64, labels ...string) {
	r.add(name, help, kindGauge, labels, fn)
}

// CounterFunc registers a counter whose value is read from fn.
func (r *Registry) CounterFunc(name, help string, fn func() float64, labels ...string) {
	r.add(name, help, kindCounter, labels, fn)
}

// rate turns a counter into a per-second gauge, sampled by Tick.
type rate struct {
	src      func() float64
	mu       sync.Mutex
	last     float64
	lastTime time.Time
	perSec   float64
}

// Rate registers a gauge named name holding the per-second increase of
// src over the last tick interval. Prometheus can compute rates itself;
// this is for people reading /metrics or the UI directly.
func (r *Registry) Rate(name, help string, src func() float64, labels ...string) {
	rt := &rate{src: src, last: src(), lastTime: time.Now()}
	r.mu.Lock()
	r.rates = append(r.rates, rt)
	r.mu.Unlock()
	r.add(name, help, kindGauge, labels, func() float64 {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		return rt.perSec
	})
}

// Tick updates every rate from the time of the previous tick to now.
func (r *Registry) Tick(now time.Time) {
	r.mu.Lock()
	rates := append([]*rate(nil), r.rates...)
	r.mu.Unlock()
	for _, rt := range rates {
		v := rt.src()
		rt.mu.Lock()
		if dt := now.Sub(rt.lastTime).Seconds(); dt > 0 {
			rt.perSec = (v - rt.last) / dt
		}
		rt.last, rt.lastTime = v, now
		rt.mu.Unlock()
	}
}

// RunRates ticks the rates every interval until stop is closed.
func (r *Registry) RunRates(stop <-chan struct{}, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			r.Tick(now)
		}
	}
}

// WriteText writes every family in the Prometheus text exposition format
// (version 0.0.4), families sorted by name.
func (r *Registry) WriteText(w io.Writer) error {
	r.mu.Lock()
	fams := make([]family, 0, len(r.families))
	for _, f := range r.families {
		fams = append(fams, family{name: f.name, help: f.help, kind: f.kind, series: append([]series(nil), f.series...)})
	}
	r.mu.Unlock()
	sort.Slice(fams, func(i, j int) bool { return fams[i].name < fams[j].name })
	bw := bufio.NewWriter(w)
	var num []byte
	for _, f := range fams {
		bw.WriteString("# HELP ")
		bw.WriteString(f.name)
		bw.WriteByte(' ')
		bw.WriteString(strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(f.help))
		bw.WriteString("\n# TYPE ")
		bw.WriteString(f.name)
		switch f.kind {
		case kindCounter:
			bw.WriteString(" counter\n")
		case kindHistogram:
			bw.WriteString(" histogram\n")
		default:
			bw.WriteString(" gauge\n")
		}
		for _, s := range f.series {
			if s.hist != nil {
				num = s.hist.appendText(num[:0], f.name, s.raw)
				bw.Write(num)
				continue
			}
			bw.WriteString(f.name)
			bw.WriteString(s.labels)
			bw.WriteByte(' ')
			num = appendFloat(num[:0], s.value())
			bw.Write(num)
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// Handler serves the registry at /metrics.
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_ = r.WriteText(w)
	})
}
