package migrate

import (
	"crypto/rand"
	"encoding/hex"
	"sort"
)

// kindDef is how one kind of object is read, compared and written. Its
// canon function is the whole mapping: it keeps the members the
// create/update methods take, with every ID replaced by a reference to a
// name, so that the same function applied to the source's and the
// target's object gives equal results exactly when nothing needs to
// change, and the target's request is the canonical object with the
// references resolved to the target's IDs.
type kindDef struct {
	kind string // in the report
	api  string // method family
	id   string // ID member
	name string // name member, the join key
	get  obj    // get parameters besides output
	// canon maps an object of side s to its canonical form.
	canon func(o obj, s *side) obj
	// key is the join key when the name alone is not unique (value maps
	// per host); nil: the name member.
	key func(c obj) string
	// create completes a create request from the source object: the
	// secrets the source does not return, noted in the report.
	create func(src, req obj, r *Report)
	// update completes an update request for the target's object tgt.
	update func(src, tgt, req obj)
	// skip says why a source object cannot be copied ("" : it can).
	skip func(o obj) string
}

func (k *kindDef) keyOf(c obj, o obj) string {
	if k.key != nil {
		return k.key(c)
	}
	return str(o[k.name])
}

var extend = "extend"

func hostGroups() *kindDef {
	return &kindDef{kind: "host group", api: "hostgroup", id: "groupid", name: "name",
		canon: func(o obj, _ *side) obj { return pick(o, "name") }}
}

func proxies() *kindDef {
	return &kindDef{kind: "proxy", api: "proxy", id: "proxyid", name: "host",
		get: obj{"selectInterface": extend},
		canon: func(o obj, _ *side) obj {
			c := pick(o, "host", "status", "description", "tls_connect", "tls_accept", "tls_issuer", "tls_subject", "proxy_address")
			dropPSK(c)
			if str(o["status"]) == "6" { // passive: Peregrine connects to its interface
				if i, ok := o["interface"].(map[string]any); ok {
					c["interface"] = pick(i, "useip", "ip", "dns", "port")
				}
			}
			return c
		},
		create: func(src, req obj, r *Report) {
			if usesPSK(src) {
				r.reEnter("proxy %s: PSK (tls_psk_identity, tls_psk); created without encryption by PSK", str(src["host"]))
			}
		},
	}
}

// usesPSK reports whether a host or proxy encrypts with a pre-shared key,
// which 6.0's get never returns.
func usesPSK(o obj) bool {
	return str(o["tls_connect"]) == "2" || (atoi(str(o["tls_accept"]))&2) != 0
}

// dropPSK leaves PSK out of connections to and from the object until an
// operator enters the key: certificate and unencrypted stay as they were.
func dropPSK(req obj) {
	if str(req["tls_connect"]) == "2" {
		req["tls_connect"] = "1"
	}
	if a := atoi(str(req["tls_accept"])); a&2 != 0 {
		a &^= 2
		if a == 0 {
			a = 1
		}
		req["tls_accept"] = itoa(a)
	}
}

func hosts() *kindDef {
	return &kindDef{kind: "host", api: "host", id: "hostid", name: "host",
		get: obj{"selectGroups": []string{"groupid"}, "selectParentTemplates": []string{"templateid"},
			"selectInterfaces": extend, "selectMacros": extend, "selectTags": extend, "selectInventory": extend},
		canon: func(o obj, s *side) obj {
			c := pick(o, "host", "name", "status", "description", "inventory_mode",
				"ipmi_authtype", "ipmi_privilege", "ipmi_username", "ipmi_password",
				"tls_connect", "tls_accept", "tls_issuer", "tls_subject")
			dropPSK(c) // a PSK is a secret: not compared, never overwritten
			c["proxy_hostid"] = s.ref("proxy", o["proxy_hostid"])
			c["groups"] = each(o, "groups", func(g obj) obj { return obj{"groupid": s.ref("host group", g["groupid"])} })
			c["templates"] = each(o, "parentTemplates", func(t obj) obj { return obj{"templateid": s.ref("template", t["templateid"])} })
			c["interfaces"] = each(o, "interfaces", func(i obj) obj {
				x := pick(i, "type", "main", "useip", "ip", "dns", "port")
				if str(i["type"]) == "2" {
					x["details"] = i["details"]
				}
				return x
			})
			c["macros"] = each(o, "macros", macro)
			c["tags"] = each(o, "tags", func(t obj) obj { return pick(t, "tag", "value") })
			if inv, ok := o["inventory"].(map[string]any); ok && str(o["inventory_mode"]) != "-1" {
				x := obj{}
				for k, v := range inv {
					if k != "hostid" && k != "inventory_mode" && str(v) != "" {
						x[k] = v
					}
				}
				c["inventory"] = x
			}
			return c
		},
		create: func(src, req obj, r *Report) {
			name := str(src["host"])
			if usesPSK(src) {
				r.reEnter("host %s: PSK (tls_psk_identity, tls_psk); created without encryption by PSK", name)
			}
			secretMacros(req, nil, func(m string) { r.reEnter("host %s: secret macro %s (created empty)", name, m) })
		},
		update: func(src, tgt, req obj) {
			secretMacros(req, tgt, func(m string) {})
			// host.update changes the inventory fields given and keeps
			// the others: clear those the source does not have.
			if inv, ok := req["inventory"].(map[string]any); ok {
				if cur, ok := tgt["inventory"].(map[string]any); ok {
					for k, v := range cur {
						if _, set := inv[k]; !set && str(v) != "" && k != "hostid" && k != "inventory_mode" {
							inv[k] = ""
						}
					}
				}
				if _, ok := req["inventory_mode"]; !ok {
					req["inventory_mode"] = src["inventory_mode"]
				}
			}
		},
	}
}

