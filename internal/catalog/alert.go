package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// alertSchema holds what notifications need (schema version 10): media
// types, actions and users' media, each row an ID, the name where Zabbix
// makes it unique, and the object as JSON with Zabbix's field names. One
// JSON column rather than a dozen tables of operations, conditions and
// templates: the objects are small, few (hundreds, not millions), always
// read and written whole, and loaded once per change into AlertConfig.
// alert_seq keeps the next ID of each kind, so that an ID is never reused
// after a delete: alerts name their action and media type by ID.
const alertSchema = `
CREATE TABLE IF NOT EXISTS media_types (
	id     INTEGER PRIMARY KEY,
	name   TEXT NOT NULL UNIQUE,
	config TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS actions (
	id     INTEGER PRIMARY KEY,
	name   TEXT NOT NULL UNIQUE,
	config TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS user_medias (
	user_id INTEGER PRIMARY KEY,
	config  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS alert_seq (
	kind TEXT PRIMARY KEY,
	next INTEGER NOT NULL
);
`

// migrateAlerts is the migration 10 → 11 (media types, actions, user
// media), self-contained so that schema changes made in parallel
// renumber cleanly.
func migrateAlerts() string { return alertSchema }

// Media type kinds (Zabbix's mediatype "type").
const (
	MediaEmail   = 0
	MediaScript  = 1
	MediaSMS     = 2 // stored; Peregrine has no GSM modem to send with
	MediaWebhook = 4
)

// SMTP security (Zabbix's smtp_security).
const (
	SMTPNone     = 0
	SMTPStartTLS = 1
	SMTPSSL      = 2
)

// MediaParam is one webhook parameter.
type MediaParam struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// MessageTemplate is a media type's default message for one kind of
// event: Recovery 0 problem, 1 recovery, 2 update (Zabbix's "recovery").
type MessageTemplate struct {
	EventSource int    `json:"eventsource"`
	Recovery    int    `json:"recovery"`
	Subject     string `json:"subject"`
	Message     string `json:"message"`
}

// MediaType is a Zabbix 6.0 media type: how alerts are delivered.
type MediaType struct {
	ID          uint64 `json:"mediatypeid"`
	Name        string `json:"name"`
	Type        int    `json:"type"`
	Status      int    `json:"status"` // 0 enabled, 1 disabled
	Description string `json:"description"`
	// Email.
	SMTPServer   string `json:"smtp_server"`
	SMTPPort     int    `json:"smtp_port"`
	SMTPHelo     string `json:"smtp_helo"`
	SMTPEmail    string `json:"smtp_email"`
	SMTPSecurity int    `json:"smtp_security"`
	// SMTPVerifyPeer and SMTPVerifyHost check the server's certificate
	// (1) or not (0) under STARTTLS and SSL.
	SMTPVerifyPeer int    `json:"smtp_verify_peer"`
	SMTPVerifyHost int    `json:"smtp_verify_host"`
	SMTPAuth       int    `json:"smtp_authentication"` // 0 none, 1 password
	Username       string `json:"username"`
	Passwd         string `json:"passwd"`
	ContentType    int    `json:"content_type"` // 0 plain text, 1 HTML
	// Script: the program's name (under alerts.scripts_dir) and its
	// parameters, one a line, as Zabbix 6.0's exec_params.
	ExecPath   string `json:"exec_path"`
	ExecParams string `json:"exec_params"`
	// Webhook: parameters, JavaScript, and whether to take tags from the
	// script's result.
	Parameters  []MediaParam `json:"parameters"`
	Script      string       `json:"script"`
	Timeout     string       `json:"timeout"` // "30s"
	ProcessTags int          `json:"process_tags"`
	// Delivery: concurrent sessions (0 unlimited), attempts and the pause
	// between them.
	MaxSessions     int               `json:"maxsessions"`
	MaxAttempts     int               `json:"maxattempts"`
	AttemptInterval string            `json:"attempt_interval"` // "10s"
	Templates       []MessageTemplate `json:"message_templates"`
	// SMS (type 2): the modem's device. Stored: Peregrine sends no SMS.
	GSMModem string `json:"gsm_modem"`
	// The event menu entry Zabbix's frontend shows (stored).
	ShowEventMenu int    `json:"show_event_menu"`
	EventMenuURL  string `json:"event_menu_url"`
	EventMenuName string `json:"event_menu_name"`
}

// UserMedia is one medium of a user (Zabbix's media object).
type UserMedia struct {
	ID          uint64   `json:"mediaid"`
	MediaTypeID uint64   `json:"mediatypeid"`
	SendTo      []string `json:"sendto"` // one address; several for email
	Active      int      `json:"active"` // 0 enabled, 1 disabled
	Severity    int      `json:"severity"`
	Period      string   `json:"period"`
}

