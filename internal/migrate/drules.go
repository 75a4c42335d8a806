package migrate

// drules are network discovery rules with their checks, joined by name;
// the proxy that runs a rule is named like every proxy reference. A
// check has no name of its own, so a rule's checks are compared and
// written whole, in the order the source lists them.
func drules() *kindDef {
	return &kindDef{kind: "discovery rule", api: "drule", id: "druleid", name: "name",
		get: obj{"selectDChecks": extend},
		canon: func(o obj, s *side) obj {
			c := pick(o, "name", "iprange", "delay", "status")
			c["proxy_hostid"] = s.ref("proxy", o["proxy_hostid"])
			c["dchecks"] = each(o, "dchecks", func(d obj) obj {
				x := pick(d, "type", "key_", "ports", "uniq", "host_source", "name_source")
				switch str(d["type"]) {
				case "10", "11": // SNMPv1, SNMPv2c
					x["snmp_community"] = d["snmp_community"]
				case "13": // SNMPv3
					for _, k := range []string{"snmpv3_securityname", "snmpv3_securitylevel", "snmpv3_authprotocol",
						"snmpv3_privprotocol", "snmpv3_contextname", "snmpv3_authpassphrase", "snmpv3_privpassphrase"} {
						x[k] = d[k]
					}
				}
				return x
			})
			return c
		},
	}
}
