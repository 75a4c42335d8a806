package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Progress keeps one live status line on a terminal: elapsed time, the
// phase's own text (count, rate), and an ETA when the phase knows its
// total. Finished phases are printed as ordinary lines.
type Progress struct {
	w    io.Writer
	live bool // a terminal: redraw one line; otherwise print a line every 10 s
	mu   sync.Mutex
	last int // length of the last line, to blank it
}

// Phase is one running step of a scenario.
type Phase struct {
	Label string
	Start time.Time
	// Done and Total, when Total > 0, give the ETA; Unit names them.
	Done  func() int64
	Total int64
	Unit  string
	// Extra adds text (e.g. "drain: 12,345 readable").
	Extra func() string
}

// NewProgress writes to w (nil: nowhere).
func NewProgress(w io.Writer) *Progress {
	if w == nil {
		w = io.Discard
	}
	live := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			live = true
		}
	}
	return &Progress{w: w, live: live}
}

// Logf prints a finished line.
func (p *Progress) Logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *Progress) clear() {
	if p.last > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.last))
		p.last = 0
	}
}

// Run shows ph until the returned function is called.
func (p *Progress) Run(ph Phase) func() {
	if ph.Start.IsZero() {
		ph.Start = time.Now()
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		every := 500 * time.Millisecond
		if !p.live {
			every = 10 * time.Second
		}
		t := time.NewTicker(every)
		defer t.Stop()
		var prevN int64
		prevT := ph.Start
		rate := 0.0
		for {
			select {
			case <-stop:
				p.mu.Lock()
				p.clear()
				p.mu.Unlock()
				return
			case now := <-t.C:
				line := ph.line(now, &prevN, &prevT, &rate)
				p.mu.Lock()
				if p.live {
					p.clear()
					fmt.Fprint(p.w, line)
					p.last = len(line)
				} else {
					fmt.Fprintln(p.w, line[1:])
				}
				p.mu.Unlock()
			}
		}
	}()
	return func() {
		close(stop)
		<-done
	}
}

func (ph *Phase) line(now time.Time, prevN *int64, prevT *time.Time, rate *float64) string {
	el := now.Sub(ph.Start)
	s := fmt.Sprintf("[%s] %s", fmtDur(el), ph.Label)
	if ph.Done != nil {
		n := ph.Done()
		if dt := now.Sub(*prevT).Seconds(); dt >= 1 {
			r := float64(n-*prevN) / dt
			if *rate == 0 {
				*rate = r
			} else {
				*rate = 0.5**rate + 0.5*r
			}
			*prevN, *prevT = n, now
		}
		s += fmt.Sprintf("  %s %s", fmtCount(float64(n)), ph.Unit)
		if ph.Total > 0 {
			s += fmt.Sprintf("/%s (%.0f%%)", fmtCount(float64(ph.Total)), 100*float64(n)/float64(ph.Total))
		}
		s += fmt.Sprintf("  %s %s/s", fmtCount(*rate), ph.Unit)
		if ph.Total > 0 && *rate > 0 && n < ph.Total {
			s += "  ETA " + fmtDur(time.Duration(float64(ph.Total-n) / *rate * float64(time.Second)))
		}
	}
	if ph.Extra != nil {
		s += "  " + ph.Extra()
	}
	if len(s) > 160 {
		s = s[:160]
	}
	return "\r" + s
}

func fmtDur(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}

// fmtCount prints 1234567 as 1.23M.
func fmtCount(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