// Action condition types Peregrine evaluates (Zabbix's conditiontype).
const (
	CondHostGroup  = 0
	CondHost       = 1
	CondTrigger    = 2
	CondEventName  = 3
	CondSeverity   = 4
	CondSuppressed = 16
	CondTag        = 25
	CondTagValue   = 26
)

// Condition operators (Zabbix's operator).
const (
	OpEqual      = 0
	OpNotEqual   = 1
	OpLike       = 2
	OpNotLike    = 3
	OpGreaterEq  = 5
	OpLessEq     = 6
	OpYes        = 10
	OpNo         = 11
	opMaxDefined = 11
)

// Condition is one action filter condition. For CondTagValue, Value2 is
// the tag's name and Value its value.
type Condition struct {
	ConditionType int    `json:"conditiontype"`
	Operator      int    `json:"operator"`
	Value         string `json:"value"`
	Value2        string `json:"value2"`
	FormulaID     string `json:"formulaid"`
}

// Filter is an action's filter: EvalType 0 and/or, 1 and, 2 or, 3 custom
// Formula over the conditions' FormulaIDs.
type Filter struct {
	EvalType   int         `json:"evaltype"`
	Formula    string      `json:"formula"`
	Conditions []Condition `json:"conditions"`
}

// Operation types (Zabbix's operationtype) Peregrine runs.
const (
	OpSendMessage       = 0
	OpRemoteCommand     = 1
	OpNotifyAllRecovery = 11 // recovery operations: notify all involved
	OpNotifyAllUpdate   = 12 // update operations: notify all involved
)

// Operation condition type and values (Zabbix's opconditions): "event
// acknowledged", value "1" acknowledged, "0" not.
const (
	OpCondAcknowledged = 14
)

// OpCondition is one condition of an escalation operation: the operation
// runs at its step only if its conditions hold then.
type OpCondition struct {
	ConditionType int    `json:"conditiontype"`
	Operator      int    `json:"operator"` // 0 (=): the only one Zabbix allows
	Value         string `json:"value"`
}

// Operation is one action operation; step fields and conditions are for
// problem operations only.
type Operation struct {
	OperationType int    `json:"operationtype"`
	StepFrom      int    `json:"esc_step_from"`
	StepTo        int    `json:"esc_step_to"` // 0: to the end
	Period        string `json:"esc_period"`  // "0": the action's
	// Message: DefaultMsg 1 takes the media type's template.
	DefaultMsg  int      `json:"default_msg"`
	Subject     string   `json:"subject"`
	Message     string   `json:"message"`
	MediaTypeID uint64   `json:"mediatypeid"` // 0: every medium of the user
	UserIDs     []uint64 `json:"users"`
	GroupIDs    []uint64 `json:"groups"`
	// EvalType combines Conditions: 0 and/or (Zabbix's default: of one
	// condition type or-ed, types and-ed), 1 and, 2 or.
	EvalType   int           `json:"evaltype,omitempty"`
	Conditions []OpCondition `json:"opconditions,omitempty"`
	// Remote command: the script, and the hosts it runs on (ID 0: the
	// hosts of the event's trigger) and the host groups whose hosts it
	// runs on.
	ScriptID      uint64   `json:"scriptid,omitempty"`
	CommandHosts  []uint64 `json:"command_hosts,omitempty"`
	CommandGroups []uint64 `json:"command_groups,omitempty"`
	// Auto-registration operations (autoreg.go): the host groups to add
	// the host to or remove it from, the templates to link or unlink,
	// and the inventory mode to set (-1 disabled, 0 manual, 1
	// automatic; Zabbix's opinventory).
	OpGroups      []uint64 `json:"opgroup,omitempty"`
	OpTemplates   []uint64 `json:"optemplate,omitempty"`
	InventoryMode int      `json:"inventory_mode,omitempty"`
}

// Action is a Zabbix 6.0 action: of trigger events (EventSource 0),
// auto-registration (2) or internal events (3).
type Action struct {
	ID                 uint64      `json:"actionid"`
	Name               string      `json:"name"`
	EventSource        int         `json:"eventsource"`
	Status             int         `json:"status"`     // 0 enabled, 1 disabled
	Period             string      `json:"esc_period"` // default step duration
	PauseSuppressed    int         `json:"pause_suppressed"`
	NotifyIfCanceled   int         `json:"notify_if_canceled"`
	Filter             Filter      `json:"filter"`
	Operations         []Operation `json:"operations"`
	RecoveryOperations []Operation `json:"recovery_operations"`
	UpdateOperations   []Operation `json:"update_operations"`
}

// AlertConfig is the notification configuration: immutable once
// published; EditAlerts builds the next one.
type AlertConfig struct {
	MediaTypes map[uint64]*MediaType
	Actions    map[uint64]*Action
	Medias     map[uint64][]UserMedia // by user ID
	Scripts    map[uint64]*GlobalScript
	// Correlations are the event correlation rules (correlation.go).
	Correlations map[uint64]*Correlation
	// Revision increases with every change.
	Revision uint64
	// next IDs by kind: "mediatype", "action", "media", "script".
	next map[string]uint64
}

