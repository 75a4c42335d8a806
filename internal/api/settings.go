package api

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/auth"
)

// settings.get/update, housekeeping.get/update and
// authentication.get/update, as Zabbix 6.0's (recorded from 6.0.14):
// one object each, every member 6.0 returns, the updates checked by the
// API input validator with its rules and texts and answered with the
// names of the members given. The values live in the auth store's
// config table (auth/settings.go); what Peregrine does with them:
//
//   - login_attempts and login_block: the login policy (auth);
//   - passwd_min_length and passwd_check_rules: the password policy
//     (auth);
//   - auditlog_enabled, hk_audit_mode and hk_audit: the audit log's
//     switch and retention (SettingsHook, set by the server);
//   - hk_history_mode/global/hk_history and hk_trends_*: the history
//     store's retention (the server reads them: a global period replaces
//     the items' own, mode 0 keeps everything);
//   - the rest is stored and returned only (there is no frontend, proxy,
//     discovery or LDAP/SAML to use it). Enabling LDAP, HTTP or SAML
//     authentication is refused: Peregrine has none, and storing it
//     would claim a login that does not exist.

func (s *Server) registerSettings() {
	for _, o := range []struct {
		name string
		read auth.Role
		get  func(context.Context, *call) (any, error)
		upd  func(context.Context, *call) (any, error)
	}{
		{auth.ConfigSettings, RoleUser, s.settingsGet, s.settingsUpdate},
		{auth.ConfigHousekeeping, RoleUser, s.housekeepingGet, s.housekeepingUpdate},
		{auth.ConfigAuthentication, RoleSuperAdmin, s.authenticationGet, s.authenticationUpdate},
	} {
		s.methods[o.name+".get"] = &method{role: o.read, call: o.get}
		s.methods[o.name+".update"] = &method{role: RoleSuperAdmin, call: o.upd}
	}
}

// The members of each object, in Zabbix 6.0's order (its "output"
// lists them so in errors).
var settingsFields = strings.Fields(`default_theme search_limit max_in_table server_check_interval work_period show_technical_errors
	history_period period_default max_period severity_color_0 severity_color_1 severity_color_2
	severity_color_3 severity_color_4 severity_color_5 severity_name_0 severity_name_1
	severity_name_2 severity_name_3 severity_name_4 severity_name_5 custom_color ok_period
	blink_period problem_unack_color problem_ack_color ok_unack_color ok_ack_color
	problem_unack_style problem_ack_style ok_unack_style ok_ack_style discovery_groupid
	default_inventory_mode alert_usrgrpid snmptrap_logging default_lang default_timezone
	login_attempts login_block validate_uri_schemes uri_valid_schemes x_frame_options
	iframe_sandboxing_enabled iframe_sandboxing_exceptions max_overview_table_size connect_timeout
	socket_timeout media_type_test_timeout script_timeout item_test_timeout url report_test_timeout
	auditlog_enabled ha_failover_delay geomaps_tile_provider geomaps_tile_url geomaps_max_zoom
	geomaps_attribution`)
var housekeepingFields = strings.Fields(`hk_events_mode hk_events_trigger hk_events_service hk_events_internal hk_events_discovery
	hk_events_autoreg hk_services_mode hk_services hk_audit_mode hk_audit hk_sessions_mode
	hk_sessions hk_history_mode hk_history_global hk_history hk_trends_mode hk_trends_global
	hk_trends db_extension compression_status compress_older`)
var authenticationFields = strings.Fields(`authentication_type http_auth_enabled http_login_form http_strip_domains http_case_sensitive
	ldap_configured ldap_host ldap_port ldap_base_dn ldap_search_attribute ldap_bind_dn
	ldap_case_sensitive ldap_bind_password saml_auth_enabled saml_idp_entityid saml_sso_url
	saml_slo_url saml_username_attribute saml_sp_entityid saml_nameid_format saml_sign_messages
	saml_sign_assertions saml_sign_authn_requests saml_sign_logout_requests
	saml_sign_logout_responses saml_encrypt_nameid saml_encrypt_assertions saml_case_sensitive
	passwd_min_length passwd_check_rules`)

