package ingest

import (
	"fmt"
	"unsafe"
)

// agentTop holds the top-level members active agents send beside
// "request" and "data" (spec §4.1, §4.3, §4.4). Absent members are nil;
// a member of the wrong JSON type is skipped and stays nil. Strings are
// sub-slices of the payload.
type agentTop struct {
	host, session, version, hostMetadata []byte
	ip, iface, port                      []byte // port: the text of a number or a string
	hasSession                           bool   // "session" present as a string, possibly empty
}

// rowExt holds the fields of an "agent data" row that sender data does
// not have. Numbers are taken as JSON integers or as strings of decimal
// digits (agents send integers; scripts that imitate them sometimes
// quote). A field present with any other value sets its bit in bad.
type rowExt struct {
	itemID, id, lastLogSize uint64
	mtime, timestamp        int64
	severity, eventID       int64
	state                   int64
	source                  []byte
	has, bad                extFields
}

type extFields uint16

const (
	hasItemID extFields = 1 << iota
	hasID
	hasState
	hasLastLogSize
	hasMtime
	hasTimestamp
	hasSource
	hasSeverity
	hasEventID
)

// extBytes is what one element of senderRequest.ext costs.
const extBytes = int(unsafe.Sizeof(rowExt{}))

// extAt returns row i's extra fields, or nil when it has none.
func (req *senderRequest) extAt(i int) *rowExt {
	if i < len(req.ext) {
		return &req.ext[i]
	}
	return nil
}

// extFor returns row i's extra fields, growing ext (through mem) so that
// it covers rows 0..i.
func (req *senderRequest) extFor(i int) (*rowExt, error) {
	if i < len(req.ext) {
		return &req.ext[i], nil
	}
	if i >= cap(req.ext) {
		c := max(2*cap(req.ext), i+1, 16)
		if req.mem != nil {
			if err := req.mem.Alloc(c * extBytes); err != nil {
				return nil, fmt.Errorf("cannot hold %d decoded agent rows: %w", c, err)
			}
		}
		ne := make([]rowExt, len(req.ext), c)
		copy(ne, req.ext)
		req.dropExt()
		req.ext = ne
	}
	n := len(req.ext)
	req.ext = req.ext[:i+1]
	clear(req.ext[n:])
	return &req.ext[i], nil
}

// dropExt lets go of ext's backing array.
func (req *senderRequest) dropExt() {
	if req.mem != nil && cap(req.ext) > 0 {
		req.mem.Free(cap(req.ext) * extBytes)
	}
	req.ext = nil
}

// topMember decodes a top-level member other than "request" and "data".
func (s *scanner) topMember(name []byte) error {
	t := &s.req.top
	var dst *[]byte
	switch string(name) {
	case "host":
		dst = &t.host
	case "session":
		dst = &t.session
	case "version":
		// A number is read as its text, as Zabbix does ("version":6.0
		// gets the 4.4 form); agents send a string.
		if s.i < len(s.b) && (s.b[s.i] >= '0' && s.b[s.i] <= '9' || s.b[s.i] == '-') {
			start := s.i
			if err := s.number(); err != nil {
				return err
			}
			t.version = s.b[start:s.i]
			return nil
		}
		dst = &t.version
	case "host_metadata":
		dst = &t.hostMetadata
	case "ip":
		dst = &t.ip
	case "interface":
		dst = &t.iface
	case "port":
		// agentd sends the port as a number.
		if s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			start := s.i
			if err := s.number(); err != nil {
				return err
			}
			t.port = s.b[start:s.i]
			return nil
		}
		dst = &t.port
	default:
		return s.skip(0)
	}
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return s.skip(0)
	}
	v, err := s.str()
	if err != nil {
		return err
	}
	*dst = v
	if name[0] == 's' {
		t.hasSession = true
	}
	return nil
}

// rowMember decodes a row member other than host, key, value, clock and
// ns into the row's rowExt; members nobody reads are skipped without
// growing ext.
func (s *scanner) rowMember(name []byte, idx int) error {
	var f extFields
	switch string(name) {
	case "itemid":
		f = hasItemID
	case "id":
		f = hasID
	case "state":
		f = hasState
	case "lastlogsize":
		f = hasLastLogSize
	case "mtime":
		f = hasMtime
	case "timestamp":
		f = hasTimestamp
	case "source":
		f = hasSource
	case "severity":
		f = hasSeverity
	case "eventid":
		f = hasEventID
	default:
		return s.skip(0)
	}
	e, err := s.req.extFor(idx)
	if err != nil {
		return err
	}
	e.has |= f
	if f == hasSource {
		if s.i < len(s.b) && s.b[s.i] == '"' {
			e.source, err = s.str()
			return err
		}
		e.bad |= f
		return s.skip(0)
	}
	var text []byte
	if s.i < len(s.b) && s.b[s.i] == '"' {
		if text, err = s.str(); err != nil {
			return err
		}
	} else {
		start := s.i
		if err := s.skip(0); err != nil {
			return err
		}
		text = s.b[start:s.i]
	}
	switch f {
	case hasItemID, hasID, hasLastLogSize:
		u, ok := parseUint(text)
		if !ok {
			e.bad |= f
		}
		switch f {
		case hasItemID:
			e.itemID = u
		case hasID:
			e.id = u
		default:
			e.lastLogSize = u
		}
	default:
		n, ok := parseJSONInt(text)
		if !ok {
			e.bad |= f
		}
		switch f {
		case hasState:
			e.state = n
		case hasMtime:
			e.mtime = n
		case hasTimestamp:
			e.timestamp = n
		case hasSeverity:
			e.severity = n
		default:
			e.eventID = n
		}
	}
	return nil
}

// parseUint accepts 1 to 20 decimal digits that fit in a uint64.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
