package clickhouse

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/record"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/wal"
)

// Defaults for zero Options fields.
const (
	DefaultDatabase      = "peregrine"
	DefaultBatchSize     = 100_000
	DefaultFlushInterval = time.Second
	DefaultSpoolLimit    = 20_000_000
	DefaultRetryInterval = time.Second
	DefaultQueryTimeout  = 60 * time.Second
)

// maxClock is the last second a DateTime column holds (2106-02-07).
const maxClock = 1<<32 - 1

// ErrSpoolFull is returned by Write when the unshipped values reach
// Options.SpoolLimit: ClickHouse has been unreachable (or refusing
// inserts) for long enough that the spool would outgrow its bound.
// ErrReadOnly is Write's error on a store opened with Options.ReadOnly.
var ErrReadOnly = errors.New("clickhouse: this history store is open for reading only (an HA standby node): values are written by the active node")

var ErrSpoolFull = errors.New("clickhouse spool is full: ClickHouse has not accepted inserts for a while; see the shipping errors in the log and peregrine_clickhouse_ship_errors_total")

// Options configures a Store.
type Options struct {
	URLs     []string // HTTP(S) endpoints of equivalent servers (or of a Distributed table's servers)
	Database string   // default DefaultDatabase
	User     string
	Password string // never logged
	TLS      *tls.Config

	// Dir holds the spool: a WAL of acknowledged values not yet in
	// ClickHouse. Sync and SyncInterval are its fsync policy, as for the
	// embedded engine.
	Dir          string
	Sync         wal.SyncMode
	SyncInterval time.Duration

	BatchSize     int           // most rows per INSERT; also ships early once this many are spooled
	FlushInterval time.Duration // longest time a value waits in the spool before shipping starts
	SpoolLimit    int64         // most unshipped values; Write fails beyond it
	RetryInterval time.Duration // wait after a failed insert before the next attempt
	QueryTimeout  time.Duration // per HTTP request
	TTL           time.Duration // table TTL where the server supports it; 0 = none

	// Cluster is the name of a cluster in the servers' remote_servers.
	// When set, URLs are the cluster's shards, one server each, in the
	// cluster's shard order; Peregrine creates local tables and
	// Distributed <table>_all tables on each and reads through the
	// latter. DirectWrites inserts each item's rows into its shard's local
	// table (itemid modulo the shard count, the Distributed table's own
	// rule for equal weights) instead of through the Distributed table.
	Cluster      string
	DirectWrites bool

	// Ack is when a Write returns: AckSpooled (the default: in the
	// spool's WAL under Dir) or AckInserted (once ClickHouse accepted
	// the insert holding the values, group-committed with the writes
	// that arrived meanwhile, waiting at most AckTimeout; no spool, a
	// spool left in Dir is inserted at Open). See ackinsert.go.
	Ack        string
	AckTimeout time.Duration // default DefaultAckTimeout

	// ReadOnly opens the store for reads only, as an HA standby node
	// does: no schema migration (the active node made the tables), no
	// spool, no inserter; Write fails with ErrReadOnly. Dir is not used.
	ReadOnly bool

	Metrics *selfmon.Registry // nil: a private registry
	Logger  *slog.Logger      // nil: discard
}

