package catalog

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// ItemType is the Zabbix item type number (the "type" field of the Zabbix
// API). Only the types Peregrine collects are defined; the numbers are
// Zabbix's, so they can be stored and exchanged as is.
type ItemType uint8

// Zabbix item types supported by Peregrine.
const (
	ZabbixAgent       ItemType = 0  // passive agent check, polled by the server
	Trapper           ItemType = 2  // values pushed with zabbix_sender
	SimpleCheck       ItemType = 3  // icmpping, net.tcp.service and friends
	Internal          ItemType = 5  // zabbix[...] self-monitoring
	ZabbixAgentActive ItemType = 7  // active agent check, pushed by the agent
	SNMPTrap          ItemType = 17 // snmptrap[regex] and snmptrap.fallback, fed by the trap receiver
	WebItem           ItemType = 9  // a web scenario's item (httptest.go): made and fed by its scenario only
	External          ItemType = 10 // external script run by the server
	ODBC              ItemType = 11 // database monitor: SQL query (Item.Params) through unixODBC (Item.ODBC)
	IPMI              ItemType = 12 // IPMI sensor (Item.IPMISensor) or ipmi.get, read from the host's BMC
	SSHAgent          ItemType = 13 // command run over SSH (Item.Params, Item.Login)
	TelnetAgent       ItemType = 14 // command run over Telnet (Item.Params, Item.Login)
	Calculated        ItemType = 15 // formula (Item.Params) evaluated on schedule
	JMX               ItemType = 16 // JMX attribute read through the Zabbix Java gateway (Item.JMX)
	Dependent         ItemType = 18 // fed by its master item's values (Item.MasterItemID)
	HTTPAgent         ItemType = 19 // HTTP request made by the server
	SNMPAgent         ItemType = 20 // SNMP get/walk made by the server
	Script            ItemType = 21 // JavaScript (Item.Params) run on schedule
)

// itemTypeNames maps every supported type to its import-format name.
var itemTypeNames = [...]struct {
	t    ItemType
	name string
}{
	{ZabbixAgent, "zabbix_agent"},
	{Trapper, "trapper"},
	{SimpleCheck, "simple"},
	{Internal, "internal"},
	{ZabbixAgentActive, "zabbix_agent_active"},
	{SNMPTrap, "snmp_trap"},
	{External, "external"},
	{ODBC, "odbc"},
	{IPMI, "ipmi"},
	{SSHAgent, "ssh"},
	{TelnetAgent, "telnet"},
	{Calculated, "calculated"},
	{JMX, "jmx"},
	{Dependent, "dependent"},
	{HTTPAgent, "http_agent"},
	{SNMPAgent, "snmp_agent"},
	{Script, "script"},
	{WebItem, "web_item"},
}

// Valid reports whether t is one of the supported item types.
func (t ItemType) Valid() bool {
	for _, n := range itemTypeNames {
		if n.t == t {
			return true
		}
	}
	return false
}

// String returns the import-format name of t ("trapper", "snmp_agent", ...),
// or "ItemType(N)" for an unsupported number.
func (t ItemType) String() string {
	for _, n := range itemTypeNames {
		if n.t == t {
			return n.name
		}
	}
	return "ItemType(" + strconv.Itoa(int(t)) + ")"
}

// unscheduled reports whether items of type t are never polled: their
// values arrive (trapper, SNMP trap) or come from their master
// (dependent), so an update interval of 0 is theirs by default.
func (t ItemType) unscheduled() bool { return t == Trapper || t == SNMPTrap || t == Dependent }

// ParseItemType parses an item type given by its import-format name
// ("trapper", "zabbix_agent", "zabbix_agent_active", "simple", "internal",
// "external", "odbc", "ipmi", "ssh", "telnet", "calculated", "jmx", "dependent",
// "http_agent", "snmp_agent", "script", "snmp_trap") or by its Zabbix number as a decimal string ("2" for
// trapper). Names are case-sensitive.
func ParseItemType(s string) (ItemType, error) {
	for _, n := range itemTypeNames {
		if n.name == s && n.t != WebItem { // web items are their scenario's, never declared
			return n.t, nil
		}
	}
	if u, err := strconv.ParseUint(s, 10, 8); err == nil && ItemType(u).Valid() && ItemType(u) != WebItem {
		return ItemType(u), nil
	}
	return 0, fmt.Errorf("unknown item type %q: use one of trapper, zabbix_agent, zabbix_agent_active, simple, internal, external, odbc, ipmi, ssh, telnet, calculated, jmx, dependent, http_agent, snmp_agent, script, snmp_trap (or the Zabbix numbers 2, 0, 7, 3, 5, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 21, 17)", s)
}

