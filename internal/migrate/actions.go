package migrate

import (
	"fmt"
	"strings"
)

// conditionRefs are the action condition types whose value is an ID, and
// the kind it names; conditionsUnsupported those whose objects this tool
// does not copy (triggers, discovery rules and checks are made by
// templates or by hand and have no unique name).
var (
	conditionRefs         = map[string]string{"0": "host group", "1": "host", "2": triggerKind, "13": "template", "18": "discovery rule", "19": dcheckKind, "20": "proxy"}
	conditionsUnsupported = map[string]string{}
)

func actions() *kindDef {
	return &kindDef{kind: "action", api: "action", id: "actionid", name: "name",
		get: obj{"selectFilter": extend, "selectOperations": extend, "selectRecoveryOperations": extend, "selectUpdateOperations": extend},
		canon: func(o obj, s *side) obj {
			es := str(o["eventsource"])
			c := pick(o, append([]string{"name", "eventsource", "status"}, actionMembers[es]...)...)
			if f, ok := o["filter"].(map[string]any); ok {
				fc := pick(f, "evaltype")
				if str(f["evaltype"]) == "3" {
					fc["formula"] = f["formula"]
				}
				fc["conditions"] = each(f, "conditions", func(x obj) obj {
					y := pick(x, "conditiontype", "operator", "value", "value2")
					if str(f["evaltype"]) == "3" {
						y["formulaid"] = x["formulaid"]
					}
					if k, ok := conditionRefs[str(x["conditiontype"])]; ok {
						y["value"] = s.ref(k, x["value"])
					}
					return y
				})
				c["filter"] = fc
			}
			ops := func(key string) []any {
				return each(o, key, func(op obj) obj {
					x := operation(op, s)
					for _, m := range opUnexpected(str(o["eventsource"]), key) {
						delete(x, m)
					}
					return x
				})
			}
			c["operations"] = ops("operations")
			for _, k := range actionMembers[es] {
				if strings.HasSuffix(k, "_operations") {
					c[k] = ops(k)
				}
			}
			return c
		},
		skip: func(o obj) string {
			if f, ok := o["filter"].(map[string]any); ok {
				for _, x := range list(f, "conditions") {
					if k, ok := conditionsUnsupported[str(x["conditiontype"])]; ok {
						return fmt.Sprintf("a condition names a %s by ID (%s), which has no name to join on", k, str(x["value"]))
					}
				}
			}
			return ""
		},
	}
}

// actionMembers are the members an action of each eventsource takes
// besides name, eventsource, status, filter and operations; 6.0's get
// returns them all, its create refuses the others (recorded from 6.0.14:
// `Invalid parameter "/1": unexpected parameter "esc_period".` for a
// discovery action).
var actionMembers = map[string][]string{
	"0": {"esc_period", "pause_suppressed", "notify_if_canceled", "recovery_operations", "update_operations"},
	"1": nil,
	"2": nil,
	"3": {"esc_period", "recovery_operations"},
	"4": {"esc_period", "recovery_operations", "update_operations"},
}

// opUnexpected are the members of an operation of list key (operations,
// recovery_operations, update_operations) of an action of eventsource
// that 6.0's get returns and its create refuses (recorded from 6.0.14:
// `Invalid parameter "/1/recovery_operations/1": unexpected parameter
// "esc_period".`): escalation steps outside the operations of trigger
// (0), internal (3) and service (4) actions, and operation conditions
// outside the operations of trigger actions.
func opUnexpected(eventsource, key string) []string {
	esc := []string{"esc_period", "esc_step_from", "esc_step_to"}
	cond := []string{"evaltype", "opconditions"}
	switch {
	case key != "operations" || eventsource == "1" || eventsource == "2":
		return append(esc, cond...)
	case eventsource == "0":
		return nil
	}
	return cond
}

// operation is an action operation's canonical form.
func operation(op obj, s *side) obj {
	x := pick(op, "operationtype", "esc_period", "esc_step_from", "esc_step_to", "evaltype")
	if m, ok := op["opmessage"].(map[string]any); ok && len(m) > 0 {
		y := pick(m, "default_msg")
		if str(m["default_msg"]) == "0" { // its own texts, not the media type's
			y["subject"], y["message"] = m["subject"], m["message"]
		}
		y["mediatypeid"] = s.ref("media type", m["mediatypeid"])
		x["opmessage"] = y
	}
	add := func(key, idKey, kind string) {
		if l := list(op, key); len(l) > 0 {
			x[key] = each(op, key, func(e obj) obj { return obj{idKey: s.ref(kind, e[idKey])} })
		}
	}
	add("opmessage_grp", "usrgrpid", "user group")
	add("opmessage_usr", "userid", "user")
	add("opcommand_grp", "groupid", "host group")
	add("opgroup", "groupid", "host group")
	add("optemplate", "templateid", "template")
	if l := list(op, "opcommand_hst"); len(l) > 0 {
		x["opcommand_hst"] = each(op, "opcommand_hst", func(e obj) obj {
			return obj{"hostid": s.ref("host", e["hostid"])} // "0": the event's own host
		})
	}
	if m, ok := op["opcommand"].(map[string]any); ok && len(m) > 0 {
		x["opcommand"] = obj{"scriptid": s.ref("script", m["scriptid"])}
	}
	if m, ok := op["opinventory"].(map[string]any); ok && len(m) > 0 {
		x["opinventory"] = pick(m, "inventory_mode")
	}
	if l := list(op, "opconditions"); len(l) > 0 {
		x["opconditions"] = each(op, "opconditions", func(e obj) obj { return pick(e, "conditiontype", "operator", "value") })
	}
	return x
}
