package auth

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Zabbix 6.0 keeps its global settings in one table, config: the
// members of settings.get, housekeeping.get and authentication.get. The
// store keeps the ones that were changed (table config, one row per
// member) and reads the others as the defaults below, so a member a
// later version adds reads as its default without a migration. The API
// validates values; the store uses the login and password policy
// (login_attempts, login_block, passwd_min_length, passwd_check_rules).

// The defaults of a fresh Zabbix 6.0 database, recorded from 6.0.14's
// settings.get, housekeeping.get and authentication.get.
var (
	defaultSettings = map[string]string{
		"default_theme": "blue-theme", "search_limit": "1000", "max_in_table": "50", "server_check_interval": "10",
		"work_period": "1-5,09:00-18:00", "show_technical_errors": "0", "history_period": "24h", "period_default": "1h",
		"max_period": "2y", "severity_color_0": "97AAB3", "severity_color_1": "7499FF", "severity_color_2": "FFC859",
		"severity_color_3": "FFA059", "severity_color_4": "E97659", "severity_color_5": "E45959",
		"severity_name_0": "Not classified", "severity_name_1": "Information", "severity_name_2": "Warning",
		"severity_name_3": "Average", "severity_name_4": "High", "severity_name_5": "Disaster", "custom_color": "0",
		"ok_period": "5m", "blink_period": "2m", "problem_unack_color": "CC0000", "problem_ack_color": "CC0000",
		"ok_unack_color": "009900", "ok_ack_color": "009900", "problem_unack_style": "1", "problem_ack_style": "1",
		"ok_unack_style": "1", "ok_ack_style": "1", "discovery_groupid": "5", "default_inventory_mode": "-1",
		"alert_usrgrpid": "7", "snmptrap_logging": "1", "default_lang": "en_US", "default_timezone": "system",
		"login_attempts": "5", "login_block": "30s", "validate_uri_schemes": "1",
		"uri_valid_schemes": "http,https,ftp,file,mailto,tel,ssh", "x_frame_options": "SAMEORIGIN",
		"iframe_sandboxing_enabled": "1", "iframe_sandboxing_exceptions": "", "max_overview_table_size": "50",
		"connect_timeout": "3s", "socket_timeout": "3s", "media_type_test_timeout": "65s", "script_timeout": "60s",
		"item_test_timeout": "60s", "url": "", "report_test_timeout": "60s", "auditlog_enabled": "1",
		"ha_failover_delay": "1m", "geomaps_tile_provider": "OpenStreetMap.Mapnik", "geomaps_tile_url": "",
		"geomaps_max_zoom": "0", "geomaps_attribution": "",
	}
	defaultHousekeeping = map[string]string{
		"hk_events_mode": "1", "hk_events_trigger": "365d", "hk_events_service": "1d", "hk_events_internal": "1d",
		"hk_events_discovery": "1d", "hk_events_autoreg": "1d", "hk_services_mode": "1", "hk_services": "365d",
		"hk_audit_mode": "1", "hk_audit": "365d", "hk_sessions_mode": "1", "hk_sessions": "365d",
		"hk_history_mode": "1", "hk_history_global": "0", "hk_history": "90d", "hk_trends_mode": "1",
		"hk_trends_global": "0", "hk_trends": "365d", "db_extension": "", "compression_status": "0",
		"compress_older": "7d",
	}
	defaultAuthentication = map[string]string{
		"authentication_type": "0", "http_auth_enabled": "0", "http_login_form": "0", "http_strip_domains": "",
		"http_case_sensitive": "1", "ldap_configured": "0", "ldap_host": "", "ldap_port": "389", "ldap_base_dn": "",
		"ldap_search_attribute": "", "ldap_bind_dn": "", "ldap_case_sensitive": "1", "ldap_bind_password": "",
		"saml_auth_enabled": "0", "saml_idp_entityid": "", "saml_sso_url": "", "saml_slo_url": "",
		"saml_username_attribute": "", "saml_sp_entityid": "", "saml_nameid_format": "", "saml_sign_messages": "0",
		"saml_sign_assertions": "0", "saml_sign_authn_requests": "0", "saml_sign_logout_requests": "0",
		"saml_sign_logout_responses": "0", "saml_encrypt_nameid": "0", "saml_encrypt_assertions": "0",
		"saml_case_sensitive": "0", "passwd_min_length": "8", "passwd_check_rules": "8",
	}
)

