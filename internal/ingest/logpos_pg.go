package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// logPosPGVersion is the PostgreSQL table's version (its row in
// schema_version of the state schema).
const logPosPGVersion = 1

// OpenLogPositionsPG keeps the positions in PostgreSQL instead of a
// file (state.store: postgres): table log_position of schema (default
// peregrine_state), read through db, pgx's database/sql driver on the
// state database (stdlib.OpenDBFromPool(node.Pool())), and every write
// (the table's creation included) run by write, which is the HA lease's
// fenced transaction (func(ctx, fn) error { return
// lease.WriteSQL(ctx, db, fn) }): a node that lost its lease saves no
// position, and a refused group saves none of its positions. Close
// closes db (not the pool under it).
func OpenLogPositionsPG(ctx context.Context, db *sql.DB, write func(ctx context.Context, fn func(*sql.Tx) error) error, schema string, logger *slog.Logger) (*LogPositions, error) {
	if db == nil || write == nil {
		return nil, errors.New("active-agent state: PostgreSQL needs a database and the lease's fenced writer")
	}
	if schema == "" {
		schema = "peregrine_state"
	}
	if err := sqlitedb.CheckPGSchema(schema); err != nil {
		return nil, fmt.Errorf("active-agent state: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	table := schema + ".log_position"
	err := write(ctx, func(tx *sql.Tx) error {
		return sqlitedb.MigratePG(ctx, sqlitedb.SQLTx(tx), schema, "log_position", logPosPGVersion, func() error {
			_, err := tx.ExecContext(ctx, `CREATE TABLE `+table+` (
				itemid bigint PRIMARY KEY, lastlogsize bigint NOT NULL, mtime bigint NOT NULL)`)
			return err
		}, func(int64) error { return nil })
	})
	if err != nil {
		return nil, fmt.Errorf("active-agent state: cannot prepare %s in PostgreSQL: %w", table, err)
	}
	p := &LogPositions{
		db: db, log: logger, write: write,
		upsert: `INSERT INTO ` + table + ` (itemid, lastlogsize, mtime) VALUES ($1, $2, $3)
			ON CONFLICT (itemid) DO UPDATE SET lastlogsize = EXCLUDED.lastlogsize, mtime = EXCLUDED.mtime`,
		del:     `DELETE FROM ` + table + ` WHERE itemid = $1`,
		pos:     map[uint64]LogPos{},
		pending: map[uint64]LogPos{},
		gen:     &posGen{done: make(chan struct{})},
		kick:    make(chan struct{}, 1),
		stopped: make(chan struct{}),
	}
	return loadLogPositions(ctx, p, "PostgreSQL "+table, table)
}
