package ingest

import (
	"errors"
	"time"
	"unsafe"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxtls"
)

// maxClock is the largest clock Zabbix accepts (int32 seconds).
const maxClock = 1<<31 - 1

// str views b as a string without copying, for map lookups that do not
// retain it.
func str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// senderData processes a "sender data" request and returns the reply.
//
// Per value, as the Zabbix trapper (the rules are pipeline.ItemByKey's):
// the host must exist and be monitored, the item must exist on it, be a
// trapper item and be enabled; otherwise the value counts as failed and
// the rest are still processed. A value that does not fit the item's
// value type ("abc" to a numeric item) counts as processed, is not
// stored, and makes the item not supported with the reason, as Zabbix
// 6.0 answers (recorded: internal/conformance, case zabbix_utils, step
// send-bad-type); a stored value makes it supported again. Items with
// preprocessing steps or dependent items are judged after their steps in
// the pipeline shard (pipeline.Prepare), with the same outcome.
//
// Timestamps: a row with clock and ns keeps them; rows with clock but no
// ns get ns 0, 1, 2, ... in request order (as Zabbix does); rows without
// clock get the receive time plus their row index in nanoseconds, so that
// every value of a request has its own timestamp and none overwrites
// another.
func (s *Server) senderData(cs *connState, recv time.Time, remote string) []byte {
	req := &cs.req
	if !req.hasData {
		s.refuse(badNoData, remote, errNoData)
		return failedReply("cannot find the \"data\" array in the request")
	}
	rows := req.rows
	// Take the memory the values need before making them: a sample per
	// row, and the copies of string values, which are never longer than
	// the values' text (counted for every row: cheaper than looking each
	// item up twice, and numbers are short).
	var strBytes int
	for i := range rows {
		strBytes += len(rows[i].value)
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
		// The copies belong to the pipeline and the store once submitted.
		defer cs.mem.Free(strBytes)
	}
	snap := s.opts.Catalog.Snapshot()
	samples := cs.samples[:0]
	st := newStamper(recv)
	var failed [numFailReasons]int
	a := &cs.agent
	a.states = a.states[:0]
	notSupported := 0
	for i := range rows {
		sm := history.Sample{}
		reason, out := s.senderRow(snap, &rows[i], &sm, &cs.peer, remote, a, recv)
		switch out {
		case rowFailed:
			failed[reason]++
			continue
		case rowNotSupported:
			notSupported++
			continue
		}
		st.stamp(&sm, i)
		samples = append(samples, sm)
		if sm.Type != pipeline.Raw {
			a.states = append(a.states, stateChange{item: sm.ItemID}) // normal; a Raw value's state is the shard's to set
		}
	}
	cs.samples = samples
	processed := len(samples) + notSupported
	s.m.received.Add(uint64(len(rows)))
	var partial *pipeline.PartialError
	if len(samples) > 0 {
		err := s.opts.Pipeline.Submit(samples, cs.ticket)
		clear(samples) // drop string references held by the pooled buffer
		if err != nil {
			s.refuse(badStore, remote, err)
			if !errors.As(err, &partial) {
				s.m.failed[failStore].Add(uint64(processed))
				return failedReply("cannot store values: " + err.Error())
			}
			// Some were stored: they are processed, the others failed,
			// so that a sender does not resend the stored ones.
			notStored := len(samples) - partial.Stored
			processed -= notStored
			s.m.failed[failStore].Add(uint64(notStored))
		}
	}
	// The values are durable: the items' states follow them.
	if s.opts.ItemStates != nil {
		for _, sc := range a.states {
			if partial == nil || partial.StoredItem(sc.item) {
				s.opts.ItemStates.SetItemState(sc.item, sc.state)
			}
		}
	}
	clear(a.states)
	s.m.countFailed(processed, &failed)
	return countsReply(cs, processed, len(rows)-processed, len(rows), recv)
}

type errString string

func (e errString) Error() string { return string(e) }

const errNoData = errString("sender data request without a data array")

// rowOutcome is what became of one row of a request.
type rowOutcome int8

const (
	rowStored       rowOutcome = iota // converted into sm, to be submitted
	rowFailed                         // refused: counted failed for its reason
	rowNotSupported                   // processed: the item becomes not supported (a.states)
)