// configGetParams are the parameters of the three get methods: "output"
// only, its names the object's (adjustRule).
type configGetParams struct {
	Output opt[[]string] `json:"output" as:"output"`
	fields []string
}

func (p *configGetParams) adjustRule(r *fieldRule, _ func(string) bool) {
	if r.name == "output" {
		r.in = p.fields
	}
}

// configGet answers one of the get methods: the object's members the
// output names (all by default).
func (s *Server) configGet(ctx context.Context, c *call, fields []string) (any, error) {
	p := configGetParams{fields: fields}
	if err := decodeValidated(c.params, &p); err != nil {
		return nil, err
	}
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	cfg, err := acc.Config(ctx)
	if err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	out := parseOutput(p.Output.Value, true)
	o := object{}
	for _, f := range fields {
		if out.has(f) {
			o[f] = cfg[f]
		}
	}
	return o, nil
}

func (s *Server) settingsGet(ctx context.Context, c *call) (any, error) {
	return s.configGet(ctx, c, settingsFields)
}

func (s *Server) housekeepingGet(ctx context.Context, c *call) (any, error) {
	return s.configGet(ctx, c, housekeepingFields)
}

func (s *Server) authenticationGet(ctx context.Context, c *call) (any, error) {
	return s.configGet(ctx, c, authenticationFields)
}

