package alert

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// Alert statuses (Zabbix's alert "status").
const (
	StatusNotSent = 0 // being retried
	StatusSent    = 1
	StatusFailed  = 2
	StatusNew     = 3 // not yet tried
)

// Alert is one notification to one user through one medium (Zabbix's
// alert object, alerttype 0).
type Alert struct {
	ID          uint64 `json:"id"`
	ActionID    uint64 `json:"action"`
	EventID     uint64 `json:"event"`   // the event the alert is about: problem, or OK for a recovery
	PEventID    uint64 `json:"pevent"`  // the problem event
	TriggerID   uint64 `json:"trigger"` // for alert.get selectHosts
	UserID      uint64 `json:"user"`
	MediaTypeID uint64 `json:"mediatype"`
	AckID       uint64 `json:"ack,omitempty"`
	Clock       int64  `json:"clock"`
	SendTo      string `json:"sendto"`
	Subject     string `json:"subject"`
	Message     string `json:"message"`
	Status      int    `json:"status"`
	Retries     int    `json:"retries"`
	Error       string `json:"error"`
	EscStep     int    `json:"esc_step"`
	// AlertType is AlertMessage or AlertCommand. A command's Message is
	// the command as run, HostID the host it ran for, Output what it
	// printed (bounded).
	AlertType int    `json:"type,omitempty"`
	HostID    uint64 `json:"host,omitempty"`
	ScriptID  uint64 `json:"script,omitempty"`
	Output    string `json:"output,omitempty"`
	// Params are a webhook's parameters or a script's arguments with
	// their macros expanded when the alert was made (Zabbix stores them
	// with the alert too), so a retry after a restart sends the same.
	Params []Param `json:"params,omitempty"`
	// Repeat is set when an attempt was started before a restart or a
	// takeover and its outcome was never logged: that attempt may have
	// been delivered, so the next one may be a repeat. It is counted in
	// Retries, and Error says so (RepeatNote), also once sent.
	Repeat bool `json:"repeat,omitempty"`
}

// RepeatSent is the error text of an alert sent (status 1) by an
// attempt after a restart or takeover that found an earlier attempt
// started and its outcome unknown: the recipient may have it twice.
const RepeatSent = "Sent again after a restart or failover: the previous attempt's outcome is unknown."

// repeatNote is the error text an alert marked Repeat gets with the
// outcome of its latest attempt.
func repeatNote(status int, errText string) string {
	switch {
	case status == StatusSent:
		return RepeatSent
	case errText == "":
		return "An attempt before a restart or failover may have been delivered: its outcome is unknown."
	}
	return errText + " (an attempt before a restart or failover may have been delivered: its outcome is unknown)"
}

// Param is an expanded media type parameter.
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Recipient is a user and medium an escalation sent a problem message
// to, for "notify all involved".
type Recipient struct {
	UserID      uint64 `json:"user"`
	MediaTypeID uint64 `json:"mediatype"`
}

// Escalation is the running state of one action for one problem.
type Escalation struct {
	ID        uint64 `json:"id"`
	ActionID  uint64 `json:"action"`
	EventID   uint64 `json:"event"`
	TriggerID uint64 `json:"trigger"`
	// Step is the next step to run (1-based); NextCheck when, in Unix
	// nanoseconds.
	Step      int   `json:"step"`
	NextCheck int64 `json:"next"`
	// Done is set once no operation remains for later steps: the
	// escalation then waits for the recovery (recovery operations) or
	// updates (update operations).
	Done       bool        `json:"done,omitempty"`
	Recipients []Recipient `json:"rcpt,omitempty"`
}

// record is one log entry: an upsert of an alert or escalation, the
// deletion of an escalation, or the event watermark. JSON keeps the
// format readable in docs/format/alerts.md; the volumes are those of
// notifications, not of history.
type record struct {
	Alert      *Alert      `json:"a,omitempty"`
	Escalation *Escalation `json:"e,omitempty"`
	DeleteEsc  uint64      `json:"x,omitempty"`
	// Events is the highest event ID whose notifications are decided.
	Events uint64 `json:"w,omitempty"`
	// AckNext is the lowest acknowledge ID whose update operations are
	// not yet decided: acks from it on are replayed from the event store
	// after a crash. It is the next ID rather than the last one so that
	// "set, no ack yet" (1) differs from "never set" (0, a log written
	// before acks were tracked).
	AckNext uint64 `json:"k,omitempty"`
	// Group holds records applied together: one log record, so durable
	// together or not at all (an escalation step with its alerts).
	Group []record `json:"g,omitempty"`
	// Started is the ID of an alert whose delivery attempt starts: it is
	// durable before the sender is called, and the alert's next upsert
	// (the attempt's outcome) ends it. One found open at replay was in
	// flight at a kill or a takeover (openRecordLog). Absent in logs
	// written before it: they replay as before.
	Started uint64 `json:"s,omitempty"`
}

