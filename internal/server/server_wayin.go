package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/ingest"
	"github.com/peregrine-mon/peregrine/internal/ingest/snmptrap"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/poll/agent"
	"github.com/peregrine-mon/peregrine/internal/poll/calc"
	"github.com/peregrine-mon/peregrine/internal/poll/external"
	httpagent "github.com/peregrine-mon/peregrine/internal/poll/http"
	"github.com/peregrine-mon/peregrine/internal/poll/icmp"
	"github.com/peregrine-mon/peregrine/internal/poll/ipmi"
	"github.com/peregrine-mon/peregrine/internal/poll/jmx"
	"github.com/peregrine-mon/peregrine/internal/poll/odbc"
	"github.com/peregrine-mon/peregrine/internal/poll/script"
	"github.com/peregrine-mon/peregrine/internal/poll/selfcheck"
	"github.com/peregrine-mon/peregrine/internal/poll/snmp"
	sshcheck "github.com/peregrine-mon/peregrine/internal/poll/ssh"
	"github.com/peregrine-mon/peregrine/internal/poll/tcpsvc"
	"github.com/peregrine-mon/peregrine/internal/poll/telnet"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxtls"
)

// openWaysIn is New's third stage: the pipeline and every way a value
// reaches it.
//
// Needs from the state stage: s.Catalog, s.Store, s.ValueCache,
// s.ItemStates and s.agentState; from the rules stage: s.Evaluator (the
// pipeline's commit hook queues triggers on it); and the zbx TLS
// material (nil without a tls section) for the trapper and the agent
// checker.
//
// Builds: s.Pipeline (committed batches go to the value cache, then the
// evaluator), the self-monitoring host on a data directory's first
// start, the pipeline's last values restored from s.Store, the checkers
// and s.Poller over them (s.icmp, s.httpAgent and s.odbc kept for
// closeAll; the odbc section sets ODBCINI and ODBCSYSINI),
// then, last, the listeners: s.Trapper (trapper and active agents) and
// s.SNMPTraps when snmp.trap_listen is set. Binding makes a port accept
// connections into the kernel's queue before Run serves them, so
// everything a request needs is ready first.
//
// A new way in (proxy data, discovery results, a new checker) is added
// here, submitting through s.Pipeline.
func (s *Server) openWaysIn(ctx context.Context, tlsMaterial *zbxtls.Material) error {
	cfg, log := s.cfg, s.log
	preState, err := s.pg.preprocessState() // nil: the file at StatePath
	if err != nil {
		return err
	}
	s.Pipeline, err = pipeline.New(pipeline.Options{
		StateStore: preState,
		// The value cache first: a pass the evaluator queues never reads
		// a cache that lacks the values that queued it.
		OnCommit: func(shard int, samples []history.Sample) {
			s.ValueCache.Add(shard, samples)
			s.Evaluator.Commit(shard, samples)
			s.LLD.Commit(shard, samples)
		},
		Shards:      cfg.Pipeline.EffectiveShards(),
		QueueValues: cfg.Pipeline.QueueValues,
		MaxBatch:    cfg.Pipeline.MaxBatch,
		Store:       s.Store,
		// Values are refused whole, before any write, while the store
		// cannot take them (health.go).
		Admit:      s.storageErr,
		Metrics:    s.Metrics,
		Logger:     log.With("component", "pipeline"),
		Catalog:    s.Catalog.Snapshot,
		ItemStates: s.ItemStates,
		StatePath:  PreprocessStatePath(cfg.DataDir),
		JS:         s.JS,
	})
	if err != nil {
		return err
	}
	if err := s.ensureSelfHost(ctx); err != nil {
		return err
	}
	if err := s.seedLastValues(ctx); err != nil {
		return err
	}
	warnOpenFiles(cfg, log)
	if err := s.buildPoller(tlsMaterial); err != nil {
		return err
	}
	// Listeners last.
	s.Trapper, err = ingest.New(ingest.Options{
		Listen:           cfg.Trapper.Listen,
		MaxConnections:   cfg.Trapper.MaxConnections,
		MaxFrameSize:     int64(cfg.Trapper.MaxFrameSize),
		MaxBufferedBytes: int64(cfg.Trapper.MaxBufferedBytes),
		Timeout:          cfg.Trapper.Timeout.Std(),
		IdleTimeout:      cfg.Trapper.IdleTimeout.Std(),
		Catalog:          s.Catalog,
		Pipeline:         s.Pipeline,
		ItemStates:       s.ItemStates,
		LogPositions:     s.agentState,
		TLS:              trapperTLS(tlsMaterial),
		PSK:              trapperPSK(s.Catalog),
		AutoRegister:     s.autoRegister,
		AutoregSettings:  s.Catalog.AutoregSettings,
		ProxyExtras:      s.proxyExtras,
		DRules:           s.Catalog.DRules,
		Queue:            s.trapperQueue, // hanode_queue.go: a standby's queue.get asks here
		Metrics:          s.Metrics,
		Logger:           log.With("component", "trapper"),
	})
	if err != nil {
		return err
	}
	logPSK(log, s.Catalog.Snapshot())
	s.passive = ingest.PassiveOptions{ConfigFrequency: cfg.Proxy.ConfigFrequency.Std(), DataFrequency: cfg.Proxy.DataFrequency.Std()}
	if tlsMaterial != nil {
		s.passive.CertTLS = tlsMaterial.ClientConfig
	}
	if cfg.SNMP.TrapListen != "" {
		users := make([]snmptrap.User, len(cfg.SNMP.TrapUsers))
		for i, u := range cfg.SNMP.TrapUsers {
			users[i] = snmptrap.User{SecurityName: u.SecurityName, EngineID: u.EngineIDBytes(), SecurityLevel: u.SecurityLevel,
				AuthProtocol: u.AuthProtocol, AuthPassphrase: u.AuthPassphrase, PrivProtocol: u.PrivProtocol, PrivPassphrase: u.PrivPassphrase}
		}
		s.SNMPTraps, err = snmptrap.New(snmptrap.Options{
			Listen:   cfg.SNMP.TrapListen,
			Users:    users,
			Snapshot: s.Catalog.Snapshot,
			// One item's slow script must not hold the other results.
			Submit:     func(v []history.Sample) error { return s.Pipeline.Submit(v, pipeline.NewTicketNoScripts()) },
			ItemStates: s.ItemStates,
			Metrics:    s.Metrics,
			Logger:     log.With("component", "snmptrap"),
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// buildPoller makes the checker of every polled item type and the
// scheduler over them (s.Poller), which submits through s.Pipeline.
// Nothing is checked before Run.
func (s *Server) buildPoller(tlsMaterial *zbxtls.Material) error {
	cfg, log := s.cfg, s.log
	calcChecker, err := calc.New(calc.Options{
		Snapshot: s.Catalog.Snapshot,
		Store:    s.Store,
		Values:   s.ValueCache,
		Started:  s.started,
		Logger:   log.With("component", "poll", "checker", "calculated"),
	})
	if err != nil {
		return err
	}
	icmpSocket := cfg.Poll.ICMPSocket
	if icmpSocket == "auto" {
		icmpSocket = icmp.ModeAuto
	}
	s.icmp = icmp.New(icmp.Options{
		Rate:    cfg.Poll.ICMPRate,
		Socket:  icmpSocket,
		Metrics: s.Metrics,
		Logger:  log.With("component", "poll", "checker", "icmp"),
	})
	s.httpAgent = httpagent.New(httpagent.Options{
		Item:            func(id uint64) *catalog.Item { return s.Catalog.Snapshot().Item(id) },
		HTTPTest:        func(id uint64) *catalog.HTTPTest { return s.Catalog.Snapshot().HTTPTestOfItem(id) },
		MaxBodySize:     int64(cfg.Poll.HTTPMaxBodySize),
		MaxHeaderSize:   int64(cfg.Poll.HTTPMaxHeaderSize),
		MaxConnsPerHost: cfg.Poll.HTTPMaxConnsPerHost,
		DefaultTimeout:  cfg.Poll.DefaultTimeout.Std(),
		Metrics:         s.Metrics,
		Logger:          log.With("component", "poll", "checker", "http"),
	})
	s.ipmi = ipmi.New(ipmi.Options{
		Item:              func(id uint64) *catalog.Item { return s.Catalog.Snapshot().Item(id) },
		MaxSessionsPerBMC: cfg.Poll.IPMIMaxSessionsPerBMC,
		IdleClose:         cfg.Poll.IPMIIdleClose.Std(),
		DefaultTimeout:    cfg.Poll.DefaultTimeout.Std(),
		Metrics:           s.Metrics,
		Logger:            log.With("component", "poll", "checker", "ipmi"),
	})
	sshChecker, err := sshcheck.New(sshcheck.Options{
		Item:           func(id uint64) *catalog.Item { return s.Catalog.Snapshot().Item(id) },
		KeyDir:         cfg.Poll.SSHKeyLocation,
		KnownHosts:     cfg.Poll.SSHKnownHosts,
		MaxOutput:      int(cfg.Poll.CommandMaxOutput),
		DefaultTimeout: cfg.Poll.DefaultTimeout.Std(),
		Metrics:        s.Metrics,
		Logger:         log.With("component", "poll", "checker", "ssh"),
	})
	if err != nil {
		return err
	}
	if s.odbc, err = s.buildODBC(); err != nil {
		return err
	}
	s.Poller, err = poll.New(poll.Options{
		Catalog: s.Catalog,
		// One item's slow script must not hold the other results.
		Submit:     func(v []history.Sample) error { return s.Pipeline.Submit(v, pipeline.NewTicketNoScripts()) },
		ItemStates: s.ItemStates,
		Checkers: map[catalog.ItemType]poll.CheckerSpec{
			catalog.ZabbixAgent: {
				Checker: agent.New(agent.Options{
					ConnectTimeout: cfg.Poll.ConnectTimeout.Std(),
					MaxReplySize:   int(cfg.Poll.MaxReplySize),
					TLS:            agentTLS(s.Catalog, tlsMaterial),
					Metrics:        s.Metrics,
					Logger:         log.With("component", "poll", "checker", "agent"),
				}),
				MaxInFlight: cfg.Poll.AgentMaxInFlight,
			},
			catalog.SNMPAgent: {
				Checker: snmp.New(snmp.Options{
					Snapshot:          s.Catalog.Snapshot,
					MaxOIDsPerRequest: cfg.SNMP.MaxOIDsPerRequest,
					MaxRepetitions:    cfg.SNMP.MaxRepetitions,
					MaxWalkValues:     cfg.SNMP.MaxWalkValues,
					MaxValueSize:      int(cfg.Poll.MaxReplySize),
					IdleClose:         cfg.SNMP.IdleClose.Std(),
					Metrics:           s.Metrics,
					Logger:            log.With("component", "poll", "checker", "snmp"),
				}),
				MaxInFlight: cfg.SNMP.MaxInFlight,
			},
			catalog.Internal:   {Checker: s.selfChecker(), NoInterface: true},
			catalog.Calculated: {Checker: calcChecker, NoInterface: true},
			// Simple checks: ICMP ping, TCP services and web pages, by key.
			catalog.SimpleCheck: {
				Checker: &poll.KeyRouter{Routes: []poll.Route{
					{Match: icmp.IsKey, Checker: s.icmp},
					{Match: tcpsvc.IsKey, Checker: tcpsvc.New(tcpsvc.Options{
						Metrics: s.Metrics,
						Logger:  log.With("component", "poll", "checker", "tcpsvc"),
					})},
					{Match: httpagent.IsWebPageKey, Checker: s.httpAgent.WebPage()},
				}},
				MaxInFlight:    cfg.Poll.SimpleMaxInFlight,
				NoAvailability: true,
			},
			// HTTP agent items: the URL says where; no interface, no
			// availability (Zabbix keeps none for them).
			catalog.HTTPAgent: {Checker: s.httpAgent, MaxInFlight: cfg.Poll.HTTPMaxInFlight, NoInterface: true},
			catalog.WebItem:   {Checker: s.httpAgent.Scenarios(), MaxInFlight: cfg.Poll.HTTPMaxInFlight, NoInterface: true},
			// IPMI items: through the host's IPMI interface, whose
			// availability they keep, as Zabbix's IPMI pollers do.
			catalog.IPMI: {Checker: s.ipmi, MaxInFlight: cfg.Poll.IPMIMaxInFlight},
			// JMX items: through the Zabbix Java gateway (jmx section),
			// batched per JMX interface, endpoint and credentials; the
			// interface's availability counts, as in Zabbix.
			catalog.JMX: {
				Checker: jmx.New(jmx.Options{
					Gateway:        cfg.JMX.Addr(),
					MaxConns:       cfg.JMX.MaxConnections,
					MaxKeys:        cfg.JMX.MaxKeysPerRequest,
					MaxReplySize:   int(cfg.JMX.MaxReplySize),
					DefaultTimeout: cfg.Poll.DefaultTimeout.Std(),
					Item:           func(id uint64) *catalog.Item { return s.Catalog.Snapshot().Item(id) },
					Metrics:        s.Metrics,
					Logger:         log.With("component", "poll", "checker", "jmx"),
				}),
				MaxInFlight: cfg.JMX.MaxInFlight,
			},
			// Database monitor items: the key names the data source; no
			// interface, no availability (Zabbix keeps none for them).
			catalog.ODBC: {Checker: s.odbc, MaxInFlight: cfg.ODBC.MaxInFlight, NoInterface: true},
			// Script items: their JavaScript in the JavaScript workers
			// (s.JS, javascript.workers of their own kind), requests with
			// the webhooks' fetcher; no interface, no availability.
			catalog.Script: {
				Checker: script.New(script.Options{
					Item:           func(id uint64) *catalog.Item { return s.Catalog.Snapshot().Item(id) },
					JS:             s.JS,
					Fetch:          (&jsvm.HTTPFetcher{MaxBody: int64(cfg.Poll.HTTPMaxBodySize)}).Fetch,
					DefaultTimeout: cfg.Poll.DefaultTimeout.Std(),
					MaxValueSize:   int(cfg.Poll.MaxReplySize),
					Metrics:        s.Metrics,
					Logger:         log.With("component", "poll", "checker", "script"),
				}),
				NoInterface: true,
			},
			// External checks and nagios[] plugins: processes from the
			// configured directories; like simple checks they may name an
			// interface but keep no availability (Zabbix keeps none).
			catalog.External: {
				Checker: external.New(external.Options{
					Dirs:           cfg.Poll.ExternalScripts,
					MaxProcesses:   cfg.Poll.ExternalMaxProcesses,
					MaxOutput:      int(cfg.Poll.ExternalMaxOutput),
					DefaultTimeout: cfg.Poll.DefaultTimeout.Std(),
					Metrics:        s.Metrics,
					Logger:         log.With("component", "poll", "checker", "external"),
				}),
				NoAvailability: true,
			},
			// SSH and Telnet checks connect to their interface's address
			// (or the key's) but, as in Zabbix, keep no availability:
			// their failures make the item not supported.
			catalog.SSHAgent: {Checker: sshChecker, NoAvailability: true},
			catalog.TelnetAgent: {
				Checker: telnet.New(telnet.Options{
					Item:           func(id uint64) *catalog.Item { return s.Catalog.Snapshot().Item(id) },
					MaxOutput:      int(cfg.Poll.CommandMaxOutput),
					DefaultTimeout: cfg.Poll.DefaultTimeout.Std(),
					Metrics:        s.Metrics,
					Logger:         log.With("component", "poll", "checker", "telnet"),
				}),
				NoAvailability: true,
			},
		},
		MaxInFlight:       cfg.Poll.MaxInFlight,
		MaxInFlightBehind: cfg.Poll.MaxInFlightBehind,
		DefaultTimeout:    cfg.Poll.DefaultTimeout.Std(),
		UnreachablePeriod: cfg.Poll.UnreachablePeriod.Std(),
		UnreachableDelay:  cfg.Poll.UnreachableDelay.Std(),
		UnavailableDelay:  cfg.Poll.UnavailableDelay.Std(),
		StampTolerance:    cfg.Poll.TimestampTolerance.Std(),
		Metrics:           s.Metrics,
		Logger:            log.With("component", "poll"),
	})
	return err
}

// buildODBC makes the database monitor checker, pointing unixODBC at
// the configured odbc.ini and system directory first (ODBCINI and
// ODBCSYSINI: unixODBC reads them from the environment at each connect).
func (s *Server) buildODBC() (*odbc.Checker, error) {
	cfg := s.cfg.ODBC
	for _, e := range []struct{ name, v string }{{"ODBCINI", cfg.Ini}, {"ODBCSYSINI", cfg.SysIniDir}} {
		if e.v == "" {
			continue
		}
		if err := os.Setenv(e.name, e.v); err != nil {
			return nil, fmt.Errorf("cannot set %s for unixODBC: %w", e.name, err)
		}
	}
	return odbc.New(odbc.Options{
		Item:              func(id uint64) *catalog.Item { return s.Catalog.Snapshot().Item(id) },
		Workers:           cfg.Workers,
		MaxConnsPerSource: cfg.MaxConnsPerSource,
		IdleTimeout:       cfg.IdleTimeout.Std(),
		MaxValueSize:      int(cfg.MaxValueSize),
		DefaultTimeout:    s.cfg.Poll.DefaultTimeout.Std(),
		Metrics:           s.Metrics,
		Logger:            s.log.With("component", "poll", "checker", "odbc"),
	}), nil
}

// seedLastValues restores the pipeline's last and previous value of every
// catalog item from the store, before anything listens, so that item.get
// shows them from the first request after a restart. A failed read costs
// that item its last value until new ones arrive, not the start: it is
// logged, not returned; only cancellation is.
func (s *Server) seedLastValues(ctx context.Context) error {
	start := time.Now()
	var items []uint64
	for _, h := range s.Catalog.Snapshot().Hosts() {
		for _, it := range h.Items() {
			items = append(items, it.ID)
		}
	}
	n, err := s.Pipeline.Seed(ctx, s.Store, items)
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("start cancelled while restoring last values: %w", err)
	case err != nil:
		s.log.Error("cannot restore the last values of some items; item.get shows them once new values arrive", "items", len(items), "restored", n, "err", err)
	default:
		s.log.Info("last values restored from history", "items", len(items), "with_values", n, "duration", time.Since(start))
	}
	return nil
}

// selfChecker answers internal items from this server's figures. The
// stages are read through closures: the trapper is created after the
// poller, and no check runs before Run.
func (s *Server) selfChecker() *selfcheck.Checker {
	return selfcheck.New(selfcheck.Options{
		Figures: selfcheck.Figures{
			ValuesWritten:     s.Pipeline.ValuesCommitted,
			NotSupportedTotal: s.ItemStates.NotSupportedTotal,
			QueueRange:        func(from, to int64) int { return s.Poller.QueueRange(from, to) },
			Snapshot:          s.Catalog.Snapshot,
			CountNotSupported: s.ItemStates.CountNotSupported,
			Busy:              s.busyOf,
			ProxyLastAccess:   func(id uint64) int64 { return s.Trapper.ProxyLastAccess(id) },
			Started:           s.started,
			Version:           Version,
			ClusterNodes:      s.clusterNodes(),
		},
		Logger: s.log.With("component", "poll", "checker", "internal"),
	})
}

// busyOf is the busy meter of a stage, by zabbix[process,<type>] name.
func (s *Server) busyOf(process string) (*selfmon.Busy, bool) {
	switch process {
	case "poller":
		return s.Poller.Busy(), true
	case "trapper":
		return s.Trapper.Busy(), true
	case "pipeline shard":
		return s.Pipeline.Busy(), true
	case "housekeeper":
		return s.Housekeep.Busy(), true
	}
	return nil, false
}

// warnOpenFiles says so at start when the checks in flight and the
// trapper's connections together could exhaust the open-files limit:
// each holds a socket, and checks that cannot get one fail as local
// errors (counted), which an operator should hear about before load.
func warnOpenFiles(cfg config.Config, log *slog.Logger) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return
	}
	need := uint64(cfg.Poll.MaxInFlight) + uint64(cfg.Trapper.MaxConnections) + 1024
	if need > rl.Cur {
		log.Warn("the open files limit is below poll.max_in_flight + trapper.max_connections + 1024: under load, checks may fail for want of a socket; raise the limit (LimitNOFILE=) or lower poll.max_in_flight",
			"limit", rl.Cur, "poll.max_in_flight", cfg.Poll.MaxInFlight, "trapper.max_connections", cfg.Trapper.MaxConnections)
	}
}