// macro is a user macro's canonical form; a secret one (type 1) without
// its value, which no get returns.
func macro(m obj) obj {
	x := pick(m, "macro", "value", "type", "description")
	if str(m["type"]) == "1" {
		delete(x, "value")
	}
	return x
}

// secretMacros completes the secret macros of a request: an existing one
// keeps its value (named by its ID), a new one is made empty and noted.
func secretMacros(req, tgt obj, note func(string)) {
	have := map[string]string{}
	for _, m := range list(tgt, "macros") {
		have[str(m["macro"])] = str(m["hostmacroid"])
	}
	for _, m := range list(req, "macros") {
		if str(m["type"]) != "1" {
			continue
		}
		// The API takes no secret macro without its value, and none
		// returns it: a new one is made empty, to be entered again.
		if id, ok := have[str(m["macro"])]; ok {
			m["hostmacroid"] = id
		}
		m["value"] = ""
		if note != nil {
			note(str(m["macro"]))
		}
	}
}

func valueMaps() *kindDef {
	return &kindDef{kind: "value map", api: "valuemap", id: "valuemapid", name: "name",
		get: obj{"selectMappings": extend},
		canon: func(o obj, s *side) obj {
			c := pick(o, "name")
			c["hostid"] = s.ref("host", o["hostid"])
			c["mappings"] = each(o, "mappings", func(m obj) obj { return pick(m, "type", "value", "newvalue") })
			return c
		},
		key:    func(c obj) string { return str(c["hostid"]) + "/" + str(c["name"]) },
		update: func(_, _, req obj) { delete(req, "hostid") },
	}
}

func globalMacros() *kindDef {
	return &kindDef{kind: "global macro", api: "usermacro", id: "globalmacroid", name: "macro",
		get:   obj{"globalmacro": true},
		canon: func(o obj, _ *side) obj { return macro(o) },
		create: func(src, req obj, r *Report) {
			if str(src["type"]) == "1" {
				req["value"] = ""
				r.reEnter("global macro %s: secret value (created empty)", str(src["macro"]))
			}
		},
	}
}

func regexps() *kindDef {
	return &kindDef{kind: "regular expression", api: "regexp", id: "regexpid", name: "name",
		get: obj{"selectExpressions": extend},
		canon: func(o obj, _ *side) obj {
			c := pick(o, "name", "test_string")
			c["expressions"] = each(o, "expressions", func(e obj) obj {
				x := pick(e, "expression", "expression_type", "case_sensitive")
				if str(e["expression_type"]) == "1" { // "any of": the list's delimiter
					x["exp_delimiter"] = e["exp_delimiter"]
				}
				return x
			})
			return c
		},
	}
}

func mediaTypes() *kindDef {
	return &kindDef{kind: "media type", api: "mediatype", id: "mediatypeid", name: "name",
		get: obj{"selectMessageTemplates": extend},
		canon: func(o obj, _ *side) obj {
			c := pick(o, "name", "type", "smtp_server", "smtp_helo", "smtp_email", "exec_path", "gsm_modem",
				"username", "status", "smtp_port", "smtp_security", "smtp_verify_peer", "smtp_verify_host",
				"smtp_authentication", "maxsessions", "maxattempts", "attempt_interval", "content_type",
				"script", "timeout", "process_tags", "show_event_menu", "event_menu_url", "event_menu_name", "description")
			if str(o["type"]) == "1" {
				c["exec_params"] = o["exec_params"]
			}
			if str(o["type"]) == "4" {
				c["parameters"] = each(o, "parameters", func(p obj) obj { return pick(p, "name", "value") })
			}
			c["message_templates"] = each(o, "message_templates", func(m obj) obj {
				return pick(m, "eventsource", "recovery", "subject", "message")
			})
			return c
		},
		create: func(src, req obj, r *Report) {
			if p := str(src["passwd"]); p != "" {
				req["passwd"] = p
			} else if str(src["smtp_authentication"]) == "1" {
				r.reEnter("media type %s: SMTP password", str(src["name"]))
			}
		},
		update: func(src, _, req obj) {
			if p := str(src["passwd"]); p != "" {
				req["passwd"] = p
			}
		},
	}
}