// SortedActions returns the actions by ID.
func (c *AlertConfig) SortedActions() []*Action {
	out := slices.Collect(maps.Values(c.Actions))
	slices.SortFunc(out, func(a, b *Action) int { return cmpID(a.ID, b.ID) })
	return out
}

// SortedMediaTypes returns the media types by ID.
func (c *AlertConfig) SortedMediaTypes() []*MediaType {
	out := slices.Collect(maps.Values(c.MediaTypes))
	slices.SortFunc(out, func(a, b *MediaType) int { return cmpID(a.ID, b.ID) })
	return out
}

func cmpID(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// NextID reserves the next ID of kind ("mediatype", "action", "media")
// in a configuration being edited.
func (c *AlertConfig) NextID(kind string) uint64 {
	n := max(c.next[kind], 1)
	c.next[kind] = n + 1
	return n
}

// clone copies c deeply enough for an edit: maps are new, objects are
// copied on write by the editor (EditAlerts hands out copies).
func (c *AlertConfig) clone() *AlertConfig {
	n := &AlertConfig{MediaTypes: map[uint64]*MediaType{}, Actions: map[uint64]*Action{}, Medias: map[uint64][]UserMedia{},
		Scripts: map[uint64]*GlobalScript{}, Correlations: cloneCorrelations(c.Correlations), Revision: c.Revision, next: maps.Clone(c.next)}
	for id, sc := range c.Scripts {
		cp := *sc
		n.Scripts[id] = &cp
	}
	if n.next == nil {
		n.next = map[string]uint64{}
	}
	for id, m := range c.MediaTypes {
		cp := *m
		cp.Parameters = slices.Clone(m.Parameters)
		cp.Templates = slices.Clone(m.Templates)
		n.MediaTypes[id] = &cp
	}
	for id, a := range c.Actions {
		cp := *a
		cp.Filter.Conditions = slices.Clone(a.Filter.Conditions)
		cp.Operations = slices.Clone(a.Operations)
		cp.RecoveryOperations = slices.Clone(a.RecoveryOperations)
		cp.UpdateOperations = slices.Clone(a.UpdateOperations)
		n.Actions[id] = &cp
	}
	for id, ms := range c.Medias {
		n.Medias[id] = slices.Clone(ms)
	}
	return n
}

// AlertConfig returns the current notification configuration; never nil.
// It must not be modified.
func (c *Catalog) AlertConfig() *AlertConfig { return c.alerts.Load() }

// EditAlerts runs fn on a copy of the notification configuration and,
// if fn returns nil, writes the copy whole (the configuration is small)
// in one transaction and publishes it. Writers are serialised with Apply
// and Edit. fn validates: the catalog only stores.
func (c *Catalog) EditAlerts(ctx context.Context, fn func(cfg *AlertConfig) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	next := c.alerts.Load().clone()
	if err := fn(next); err != nil {
		return err
	}
	next.Revision++
	if err := writeAlerts(ctx, c.begin, next); err != nil {
		return fmt.Errorf("catalog: cannot store the alert configuration: %w", err)
	}
	c.alerts.Store(next)
	c.notifyAlerts()
	return nil
}

// notifyAlerts signals the SubscribeAlerts channels without blocking.
func (c *Catalog) notifyAlerts() {
	c.subMu.Lock()
	for _, ch := range c.alertSubs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	c.subMu.Unlock()
}

// SubscribeAlerts is Subscribe for the notification configuration.
func (c *Catalog) SubscribeAlerts() <-chan struct{} {
	ch := make(chan struct{}, 1)
	c.subMu.Lock()
	c.alertSubs = append(c.alertSubs, ch)
	c.subMu.Unlock()
	return ch
}

// writeAlerts writes cfg whole in one transaction, with a
// catalog_defaults row for each of marks (the default sets it adds).
func writeAlerts(ctx context.Context, begin sqlitedb.Begin, cfg *AlertConfig, marks ...string) error {
	tx, err := begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := writeAlertsTx(ctx, tx, cfg, marks...); err != nil {
		return err
	}
	return tx.Commit()
}

// writeAlertsTx is writeAlerts in tx.
func writeAlertsTx(ctx context.Context, tx *sql.Tx, cfg *AlertConfig, marks ...string) error {
	for _, m := range marks {
		if _, err := tx.ExecContext(ctx, "INSERT INTO catalog_defaults (name, version) VALUES (?, 1)", m); err != nil {
			return err
		}
	}
	for _, q := range []string{"DELETE FROM user_medias", "DELETE FROM alert_seq"} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	if err := writeConfigRows(ctx, tx, "media_types", cfg.MediaTypes, func(m *MediaType) (uint64, string) { return m.ID, m.Name }); err != nil {
		return err
	}
	if err := writeConfigRows(ctx, tx, "actions", cfg.Actions, func(a *Action) (uint64, string) { return a.ID, a.Name }); err != nil {
		return err
	}
	if err := writeConfigRows(ctx, tx, "scripts", cfg.Scripts, func(sc *GlobalScript) (uint64, string) { return sc.ID, sc.Name }); err != nil {
		return err
	}
	if err := writeConfigRows(ctx, tx, "correlations", cfg.Correlations, func(c *Correlation) (uint64, string) { return c.ID, c.Name }); err != nil {
		return err
	}
	for uid, ms := range cfg.Medias {
		if len(ms) == 0 {
			continue
		}
		b, err := json.Marshal(ms)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO user_medias (user_id, config) VALUES (?, ?)", uid, string(b)); err != nil {
			return err
		}
	}
	for k, n := range cfg.next {
		if _, err := tx.ExecContext(ctx, "INSERT INTO alert_seq (kind, next) VALUES (?, ?)", k, n); err != nil {
			return err
		}
	}
	return nil
}

