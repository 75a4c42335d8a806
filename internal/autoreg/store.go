package autoreg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// Persister keeps the registrations across restarts, as Zabbix keeps
// them in its autoreg_host table: without it a restarted server would
// register every known agent once more (new events, the actions' host
// operations run again). Store is the durable one.
type Persister interface {
	// Load returns the registrations kept, least recently registered
	// first.
	Load(ctx context.Context) ([]Host, error)
	// Save records hosts as registered now, in their order (later ones
	// more recent), and forgets the registrations of forget (IDs).
	Save(ctx context.Context, hosts []Host, forget []uint64) error
}

// ErrStoreLocked is wrapped when another process owns the file.
var ErrStoreLocked = errors.New("the auto-registration file is in use by another process")

// ErrStoreCorrupt is wrapped when the file's meta row is unusable.
var ErrStoreCorrupt = errors.New("the auto-registration file is corrupt")

var storeSchema = sqlitedb.Schema{
	Kind: "auto-registration state",
	Meta: "autoreg_meta",
	Create: `
CREATE TABLE autoreg_meta (id INTEGER PRIMARY KEY CHECK (id = 1), schema_version INTEGER NOT NULL);
CREATE TABLE autoreg_host (
	host          TEXT PRIMARY KEY,
	id            INTEGER NOT NULL UNIQUE,
	seq           INTEGER NOT NULL,
	host_metadata TEXT NOT NULL,
	ip            TEXT NOT NULL,
	dns           TEXT NOT NULL,
	port          INTEGER NOT NULL,
	flag          INTEGER NOT NULL,
	tls_accepted  INTEGER NOT NULL,
	proxy_id      INTEGER NOT NULL,
	clock_ns      INTEGER NOT NULL
);
CREATE INDEX autoreg_host_seq ON autoreg_host (seq);`,
	Version:    1,
	InsertMeta: "INSERT INTO autoreg_meta (id, schema_version) VALUES (1, ?)",
	Corrupt:    ErrStoreCorrupt,
	// Rows of a few hundred bytes, at most Options.MaxHosts of them.
	Pragmas: []string{"journal_size_limit(4194304)"},
}

// Store is a Persister in a small owner-only SQLite file in the data
// directory (one row per remembered host, so bounded by
// Options.MaxHosts). Only the Registrar's Run goroutine calls Save.
type Store struct {
	db   *sql.DB
	lock *os.File // nil in PostgreSQL
	seq  int64    // the last row's seq; guarded by being called from Run only
	// write runs fn in a transaction and commits if it succeeds: plain
	// in SQLite, fenced by the HA lease in PostgreSQL (store_pg.go); q
	// puts a statement in the database's dialect.
	write func(ctx context.Context, fn func(*sql.Tx) error) error
	q     func(string) string
}

// OpenStore opens (creating if needed) the file at path and takes its
// lock.
func OpenStore(ctx context.Context, path string) (*Store, error) {
	lock, err := sqlitedb.Lock(path, storeSchema.Kind, ErrStoreLocked)
	if err != nil {
		return nil, err
	}
	db, err := sqlitedb.Open(ctx, path, storeSchema)
	if err != nil {
		lock.Close()
		return nil, err
	}
	s := &Store{db: db, lock: lock, q: func(q string) string { return q }, write: func(ctx context.Context, fn func(*sql.Tx) error) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := fn(tx); err != nil {
			return err
		}
		return tx.Commit()
	}}
	return s.loadSeq(ctx, path)
}

func (s *Store) loadSeq(ctx context.Context, path string) (*Store, error) {
	if err := s.db.QueryRowContext(ctx, s.q("SELECT coalesce(max(seq), 0) FROM autoreg_host")).Scan(&s.seq); err != nil {
		s.Close()
		return nil, fmt.Errorf("auto-registration state %s: %w", path, err)
	}
	return s, nil
}

// Load implements Persister.
func (s *Store) Load(ctx context.Context) ([]Host, error) {
	rows, err := s.db.QueryContext(ctx, s.q("SELECT id, host, host_metadata, ip, dns, port, flag, tls_accepted, proxy_id, clock_ns FROM autoreg_host ORDER BY seq"))
	if err != nil {
		return nil, fmt.Errorf("cannot read auto-registrations: %w", err)
	}
	defer rows.Close()
	var out []Host
	for rows.Next() {
		var h Host
		var id, proxy, clock int64
		var port, flag, tls int
		if err := rows.Scan(&id, &h.Host, &h.HostMetadata, &h.IP, &h.DNS, &port, &flag, &tls, &proxy, &clock); err != nil {
			return nil, fmt.Errorf("cannot read auto-registrations: %w", err)
		}
		h.ID, h.Port, h.Flag, h.TLSAccepted, h.ProxyID, h.Clock = uint64(id), uint16(port), flag, uint8(tls), uint64(proxy), time.Unix(0, clock)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cannot read auto-registrations: %w", err)
	}
	return out, nil
}

// Save implements Persister: one transaction.
func (s *Store) Save(ctx context.Context, hosts []Host, forget []uint64) error {
	seq := s.seq
	err := s.write(ctx, func(tx *sql.Tx) error {
		for _, id := range forget {
			if _, err := tx.ExecContext(ctx, s.q("DELETE FROM autoreg_host WHERE id = ?"), int64(id)); err != nil {
				return err
			}
		}
		st, err := tx.PrepareContext(ctx, s.q(`INSERT INTO autoreg_host (host, id, seq, host_metadata, ip, dns, port, flag, tls_accepted, proxy_id, clock_ns)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (host) DO UPDATE SET id = excluded.id, seq = excluded.seq,
host_metadata = excluded.host_metadata, ip = excluded.ip, dns = excluded.dns, port = excluded.port, flag = excluded.flag,
tls_accepted = excluded.tls_accepted, proxy_id = excluded.proxy_id, clock_ns = excluded.clock_ns`))
		if err != nil {
			return err
		}
		defer st.Close()
		for _, h := range hosts {
			seq++
			if _, err := st.ExecContext(ctx, h.Host, int64(h.ID), seq, h.HostMetadata, h.IP, h.DNS, int(h.Port), h.Flag, int(h.TLSAccepted),
				int64(h.ProxyID), h.Clock.UnixNano()); err != nil {
				return fmt.Errorf("host %q: %w", h.Host, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot save auto-registrations: %w", err)
	}
	s.seq = seq
	return nil
}

// Close closes the file and releases its lock.
func (s *Store) Close() error {
	err := s.db.Close()
	if s.lock == nil {
		return err
	}
	if e := s.lock.Close(); err == nil {
		err = e
	}
	return err
}
