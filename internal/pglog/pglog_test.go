package pglog_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/pglog"
	"github.com/peregrine-mon/peregrine/internal/testutil/hatest"
)

func activeNode(t *testing.T) (*ha.Node, *ha.Lease) {
	t.Helper()
	c := hatest.Start(t, "pglog-a")
	n := c.Node
	return n, n.Lease()
}

func replay(t *testing.T, l *pglog.Log, part string) []string {
	t.Helper()
	var out []string
	if err := l.Replay(part, func(b []byte) error { out = append(out, string(b)); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestIntegrationLog: appends keep their order per part across groups,
// a group that fails after its rows were copied leaves none of them
// (and the next group is written), marks and deletes, a reopen, and a
// refused newer schema.
func TestIntegrationLog(t *testing.T) {
	n, lease := activeNode(t)
	var fail bool
	write := func(ctx context.Context, fn func(pgx.Tx) error) error {
		return lease.Write(ctx, func(tx pgx.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			if fail {
				return errors.New("injected failure after the copy")
			}
			return nil
		})
	}
	o := pglog.Options{Pool: n.Pool(), Write: write, Table: "t_log"}
	l, err := pglog.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	var ps []*pglog.Pending
	for i := range 3000 {
		ps = append(ps, l.AppendAsync(fmt.Sprintf("p%d", i%2), fmt.Appendf(nil, "r%04d", i)))
	}
	for _, p := range ps {
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	mark, err := l.Mark()
	if err != nil {
		t.Fatal(err)
	}
	fail = true
	a, b := l.AppendAsync("p0", []byte("lost a")), l.AppendAsync("p1", []byte("lost b"))
	if a.Wait() == nil || b.Wait() == nil {
		t.Fatal("a failed group was acknowledged")
	}
	fail = false
	if err := l.AppendAsync("p0", []byte("after")).Wait(); err != nil {
		t.Fatal(err)
	}
	if parts, err := l.Parts(); err != nil || !slices.Equal(parts, []string{"p0", "p1"}) {
		t.Fatalf("parts %v (%v)", parts, err)
	}
	got := replay(t, l, "p0")
	if len(got) != 1501 || got[0] != "r0000" || got[1] != "r0002" || got[1499] != "r2998" || got[1500] != "after" {
		t.Fatalf("part p0: %d records, %v ... %v", len(got), got[:2], got[len(got)-2:])
	}
	if err := l.DeleteThrough(mark); err != nil {
		t.Fatal(err)
	}
	if got := replay(t, l, "p0"); !slices.Equal(got, []string{"after"}) {
		t.Fatalf("after DeleteThrough: %v", got)
	}
	if err := l.DeletePart("p0"); err != nil {
		t.Fatal(err)
	}
	if parts, _ := l.Parts(); len(parts) != 0 {
		t.Fatalf("parts after deleting: %v", parts)
	}
	l.Close()
	if err := l.AppendAsync("p0", nil).Wait(); !errors.Is(err, pglog.ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	if l, err = pglog.Open(o); err != nil { // migrated already
		t.Fatal(err)
	}
	l.Close()
	if _, err := n.Pool().Exec(context.Background(), `UPDATE peregrine_state.schema_version SET version = 7 WHERE component = 't_log'`); err != nil {
		t.Fatal(err)
	}
	if _, err := pglog.Open(o); err == nil {
		t.Fatal("a table from a newer Peregrine was accepted")
	}
}