func (o *Options) defaults() {
	if o.Database == "" {
		o.Database = DefaultDatabase
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = DefaultFlushInterval
	}
	if o.SpoolLimit <= 0 {
		o.SpoolLimit = DefaultSpoolLimit
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = DefaultRetryInterval
	}
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = DefaultQueryTimeout
	}
	if o.Ack == "" {
		o.Ack = AckSpooled
	}
	if o.AckTimeout <= 0 {
		o.AckTimeout = DefaultAckTimeout
	}
	if o.Metrics == nil {
		o.Metrics = selfmon.NewRegistry()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// gen is one generation of the spool: the values written between two
// cuts of the WAL. Once sealed, every one of its values lies in WAL
// segments before segEnd, so shipping it lets the WAL drop them.
type gen struct {
	items  map[uint64][]history.Sample // per item, in write order
	n      int64
	segEnd int
}

func newGen() *gen { return &gen{items: map[uint64][]history.Sample{}} }

func (g *gen) add(v []history.Sample) {
	for i := range v {
		s := v[i]
		if s.Log != nil { // the caller may reuse it
			lm := *s.Log
			s.Log = &lm
		}
		g.items[s.ItemID] = append(g.items[s.ItemID], s)
	}
	g.n += int64(len(v))
}

// Store is the ClickHouse history backend. See the package documentation.
type Store struct {
	o      Options
	c      *client   // all URLs, failing over: reads, version, schema checks
	shards []*client // one per URL: DDL, retention, direct writes
	suffix string    // "_all" with a cluster: the tables reads and routed writes use
	db     string
	ver    Version
	feat   Features
	log    *slog.Logger
	wal    *wal.WAL

	// sealMu orders writers against sealing: a writer holds it shared
	// from its WAL append until its values are in cur, and sealing holds
	// it exclusively across the WAL cut and the swap of cur, so a sealed
	// generation holds exactly the records before its cut.
	sealMu sync.RWMutex
	// mu guards the spool (cur, sealed, spooled) and types.
	mu      sync.Mutex
	cur     *gen
	sealed  []*gen // oldest first; sealed[0] is being shipped
	spooled int64
	types   map[uint64]uint8 // item -> bit set of the tables holding its values, | known
	// AckInserted mode: writes waiting for the inserter, and the last
	// insert's failure (nil after a success).
	queue    []*ackReq
	lastErr  error
	lastFail time.Time

	closed   atomic.Bool
	ctx      context.Context // canceled by Close: ends an insert in flight
	cancel   context.CancelFunc
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	verMu    sync.Mutex // guards lastVer: AckInserted inserts run concurrently
	lastVer  uint64
	throttle *selfmon.LogThrottle

	mShipped, mInserts, mRejected *selfmon.Counter
	mShipErr                      map[string]*selfmon.Counter
	mSpoolFull                    *selfmon.Counter
	mLag                          *selfmon.Gauge // seconds since the oldest unshipped generation was sealed
}

// Open connects to ClickHouse, detects its version, creates or migrates
// the schema, replays the spool and starts the shipper. ClickHouse must
// answer at Open (the schema must exist before anything is shipped);
// after that an outage only grows the spool.
func Open(ctx context.Context, o Options) (*Store, error) {
	o.defaults()
	if !identRE.MatchString(o.Database) {
		return nil, fmt.Errorf("clickhouse: database name %q must be letters, digits and _ (not starting with a digit)", o.Database)
	}
	if o.Ack != AckSpooled && o.Ack != AckInserted {
		return nil, fmt.Errorf("clickhouse: ack mode %q must be %q or %q", o.Ack, AckSpooled, AckInserted)
	}
	if o.Dir == "" && o.Ack == AckSpooled && !o.ReadOnly {
		return nil, errors.New("clickhouse: Options.Dir (the spool directory) is empty")
	}
	c, err := newClient(clientOptions{URLs: o.URLs, User: o.User, Password: o.Password, TLS: o.TLS, Timeout: o.QueryTimeout})
	if err != nil {
		return nil, err
	}
	if o.Cluster != "" && !identRE.MatchString(o.Cluster) {
		return nil, fmt.Errorf("clickhouse: cluster name %q must be letters, digits and _", o.Cluster)
	}
	s := &Store{o: o, c: c, db: o.Database, log: o.Logger, cur: newGen(), types: map[uint64]uint8{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		throttle: selfmon.NewLogThrottle(o.Logger, time.Minute)}
	vs, err := c.queryString(ctx, "SELECT version()")
	if err != nil {
		return nil, fmt.Errorf("clickhouse: cannot reach the server to check its version: %w", err)
	}
	if s.ver, err = parseVersion(vs); err != nil {
		return nil, err
	}
	s.feat = FeaturesOf(s.ver)
	s.shards = []*client{c}
	if o.Cluster != "" {
		s.suffix = "_all"
		s.shards = nil
		for _, u := range o.URLs {
			sc, err := newClient(clientOptions{URLs: []string{u}, User: o.User, Password: o.Password, TLS: o.TLS, Timeout: o.QueryTimeout})
			if err != nil {
				return nil, err
			}
			s.shards = append(s.shards, sc)
		}
	}
	if o.TTL > 0 && !s.feat.TTL {
		s.log.Warn("history.clickhouse.ttl is set but this ClickHouse has no table TTL; retention relies on partition drops only", "version", s.ver.String())
	}
	if o.ReadOnly {
		s.metrics()
		s.ctx, s.cancel = context.WithCancel(context.Background())
		close(s.done) // no shipper or inserter runs
		s.log.Info("clickhouse history store open for reading only", "version", vs, "database", s.db)
		return s, nil
	}
	var n int
	for _, sc := range s.shards {
		m, err := migrate(ctx, sc, s.db, s.feat, o.TTL, o.Cluster)
		if err != nil {
			return nil, err
		}
		n = max(n, m)
	}
	if s.inserted() {
		s.metrics()
		if err := s.drainSpool(ctx); err != nil {
			return nil, err
		}
		s.log.Info("clickhouse history store open; values are acknowledged once inserted", "version", vs, "codecs", s.feat.Codecs, "ttl", s.feat.TTL,
			"database", s.db, "migrations_applied", n, "ack_timeout", o.AckTimeout)
		s.ctx, s.cancel = context.WithCancel(context.Background())
		go s.insertLoop()
		return s, nil
	}
	s.wal, err = wal.Open(wal.Options{Dir: o.Dir, Sync: o.Sync, SyncInterval: o.SyncInterval, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	var buf []history.Sample
	err = s.wal.Replay(func(rec []byte) error {
		buf, err = record.DecodeSamples(buf[:0], rec)
		if err != nil {
			return err
		}
		s.cur.add(buf)
		for i := range buf {
			s.types[buf[i].ItemID] |= 1 << buf[i].Type
		}
		return nil
	})
	if err != nil {
		s.wal.Close()
		return nil, fmt.Errorf("clickhouse: replaying the spool in %s: %w", o.Dir, err)
	}
	s.spooled = s.cur.n
	s.metrics()
	s.log.Info("clickhouse history store open", "version", vs, "codecs", s.feat.Codecs, "ttl", s.feat.TTL,
		"database", s.db, "migrations_applied", n, "spooled_values", s.spooled)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	go s.ship()
	return s, nil
}

func (s *Store) metrics() {
	m := s.o.Metrics
	s.mShipped = m.Counter("peregrine_clickhouse_shipped_values_total", "Values inserted into ClickHouse by the shipper (a retried batch counts again).")
	s.mInserts = m.Counter("peregrine_clickhouse_inserts_total", "INSERT requests ClickHouse accepted.")
	s.mRejected = m.Counter("peregrine_clickhouse_rejected_values_total", "Values refused by Write before the spool: clock outside ClickHouse's DateTime range (1970 to 2106) or an invalid value type.")
	s.mSpoolFull = m.Counter("peregrine_clickhouse_spool_full_total", "Writes refused because the spool held history.clickhouse.spool_limit values.")
	s.mShipErr = map[string]*selfmon.Counter{}
	for _, k := range []string{"unreachable", "readonly", "quota", "disk_full", "too_many_parts", "server"} {
		s.mShipErr[k] = m.Counter("peregrine_clickhouse_ship_errors_total", "Failed INSERTs by cause; the values stay in the spool and are retried.", "kind", k)
	}
	s.mLag = m.Gauge("peregrine_clickhouse_spool_oldest_seconds", "Age of the oldest sealed, unshipped spool generation (0 when everything sealed is shipped).")
	m.GaugeFunc("peregrine_clickhouse_spool_values", "Acknowledged values not yet in ClickHouse (the backlog).", func() float64 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return float64(s.spooled)
	})
}

// resolveChunk bounds the items of one lookup in resolve: its query
// repeats the IN list once per table, and inChunk items five times over
// exceed 18.16's max_query_size (found by a history.get of 300k items).
const resolveChunk = inChunk / len(tables)

// known marks an item of Store.types whose tables in ClickHouse have
// been looked up; the low bits are the value types (1 << ValueType).
const known = 0x80

// resolve learns which tables hold each of items not looked up yet, with
// one query per chunk of items (a UNION ALL over the tables, each a
// primary-key lookup). Writes add their type bits themselves; resolve
// adds what was in ClickHouse before (an earlier run, or a value type
// the item had before a change). Lazily, not at Open: listing every item
// of a large installation would read the whole itemid column. A
// read-only store (a standby) looks every item up each time: another
// node writes, so what it learnt may be out of date by the next read.
func (s *Store) resolve(ctx context.Context, items []uint64) error {
	s.mu.Lock()
	var todo []uint64
	for _, id := range items {
		if s.types[id]&known == 0 || s.o.ReadOnly {
			todo = append(todo, id)
		}
	}
	s.mu.Unlock()
	if len(todo) == 0 {
		return nil
	}
	slices.Sort(todo)
	todo = slices.Compact(todo)
	for start := 0; start < len(todo); start += resolveChunk {
		chunk := todo[start:min(start+resolveChunk, len(todo))]
		in := idList(chunk)
		var sql strings.Builder
		for i, t := range tables {
			if i > 0 {
				sql.WriteString(" UNION ALL ")
			}
			fmt.Fprintf(&sql, "SELECT itemid, toUInt8(%d) FROM %s WHERE itemid IN (%s) GROUP BY itemid", t.typ, s.from(t.name), in)
		}
		sql.WriteString(" FORMAT RowBinary")
		rc, err := s.c.do(ctx, sql.String(), nil, nil)
		if err != nil {
			return fmt.Errorf("clickhouse: looking up the tables of %d items: %w", len(chunk), err)
		}
		found := map[uint64]uint8{}
		d := newRowReader(rc)
		for d.more() {
			id, t := d.u64(), d.u8()
			if d.err == nil && t < 8 {
				found[id] |= 1 << t
			}
		}
		rc.Close()
		if d.err != nil {
			return fmt.Errorf("clickhouse: looking up the tables of %d items: %w", len(chunk), d.err)
		}
		s.mu.Lock()
		for _, id := range chunk {
			if s.o.ReadOnly {
				s.types[id] = found[id] | known
			} else {
				s.types[id] |= found[id] | known
			}
		}
		s.mu.Unlock()
	}
	return nil
}

// WriteErr implements history.WriteChecker: the spool's WAL cannot write
// (it retries every second), or the spool is full.
func (s *Store) WriteErr() error {
	if s.inserted() {
		return s.recentFailure()
	}
	if err := s.wal.Failure(); err != nil {
		return fmt.Errorf("clickhouse: spool: %w", err)
	}
	s.mu.Lock()
	full := s.spooled >= s.o.SpoolLimit
	s.mu.Unlock()
	if full {
		return ErrSpoolFull
	}
	return nil
}

// Write validates samples, appends them to the spool's WAL (durable as
// Options.Sync promises when it returns) and makes them readable at once.
// Shipping to ClickHouse happens later, in the background. In
// AckInserted mode it returns once ClickHouse accepted them instead.
func (s *Store) Write(ctx context.Context, samples []history.Sample) error {
	if s.closed.Load() {
		return history.ErrClosed
	}
	if s.o.ReadOnly {
		return ErrReadOnly
	}
	if len(samples) == 0 {
		return nil
	}
	for i := range samples {
		v := &samples[i]
		if v.Clock < 0 || v.Clock > maxClock || v.NS < 0 || v.NS > 999_999_999 || !v.Type.Valid() {
			s.mRejected.Add(uint64(len(samples)))
			if sup, ok := s.throttle.Allow("rejected"); ok {
				s.log.Warn("refusing a batch with a value ClickHouse cannot store", "item", v.ItemID, "clock", v.Clock, "ns", v.NS, "type", v.Type, "batch", len(samples), "suppressed", sup)
			}
			return fmt.Errorf("clickhouse: item %d: value at clock %d ns %d type %d cannot be stored (ClickHouse DateTime holds clocks from 0 to %d); the batch of %d values was refused",
				v.ItemID, v.Clock, v.NS, v.Type, maxClock, len(samples))
		}
	}
	s.mu.Lock()
	full := !s.inserted() && s.spooled+int64(len(samples)) > s.o.SpoolLimit
	s.mu.Unlock()
	if full {
		s.mSpoolFull.Inc()
		if sup, ok := s.throttle.Allow("spool-full"); ok {
			s.log.Error("refusing values: the ClickHouse spool is full", "limit", s.o.SpoolLimit, "suppressed", sup)
		}
		return ErrSpoolFull
	}
	if s.inserted() {
		return s.writeInserted(ctx, samples)
	}
	rec := record.AppendSamples(nil, samples)
	s.sealMu.RLock()
	defer s.sealMu.RUnlock()
	if s.closed.Load() {
		return history.ErrClosed
	}
	if err := s.wal.Append(rec); err != nil {
		if errors.Is(err, wal.ErrClosed) {
			return history.ErrClosed
		}
		return fmt.Errorf("clickhouse: spool: %w", err)
	}
	s.mu.Lock()
	s.cur.add(samples)
	s.spooled += int64(len(samples))
	for i := range samples {
		s.types[samples[i].ItemID] |= 1 << samples[i].Type
	}
	big := s.cur.n >= int64(s.o.BatchSize)
	s.mu.Unlock()
	if big {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// seal closes the current generation if it holds values.
func (s *Store) seal() error {
	s.sealMu.Lock()
	defer s.sealMu.Unlock()
	s.mu.Lock()
	empty := s.cur.n == 0
	s.mu.Unlock()
	if empty {
		return nil
	}
	idx, err := s.wal.Cut()
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.cur.segEnd = idx
	s.sealed = append(s.sealed, s.cur)
	s.cur = newGen()
	s.mu.Unlock()
	return nil
}

// ship is the shipper goroutine: every FlushInterval (or when a batch is
// full) it seals the current generation and inserts the sealed ones,
// oldest first, retrying each until ClickHouse accepts it, then lets the
// WAL drop it. At-least-once: a generation whose insert failed half way
// (or timed out after landing) is sent again whole; the tables'
// (itemid, clock, ns) key makes the copies one value.
func (s *Store) ship() {
	defer close(s.done)
	t := time.NewTicker(s.o.FlushInterval)
	defer t.Stop()
	var since time.Time // when the oldest sealed generation started waiting
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.kick:
		}
		if err := s.seal(); err != nil {
			if sup, ok := s.throttle.Allow("seal"); ok {
				s.log.Error("clickhouse spool: cannot cut the WAL; values stay spooled", "err", err, "suppressed", sup)
			}
			continue
		}
		for {
			s.mu.Lock()
			var g *gen
			if len(s.sealed) > 0 {
				g = s.sealed[0]
			}
			s.mu.Unlock()
			if g == nil {
				since = time.Time{}
				s.mLag.Set(0)
				break
			}
			if since.IsZero() {
				since = time.Now()
			}
			err := s.insertGen(g)
			s.mLag.Set(int64(time.Since(since) / time.Second))
			if err != nil && s.ctx.Err() != nil {
				return // Close: the values stay in the WAL
			}
			if err != nil {
				kind := Kind(err)
				s.mShipErr[kind].Inc()
				if sup, ok := s.throttle.Allow("ship-" + kind); ok {
					s.log.Error("clickhouse insert failed; the values stay in the spool and are retried",
						"kind", kind, "err", err, "spooled_values", s.Backlog(), "suppressed", sup)
				}
				select {
				case <-s.stop:
					return
				case <-time.After(s.o.RetryInterval):
				}
				continue
			}
			s.mu.Lock()
			s.sealed = s.sealed[1:]
			s.spooled -= g.n
			next := len(s.sealed) > 0
			s.mu.Unlock()
			since = time.Time{}
			if next {
				since = time.Now()
			}
			if err := s.wal.Truncate(g.segEnd); err != nil {
				// Harmless for correctness (a replay would ship the
				// values again, deduplicated), but the disk fills.
				if sup, ok := s.throttle.Allow("truncate"); ok {
					s.log.Error("clickhouse spool: cannot delete shipped WAL segments", "err", err, "suppressed", sup)
				}
			}
		}
	}
}

// Backlog is the number of acknowledged values not yet in ClickHouse.
func (s *Store) Backlog() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spooled
}

// nextVer reserves n versions, increasing across generations and, being
// based on the wall clock, across restarts.
func (s *Store) nextVer(n int) uint64 {
	s.verMu.Lock()
	defer s.verMu.Unlock()
	v := uint64(time.Now().UnixNano())
	if v <= s.lastVer {
		v = s.lastVer + 1
	}
	s.lastVer = v + uint64(n)
	return v
}

// insertGen sends g to ClickHouse, one INSERT per table and BatchSize
// rows. A generation's items are sorted by nothing in particular; within
// an item, ver follows write order so that the last write wins.
func (s *Store) insertGen(g *gen) error {
	var maxLen int
	for _, v := range g.items {
		maxLen = max(maxLen, len(v))
	}
	base := s.nextVer(maxLen)
	// One buffer per (destination, table): with direct writes the
	// destinations are the shards, otherwise the one routed target.
	nd := 1
	if s.o.DirectWrites && s.o.Cluster != "" {
		nd = len(s.shards)
	}
	bufs := make([][len(tables)][]byte, nd)
	rows := make([][len(tables)]int, nd)
	flush := func(dst int, t history.ValueType) error {
		if rows[dst][t] == 0 {
			return nil
		}
		ctx, cancel := context.WithTimeout(s.ctx, s.o.QueryTimeout)
		defer cancel()
		tb := &tables[t]
		var err error
		if nd > 1 {
			err = s.shards[dst].insert(ctx, s.db+"."+tb.name, tb.columns, bufs[dst][t], nil)
		} else {
			// Through a Distributed table: synchronously, so that
			// the rows are on their shards (and readable) when the
			// spool lets go of them.
			err = s.c.insert(ctx, s.from(tb.name), tb.columns, bufs[dst][t], s.routedSettings())
		}
		if err != nil {
			return err
		}
		s.mInserts.Inc()
		s.mShipped.Add(uint64(rows[dst][t]))
		bufs[dst][t], rows[dst][t] = bufs[dst][t][:0], 0
		return nil
	}
	for id, vs := range g.items {
		dst := int(id % uint64(nd))
		for i := range vs {
			v := &vs[i]
			b := bufs[dst][v.Type]
			b = appendU64(b, id)
			b = appendU32(b, uint32(v.Clock))
			b = appendU32(b, uint32(v.NS))
			switch v.Type {
			case history.Float:
				b = appendF64(b, v.F)
			case history.Uint:
				b = appendU64(b, v.U)
			case history.Str, history.Text:
				b = appendStr(b, v.S)
			case history.Log:
				b = appendStr(b, v.S)
				var lm history.LogMeta
				var has uint8
				if v.Log != nil {
					lm, has = *v.Log, 1
				}
				b = appendU64(b, uint64(lm.Timestamp))
				b = appendStr(b, lm.Source)
				b = appendU32(b, uint32(lm.Severity))
				b = appendU64(b, uint64(lm.EventID))
				b = append(b, has)
			}
			b = appendU64(b, base+uint64(i))
			bufs[dst][v.Type] = b
			rows[dst][v.Type]++
			if rows[dst][v.Type] >= s.o.BatchSize {
				if err := flush(dst, v.Type); err != nil {
					return err
				}
			}
		}
	}
	for dst := range bufs {
		for t := range tables {
			if err := flush(dst, history.ValueType(t)); err != nil {
				return err
			}
		}
	}
	return nil
}

// from names a table for reads (and routed writes): the Distributed
// twin in a cluster, the table itself otherwise.
func (s *Store) from(name string) string { return s.db + "." + name + s.suffix }

// routedSettings are the settings of an insert through a Distributed
// table (none without a cluster).
func (s *Store) routedSettings() map[string]string {
	if s.suffix == "" {
		return nil
	}
	return map[string]string{"insert_distributed_sync": "1"}
}

// Close stops the shipper and closes the spool. Unshipped values stay in
// the WAL and are shipped after the next Open; Close does not wait for
// ClickHouse.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.stop)
	s.cancel()
	<-s.done
	if s.wal == nil { // AckInserted: no spool
		return nil
	}
	s.sealMu.Lock() // no writer is between its WAL append and the spool
	defer s.sealMu.Unlock()
	return s.wal.Close()
}

// Flush seals the spool and waits until everything written before the
// call is in ClickHouse or ctx ends. Tests and benchmarks use it to
// measure persisted values; the server never needs to.
func (s *Store) Flush(ctx context.Context) error {
	if s.closed.Load() {
		return history.ErrClosed
	}
	s.mu.Lock()
	target := s.cur
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
	for {
		s.mu.Lock()
		// Generations sealed before target ship before it.
		pending := s.cur == target && (target.n > 0 || len(s.sealed) > 0)
		for _, g := range s.sealed {
			if g == target {
				pending = true
			}
		}
		s.mu.Unlock()
		if !pending {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

// Version is the server's version, as detected at Open.
func (s *Store) Version() Version { return s.ver }

// u128 adds two 64-bit halves' sums into a 128-bit hi:lo, for Uint
// buckets whose sum ClickHouse returns as the sums of the high and low
// 32-bit halves (each fits in 64 bits for up to 2^32 values).
func u128(sumHi32, sumLo32 uint64) (hi, lo uint64) {
	// total = sumHi32·2^32 + sumLo32
	h, l := bits.Mul64(sumHi32, 1<<32)
	l, c := bits.Add64(l, sumLo32, 0)
	return h + c, l
}
