package pglog

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// OpenReader opens a log for reading only, as an HA standby node does
// (the event store's follower): the table must exist (the active node
// made it), nothing is created, migrated or written, and appends fail
// with ErrClosed. Options.Write is not needed.
func OpenReader(o Options) (*Log, error) {
	if o.Pool == nil || o.Table == "" {
		return nil, errors.New("pglog: OpenReader needs Pool and Table")
	}
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	l := &Log{o: o, table: pgx.Identifier{o.Schema, o.Table}.Sanitize(), closed: true, readOnly: true}
	return l, nil
}

// Since calls fn with each record whose seq is above after, in seq
// order, and returns the highest seq it passed to fn (after when there
// was none). The log has one writer at a time (the active node's,
// whose groups commit one after another), so records become visible
// in seq order and a reader that resumes from the returned seq misses
// none.
func (l *Log) Since(ctx context.Context, after int64, fn func(part string, rec []byte) error) (int64, error) {
	rows, err := l.o.Pool.Query(ctx, `SELECT seq, part, rec FROM `+l.table+` WHERE seq > $1 ORDER BY seq`, after)
	if err != nil {
		return after, fmt.Errorf("pglog: cannot read %s: %w", l.o.Table, err)
	}
	defer rows.Close()
	last := after
	for rows.Next() {
		var seq int64
		var part string
		var b []byte
		if err := rows.Scan(&seq, &part, &b); err != nil {
			return last, fmt.Errorf("pglog: cannot read %s: %w", l.o.Table, err)
		}
		if err := fn(part, b); err != nil {
			return last, err
		}
		last = seq
	}
	if err := rows.Err(); err != nil {
		return last, fmt.Errorf("pglog: cannot read %s: %w", l.o.Table, err)
	}
	return last, nil
}
