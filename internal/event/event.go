package event

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Zabbix's event source and object numbers Peregrine produces.
const (
	SourceTrigger   = 0 // events of triggers
	SourceDiscovery = 1 // network discovery: discovered hosts (object 1) and services (object 2)
	SourceAutoreg   = 2 // auto-registration of active agents
	SourceInternal  = 3 // internal events: items, triggers, LLD rules changing state
	ObjectTrigger   = 0 // the object is a trigger
	ObjectAutoreg   = 3 // an auto-registered host (autoreg host ID)
	ObjectItem      = 4 // an item (internal events)
	ObjectLLDRule   = 5 // an LLD rule (internal events)
)

// Event values.
const (
	ValueOK      = 0
	ValueProblem = 1
)

// Acknowledge action bits (Zabbix's event.acknowledge "action").
const (
	ActionClose              = 1
	ActionAcknowledge        = 2
	ActionMessage            = 4
	ActionSeverity           = 8
	ActionUnacknowledge      = 16
	actionsKnown             = 31
	recordVersion       byte = 1
)

// Tag is an event tag.
type Tag struct {
	Tag   string
	Value string
}

// Event is one event: of a trigger, a problem (Value 1) or an OK event
// (Value 0); of auto-registration (Source 2, Value 1, ObjectID the
// autoreg host); or internal (Source 3: Value 1 the object became not
// supported or unknown, 0 normal again, resolving the former through
// Resolves). Events returned by a Store are copies; their slices are
// shared and MUST NOT be modified.
type Event struct {
	ID       uint64
	Source   uint8
	Object   uint8
	ObjectID uint64 // the trigger
	Clock    int64
	NS       int32
	Value    uint8
	Severity uint8 // current severity (event.acknowledge may change it)
	Name     string
	Opdata   string
	Tags     []Tag
	// Suppressed is set for a problem raised during maintenance.
	Suppressed bool
	// Acknowledged is set by an acknowledge action and cleared by an
	// unacknowledge.
	Acknowledged bool

	// Of a problem: the OK event that resolved it (0 while open), its
	// time, and the user who closed it manually (0: it recovered).
	REventID uint64
	RClock   int64
	RNS      int32
	UserID   uint64
	// CEventID, of an OK event made by event correlation, is the new
	// problem that caused it (Zabbix's c_eventid; for "close new event"
	// the problem it closes).
	CEventID uint64
	// CorrelationID is, of an OK event made by event correlation, the
	// rule that made it; of a problem it closed, the same rule (set
	// when the OK event is applied, as Zabbix's problem.correlationid).
	CorrelationID uint64
	// NoAction marks a problem closed at once by a correlation's "close
	// new event" and the OK event closing it: actions ignore both, as
	// Zabbix 6.0 runs none for them.
	NoAction bool

	// Of an OK event: the problems it resolves.
	Resolves []uint64

	// Cause, when not 0, is 1 + the index in its Batch of the new
	// problem whose correlation made this OK event: Commit sets CEventID
	// to that problem's ID and, when Resolves is empty ("close new
	// event"), Resolves to it. Not stored: the IDs it gives are.
	Cause int
}

// Open reports whether e is a problem that is not resolved.
func (e *Event) Open() bool { return e.Value == ValueProblem && e.REventID == 0 }

// Ack is one acknowledge action on an event.
type Ack struct {
	ID          uint64
	EventID     uint64
	UserID      uint64
	Clock       int64
	Action      uint32
	Message     string
	OldSeverity uint8
	NewSeverity uint8
}

// Runtime is a trigger's runtime state: what Zabbix keeps in the
// triggers table besides configuration.
type Runtime struct {
	TriggerID    uint64
	Value        uint8 // 0 OK, 1 PROBLEM
	State        uint8 // 0 normal, 1 unknown
	Error        string
	LastChange   int64
	LastChangeNS int32
}

// Suppression changes whether a problem is suppressed: maintenance
// starting or ending over a problem that is already open.
type Suppression struct {
	EventID    uint64
	Suppressed bool
}

// Batch is what one Commit writes. Events and Acks with ID 0 get IDs
// assigned by Commit, written back into the batch.
type Batch struct {
	Events   []Event
	Acks     []Ack
	Runtimes []Runtime
	Suppress []Suppression
}

func (b *Batch) empty() bool {
	return len(b.Events)+len(b.Acks)+len(b.Runtimes)+len(b.Suppress) == 0
}

// Record kinds and entry types (docs/format/events.md).
const (
	kindCommit = 1
	kindCarry  = 2

	entryEvent    = 1
	entryAck      = 2
	entryRuntime  = 3
	entrySuppress = 4

	// Event flags besides bit 0 (suppressed). Records written before
	// correlation have neither.
	flagNoAction    = 2 // actions ignore the event
	flagCorrelation = 4 // a correlation ID follows c_eventid
)

// ErrCorrupt marks a record this package could not have written.
var ErrCorrupt = errors.New("event store is corrupt")

