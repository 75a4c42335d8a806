package api

import (
	"strings"
	"testing"
)

// TestSettingsMethods: the checks of settings.update,
// housekeeping.update and authentication.update and their get methods,
// each text as Zabbix 6.0.14 answered the same call (recorded from the
// peer; none of these calls changed it).
func TestSettingsMethods(t *testing.T) {
	f := newPermFixture(t)
	for _, c := range []struct{ method, params, want string }{
		{"settings.update", `{"search_limit":0}`, `Invalid parameter "/search_limit": value must be one of 1-999999.`},
		{"settings.update", `{"search_limit":"x"}`, `Invalid parameter "/search_limit": an integer is expected.`},
		{"settings.update", `{"login_block":"10s"}`, `Invalid parameter "/login_block": value must be one of 30-3600.`},
		{"settings.update", `{"login_block":10}`, `Invalid parameter "/login_block": value must be one of 30-3600.`},
		{"settings.update", `{"login_block":"x"}`, `Invalid parameter "/login_block": a time unit is expected.`},
		{"settings.update", `{"login_block":"1.5m"}`, `Invalid parameter "/login_block": a time unit is expected.`},
		{"settings.update", `{"login_block":"1w"}`, `Invalid parameter "/login_block": value must be one of 30-3600.`},
		{"settings.update", `{"login_block":""}`, `Invalid parameter "/login_block": cannot be empty.`},
		{"settings.update", `{"login_block":null}`, `Invalid parameter "/login_block": a character string is expected.`},
		{"settings.update", `{"login_attempts":null}`, `Invalid parameter "/login_attempts": an integer is expected.`},
		{"settings.update", `{"url":null}`, `Invalid parameter "/url": a character string is expected.`},
		{"settings.update", `{"url":5}`, `Invalid parameter "/url": a character string is expected.`},
		{"settings.update", `{"severity_color_0":"zz"}`, `Invalid parameter "/severity_color_0": a hexadecimal color code (6 symbols) is expected.`},
		{"settings.update", `{"severity_color_0":"#FFFFFF"}`, `Invalid parameter "/severity_color_0": a hexadecimal color code (6 symbols) is expected.`},
		{"settings.update", `{"xyz":1}`, `Invalid parameter "/": unexpected parameter "xyz".`},
		{"settings.update", `{"default_theme":"nope"}`, `Invalid parameter "/default_theme": value must be one of "blue-theme", "dark-theme", "hc-light", "hc-dark".`},
		{"settings.update", `{"severity_name_0":""}`, `Invalid parameter "/severity_name_0": cannot be empty.`},
		{"settings.update", `{"discovery_groupid":"99999"}`, `Host group with ID "99999" is not available.`},
		{"settings.update", `{"discovery_groupid":"x"}`, `Invalid parameter "/discovery_groupid": a number is expected.`},
		{"settings.update", `{"alert_usrgrpid":"99999"}`, `User group with ID "99999" is not available.`},
		{"settings.update", `{"work_period":"bad"}`, `Invalid parameter "/work_period": a time period is expected.`},
		{"settings.update", `{"geomaps_tile_provider":"x"}`, `Invalid parameter "/geomaps_tile_provider": value must be empty or one of "OpenStreetMap.Mapnik", "OpenTopoMap", "Stamen.TonerLite", "Stamen.Terrain", "USGS.USTopo", "USGS.USImagery".`},
		{"settings.update", `{"history_period":"1h"}`, `Invalid parameter "/history_period": value must be one of 86400-604800.`},
		{"settings.update", `{"period_default":"11y"}`, `Invalid parameter "/period_default": value must be one of 60-315360000.`},
		{"settings.update", `{"max_period":"2M"}`, `Invalid parameter "/max_period": value must be one of 31536000-315360000.`},
		{"settings.update", `{"default_lang":"xx"}`, `Invalid parameter "/default_lang": value must be one of "en_GB", "en_US", "bg_BG", "ca_ES", "zh_CN", "zh_TW", "cs_CZ", "nl_NL", "fi_FI", "fr_FR", "ka_GE", "de_DE", "el_GR", "he_IL", "hu_HU", "id_ID", "it_IT", "ko_KR", "ja_JP", "lv_LV", "lt_LT", "nb_NO", "fa_IR", "pl_PL", "pt_BR", "pt_PT", "ro_RO", "ru_RU", "sk_SK", "es_ES", "sv_SE", "tr_TR", "uk_UA", "vi_VN".`},
		{"housekeeping.update", `{"hk_history_mode":2}`, `Invalid parameter "/hk_history_mode": value must be one of 0, 1.`},
		{"housekeeping.update", `{"hk_history":"x"}`, `Invalid parameter "/hk_history": a time unit is expected.`},
		{"housekeeping.update", `{"hk_events_trigger":"1h"}`, `Invalid parameter "/hk_events_trigger": value must be one of 86400-788400000.`},
		{"housekeeping.update", `{"xyz":1}`, `Invalid parameter "/": unexpected parameter "xyz".`},
		{"housekeeping.update", `{"db_extension":"timescaledb"}`, `Invalid parameter "/": unexpected parameter "db_extension".`},
		{"authentication.update", `{"passwd_min_length":0}`, `Invalid parameter "/passwd_min_length": value must be one of 1-70.`},
		{"authentication.update", `{"passwd_check_rules":16}`, `Invalid parameter "/passwd_check_rules": value must be one of 0-15.`},
		{"authentication.update", `{"xyz":1}`, `Invalid parameter "/": unexpected parameter "xyz".`},
		{"settings.get", `{"xyz":1}`, `Invalid parameter "/": unexpected parameter "xyz".`},
		{"authentication.get", `{"output":"extend","xyz":1}`, `Invalid parameter "/": unexpected parameter "xyz".`},
	} {
		if _, e := f.do(f.root, c.method, c.params); e == nil || e.Code != -32602 || e.Data != c.want {
			t.Errorf("%s %s: %+v, want -32602 %q", c.method, c.params, e, c.want)
		}
	}
	// The output names the object's members, listed in 6.0's order.
	_, e := f.do(f.root, "settings.get", `{"output":["nosuch"]}`)
	if e == nil || !strings.HasPrefix(e.Data, `Invalid parameter "/output/1": value must be one of "default_theme", "search_limit", "max_in_table",`) ||
		!strings.HasSuffix(e.Data, `"geomaps_tile_url", "geomaps_max_zoom", "geomaps_attribution".`) {
		t.Errorf("settings.get with an unknown output: %+v", e)
	}
	var names []string
	f.mustDo(f.root, "settings.update", `[]`, &names)
	if len(names) != 0 {
		t.Errorf("settings.update []: %v, want [] (as 6.0)", names)
	}
	var got map[string]string
	f.mustDo(f.root, "settings.get", `{"output":["search_limit"]}`, &got)
	if len(got) != 1 || got["search_limit"] != "1000" {
		t.Errorf("settings.get: %v", got)
	}
	f.mustDo(f.root, "housekeeping.update", `{"hk_history":"1h","hk_history_global":"1"}`, &names)
	f.mustDo(f.root, "housekeeping.get", `{"output":["hk_history","hk_history_global"]}`, &got)
	if got["hk_history"] != "1h" || got["hk_history_global"] != "1" || len(names) != 2 {
		t.Errorf("after housekeeping.update %v: %v", names, got)
	}
	// A user reads settings and housekeeping, not authentication.
	ro := f.login("reader")
	f.mustDo(ro, "settings.get", `{"output":["login_attempts"]}`, &got)
	if _, e := f.do(ro, "authentication.get", `{}`); e == nil || e.Data != `No permissions to call "authentication.get".` {
		t.Errorf("authentication.get by a user: %+v", e)
	}
}
