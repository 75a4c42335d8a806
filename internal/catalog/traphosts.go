package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// An item's allowed hosts (Zabbix 6.0's trapper_hosts, "allowed_hosts" in
// exports) and an HTTP agent item's allow_traps ("Enable trapping"). They
// live in a table of their own with a row only where one is set, so that
// the items table and the statements every other change writes it with
// stay as they were. Zabbix 6.0.14 keeps trapper_hosts on items of every
// type (item.create of an active agent item with one stores it) and
// refuses it on an HTTP agent item with allow_traps 0 (recorded).

// MaxTrapperHostsLen is trapper_hosts' length limit in Zabbix 6.0's
// database schema.
const MaxTrapperHostsLen = 255

const itemTrapsSchema = `
CREATE TABLE item_traps (
	item_id INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
	hosts   TEXT NOT NULL,
	allow   INTEGER NOT NULL
);
`

// migrateItemTraps is the migration adding items' allowed hosts. Items
// of an older database have no row: none had any.
func migrateItemTraps() string { return itemTrapsSchema }

// TrapHosts is an item's trapper_hosts and allow_traps (ItemExtra.Traps,
// nil when both are empty).
type TrapHosts struct {
	// Hosts is the list as configured: comma-separated IP addresses,
	// CIDR ranges, DNS names, {HOST.*} macros and user macros.
	Hosts string
	// Allow is an HTTP agent item's allow_traps: the trapper accepts
	// values for it.
	Allow bool

	peers atomic.Pointer[[]TrapPeer] // Hosts parsed, on first use
}

func (a *TrapHosts) equal(b *TrapHosts) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Hosts == b.Hosts && a.Allow == b.Allow
}

// newTrapHosts returns the TrapHosts of hosts and allow, nil when both
// are empty.
func newTrapHosts(hosts string, allow bool) *TrapHosts {
	if hosts == "" && !allow {
		return nil
	}
	return &TrapHosts{Hosts: hosts, Allow: allow}
}

// TrapPeer is one entry of an allowed hosts list. Prefix is valid for an
// address or a CIDR range; Name is a DNS name (or, before expansion, a
// macro). Names take no prefix.
type TrapPeer struct {
	Prefix netip.Prefix
	Name   string
}

// Peers returns Hosts parsed (cached on first use). An entry that does
// not parse (a list checked before storing always parses, but macros
// expand to anything) is left out.
func (t *TrapHosts) Peers() []TrapPeer {
	if p := t.peers.Load(); p != nil {
		return *p
	}
	ps, _ := ParseTrapPeers(t.Hosts, false)
	t.peers.Store(&ps)
	return ps
}

// TrapHostsError is an allowed hosts list Zabbix 6.0 refuses, in its
// words (recorded from 6.0.14: `Incorrect value for field
// "trapper_hosts": invalid address range "bad_host!".`).
type TrapHostsError struct {
	Entry string
	// NotEmpty: the list is set on an HTTP agent item that does not
	// allow traps ("should be empty.").
	NotEmpty bool
}

func (e *TrapHostsError) Error() string {
	if e.NotEmpty {
		return `Incorrect value for field "trapper_hosts": should be empty.`
	}
	return fmt.Sprintf(`Incorrect value for field "trapper_hosts": invalid address range "%s".`, e.Entry)
}

// hostMacros are the built-in macros an allowed hosts entry may be.
var hostMacros = []string{"{HOST.HOST}", "{HOST.NAME}", "{HOST.IP}", "{HOST.DNS}", "{HOST.CONN}"}

// ParseTrapPeers parses an allowed hosts list: entries separated by
// commas, spaces around them ignored. Each is an IPv4 or IPv6 address,
// optionally with a /prefix, a DNS name, one of the {HOST.HOST},
// {HOST.NAME}, {HOST.IP}, {HOST.DNS}, {HOST.CONN} macros or a user
// macro {$NAME} (macros only when macros is true; their entries keep
// the macro as Name). An empty entry, a bad prefix or anything else is
// refused with the entry (as 6.0.14 does: "127.0.0.0/33", "a b",
// "{$A}/24", "{HOST.XYZ}", an empty entry between two commas).
// Addresses that look like IPv4 but are not ("300.1.1.1") are DNS
// names, as 6.0 takes them. An empty list is nil.
func ParseTrapPeers(s string, macros bool) ([]TrapPeer, error) {
	if s == "" {
		return nil, nil
	}
	var out []TrapPeer
	for e := range strings.SplitSeq(s, ",") {
		e = strings.Trim(e, " \t\r\n")
		p, ok := parseTrapPeer(e, macros)
		if !ok {
			return out, &TrapHostsError{Entry: e}
		}
		out = append(out, p)
	}
	return out, nil
}

