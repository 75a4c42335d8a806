package ingest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/itemstate"
	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

// Catalog gives the trapper the current configuration snapshot.
type Catalog interface {
	Snapshot() *catalog.Snapshot
}

// Submitter takes accepted values and returns once they are stored.
type Submitter interface {
	Submit(values []history.Sample, t *pipeline.Ticket) error
}

// ItemStates records items' supported state (Zabbix item.get "state"
// and "error"); *itemstate.Registry implements it. Setting the zero
// ItemState (normal) on a normal item MUST be cheap: every stored active
// value does it.
type ItemStates interface {
	SetItemState(item uint64, s itemstate.Item)
}

// LogPositionStore keeps active log items' positions; *LogPositions is
// the durable one.
type LogPositionStore interface {
	// Get returns an item's position as last saved.
	Get(item uint64) (LogPos, bool)
	// Save records positions (parallel slices; a later entry for the
	// same item wins) and MUST NOT return nil before they are durable.
	Save(items []uint64, pos []LogPos) error
}

// Options configures a trapper Server.
type Options struct {
	// Listener to serve; if nil, Listen is used.
	Listener net.Listener
	Listen   string

	// MaxConnections bounds the connections served at once.
	MaxConnections int
	// MaxFrameSize bounds a frame's payload, compressed and inflated.
	MaxFrameSize int64
	// MaxBufferedBytes bounds the memory all connections hold for their
	// requests (frames, inflated payloads, decoded rows and values); one
	// connection holds at most 7/8 of it. See the package doc.
	MaxBufferedBytes int64
	// Timeout bounds reading one frame, waiting for memory for it, and
	// writing its reply; IdleTimeout bounds the wait for a further frame.
	Timeout     time.Duration
	IdleTimeout time.Duration

	Catalog  Catalog
	Pipeline Submitter
	// ItemStates, if set, receives the supported state of active items:
	// not supported with the agent's (or the conversion's) message, or
	// normal again once a value is stored. *itemstate.Registry.
	ItemStates ItemStates
	// LogPositions, if set, keeps active log items' lastlogsize and mtime
	// (see LogPositions); without it agents always resume from 0.
	LogPositions LogPositionStore
	// MaxAgentSessions bounds the active-agent sessions remembered to
	// detect retransmitted rows (default 100,000, about 120 bytes each).
	MaxAgentSessions int
	// MaxActiveAgents bounds the catalog hosts whose latest "active
	// checks" details (host_metadata, ...) are kept (default 100,000);
	// MaxUnknownAgents the hosts not in the catalog, kept for
	// auto-registration (default 10,000).
	MaxActiveAgents  int
	MaxUnknownAgents int
	// TLS, if set, is the server side of encrypted connections
	// (zbxtls.Material.ServerConfig): a connection whose first byte opens
	// a TLS handshake is served through it. Without it such connections
	// are refused (tls_not_configured). Hosts' tls_accept, tls_issuer and
	// tls_subject are checked per request either way.
	TLS *tls.Config
	// PSK, if set, returns the pre-shared key of an identity a client
	// presents (ok false for none): the wiring answers from the hosts'
	// tls_psk_identity and tls_psk, and is where proxies' and
	// autoregistration's keys will join. A connection that asks for a
	// key is refused without it (tls_psk_unknown_identity), and without
	// OpenSSL in this build (tls_psk_unsupported). The key must not be
	// kept by the caller beyond the call's connection.
	PSK func(identity string) (key []byte, ok bool)
	// ProxyExtras, if set, takes the auto-registration and discovery
	// parts of a proxy's "proxy data", active or passive (raw JSON, nil
	// when absent) before its history is stored; an error refuses the
	// whole request (wrapping ErrProxyStore: counted as store_error),
	// which the proxy then resends. Without it they are
	// counted (peregrine_trapper_proxy_unprocessed_parts_total), logged
	// and not acted on, as by a Zabbix server with no such actions.
	ProxyExtras func(p *catalog.Proxy, autoReg, discovery []byte) error
	// DRules, if set, returns the discovery rules; those of a proxy go
	// in its configuration (*catalog.Catalog's DRules).
	DRules func() []catalog.DRule
	// Queue, if set, answers Zabbix's frontend request "queue.get" with
	// the reply it returns for the request's payload (the server's
	// poller queue, asked for by an HA standby as 6.0's frontend asks
	// the active node); unset, the request is refused as unsupported.
	Queue func(payload []byte) []byte
	// AutoRegister, if set, receives the Registration of every "active
	// checks" request that passed the host name checks: of hosts not in
	// the catalog, and of enabled hosts in it whose encryption settings
	// allowed the connection (6.0 registers known hosts again when their
	// metadata changes). It MUST NOT block (queue and return); an error
	// is a refusal by the autoregistration encryption policy, answered
	// and counted as tls_refused. The server wires *autoreg.Registrar.
	AutoRegister func(r Registration) error
	// AutoregSettings, if set, returns the autoregistration encryption
	// settings sent to proxies in their configuration (config's
	// autoreg_tls_accept and config_autoreg_tls), which they apply to
	// the agents registering through them; without it 6.0's defaults
	// (unencrypted only) are sent.
	AutoregSettings func() catalog.AutoregSettings
	Metrics         *selfmon.Registry
	Logger          *slog.Logger
	// Now returns the receive time given to values without a clock;
	// tests replace it.
	Now func() time.Time
	// keepIdle is how long a persistent connection waits for its next
	// frame before trimming its buffers (conn.go); tests shorten it.
	keepIdle time.Duration
}

