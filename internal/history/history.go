package history

import (
	"context"
	"errors"
	"fmt"
)

// ValueType is the Zabbix item value type; the numbers are the ones the
// Zabbix API uses ("value_type" and history.get's "history" parameter).
type ValueType uint8

const (
	Float ValueType = 0 // numeric float, float64
	Str   ValueType = 1 // character, up to 255 characters
	Log   ValueType = 2 // log line plus log metadata
	Uint  ValueType = 3 // numeric unsigned, full uint64 range
	Text  ValueType = 4 // text, up to 65535 characters
)

// Valid reports whether t is one of the five Zabbix value types.
func (t ValueType) Valid() bool { return t <= Text }

// String returns the name the Zabbix frontend shows for t.
func (t ValueType) String() string {
	switch t {
	case Float:
		return "Numeric (float)"
	case Str:
		return "Character"
	case Log:
		return "Log"
	case Uint:
		return "Numeric (unsigned)"
	case Text:
		return "Text"
	}
	return fmt.Sprintf("ValueType(%d)", uint8(t))
}

// Numeric reports whether values of type t have trends.
func (t ValueType) Numeric() bool { return t == Float || t == Uint }

// LogMeta is the extra data a log value carries.
type LogMeta struct {
	Timestamp int64  // time in the log line, 0 if unknown
	Source    string // event log source, up to 64 characters
	Severity  int32
	EventID   int64
}

// Sample is one history value. Exactly one of F, U and S is meaningful,
// chosen by Type; Log is set only for Type == Log (and may be nil then).
//
// Samples are passed by slice in batches; a Store must copy what it keeps,
// since the pipeline reuses the backing arrays.
type Sample struct {
	ItemID uint64
	Clock  int64 // unix seconds
	NS     int32 // nanoseconds within Clock, 0..999999999
	Type   ValueType
	F      float64
	U      uint64
	S      string
	Log    *LogMeta
}

// Before reports whether s sorts before o in time (clock, then ns).
func (s *Sample) Before(o *Sample) bool {
	return s.Clock < o.Clock || (s.Clock == o.Clock && s.NS < o.NS)
}

// Query selects one item's samples in [From, Till] (unix seconds, both
// inclusive, as in the Zabbix API), newest first when Desc is set, at most
// Limit samples when Limit > 0.
type Query struct {
	ItemID uint64
	From   int64
	Till   int64
	Desc   bool
	Limit  int
}

// Writer accepts batches of samples.
type Writer interface {
	// Write stores samples. It MUST NOT return nil before every sample is
	// as durable as the store's configured policy promises: the trapper
	// acknowledges values to senders on the strength of that nil. A
	// Write is all or nothing: on error none of the samples is stored,
	// and none may come back after a restart either (the trapper tells
	// the sender "failed", and a sender that sends them again must not
	// find them twice). Write MAY be called
	// concurrently and MUST NOT keep a reference to samples after it
	// returns. Samples in one call need not be sorted or of one item.
	Write(ctx context.Context, samples []Sample) error
}

// Reader serves range reads.
type Reader interface {
	// Read calls fn with each sample selected by q, in q's order, until fn
	// returns false or the samples run out. The *Sample passed to fn is
	// only valid during the call. Read MUST NOT block concurrent Writes
	// for longer than it takes to copy a bounded amount of data.
	Read(ctx context.Context, q Query, fn func(*Sample) bool) error
}

// Store is a complete history backend.
type Store interface {
	Writer
	Reader
	// Close flushes what the store buffers and releases its resources.
	// No method may be called after Close.
	Close() error
}

// ErrClosed is returned by a Store used after Close.
var ErrClosed = errors.New("history store is closed")
