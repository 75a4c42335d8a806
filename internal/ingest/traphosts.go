package ingest

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Allowed hosts (an item's trapper_hosts, catalog.TrapHosts): as Zabbix
// 6.0's trapper, a value for an item with a non-empty list is taken only
// from a sender whose address is in it; a value from any other address
// is not stored and counts as failed (recorded from 6.0.14 with
// zabbix_sender -I: "processed: 0; failed: 1" from 127.0.0.1 for an item
// allowing 127.0.0.2, "processed: 1; failed: 0" from 127.0.0.2). Items
// without a list pay one nil check; the parsed list is cached on the
// item's TrapHosts (TrapHosts.Peers). A list with macros is expanded
// and parsed per value: {HOST.HOST}, {HOST.NAME}, {HOST.IP}, {HOST.DNS},
// {HOST.CONN} (the item's interface, else the host's main one) and the
// host's user macros. DNS names are resolved per value, as Zabbix
// resolves them, within dnsTimeout; a name that does not resolve allows
// nothing.

// dnsTimeout bounds the resolution of one allowed hosts entry.
const dnsTimeout = 2 * time.Second

// peerAllowed reports whether remote ("ip:port") may send values for it.
func peerAllowed(snap *catalog.Snapshot, it *catalog.Item, t *catalog.TrapHosts, remote string) bool {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return false
	}
	addr := ap.Addr().Unmap()
	peers := t.Peers()
	if strings.Contains(t.Hosts, "{") {
		peers, _ = catalog.ParseTrapPeers(expandTrapHosts(snap, it, t.Hosts), false)
	}
	for _, p := range peers {
		if peerMatches(p, addr) {
			return true
		}
	}
	return false
}

// peerMatches reports whether addr is p, in p's range, or (a DNS name)
// one of the name's addresses.
func peerMatches(p catalog.TrapPeer, addr netip.Addr) bool {
	if p.Prefix.IsValid() {
		return p.Prefix.Contains(addr)
	}
	if p.Name == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), dnsTimeout)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", p.Name)
	if err != nil {
		return false
	}
	for _, ip := range ips {
		if ip.Unmap() == addr {
			return true
		}
	}
	return false
}

// expandTrapHosts expands the macros of an allowed hosts list for it.
func expandTrapHosts(snap *catalog.Snapshot, it *catalog.Item, s string) string {
	h := it.Host
	if h == nil {
		return s
	}
	var f *catalog.Interface
	if it.InterfaceID != 0 {
		f = snap.Interface(it.InterfaceID)
	}
	for _, t := range []catalog.InterfaceType{catalog.InterfaceAgent, catalog.InterfaceSNMP, catalog.InterfaceIPMI, catalog.InterfaceJMX} {
		if f != nil {
			break
		}
		f = h.MainInterface(t)
	}
	var ip, dns, conn string
	if f != nil {
		ip, dns, conn = f.IP, f.DNS, f.DNS
		if f.UseIP {
			conn = f.IP
		}
	}
	s = strings.NewReplacer("{HOST.HOST}", h.Host, "{HOST.NAME}", h.Name, "{HOST.IP}", ip, "{HOST.DNS}", dns, "{HOST.CONN}", conn).Replace(s)
	if strings.Contains(s, "{$") {
		s = snap.UserMacros(h.ID).Expand(s)
	}
	return s
}