// ParseValueType parses a value type given by name ("float", "character"
// with the aliases "char" and "str", "log", "unsigned" with the alias
// "uint", "text") or by its Zabbix number "0".."4".
func ParseValueType(s string) (history.ValueType, error) {
	switch s {
	case "float", "0":
		return history.Float, nil
	case "character", "char", "str", "1":
		return history.Str, nil
	case "log", "2":
		return history.Log, nil
	case "unsigned", "uint", "3":
		return history.Uint, nil
	case "text", "4":
		return history.Text, nil
	}
	return 0, fmt.Errorf("unknown value type %q: use one of float, character, log, unsigned, text (or the Zabbix numbers 0..4)", s)
}

// ValueTypeName returns the import-format name of a value type ("float",
// "character", "log", "unsigned", "text"), the inverse of ParseValueType.
func ValueTypeName(t history.ValueType) string {
	switch t {
	case history.Float:
		return "float"
	case history.Str:
		return "character"
	case history.Log:
		return "log"
	case history.Uint:
		return "unsigned"
	case history.Text:
		return "text"
	}
	return "ValueType(" + strconv.Itoa(int(t)) + ")"
}

// Group is a host group.
type Group struct {
	ID   uint64
	Name string
}

// Tag is a host's, item's or trigger's tag: a name and an optional
// value.
type Tag struct {
	Tag   string
	Value string
}

// Host is a monitored host as seen in one Snapshot. A Host and everything
// reachable from it belong to that snapshot and MUST NOT be modified.
type Host struct {
	ID   uint64
	Host string // technical name, unique; what senders and agents send
	Name string // visible name; equals Host unless configured
	// Enabled is Zabbix status 0 ("monitored"). Items of a disabled host
	// are still in the snapshot; the consumer decides what to do with them.
	Enabled bool
	// IsTemplate marks a template (Zabbix 6.0's host of status 3). A
	// Snapshot keeps templates apart from hosts (Snapshot.Templates):
	// Hosts, Host, HostByID and Lookup never return one, so nothing
	// schedules, polls, accepts or evaluates a template's items.
	IsTemplate bool
	// GroupIDs lists the groups the host belongs to, ascending.
	GroupIDs []uint64
	// Tags are the host's tags in the order they were given (Zabbix host
	// tags; set through the API, left alone by Apply).
	Tags []Tag
	// Interfaces are the host's interfaces sorted by ID (Zabbix host
	// interfaces: where polled checks connect to).
	Interfaces []Interface
	// Description is the host's description (set through the API, left
	// alone by Apply).
	Description string
	// ProxyID is the proxy that monitors the host (Zabbix's
	// proxy_hostid; 0: the server itself; proxy.go).
	ProxyID uint64
	// Extra holds the host's encryption and IPMI settings, inventory,
	// UUID and discovery link (HostExtra), nil when all are zero. Hosts
	// of one snapshot and of successive snapshots may share one (every
	// host with Zabbix's defaults shares one): never write through it,
	// use MutExt.
	Extra *HostExtra

	mc    *macroCell // the user macros of the snapshots holding this host
	items []Item     // this host's items, in no particular order
	table []uint32   // key index of items, see Snapshot
	// deps maps a master item's ID to its dependent items (pointers
	// into items); only masters have an entry.
	deps map[uint64][]*Item
	// sorted caches Items' result, made on the first call rather than
	// at build (sorting every host's keys took a third of a
	// million-item build, and most hosts are never listed).
	sorted *atomic.Pointer[[]*Item]
}

// HostExtra is the part of a Host that most hosts leave at Zabbix's
// defaults (issue 30: the heap per item; see Host.Extra).
type HostExtra struct {
	// TLS is the host's encryption settings (Zabbix's tls_* fields).
	TLS HostTLS
	// IPMI is the host's IPMI settings (see HostIPMI; set through the
	// API, left alone by Apply).
	IPMI HostIPMI
	// Inventory is the host's inventory; nil: disabled (host_inventory.go).
	Inventory *HostInventory
	// UUID is a template's uuid (Zabbix's 32 hexadecimal digits, what
	// an export matches templates by); "" for hosts.
	UUID string
	// Discovery links a discovered host (Zabbix's flags 4) to the rule
	// and host prototype that made it (lld_hosts.go); nil otherwise.
	Discovery *Discovery
}

