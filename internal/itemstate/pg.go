package itemstate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// The registry's copy in PostgreSQL (state.store: postgres, docs/ha.md):
// the active node's Writer stores what changed every interval, fenced by
// the HA lease; a standby's Follower reads it into the standby's own
// registry, which its API reads as the active node's does. Zabbix 6.0
// keeps the same in its database (item_rtdata.state and error, the
// interface table's available, error, errors_from and disable_until).
// Tables item_state and interface_state of the state schema hold at
// most one row per item and interface; rev is the writing
// transaction's ID, so a follower sees a change as a higher max(rev) or
// another row count.

// pgVersion is the tables' version (their row in schema_version).
const pgVersion = 1

// pgTables names the two tables of schema.
type pgTables struct{ items, ifaces string }

func tablesOf(schema string) (pgTables, error) {
	if schema == "" {
		schema = "peregrine_state"
	}
	if err := sqlitedb.CheckPGSchema(schema); err != nil {
		return pgTables{}, fmt.Errorf("item states: %w", err)
	}
	return pgTables{items: schema + ".item_state", ifaces: schema + ".interface_state"}, nil
}

// itemKey is what a Writer compares of an item state: the check's clock
// changes at every failed check and is not worth a write.
type itemKey struct {
	notSupported bool
	err          string
}

// Writer stores a Registry's changes in PostgreSQL. It is used by one
// goroutine (Run, or a caller's Flush).
type Writer struct {
	db    *sql.DB
	write func(ctx context.Context, fn func(*sql.Tx) error) error
	t     pgTables
	reg   *Registry
	// What the table holds, as last written.
	items  map[uint64]itemKey
	ifaces map[uint64]Availability
}

// OpenWriter makes the tables if needed (in a transaction of write, the
// HA lease's fenced one: func(ctx, fn) error { return lease.WriteSQL(ctx,
// db, fn) }), reads them, and records their rows in reg where reg has
// none yet, so a node taking over starts from the states the previous
// active node stored. db is pgx's database/sql driver on the state
// database; schema "" is peregrine_state.
func OpenWriter(ctx context.Context, db *sql.DB, write func(ctx context.Context, fn func(*sql.Tx) error) error, schema string, reg *Registry) (*Writer, error) {
	if db == nil || write == nil || reg == nil {
		return nil, errors.New("item states: PostgreSQL needs a database, the lease's fenced writer and a registry")
	}
	t, err := tablesOf(schema)
	if err != nil {
		return nil, err
	}
	if schema == "" {
		schema = "peregrine_state"
	}
	err = write(ctx, func(tx *sql.Tx) error {
		return sqlitedb.MigratePG(ctx, sqlitedb.SQLTx(tx), schema, "item_state", pgVersion, func() error {
			for _, q := range []string{
				`CREATE TABLE ` + t.items + ` (itemid bigint PRIMARY KEY, state smallint NOT NULL,
					error text NOT NULL, mtime bigint NOT NULL, rev bigint NOT NULL)`,
				`CREATE TABLE ` + t.ifaces + ` (interfaceid bigint PRIMARY KEY, available smallint NOT NULL,
					error text NOT NULL, errors_from bigint NOT NULL, disable_until bigint NOT NULL, rev bigint NOT NULL)`,
			} {
				if _, err := tx.ExecContext(ctx, q); err != nil {
					return err
				}
			}
			return nil
		}, func(int64) error { return nil })
	})
	if err != nil {
		return nil, fmt.Errorf("item states: cannot prepare %s in PostgreSQL: %w", t.items, err)
	}
	items, ifaces, err := readAll(ctx, db, t)
	if err != nil {
		return nil, err
	}
	w := &Writer{db: db, write: write, t: t, reg: reg, items: make(map[uint64]itemKey, len(items)), ifaces: ifaces}
	for id, s := range items {
		w.items[id] = itemKey{s.NotSupported, s.Error}
	}
	reg.Restore(items, ifaces, false)
	return w, nil
}