func (o *Options) ensureDefaults() error {
	if o.Catalog == nil || o.Pipeline == nil {
		return errors.New("ingest: Options.Catalog and Options.Pipeline are required")
	}
	if o.MaxConnections <= 0 {
		o.MaxConnections = 4096
	}
	if o.keepIdle <= 0 {
		o.keepIdle = keepIdle
	}
	if o.MaxFrameSize <= 0 {
		o.MaxFrameSize = 128 << 20
	}
	if o.MaxBufferedBytes < o.MaxFrameSize {
		o.MaxBufferedBytes = max(512<<20, o.MaxFrameSize)
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 30 * time.Second
	}
	if o.MaxAgentSessions <= 0 {
		o.MaxAgentSessions = 100_000
	}
	if o.MaxActiveAgents <= 0 {
		o.MaxActiveAgents = 100_000
	}
	if o.MaxUnknownAgents <= 0 {
		o.MaxUnknownAgents = 10_000
	}
	if o.Metrics == nil {
		o.Metrics = selfmon.NewRegistry()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// Server is the trapper listener.
type Server struct {
	opts  Options
	ln    net.Listener
	slots chan struct{}
	// active counts accepted connections being served. It is not
	// len(slots): Run takes a slot before Accept, so that the bound holds
	// in the kernel's backlog, and a slot waiting in Accept is not a
	// connection.
	active   atomic.Int64
	budget   *byteBudget
	m        *metrics
	throttle *selfmon.LogThrottle
	sessions *sessions
	agents   *agentRegistry
	proxies  proxyState
	tasks    proxyTasks
	pm       *proxyMetrics

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// New binds the listener (unless one is given) so that Addr is known
// before Run.
func New(opts Options) (*Server, error) {
	if err := opts.ensureDefaults(); err != nil {
		return nil, err
	}
	ln := opts.Listener
	if ln == nil {
		var err error
		ln, err = net.Listen("tcp", opts.Listen)
		if err != nil {
			return nil, fmt.Errorf("cannot listen for the trapper on %s (set trapper.listen): %w", opts.Listen, err)
		}
	}
	s := &Server{
		opts:     opts,
		ln:       ln,
		slots:    make(chan struct{}, opts.MaxConnections),
		budget:   newByteBudget(opts.MaxBufferedBytes),
		throttle: selfmon.NewLogThrottle(opts.Logger, 10*time.Second),
		sessions: newSessions(opts.MaxAgentSessions),
		agents:   newAgentRegistry(opts.MaxActiveAgents, opts.MaxUnknownAgents),
		conns:    map[net.Conn]struct{}{},
	}
	s.m = newMetrics(opts.Metrics, s)
	s.pm = newProxyMetrics(opts.Metrics)
	return s, nil
}

// Close closes the listener; Run closes it itself when its context ends.
func (s *Server) Close() error { return s.ln.Close() }

// Addr is the address the trapper listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Run accepts connections until ctx is done, then closes the listener,
// lets the requests in progress finish and returns.
func (s *Server) Run(ctx context.Context) error {
	s.opts.Logger.Info("trapper listening", "addr", s.ln.Addr().String())
	stop := context.AfterFunc(ctx, func() { s.ln.Close() })
	defer stop()
	var err error
	for {
		// Take a slot before accepting: connections beyond the bound wait
		// in the kernel's backlog rather than in our memory.
		select {
		case s.slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		var c net.Conn
		c, err = s.ln.Accept()
		if err != nil {
			<-s.slots
			if ctx.Err() != nil {
				err = nil
				break
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				err = nil
				break
			}
			s.opts.Logger.Error("trapper accept failed", "err", err)
			time.Sleep(50 * time.Millisecond) // e.g. out of file descriptors
			continue
		}
		s.m.connections.Inc()
		s.active.Add(1)
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { s.active.Add(-1); <-s.slots }()
			s.serve(ctx, c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
	// Connections idle between frames are closed now; a connection in the
	// middle of a request finishes it (the pipeline drains after us).
	s.mu.Lock()
	for c := range s.conns {
		c.SetReadDeadline(time.Now())
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}
