package selfmon

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// LogThrottle logs a message at most once per window per key and reports
// how many were suppressed in between, so that a flood of bad input costs
// one log line per window instead of one per request.
type LogThrottle struct {
	log    *slog.Logger
	window time.Duration
	mu     sync.Mutex
	seen   map[string]*throttleState
}

type throttleState struct {
	last       time.Time
	suppressed int
}

// NewLogThrottle returns a throttle that logs each key once per window.
func NewLogThrottle(log *slog.Logger, window time.Duration) *LogThrottle {
	return &LogThrottle{log: log, window: window, seen: map[string]*throttleState{}}
}

// Allow reports whether key may be logged now and, if so, how many
// repeats were suppressed since it last was. Callers use it to avoid even
// building log arguments for suppressed repeats.
func (t *LogThrottle) Allow(key string) (suppressed int, ok bool) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.seen[key]
	if st == nil {
		if len(t.seen) > 10000 { // bound the map under a key explosion
			clear(t.seen)
		}
		st = &throttleState{}
		t.seen[key] = st
	} else if now.Sub(st.last) < t.window {
		st.suppressed++
		return 0, false
	}
	n := st.suppressed
	st.last, st.suppressed = now, 0
	return n, true
}

// Warn logs msg with args under key unless key was logged within the
// window; when it logs, it adds the number of suppressed repeats.
func (t *LogThrottle) Warn(key, msg string, args ...any) {
	n, ok := t.Allow(key)
	if !ok {
		return
	}
	if n > 0 {
		args = append(args, "suppressed", n)
	}
	t.log.Log(context.Background(), slog.LevelWarn, msg, args...)
}