type settingsParams struct {
	DefaultTheme               opt[vWord]        `json:"default_theme" in:"blue-theme,dark-theme,hc-light,hc-dark"`
	SearchLimit                opt[int64]        `json:"search_limit" in:"1:999999"`
	MaxInTable                 opt[int64]        `json:"max_in_table" in:"1:99999"`
	ServerCheckInterval        opt[int64]        `json:"server_check_interval" in:"0,10"`
	WorkPeriod                 opt[vPeriod]      `json:"work_period"`
	ShowTechnicalErrors        opt[int64]        `json:"show_technical_errors" in:"0,1"`
	HistoryPeriod              opt[vTime]        `json:"history_period" in:"86400:604800"`
	PeriodDefault              opt[vTimeYear]    `json:"period_default" in:"60:315360000"`
	MaxPeriod                  opt[vTimeYear]    `json:"max_period" in:"31536000:315360000"`
	SeverityColor0             opt[vColor]       `json:"severity_color_0"`
	SeverityColor1             opt[vColor]       `json:"severity_color_1"`
	SeverityColor2             opt[vColor]       `json:"severity_color_2"`
	SeverityColor3             opt[vColor]       `json:"severity_color_3"`
	SeverityColor4             opt[vColor]       `json:"severity_color_4"`
	SeverityColor5             opt[vColor]       `json:"severity_color_5"`
	SeverityName0              opt[vNotEmpty]    `json:"severity_name_0"`
	SeverityName1              opt[vNotEmpty]    `json:"severity_name_1"`
	SeverityName2              opt[vNotEmpty]    `json:"severity_name_2"`
	SeverityName3              opt[vNotEmpty]    `json:"severity_name_3"`
	SeverityName4              opt[vNotEmpty]    `json:"severity_name_4"`
	SeverityName5              opt[vNotEmpty]    `json:"severity_name_5"`
	CustomColor                opt[int64]        `json:"custom_color" in:"0,1"`
	OkPeriod                   opt[vTime]        `json:"ok_period" in:"0:86400"`
	BlinkPeriod                opt[vTime]        `json:"blink_period" in:"0:86400"`
	ProblemUnackColor          opt[vColor]       `json:"problem_unack_color"`
	ProblemAckColor            opt[vColor]       `json:"problem_ack_color"`
	OkUnackColor               opt[vColor]       `json:"ok_unack_color"`
	OkAckColor                 opt[vColor]       `json:"ok_ack_color"`
	ProblemUnackStyle          opt[int64]        `json:"problem_unack_style" in:"0,1"`
	ProblemAckStyle            opt[int64]        `json:"problem_ack_style" in:"0,1"`
	OkUnackStyle               opt[int64]        `json:"ok_unack_style" in:"0,1"`
	OkAckStyle                 opt[int64]        `json:"ok_ack_style" in:"0,1"`
	DiscoveryGroupid           opt[uint64]       `json:"discovery_groupid"`
	DefaultInventoryMode       opt[int64]        `json:"default_inventory_mode" in:"-1,0,1"`
	AlertUsrgrpid              opt[uint64]       `json:"alert_usrgrpid"`
	SnmptrapLogging            opt[int64]        `json:"snmptrap_logging" in:"0,1"`
	DefaultLang                opt[vWord]        `json:"default_lang" in:"en_GB,en_US,bg_BG,ca_ES,zh_CN,zh_TW,cs_CZ,nl_NL,fi_FI,fr_FR,ka_GE,de_DE,el_GR,he_IL,hu_HU,id_ID,it_IT,ko_KR,ja_JP,lv_LV,lt_LT,nb_NO,fa_IR,pl_PL,pt_BR,pt_PT,ro_RO,ru_RU,sk_SK,es_ES,sv_SE,tr_TR,uk_UA,vi_VN"`
	DefaultTimezone            opt[vTimezone]    `json:"default_timezone"`
	LoginAttempts              opt[int64]        `json:"login_attempts" in:"1:32"`
	LoginBlock                 opt[vTime]        `json:"login_block" in:"30:3600"`
	ValidateUriSchemes         opt[int64]        `json:"validate_uri_schemes" in:"0,1"`
	UriValidSchemes            opt[vText]        `json:"uri_valid_schemes"`
	XFrameOptions              opt[vNotEmpty]    `json:"x_frame_options"`
	IframeSandboxingEnabled    opt[int64]        `json:"iframe_sandboxing_enabled" in:"0,1"`
	IframeSandboxingExceptions opt[vText]        `json:"iframe_sandboxing_exceptions"`
	MaxOverviewTableSize       opt[int64]        `json:"max_overview_table_size" in:"5:999999"`
	ConnectTimeout             opt[vTime]        `json:"connect_timeout" in:"1:30"`
	SocketTimeout              opt[vTime]        `json:"socket_timeout" in:"1:300"`
	MediaTypeTestTimeout       opt[vTime]        `json:"media_type_test_timeout" in:"1:300"`
	ScriptTimeout              opt[vTime]        `json:"script_timeout" in:"1:300"`
	ItemTestTimeout            opt[vTime]        `json:"item_test_timeout" in:"1:300"`
	Url                        opt[vText]        `json:"url"`
	ReportTestTimeout          opt[vTime]        `json:"report_test_timeout" in:"1:300"`
	AuditlogEnabled            opt[int64]        `json:"auditlog_enabled" in:"0,1"`
	GeomapsTileProvider        opt[vWordOrEmpty] `json:"geomaps_tile_provider" in:"OpenStreetMap.Mapnik,OpenTopoMap,Stamen.TonerLite,Stamen.Terrain,USGS.USTopo,USGS.USImagery"`
	GeomapsTileUrl             opt[vText]        `json:"geomaps_tile_url"`
	GeomapsMaxZoom             opt[int64]        `json:"geomaps_max_zoom" in:"0:30"`
	GeomapsAttribution         opt[vText]        `json:"geomaps_attribution"`
}

