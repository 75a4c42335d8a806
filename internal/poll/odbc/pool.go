package odbc

import (
	"context"
	"time"
)

// pool holds the connections to one data source: one connection string
// with its login. Its bound counts connections open or opening (slots);
// an idle one is reused before another is opened. A check takes either
// an idle connection or a slot to open one, waiting for either until
// its deadline. Safe for concurrent use; its fields but users are set at
// creation.
type pool struct {
	src   string         // the connection string (a secret)
	slots chan struct{}  // a token per connection open or opening
	idle  chan *pooledDB // connections not in use, at most cap(slots)
	// users counts the checks holding the pool (guarded by Checker.mu):
	// the janitor drops an unused pool only when none does and it has
	// no connection.
	users int
	// lastUse is when a check last took the pool (guarded by
	// Checker.mu).
	lastUse time.Time
}

// pooledDB is a connection in a pool.
type pooledDB struct {
	db dbConn
	// idleSince is when it was given back (the janitor closes it after
	// Options.IdleTimeout).
	idleSince time.Time
}

func newPool(src string, max int) *pool {
	return &pool{src: src, slots: make(chan struct{}, max), idle: make(chan *pooledDB, max)}
}

// get returns an idle connection, or (nil, true) with a slot taken to
// open one; ctx's error when it ends first.
func (p *pool) get(ctx context.Context) (*pooledDB, bool, error) {
	select {
	case cn := <-p.idle:
		return cn, false, nil
	default:
	}
	select {
	case cn := <-p.idle:
		return cn, false, nil
	case p.slots <- struct{}{}:
		return nil, true, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// put gives a connection back for reuse. It never blocks: there are
// never more connections than slots, nor idle ones than connections.
func (p *pool) put(cn *pooledDB, now time.Time) {
	cn.idleSince = now
	p.idle <- cn
}

// release frees the slot of a connection closed, or of one that could
// not be opened.
func (p *pool) release() { <-p.slots }

// flush closes every idle connection (after one of them was found
// broken: the others, opened before, likely are too) and returns how
// many it closed.
func (p *pool) flush() int { return p.expire(time.Now().Add(time.Hour)) }

// expire closes the idle connections unused since before cutoff and
// returns how many it closed.
func (p *pool) expire(cutoff time.Time) int {
	n := len(p.idle)
	closed := 0
	for range n {
		var cn *pooledDB
		select {
		case cn = <-p.idle:
		default:
			return closed
		}
		if cn.idleSince.Before(cutoff) {
			cn.db.close()
			p.release()
			closed++
			continue
		}
		p.idle <- cn
	}
	return closed
}
