package ingest

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/usermacro"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// activeForm is the shape of the item list an agent gets, chosen by the
// "version" it sends, as the Zabbix 6.0 server chooses it (recorded:
// testdata/active_checks_zabbix60.json).
type activeForm struct {
	// legacy is the form of agents older than 4.4, and of agents that
	// send no version (6.0 zabbix_agentd): no itemid, the interval in
	// integer seconds (0 for an interval with flexible or scheduling
	// parts), "key_orig" beside a key whose macros were expanded.
	// Otherwise the interval is the configured text, macros expanded.
	legacy bool
	// refreshUnsupported: "refresh_unsupported":600 (4.4 and 5.0).
	refreshUnsupported bool
	// timeout: the item's timeout (7.0 and later; a Peregrine extension,
	// 6.0 sends none).
	timeout bool
}

// activeFormOf reads an agent's "version" as the 6.0 server does: the
// numbers before and after the first '.', each read like C's atoi
// (leading white space and a sign allowed, whatever follows the digits
// ignored). No '.', a negative number or a major version of 32768 or
// more (recorded; Zabbix packs the version into an int) is an old agent.
func activeFormOf(v []byte) activeForm {
	dot := bytes.IndexByte(v, '.')
	if dot < 0 {
		return activeForm{legacy: true}
	}
	major, minor := atoi(v[:dot]), atoi(v[dot+1:])
	if major < 4 || major >= 32768 || minor < 0 || major == 4 && minor < 4 {
		return activeForm{legacy: true}
	}
	return activeForm{
		refreshUnsupported: major == 4 && minor == 4 || major == 5 && minor == 0,
		timeout:            major >= 7,
	}
}

// versionAtLeast44 reports whether an agent's "version" ("6.0", "7.0.22")
// is 4.4 or later: such agents address "agent data" rows by itemid when
// the request names its host.
func versionAtLeast44(v []byte) bool { return !activeFormOf(v).legacy }

// atoi reads a decimal integer as C's atoi does; it saturates instead of
// overflowing.
func atoi(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] >= '\t' && b[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	n := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if n < 1<<30 {
			n = n*10 + int(b[i]-'0')
		}
	}
	if neg {
		return -n
	}
	return n
}

// activeHost expands the macros of one host's active items, as the
// Zabbix server does in "active checks": user macros in the key's
// parameters and in the interval, and {HOST.HOST}, {HOST.NAME},
// {HOST.IP}, {HOST.DNS} and {HOST.CONN} in the key's parameters. What
// it needs is made on first use: most items have no macros.
type activeHost struct {
	snap  *catalog.Snapshot
	host  *catalog.Host
	scope *usermacro.Scope
	hostM *strings.Replacer
}

func (a *activeHost) userMacros() *usermacro.Scope {
	if a.scope == nil {
		a.scope = a.snap.UserMacros(a.host.ID)
	}
	return a.scope
}

// hostMacros replaces the host's built-in macros. The address ones come
// from the host's main interface, an agent one first, else SNMP, IPMI,
// JMX (recorded: agent before SNMP), and are *UNKNOWN* without one, as
// Zabbix writes them.
func (a *activeHost) hostMacros() *strings.Replacer {
	if a.hostM == nil {
		ip, dns, conn := "*UNKNOWN*", "*UNKNOWN*", "*UNKNOWN*"
		for _, t := range []catalog.InterfaceType{catalog.InterfaceAgent, catalog.InterfaceSNMP, catalog.InterfaceIPMI, catalog.InterfaceJMX} {
			if f := a.host.MainInterface(t); f != nil {
				ip, dns, conn = f.IP, f.DNS, f.DNS
				if f.UseIP {
					conn = f.IP
				}
				break
			}
		}
		a.hostM = strings.NewReplacer("{HOST.HOST}", a.host.Host, "{HOST.NAME}", a.host.Name,
			"{HOST.IP}", ip, "{HOST.DNS}", dns, "{HOST.CONN}", conn)
	}
	return a.hostM
}

// key returns an item's key with its macros expanded; a key that does
// not parse is returned as it is.
func (a *activeHost) key(key string) string {
	if !strings.Contains(key, "{") {
		return key
	}
	k, err := itemkey.Parse(key)
	if err != nil {
		return key
	}
	k.MapValues(func(v string) string {
		if strings.Contains(v, "{HOST.") {
			v = a.hostMacros().Replace(v)
		}
		if strings.Contains(v, "{$") {
			v = a.userMacros().Expand(v)
		}
		return v
	})
	return k.String()
}

// appendActiveItem appends one item of an "active checks" reply in form
// f, or reports false (and appends nothing) when the item is left out:
// its interval, macros expanded, does not start with a time value
// (an undefined macro, "abc"). Zabbix then leaves the item out and makes
// it not supported with `Invalid update interval "..."` (recorded); any
// interval that starts with one is sent, even one the server would not
// schedule itself ("0", "2d", "1h;garbage"): the agent judges it.
func (s *Server) appendActiveItem(out []byte, a *activeHost, it *catalog.Item, f activeForm, recv time.Time) ([]byte, bool) {
	ival := it.Delay
	if strings.Contains(ival, "{$") {
		ival = a.userMacros().Expand(ival)
	}
	main, _, flexible := strings.Cut(ival, ";")
	secs, err := delay.ParseSeconds(main)
	if err != nil {
		if s.opts.ItemStates != nil {
			s.opts.ItemStates.SetItemState(it.ID, itemstate.Item{NotSupported: true, Error: `Invalid update interval "` + main + `".`, Clock: recv.Unix()})
		}
		return out, false
	}
	var lp LogPos
	if s.opts.LogPositions != nil {
		lp, _ = s.opts.LogPositions.Get(it.ID)
	}
	key := a.key(it.Key)
	out = append(out, `{"key":`...)
	out = appendJSONString(out, key)
	if f.legacy {
		if key != it.Key {
			// The agent sends values back under key_orig.
			out = append(out, `,"key_orig":`...)
			out = appendJSONString(out, it.Key)
		}
		if flexible {
			secs = 0
		}
		out = append(out, `,"delay":`...)
		out = strconv.AppendInt(out, secs, 10)
	} else {
		out = append(out, `,"itemid":`...)
		out = strconv.AppendUint(out, it.ID, 10)
		out = append(out, `,"delay":`...)
		out = appendJSONString(out, ival)
	}
	out = append(out, `,"lastlogsize":`...)
	out = strconv.AppendUint(out, lp.LastLogSize, 10)
	out = append(out, `,"mtime":`...)
	out = strconv.AppendInt(out, lp.Mtime, 10)
	if f.timeout && it.Ext().Timeout != "" {
		out = append(out, `,"timeout":`...)
		out = appendJSONString(out, it.Ext().Timeout)
	}
	return append(out, '}'), true
}
