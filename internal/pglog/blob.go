package pglog

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// blobMigrations are the steps of a blob table (Options.Table); %[2]s
// is the quoted table. Append only.
var blobMigrations = []string{
	`CREATE TABLE %[1]s.%[2]s (
		name text PRIMARY KEY,
		data bytea NOT NULL,
		saved_at timestamptz NOT NULL DEFAULT now()
	)`,
}

// Blob is a named value replaced whole on each save, kept in a row of
// table Options.Table: a store that rewrites a snapshot file in the
// embedded mode (the preprocessing state). Save is fenced like every
// write of this package: a node that lost its lease replaces nothing.
type Blob struct {
	o     Options
	name  string
	table string
}

// OpenBlob creates or upgrades the table (fenced) and returns the blob
// name in it.
func OpenBlob(o Options, name string) (*Blob, error) {
	if o.Pool == nil || o.Write == nil || o.Table == "" {
		return nil, errors.New("pglog: Options needs Pool, Write (the HA lease's) and Table")
	}
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	if err := migrate(o, blobMigrations); err != nil {
		return nil, err
	}
	return &Blob{o: o, name: name, table: pgx.Identifier{o.Schema, o.Table}.Sanitize()}, nil
}

// Load returns the saved value, or nil when none was saved.
func (b *Blob) Load() ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), b.o.Timeout)
	defer cancel()
	var data []byte
	err := b.o.Pool.QueryRow(ctx, `SELECT data FROM `+b.table+` WHERE name = $1`, b.name).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pglog: cannot read %s %q: %w", b.o.Table, b.name, err)
	}
	return data, nil
}

// Save replaces the value in a fenced transaction.
func (b *Blob) Save(data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), b.o.Timeout)
	defer cancel()
	err := b.o.Write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO `+b.table+` (name, data) VALUES ($1, $2)
			ON CONFLICT (name) DO UPDATE SET data = EXCLUDED.data, saved_at = now()`, b.name, data)
		return err
	})
	if err != nil {
		return fmt.Errorf("pglog: cannot save %s %q: %w", b.o.Table, b.name, err)
	}
	return nil
}

// String names the blob for logs.
func (b *Blob) String() string { return "PostgreSQL " + b.o.Schema + "." + b.o.Table + " " + b.name }