func parseTrapPeer(e string, macros bool) (TrapPeer, bool) {
	if strings.HasPrefix(e, "{") {
		if !macros {
			return TrapPeer{}, false
		}
		for _, m := range hostMacros {
			if e == m {
				return TrapPeer{Name: e}, true
			}
		}
		if strings.HasPrefix(e, "{$") && strings.HasSuffix(e, "}") && strings.Count(e, "{") == 1 && strings.Count(e, "}") == 1 && len(e) > 3 {
			return TrapPeer{Name: e}, true
		}
		return TrapPeer{}, false
	}
	addr, bits, hasBits := strings.Cut(e, "/")
	n := -1
	if hasBits {
		v, err := strconv.Atoi(bits)
		if err != nil || v < 0 || bits == "" || bits[0] == '+' {
			return TrapPeer{}, false
		}
		n = v
	}
	if ip, err := netip.ParseAddr(addr); err == nil && ip.Zone() == "" {
		if n < 0 {
			n = ip.BitLen()
		}
		pf, err := ip.Prefix(n)
		if err != nil || n > ip.BitLen() {
			return TrapPeer{}, false
		}
		return TrapPeer{Prefix: pf}, true
	}
	// A DNS name takes no prefix (6.0.14 refuses "localhost/24" and
	// "300.1.1.1/24").
	if hasBits || !validDNSName(addr) {
		return TrapPeer{}, false
	}
	return TrapPeer{Name: addr}, true
}

// validDNSName reports whether s is a DNS name: labels of letters,
// digits, '-' and '_', separated by dots, up to 253 characters.
func validDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for l := range strings.SplitSeq(s, ".") {
		if l == "" || len(l) > 63 {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// checkTrapHosts checks an item's trapper_hosts and allow_traps as
// 6.0.14 does.
func checkTrapHosts(typ ItemType, hosts string, allow bool) error {
	if n := utf8.RuneCountInString(hosts); n > MaxTrapperHostsLen {
		return &TrapHostsError{Entry: hosts}
	}
	if _, err := ParseTrapPeers(hosts, true); err != nil {
		return err
	}
	if typ == HTTPAgent && !allow && hosts != "" {
		return &TrapHostsError{NotEmpty: true}
	}
	return nil
}

// loadItemTraps attaches the item_traps rows to their items.
func loadItemTraps(ctx context.Context, tx *sql.Tx, items []Item) error {
	var byItem map[uint64]int
	err := queryEach(ctx, tx, "SELECT item_id, hosts, allow FROM item_traps", func(r *sql.Rows) error {
		if byItem == nil {
			byItem = make(map[uint64]int, len(items))
			for i := range items {
				byItem[items[i].ID] = i
			}
		}
		var id uint64
		var s string
		var allow int
		if err := r.Scan(&id, &s, &allow); err != nil {
			return err
		}
		i, ok := byItem[id]
		if !ok {
			return fmt.Errorf("%w: allowed hosts of unknown item %d", ErrCorrupt, id)
		}
		items[i].MutExt().Traps = newTrapHosts(s, allow != 0)
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot load items' allowed hosts: %w", err)
	}
	return nil
}

// writeItemTraps stores an item's allowed hosts: a row unless t is nil.
func writeItemTraps(exec execer, id uint64, t *TrapHosts, had bool) error {
	if had {
		if err := exec("DELETE FROM item_traps WHERE item_id = ?", id); err != nil {
			return err
		}
	}
	if t == nil {
		return nil
	}
	return exec("INSERT INTO item_traps (item_id, hosts, allow) VALUES (?, ?, ?)", id, t.Hosts, b2i(t.Allow))
}

// trapsRow is t as an item_traps row's values after the item's id.
func trapsRow(id uint64, t *TrapHosts) []any { return []any{id, t.Hosts, b2i(t.Allow)} }

// parseYesNo reads allow_traps as the import and the API give it.
func parseYesNo(s string) (v, ok bool) {
	switch s {
	case "", "NO", "0":
		return false, true
	case "YES", "1":
		return true, true
	}
	return false, false
}

// trapHostsOf and allowTrapsOf are it's trapper_hosts and allow_traps
// as an ItemSpec holds them.
func trapHostsOf(it *Item) string {
	if t := it.Ext().Traps; t != nil {
		return t.Hosts
	}
	return ""
}

func allowTrapsOf(it *Item) string {
	if t := it.Ext().Traps; t != nil && t.Allow {
		return "1"
	}
	return ""
}
