package poll

import (
	"context"
	"time"
)

// Check is one due check handed to a Checker.
type Check struct {
	ItemID      uint64
	HostID      uint64
	InterfaceID uint64
	// Key is the item key as configured (no macros yet).
	Key string
	// Addr is the interface's "host:port" (IP or DNS, per its useip).
	Addr string
	// Timeout bounds the whole check: connecting, asking and reading the
	// reply (the item's timeout, else poll.default_timeout).
	Timeout time.Duration
	// Due is when the check was scheduled; check latency is measured
	// from it.
	Due time.Time
	// Sent is when the scheduler handed the check to its checker (real
	// time, set by the scheduler).
	Sent time.Time
}

// Status is what a check found.
type Status uint8

const (
	// OK: Value holds the value as the peer sent it.
	OK Status = iota
	// NotSupported: the peer answered, but not with a value (Zabbix's
	// ZBX_NOTSUPPORTED, or a reply we cannot read). The item becomes not
	// supported with Error; the interface is fine.
	NotSupported
	// NetworkError: the interface did not answer (refused, timed out,
	// reset, closed without a reply). The item keeps its state; the
	// interface's availability counts the failure, with Error.
	NetworkError
	// LocalError: the check could not be made for a reason of this
	// server's (out of file descriptors or ports): neither the item nor
	// the interface is blamed; the check runs again at its next time.
	LocalError
	// NumStatus is the number of statuses (for arrays indexed by one).
	NumStatus
)

var statusNames = [NumStatus]string{"ok", "not_supported", "network_error", "local_error"}

// String is the status's metric label.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// Result is the outcome of one Check.
type Result struct {
	Check
	Status Status
	// Value is the reply for OK; it belongs to the scheduler once
	// reported (the checker must not reuse it).
	Value []byte
	// Error is the message for NotSupported and NetworkError, worded for
	// item.get's error or host.get's interface error.
	Error string
	// Clock is when the reply arrived (the value's timestamp).
	Clock time.Time
	// TimedOut says the result came from the check's time running out
	// (no reply, or packets unanswered, within its timeout), whatever
	// its Status: a timeout's network error, a simple check's 0 or 100 %
	// loss, an HTTP agent's or external check's "Timeout ..." not
	// supported. If this process was behind during the check
	// (Scheduler.behind), the result says nothing of the target: it is
	// not stored nor counted against the interface, and the check runs
	// again at once (postponed).
	TimedOut bool
	// Also are values of other items of the check's host that the
	// check brought (a web scenario's per-step items beside its
	// web.test.fail item), stored with the result's own the same way;
	// nil for every other checker.
	Also []Value
}

// Value is one value of Result.Also.
type Value struct {
	ItemID uint64
	Value  []byte
	Clock  time.Time
}

// Checker runs checks of one item type. Check MUST return without
// waiting for the checks it starts: the scheduler calls it from its one
// loop, and a slow host must never hold the others. It MUST call done
// exactly once per check of batch, from any goroutine, once that check is
// over (or abandoned because ctx ended); done does not block for long
// and may be called concurrently. A check abandoned because ctx ended
// MUST be reported as a NetworkError (which a stopping scheduler keeps
// out of availability) or a LocalError, never as OK or NotSupported:
// both can store a value, the latter through an item's "check for not
// supported value" step. Package polltest holds checkers to this. Check MAY keep batch until every done
// of it has been called. The scheduler bounds how many checks are in
// flight, so a checker needs no queue of its own.
type Checker interface {
	Check(ctx context.Context, batch []Check, done func(*Result))
}
