package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/autoreg"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/ingest"
	"github.com/peregrine-mon/peregrine/internal/internalev"
	"github.com/peregrine-mon/peregrine/internal/netdisc"
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
	if s.pg != nil {
		s.autoregStore, err = autoreg.OpenStorePG(context.Background(), s.pg.db, s.pg.writeSQL, "")
	} else {
		s.autoregStore, err = autoreg.OpenStore(context.Background(), AutoregStatePath(s.cfg.DataDir))
	}
	if err != nil {
		return err
	}
	s.Autoreg, err = autoreg.New(autoreg.Options{Catalog: s.Catalog, Events: store, DiscoveryGroup: s.discoveryGroup,
		Store: s.autoregStore, Metrics: s.Metrics, Logger: log.With("component", "autoreg")})
	if err != nil {
		return err
	}
	s.Internal, err = internalev.New(internalev.Options{Events: store, Metrics: s.Metrics, Logger: log.With("component", "internalev")})
	if err != nil {
		return err
	}
	// A discovery rule's state (its value's, from the LLD engine, or its
	// collection's, from the poller) is an internal event of an LLD rule
	// (object 5), as 6.0 has it, not of an item.
	s.ItemStates.OnChange(func(id uint64, notSupported bool, err string) {
		if it := s.Catalog.Snapshot().AnyItem(id); it != nil && it.Ext().LLD != nil {
			s.Internal.LLDRuleState(id, notSupported, err)
			return
		}
		s.Internal.ItemState(id, notSupported, err)
	})
	return s.buildDiscovery()
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

// proxyAutoregRow is one row of the "auto registration" part of a
// proxy's "proxy data", as the 6.0 proxy sends it: the port as a
// string or a number.
type proxyAutoregRow struct {
	Clock        int64           `json:"clock"`
	Host         string          `json:"host"`
	IP           string          `json:"ip"`
	DNS          string          `json:"dns"`
	Port         json.RawMessage `json:"port"`
	HostMetadata string          `json:"host_metadata"`
	Flags        int             `json:"flags"`
	TLSAccepted  uint8           `json:"tls_accepted"`
}

// proxyExtras takes the discovery and auto-registration parts of a
// proxy's data, active or passive. The discovery rows go through the
// discoverer as its own sweeps' results do (netdisc.ApplyProxy); an
// error storing them refuses the request, which the proxy sends again
// (rows taken before are not taken twice). Each auto-registration row
// then registers as an agent talking to the server would, with the
// proxy as its proxy (the proxy applied the encryption policy itself).
func (s *Server) proxyExtras(p *catalog.Proxy, autoReg, discovery []byte) error {
	if len(discovery) > 0 && s.Discovery != nil {
		rows, err := netdisc.DecodeProxyResults(discovery)
		if err != nil {
			return fmt.Errorf("proxy %q: %w", p.Name, err)
		}
		if _, err := s.Discovery.ApplyProxy(context.Background(), p.ID, rows); err != nil {
			return fmt.Errorf("proxy %q: %w: %w", p.Name, ingest.ErrProxyStore, err)
		}
	}
	if len(autoReg) == 0 || s.Autoreg == nil {
		return nil
	}
	var rows []proxyAutoregRow
	if err := json.Unmarshal(autoReg, &rows); err != nil {
		return fmt.Errorf("cannot read the auto registration part of proxy %q's data: %w", p.Name, err)
	}
	for _, r := range rows {
		if r.Host == "" {
			continue
		}
		port, err := strconv.ParseUint(strings.Trim(string(r.Port), `"`), 10, 16)
		if err != nil && len(r.Port) > 0 && string(r.Port) != `""` {
			return fmt.Errorf("proxy %q: auto registration of host %q: port %s is not a port number", p.Name, r.Host, r.Port)
		}
		s.Autoreg.Register(autoreg.Request{Host: r.Host, HostMetadata: r.HostMetadata, IP: r.IP, DNS: r.DNS, Port: uint16(port),
			Flag: r.Flags, TLSAccepted: r.TLSAccepted, ProxyID: p.ID, Clock: time.Unix(r.Clock, 0)})
	}
	return nil
}
