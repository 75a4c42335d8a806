package ingest

import (
	"net"
	"strconv"
	"time"

	"github.com/peregrine-mon/peregrine/internal/zbx/zbxtls"
)

// How an agent said where it listens (Zabbix's connection flags).
const (
	ConnDefault = 0 // the "ip" member, or the connection's address
	ConnIP      = 1 // HostInterface is an IP address
	ConnDNS     = 2 // HostInterface is a DNS name
)

// Registration is what an active agent's "active checks" request says
// about itself, for auto-registration (Options.AutoRegister): as Zabbix
// 6.0 reads it (recorded from 6.0.14's autoreg_host rows), a
// HostInterface that is an IP address is the listen IP (ConnIP), one
// that is a name the listen DNS name (ConnDNS); without one the listen
// IP is the "ip" member (ListenIP) or the connection's address. Port is
// the "port" member (ListenPort), default 10050.
type Registration struct {
	Host, HostMetadata string
	IP, DNS            string
	Port               uint16
	Flag               int
	// Peer is the connection: its Type is the tls_accepted of the
	// registration (1 unencrypted, 2 PSK, 4 certificate), with the PSK
	// identity and key or the certificate the policy is checked against.
	Peer  zbxtls.Peer
	Known bool // the host is in the catalog
	Clock time.Time
}

// registration makes the Registration of an "active checks" request.
func registration(top *agentTop, peer *zbxtls.Peer, remote string, known bool, now time.Time) Registration {
	r := Registration{Host: string(top.host), HostMetadata: cutUTF8(string(top.hostMetadata), maxHostMetadataBytes),
		Port: 10050, Peer: *peer, Known: known, Clock: now}
	if p, err := strconv.ParseUint(string(top.port), 10, 16); err == nil && p > 0 {
		r.Port = uint16(p)
	}
	switch iface := cutUTF8(string(top.iface), maxAgentFieldBytes); {
	case iface != "" && net.ParseIP(iface) != nil:
		r.Flag, r.IP = ConnIP, iface
	case iface != "":
		r.Flag, r.DNS = ConnDNS, iface
	case len(top.ip) > 0:
		r.IP = string(top.ip)
	default:
		r.IP, _, _ = net.SplitHostPort(remote)
		if r.IP == "" {
			r.IP = remote
		}
	}
	return r
}

// autoRegister hands a registration to Options.AutoRegister and
// returns its refusal (the autoregistration encryption policy), if any.
func (s *Server) autoRegister(cs *connState, remote string, known bool, recv time.Time) error {
	if s.opts.AutoRegister == nil {
		return nil
	}
	err := s.opts.AutoRegister(registration(&cs.req.top, &cs.peer, remote, known, recv))
	if err != nil {
		s.m.autoregRefused.Inc()
	}
	return err
}
