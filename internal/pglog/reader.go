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

// Follow is Since for a follower of a log whose writer deletes records
// it no longer needs (the alert log's checkpoints): it also reports
// whether records after after were deleted before this call could read
// them — the oldest record left is past after+1 — in the same snapshot
// as the records it reads, so that a reader never misses a deletion.
// A gap left by a rolled-back write looks the same: the caller then
// reads the log again from the start, which costs a read and loses
// nothing. When lost is true fn was not called.
func (l *Log) Follow(ctx context.Context, after int64, fn func(part string, rec []byte) error) (last int64, lost bool, err error) {
	rows, err := l.o.Pool.Query(ctx, `SELECT m.lo, t.seq, t.part, t.rec FROM (SELECT min(seq) AS lo FROM `+l.table+`) m
		LEFT JOIN `+l.table+` t ON t.seq > $1 ORDER BY t.seq`, after)
	if err != nil {
		return after, false, fmt.Errorf("pglog: cannot read %s: %w", l.o.Table, err)
	}
	defer rows.Close()
	last = after
	for rows.Next() {
		var lo, seq *int64
		var part *string
		var b []byte
		if err := rows.Scan(&lo, &seq, &part, &b); err != nil {
			return last, false, fmt.Errorf("pglog: cannot read %s: %w", l.o.Table, err)
		}
		if lo != nil && after > 0 && *lo > after+1 && last == after {
			return after, true, nil
		}
		if seq == nil {
			continue // the empty row of a table with nothing new
		}
		if err := fn(*part, b); err != nil {
			return last, false, err
		}
		last = *seq
	}
	if err := rows.Err(); err != nil {
		return last, false, fmt.Errorf("pglog: cannot read %s: %w", l.o.Table, err)
	}
	return last, false, nil
}