// ErrCorrupt marks a log record this package could not have written.
var ErrCorrupt = errors.New("alert log is corrupt")

// logStore is the durable state: alerts and escalations, replayed at
// open, checkpointed into a fresh segment so that the log stays in
// proportion to what is live.
type logStore struct {
	w   recordLog
	log *slog.Logger
	// keep bounds the alerts kept (in memory and at checkpoints); the
	// oldest go first.
	keep int

	// wmu is read-locked by every write, so that concurrent writes share
	// fsyncs, and write-locked by a checkpoint, so that no record is
	// appended to a segment the checkpoint deletes before it is applied
	// to the memory the checkpoint copies. Lock order: wmu, then mu.
	wmu    sync.RWMutex
	mu     sync.Mutex
	alerts map[uint64]*Alert
	order  []uint64 // alert IDs, ascending (creation order)
	escs   map[uint64]*Escalation
	// started are the alerts with an attempt started and no outcome
	// logged since (record.Started).
	started map[uint64]struct{}
	// repeated counts the alerts marked Repeat at open.
	repeated   int
	nextAlert  uint64
	nextEsc    uint64
	watermark  uint64
	ackNext    uint64
	sinceCkpt  int
	liveAtCkpt int
	trimAt     int
}

func openLog(wo wal.Options, keep int) (*logStore, error) {
	w, err := wal.Open(wo)
	if err != nil {
		return nil, fmt.Errorf("alert: cannot open log %s: %w", wo.Dir, err)
	}
	return openRecordLog(walLog{w}, wo.Dir, wo.Logger, keep)
}

// openPGLog opens the alert log in PostgreSQL (table alert_log).
func openPGLog(o pglog.Options, log *slog.Logger, keep int) (*logStore, error) {
	o.Table = "alert_log"
	l, err := pglog.Open(o)
	if err != nil {
		return nil, fmt.Errorf("alert: cannot open the log in PostgreSQL: %w", err)
	}
	return openRecordLog(pgAlertLog{l}, "PostgreSQL "+o.Table, log, keep)
}

// openRecordLog replays w into a logStore and checkpoints it.
func openRecordLog(w recordLog, dir string, log *slog.Logger, keep int) (*logStore, error) {
	s := &logStore{w: w, log: log, keep: keep, alerts: map[uint64]*Alert{}, escs: map[uint64]*Escalation{}, started: map[uint64]struct{}{}, nextAlert: 1, nextEsc: 1}
	err := w.Replay(func(rec []byte) error {
		var r record
		if err := json.Unmarshal(rec, &r); err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		s.apply(&r)
		return nil
	})
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("alert: cannot replay log %s: %w", dir, err)
	}
	slices.Sort(s.order)
	s.order = slices.Compact(s.order)
	s.markRepeats()
	s.trim()
	if err := s.checkpoint(); err != nil {
		w.Close()
		return nil, err
	}
	return s, nil
}

// apply applies a record to memory. s.mu is held (or the store is being
// opened).
func (s *logStore) apply(r *record) {
	if a := r.Alert; a != nil {
		if _, ok := s.alerts[a.ID]; !ok {
			s.order = append(s.order, a.ID)
		}
		cp := *a
		s.alerts[a.ID] = &cp
		s.nextAlert = max(s.nextAlert, a.ID+1)
		delete(s.started, a.ID)
	}
	if r.Started != 0 && s.alerts[r.Started] != nil {
		s.started[r.Started] = struct{}{}
	}
	if e := r.Escalation; e != nil {
		cp := *e
		s.escs[e.ID] = &cp
		s.nextEsc = max(s.nextEsc, e.ID+1)
	}
	if r.DeleteEsc != 0 {
		delete(s.escs, r.DeleteEsc)
	}
	s.watermark = max(s.watermark, r.Events)
	s.ackNext = max(s.ackNext, r.AckNext)
	for i := range r.Group {
		s.apply(&r.Group[i])
	}
}

// markRepeats turns the attempts found started without an outcome at
// open into counted, marked attempts: the alert is re-queued (status
// "not sent"), its Retries count the attempt of the process that was
// killed or lost its lease, and Error says the next one may be a
// repeat. The checkpoint that follows makes this durable.
func (s *logStore) markRepeats() {
	for id := range s.started {
		a := s.alerts[id]
		if a == nil || a.Status != StatusNew && a.Status != StatusNotSent {
			continue
		}
		a.Retries++
		a.Repeat = true
		a.Status = StatusNotSent
		a.Error = repeatNote(StatusNotSent, "")
		s.repeated++
	}
	clear(s.started)
}

