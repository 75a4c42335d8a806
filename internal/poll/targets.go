package poll

import (
	"fmt"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/usermacro"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// target is what the scheduler needs of one polled item, taken from a
// catalog snapshot (so that the loop never holds a snapshot's items).
type target struct {
	id, hostID, ifaceID uint64
	// seed places the item on its interval's grid and within its second:
	// the item's id, except for SNMP items with a plain OID and JMX
	// items, which take their interface's id, as Zabbix seeds them, so
	// that a device's items of one interval fall due together and go out
	// in one GET, a JVM's in one Java gateway request.
	seed      uint64
	typ       catalog.ItemType
	key, addr string
	delay     string // as configured: a change reschedules
	timeout   time.Duration
	// retry is the retry interval in seconds (Item.RetryDelay), 0 for
	// none: the interval while a trigger of the item is soft.
	retry int64
	// bad is why the item cannot be scheduled ("" if it can): an
	// unparsable delay or timeout, or no interface to poll.
	bad string
}

// ExpandKey resolves the user macros in an item key's parameters with
// the host's scope, quoting a parameter whose value needs it (a comma,
// a bracket), as Zabbix substitutes them. A key that does not parse is
// returned as it is.
func ExpandKey(key string, sc *usermacro.Scope) string {
	if !strings.Contains(key, "{$") {
		return key
	}
	k, err := itemkey.Parse(key)
	if err != nil {
		return key
	}
	k.MapValues(sc.Expand)
	return k.String()
}

// interfaceType is the interface type items of an item type are polled
// through.
func interfaceType(t catalog.ItemType) catalog.InterfaceType {
	switch t {
	case catalog.SNMPAgent:
		return catalog.InterfaceSNMP
	case catalog.JMX:
		return catalog.InterfaceJMX
	}
	return catalog.InterfaceAgent
}

// targetsOf lists the items of snap the scheduler polls: enabled items
// of a type in types on monitored hosts not behind a proxy (the proxy
// polls those, and sends their values). Items of a type in noIface
// need no interface.
func targetsOf(snap *catalog.Snapshot, types, noIface map[catalog.ItemType]bool, defTimeout time.Duration) []target {
	var out []target
	for _, h := range snap.Hosts() {
		if !h.Enabled || h.ProxyID != 0 {
			continue
		}
		for _, it := range h.Items() {
			if !it.Enabled || !types[it.Type] {
				continue
			}
			if it.Type == catalog.WebItem && !strings.HasPrefix(it.Key, "web.test.fail[") {
				continue // a web scenario runs once, for its web.test.fail item
			}
			out = append(out, targetOf(snap, h, it, noIface[it.Type], defTimeout))
		}
	}
	return out
}

func targetOf(snap *catalog.Snapshot, h *catalog.Host, it *catalog.Item, noIface bool, defTimeout time.Duration) target {
	t := target{id: it.ID, seed: it.ID, hostID: h.ID, typ: it.Type, key: it.Key, delay: it.Delay, timeout: defTimeout}
	// User macros of the host (its templates, global) in the key's
	// parameters, the interval and the timeout, as Zabbix resolves them
	// there. The expanded interval is what is compared at the next
	// snapshot, so a macro's change reschedules the item.
	if strings.Contains(it.Key, "{$") || strings.Contains(it.Delay, "{$") || strings.Contains(it.Ext().Timeout, "{$") || strings.Contains(it.Ext().RetryDelay, "{$") {
		sc := snap.UserMacros(h.ID)
		t.key, t.delay = ExpandKey(it.Key, sc), sc.Expand(it.Delay)
		timeout := sc.Expand(it.Ext().Timeout)
		if strings.Contains(timeout, "{$") {
			t.bad = fmt.Sprintf("timeout %q uses a user macro that is not defined on host %q, its templates or globally", it.Ext().Timeout, h.Host)
			return t
		}
		it2 := *it
		x := it2.MutExt()
		x.Timeout, x.RetryDelay = timeout, sc.Expand(it.Ext().RetryDelay)
		it = &it2
	}
	if it.Ext().RetryDelay != "" {
		secs, err := delay.Seconds(it.Ext().RetryDelay)
		if err != nil || secs < 1 || secs > 86400 {
			t.bad = fmt.Sprintf("invalid retry interval %q: use 1s..1d", it.Ext().RetryDelay)
			return t
		}
		t.retry = secs
	}
	if it.Ext().Timeout != "" {
		// Before the interface: an HTTP agent item has none, and its
		// timeout counts all the same.
		secs, err := delay.Seconds(it.Ext().Timeout)
		if err != nil || secs < 1 || secs > 600 {
			t.bad = fmt.Sprintf("invalid timeout %q: use 1s..10m", it.Ext().Timeout)
			return t
		}
		t.timeout = time.Duration(secs) * time.Second
	}
	if noIface {
		return t
	}
	var iface *catalog.Interface
	if it.InterfaceID != 0 {
		iface = snap.Interface(it.InterfaceID)
	}
	if iface == nil {
		// Items created before interfaces existed have none: the host's
		// main interface of the right type, as Zabbix assigns at create.
		iface = h.MainInterface(interfaceType(it.Type))
	}
	if iface == nil {
		t.bad = fmt.Sprintf("host %q has no %s interface to poll item %q through: add one (host.update interfaces)", h.Host, interfaceType(it.Type), it.Key)
		return t
	}
	t.ifaceID, t.addr = iface.ID, iface.Addr()
	if it.Type == catalog.SNMPAgent && !strings.ContainsRune(it.Ext().SNMPOID, '[') || it.Type == catalog.JMX {
		t.seed = iface.ID // SNMP: plain OIDs only, walks are not batched
	}
	return t
}
