package ha

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// Writers of the old active keep writing through a takeover, checking
// their token in the database only (as if the node's timers had
// stopped: fenceDB, not Fence), and the new active's writers start at
// once: every committed row of the old epoch precedes every row of the
// new one, and the old writers' refusals are ErrFenced.
func TestIntegrationWritersRacingTakeover(t *testing.T) {
	c := newTestCluster(t)
	const delay = 2 * time.Second
	ctx := context.Background()
	a := c.start("node-a", delay)
	waitFor(t, "node-a active", 10*time.Second, func() bool { return a.Lease() != nil })
	if _, err := a.pool.Exec(ctx, `CREATE TABLE w (epoch bigint NOT NULL, at timestamptz NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	b := c.start("node-b", delay)
	la := a.Lease()

	write := func(n *Node, l *Lease) error {
		return pgx.BeginFunc(ctx, n.pool, func(tx pgx.Tx) error {
			if err := l.fenceDB(ctx, tx); err != nil {
				return err
			}
			// The row's time is taken last, just before the commit.
			_, err := tx.Exec(ctx, `INSERT INTO w VALUES ($1, clock_timestamp())`, l.epoch)
			return err
		})
	}
	var (
		stop           atomic.Bool
		wg             sync.WaitGroup
		mu             sync.Mutex
		otherErrs      []error
		oldOK, oldRefu atomic.Int64
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				err := write(a.Node, la)
				switch {
				case err == nil:
					oldOK.Add(1)
				case IsFenced(err):
					oldRefu.Add(1)
				default:
					mu.Lock()
					otherErrs = append(otherErrs, err)
					mu.Unlock()
				}
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	time.Sleep(delay / 2)
	a.kill() // no more heartbeats; the writers go on
	waitFor(t, "node-b takes over", 20*delay, func() bool { return b.Lease() != nil })
	lb := b.Lease()
	var newOK atomic.Int64
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if err := write(b.Node, lb); err != nil {
					mu.Lock()
					otherErrs = append(otherErrs, errors.Join(errors.New("new active"), err))
					mu.Unlock()
				} else {
					newOK.Add(1)
				}
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	time.Sleep(delay / 2)
	stop.Store(true)
	wg.Wait()
	for _, err := range otherErrs {
		t.Errorf("writer error other than ErrFenced: %v", err)
	}
	if oldOK.Load() == 0 || oldRefu.Load() == 0 || newOK.Load() == 0 {
		t.Fatalf("old active: %d written, %d refused; new active: %d written (want each > 0)", oldOK.Load(), oldRefu.Load(), newOK.Load())
	}
	var oldRows, newRows int64
	var interleaved bool
	err := b.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE epoch = $1), count(*) FILTER (WHERE epoch = $2),
		coalesce(max(at) FILTER (WHERE epoch = $1) >= min(at) FILTER (WHERE epoch = $2), false) FROM w`, la.epoch, lb.epoch).
		Scan(&oldRows, &newRows, &interleaved)
	if err != nil {
		t.Fatal(err)
	}
	if oldRows != oldOK.Load() || newRows != newOK.Load() {
		t.Errorf("rows %d old, %d new; writers reported %d, %d", oldRows, newRows, oldOK.Load(), newOK.Load())
	}
	if interleaved {
		t.Fatal("a write of the old epoch committed after one of the new epoch")
	}
}

// Three nodes starting at once on an empty database: the schema is
// migrated once (the advisory lock), and exactly one node becomes
// active.
func TestIntegrationSimultaneousStart(t *testing.T) {
	c := newTestCluster(t)
	const delay = 2 * time.Second
	names := []string{"node-a", "node-b", "node-c"}
	nodes := make([]*testNode, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := c.open(name, delay)
			if err != nil {
				t.Errorf("open %s: %v", name, err)
				return
			}
			ctx, cancel := context.WithCancel(context.Background())
			tn := &testNode{Node: n, cancel: cancel, done: make(chan error, 1)}
			go func() { tn.done <- n.Run(ctx) }()
			nodes[i] = tn
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, n := range nodes {
			if n != nil {
				n.kill()
				n.pool.Close()
			}
		}
	})
	if t.Failed() {
		return
	}
	active := func() (k int) {
		for _, n := range nodes {
			if n.Lease() != nil {
				k++
			}
		}
		return k
	}
	waitFor(t, "a node active", 10*time.Second, func() bool { return active() > 0 })
	for range 5 {
		if k := active(); k != 1 {
			t.Fatalf("%d nodes hold a lease", k)
		}
		time.Sleep(Heartbeat(delay))
	}
	if v := c.pg.Exec(`SELECT version FROM peregrine_ha.schema_version`); v != "1" {
		t.Errorf("schema_version %q, want 1 (one row)", v)
	}
	if e := c.registry().Epoch; e != 1 {
		t.Errorf("epoch %d, want 1", e)
	}
}

// A password login in key=value form (the password has ';', '{', '}'),
// by a user who may not create the schema: a clear error and nothing
// written; with CREATE on the database it starts.
func TestIntegrationUserWithoutCreate(t *testing.T) {
	c := newTestCluster(t)
	dsn := fmt.Sprintf("host=127.0.0.1 port=%d user=%s password='%s' dbname=postgres sslmode=disable",
		c.pg.Port, testutil.PostgresUser, testutil.PostgresPassword)
	opts := Options{DSN: dsn, Name: "node-a", Address: "127.0.0.1", Port: 10051, FailoverDelay: 2 * time.Second, Version: "test"}
	_, err := Open(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "cannot create the schema peregrine_ha (does the user have CREATE on the database?)") ||
		strings.Contains(err.Error(), testutil.PostgresPassword) {
		t.Fatalf("without CREATE: %v", err)
	}
	if n := c.pg.Exec(`SELECT count(*) FROM pg_namespace WHERE nspname = 'peregrine_ha'`); n != "0" {
		t.Fatalf("schema created by a refused start (%s)", n)
	}
	c.pg.Exec(`GRANT CREATE ON DATABASE postgres TO ` + testutil.PostgresUser)
	n, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("with CREATE: %v", err)
	}
	n.pool.Close()
}
