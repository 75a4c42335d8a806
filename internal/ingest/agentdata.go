package ingest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
)

// activeTypes is the set of item types active agents deliver values for.
var activeTypes = pipeline.TypesOf(catalog.ZabbixAgentActive)

// maxLogSourceChars is Zabbix's limit on a log value's source.
const maxLogSourceChars = 64

// logMetaBytes is what a log value's metadata costs beside its source.
const logMetaBytes = int(unsafe.Sizeof(history.LogMeta{}))

// agentRowState is the per-row work of one "agent data" request.
type agentRowState struct {
	item *catalog.Item // nil: the row failed (fail says why)
	fail failReason
}

const agentRowStateBytes = int(unsafe.Sizeof(agentRowState{}))

// agentScratch is the per-connection scratch space of "agent data"
// requests, reused from one request to the next.
type agentScratch struct {
	rows     []agentRowState
	hosts    []uint64
	sessions []*session
	last     []uint64 // running last id per session, parallel to sessions
	states   []stateChange
	posItems []uint64
	pos      []LogPos
}

// stateChange is an item's supported state to set once the request's
// values are stored.
type stateChange struct {
	item  uint64
	state itemstate.Item
}

func (cs *connState) reserveAgentRows(n int) error {
	a := &cs.agent
	if cap(a.rows) >= n {
		a.rows = a.rows[:n]
		return nil
	}
	if cs.mem != nil {
		if err := cs.mem.Alloc(n * agentRowStateBytes); err != nil {
			return fmt.Errorf("cannot hold %d agent rows: %w", n, err)
		}
	}
	cs.dropAgentRows()
	a.rows = make([]agentRowState, n)
	return nil
}

func (cs *connState) dropAgentRows() {
	if cs.mem != nil && cap(cs.agent.rows) > 0 {
		cs.mem.Free(cap(cs.agent.rows) * agentRowStateBytes)
	}
	cs.agent.rows = nil
}

// trimAgent drops the references the scratch holds into the catalog
// snapshot and sessions, and the row states if larger than keep bytes.
func (cs *connState) trimAgent(keep int) {
	a := &cs.agent
	clear(a.rows[:cap(a.rows)])
	if cap(a.rows)*agentRowStateBytes > keep {
		cs.dropAgentRows()
	}
	clear(a.sessions[:cap(a.sessions)])
	clear(a.states[:cap(a.states)])
	if cap(a.states) > 1024 {
		a.states = nil
	}
	if cap(a.posItems) > 1024 {
		a.posItems, a.pos = nil, nil
	}
}