// Item returns the host's item with exactly the given key, or nil. It does
// not allocate and does not retain key.
func (h *Host) Item(key string) *Item {
	if i := h.lookupIndex(key); i >= 0 {
		return &h.items[i]
	}
	return nil
}

// Items returns the host's items sorted by key (byte-wise). The slice is
// made and sorted on the first call and then shared by every caller for
// the snapshot's life (the API's and the poller's host walks call it for
// every host), so it MUST NOT be modified, like the items themselves.
func (h *Host) Items() []*Item {
	if len(h.items) == 0 {
		return nil
	}
	if h.sorted != nil {
		if p := h.sorted.Load(); p != nil {
			return *p
		}
	}
	out := make([]*Item, len(h.items))
	for i := range h.items {
		out[i] = &h.items[i]
	}
	slices.SortFunc(out, func(a, b *Item) int { return cmp.Compare(a.Key, b.Key) })
	if h.sorted == nil {
		return out // a host outside a built snapshot
	}
	// Callers racing on the first call made equal slices; all return
	// the one stored.
	h.sorted.CompareAndSwap(nil, &out)
	return *h.sorted.Load()
}

// ItemCount returns the number of items of the host.
func (h *Host) ItemCount() int { return len(h.items) }

// Item is one configured item as seen in one Snapshot. It MUST NOT be
// modified.
//
// The fields most items leave empty (the per-type settings, the
// formula, script or command, the timeout, UUID and the like) are in
// ItemExtra behind one pointer, nil for most items: read them with Ext,
// set them with MutExt. The field order differs from the import format
// on purpose: the one-byte fields sit together so that they share one
// word of padding (an Item takes 248 bytes on 64-bit platforms, its
// ItemExtra 192; the catalog's heap per item is measured in
// docs/bench/estate.md).
type Item struct {
	ID     uint64
	HostID uint64
	Host   *Host  // the item's host within the same snapshot
	Key    string // exactly as configured; lookups compare it byte for byte
	Name   string
	Units  string
	Delay  string // Zabbix interval string, e.g. "1m", "30s", "0" for trappers
	// History and Trends are the retention periods as configured ("90d",
	// "365d"; "0" keeps nothing); HistorySeconds and TrendsSeconds are the
	// same periods in seconds.
	History string
	Trends  string
	// InterfaceID is the host interface the server polls the item
	// through, 0 for none. Agent items (type 0) always have one: it
	// defaults to the host's main agent interface when the item is
	// created, as Zabbix requires.
	InterfaceID uint64
	// MasterItemID is the master of a dependent item (type 18): another
	// item of the same host whose values, after its own preprocessing,
	// feed this one's steps. 0 for every other type. At most 3 levels of
	// dependents hang below a master, as in Zabbix.
	MasterItemID uint64
	// Preprocessing is the item's steps in order, nil for none. Items
	// with identical steps share one slice within a snapshot and across
	// snapshots while the steps do not change, so a consumer may cache
	// what it compiles from a chain by the slice's address.
	Preprocessing []PreprocStep

	Type      ItemType
	ValueType history.ValueType
	Enabled   bool // Zabbix status 0 ("enabled")
	// hasDeps is set by buildSnapshot on items that are some dependent
	// item's master, so the ingest path learns it without a map lookup.
	hasDeps bool
	// InventoryLink is the host inventory field the item's values fill
	// (Zabbix's inventory_link, 1..70; 0 none). Stored and shown; host
	// inventory itself is not kept yet (inventory.go).
	InventoryLink uint8
	// HistorySeconds and TrendsSeconds: see History and Trends (at most
	// 25 years, which int32 holds; beside the one-byte fields, they
	// share their word).
	HistorySeconds, TrendsSeconds int32
	// ValueMapID is the value map of the item's host that its values are
	// shown through (Snapshot.ValueMap), 0 for none.
	ValueMapID uint64
	// Tags are the item's tags (Zabbix 6.0's item tags) in their order,
	// nil for none; no (tag, value) pair twice. Problems of the item's
	// triggers carry them (package trigger).
	Tags []Tag
	// TemplateID is the item this one was copied from (Zabbix's
	// templateid): an item of a template linked to the item's host or
	// template, whose changes it follows (inherit.go). 0 for the
	// owner's own items.
	TemplateID uint64
	// Discovery is what made a discovered item (flags 4, lld.go), nil
	// for every other item.
	Discovery *Discovery
	// Extra holds the fields most items leave empty, nil when all are
	// (item_extra.go). Items of one snapshot and of successive
	// snapshots may share one: never write through it, use MutExt.
	Extra *ItemExtra
}

