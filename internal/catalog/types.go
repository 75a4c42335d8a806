package catalog

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/history"
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
	External          ItemType = 10 // external script run by the server
	HTTPAgent         ItemType = 19 // HTTP request made by the server
	SNMPAgent         ItemType = 20 // SNMP get/walk made by the server
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
	{External, "external"},
	{HTTPAgent, "http_agent"},
	{SNMPAgent, "snmp_agent"},
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

// ParseItemType parses an item type given by its import-format name
// ("trapper", "zabbix_agent", "zabbix_agent_active", "simple", "internal",
// "external", "http_agent", "snmp_agent") or by its Zabbix number as a
// decimal string ("2" for trapper). Names are case-sensitive.
func ParseItemType(s string) (ItemType, error) {
	for _, n := range itemTypeNames {
		if n.name == s {
			return n.t, nil
		}
	}
	if u, err := strconv.ParseUint(s, 10, 8); err == nil && ItemType(u).Valid() {
		return ItemType(u), nil
	}
	return 0, fmt.Errorf("unknown item type %q: use one of trapper, zabbix_agent, zabbix_agent_active, simple, internal, external, http_agent, snmp_agent (or the Zabbix numbers 2, 0, 7, 3, 5, 10, 19, 20)", s)
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

// Tag is a host tag: a name and an optional value.
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
	// GroupIDs lists the groups the host belongs to, ascending.
	GroupIDs []uint64
	// Tags are the host's tags in the order they were given (Zabbix host
	// tags; set through the API, left alone by Apply).
	Tags []Tag
	// Interfaces are the host's interfaces sorted by ID (Zabbix host
	// interfaces: where polled checks connect to).
	Interfaces []Interface

	snap  *Snapshot // the snapshot holding this host
	items []Item    // this host's items, in no particular order; a window of snap.items
	table []uint32  // key index of items, see Snapshot
}

// Item returns the host's item with exactly the given key, or nil. It does
// not allocate and does not retain key.
func (h *Host) Item(key string) *Item {
	if i := h.lookupIndex(key); i >= 0 {
		return &h.snap.items[i]
	}
	return nil
}

// Items returns the host's items sorted by key (byte-wise). The slice is
// freshly allocated and sorted on each call, which is fine for the API and
// the UI but not for hot paths; the items themselves are shared and
// read-only.
func (h *Host) Items() []*Item {
	out := make([]*Item, len(h.items))
	for i := range h.items {
		out[i] = &h.items[i]
	}
	slices.SortFunc(out, func(a, b *Item) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// ItemCount returns the number of items of the host.
func (h *Host) ItemCount() int { return len(h.items) }

// Item is one configured item as seen in one Snapshot. It MUST NOT be
// modified.
//
// The field order differs from the import format on purpose: the three
// one-byte fields sit together at the end so an Item takes 168 bytes on
// 64-bit platforms instead of 184 (one million items: 16 MB less).
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
	History        string
	Trends         string
	HistorySeconds int64
	TrendsSeconds  int64
	// InterfaceID is the host interface the server polls the item
	// through, 0 for none. Agent items (type 0) always have one: it
	// defaults to the host's main agent interface when the item is
	// created, as Zabbix requires.
	InterfaceID uint64
	// Timeout is the per-check timeout as configured ("3s"); "" means the
	// server's default.
	Timeout string

	Type      ItemType
	ValueType history.ValueType
	Enabled   bool // Zabbix status 0 ("enabled")
}

// sameConfig reports whether a and b are configured identically, ignoring
// identity (ID, HostID, Host).
func (a *Item) sameConfig(b *Item) bool {
	return a.Key == b.Key && a.Name == b.Name && a.Units == b.Units && a.Delay == b.Delay &&
		a.History == b.History && a.Trends == b.Trends && a.Type == b.Type &&
		a.ValueType == b.ValueType && a.Enabled == b.Enabled &&
		a.InterfaceID == b.InterfaceID && a.Timeout == b.Timeout
}