func roles() *kindDef {
	return &kindDef{kind: "role", api: "role", id: "roleid", name: "name",
		get: obj{"selectRules": extend},
		canon: func(o obj, s *side) obj {
			c := pick(o, "name", "type")
			if rules, ok := o["rules"].(map[string]any); ok {
				rc := obj{}
				for k, v := range rules {
					rc[k] = v
				}
				// services.read.list and services.write.list name services
				// by ID.
				for _, k := range []string{"services.read.list", "services.write.list"} {
					if l, ok := rc[k].([]any); ok {
						out := make([]any, 0, len(l))
						for _, e := range l {
							if m, ok := e.(map[string]any); ok {
								out = append(out, obj{"serviceid": s.ref("service", m["serviceid"])})
							}
						}
						rc[k] = out
					}
				}
				c["rules"] = rc
			}
			return c
		},
		skip: func(o obj) string {
			if str(o["readonly"]) == "1" {
				return "the role is read-only"
			}
			return ""
		},
	}
}

func userGroups() *kindDef {
	return &kindDef{kind: "user group", api: "usergroup", id: "usrgrpid", name: "name",
		get: obj{"selectRights": extend, "selectTagFilters": extend},
		canon: func(o obj, s *side) obj {
			c := pick(o, "name", "gui_access", "users_status", "debug_mode")
			c["rights"] = each(o, "rights", func(r obj) obj {
				return obj{"id": s.ref("host group", r["id"]), "permission": r["permission"]}
			})
			c["tag_filters"] = each(o, "tag_filters", func(t obj) obj {
				return obj{"groupid": s.ref("host group", t["groupid"]), "tag": t["tag"], "value": t["value"]}
			})
			return c
		},
	}
}

func users() *kindDef {
	return &kindDef{kind: "user", api: "user", id: "userid", name: "username",
		get: obj{"selectUsrgrps": []string{"usrgrpid"}, "selectMedias": extend},
		canon: func(o obj, s *side) obj {
			c := pick(o, "username", "name", "surname", "url", "autologin", "autologout", "lang",
				"refresh", "theme", "rows_per_page", "timezone")
			c["roleid"] = s.ref("role", o["roleid"])
			c["usrgrps"] = each(o, "usrgrps", func(g obj) obj { return obj{"usrgrpid": s.ref("user group", g["usrgrpid"])} })
			c["medias"] = each(o, "medias", func(m obj) obj {
				x := pick(m, "sendto", "active", "severity", "period")
				x["mediatypeid"] = s.ref("media type", m["mediatypeid"])
				return x
			})
			return c
		},
		create: func(src, req obj, r *Report) {
			// A password nobody knows: the account exists, with its
			// groups and media, and logs in once an operator sets one.
			var b [18]byte
			_, _ = rand.Read(b[:])
			req["passwd"] = "Mg1!" + hex.EncodeToString(b[:])
			r.reEnter("user %s: password (set to a random one nobody knows)", str(src["username"]))
		},
	}
}

// scriptFields are the members of a script of each type (6.0: 0
// script, 1 IPMI, 2 SSH, 3 Telnet, 5 webhook, 6 URL) besides the common
// ones; the others are refused by the API when given.
var scriptFields = map[string][]string{
	"0": {"command", "execute_on"},
	"1": {"command"},
	"2": {"command", "authtype", "username", "port", "publickey", "privatekey"},
	"3": {"command", "username", "port"},
	"5": {"command", "timeout"},
	"6": {"url", "new_window"},
}

func scripts() *kindDef {
	return &kindDef{kind: "script", api: "script", id: "scriptid", name: "name",
		canon: func(o obj, s *side) obj {
			c := pick(o, append([]string{"name", "type", "scope", "description"}, scriptFields[str(o["type"])]...)...)
			c["groupid"] = s.ref("host group", o["groupid"])
			if str(o["scope"]) != "1" { // manual host or event actions
				for k, v := range pick(o, "menu_path", "host_access", "confirmation") {
					c[k] = v
				}
				c["usrgrpid"] = s.ref("user group", o["usrgrpid"])
			}
			if str(o["type"]) == "5" {
				c["parameters"] = each(o, "parameters", func(p obj) obj { return pick(p, "name", "value") })
			}
			return c
		},
		create: func(src, req obj, r *Report) {
			if p := str(src["password"]); p != "" {
				req["password"] = p
			}
		},
	}
}

