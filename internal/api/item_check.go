package api

import (
	"errors"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/usermacro"
	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// The checks item.create and item.update make before the catalog's, as
// Zabbix 6.0 makes them with its own code, in its order and words
// (recorded from 6.0.14): the type; the members an item cannot be
// without (`Incorrect arguments passed to function.`); the host, found
// and writable (a -32602 refusal); the update interval, the interface
// and the key. The catalog checks them all again in the edit; these
// only give 6.0's answer where it refuses the same thing.

// itemTypes60 are the item types Zabbix 6.0 takes, as its refusal lists
// them.
const itemTypes60 = "0, 2, 3, 5, 7, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21"

// checkType checks a given "type": one of 6.0's (Peregrine collects
// every one of them).
func (p *itemParams) checkType(i int) error {
	t := p.Type.Value
	if t < 0 || t > 255 || !catalog.ItemType(t).Valid() {
		return oneOf(i, "type", itemTypes60)
	}
	return nil
}

// needsDelay reports whether 6.0 requires an item of type t to have a
// "delay" (every type but trapper and dependent items; recorded from
// 6.0.14) and checks the one it has.
func needsDelay(t catalog.ItemType) bool { return t != catalog.Trapper && t != catalog.Dependent }

// needsInterface reports whether 6.0 refuses an item of type t without
// an interface of its host (recorded from 6.0.14: agent, simple check,
// external check, IPMI, SSH, Telnet and SNMP agent items; not HTTP agent
// items).
func needsInterface(t catalog.ItemType) bool {
	switch t {
	case catalog.ZabbixAgent, catalog.SimpleCheck, catalog.External, catalog.IPMI, catalog.SNMPAgent, catalog.SSHAgent, catalog.TelnetAgent, catalog.JMX:
		return true
	}
	return false
}

// jmxChecks checks jmx_endpoint, and the lengths of username and
// password for JMX items, as 6.0 does (recorded from 6.0.14): a JMX
// item's endpoint cannot be empty (absent on create, Zabbix's default
// applies; a type change to JMX needs one), other types' must be; the
// lengths are the database's, refused with its Application error.
// wasJMX: the item is a JMX item already (update).
func (p *itemParams) jmxChecks(typ catalog.ItemType, create, wasJMX bool) error {
	e := p.JMXEndpoint
	switch {
	case typ == catalog.JMX && (e.Set && e.Value == "" || !create && !wasJMX && !e.Set):
		return errParams(`Incorrect value for field "jmx_endpoint": cannot be empty.`)
	case typ != catalog.JMX && e.Set && e.Value != "":
		return errParams(`Incorrect value for field "jmx_endpoint": should be empty.`)
	case typ != catalog.JMX:
		return nil
	}
	for _, f := range []struct {
		name string
		v    opt[string]
		max  int
	}{{"jmx_endpoint", e, 255}, {"username", p.Username, 64}, {"password", p.Password, 64}} {
		if n := utf8.RuneCountInString(f.v.Value); f.v.Set && n > f.max {
			return errApp(`Value "%s" is too long for field "%s" - %d characters. Allowed length is %d characters.`, f.v.Value, f.name, n, f.max)
		}
	}
	return nil
}

// createChecks checks item.create's object i in 6.0's order, up to and
// including its update interval, interface and key.
func (p *itemParams) createChecks(i int, snap *catalog.Snapshot, a access) error {
	// An itemid is ignored, as 6.0 ignores it (recorded from 6.0.14).
	if !p.Type.Given() {
		return missing(i, "type")
	}
	if err := p.checkType(i); err != nil {
		return err
	}
	typ := catalog.ItemType(p.Type.Value)
	if !p.HostID.Set || !p.Name.Set || !p.Key.Set || !p.ValueType.Given() || needsDelay(typ) && !p.Delay.Set {
		return errIncorrectArguments
	}
	h := snap.HostOrTemplate(p.HostID.Value)
	if typ == catalog.Script {
		// 6.0 checks the host, then a script item's members, before the
		// members every item has (recorded from 6.0.14).
		if h == nil || !a.all() && !a.canWrite(h) {
			return errNoPermissionsParams
		}
		ps, err := p.scriptChecks(i, nil)
		if err != nil {
			return err
		}
		p.parameters = ps
	}
	if err := p.common(i); err != nil {
		return err
	}

	if h == nil || !a.all() && !a.canWrite(h) {
		return errNoPermissionsParams
	}
	if err := p.zabbixChecks(h, p.Name.Value, typ, true); err != nil {
		return err
	}
	if err := p.ipmiSensorCheck(typ, p.Key.Value, p.IPMISensor.Value); err != nil {
		return err
	}
	if err := trapsCheck(typ, p.TrapperHosts.Value, p.AllowTraps.Value); err != nil {
		return err
	}
	return p.jmxChecks(typ, true, false)
}

// scriptUpdate checks item.update's object i as a script item's when it
// is one or becomes one (cur: the item as it is, nil if there is none),
// before the members every item has, as 6.0 does; other items' are
// dropped, and a type change away from script drops them (the catalog).
func (p *itemParams) scriptUpdate(i int, cur *catalog.Item) error {
	if cur == nil {
		return nil
	}
	typ := cur.Type
	if p.Type.Given() {
		typ = catalog.ItemType(p.Type.Value)
	}
	if typ != catalog.Script {
		return nil
	}
	ps, err := p.scriptChecks(i, cur)
	p.parameters = ps
	return err
}

// updateChecks checks item.update's object i against cur, the item as
// it is, for what 6.0 checks with its own code.
func (p *itemParams) updateChecks(cur *catalog.Item) error {
	typ, name := cur.Type, cur.Name
	if p.Type.Given() {
		typ = catalog.ItemType(p.Type.Value)
	}
	if p.Name.Set {
		name = p.Name.Value
	}
	if err := p.zabbixChecks(cur.Host, name, typ, false); err != nil {
		return err
	}
	if err := p.ipmiSensorCheck(typ, cmpOr(p.Key, cur.Key), cmpOr(p.IPMISensor, cur.Ext().IPMISensor)); err != nil {
		return err
	}
	allow := int64(0)
	if t := cur.Ext().Traps; t != nil && t.Allow {
		allow = 1
	}
	if p.AllowTraps.Set {
		allow = p.AllowTraps.Value
	}
	hosts := ""
	if t := cur.Ext().Traps; t != nil {
		hosts = t.Hosts
	}
	if err := trapsCheck(typ, cmpOr(p.TrapperHosts, hosts), allow); err != nil {
		return err
	}
	return p.jmxChecks(typ, false, cur.Type == catalog.JMX)
}

// cmpOr is o's value if it is given, else cur.
func cmpOr(o opt[string], cur string) string {
	if o.Set {
		return o.Value
	}
	return cur
}

// ipmiSensorCheck checks an item's ipmi_sensor as 6.0 does (recorded
// from 6.0.14), after its interface and key: at most 128 characters on
// any item ("Application error."), and not empty on an IPMI item whose
// key is not exactly ipmi.get ("ipmi.get[x]" needs one too).
func (p *itemParams) ipmiSensorCheck(typ catalog.ItemType, key, sensor string) error {
	if p.IPMISensor.Set {
		if n := utf8.RuneCountInString(sensor); n > catalog.MaxIPMISensorLen {
			return errApp(`Value "%s" is too long for field "ipmi_sensor" - %d characters. Allowed length is %d characters.`, sensor, n, catalog.MaxIPMISensorLen)
		}
	}
	// logtimefmt likewise, 64 characters (recorded from 6.0.14).
	if n := utf8.RuneCountInString(p.LogTimeFmt.Value); p.LogTimeFmt.Set && n > catalog.MaxLogTimeFmtLen {
		return errApp(`Value "%s" is too long for field "logtimefmt" - %d characters. Allowed length is %d characters.`, p.LogTimeFmt.Value, n, catalog.MaxLogTimeFmtLen)
	}
	if typ == catalog.IPMI && sensor == "" && key != catalog.IPMIGetKey {
		return errParams(`Incorrect value for field "ipmi_sensor": cannot be empty.`)
	}
	return nil
}

// zabbixChecks checks the update interval, the interface (on create)
// and the key of an item named name on host h, of type typ.
func (p *itemParams) zabbixChecks(h *catalog.Host, name string, typ catalog.ItemType, create bool) error {
	if p.Delay.Set && needsDelay(typ) {
		var de *catalog.DelayError
		if err := catalog.CheckDelay(p.Delay.Value, typ); errors.As(err, &de) {
			switch de.Problem {
			case catalog.DelayTooLong:
				return errParams("Item will not be refreshed. Update interval should be between 1s and 1d. Also Scheduled/Flexible intervals can be used.")
			case catalog.DelayNever:
				return errParams("Item will not be refreshed. Specified update interval requires having at least one either flexible or scheduling interval.")
			}
			return errParams(`Incorrect value for field "delay": invalid delay.`)
		}
	}
	if create && needsInterface(typ) && !h.IsTemplate { // a template has no interfaces
		want, _, _ := catalog.ItemInterfaceType(typ)
		var f *catalog.Interface
		for j := range h.Interfaces {
			if h.Interfaces[j].ID == p.InterfaceID.Value {
				f = &h.Interfaces[j]
			}
		}
		switch {
		case p.InterfaceID.Value == 0:
			return errParams("No interface found.")
		case f == nil:
			return errParams("Item uses host interface from non-parent host.")
		case want != 0 && f.Type != want:
			return errParams("Item uses incorrect interface type.")
		}
	}
	if p.Key.Set {
		var se *itemkey.SyntaxError
		if _, err := itemkey.Parse(p.Key.Value); errors.As(err, &se) {
			return errParams(`Invalid key "%s" for item "%s" on "%s": %s.`, p.Key.Value, name, h.Host, se.Zabbix())
		}
		if typ == catalog.ODBC && p.Key.Value == defaultODBCKey {
			return errParams("Check the key, please. Default example was passed.")
		}
	}
	if typ == catalog.ODBC {
		return p.odbcLogin()
	}
	return nil
}

// odbcLogin checks the lengths of a database monitor item's username and
// password, refused by 6.0's database with its Application error
// (recorded from 6.0.14: 64 characters are taken). 6.0 quotes the value
// refused; a password is shown masked, as a secret macro is.
func (p *itemParams) odbcLogin() error {
	for _, f := range []struct {
		name string
		v    opt[string]
	}{{"username", p.Username}, {"password", p.Password}} {
		if n := utf8.RuneCountInString(f.v.Value); f.v.Set && n > 64 {
			shown := f.v.Value
			if f.name == "password" {
				shown = usermacro.Mask
			}
			return errApp(`Value "%s" is too long for field "%s" - %d characters. Allowed length is %d characters.`, shown, f.name, n, 64)
		}
	}
	return nil
}

// defaultODBCKey is the key 6.0's form suggests for a database monitor
// item, which its API refuses as it is (recorded from 6.0.14, on create
// and update; a shorter form such as db.odbc.select[<unique short
// description>,<dsn>] is taken).
const defaultODBCKey = "db.odbc.select[<unique short description>,<dsn>,<connection string>]"

// trapsCheck checks an item's trapper_hosts and allow_traps as 6.0.14
// answers (recorded): allow_traps 0 or 1 (6.0.14 checks it on HTTP agent
// items only and stores any number on the others; Peregrine refuses
// every other value), each entry of trapper_hosts an address, a CIDR
// range, a DNS name or a macro, and no trapper_hosts on an HTTP agent
// item that does not allow traps.
func trapsCheck(typ catalog.ItemType, hosts string, allow int64) error {
	if allow != 0 && allow != 1 {
		return errParams(`Invalid parameter "/allow_traps": value must be one of 0, 1.`)
	}
	if _, err := catalog.ParseTrapPeers(hosts, true); err != nil || utf8.RuneCountInString(hosts) > catalog.MaxTrapperHostsLen {
		if err == nil {
			return errApp(`Value "%s" is too long for field "trapper_hosts" - %d characters. Allowed length is %d characters.`, hosts, utf8.RuneCountInString(hosts), catalog.MaxTrapperHostsLen)
		}
		return errParams("%s", err.Error())
	}
	if typ == catalog.HTTPAgent && allow == 0 && hosts != "" {
		return errParams(`Incorrect value for field "trapper_hosts": should be empty.`)
	}
	return nil
}