// ItemExtra is the part of an Item most items leave empty (see Item).
type ItemExtra struct {
	// Description is the item's description (Zabbix's, up to 65,535
	// characters), "" for none. The copies of a template item share
	// it with their ItemExtra.
	Description string
	// Timeout is the per-check timeout as configured ("3s"); "" means the
	// server's default.
	Timeout string
	// SNMPOID is an SNMP agent item's snmp_oid as configured (validated
	// by package zbx/snmpoid); "" for other types.
	SNMPOID string
	// Params is the formula of a calculated item (type 15), the script
	// of a script item (type 21), the command of an SSH or Telnet item
	// (types 13, 14) or the SQL query of a database monitor item (type
	// 11); "" for other types.
	Params string
	// TimestampPrecision is the item's own history timestamp precision
	// ("ns", "us", "ms" or "s"; see history.Precision), or "" for the
	// server's history.timestamp_precision.
	TimestampPrecision string
	// HTTP is the request of an HTTP agent item (type 19), nil for every
	// other type.
	HTTP *HTTPItem
	// Login is how an SSH or Telnet item (types 13, 14) logs in, nil for
	// every other type.
	Login *LoginItem
	// JMX is the endpoint and credentials of a JMX agent item (type
	// 16), nil for every other type.
	JMX *JMXItem
	// ODBC is the login of a database monitor item (type 11), nil for
	// every other type.
	ODBC *ODBCItem
	// Parameters are the item's parameters in their order (a script
	// item's, item_params.go), nil for none.
	Parameters []ItemParam
	// RetryDelay is Peregrine's retry interval ("30s", a user macro, or
	// "" for none): while a trigger of the item is in a soft state (see
	// Trigger.MaxCheckAttempts) the item is checked at this interval
	// instead of Delay, as Nagios re-checks at retry_interval.
	RetryDelay string
	// IPMISensor is the item's ipmi_sensor: the sensor an IPMI item
	// (type 12) reads, by its id ("CPU Temp", "id:CPU Temp") or its full
	// name ("name:(7.1).CPU Temp"); "" for ipmi.get. Zabbix 6.0 keeps it
	// on items of every type, and so does the catalog.
	IPMISensor string
	// LogTimeFmt is the item's logtimefmt (logtimefmt.go), "" for none.
	LogTimeFmt string
	// UUID is the uuid of a template's own item (what an export matches
	// items by); "" for copies and for hosts' items, as in Zabbix 6.0.
	UUID string
	// LLD is a discovery rule's configuration (flags 1, lld.go), nil
	// for every other item.
	LLD *LLDRule
	// Traps is the item's trapper_hosts and allow_traps (traphosts.go),
	// nil when both are empty.
	Traps *TrapHosts
}

// Precision returns the item's own timestamp precision; ok is false when
// it has none and the server's setting applies.
func (a *Item) Precision() (p history.Precision, ok bool) {
	if a.Ext().TimestampPrecision == "" {
		return 0, false
	}
	p, err := history.ParsePrecision(a.Ext().TimestampPrecision)
	return p, err == nil // validated when stored
}

// sameConfig reports whether a and b are configured identically, ignoring
// identity (ID, HostID, Host).
func (a *Item) sameConfig(b *Item) bool {
	return a.Key == b.Key && a.Name == b.Name && a.Units == b.Units && a.Delay == b.Delay &&
		a.History == b.History && a.Trends == b.Trends && a.Type == b.Type &&
		a.ValueType == b.ValueType && a.Enabled == b.Enabled &&
		a.InterfaceID == b.InterfaceID && a.MasterItemID == b.MasterItemID && sameSteps(a.Preprocessing, b.Preprocessing) &&
		slices.Equal(a.Tags, b.Tags) &&
		a.TemplateID == b.TemplateID && a.InventoryLink == b.InventoryLink &&
		a.Discovery.equal(b.Discovery) && a.Ext().same(b.Ext())
}

// HasDependents reports whether some dependent item has a as its master,
// in a's snapshot.
func (a *Item) HasDependents() bool { return a.hasDeps }