func maintenances() *kindDef {
	return &kindDef{kind: "maintenance", api: "maintenance", id: "maintenanceid", name: "name",
		get: obj{"selectGroups": []string{"groupid"}, "selectHosts": []string{"hostid"},
			"selectTimeperiods": extend, "selectTags": extend},
		canon: func(o obj, s *side) obj {
			c := pick(o, "name", "maintenance_type", "description", "active_since", "active_till", "tags_evaltype")
			var g, h []any
			for _, x := range list(o, "groups") {
				g = append(g, s.ref("host group", x["groupid"]))
			}
			for _, x := range list(o, "hosts") {
				h = append(h, s.ref("host", x["hostid"]))
			}
			c["groupids"], c["hostids"] = orEmpty(g), orEmpty(h)
			c["timeperiods"] = each(o, "timeperiods", func(t obj) obj {
				x := pick(t, "timeperiod_type", "period")
				switch str(t["timeperiod_type"]) {
				case "0":
					x["start_date"] = t["start_date"]
				case "2":
					x["every"], x["start_time"] = t["every"], t["start_time"]
				case "3":
					x["every"], x["dayofweek"], x["start_time"] = t["every"], t["dayofweek"], t["start_time"]
				case "4":
					x["every"], x["month"], x["dayofweek"], x["day"], x["start_time"] = t["every"], t["month"], t["dayofweek"], t["day"], t["start_time"]
				}
				return x
			})
			c["tags"] = each(o, "tags", func(t obj) obj { return pick(t, "tag", "operator", "value") })
			return c
		},
	}
}

func orEmpty(xs []any) []any {
	if xs == nil {
		return []any{}
	}
	return xs
}

func services() *kindDef {
	return &kindDef{kind: "service", api: "service", id: "serviceid", name: "name",
		get: obj{"selectParents": []string{"serviceid"}, "selectTags": extend, "selectProblemTags": extend, "selectStatusRules": extend},
		canon: func(o obj, s *side) obj {
			c := pick(o, "name", "algorithm", "sortorder", "weight", "propagation_rule", "propagation_value", "description")
			c["parents"] = each(o, "parents", func(p obj) obj { return obj{"serviceid": s.ref("service", p["serviceid"])} })
			c["tags"] = each(o, "tags", func(t obj) obj { return pick(t, "tag", "value") })
			c["problem_tags"] = each(o, "problem_tags", func(t obj) obj { return pick(t, "tag", "operator", "value") })
			c["status_rules"] = each(o, "status_rules", func(t obj) obj { return pick(t, "type", "limit_value", "limit_status", "new_status") })
			return c
		},
	}
}

func slas() *kindDef {
	return &kindDef{kind: "SLA", api: "sla", id: "slaid", name: "name",
		get: obj{"selectServiceTags": extend, "selectSchedule": extend, "selectExcludedDowntimes": extend},
		canon: func(o obj, _ *side) obj {
			c := pick(o, "name", "period", "slo", "effective_date", "timezone", "status", "description")
			c["service_tags"] = each(o, "service_tags", func(t obj) obj { return pick(t, "tag", "operator", "value") })
			c["schedule"] = each(o, "schedule", func(t obj) obj { return pick(t, "period_from", "period_to") })
			c["excluded_downtimes"] = each(o, "excluded_downtimes", func(t obj) obj { return pick(t, "name", "period_from", "period_to") })
			return c
		},
	}
}

// serviceOrder puts parents before children, so that a create never
// names a parent not yet made (a cycle, which 6.0 refuses, keeps its
// order).
func serviceOrder(objs []obj, canon []obj) []int {
	byName := map[string]int{}
	for i, o := range objs {
		byName[str(o["name"])] = i
	}
	depth := make([]int, len(objs))
	// depth of i = 1 + depth of its deepest parent.
	var dep func(i int, seen map[int]bool) int
	dep = func(i int, seen map[int]bool) int {
		if seen[i] {
			return 0
		}
		seen[i] = true
		d := 0
		for _, p := range list(canon[i], "parents") {
			if _, n, ok := parseMark(str(p["serviceid"]), refMark); ok {
				if j, ok := byName[n]; ok {
					d = max(d, 1+dep(j, seen))
				}
			}
		}
		delete(seen, i)
		return d
	}
	idx := make([]int, len(objs))
	for i := range objs {
		idx[i] = i
		depth[i] = dep(i, map[int]bool{})
	}
	sort.SliceStable(idx, func(a, b int) bool { return depth[idx[a]] < depth[idx[b]] })
	return idx
}
