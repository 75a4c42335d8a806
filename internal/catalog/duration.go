package catalog

import (
	"fmt"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/usermacro"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
)

// Limits on the time periods of an item, from the Zabbix item form.
const (
	maxDelaySeconds   = 86400            // update interval: at most one day
	minHistorySeconds = 3600             // history: 1h..25y or 0
	minTrendsSeconds  = 86400            // trends: 1d..25y or 0
	maxStoreSeconds   = 25 * 365 * 86400 // 25 years, Zabbix's upper bound
)

// parseRetention parses a history or trends period: "0" (keep nothing) or
// a time value within [min, maxStoreSeconds].
func parseRetention(s string, min int64) (int64, error) {
	secs, err := delay.ParseSeconds(s)
	if err != nil {
		return 0, err
	}
	if secs == 0 {
		return 0, nil
	}
	if secs < min || secs > maxStoreSeconds {
		return 0, fmt.Errorf("period %q is out of range: use 0 or %s..%s (25 years)", s, fmtSeconds(min), fmtSeconds(maxStoreSeconds))
	}
	return secs, nil
}

// DelayProblem is what is wrong with an update interval (DelayError).
type DelayProblem uint8

// Problems of an update interval.
const (
	DelaySyntax  DelayProblem = iota + 1 // not an interval
	DelayTooLong                         // a main interval over a day
	DelayNever                           // 0 and no custom interval: the item would never be polled
)

// DelayError is an update interval refused: Problem says what for
// callers that word it their own way (the API as Zabbix 6.0 does), Error
// is Peregrine's text.
type DelayError struct {
	Problem DelayProblem
	err     error
}

func (e *DelayError) Error() string { return e.err.Error() }
func (e *DelayError) Unwrap() error { return e.err }

// CheckDelay validates the update interval of an item of type t, as the
// catalog does when the item is created or changed: nil or a
// *DelayError.
func CheckDelay(s string, t ItemType) error {
	if len(s) > maxDelayLen {
		return &DelayError{DelaySyntax, fmt.Errorf("longer than %d characters", maxDelayLen)}
	}
	return checkDelay(s, t)
}

// checkDelay validates an update interval: "main" or "main;custom;...". The
// main interval is a time value of at most one day. A main interval of 0
// needs a custom interval unless the item is not polled (trapper). For
// polled items the whole interval must then also parse with the
// scheduler's parser (internal/zbx/delay), so that a flexible or
// scheduling interval the poller could not use is refused when it is
// configured; a trapper's delay is never used and only checked as above.
//
// An interval with user macros ({$INTERVAL}) is checked when it is
// scheduled, with the host's macros (package poll); here only the macro
// references must be well-formed.
func checkDelay(s string, t ItemType) error {
	if strings.Contains(s, "{$") {
		if err := checkMacroRefs(s); err != nil {
			return &DelayError{DelaySyntax, err}
		}
		return nil
	}
	main, custom, hasCustom := strings.Cut(s, ";")
	secs, err := delay.ParseSeconds(main)
	if err != nil {
		return &DelayError{DelaySyntax, err}
	}
	if secs > maxDelaySeconds {
		return &DelayError{DelayTooLong, fmt.Errorf("update interval %q is longer than one day (86400s)", s)}
	}
	if hasCustom {
		for part := range strings.SplitSeq(custom, ";") {
			if part == "" {
				return &DelayError{DelaySyntax, fmt.Errorf("update interval %q has an empty custom interval", s)}
			}
		}
	}
	if secs == 0 && !hasCustom && !t.unscheduled() {
		return &DelayError{DelayNever, fmt.Errorf("update interval %q would never poll this %s item: use a non-zero interval", s, t)}
	}
	// A main interval alone was fully checked above (the same rules);
	// only custom intervals need the parser, which allocates.
	if hasCustom && !t.unscheduled() {
		if _, err := delay.Parse(s); err != nil {
			return &DelayError{DelaySyntax, err}
		}
	}
	return nil
}

// checkMacroRefs checks that every "{$" of s starts a well-formed user
// macro reference.
func checkMacroRefs(s string) error {
	for {
		i := strings.Index(s, "{$")
		if i < 0 {
			return nil
		}
		_, n, err := usermacro.ScanRef(s[i:])
		if err != nil {
			return fmt.Errorf("%q: %w", s, err)
		}
		s = s[i+n:]
	}
}

// fmtSeconds renders a limit in the largest exact unit, for messages.
func fmtSeconds(s int64) string {
	switch {
	case s%86400 == 0:
		return fmt.Sprintf("%dd", s/86400)
	case s%3600 == 0:
		return fmt.Sprintf("%dh", s/3600)
	}
	return fmt.Sprintf("%ds", s)
}

// retention32 is parseRetention for Item's HistorySeconds and
// TrendsSeconds: at most 25 years, which an int32 holds.
func retention32(s string, min int64) (int32, error) {
	v, err := parseRetention(s, min)
	return int32(v), err
}