// loadAlerts reads the notification configuration.
func loadAlerts(ctx context.Context, db *sql.DB) (*AlertConfig, error) {
	cfg := &AlertConfig{MediaTypes: map[uint64]*MediaType{}, Actions: map[uint64]*Action{}, Medias: map[uint64][]UserMedia{},
		Scripts: map[uint64]*GlobalScript{}, Correlations: map[uint64]*Correlation{}, next: map[string]uint64{}}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := loadConfigRows(ctx, tx, "media_types", "media type", cfg.MediaTypes, func(m *MediaType) uint64 { return m.ID }); err != nil {
		return nil, fmt.Errorf("cannot load media types: %w", err)
	}
	if err := loadConfigRows(ctx, tx, "actions", "action", cfg.Actions, func(a *Action) uint64 { return a.ID }); err != nil {
		return nil, fmt.Errorf("cannot load actions: %w", err)
	}
	err = queryEach(ctx, tx, "SELECT user_id, config FROM user_medias", func(r *sql.Rows) error {
		var id uint64
		var s string
		if err := r.Scan(&id, &s); err != nil {
			return err
		}
		var ms []UserMedia
		if err := json.Unmarshal([]byte(s), &ms); err != nil {
			return fmt.Errorf("%w: media of user %d: %v", ErrCorrupt, id, err)
		}
		cfg.Medias[id] = ms
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load user media: %w", err)
	}
	err = queryEach(ctx, tx, "SELECT kind, next FROM alert_seq", func(r *sql.Rows) error {
		var k string
		var n uint64
		if err := r.Scan(&k, &n); err != nil {
			return err
		}
		cfg.next[k] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot load alert ID sequences: %w", err)
	}
	if err := loadConfigRows(ctx, tx, "scripts", "script", cfg.Scripts, func(sc *GlobalScript) uint64 { return sc.ID }); err != nil {
		return nil, fmt.Errorf("cannot load scripts: %w", err)
	}
	if err := loadConfigRows(ctx, tx, "correlations", "correlation", cfg.Correlations, func(c *Correlation) uint64 { return c.ID }); err != nil {
		return nil, fmt.Errorf("cannot load correlations: %w", err)
	}
	return cfg, nil
}

// Media types, actions and global scripts are each stored as rows of
// (id, name, config JSON): the whole set is rewritten on every edit, the
// way the rest of the notification configuration is.

// writeConfigRows replaces table's rows with rows, each as its JSON.
func writeConfigRows[T any](ctx context.Context, tx *sql.Tx, table string, rows map[uint64]*T, key func(*T) (uint64, string)) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+table); err != nil {
		return err
	}
	for _, v := range rows {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		id, name := key(v)
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+table+" (id, name, config) VALUES (?, ?, ?)", id, name, string(b)); err != nil {
			return err
		}
	}
	return nil
}

// loadConfigRows reads table's rows into into; a row whose JSON does not
// decode, or names another ID than its row's, is ErrCorrupt (what names
// the kind of object in the error).
func loadConfigRows[T any](ctx context.Context, tx *sql.Tx, table, what string, into map[uint64]*T, idOf func(*T) uint64) error {
	return queryEach(ctx, tx, "SELECT id, config FROM "+table, func(r *sql.Rows) error {
		var id uint64
		var s string
		if err := r.Scan(&id, &s); err != nil {
			return err
		}
		v := new(T)
		if err := json.Unmarshal([]byte(s), v); err != nil || idOf(v) != id {
			return fmt.Errorf("%w: %s %d: %v", ErrCorrupt, what, id, err)
		}
		into[id] = v
		return nil
	})
}
