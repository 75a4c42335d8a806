package server

import (
	"context"
	"fmt"
	"time"

	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/housekeep"
)

// Zabbix 6.0's defaults in a data directory: the catalog's host groups,
// media types, trigger action and scripts (catalog.EnsureDefaults) and
// the auth store's user groups, guest user and Admin's group
// (auth.EnsureDefaults; the roles are in every auth database), added
// once per data directory, before any port is bound and before the
// self-monitoring host is created (so that "Zabbix servers" is group 4,
// as in Zabbix). An older data directory gets what it lacks by name;
// what a user deleted or changed stays so.

// ensureCatalogDefaults adds the catalog's defaults (openState, right
// after the catalog opens).
func (s *Server) ensureCatalogDefaults(ctx context.Context) error {
	if _, err := s.Catalog.EnsureDefaults(ctx); err != nil {
		return fmt.Errorf("cannot add Zabbix 6.0's default objects to the catalog: %w", err)
	}
	return nil
}

// ensureAuthDefaults adds the auth store's defaults (openState, after
// the first user exists) and applies the settings an operator stored
// through the API over the configuration file's.
func (s *Server) ensureAuthDefaults(ctx context.Context) error {
	if _, err := s.authStore.EnsureDefaults(ctx); err != nil {
		return fmt.Errorf("cannot add Zabbix 6.0's default user groups: %w", err)
	}
	stored, err := s.authStore.ConfigStored(ctx)
	if err != nil {
		return err
	}
	if len(stored) > 0 {
		cfg, err := s.authStore.Config(ctx)
		if err != nil {
			return err
		}
		s.applySettings(stored, cfg)
	}
	return nil
}

// applySettings applies the members of Zabbix's settings that set
// changed and that Peregrine uses outside the auth store: the audit
// log's switch (auditlog_enabled) and retention (hk_audit_mode,
// hk_audit: mode 0 keeps every record). The login and password policy
// are the auth store's own; the history retention members are read by
// retention at each run.
func (s *Server) applySettings(set, cfg map[string]string) {
	if s.Audit == nil {
		return
	}
	if _, ok := set["auditlog_enabled"]; ok {
		s.Audit.SetEnabled(cfg["auditlog_enabled"] == "1")
	}
	_, mode := set["hk_audit_mode"]
	_, period := set["hk_audit"]
	if mode || period {
		d, err := auth.ParseSeconds(cfg["hk_audit"])
		if cfg["hk_audit_mode"] == "0" || err != nil {
			d = -1 // keep everything
		}
		s.Audit.SetRetention(d)
		s.log.Info("audit log retention set through the API", "retention", d)
	}
}

// housekeepingRetention lays Zabbix's housekeeping settings over the
// items' retention r: history (or trends) housekeeping off keeps
// everything; a global period replaces every item's. A global period of
// 0 (Zabbix: keep none) is not applied: Peregrine drops data only by a
// period.
func (s *Server) housekeepingRetention(r housekeep.Retention, itemExists func(uint64) bool) housekeep.Retention {
	if s.authStore == nil {
		return r
	}
	cfg, err := s.authStore.Config(context.Background())
	if err != nil {
		s.log.Warn("cannot read the housekeeping settings; the items' retention applies", "err", err)
		return r
	}
	global := func(mode, on, period string) (int64, bool) {
		if cfg[mode] != "1" || cfg[on] != "1" {
			return 0, false
		}
		d, err := auth.ParseSeconds(cfg[period])
		if err != nil || d < time.Second {
			return 0, false
		}
		return int64(d.Seconds()), true
	}
	if cfg["hk_history_mode"] == "0" {
		r.History, r.Item = 0, nil
	} else if secs, ok := global("hk_history_mode", "hk_history_global", "hk_history"); ok {
		r.History = secs
		r.Item = func(id uint64) (int64, bool) { return secs, itemExists(id) }
	}
	if cfg["hk_trends_mode"] == "0" {
		r.Trends = 0
	} else if secs, ok := global("hk_trends_mode", "hk_trends_global", "hk_trends"); ok {
		r.Trends = secs
	}
	return r
}