// Flush stores what changed in the registry since the last Flush, in one
// fenced transaction: an upsert per changed item or interface, a delete
// per item back to normal or interface forgotten. It returns how many
// rows it wrote; after an error nothing of it is stored and the next
// Flush writes it again.
func (w *Writer) Flush(ctx context.Context) (int, error) {
	items := w.reg.Items()
	ifaces := w.reg.Availabilities()
	type itemUp struct {
		id uint64
		s  Item
	}
	type ifaceUp struct {
		id uint64
		a  Availability
	}
	var iu []itemUp
	var fu []ifaceUp
	var idel, fdel []uint64
	for id, s := range items {
		if k, ok := w.items[id]; !ok || k != (itemKey{s.NotSupported, s.Error}) {
			iu = append(iu, itemUp{id, s})
		}
	}
	for id := range w.items {
		if _, ok := items[id]; !ok {
			idel = append(idel, id)
		}
	}
	for id, a := range ifaces {
		if old, ok := w.ifaces[id]; !ok || old != a {
			fu = append(fu, ifaceUp{id, a})
		}
	}
	for id := range w.ifaces {
		if _, ok := ifaces[id]; !ok {
			fdel = append(fdel, id)
		}
	}
	n := len(iu) + len(fu) + len(idel) + len(fdel)
	if n == 0 {
		return 0, nil
	}
	err := w.write(ctx, func(tx *sql.Tx) error {
		if len(iu) > 0 {
			st, err := tx.PrepareContext(ctx, `INSERT INTO `+w.t.items+` (itemid, state, error, mtime, rev)
				VALUES ($1, $2, $3, $4, txid_current()) ON CONFLICT (itemid) DO UPDATE SET state = EXCLUDED.state,
				error = EXCLUDED.error, mtime = EXCLUDED.mtime, rev = EXCLUDED.rev`)
			if err != nil {
				return err
			}
			for _, u := range iu {
				state := 0
				if u.s.NotSupported {
					state = 1
				}
				if _, err := st.ExecContext(ctx, int64(u.id), state, u.s.Error, u.s.Clock); err != nil {
					return err
				}
			}
		}
		if len(fu) > 0 {
			st, err := tx.PrepareContext(ctx, `INSERT INTO `+w.t.ifaces+` (interfaceid, available, error, errors_from,
				disable_until, rev) VALUES ($1, $2, $3, $4, $5, txid_current()) ON CONFLICT (interfaceid) DO UPDATE SET
				available = EXCLUDED.available, error = EXCLUDED.error, errors_from = EXCLUDED.errors_from,
				disable_until = EXCLUDED.disable_until, rev = EXCLUDED.rev`)
			if err != nil {
				return err
			}
			for _, u := range fu {
				if _, err := st.ExecContext(ctx, int64(u.id), int(u.a.Available), u.a.Error, u.a.ErrorsFrom, u.a.DisableUntil); err != nil {
					return err
				}
			}
		}
		for _, del := range []struct {
			q   string
			ids []uint64
		}{{`DELETE FROM ` + w.t.items + ` WHERE itemid = ANY($1)`, idel}, {`DELETE FROM ` + w.t.ifaces + ` WHERE interfaceid = ANY($1)`, fdel}} {
			if len(del.ids) == 0 {
				continue
			}
			ids := make([]int64, len(del.ids))
			for i, id := range del.ids {
				ids[i] = int64(id)
			}
			if _, err := tx.ExecContext(ctx, del.q, ids); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, u := range iu {
		w.items[u.id] = itemKey{u.s.NotSupported, u.s.Error}
	}
	for _, id := range idel {
		delete(w.items, id)
	}
	for _, u := range fu {
		w.ifaces[u.id] = u.a
	}
	for _, id := range fdel {
		delete(w.ifaces, id)
	}
	return n, nil
}

// Run flushes every interval until ctx ends; a failed flush is reported
// to warn (if not nil) and tried again at the next one.
func (w *Writer) Run(ctx context.Context, interval time.Duration, warn func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := w.Flush(ctx); err != nil && ctx.Err() == nil && warn != nil {
			warn(err)
		}
	}
}

// Follower reads the tables a Writer keeps into a registry. It is used
// by one goroutine.
type Follower struct {
	db  *sql.DB
	t   pgTables
	reg *Registry
	// mark is what the tables' max(rev) and row counts were at the last
	// read; read is false before the first.
	mark [4]int64
	read bool
}

// NewFollower returns a follower of the tables of schema ("" is
// peregrine_state) that fills reg. It reads nothing before Follow.
func NewFollower(db *sql.DB, schema string, reg *Registry) (*Follower, error) {
	if db == nil || reg == nil {
		return nil, errors.New("item states: a follower needs a database and a registry")
	}
	t, err := tablesOf(schema)
	if err != nil {
		return nil, err
	}
	return &Follower{db: db, t: t, reg: reg}, nil
}

// Follow makes the registry what the tables hold if they changed since
// the last Follow (a cheap look at their max(rev) and row counts
// first). It reports whether it read them. Before the active node made
// the tables it fails, and the registry keeps what it had.
func (f *Follower) Follow(ctx context.Context) (bool, error) {
	var m [4]int64
	err := f.db.QueryRowContext(ctx, `SELECT (SELECT coalesce(max(rev), 0) FROM `+f.t.items+`), (SELECT count(*) FROM `+f.t.items+`),
		(SELECT coalesce(max(rev), 0) FROM `+f.t.ifaces+`), (SELECT count(*) FROM `+f.t.ifaces+`)`).Scan(&m[0], &m[1], &m[2], &m[3])
	if err != nil {
		return false, fmt.Errorf("item states: %w", err)
	}
	if f.read && m == f.mark {
		return false, nil
	}
	items, ifaces, err := readAll(ctx, f.db, f.t)
	if err != nil {
		return false, err
	}
	f.reg.Restore(items, ifaces, true)
	f.mark, f.read = m, true
	return true, nil
}

// readAll reads both tables in one repeatable-read transaction.
func readAll(ctx context.Context, db *sql.DB, t pgTables) (map[uint64]Item, map[uint64]Availability, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, nil, fmt.Errorf("item states: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	items := map[uint64]Item{}
	rows, err := tx.QueryContext(ctx, `SELECT itemid, state, error, mtime FROM `+t.items)
	if err != nil {
		return nil, nil, fmt.Errorf("item states: %w", err)
	}
	for rows.Next() {
		var id, clock int64
		var state int
		var msg string
		if err := rows.Scan(&id, &state, &msg, &clock); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("item states: %w", err)
		}
		items[uint64(id)] = Item{NotSupported: state == 1, Error: msg, Clock: clock}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("item states: %w", err)
	}
	ifaces := map[uint64]Availability{}
	rows, err = tx.QueryContext(ctx, `SELECT interfaceid, available, error, errors_from, disable_until FROM `+t.ifaces)
	if err != nil {
		return nil, nil, fmt.Errorf("item states: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, from, until int64
		var avail int
		var msg string
		if err := rows.Scan(&id, &avail, &msg, &from, &until); err != nil {
			return nil, nil, fmt.Errorf("item states: %w", err)
		}
		ifaces[uint64(id)] = Availability{Available: uint8(avail), Error: msg, ErrorsFrom: from, DisableUntil: until}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("item states: %w", err)
	}
	return items, ifaces, nil
}
