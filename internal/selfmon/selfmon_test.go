package selfmon

import (
	"bytes"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestWriteText(t *testing.T) {
	r := NewRegistry()
	c := r.Counter("peregrine_values_received_total", "Values received.")
	c.Add(41)
	c.Inc()
	g := r.Gauge("peregrine_queue_values", "Queued values.", "shard", "0")
	g.Set(7)
	r.Gauge("peregrine_queue_values", "Queued values.", "shard", "1").Set(-2)
	r.GaugeFunc("peregrine_up", "Always 1.", func() float64 { return 1 })
	r.Rate("peregrine_values_received_per_second", "Rate.", func() float64 { return float64(c.Load()) })
	start := time.Now()
	r.Tick(start)
	c.Add(100)
	r.Tick(start.Add(2 * time.Second))

	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	got := rec.Body.String()
	want := `# HELP peregrine_queue_values Queued values.
# TYPE peregrine_queue_values gauge
peregrine_queue_values{shard="0"} 7
peregrine_queue_values{shard="1"} -2
# HELP peregrine_up Always 1.
# TYPE peregrine_up gauge
peregrine_up 1
# HELP peregrine_values_received_per_second Rate.
# TYPE peregrine_values_received_per_second gauge
peregrine_values_received_per_second 50
# HELP peregrine_values_received_total Values received.
# TYPE peregrine_values_received_total counter
peregrine_values_received_total 142
`
	if got != want {
		t.Fatalf("exposition mismatch:\n got:\n%s\nwant:\n%s", got, want)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("content type %q", ct)
	}
}

func TestDuplicateRegistrationPanics(t *testing.T) {
	r := NewRegistry()
	r.Counter("x_total", "x")
	defer func() {
		if recover() == nil {
			t.Fatal("second registration of the same series did not panic")
		}
	}()
	r.Counter("x_total", "x")
}

func TestLogThrottle(t *testing.T) {
	var buf bytes.Buffer
	th := NewLogThrottle(slog.New(slog.NewTextHandler(&buf, nil)), time.Hour)
	for i := 0; i < 5; i++ {
		th.Warn("bad-frame", "bad frame", "remote", "127.0.0.1:1")
	}
	th.Warn("other", "other problem")
	if n := strings.Count(buf.String(), "bad frame"); n != 1 {
		t.Fatalf("logged %d times, want 1:\n%s", n, buf.String())
	}
	if n := strings.Count(buf.String(), "other problem"); n != 1 {
		t.Fatalf("other key logged %d times, want 1", n)
	}
	th.window = 0
	th.Warn("bad-frame", "bad frame again")
	if !strings.Contains(buf.String(), "suppressed=4") {
		t.Fatalf("suppressed count missing:\n%s", buf.String())
	}
}