type housekeepingParams struct {
	HkEventsMode      opt[int64] `json:"hk_events_mode" in:"0,1"`
	HkEventsTrigger   opt[vTime] `json:"hk_events_trigger" in:"86400:788400000"`
	HkEventsService   opt[vTime] `json:"hk_events_service" in:"86400:788400000"`
	HkEventsInternal  opt[vTime] `json:"hk_events_internal" in:"86400:788400000"`
	HkEventsDiscovery opt[vTime] `json:"hk_events_discovery" in:"86400:788400000"`
	HkEventsAutoreg   opt[vTime] `json:"hk_events_autoreg" in:"86400:788400000"`
	HkServicesMode    opt[int64] `json:"hk_services_mode" in:"0,1"`
	HkServices        opt[vTime] `json:"hk_services" in:"86400:788400000"`
	HkAuditMode       opt[int64] `json:"hk_audit_mode" in:"0,1"`
	HkAudit           opt[vTime] `json:"hk_audit" in:"86400:788400000"`
	HkSessionsMode    opt[int64] `json:"hk_sessions_mode" in:"0,1"`
	HkSessions        opt[vTime] `json:"hk_sessions" in:"86400:788400000"`
	HkHistoryMode     opt[int64] `json:"hk_history_mode" in:"0,1"`
	HkHistoryGlobal   opt[int64] `json:"hk_history_global" in:"0,1"`
	HkHistory         opt[vTime] `json:"hk_history" in:"0,3600:788400000"`
	HkTrendsMode      opt[int64] `json:"hk_trends_mode" in:"0,1"`
	HkTrendsGlobal    opt[int64] `json:"hk_trends_global" in:"0,1"`
	HkTrends          opt[vTime] `json:"hk_trends" in:"0,86400:788400000"`
	CompressionStatus opt[int64] `json:"compression_status" in:"0,1"`
	CompressOlder     opt[vTime] `json:"compress_older" in:"604800:788400000"`
}

type authenticationParams struct {
	AuthenticationType      opt[int64]     `json:"authentication_type" in:"0,1"`
	HttpAuthEnabled         opt[int64]     `json:"http_auth_enabled" in:"0,1"`
	HttpLoginForm           opt[int64]     `json:"http_login_form" in:"0,1"`
	HttpStripDomains        opt[vText]     `json:"http_strip_domains"`
	HttpCaseSensitive       opt[int64]     `json:"http_case_sensitive" in:"0,1"`
	LdapConfigured          opt[int64]     `json:"ldap_configured" in:"0,1"`
	LdapHost                opt[vNotEmpty] `json:"ldap_host"`
	LdapPort                opt[int64]     `json:"ldap_port" in:"0:65535"`
	LdapBaseDn              opt[vNotEmpty] `json:"ldap_base_dn"`
	LdapSearchAttribute     opt[vNotEmpty] `json:"ldap_search_attribute"`
	LdapBindDn              opt[vText]     `json:"ldap_bind_dn"`
	LdapCaseSensitive       opt[int64]     `json:"ldap_case_sensitive" in:"0,1"`
	LdapBindPassword        opt[vText]     `json:"ldap_bind_password"`
	SamlAuthEnabled         opt[int64]     `json:"saml_auth_enabled" in:"0,1"`
	SamlIdpEntityid         opt[vNotEmpty] `json:"saml_idp_entityid"`
	SamlSsoUrl              opt[vNotEmpty] `json:"saml_sso_url"`
	SamlSloUrl              opt[vText]     `json:"saml_slo_url"`
	SamlUsernameAttribute   opt[vNotEmpty] `json:"saml_username_attribute"`
	SamlSpEntityid          opt[vNotEmpty] `json:"saml_sp_entityid"`
	SamlNameidFormat        opt[vText]     `json:"saml_nameid_format"`
	SamlSignMessages        opt[int64]     `json:"saml_sign_messages" in:"0,1"`
	SamlSignAssertions      opt[int64]     `json:"saml_sign_assertions" in:"0,1"`
	SamlSignAuthnRequests   opt[int64]     `json:"saml_sign_authn_requests" in:"0,1"`
	SamlSignLogoutRequests  opt[int64]     `json:"saml_sign_logout_requests" in:"0,1"`
	SamlSignLogoutResponses opt[int64]     `json:"saml_sign_logout_responses" in:"0,1"`
	SamlEncryptNameid       opt[int64]     `json:"saml_encrypt_nameid" in:"0,1"`
	SamlEncryptAssertions   opt[int64]     `json:"saml_encrypt_assertions" in:"0,1"`
	SamlCaseSensitive       opt[int64]     `json:"saml_case_sensitive" in:"0,1"`
	PasswdMinLength         opt[int64]     `json:"passwd_min_length" in:"1:70"`
	PasswdCheckRules        opt[int64]     `json:"passwd_check_rules" in:"0:15"`
}