// trim drops the oldest alerts past keep; alerts still to be sent are
// kept whatever their age. It runs once the alerts are a sixteenth over
// the bound (or over what the last trim had to keep), not on every
// write: a trim walks every alert, and a flood writes an alert's status
// per send.
func (s *logStore) trim() {
	if len(s.order) <= max(s.keep+s.keep/16, s.trimAt) {
		return
	}
	defer func() { s.trimAt = len(s.order) + s.keep/16 }()
	n := len(s.order) - s.keep
	kept := s.order[:0]
	for i, id := range s.order {
		a := s.alerts[id]
		if i < n && a != nil && (a.Status == StatusSent || a.Status == StatusFailed) {
			delete(s.alerts, id)
			continue
		}
		kept = append(kept, id)
	}
	s.order = kept
}

// checkpoint starts a new segment holding every live object and deletes
// the older segments. Records are upserts, so a crash between the two
// leaves a log that replays to the same state.
func (s *logStore) checkpoint() error {
	idx, err := s.w.Cut()
	if err != nil {
		return fmt.Errorf("alert: cannot cut the log: %w", err)
	}
	var last waiter
	n := 0
	put := func(r *record) error {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		last = s.w.AppendAsync(b)
		n++
		return nil
	}
	if err := put(&record{Events: s.watermark, AckNext: s.ackNext}); err != nil {
		return err
	}
	for _, id := range s.order {
		if err := put(&record{Alert: s.alerts[id]}); err != nil {
			return err
		}
	}
	for _, e := range s.escs {
		if err := put(&record{Escalation: e}); err != nil {
			return err
		}
	}
	for id := range s.started { // attempts in flight now
		if err := put(&record{Started: id}); err != nil {
			return err
		}
	}
	if err := last.Wait(); err != nil {
		return fmt.Errorf("alert: cannot write the checkpoint: %w", err)
	}
	if err := s.w.Truncate(idx); err != nil {
		return fmt.Errorf("alert: cannot delete old log segments: %w", err)
	}
	s.sinceCkpt, s.liveAtCkpt = 0, n
	return nil
}

// write makes records durable and applies them. Records are encoded in
// one log record each, appended together, waited for once.
func (s *logStore) write(recs []record) error {
	if len(recs) == 0 {
		return nil
	}
	s.wmu.RLock()
	var last waiter
	for i := range recs {
		b, err := json.Marshal(&recs[i])
		if err != nil {
			s.wmu.RUnlock()
			return fmt.Errorf("BUG: alert: cannot encode a log record: %w", err)
		}
		last = s.w.AppendAsync(b)
	}
	if err := last.Wait(); err != nil {
		s.wmu.RUnlock()
		return fmt.Errorf("alert: cannot write the log: %w", err)
	}
	s.mu.Lock()
	for i := range recs {
		s.apply(&recs[i])
	}
	for i := range recs {
		s.sinceCkpt += 1 + len(recs[i].Group)
	}
	s.trim()
	need := s.sinceCkpt > 4*s.liveAtCkpt+100_000
	s.mu.Unlock()
	s.wmu.RUnlock()
	if !need {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sinceCkpt <= 4*s.liveAtCkpt+100_000 {
		return nil // another writer checkpointed
	}
	return s.checkpoint()
}

// ids reserves n alert IDs and m escalation IDs.
func (s *logStore) ids(n, m int) (alertID, escID uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	alertID, escID = s.nextAlert, s.nextEsc
	s.nextAlert += uint64(n)
	s.nextEsc += uint64(m)
	return alertID, escID
}

// Alerts returns copies of the alerts keep accepts, ascending by ID.
func (s *logStore) Alerts(keep func(*Alert) bool) []Alert {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Alert
	for _, id := range s.order {
		if a := s.alerts[id]; a != nil && keep(a) {
			out = append(out, *a)
		}
	}
	return out
}

// marks returns the event watermark and the next undecided ack ID.
func (s *logStore) marks() (events, ackNext uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watermark, s.ackNext
}

// escalations returns copies of every escalation.
func (s *logStore) escalations() []Escalation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Escalation, 0, len(s.escs))
	for _, e := range s.escs {
		cp := *e
		cp.Recipients = slices.Clone(e.Recipients)
		out = append(out, cp)
	}
	slices.SortFunc(out, func(a, b Escalation) int { return cmpU(a.ID, b.ID) })
	return out
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (s *logStore) close() error { return s.w.Close() }