// agentData processes an "agent data" request (spec §4.3) and returns
// the reply.
//
// Addressing, as the Zabbix trapper: a request with a top-level "host"
// and a "version" of 4.4 or later (agent 2, 7.0 agentd) names its rows
// by "itemid", which must be an item of that host; otherwise (6.0
// zabbix_agentd) each row names its "host" and "key". Either way the
// item must be of type Zabbix agent (active), enabled, on a monitored
// host; anything else counts as failed and the other rows go on.
//
// Retransmissions: "session" must be 32 characters (else the whole
// request fails, info "invalid session token length N", counted as
// bad_session). Per (host, session) the highest row "id" stored is
// remembered; a row whose id is not above it is a retransmission,
// counted as failed (duplicate) and not stored, as Zabbix does. The
// session's ids advance only once the request's values are durable, so
// a request whose store fails is stored in full when the agent resends
// it.
//
// Rows with "state": 1 make the item not supported with the value as
// the error (counted as processed, not stored); a stored value makes it
// supported again; a value that does not convert makes it not supported
// with the conversion error (counted as failed, bad_value). A row
// without a value but with "lastlogsize" (a log item that skipped lines)
// only moves the item's log position (processed).
//
// Log positions ("lastlogsize", "mtime") of accepted rows are saved
// (Options.LogPositions) after the values are stored and before the
// reply, so that a restarted agent resumes after the last stored line.
func (s *Server) agentData(cs *connState, recv time.Time, remote string) []byte {
	req := &cs.req
	top := &req.top
	if !req.hasData {
		s.refuse(badNoData, remote, errNoData)
		return failedReply("cannot find the \"data\" array in the request")
	}
	if top.hasSession && len(top.session) != sessionTokenLen {
		err := fmt.Errorf("session token of %d characters (Zabbix agents send 32)", len(top.session))
		s.refuse(badSession, remote, err)
		return failedReply("invalid session token length " + strconv.Itoa(len(top.session)))
	}
	rows := req.rows
	snap := s.opts.Catalog.Snapshot()
	byID := top.host != nil && versionAtLeast44(top.version)
	var host *catalog.Host
	if byID {
		if host = snap.Host(string(top.host)); host == nil {
			// Zabbix acknowledges the request (the agent would resend it
			// forever otherwise) and says why nothing was stored.
			s.m.received.Add(uint64(len(rows)))
			s.m.failed[refused(pipeline.UnknownHost)].Add(uint64(len(rows)))
			s.valueFailed(refused(pipeline.UnknownHost), top.host, nil, nil)
			return successReply(cs, "unknown host '"+truncateForLog(string(top.host))+"'")
		}
	}

	// Memory, taken before making anything: row states, a sample per
	// row, copies of string values (never longer than their text) and
	// log metadata.
	var strBytes int
	for i := range rows {
		strBytes += len(rows[i].value)
		if e := req.extAt(i); e != nil && e.has&(hasTimestamp|hasSource|hasSeverity|hasEventID) != 0 {
			strBytes += len(e.source) + logMetaBytes
		}
	}
	if err := cs.reserveAgentRows(len(rows)); err != nil {
		s.refuse(classifyReadErr(err), remote, err)
		return failedReply("cannot decode the request: " + err.Error())
	}
	if err := cs.reserveSamples(len(rows)); err != nil {
		s.refuse(classifyReadErr(err), remote, err)
		return failedReply("cannot decode the request: " + err.Error())
	}
	if cs.mem != nil && strBytes > 0 {
		if err := cs.mem.Alloc(strBytes); err != nil {
			s.refuse(classifyReadErr(err), remote, err)
			return failedReply("cannot decode the request: " + err.Error())
		}
		defer cs.mem.Free(strBytes)
	}

	// Pass 1: find every row's item.
	a := &cs.agent
	a.hosts = a.hosts[:0]
	for i := range rows {
		st := &a.rows[i]
		st.item, st.fail = s.agentRowItem(snap, host, &rows[i], req.extAt(i))
		if st.item != nil && s.allowed(st.item.Host, &cs.peer, remote) != nil {
			st.item, st.fail = nil, failTLS
		}
		if st.item != nil {
			a.hosts = append(a.hosts, st.item.HostID)
		}
	}

	// Pass 2: lock the sessions of the hosts involved (usually one) and
	// sort rows into duplicates, states, positions and values.
	dedup := top.hasSession
	a.sessions, a.last = a.sessions[:0], a.last[:0] // no sessions unless locked here
	if dedup {
		a.hosts, a.sessions = s.sessions.lockAll(top.session, a.hosts, a.sessions)
		defer func() {
			for _, ss := range a.sessions {
				ss.mu.Unlock()
			}
		}()
		for _, ss := range a.sessions {
			a.last = append(a.last, ss.last)
		}
	}
	a.states, a.posItems, a.pos = a.states[:0], a.posItems[:0], a.pos[:0]
	samples := cs.samples[:0]
	stamp := newStamper(recv)
	var failed [numFailReasons]int
	processed := 0
	for i := range rows {
		st := &a.rows[i]
		it := st.item
		if it == nil {
			failed[st.fail]++
			continue
		}
		row, e := &rows[i], req.extAt(i)
		if dedup && e != nil && e.has&hasID != 0 {
			k := indexOf(a.hosts, it.HostID)
			if e.id <= a.last[k] {
				failed[failDuplicate]++
				s.itemFailed(failDuplicate, it, nil)
				continue
			}
			a.last[k] = e.id
		}
		if e != nil && e.has&hasLastLogSize != 0 {
			a.posItems = append(a.posItems, it.ID)
			a.pos = append(a.pos, LogPos{LastLogSize: e.lastLogSize, Mtime: e.mtime})
		}
		clock := recv.Unix()
		if row.has&hasClock != 0 {
			clock = row.clock
		}
		if e != nil && e.has&hasState != 0 && e.state == 1 {
			s.m.notSupported.Inc()
			if sm := (history.Sample{Clock: -1, NS: -1}); pipeline.PrepareError(it, string(row.value), &sm) {
				// Its steps or dependents see the failure, in the shard.
				if row.has&hasClock != 0 {
					sm.Clock, sm.NS = row.clock, 0
				}
				stamp.stamp(&sm, i)
				samples = append(samples, sm)
				continue
			}
			a.states = append(a.states, stateChange{it.ID, itemstate.Item{NotSupported: true, Error: string(row.value), Clock: clock}})
			processed++
			continue
		}
		if row.has&hasValue == 0 {
			if e != nil && e.has&hasLastLogSize != 0 {
				processed++ // a position-only row
				continue
			}
			failed[failMissingField]++
			s.itemFailed(failMissingField, it, nil)
			continue
		}
		sm := history.Sample{Clock: -1, NS: -1}
		if row.has&hasClock != 0 {
			sm.Clock = row.clock
			if row.has&hasNS != 0 {
				sm.NS = int32(row.ns)
			}
		}
		if err := pipeline.Prepare(it, row.value, &sm); err != nil {
			// Processed, as Zabbix 6.0 counts it: the item is not
			// supported with the reason (see senderData).
			processed++
			s.notSupported(it.Host.Host, it.Key, err)
			a.states = append(a.states, stateChange{it.ID, itemstate.Item{NotSupported: true, Error: err.Error(), Clock: clock}})
			continue
		}
		if it.ValueType == history.Log && e != nil && e.has&(hasTimestamp|hasSource|hasSeverity|hasEventID) != 0 {
			sm.Log = &history.LogMeta{Timestamp: e.timestamp, Source: truncateRunes(e.source, maxLogSourceChars), Severity: int32(e.severity), EventID: e.eventID}
		}
		stamp.stamp(&sm, i)
		samples = append(samples, sm)
		if sm.Type != pipeline.Raw {
			a.states = append(a.states, stateChange{item: it.ID}) // normal; a Raw value's state is the shard's to set
		}
	}
	cs.samples = samples
	s.m.received.Add(uint64(len(rows)))
	var partial *pipeline.PartialError
	if len(samples) > 0 {
		err := s.opts.Pipeline.Submit(samples, cs.ticket)
		clear(samples)
		if err != nil {
			s.refuse(badStore, remote, err)
			if !errors.As(err, &partial) {
				// Nothing is acknowledged: the sessions keep their ids, so
				// the agent's resend is stored in full.
				s.m.failed[failStore].Add(uint64(len(samples)))
				return failedReply("cannot store values: " + err.Error())
			}
			// Some were stored: a "failed" would make the agent resend
			// them, so the reply counts the others failed.
			s.m.failed[failStore].Add(uint64(len(samples) - partial.Stored))
			processed -= len(samples) - partial.Stored
		}
	}
	processed += len(samples)
	if partial != nil {
		// States and positions follow stored values only: a restarted
		// agent reads the lines of a failed one again.
		a.states = slices.DeleteFunc(a.states, func(sc stateChange) bool { return !partial.StoredItem(sc.item) })
		n := 0
		for i, id := range a.posItems {
			if partial.StoredItem(id) {
				a.posItems[n], a.pos[n] = id, a.pos[i]
				n++
			}
		}
		a.posItems, a.pos = a.posItems[:n], a.pos[:n]
	}
	// The values are durable: the ids are now taken, the states and
	// positions follow the values.
	for k, ss := range a.sessions {
		ss.last = a.last[k]
	}
	if s.opts.ItemStates != nil {
		for _, sc := range a.states {
			s.opts.ItemStates.SetItemState(sc.item, sc.state)
		}
	}
	if len(a.posItems) > 0 && s.opts.LogPositions != nil {
		if err := s.opts.LogPositions.Save(a.posItems, a.pos); err != nil {
			// The values are stored; the agent must not resend them. A
			// restarted agent may read these lines again.
			s.m.logPosErrors.Inc()
			if n, ok := s.throttle.Allow("logpos"); ok {
				s.opts.Logger.Error("cannot save active log positions", "err", err, "remote", remote, "suppressed", n)
			}
		}
	}
	s.m.countFailed(processed, &failed)
	return countsReply(cs, processed, len(rows)-processed, len(rows), recv)
}