// configUpdate decodes an update of one object into p (a params struct
// of the object's members), runs check on it and the values, stores the
// members given and answers their names in the request's order.
func (s *Server) configUpdate(ctx context.Context, c *call, p any, check func(cur, set map[string]string) error) (any, error) {
	acc, err := s.accounts()
	if err != nil {
		return nil, err
	}
	if err := decodeValidated(c.params, p); err != nil {
		return nil, err
	}
	ms, _ := validatorMembers(c.params)
	names, set := givenValues(p, withoutNoPermissions(ms))
	cur, err := acc.Config(ctx)
	if err != nil {
		return nil, s.accountErr(err, "/", c)
	}
	if err := check(cur, set); err != nil {
		return nil, err
	}
	if len(set) > 0 {
		if err := acc.UpdateConfig(ctx, set); err != nil {
			return nil, s.accountErr(err, "/", c)
		}
	}
	if h := s.opts.SettingsHook; h != nil && len(set) > 0 {
		if cfg, err := acc.Config(ctx); err == nil {
			h(set, cfg)
		}
	}
	s.opts.Logger.Info("api: settings changed", "by", c.user.Username, "members", names)
	return names, nil
}

// givenValues is the members of a decoded params struct p that ms gave,
// in ms's order, with their values as the config table keeps them.
func givenValues(p any, ms []member) ([]string, map[string]string) {
	rv := reflect.ValueOf(p).Elem()
	si := structInfoOf(rv.Type())
	names := []string{}
	set := map[string]string{}
	for _, m := range ms {
		k, ok := si.byName[m.name]
		if !ok {
			continue
		}
		if _, dup := set[m.name]; !dup {
			names = append(names, m.name)
		}
		v := rv.FieldByIndex(si.fields[k].index).FieldByName("Value")
		switch x := v.Interface().(type) {
		case int64:
			set[m.name] = strconv.FormatInt(x, 10)
		case uint64:
			set[m.name] = strconv.FormatUint(x, 10)
		default:
			set[m.name] = v.String()
		}
	}
	return names, set
}

func (s *Server) settingsUpdate(ctx context.Context, c *call) (any, error) {
	var p settingsParams
	return s.configUpdate(ctx, c, &p, func(cur, set map[string]string) error {
		if v, ok := set["discovery_groupid"]; ok {
			gid, _ := strconv.ParseUint(v, 10, 64)
			if s.opts.Catalog.Snapshot().GroupByID(gid) == nil {
				return errParams(`Host group with ID "%s" is not available.`, v)
			}
		}
		if v, ok := set["alert_usrgrpid"]; ok && v != "0" {
			gs, err := s.opts.Accounts.UserGroups(ctx)
			if err != nil {
				return s.accountErr(err, "/", c)
			}
			gid, _ := strconv.ParseUint(v, 10, 64)
			if err := checkUserGroups(gs, []uint64{gid}); err != nil {
				return err
			}
		}
		if v, ok := set["geomaps_tile_provider"]; ok && v != "" {
			// A provider of Zabbix's list brings its own tiles.
			for _, f := range []string{"geomaps_tile_url", "geomaps_max_zoom", "geomaps_attribution"} {
				set[f] = auth.ConfigDefaults(auth.ConfigSettings)[f]
			}
		}
		_, pdSet := set["period_default"]
		_, mpSet := set["max_period"]
		if pdSet || mpSet {
			val := func(f string) int64 {
				v, ok := set[f]
				if !ok {
					v = cur[f]
				}
				n, _ := timeUnitSeconds(v, true)
				return n
			}
			if val("period_default") > val("max_period") {
				if pdSet {
					return errParams(`Incorrect value for field "period_default": time filter default period exceeds the max period.`)
				}
				return errParams(`Incorrect value for field "max_period": max period is less than time filter default period.`)
			}
		}
		return nil
	})
}

