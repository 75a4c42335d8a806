package ingest

import (
	"strconv"
	"time"
	"unsafe"

	"github.com/valyala/fastjson"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
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
// Per value, as the Zabbix trapper: the host must exist and be monitored,
// the item must exist on it, be a trapper item and be enabled; otherwise
// the value counts as failed and the rest are still processed. Unlike
// Zabbix, which counts a value that later fails conversion as processed
// and makes the item unsupported, Peregrine converts before acknowledging
// and counts such a value as failed, so "processed" means "stored".
//
// Timestamps: a row with clock and ns keeps them; rows with clock but no
// ns get ns 0, 1, 2, ... in request order (as Zabbix does); rows without
// clock get the receive time plus their row index in nanoseconds, so that
// every value of a request has its own timestamp and none overwrites
// another.
func (s *Server) senderData(cs *connState, v *fastjson.Value, recv time.Time, remote string) []byte {
	data := v.Get("data")
	if data == nil || data.Type() != fastjson.TypeArray {
		s.refuse(badNoData, remote, errNoData)
		return failedReply("cannot find the \"data\" array in the request")
	}
	rows, _ := data.Array()
	snap := s.opts.Catalog.Snapshot()
	samples := cs.samples[:0]
	recvClock, recvNS := recv.Unix(), int64(recv.Nanosecond())
	var failed [numFailReasons]int
	nsSeq := int32(0)
	for i, row := range rows {
		sm := history.Sample{}
		reason, ok := s.senderRow(snap, row, &sm)
		if !ok {
			failed[reason]++
			continue
		}
		switch {
		case sm.Clock < 0: // no clock in the row
			ns := recvNS + int64(i)
			sm.Clock, sm.NS = recvClock+ns/1e9, int32(ns%1e9)
		case sm.NS < 0: // clock without ns
			sm.NS = nsSeq
			nsSeq++
		}
		samples = append(samples, sm)
	}
	cs.samples = samples
	processed := len(samples)
	if processed > 0 {
		if err := s.opts.Pipeline.Submit(samples, cs.ticket); err != nil {
			clear(samples)
			failed[failStore] += processed
			s.m.failed[failStore].Add(uint64(processed))
			s.m.received.Add(uint64(len(rows)))
			s.refuse(badStore, remote, err)
			return failedReply("cannot store values: " + err.Error())
		}
		clear(samples) // drop string references held by the pooled buffer
	}
	s.m.received.Add(uint64(len(rows)))
	s.m.processed.Add(uint64(processed))
	for r, n := range failed {
		if n > 0 {
			s.m.failed[r].Add(uint64(n))
		}
	}
	out := cs.out[:0]
	out = append(out, `{"response":"success","info":"processed: `...)
	out = strconv.AppendInt(out, int64(processed), 10)
	out = append(out, "; failed: "...)
	out = strconv.AppendInt(out, int64(len(rows)-processed), 10)
	out = append(out, "; total: "...)
	out = strconv.AppendInt(out, int64(len(rows)), 10)
	out = append(out, "; seconds spent: "...)
	out = strconv.AppendFloat(out, time.Since(recv).Seconds(), 'f', 6, 64)
	out = append(out, `"}`...)
	cs.out = out
	return out
}

type errString string

func (e errString) Error() string { return string(e) }

const errNoData = errString("sender data request without a data array")

// senderRow decodes and checks one data[] row into sm. Clock is set to -1
// when absent and NS to -1 when absent.
func (s *Server) senderRow(snap *catalog.Snapshot, row *fastjson.Value, sm *history.Sample) (failReason, bool) {
	if row.Type() != fastjson.TypeObject {
		return failMissingField, false
	}
	hostV, keyV, valV := row.Get("host"), row.Get("key"), row.Get("value")
	if hostV == nil || keyV == nil || valV == nil || hostV.Type() != fastjson.TypeString || keyV.Type() != fastjson.TypeString {
		return failMissingField, false
	}
	host, _ := hostV.StringBytes()
	key, _ := keyV.StringBytes()
	var raw []byte
	switch valV.Type() {
	case fastjson.TypeString:
		raw, _ = valV.StringBytes()
	case fastjson.TypeNumber, fastjson.TypeTrue, fastjson.TypeFalse:
		// Scripts sometimes send numbers unquoted; take their text.
		raw = valV.MarshalTo(nil)
	default:
		return failMissingField, false
	}
	sm.Clock, sm.NS = -1, -1
	if c := row.Get("clock"); c != nil {
		clock, err := c.Int64()
		if err != nil || clock < 0 || clock > maxClock {
			return failBadClock, false
		}
		sm.Clock = clock
		if n := row.Get("ns"); n != nil {
			ns, err := n.Int64()
			if err != nil || ns < 0 || ns > 999999999 {
				return failBadClock, false
			}
			sm.NS = int32(ns)
		}
	}
	h := snap.Host(str(host))
	if h == nil {
		s.valueFailed(failUnknownHost, host, key)
		return failUnknownHost, false
	}
	if !h.Enabled {
		s.valueFailed(failHostDisabled, host, key)
		return failHostDisabled, false
	}
	it := h.Item(str(key))
	switch {
	case it == nil:
		s.valueFailed(failUnknownItem, host, key)
		return failUnknownItem, false
	case it.Type != catalog.Trapper:
		s.valueFailed(failWrongItemType, host, key)
		return failWrongItemType, false
	case !it.Enabled:
		s.valueFailed(failItemDisabled, host, key)
		return failItemDisabled, false
	}
	sm.ItemID = it.ID
	if err := convert(it.ValueType, raw, sm); err != nil {
		if n, ok := s.throttle.Allow("value:" + failReasonNames[failBadValue]); ok {
			s.opts.Logger.Warn("trapper value rejected", "reason", failReasonNames[failBadValue], "host", string(host), "key", string(key), "err", err, "suppressed", n)
		}
		return failBadValue, false
	}
	return 0, true
}

// valueFailed logs (throttled) why one value was refused.
func (s *Server) valueFailed(r failReason, host, key []byte) {
	if n, ok := s.throttle.Allow("value:" + failReasonNames[r]); ok {
		s.opts.Logger.Warn("trapper value rejected", "reason", failReasonNames[r], "host", string(host), "key", string(key), "suppressed", n)
	}
}
