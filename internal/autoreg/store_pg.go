package autoreg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// storePGVersion is the PostgreSQL table's version (its row in
// schema_version of the state schema).
const storePGVersion = 1

var (
	pgIdent   = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
	tableName = regexp.MustCompile(`\bautoreg_host\b`)
)

// OpenStorePG keeps the auto-registrations in PostgreSQL instead of a
// file (state.store: postgres): table autoreg_host of schema (default
// peregrine_state), read through db, pgx's database/sql driver on the
// state database (stdlib.OpenDBFromPool(node.Pool())), and every write
// (the table's creation included) run by write, the HA lease's fenced
// transaction (func(ctx, fn) error { return lease.WriteSQL(ctx, db, fn)
// }): a node that lost its lease saves nothing. The statements are the
// SQLite ones with PostgreSQL's placeholders and the schema's name.
// Close closes db (not the pool under it).
func OpenStorePG(ctx context.Context, db *sql.DB, write func(ctx context.Context, fn func(*sql.Tx) error) error, schema string) (*Store, error) {
	if db == nil || write == nil {
		return nil, errors.New("auto-registration state: PostgreSQL needs a database and the lease's fenced writer")
	}
	if schema == "" {
		schema = "peregrine_state"
	}
	if !pgIdent.MatchString(schema) {
		return nil, fmt.Errorf("auto-registration state: schema name %q: use lower-case letters, digits and _", schema)
	}
	table := schema + ".autoreg_host"
	err := write(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`SELECT pg_advisory_xact_lock(hashtext('peregrine_state:` + schema + `'))`,
			`CREATE SCHEMA IF NOT EXISTS ` + schema,
			`CREATE TABLE IF NOT EXISTS ` + schema + `.schema_version (component text PRIMARY KEY, version integer NOT NULL)`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		var v int
		err := tx.QueryRowContext(ctx, `SELECT version FROM `+schema+`.schema_version WHERE component = 'autoreg_host' FOR UPDATE`).Scan(&v)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if v > storePGVersion {
			return fmt.Errorf("table %s is at version %d, newer than this Peregrine's %d: run the newer Peregrine", table, v, storePGVersion)
		}
		if v == 0 {
			if _, err := tx.ExecContext(ctx, `CREATE TABLE `+table+` (
				host text PRIMARY KEY, id bigint NOT NULL UNIQUE, seq bigint NOT NULL, host_metadata text NOT NULL,
				ip text NOT NULL, dns text NOT NULL, port integer NOT NULL, flag integer NOT NULL,
				tls_accepted integer NOT NULL, proxy_id bigint NOT NULL, clock_ns bigint NOT NULL);
				CREATE INDEX autoreg_host_seq ON `+table+` (seq)`); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO `+schema+`.schema_version VALUES ('autoreg_host', $1)
			ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version`, storePGVersion)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("auto-registration state: cannot prepare %s in PostgreSQL: %w", table, err)
	}
	s := &Store{db: db, write: write, q: func(q string) string { return pgDialect(q, schema) }}
	return s.loadSeq(ctx, "PostgreSQL "+table)
}

// pgDialect puts one of this file's SQLite statements in PostgreSQL's:
// $n placeholders, the table in schema. (No statement has a ? or the
// table's name inside a literal.)
func pgDialect(q, schema string) string {
	q = tableName.ReplaceAllString(q, schema+".autoreg_host")
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