// The objects of the config table.
const (
	ConfigSettings       = "settings"
	ConfigHousekeeping   = "housekeeping"
	ConfigAuthentication = "authentication"
)

// ConfigDefaults returns the members of one object of the config table
// (ConfigSettings, ConfigHousekeeping, ConfigAuthentication) with their
// defaults; nil for another name. The result is the caller's.
func ConfigDefaults(object string) map[string]string {
	switch object {
	case ConfigSettings:
		return maps.Clone(defaultSettings)
	case ConfigHousekeeping:
		return maps.Clone(defaultHousekeeping)
	case ConfigAuthentication:
		return maps.Clone(defaultAuthentication)
	}
	return nil
}

// Config returns the current value of every member of the config table
// (the three objects together: their member names do not overlap). A
// cache hit takes one atomic load; the result is the caller's.
func (s *Store) Config(ctx context.Context) (map[string]string, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	m, err := s.configMap(ctx)
	if err != nil {
		return nil, err
	}
	return maps.Clone(m), nil
}

// ConfigStored returns the members of the config table that were set
// (UpdateConfig), without the defaults: what an operator chose through
// the API, which the server applies over its own configuration file.
func (s *Store) ConfigStored(ctx context.Context) (map[string]string, error) {
	if err := s.begin(); err != nil {
		return nil, err
	}
	defer s.end()
	rows, err := s.db.QueryContext(ctx, "SELECT name, value FROM config")
	if err != nil {
		return nil, fmt.Errorf("auth: cannot read the settings: %w", err)
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("auth: cannot read the settings: %w", err)
		}
		m[k] = v
	}
	return m, rows.Err()
}

func (s *Store) configMap(ctx context.Context) (map[string]string, error) {
	if m := s.settings.Load(); m != nil {
		return *m, nil
	}
	gen := s.settingsGen.Load()
	rows, err := s.db.QueryContext(ctx, "SELECT name, value FROM config")
	if err != nil {
		return nil, fmt.Errorf("auth: cannot read the settings: %w", err)
	}
	defer rows.Close()
	m := map[string]string{}
	maps.Copy(m, defaultSettings)
	maps.Copy(m, defaultHousekeeping)
	maps.Copy(m, defaultAuthentication)
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("auth: cannot read the settings: %w", err)
		}
		m[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("auth: cannot read the settings: %w", err)
	}
	p := &m
	if s.settings.CompareAndSwap(nil, p) && s.settingsGen.Load() != gen {
		s.settings.CompareAndSwap(p, nil)
	}
	return m, nil
}

// UpdateConfig sets members of the config table. The caller validates
// names and values; a name no object has is ErrInvalid.
func (s *Store) UpdateConfig(ctx context.Context, set map[string]string) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	for k := range set {
		_, a := defaultSettings[k]
		_, b := defaultHousekeeping[k]
		_, c := defaultAuthentication[k]
		if !a && !b && !c {
			return fmt.Errorf("auth: no setting is named %q: %w", k, ErrInvalid)
		}
	}
	tx, err := s.tx(ctx)
	if err != nil {
		return fmt.Errorf("auth: cannot save the settings: %w", err)
	}
	defer tx.Rollback()
	for k, v := range set {
		if _, err := tx.ExecContext(ctx, "INSERT INTO config (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value", k, v); err != nil {
			return fmt.Errorf("auth: cannot save setting %s: %w", k, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("auth: cannot save the settings: %w", err)
	}
	s.settingsGen.Add(1)
	s.settings.Store(nil)
	s.log.Info("auth: settings changed", "count", len(set))
	return nil
}

// loginPolicy is how many consecutive failed logins block an account,
// and for how long.
type loginPolicy struct {
	maxFailures int64
	blockMs     int64
}

// loginPolicy reads login_attempts and login_block: the stored values
// once set through the API, Options.MaxFailures and Options.BlockFor
// (by default Zabbix's 5 and 30s) before.
func (s *Store) loginPolicy(ctx context.Context) (loginPolicy, error) {
	p := loginPolicy{maxFailures: int64(s.opts.MaxFailures), blockMs: s.opts.BlockFor.Milliseconds()}
	m, err := s.configMap(ctx)
	if err != nil {
		return p, err
	}
	if v := m["login_attempts"]; v != defaultSettings["login_attempts"] {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			p.maxFailures = n
		}
	}
	if v := m["login_block"]; v != defaultSettings["login_block"] {
		if d, err := ParseSeconds(v); err == nil && d > 0 {
			p.blockMs = d.Milliseconds()
		}
	}
	return p, nil
}