// senderRow checks one data[] row into sm. Clock is set to -1 when absent
// and NS to -1 when absent. A value that does not convert adds the
// item's not-supported state to a.states.
func (s *Server) senderRow(snap *catalog.Snapshot, row *senderRow, sm *history.Sample, peer *zbxtls.Peer, remote string, a *agentScratch, recv time.Time) (failReason, rowOutcome) {
	if row.notObject || row.has&(hasHost|hasKey|hasValue) != hasHost|hasKey|hasValue {
		return failMissingField, rowFailed
	}
	if row.badClock {
		return failBadClock, rowFailed
	}
	sm.Clock, sm.NS = -1, -1
	if row.has&hasClock != 0 {
		if row.clock < 0 || row.clock > maxClock {
			return failBadClock, rowFailed
		}
		sm.Clock = row.clock
		if row.has&hasNS != 0 {
			if row.ns < 0 || row.ns > 999999999 {
				return failBadClock, rowFailed
			}
			sm.NS = int32(row.ns)
		}
	}
	host, key := row.host, row.key
	it, r := pipeline.ItemByKey(snap, str(host), str(key), pipeline.TrapperTypes)
	if r != pipeline.Accepted {
		s.valueFailed(refused(r), host, key, nil)
		return refused(r), rowFailed
	}
	// As Zabbix, each row's host decides whether this connection may
	// deliver its values: a request with rows for several hosts fails
	// the rows of the hosts that do not accept it.
	if s.allowed(it.Host, peer, remote) != nil {
		return failTLS, rowFailed
	}
	if t := it.Ext().Traps; t != nil && t.Hosts != "" && !peerAllowed(snap, it, t, remote) {
		s.valueFailed(failPeer, host, key, nil)
		return failPeer, rowFailed
	}
	if err := pipeline.Prepare(it, row.value, sm); err != nil {
		s.notSupported(str(host), str(key), err)
		clock := recv.Unix()
		if sm.Clock >= 0 {
			clock = sm.Clock
		}
		a.states = append(a.states, stateChange{it.ID, itemstate.Item{NotSupported: true, Error: err.Error(), Clock: clock}})
		return 0, rowNotSupported
	}
	return 0, rowStored
}

// failKeys are the throttle keys per reason, built once so that a flood
// of failing values does not allocate a key per value.
var failKeys = func() (k [numFailReasons]string) {
	for i := range k {
		k[i] = "value:" + failReasonNames[i]
	}
	return
}()

// notSupported counts and logs (throttled) a value that made its item
// not supported: processed, not stored.
func (s *Server) notSupported(host, key string, err error) {
	s.m.notSupported.Inc()
	if n, ok := s.throttle.Allow("value:not_supported"); ok {
		s.opts.Logger.Warn("trapper value does not fit its item; the item is not supported", "host", host, "key", key, "err", err, "suppressed", n)
	}
}

// valueFailed logs (throttled) why one value was refused.
func (s *Server) valueFailed(r failReason, host, key []byte, err error) {
	if n, ok := s.throttle.Allow(failKeys[r]); ok {
		args := []any{"reason", failReasonNames[r], "host", string(host), "key", string(key), "suppressed", n}
		if err != nil {
			args = append(args, "err", err)
		}
		s.opts.Logger.Warn("trapper value rejected", args...)
	}
}

// stamper gives values without a clock or ns their timestamps, the same
// way for sender data and history.push.
type stamper struct {
	clock, ns int64 // receive time
	seq       int32 // next ns for values with a clock but no ns
}

func newStamper(recv time.Time) stamper {
	return stamper{clock: recv.Unix(), ns: int64(recv.Nanosecond())}
}

// stamp completes sm, value number i of its request: Clock -1 (absent)
// becomes the receive time plus i nanoseconds; NS -1 with a clock
// becomes 0, 1, 2, ... in request order.
func (st *stamper) stamp(sm *history.Sample, i int) {
	switch {
	case sm.Clock < 0:
		ns := st.ns + int64(i)
		sm.Clock, sm.NS = st.clock+ns/1e9, int32(ns%1e9)
	case sm.NS < 0:
		sm.NS = st.seq
		st.seq++
	}
}
