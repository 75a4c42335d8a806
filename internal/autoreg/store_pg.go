package autoreg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/peregrine-mon/peregrine/internal/sqlitedb"
)

// storePGVersion is the PostgreSQL table's version (its row in
// schema_version of the state schema).
const storePGVersion = 1

var (
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
	if err := sqlitedb.CheckPGSchema(schema); err != nil {
		return nil, fmt.Errorf("auto-registration state: %w", err)
	}
	table := schema + ".autoreg_host"
	err := write(ctx, func(tx *sql.Tx) error {
		return sqlitedb.MigratePG(ctx, sqlitedb.SQLTx(tx), schema, "autoreg_host", storePGVersion, func() error {
			_, err := tx.ExecContext(ctx, `CREATE TABLE `+table+` (
				host text PRIMARY KEY, id bigint NOT NULL UNIQUE, seq bigint NOT NULL, host_metadata text NOT NULL,
				ip text NOT NULL, dns text NOT NULL, port integer NOT NULL, flag integer NOT NULL,
				tls_accepted integer NOT NULL, proxy_id bigint NOT NULL, clock_ns bigint NOT NULL);
				CREATE INDEX autoreg_host_seq ON `+table+` (seq)`)
			return err
		}, func(int64) error { return nil })
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
