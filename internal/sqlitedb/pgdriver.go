package sqlitedb

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"sync"
)

// pgConnector wraps pgx's database/sql connector so that the stores'
// SQLite statements run on PostgreSQL (pgtranslate.go): each statement
// is rewritten once, then cached; booleans go as 0 and 1, as SQLite
// stores them; LastInsertId comes from RETURNING.
type pgConnector struct {
	inner  driver.Connector
	tables map[string]*tableInfo
	cache  sync.Map // SQLite text → translated
	pool   interface{ Close() }
}

// Close closes the store's pool; sql.DB.Close calls it.
func (c *pgConnector) Close() error {
	c.pool.Close()
	return nil
}

func (c *pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{Conn: conn, c: c}, nil
}

func (c *pgConnector) Driver() driver.Driver { return c.inner.Driver() }

// translate caches translate's answers; the statements are constants
// of the stores (with a few shapes made per row count), so the cache
// stays small.
func (c *pgConnector) translate(q string) (translated, error) {
	if t, ok := c.cache.Load(q); ok {
		return t.(translated), nil
	}
	t, err := translate(q, c.tables)
	if err != nil {
		return t, err
	}
	c.cache.Store(q, t)
	return t, nil
}

// pgConn is one connection; pgx's stdlib.Conn implements every
// optional interface used here.
type pgConn struct {
	driver.Conn
	c *pgConnector
}

var errNoContext = errors.New("sqlitedb: the PostgreSQL driver needs the context forms of database/sql's calls")

func (p *pgConn) Prepare(q string) (driver.Stmt, error) {
	return p.PrepareContext(context.Background(), q)
}

// PrepareContext defers to the statement's executions: pgx caches the
// prepared statements of each connection itself.
func (p *pgConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	t, err := p.c.translate(q)
	if err != nil {
		return nil, err
	}
	return &pgStmt{conn: p, t: t}, nil
}

func (p *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return p.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (p *pgConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	t, err := p.c.translate(q)
	if err != nil {
		return nil, err
	}
	return p.exec(ctx, t, args)
}

func (p *pgConn) exec(ctx context.Context, t translated, args []driver.NamedValue) (driver.Result, error) {
	if !t.returning {
		r, err := p.Conn.(driver.ExecerContext).ExecContext(ctx, t.q, args)
		if err != nil {
			return nil, err
		}
		n, err := r.RowsAffected()
		if err != nil {
			return nil, err
		}
		return pgResult{n: n}, nil
	}
	rows, err := p.Conn.(driver.QueryerContext).QueryContext(ctx, t.q, args)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var res pgResult
	dest := make([]driver.Value, 1)
	for {
		err := rows.Next(dest)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		res.n++
		if id, ok := dest[0].(int64); ok {
			res.id = id
		}
	}
	return res, nil
}

func (p *pgConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	t, err := p.c.translate(q)
	if err != nil {
		return nil, err
	}
	return p.Conn.(driver.QueryerContext).QueryContext(ctx, t.q, args)
}

// CheckNamedValue passes booleans as SQLite stores them, 1 and 0 (the
// columns are bigint), and everything else to pgx.
func (p *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	if b, ok := nv.Value.(bool); ok {
		nv.Value = int64(0)
		if b {
			nv.Value = int64(1)
		}
		return nil
	}
	if c, ok := p.Conn.(driver.NamedValueChecker); ok {
		return c.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func (p *pgConn) Ping(ctx context.Context) error {
	if c, ok := p.Conn.(driver.Pinger); ok {
		return c.Ping(ctx)
	}
	return nil
}

func (p *pgConn) ResetSession(ctx context.Context) error {
	if c, ok := p.Conn.(driver.SessionResetter); ok {
		return c.ResetSession(ctx)
	}
	return nil
}

func (p *pgConn) IsValid() bool {
	if c, ok := p.Conn.(driver.Validator); ok {
		return c.IsValid()
	}
	return true
}

// pgResult is an Exec's outcome: LastInsertId is the last row's rowid
// alias for an INSERT into a table with one (0 otherwise, where SQLite
// would report an earlier statement's).
type pgResult struct{ id, n int64 }

func (r pgResult) LastInsertId() (int64, error) { return r.id, nil }
func (r pgResult) RowsAffected() (int64, error) { return r.n, nil }

type pgStmt struct {
	conn *pgConn
	t    translated
}

func (s *pgStmt) Close() error  { return nil }
func (s *pgStmt) NumInput() int { return -1 }

func (s *pgStmt) Exec([]driver.Value) (driver.Result, error) { return nil, errNoContext }
func (s *pgStmt) Query([]driver.Value) (driver.Rows, error)  { return nil, errNoContext }

func (s *pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.conn.exec(ctx, s.t, args)
}

func (s *pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.conn.Conn.(driver.QueryerContext).QueryContext(ctx, s.t.q, args)
}
