package poll

import "time"

// The in-flight limit while behind. A check handed out while this
// process is short of CPU waits for it twice: to open its socket and to
// read its reply. Past its capacity a poller that keeps opening sockets
// up to MaxInFlight has more checks in flight than it can complete
// within their timeout: most of them time out in flight (postponed, see
// behind), and the connections they cost are taken from the checks that
// could have been done. So once a second the loop looks at how far
// behind the process was over the last second (Lag); while it was at
// least behindShare of it, the checks in flight are bounded by
// Options.MaxInFlightBehind, or, when that is 0, by what the process
// completed a second (smoothed over the last seconds, so one second in
// which results waited does not throttle it) scaled to a third of
// DefaultTimeout (Little's law: that many in flight wait about a third
// of their timeout for their turn), and never below minInFlightBehind
// (1,000);
// it falls by at most half a second, so it finds that level in a few
// seconds rather than from one second's figures. Once the process is no
// longer behind the bound doubles every second until it reaches
// MaxInFlight and is lifted: a poller that just caught up does not open
// MaxInFlight sockets at once and fall behind again.
const (
	// behindShare: the share of a second of scheduling lag from which
	// the process counts as behind.
	behindShare = 4 // lag >= 1/behindShare of the span
	// minInFlightBehind is the adaptive limit's floor. Checks waiting
	// out a dead target's timeout hold their place in flight without
	// costing CPU: with a few dozen such targets a floor of tens would
	// leave healthy items no room (TestIntegrationRemoteUnreachable on a
	// loaded machine). The collapse the limit is for comes with
	// thousands in flight.
	minInFlightBehind = 1000
)

// inFlightLimit is the loop's state of the limit.
type inFlightLimit struct {
	limit int       // in effect; 0: none (MaxInFlight alone)
	done  int       // checks completed (not postponed) since last
	last  time.Time // time of the last update; zero before the first
	rate  float64   // completions a second, smoothed; -1 before the first
}

// updateLimit recomputes the in-flight limit at now, at most once a
// second.
func (s *Scheduler) updateLimit(now time.Time) {
	l := &s.limit
	if l.last.IsZero() {
		l.last, l.done, l.rate = now, 0, -1
		// The first turn: no second to judge yet, but a process already
		// behind at start (a restart into a storm) is bounded at once.
		if lag := s.lag.Stalled(now.Add(-time.Second), now); lag*behindShare >= time.Second {
			s.setLimit(s.behindBound(0))
		}
		return
	}
	span := now.Sub(l.last)
	if span < time.Second/2 {
		return
	}
	lag := s.lag.Stalled(l.last, now)
	if rate := float64(l.done) / span.Seconds(); l.rate < 0 {
		l.rate = rate
	} else {
		l.rate = (l.rate + rate) / 2
	}
	l.last, l.done = now, 0
	switch {
	case lag*behindShare >= span:
		n := s.behindBound(l.rate)
		if s.opts.MaxInFlightBehind == 0 {
			cur := l.limit
			if cur == 0 {
				cur = max(s.inFlight, minInFlightBehind)
			}
			n = min(max(n, cur/2), s.opts.MaxInFlight)
		}
		s.setLimit(n)
	case l.limit > 0 && l.limit*2 >= s.opts.MaxInFlight:
		s.setLimit(0)
	case l.limit > 0:
		s.setLimit(l.limit * 2)
	}
}

// behindBound is the limit while behind, at rate checks completed a
// second.
func (s *Scheduler) behindBound(rate float64) int {
	if s.opts.MaxInFlightBehind > 0 {
		return min(s.opts.MaxInFlightBehind, s.opts.MaxInFlight)
	}
	n := int(rate * s.opts.DefaultTimeout.Seconds() / 3)
	return min(max(n, minInFlightBehind), s.opts.MaxInFlight)
}

func (s *Scheduler) setLimit(n int) {
	s.limit.limit = n
	if n == 0 {
		n = s.opts.MaxInFlight
	}
	s.limitGauge.Store(int64(n))
}

// limitHeld reports whether the limit while behind keeps lane l's due
// checks waiting now (MaxInFlight may hold them too; the lane's own
// bound is not the limit's doing).
func (s *Scheduler) limitHeld(l *lane, ms int64) bool {
	return s.limit.limit > 0 && s.inFlight >= s.limit.limit &&
		len(l.heap) > 0 && l.heap[0].next <= ms && (l.spec.MaxInFlight == 0 || l.inFlight < l.spec.MaxInFlight)
}

// InFlightLimit is the bound on checks in flight in effect: MaxInFlight,
// or lower while the process is behind. Safe from any goroutine.
func (s *Scheduler) InFlightLimit() int { return int(s.limitGauge.Load()) }
