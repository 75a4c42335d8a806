package selfmon

import (
	"strings"
	"testing"
	"time"
)

func TestBusyCountsAndExposes(t *testing.T) {
	r := NewRegistry()
	b := r.Busy("x_busy_seconds_total", "help", 0)
	if b.Goroutines != 1 {
		t.Fatalf("Goroutines = %d for 0; want 1", b.Goroutines)
	}
	b.Add(1500 * time.Millisecond)
	b.Since(time.Now().Add(-time.Second))
	if n := b.Nanos(); n < int64(2500*time.Millisecond) {
		t.Fatalf("Nanos = %d; want at least 2.5 s", n)
	}
	var sb strings.Builder
	if err := r.WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "# TYPE x_busy_seconds_total counter\nx_busy_seconds_total 2.5") {
		t.Fatalf("exposition:\n%s", sb.String())
	}
}
