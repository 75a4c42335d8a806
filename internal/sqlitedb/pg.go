package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// PG places a database in PostgreSQL (state.store: postgres) instead of
// an SQLite file; see OpenPG.
type PG struct {
	// Pool is the HA node's pool (node.Pool()). The store gets a pool of
	// its own with the same configuration, whose connections have the
	// store's schema as their search_path.
	Pool *pgxpool.Pool
	// Fence checks the HA lease as a write transaction's first
	// statement, (*ha.Lease).FenceSQL: a node that lost its lease
	// commits nothing. Required.
	Fence func(ctx context.Context, tx *sql.Tx) error
	// Schema holds the store's tables; default "peregrine_" +
	// Schema.PGName.
	Schema string
	// StateSchema holds the version table of every state store;
	// default "peregrine_state".
	StateSchema string
	// MaxConns bounds the store's pool; default 4.
	MaxConns int32
	// ReadOnly opens the store for reading only, as an HA standby does
	// (it holds no lease): nothing is written at open, the store must
	// already be at this binary's version (made by the active node), and
	// every Begin fails with ErrReadOnly. Fence is then not needed.
	ReadOnly bool
}

// ErrReadOnly is Begin's error on a store opened with PG.ReadOnly.
var ErrReadOnly = errors.New("this store is open for reading only (an HA standby node): changes are made on the active node")

// Begin begins a write transaction: on PostgreSQL the lease is checked
// first (PG.Fence), so that the transaction commits only while it
// holds; on SQLite it is BeginTx.
type Begin func(ctx context.Context) (*sql.Tx, error)

// SQLiteBegin is an SQLite database's Begin.
func SQLiteBegin(db *sql.DB) Begin {
	return func(ctx context.Context) (*sql.Tx, error) { return db.BeginTx(ctx, nil) }
}

// OpenPG opens the store s in PostgreSQL: its tables in their own
// schema (PG.Schema), its version as the row s.PGName of the state
// schema's schema_version (MigratePG: a newer version is refused). A
// new store is made at s.Version, today's schema: the tables, indexes
// and first rows of a new SQLite database of s, put in PostgreSQL's
// dialect (pgtranslate.go), in one fenced transaction. The returned
// database takes the stores' SQLite statements (rewritten once each);
// its Close closes the store's pool. Every write transaction must be
// begun with the returned Begin.
func OpenPG(ctx context.Context, pg PG, s Schema) (*sql.DB, Begin, error) {
	if pg.Pool == nil || (pg.Fence == nil && !pg.ReadOnly) {
		return nil, nil, fmt.Errorf("%s: PostgreSQL needs the node's pool and the lease's fence", s.Kind)
	}
	if s.PGName == "" {
		return nil, nil, fmt.Errorf("%s: no PostgreSQL name (a programming error)", s.Kind)
	}
	if pg.Schema == "" {
		pg.Schema = "peregrine_" + s.PGName
	}
	if pg.StateSchema == "" {
		pg.StateSchema = "peregrine_state"
	}
	if pg.MaxConns <= 0 {
		pg.MaxConns = 4
	}
	for _, sc := range []string{pg.Schema, pg.StateSchema} {
		if err := CheckPGSchema(sc); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", s.Kind, err)
		}
	}
	fresh, err := newSQLite(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	defer fresh.Close()
	tables, plan, err := pgPlan(ctx, fresh, s)
	if err != nil {
		return nil, nil, err
	}
	cfg := pg.Pool.Config().Copy()
	cfg.ConnConfig.RuntimeParams["search_path"] = pg.Schema
	cfg.MaxConns, cfg.MinConns = pg.MaxConns, 0
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: cannot connect to PostgreSQL: %w", s.Kind, err)
	}
	db := sql.OpenDB(&pgConnector{inner: stdlib.GetPoolConnector(pool), tables: tables, pool: pool})
	if pg.ReadOnly {
		if err := checkPGVersion(ctx, db, pg, s); err != nil {
			db.Close()
			return nil, nil, fmt.Errorf("%s: PostgreSQL schema %s: %w", s.Kind, pg.Schema, err)
		}
		return db, func(context.Context) (*sql.Tx, error) { return nil, ErrReadOnly }, nil
	}
	begin := func(ctx context.Context) (*sql.Tx, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return nil, err
		}
		if err := pg.Fence(ctx, tx); err != nil {
			tx.Rollback()
			return nil, err
		}
		return tx, nil
	}
	if err := migratePG(ctx, db, begin, pg, s, fresh, plan); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("%s: PostgreSQL schema %s: %w", s.Kind, pg.Schema, err)
	}
	return db, begin, nil
}

// checkPGVersion is a read-only open's check: the store exists at this
// binary's version (it reads, never writes).
func checkPGVersion(ctx context.Context, db *sql.DB, pg PG, s Schema) error {
	var v int64
	err := db.QueryRowContext(ctx, `SELECT version FROM `+pg.StateSchema+`.schema_version WHERE component = ?`, pg.Schema).Scan(&v)
	if err != nil {
		return fmt.Errorf("cannot read its version (has an active node made it yet?): %w", err)
	}
	if v != s.Version {
		return fmt.Errorf("is at schema version %d, this Peregrine's is %d: read it with the active node's version", v, s.Version)
	}
	return nil
}