// ParseSeconds reads a Zabbix time: a number of seconds with an
// optional suffix s, m, h, d or w.
func ParseSeconds(v string) (time.Duration, error) {
	unit := time.Second
	num := v
	if n := len(v); n > 0 {
		switch v[n-1] {
		case 's':
			num = v[:n-1]
		case 'm':
			unit, num = time.Minute, v[:n-1]
		case 'h':
			unit, num = time.Hour, v[:n-1]
		case 'd':
			unit, num = 24*time.Hour, v[:n-1]
		case 'w':
			unit, num = 7*24*time.Hour, v[:n-1]
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || num == "" || num[0] == '+' {
		return 0, fmt.Errorf("auth: %q is not a time: %w", v, ErrInvalid)
	}
	if n > int64(1<<62)/int64(unit) {
		return 0, fmt.Errorf("auth: %q is too long: %w", v, ErrInvalid)
	}
	return time.Duration(n) * unit, nil
}

// PasswordError is a new password the password policy refuses. Reason
// is in Zabbix 6.0's words ("must be at least 8 characters long").
type PasswordError struct{ Reason string }

func (e *PasswordError) Error() string { return "auth: password " + e.Reason }

// Is makes a PasswordError an ErrInvalid.
func (e *PasswordError) Is(target error) bool { return target == ErrInvalid }

// The bits of passwd_check_rules.
const (
	pwCase    = 1 // a lowercase and an uppercase Latin letter
	pwDigit   = 2
	pwSpecial = 4
	pwSimple  = 8 // not containing the user's names
)

// pwSpecials are the characters the special-character rule accepts.
const pwSpecials = " !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// CheckPassword applies the password policy to a new password of the
// user with these names (see checkPassword): a *PasswordError when the
// policy refuses it.
func (s *Store) CheckPassword(ctx context.Context, pw, username, name, surname string) error {
	if err := s.begin(); err != nil {
		return err
	}
	defer s.end()
	return s.checkPassword(ctx, pw, username, name, surname)
}

// checkPassword applies the password policy (authentication.get's
// passwd_min_length and passwd_check_rules) to a new password of the
// user with these names. The message never quotes the password. Zabbix
// also refuses the passwords of a dictionary of common ones (12 MB);
// Peregrine does not have it.
func (s *Store) checkPassword(ctx context.Context, pw, username, name, surname string) error {
	if len(pw) > maxPasswordBytes {
		return &PasswordError{Reason: fmt.Sprintf("must be at most %d bytes long", maxPasswordBytes)}
	}
	m, err := s.configMap(ctx)
	if err != nil {
		return err
	}
	minLen, _ := strconv.Atoi(m["passwd_min_length"])
	rules, _ := strconv.Atoi(m["passwd_check_rules"])
	if utf8.RuneCountInString(pw) < minLen {
		return &PasswordError{Reason: fmt.Sprintf("must be at least %d characters long", minLen)}
	}
	hasLower := strings.ContainsFunc(pw, func(r rune) bool { return r >= 'a' && r <= 'z' })
	hasUpper := strings.ContainsFunc(pw, func(r rune) bool { return r >= 'A' && r <= 'Z' })
	switch {
	case rules&pwCase != 0 && !(hasLower && hasUpper):
		return &PasswordError{Reason: "must contain at least one lowercase and one uppercase Latin letter"}
	case rules&pwDigit != 0 && !strings.ContainsFunc(pw, func(r rune) bool { return r >= '0' && r <= '9' }):
		return &PasswordError{Reason: "must contain at least one digit"}
	case rules&pwSpecial != 0 && !strings.ContainsAny(pw, pwSpecials):
		return &PasswordError{Reason: "must contain at least one special character"}
	}
	if rules&pwSimple != 0 {
		low := strings.ToLower(pw)
		for _, c := range []string{username, name, surname} {
			if c != "" && strings.Contains(low, strings.ToLower(c)) {
				return &PasswordError{Reason: "must not contain user's name, surname or username"}
			}
		}
	}
	return nil
}
