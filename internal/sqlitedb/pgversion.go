package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
)

// PGTx is what MigratePG needs of a PostgreSQL transaction, whichever
// API runs it (database/sql through SQLTx, pgx through a caller's
// adapter).
type PGTx interface {
	Exec(ctx context.Context, q string, args ...any) error
	// QueryInt scans the first column of the first row; found is false
	// when there is no row.
	QueryInt(ctx context.Context, q string, args ...any) (v int64, found bool, err error)
}

// SQLTx adapts a database/sql transaction to PGTx.
func SQLTx(tx *sql.Tx) PGTx { return sqlTx{tx} }

type sqlTx struct{ tx *sql.Tx }

func (t sqlTx) Exec(ctx context.Context, q string, args ...any) error {
	_, err := t.tx.ExecContext(ctx, q, args...)
	return err
}

func (t sqlTx) QueryInt(ctx context.Context, q string, args ...any) (int64, bool, error) {
	var v int64
	err := t.tx.QueryRowContext(ctx, q, args...).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return v, err == nil, err
}

var pgIdent = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// CheckPGSchema refuses a schema name that would need quoting: the
// stores put it in their statements as it is.
func CheckPGSchema(schema string) error {
	if !pgIdent.MatchString(schema) {
		return fmt.Errorf("schema name %q: use lower-case letters, digits and _", schema)
	}
	return nil
}

// MigratePG brings a component's tables in schema (a checked name) to
// version, in tx, which must be the caller's fenced write transaction
// (so a node that lost its lease migrates nothing): behind an advisory
// lock of the schema, it creates the schema and its schema_version table
// (component, version) if missing, reads the component's row FOR
// UPDATE, refuses a version newer than this binary's, calls create for
// a component without a row (create makes the tables at version) or
// upgrade(v) for each v from the stored version up to version-1, and
// records version.
func MigratePG(ctx context.Context, tx PGTx, schema, component string, version int64, create func() error, upgrade func(from int64) error) error {
	for _, q := range []string{
		`SELECT pg_advisory_xact_lock(hashtext('peregrine_state:` + schema + `'))`,
		`CREATE SCHEMA IF NOT EXISTS ` + schema,
		`CREATE TABLE IF NOT EXISTS ` + schema + `.schema_version (component text PRIMARY KEY, version integer NOT NULL)`,
	} {
		if err := tx.Exec(ctx, q); err != nil {
			return err
		}
	}
	v, found, err := tx.QueryInt(ctx, `SELECT version FROM `+schema+`.schema_version WHERE component = $1 FOR UPDATE`, component)
	if err != nil {
		return err
	}
	switch {
	case v > version:
		return fmt.Errorf("%s.%s is at schema version %d, newer than this Peregrine's %d: run the newer Peregrine", schema, component, v, version)
	case !found || v == 0:
		if err := create(); err != nil {
			return err
		}
	default:
		for ; v < version; v++ {
			if err := upgrade(v); err != nil {
				return fmt.Errorf("cannot upgrade %s.%s from version %d to %d: %w", schema, component, v, v+1, err)
			}
		}
	}
	return tx.Exec(ctx, `INSERT INTO `+schema+`.schema_version VALUES ($1, $2)
		ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version`, component, version)
}
