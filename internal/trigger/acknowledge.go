package trigger

import (
	"errors"
	"fmt"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
)

// AckRequest is one event.acknowledge call, after the API checked its
// parameters and the caller's permissions.
type AckRequest struct {
	EventIDs []uint64
	// Action is Zabbix's bitmask: event.ActionClose, ActionAcknowledge,
	// ActionMessage, ActionSeverity, ActionUnacknowledge.
	Action   uint32
	Message  string
	Severity uint8 // the new severity, with ActionSeverity
	UserID   uint64
	Clock    int64
}

// ErrAck is wrapped by every refusal of Acknowledge: the request is
// wrong, not the server. Its text is Zabbix's.
var ErrAck = errors.New("cannot acknowledge")

// AckError is a refusal of Acknowledge with Zabbix's text.
type AckError struct{ Msg string }

func (e *AckError) Error() string { return e.Msg }

// Unwrap makes errors.Is(err, ErrAck) true.
func (e *AckError) Unwrap() error { return ErrAck }

func ackErr(format string, args ...any) error { return &AckError{Msg: fmt.Sprintf(format, args...)} }

// Acknowledge applies an acknowledge request to problem events: one
// acknowledge action per event, plus, with ActionClose, an OK event that
// closes the problem on behalf of the user. A trigger left without open
// problems becomes OK. Either every event is acted on or, if one cannot
// be, none is. It returns once the actions are durable.
func (m *Machine) Acknowledge(snap *catalog.Snapshot, req AckRequest) error {
	switch {
	case req.Action == 0 || req.Action&^31 != 0:
		return ackErr(`Invalid parameter "/action": value must be one of 1-31.`)
	case req.Action&event.ActionAcknowledge != 0 && req.Action&event.ActionUnacknowledge != 0:
		return ackErr(`Invalid parameter "/action": cannot acknowledge and unacknowledge at the same time.`)
	case req.Action&event.ActionMessage != 0 && req.Message == "":
		return ackErr(`Invalid parameter "/message": cannot be empty.`)
	case req.Action&event.ActionSeverity != 0 && req.Severity > 5:
		return ackErr(`Invalid parameter "/severity": value must be one of 0-5.`)
	case len(req.EventIDs) == 0:
		return ackErr(`Invalid parameter "/eventids": cannot be empty.`)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var b event.Batch
	closing := map[uint64][]uint64{} // trigger → problems closed now
	for _, id := range req.EventIDs {
		e, ok := m.store.Event(id)
		if !ok || e.Source != event.SourceTrigger || e.Object != event.ObjectTrigger || e.Value != event.ValueProblem {
			return ackErr("No permissions to referred object or it does not exist!")
		}
		a := event.Ack{EventID: id, UserID: req.UserID, Clock: req.Clock, Action: req.Action, OldSeverity: e.Severity, NewSeverity: e.Severity}
		if req.Action&event.ActionMessage != 0 {
			a.Message = req.Message
		}
		if req.Action&event.ActionSeverity != 0 {
			a.NewSeverity = req.Severity
		}
		if req.Action&event.ActionClose != 0 {
			t := snap.Trigger(e.ObjectID)
			switch {
			case t == nil || !t.ManualClose:
				return ackErr("Cannot close problem: trigger does not allow manual closing.")
			case !e.Open():
				return ackErr("Cannot close problem: problem is already resolved.")
			}
			closing[t.ID] = append(closing[t.ID], id)
		}
		b.Acks = append(b.Acks, a)
	}
	rts := map[uint64]event.Runtime{}
	for tid, ids := range closing {
		t := snap.Trigger(tid)
		// The OK event of a manual close has no tags (recorded from
		// 6.0.14, which names it with the items' last values where
		// Peregrine, without an evaluation, shows *UNKNOWN*).
		b.Events = append(b.Events, event.Event{
			Source: event.SourceTrigger, Object: event.ObjectTrigger, ObjectID: tid,
			Clock: req.Clock, Value: event.ValueOK, Name: m.okName(snap, t),
			Resolves: ids, UserID: req.UserID,
		})
		r, ok := m.rts[tid]
		if !ok {
			r = event.Runtime{TriggerID: tid}
		}
		if r.Value == event.ValueProblem {
			// The trigger becomes OK once no problem is left open; its
			// last change is the close's either way (6.0.14).
			if len(m.store.OpenProblemsOf(tid)) == len(ids) {
				r.Value = event.ValueOK
			}
			r.LastChange, r.LastChangeNS = req.Clock, 0
			rts[tid] = r
			b.Runtimes = append(b.Runtimes, r)
		}
	}
	if err := m.store.Commit(&b); err != nil {
		return fmt.Errorf("trigger: cannot store the acknowledgement: %w", err)
	}
	m.rtMu.Lock()
	for id, r := range rts {
		m.rts[id] = r
	}
	m.rtMu.Unlock()
	return nil
}