// itemFailed is valueFailed for a row whose item (or host) is known; it
// converts names only when the log line is written.
func (s *Server) itemFailed(r failReason, it *catalog.Item, err error) {
	if n, ok := s.throttle.Allow(failKeys[r]); ok {
		args := []any{"reason", failReasonNames[r], "host", it.Host.Host, "key", it.Key, "suppressed", n}
		if err != nil {
			args = append(args, "err", err)
		}
		s.opts.Logger.Warn("trapper value rejected", args...)
	}
}

// idFailed logs (throttled) why a row addressed by itemid was refused.
func (s *Server) idFailed(r failReason, host *catalog.Host, itemID uint64) {
	if n, ok := s.throttle.Allow(failKeys[r]); ok {
		s.opts.Logger.Warn("trapper value rejected", "reason", failReasonNames[r], "host", host.Host, "itemid", itemID, "suppressed", n)
	}
}

func indexOf(hosts []uint64, h uint64) int {
	for i, x := range hosts {
		if x == h {
			return i
		}
	}
	panic("BUG: agent data row of a host whose session was not locked")
}

// agentRowItem finds the item an "agent data" row is for. host is the
// request's host when rows are addressed by itemid, nil when each row
// names its host and key.
func (s *Server) agentRowItem(snap *catalog.Snapshot, host *catalog.Host, row *senderRow, e *rowExt) (*catalog.Item, failReason) {
	if row.notObject {
		return nil, failMissingField
	}
	if e != nil && e.bad != 0 || row.badClock {
		r := failBadField
		if row.badClock {
			r = failBadClock
		}
		s.valueFailed(r, row.host, row.key, nil)
		return nil, r
	}
	if row.has&hasClock != 0 && (row.clock < 0 || row.clock > maxClock) || row.has&hasNS != 0 && (row.ns < 0 || row.ns > 999999999) {
		s.valueFailed(failBadClock, row.host, row.key, nil)
		return nil, failBadClock
	}
	var it *catalog.Item
	var r pipeline.Refusal
	if host != nil {
		if e == nil || e.has&hasItemID == 0 {
			s.idFailed(failMissingField, host, 0)
			return nil, failMissingField
		}
		it, r = pipeline.ItemByID(snap, e.itemID, activeTypes)
		if it != nil && it.HostID != host.ID {
			// Another host's item: as unknown as one that does not exist.
			it, r = nil, pipeline.UnknownItem
		}
		if r != pipeline.Accepted {
			s.idFailed(refused(r), host, e.itemID)
			return nil, refused(r)
		}
		return it, 0
	}
	if row.has&(hasHost|hasKey) != hasHost|hasKey {
		s.valueFailed(failMissingField, row.host, row.key, nil)
		return nil, failMissingField
	}
	it, r = pipeline.ItemByKey(snap, str(row.host), str(row.key), activeTypes)
	if r != pipeline.Accepted {
		s.valueFailed(refused(r), row.host, row.key, nil)
		return nil, refused(r)
	}
	return it, 0
}

// truncateRunes copies at most n characters of b, invalid UTF-8
// replaced by U+FFFD.
func truncateRunes(b []byte, n int) string {
	s := string(b)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// countsReply encodes the trapper's success reply with its counts.
func countsReply(cs *connState, processed, failed, total int, recv time.Time) []byte {
	out := cs.out[:0]
	out = append(out, `{"response":"success","info":"processed: `...)
	out = strconv.AppendInt(out, int64(processed), 10)
	out = append(out, "; failed: "...)
	out = strconv.AppendInt(out, int64(failed), 10)
	out = append(out, "; total: "...)
	out = strconv.AppendInt(out, int64(total), 10)
	out = append(out, "; seconds spent: "...)
	out = strconv.AppendFloat(out, time.Since(recv).Seconds(), 'f', 6, 64)
	out = append(out, `"}`...)
	cs.out = out
	return out
}

// successReply encodes {"response":"success","info":...}.
func successReply(cs *connState, info string) []byte {
	out := append(cs.out[:0], `{"response":"success","info":`...)
	out = appendJSONString(out, info)
	out = append(out, '}')
	cs.out = out
	return out
}
