package server

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/netdisc"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/agent"
	"github.com/peregrine-mon/peregrine/internal/poll/tcpsvc"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Network discovery (s.Discovery, event source 1): the discoverer
// sweeps the discovery rules with the server's ICMP checker and agent
// and TCP service checkers of its own (so that discovery is not counted
// as item checks; their counts are the discoverer's
// peregrine_netdisc_checks_total), each check bounded by poll.default_timeout and at
// most poll.simple_max_in_flight checks out at once. Its events reach
// the alert engine as auto-registration's do.

// buildDiscovery makes s.Discovery; called by buildEventProducers.
func (s *Server) buildDiscovery() error {
	cfg, log := s.cfg, s.log
	var err error
	s.Discovery, err = netdisc.New(netdisc.Options{
		Catalog: s.Catalog,
		Events:  notifyStore{s.Events, s.Alerts.Notify},
		ICMP:    serverICMP{s},
		Agent: agent.New(agent.Options{ConnectTimeout: cfg.Poll.ConnectTimeout.Std(), MaxReplySize: int(cfg.Poll.MaxReplySize),
			Metrics: selfmon.NewRegistry(), Logger: log.With("component", "netdisc", "checker", "agent")}),
		TCP:            tcpsvc.New(tcpsvc.Options{Metrics: selfmon.NewRegistry(), Logger: log.With("component", "netdisc", "checker", "tcpsvc")}),
		Resolve:        reverseDNS,
		DiscoveryGroup: s.discoveryGroup,
		MaxInFlight:    cfg.Poll.SimpleMaxInFlight,
		Timeout:        cfg.Poll.DefaultTimeout.Std(),
		Metrics:        s.Metrics,
		Logger:         log.With("component", "netdisc"),
	})
	return err
}

// serverICMP is the server's ICMP checker, made after the discoverer
// (with the ways in): until it exists, pings find nothing.
type serverICMP struct{ s *Server }

func (c serverICMP) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	if c.s.icmp == nil {
		for i := range batch {
			done(&poll.Result{Check: batch[i], Status: poll.LocalError, Error: "ICMP checker not started", Clock: time.Now()})
		}
		return
	}
	c.s.icmp.Check(ctx, batch, done)
}

// reverseDNS is a discovered address's DNS name: the first name of a
// reverse lookup within a second, without its final dot. A loopback
// address is looked up in the hosts file only: a name server has nothing
// to say of 127.0.0.0/8, and asking one would send a packet off the
// machine for an address that never leaves it.
func reverseDNS(ctx context.Context, ip string) string {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	r := net.DefaultResolver
	if a, err := netip.ParseAddr(ip); err == nil && a.IsLoopback() {
		r = hostsOnly
	}
	names, err := r.LookupAddr(ctx, ip)
	if err != nil || len(names) == 0 {
		return ""
	}
	return strings.TrimSuffix(names[0], ".")
}

// discoveryMatches is the alert engine's Options.Discovery.
func (s *Server) discoveryMatches(a *catalog.Action, ev *event.Event) bool {
	return s.Discovery != nil && s.Discovery.Matches(a, ev)
}

// discoveryMacros is the alert engine's Options.DiscoveryMacros.
func (s *Server) discoveryMacros(ev *event.Event) map[string]string {
	if s.Discovery == nil {
		return nil
	}
	return s.Discovery.Macros(ev)
}

// hostsOnly resolves from the hosts file alone: its DNS dial fails
// before any packet is sent.
var hostsOnly = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
	return nil, errors.New("no name server for loopback addresses")
}}