// newSQLite makes a new database of s in memory, whose definitions
// and rows become the PostgreSQL store's.
func newSQLite(ctx context.Context, s Schema) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if _, err := db.ExecContext(ctx, s.Create); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: cannot make the schema (a programming error): %w", s.Kind, err)
	}
	if _, err := db.ExecContext(ctx, s.InsertMeta, s.Version); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: cannot make the schema (a programming error): %w", s.Kind, err)
	}
	return db, nil
}

// pgPlan reads fresh's definitions: the tables' metadata for the
// statements' rewriting, and the DDL of a new PostgreSQL store.
func pgPlan(ctx context.Context, fresh *sql.DB, s Schema) (map[string]*tableInfo, []string, error) {
	rows, err := fresh.QueryContext(ctx, "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	tables := map[string]*tableInfo{}
	plan := []string{`CREATE TABLE sqlite_sequence (name text PRIMARY KEY, seq bigint NOT NULL)`}
	var indexes []string
	for rows.Next() {
		var typ, name, text string
		if err := rows.Scan(&typ, &name, &text); err != nil {
			return nil, nil, err
		}
		switch typ {
		case "table":
			t, err := translateTable(text)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", s.Kind, err)
			}
			tables[t.name] = t.info
			plan = append(plan, t.ddl)
			if t.info.rowid != "" {
				plan = append(plan, pgRowidTrigger(t))
			}
		case "index":
			indexes = append(indexes, text)
		default:
			return nil, nil, fmt.Errorf("%s: cannot put the %s %s in PostgreSQL (a programming error)", s.Kind, typ, name)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	return tables, append(plan, indexes...), nil
}

// migratePG creates or checks the store in one fenced transaction.
func migratePG(ctx context.Context, db *sql.DB, begin Begin, pg PG, s Schema, fresh *sql.DB, plan []string) error {
	tx, err := begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	err = MigratePG(ctx, SQLTx(tx), pg.StateSchema, pg.Schema, s.Version, func() error {
		// The store's schema may exist without a version row only
		// empty (a failed first start leaves nothing: one transaction).
		if _, err := tx.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+pg.Schema); err != nil {
			return err
		}
		for _, q := range plan {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("cannot create %q: %w", firstLine(q), err)
			}
		}
		return copyRows(ctx, fresh, tx)
	}, func(from int64) error {
		q, ok := s.PGMigrations[from]
		if !ok {
			return errors.New("this Peregrine has no PostgreSQL step for it (a programming error)")
		}
		_, err := tx.ExecContext(ctx, q)
		return err
	})
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE "+s.Meta+" SET schema_version = ? WHERE id = 1", s.Version); err != nil {
		return err
	}
	return tx.Commit()
}

func firstLine(q string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(q), "\n")
	return l
}

// copyRows copies every row of fresh (a new database's first rows:
// the meta row, defaults) into tx, sqlite_sequence last.
func copyRows(ctx context.Context, fresh *sql.DB, tx *sql.Tx) error {
	names, err := tableNames(ctx, fresh)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := copyTable(ctx, fresh, tx, n, "INSERT INTO "+n); err != nil {
			return err
		}
	}
	var seq int
	if err := fresh.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_sequence'").Scan(&seq); err != nil || seq == 0 {
		return err
	}
	return copyTable(ctx, fresh, tx, "sqlite_sequence", "INSERT INTO sqlite_sequence")
}

func copyTable(ctx context.Context, fresh *sql.DB, tx *sql.Tx, name, insert string) error {
	rows, err := fresh.QueryContext(ctx, "SELECT * FROM "+name)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	q := insert + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	if name == "sqlite_sequence" {
		q += " ON CONFLICT (name) DO UPDATE SET seq = greatest(sqlite_sequence.seq, EXCLUDED.seq)"
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, q, vals...); err != nil {
			return fmt.Errorf("cannot copy the rows of %s: %w", name, err)
		}
	}
	return rows.Err()
}

// CopyToPG replaces every row of a PostgreSQL store with src's: src is
// the store's SQLite database at the same schema version (opened by
// Open, which migrates it), tx a write transaction begun by OpenPG's
// Begin (fenced). The store's tables are emptied, newest first, then
// filled in src's order, sqlite_sequence last, so that IDs go on
// where src's stopped. All or nothing: tx commits it (peregrine ha
// migrate).
func CopyToPG(ctx context.Context, src *sql.DB, tx *sql.Tx) error {
	names, err := tableNames(ctx, src)
	if err != nil {
		return err
	}
	for i := len(names) - 1; i >= 0; i-- {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+names[i]); err != nil {
			return fmt.Errorf("cannot empty %s: %w", names[i], err)
		}
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM sqlite_sequence"); err != nil {
		return fmt.Errorf("cannot empty sqlite_sequence: %w", err)
	}
	return copyRows(ctx, src, tx)
}

// tableNames lists an SQLite database's own tables (not sqlite_*) in
// the order they were created.
func tableNames(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}
