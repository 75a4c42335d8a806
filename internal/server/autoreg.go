package server

import (
	"context"
	"strconv"

	"github.com/peregrine-mon/peregrine/internal/autoreg"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/ingest"
	"github.com/peregrine-mon/peregrine/internal/internalev"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxtls"
)

// Auto-registration (s.Autoreg) and internal events (s.Internal): both
// commit their events through the event store and hand them to the
// alert engine only (services are computed from trigger problems).

// buildEventProducers makes s.Autoreg and s.Internal; called by
// buildRules once the alert engine exists.
func (s *Server) buildEventProducers() error {
	log := s.log
	store := notifyStore{s.Events, s.Alerts.Notify}
	var err error
	s.Autoreg, err = autoreg.New(autoreg.Options{Catalog: s.Catalog, Events: store, DiscoveryGroup: s.discoveryGroup,
		Metrics: s.Metrics, Logger: log.With("component", "autoreg")})
	if err != nil {
		return err
	}
	s.Internal, err = internalev.New(internalev.Options{Events: store, Metrics: s.Metrics, Logger: log.With("component", "internalev")})
	if err != nil {
		return err
	}
	s.ItemStates.OnChange(s.Internal.ItemState)
	return nil
}

// triggerStates tells internal events of triggers becoming unknown or
// normal, from the runtimes a trigger batch commits.
func (s *Server) triggerStates(b *event.Batch) {
	if s.Internal == nil {
		return
	}
	for _, r := range b.Runtimes {
		s.Internal.TriggerState(r.TriggerID, r.State == 1, r.Error)
	}
}

// discoveryGroup is the settings' discovery_groupid, the group new
// auto-registered hosts go to (0 if unset or unreadable).
func (s *Server) discoveryGroup() uint64 {
	if s.authStore == nil {
		return 0
	}
	cfg, err := s.authStore.Config(context.Background())
	if err != nil {
		return 0
	}
	id, _ := strconv.ParseUint(cfg["discovery_groupid"], 10, 64)
	if id != 0 && s.Catalog.Snapshot().GroupByID(id) == nil {
		return 0
	}
	return id
}

// autoRegister is the trapper's Options.AutoRegister: a host not in the
// catalog must register over a connection the autoregistration settings
// accept (tls_accept; with PSK, the autoregistration identity and key),
// as Zabbix 6.0 checks it; a known host's connection was checked
// against its own settings.
func (s *Server) autoRegister(r ingest.Registration) error {
	if !r.Known {
		set := s.Catalog.AutoregSettings()
		p := zbxtls.Policy{Accept: int(set.TLSAccept)}
		if k, ok := set.PSKKey(); ok {
			p.PSKIdentity, p.PSK = k.Identity, k.Secret
		}
		if err := p.Allow(r.Host, r.Peer); err != nil {
			return err
		}
	}
	s.Autoreg.Register(autoreg.Request{Host: r.Host, HostMetadata: r.HostMetadata, IP: r.IP, DNS: r.DNS, Port: r.Port,
		Flag: r.Flag, TLSAccepted: uint8(r.Peer.Type), Clock: r.Clock})
	return nil
}

// autoregMacros are an auto-registration event's macros.
func (s *Server) autoregMacros(ev *event.Event) map[string]string {
	h, ok := s.Autoreg.Lookup(ev.ObjectID)
	if !ok {
		return nil
	}
	m := map[string]string{"HOST.HOST": h.Host, "HOST.IP": h.IP, "HOST.DNS": h.DNS, "HOST.PORT": strconv.Itoa(int(h.Port)),
		"HOST.METADATA": h.HostMetadata, "PROXY.NAME": ""}
	if h.Port == 0 {
		m["HOST.PORT"] = "10050"
	}
	return m
}

// autoregMatches is the alert engine's Options.Autoreg.
func (s *Server) autoregMatches(a *catalog.Action, ev *event.Event) bool {
	return s.Autoreg != nil && s.Autoreg.Matches(a, ev)
}