// HostTLS is a host's encryption settings, Zabbix's host fields
// tls_connect, tls_accept, tls_issuer, tls_subject, tls_psk_identity and
// tls_psk. The numbers are Zabbix's: 1 unencrypted, 2 PSK, 4
// certificate.
type HostTLS struct {
	// Connect is how the server connects to the host's agent: one of 1,
	// 2, 4.
	Connect uint8
	// Accept is the bitmask of the connections the server accepts from
	// the host's agents and senders: 1 to 7.
	Accept uint8
	// Issuer and Subject, if not empty, must equal the peer
	// certificate's issuer and subject in RFC 4514 form
	// (zbxtls.FormatDN).
	Issuer  string
	Subject string
	// PSKIdentity and PSK are the pre-shared key, set exactly when
	// Connect is 2 or Accept has bit 2 (UsesPSK), as Zabbix 6.0 keeps
	// them: the identity up to 128 characters, the key as its 32 to 512
	// hexadecimal digits, stored as given. PSK never formats (it is a
	// zbxpsk.Secret) and the API never returns it.
	PSKIdentity string
	PSK         zbxpsk.Secret
}

// DefaultHostTLS is Zabbix's default: unencrypted both ways.
var DefaultHostTLS = HostTLS{Connect: 1, Accept: 1}

// maxTLSNameLen is Zabbix's length of tls_issuer and tls_subject.
const maxTLSNameLen = 1024

// UsesPSK reports whether t needs a pre-shared key: to connect to the
// agent (tls_connect 2) or to accept one (tls_accept bit 2).
func (t HostTLS) UsesPSK() bool { return t.Connect == 2 || t.Accept&2 != 0 }

// Check validates t with Zabbix's rules, naming the offending field.
func (t HostTLS) Check() error {
	switch {
	case t.Connect != 1 && t.Connect != 2 && t.Connect != 4:
		return fmt.Errorf("tls_connect must be one of 1 (unencrypted), 2 (PSK), 4 (certificate), not %d", t.Connect)
	case t.Accept < 1 || t.Accept > 7:
		return fmt.Errorf("tls_accept must be a sum of 1 (unencrypted), 2 (PSK), 4 (certificate) between 1 and 7, not %d", t.Accept)
	case len(t.Issuer) > maxTLSNameLen:
		return fmt.Errorf("tls_issuer is longer than %d characters", maxTLSNameLen)
	case len(t.Subject) > maxTLSNameLen:
		return fmt.Errorf("tls_subject is longer than %d characters", maxTLSNameLen)
	case !t.UsesPSK() && t.PSKIdentity != "":
		return errors.New("tls_psk_identity must be empty unless tls_connect is 2 or tls_accept includes 2 (PSK)")
	case !t.UsesPSK() && t.PSK != "":
		return errors.New("tls_psk must be empty unless tls_connect is 2 or tls_accept includes 2 (PSK)")
	case !t.UsesPSK():
		return nil
	}
	if err := zbxpsk.CheckIdentity(t.PSKIdentity); err != nil {
		return fmt.Errorf("tls_psk_identity: %w", err)
	}
	if _, err := zbxpsk.ParseKey(string(t.PSK)); err != nil {
		return fmt.Errorf("tls_psk: %w", err)
	}
	return nil
}

// CheckSupported is Check plus what this build cannot do: a pre-shared
// key when it was built without OpenSSL (zbxpsk.Available false), so
// that a host asking for one is refused when it is created, updated or
// imported rather than stored and then failing every connection. Hosts
// stored with PSK by a build that has it still load (Check); their PSK
// connections are refused with zbxpsk.ErrUnavailable.
func (t HostTLS) CheckSupported() error {
	if err := t.Check(); err != nil {
		return err
	}
	if !zbxpsk.Available {
		switch {
		case t.Connect == 2:
			return fmt.Errorf("tls_connect 2 (PSK): %w", zbxpsk.ErrUnavailable)
		case t.Accept&2 != 0:
			return fmt.Errorf("tls_accept %d includes 2 (PSK): %w", t.Accept, zbxpsk.ErrUnavailable)
		}
	}
	return nil
}

// PSKKey returns the host's pre-shared key (identity and decoded key);
// ok is false when the host has none.
func (t HostTLS) PSKKey() (zbxpsk.Key, bool) {
	if !t.UsesPSK() || t.PSKIdentity == "" {
		return zbxpsk.Key{}, false
	}
	b, err := zbxpsk.ParseKey(string(t.PSK))
	if err != nil {
		return zbxpsk.Key{}, false // refused when stored; Check reports it
	}
	return zbxpsk.Key{Identity: t.PSKIdentity, Secret: b}, true
}