// encode appends the record for b to dst.
func encode(dst []byte, kind byte, nextEvent, nextAck uint64, b *Batch) []byte {
	dst = append(dst, recordVersion, kind)
	dst = binary.AppendUvarint(dst, nextEvent)
	dst = binary.AppendUvarint(dst, nextAck)
	dst = binary.AppendUvarint(dst, uint64(len(b.Events)+len(b.Acks)+len(b.Runtimes)+len(b.Suppress)))
	for i := range b.Events {
		e := &b.Events[i]
		dst = append(dst, entryEvent)
		dst = binary.AppendUvarint(dst, e.ID)
		dst = append(dst, e.Source, e.Object)
		dst = binary.AppendUvarint(dst, e.ObjectID)
		dst = binary.AppendVarint(dst, e.Clock)
		dst = binary.AppendUvarint(dst, uint64(uint32(e.NS)))
		dst = append(dst, e.Value, e.Severity)
		dst = appendString(dst, e.Name)
		dst = appendString(dst, e.Opdata)
		var flags byte
		if e.Suppressed {
			flags |= 1
		}
		if e.NoAction {
			flags |= flagNoAction
		}
		if e.CorrelationID != 0 {
			flags |= flagCorrelation
		}
		dst = append(dst, flags)
		dst = binary.AppendUvarint(dst, uint64(len(e.Tags)))
		for _, t := range e.Tags {
			dst = appendString(dst, t.Tag)
			dst = appendString(dst, t.Value)
		}
		dst = binary.AppendUvarint(dst, uint64(len(e.Resolves)))
		for _, id := range e.Resolves {
			dst = binary.AppendUvarint(dst, id)
		}
		dst = binary.AppendUvarint(dst, e.UserID)
		dst = binary.AppendUvarint(dst, e.CEventID)
		if e.CorrelationID != 0 {
			dst = binary.AppendUvarint(dst, e.CorrelationID)
		}
	}
	for i := range b.Acks {
		a := &b.Acks[i]
		dst = append(dst, entryAck)
		dst = binary.AppendUvarint(dst, a.ID)
		dst = binary.AppendUvarint(dst, a.EventID)
		dst = binary.AppendUvarint(dst, a.UserID)
		dst = binary.AppendVarint(dst, a.Clock)
		dst = binary.AppendUvarint(dst, uint64(a.Action))
		dst = appendString(dst, a.Message)
		dst = append(dst, a.OldSeverity, a.NewSeverity)
	}
	for i := range b.Runtimes {
		r := &b.Runtimes[i]
		dst = append(dst, entryRuntime)
		dst = binary.AppendUvarint(dst, r.TriggerID)
		dst = append(dst, r.Value, r.State)
		dst = appendString(dst, r.Error)
		dst = binary.AppendVarint(dst, r.LastChange)
		dst = binary.AppendUvarint(dst, uint64(uint32(r.LastChangeNS)))
	}
	for _, sp := range b.Suppress {
		dst = append(dst, entrySuppress)
		dst = binary.AppendUvarint(dst, sp.EventID)
		var flags byte
		if sp.Suppressed {
			flags = 1
		}
		dst = append(dst, flags)
	}
	return dst
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// header is a decoded record header.
type header struct {
	kind               byte
	nextEvent, nextAck uint64
}

// decode parses a record. Strings are copied: rec is only valid during
// replay's callback.
func decode(rec []byte) (header, Batch, error) {
	d := decoder{b: rec}
	var h header
	var b Batch
	if v := d.byte(); v != recordVersion {
		return h, b, fmt.Errorf("%w: record version %d, want %d", ErrCorrupt, v, recordVersion)
	}
	h.kind = d.byte()
	if h.kind != kindCommit && h.kind != kindCarry {
		return h, b, fmt.Errorf("%w: record kind %d", ErrCorrupt, h.kind)
	}
	h.nextEvent, h.nextAck = d.uvarint(), d.uvarint()
	n := d.uvarint()
	for i := uint64(0); i < n && d.err == nil; i++ {
		switch t := d.byte(); t {
		case entryEvent:
			var e Event
			e.ID = d.uvarint()
			e.Source, e.Object = d.byte(), d.byte()
			e.ObjectID = d.uvarint()
			e.Clock = d.varint()
			e.NS = int32(uint32(d.uvarint()))
			e.Value, e.Severity = d.byte(), d.byte()
			e.Name, e.Opdata = d.string(), d.string()
			flags := d.byte()
			e.Suppressed, e.NoAction = flags&1 != 0, flags&flagNoAction != 0
			if nt := d.count(); nt > 0 {
				e.Tags = make([]Tag, nt)
				for j := range e.Tags {
					e.Tags[j] = Tag{d.string(), d.string()}
				}
			}
			if nr := d.count(); nr > 0 {
				e.Resolves = make([]uint64, nr)
				for j := range e.Resolves {
					e.Resolves[j] = d.uvarint()
				}
			}
			e.UserID, e.CEventID = d.uvarint(), d.uvarint()
			if flags&flagCorrelation != 0 {
				e.CorrelationID = d.uvarint()
			}
			b.Events = append(b.Events, e)
		case entryAck:
			var a Ack
			a.ID, a.EventID, a.UserID = d.uvarint(), d.uvarint(), d.uvarint()
			a.Clock = d.varint()
			a.Action = uint32(d.uvarint())
			a.Message = d.string()
			a.OldSeverity, a.NewSeverity = d.byte(), d.byte()
			b.Acks = append(b.Acks, a)
		case entryRuntime:
			var r Runtime
			r.TriggerID = d.uvarint()
			r.Value, r.State = d.byte(), d.byte()
			r.Error = d.string()
			r.LastChange = d.varint()
			r.LastChangeNS = int32(uint32(d.uvarint()))
			b.Runtimes = append(b.Runtimes, r)
		case entrySuppress:
			var sp Suppression
			sp.EventID = d.uvarint()
			sp.Suppressed = d.byte()&1 != 0
			b.Suppress = append(b.Suppress, sp)
		default:
			if d.err == nil {
				d.err = fmt.Errorf("%w: entry type %d", ErrCorrupt, t)
			}
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d bytes after the last entry", ErrCorrupt, len(d.b))
	}
	return h, b, d.err
}

// decoder reads a record, remembering the first error; reads after an
// error return zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("%w: record ends in the middle of an entry", ErrCorrupt)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a list length, bounded by the bytes left (every element
// takes at least one), so a damaged length cannot make a huge slice.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) string() string {
	n := d.count()
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