func (s *Server) housekeepingUpdate(ctx context.Context, c *call) (any, error) {
	var p housekeepingParams
	return s.configUpdate(ctx, c, &p, func(map[string]string, map[string]string) error { return nil })
}

// unsupportedAuth are the authentication members whose value 1 would
// turn on a way of logging in Peregrine does not have.
var unsupportedAuth = map[string]string{
	"authentication_type": "LDAP authentication",
	"ldap_configured":     "LDAP authentication",
	"http_auth_enabled":   "HTTP authentication",
	"saml_auth_enabled":   "SAML authentication",
}

func (s *Server) authenticationUpdate(ctx context.Context, c *call) (any, error) {
	var p authenticationParams
	return s.configUpdate(ctx, c, &p, func(_, set map[string]string) error {
		for _, f := range authenticationFields {
			if what, ok := unsupportedAuth[f]; ok && set[f] == "1" {
				return errParams(`Invalid parameter "/%s": %s is not supported by Peregrine.`, f, what)
			}
		}
		return nil
	})
}

// The kinds of string member of the config objects, each read as
// Zabbix 6.0's API input validator reads it.
type (
	// vText: any string.
	vText string
	// vNotEmpty: a string that is not empty.
	vNotEmpty string
	// vWord: one of the field's "in" words.
	vWord string
	// vWordOrEmpty: empty, or one of the field's "in" words.
	vWordOrEmpty string
	// vTime: a time unit (s, m, h, d, w) in the field's ranges, in
	// seconds; vTimeYear also takes M (30 days) and y (365 days).
	vTime     string
	vTimeYear string
	// vColor: six hexadecimal digits.
	vColor string
	// vPeriod: a time period ("1-5,09:00-18:00;6-7,10:00-16:00") or a
	// user macro.
	vPeriod string
	// vTimezone: "system" or a time zone name.
	vTimezone string
)

// stringParam reads a validator string: a JSON string, or (as PHP
// takes it) a number where numbers stand for strings.
func stringParam(raw []byte, numbers bool) (string, error) {
	switch jsonKindOf(raw) {
	case 's':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", &valueError{msg: "a character string is expected"}
		}
		return s, nil
	case 'i':
		if numbers {
			return string(raw), nil
		}
	}
	return "", &valueError{msg: "a character string is expected"}
}

func (v *vText) decodeParam(raw []byte, _ *fieldCtx) error {
	s, err := stringParam(raw, false)
	*v = vText(s)
	return err
}

func (v *vNotEmpty) decodeParam(raw []byte, _ *fieldCtx) error {
	s, err := stringParam(raw, false)
	if err == nil && s == "" {
		err = &valueError{msg: "cannot be empty"}
	}
	*v = vNotEmpty(s)
	return err
}

func (v *vWord) decodeParam(raw []byte, c *fieldCtx) error {
	s, err := stringParam(raw, false)
	if err != nil {
		return err
	}
	if !slices.Contains(c.rule.in, s) {
		return &valueError{msg: mustBe(quotedList(c.rule.in), len(c.rule.in) > 1)}
	}
	*v = vWord(s)
	return nil
}

func (v *vWordOrEmpty) decodeParam(raw []byte, c *fieldCtx) error {
	s, err := stringParam(raw, false)
	if err != nil {
		return err
	}
	if s != "" && !slices.Contains(c.rule.in, s) {
		return &valueError{msg: "value must be empty or one of " + quotedList(c.rule.in)}
	}
	*v = vWordOrEmpty(s)
	return nil
}

func (v *vTime) decodeParam(raw []byte, c *fieldCtx) error {
	s, err := timeUnitParam(raw, c.rule, false)
	*v = vTime(s)
	return err
}

func (v *vTimeYear) decodeParam(raw []byte, c *fieldCtx) error {
	s, err := timeUnitParam(raw, c.rule, true)
	*v = vTimeYear(s)
	return err
}

