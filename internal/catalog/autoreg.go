package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// Auto-registration (event source 2) and internal events (source 3):
// the action vocabulary beyond trigger actions, and the
// autoregistration settings (Zabbix's config_autoreg_tls with the
// config table's autoreg_tls_accept).

// Event sources of actions (Zabbix's eventsource).
const (
	SourceTrigger   = 0
	SourceDiscovery = 1
	SourceAutoreg   = 2
	SourceInternal  = 3
)

// Condition types of auto-registration and internal actions.
const (
	CondTemplate     = 13
	CondProxy        = 20
	CondHostName     = 22
	CondEventType    = 23
	CondHostMetadata = 24
)

// More condition operators: regular expressions (host name and host
// metadata of auto-registration actions).
const (
	OpRegexp    = 8
	OpNotRegexp = 9
)

// Internal event types (condition 23's values as 6.0 accepts them).
const (
	EventTypeItemNotSupported    = 0
	EventTypeLLDRuleNotSupported = 2
	EventTypeTriggerUnknown      = 4
)

// Operation types of auto-registration actions.
const (
	OpAddHost             = 2
	OpRemoveHost          = 3
	OpAddToGroup          = 4
	OpRemoveFromGroup     = 5
	OpLinkTemplate        = 6
	OpUnlinkTemplate      = 7
	OpEnableHost          = 8
	OpDisableHost         = 9
	OpSetHostInventoryMod = 10
)

// AutoregSettings are the autoregistration settings: which connections
// a registering agent may use (TLSAccept: 1 unencrypted, 2 PSK, 3 both)
// and the one pre-shared key of auto-registration. PSK is a secret:
// never returned by the API, never logged.
type AutoregSettings struct {
	TLSAccept   uint8
	PSKIdentity string
	PSK         zbxpsk.Secret
}

// DefaultAutoregSettings is a fresh 6.0's: unencrypted only.
var DefaultAutoregSettings = AutoregSettings{TLSAccept: 1}

// PSKKey is the autoregistration key, if PSK connections are accepted
// and a key is set.
func (a AutoregSettings) PSKKey() (zbxpsk.Key, bool) {
	if a.TLSAccept&2 == 0 || a.PSKIdentity == "" {
		return zbxpsk.Key{}, false
	}
	b, err := zbxpsk.ParseKey(string(a.PSK))
	if err != nil {
		return zbxpsk.Key{}, false
	}
	return zbxpsk.Key{Identity: a.PSKIdentity, Secret: b}, true
}

// autoregSchema holds the autoregistration settings, one row.
const autoregSchema = `
CREATE TABLE IF NOT EXISTS autoreg_settings (
	id               INTEGER PRIMARY KEY CHECK (id = 1),
	tls_accept       INTEGER NOT NULL,
	tls_psk_identity TEXT NOT NULL,
	tls_psk          TEXT NOT NULL
);
`

// migrateAutoreg is the migration 29 → 30: the autoregistration
// settings.
func migrateAutoreg() string { return autoregSchema }

// AutoregSettings returns the autoregistration settings.
func (c *Catalog) AutoregSettings() AutoregSettings {
	if p := c.autoreg.Load(); p != nil {
		return *p
	}
	return DefaultAutoregSettings
}

// SetAutoregSettings stores and publishes the autoregistration settings
// (checked by the caller). Writers are serialised with Edit.
func (c *Catalog) SetAutoregSettings(ctx context.Context, a AutoregSettings) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if a.TLSAccept&2 == 0 {
		a.PSKIdentity, a.PSK = "", ""
	}
	tx, err := c.begin(ctx)
	if err != nil {
		return fmt.Errorf("catalog: cannot store the autoregistration settings: %w", err)
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `INSERT INTO autoreg_settings (id, tls_accept, tls_psk_identity, tls_psk) VALUES (1, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET tls_accept = excluded.tls_accept, tls_psk_identity = excluded.tls_psk_identity, tls_psk = excluded.tls_psk`,
		a.TLSAccept, a.PSKIdentity, string(a.PSK))
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return fmt.Errorf("catalog: cannot store the autoregistration settings: %w", err)
	}
	c.autoreg.Store(&a)
	return nil
}

// loadAutoreg reads the autoregistration settings.
func loadAutoreg(ctx context.Context, db *sql.DB) (*AutoregSettings, error) {
	var a AutoregSettings
	var psk string
	err := db.QueryRowContext(ctx, "SELECT tls_accept, tls_psk_identity, tls_psk FROM autoreg_settings WHERE id = 1").Scan(&a.TLSAccept, &a.PSKIdentity, &psk)
	if errors.Is(err, sql.ErrNoRows) {
		d := DefaultAutoregSettings
		return &d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot load the autoregistration settings: %w", err)
	}
	a.PSK = zbxpsk.Secret(psk)
	return &a, nil
}

// HostNamed returns the host (not a template) with the technical name
// as the edit has it so far, or nil. It must not be modified.
func (e *Edit) HostNamed(name string) *Host {
	id := e.hostByName(name)
	if id == 0 {
		return nil
	}
	if h := e.host(id); h != nil && !h.IsTemplate {
		return h
	}
	return nil
}

// LinkedTemplates returns the templates linked to owner as the edit
// has them so far, ascending.
func (e *Edit) LinkedTemplates(owner uint64) []uint64 { return slices.Clone(e.links(owner)) }
