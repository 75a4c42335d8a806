package ha

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The schema's migrations, in order; schema_version holds how many ran.
// Append only: a released step is never changed.
var migrations = []string{
	// 1: the registry and the cluster row.
	`CREATE TABLE peregrine_ha.node (
		ha_nodeid  text PRIMARY KEY,
		name       text NOT NULL UNIQUE,
		address    text NOT NULL,
		port       integer NOT NULL,
		lastaccess timestamptz NOT NULL,
		status     smallint NOT NULL CHECK (status BETWEEN 0 AND 3),
		session    text NOT NULL,
		version    text NOT NULL
	);
	CREATE TABLE peregrine_ha.cluster (
		id                smallint PRIMARY KEY CHECK (id = 1),
		epoch             bigint NOT NULL,
		active_nodeid     text,
		failover_delay_ms bigint NOT NULL,
		prev_delay_ms     bigint NOT NULL,
		delay_changed_at  timestamptz NOT NULL
	)`,
}

// SchemaVersion is the schema version this binary writes.
var SchemaVersion = len(migrations)

// migrate brings the schema up to date inside tx, serialised with other
// nodes by an advisory lock held until tx ends, and creates the cluster
// row with failover delay delayMS if there is none. A schema newer than
// this binary is refused.
func migrate(ctx context.Context, tx pgx.Tx, delayMS int64) error {
	// The key is arbitrary but fixed: "PEREGRIN" as a number.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(5784226349386747214)`); err != nil {
		return fmt.Errorf("cannot lock the schema for migration: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS peregrine_ha;
		CREATE TABLE IF NOT EXISTS peregrine_ha.schema_version (version integer NOT NULL)`); err != nil {
		return fmt.Errorf("cannot create the schema peregrine_ha (does the user have CREATE on the database?): %w", err)
	}
	var v int
	err := tx.QueryRow(ctx, `SELECT version FROM peregrine_ha.schema_version`).Scan(&v)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if _, err := tx.Exec(ctx, `INSERT INTO peregrine_ha.schema_version VALUES (0)`); err != nil {
			return err
		}
	case err != nil:
		return fmt.Errorf("cannot read the schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("%w: peregrine_ha is at version %d, this binary knows %d; run a Peregrine as new as the other nodes", ErrSchemaNewer, v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		if _, err := tx.Exec(ctx, migrations[i]); err != nil {
			return fmt.Errorf("migration %d of peregrine_ha: %w", i+1, err)
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE peregrine_ha.schema_version SET version = $1`, len(migrations)); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO peregrine_ha.cluster VALUES (1, 0, NULL, $1, $1, clock_timestamp()) ON CONFLICT (id) DO NOTHING`, delayMS)
	return err
}