// timeUnitParam reads a time unit member: not empty, a whole number of
// seconds with an optional unit, in the rule's ranges.
func timeUnitParam(raw []byte, r *fieldRule, year bool) (string, error) {
	s, err := stringParam(raw, true)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", &valueError{msg: "cannot be empty"}
	}
	n, ok := timeUnitSeconds(s, year)
	if !ok {
		return "", &valueError{msg: "a time unit is expected"}
	}
	if !r.inRange(n) {
		return "", &valueError{msg: mustBe(r.inText, true)}
	}
	return s, nil
}

// timeUnitSeconds is a Zabbix time unit in seconds: digits and one of
// s, m, h, d, w (and M, y with year).
func timeUnitSeconds(s string, year bool) (int64, bool) {
	mult := int64(1)
	num := s
	if n := len(s); n > 0 {
		u := map[byte]int64{'s': 1, 'm': 60, 'h': 3600, 'd': 86400, 'w': 604800}
		if year {
			u['M'], u['y'] = 2592000, 31536000
		}
		if m, ok := u[s[n-1]]; ok {
			mult, num = m, s[:n-1]
		}
	}
	if num == "" || strings.Trim(num, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > (1<<62)/mult {
		return 0, false
	}
	return n * mult, true
}

var colorRE = regexp.MustCompile(`^[0-9a-fA-F]{6}$`)

func (v *vColor) decodeParam(raw []byte, _ *fieldCtx) error {
	s, err := stringParam(raw, false)
	if err != nil {
		return err
	}
	if s == "" {
		return &valueError{msg: "cannot be empty"}
	}
	if !colorRE.MatchString(s) {
		return &valueError{msg: "a hexadecimal color code (6 symbols) is expected"}
	}
	*v = vColor(s)
	return nil
}

// periodRE is one period of a time period: days 1-7 (or a range of
// them), then a time range within a day.
var periodRE = regexp.MustCompile(`^([1-7])(?:-([1-7]))?,([0-9]{1,2}):([0-9]{2})-([0-9]{1,2}):([0-9]{2})$`)

// userMacroRE is a user macro, which a time period may be instead.
var userMacroRE = regexp.MustCompile(`^\{\$[A-Z0-9_.]+(?::.*)?\}$`)

func (v *vPeriod) decodeParam(raw []byte, _ *fieldCtx) error {
	s, err := stringParam(raw, false)
	if err != nil {
		return err
	}
	if !validPeriod(s) {
		return &valueError{msg: "a time period is expected"}
	}
	*v = vPeriod(s)
	return nil
}

// validPeriod reports whether s is a time period: periods separated by
// ";" (a trailing one allowed), each days then hours, the day range
// ascending, the start before the end, no later than 24:00.
func validPeriod(s string) bool {
	if userMacroRE.MatchString(s) {
		return true
	}
	parts := strings.Split(strings.TrimSuffix(s, ";"), ";")
	for _, p := range parts {
		m := periodRE.FindStringSubmatch(p)
		if m == nil {
			return false
		}
		if m[2] != "" && m[2] < m[1] {
			return false
		}
		atoi := func(x string) int { n, _ := strconv.Atoi(x); return n }
		h1, m1, h2, m2 := atoi(m[3]), atoi(m[4]), atoi(m[5]), atoi(m[6])
		if m1 > 59 || m2 > 59 || h1 > 23 || h2 > 24 || h2 == 24 && m2 != 0 || h1*60+m1 >= h2*60+m2 {
			return false
		}
	}
	return true
}

func (v *vTimezone) decodeParam(raw []byte, _ *fieldCtx) error {
	s, err := stringParam(raw, false)
	if err != nil {
		return err
	}
	if s != "system" {
		if _, err := time.LoadLocation(s); err != nil || s == "" || s == "Local" {
			return &valueError{msg: `value must be "system" or a time zone name`}
		}
	}
	*v = vTimezone(s)
	return nil
}
