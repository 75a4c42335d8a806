package pipeline

import (
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Types is a set of item types: the types a way in may deliver values
// for. Sender data and history.push deliver for trapper items only; a
// poller will pass the types it checks.
type Types uint32

// TrapperTypes is the set for zabbix_sender and history.push.
const TrapperTypes = Types(1) << catalog.Trapper

// TypesOf returns the set of the given types.
func TypesOf(ts ...catalog.ItemType) Types {
	var s Types
	for _, t := range ts {
		s |= Types(1) << (t & 31)
	}
	return s
}

// Has reports whether t is in the set.
func (s Types) Has(t catalog.ItemType) bool { return t < 32 && s&(Types(1)<<t) != 0 }

// Refusal says why a value is not accepted for an item; Accepted (0)
// means it is.
type Refusal uint8

// The refusals, in the order the rules are checked.
const (
	Accepted      Refusal = iota
	UnknownHost           // no host with that technical name
	HostDisabled          // the host is not monitored
	UnknownItem           // no such item (on that host)
	WrongItemType         // the item's type is not one the way in delivers
	ItemDisabled          // the item is disabled
	BadValue              // the value does not convert to the item's value type
	// MonitoredByProxy: the host is monitored by a proxy, which alone
	// delivers its values (Zabbix 6.0's trapper refuses them too).
	MonitoredByProxy
	NumRefusals
)

var refusalNames = [NumRefusals]string{"accepted", "unknown_host", "host_disabled", "unknown_item", "wrong_item_type", "item_disabled", "bad_value", "monitored_by_proxy"}

// String returns the refusal's name as used in metric labels and logs
// ("unknown_host", ...).
func (r Refusal) String() string {
	if r < NumRefusals {
		return refusalNames[r]
	}
	return "refusal(" + strconv.Itoa(int(r)) + ")"
}

// ItemByKey finds the item key on the host with technical name host and
// checks that it accepts values from a way in that delivers types: the
// host exists and is monitored, the item exists, its type is in types
// and it is enabled, checked in that order as the Zabbix trapper does.
// It takes no lock and does not allocate or retain host and key, so they
// may alias a reused buffer.
func ItemByKey(snap *catalog.Snapshot, host, key string, types Types) (*catalog.Item, Refusal) {
	h := snap.Host(host)
	if h == nil {
		return nil, UnknownHost
	}
	if !h.Enabled {
		return nil, HostDisabled
	}
	if h.ProxyID != 0 {
		return nil, MonitoredByProxy
	}
	it := h.Item(key)
	if it == nil {
		return nil, UnknownItem
	}
	return it, accept(it, types)
}

// ItemByID is ItemByKey for an item named by its ID.
func ItemByID(snap *catalog.Snapshot, id uint64, types Types) (*catalog.Item, Refusal) {
	it := snap.Item(id)
	if it == nil {
		return nil, UnknownItem
	}
	if it.Host != nil && !it.Host.Enabled {
		return nil, HostDisabled
	}
	if it.Host != nil && it.Host.ProxyID != 0 {
		return nil, MonitoredByProxy
	}
	return it, accept(it, types)
}

func accept(it *catalog.Item, types Types) Refusal {
	switch {
	case !types.Has(it.Type):
		return WrongItemType
	case !it.Enabled:
		return ItemDisabled
	}
	return Accepted
}

// RawValue is one value of a request that names its item itself, as
// history.push (Zabbix 7.0's JSON ingest) does: by ItemID, or by Host and
// Key when ItemID is 0.
type RawValue struct {
	ItemID    uint64
	Host, Key string
	Value     []byte // the value's text, as a sender would send it
	Clock     int64  // Unix seconds; -1: the receive time
	NS        int64  // -1: absent
}

// Result is the outcome of one RawValue: the item it was stored for, or
// why it was refused, worded for the client.
type Result struct {
	ItemID uint64
	Err    string
}
