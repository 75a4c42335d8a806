package clickhouse

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/history/historytest"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

func TestMain(m *testing.M) {
	if os.Getenv("PEREGRINE_CH_ACK_CHILD") != "" {
		os.Exit(ackChild())
	}
	os.Exit(m.Run())
}

func inserted(o *Options) { o.Ack, o.Dir = AckInserted, "" }

// ackBatch is batch i of the ack tests: one value for each of items.
func ackBatch(i, items int) []history.Sample {
	v := make([]history.Sample, items)
	for j := range v {
		v[j] = history.Sample{ItemID: uint64(j + 1), Clock: 1_700_000_000 + int64(i), NS: int32(j), Type: history.Float, F: float64(i)}
	}
	return v
}

func TestAckInsertedContract(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server")
	}
	ch := testutil.StartClickHouse(t)
	historytest.Run(t, func(t *testing.T) history.Store { return openStore(t, ch, inserted) })
}

// Values a Write acknowledged are in ClickHouse when it returns, with no
// spool; concurrent writes share inserts (group commit).
func TestAckInsertedIsInClickHouse(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server")
	}
	ch := testutil.StartClickHouse(t)
	s := openStore(t, ch, inserted)
	ctx := context.Background()
	if err := s.Write(ctx, ackBatch(0, 10)); err != nil {
		t.Fatal(err)
	}
	// Straight from ClickHouse, not through Read (which would merge a
	// spool if there were one).
	if raw, _ := countRows(t, s, "history"); raw != 10 {
		t.Fatalf("rows in ClickHouse right after the ack: %d, want 10", raw)
	}
	if b := s.Backlog(); b != 0 {
		t.Fatalf("backlog %d in inserted mode", b)
	}
	const writers, per = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*per)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				b := ackBatch(1+w*per+i, 10)
				if err := s.Write(ctx, b); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if raw, dedup := countRows(t, s, "history"); raw != 10*(1+writers*per) || dedup != raw {
		t.Fatalf("rows %d (distinct %d), want %d", raw, dedup, 10*(1+writers*per))
	}
	inserts := s.mInserts.Load()
	t.Logf("%d writes in %d inserts", 1+writers*per, inserts)
	if inserts > uint64(1+writers*per) {
		t.Fatalf("%d inserts for %d writes", inserts, 1+writers*per)
	}
}

// ClickHouse down: a write is answered with an error (the trapper says
// "failed"), never acknowledged; writes are refused at once for
// RetryInterval; once ClickHouse is back the resent batch is stored,
// exactly once with what had landed.
func TestAckInsertedOutage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server and stops it")
	}
	ch := testutil.StartClickHouse(t)
	s := openStore(t, ch, func(o *Options) {
		inserted(o)
		o.QueryTimeout, o.AckTimeout, o.RetryInterval = 2*time.Second, 5*time.Second, 500*time.Millisecond
	})
	ctx := context.Background()
	acked := 0
	for i := range 5 {
		if err := s.Write(ctx, ackBatch(i, 20)); err != nil {
			t.Fatal(err)
		}
		acked++
	}
	ch.Stop()
	failed := ackBatch(5, 20)
	if err := s.Write(ctx, failed); err == nil {
		t.Fatal("a write with ClickHouse stopped was acknowledged")
	} else {
		t.Logf("answered: %v", err)
	}
	if err := s.WriteErr(); err == nil {
		t.Fatal("WriteErr is nil right after a failed insert")
	}
	ch.Start()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.Write(ctx, failed) // the sender resends
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing after ClickHouse returned: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := s.Write(ctx, failed); err != nil { // a second copy is one value
		t.Fatal(err)
	}
	_, dedup := countRows(t, s, "history")
	if dedup != 20*(acked+1) {
		t.Fatalf("distinct values %d, want %d", dedup, 20*(acked+1))
	}
	var got []history.Sample
	err := s.Read(ctx, history.Query{ItemID: 1, From: 0, Till: maxClock}, func(v *history.Sample) bool { got = append(got, *v); return true })
	if err != nil || len(got) != acked+1 {
		t.Fatalf("item 1 reads %d values (%v), want %d", len(got), err, acked+1)
	}
}

// ackChild is the test binary as a writer process (from
// TestAckInsertedKill): it writes batches in inserted mode and prints
// each batch number once its Write returned nil.
func ackChild() int {
	s, err := Open(context.Background(), Options{URLs: []string{os.Getenv("PEREGRINE_CH_ACK_CHILD")}, Database: os.Getenv("PEREGRINE_CH_ACK_DB"), Ack: AckInserted})
	if err != nil {
		fmt.Println("OPEN", err)
		return 1
	}
	for i := 0; ; i++ {
		if err := s.Write(context.Background(), ackBatch(i, 50)); err != nil {
			fmt.Println("ERR", err)
			continue
		}
		fmt.Println("ACK", i)
	}
}

// A writer process killed with SIGKILL right after acknowledgements
// loses none of them: a fresh store in this process reads every
// acknowledged batch from ClickHouse.
func TestAckInsertedKill(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server and a writer process")
	}
	ch := testutil.StartClickHouse(t)
	db := fmt.Sprintf("kill%d", time.Now().UnixNano()%1e6)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PEREGRINE_CH_ACK_CHILD="+ch.URL, "PEREGRINE_CH_ACK_DB="+db)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	last := -1
	for sc.Scan() && last < 30 {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "ACK "); ok {
			last, _ = strconv.Atoi(n)
			continue
		}
		if strings.HasPrefix(line, "OPEN") {
			t.Fatal(line)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if last < 30 {
		t.Fatalf("the writer acknowledged only up to batch %d", last)
	}
	s := openStore(t, ch, func(o *Options) { inserted(o); o.Database = db })
	for item := uint64(1); item <= 50; item++ {
		seen := map[int64]bool{}
		err := s.Read(context.Background(), history.Query{ItemID: item, From: 0, Till: maxClock}, func(v *history.Sample) bool { seen[v.Clock] = true; return true })
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i <= last; i++ {
			if !seen[1_700_000_000+int64(i)] {
				t.Fatalf("item %d: batch %d was acknowledged before the kill and is not in ClickHouse", item, i)
			}
		}
	}
	t.Logf("%d acknowledged batches of 50 values all read back after SIGKILL", last+1)
}

// A spool left by a run in spooled mode is inserted when the store opens
// in inserted mode.
func TestAckInsertedDrainsSpool(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts clickhouse-server")
	}
	ch := testutil.StartClickHouse(t)
	dir := t.TempDir()
	db := fmt.Sprintf("drain%d", time.Now().UnixNano()%1e6)
	s1 := openStore(t, ch, func(o *Options) { o.Dir, o.Database, o.FlushInterval = dir, db, time.Hour })
	if err := s1.Write(context.Background(), ackBatch(0, 7)); err != nil {
		t.Fatal(err)
	}
	s1.Close() // unshipped: the values stay in the spool
	s2 := openStore(t, ch, func(o *Options) { o.Ack, o.Dir, o.Database = AckInserted, dir, db })
	if raw, _ := countRows(t, s2, "history"); raw != 7 {
		t.Fatalf("%d rows after opening in inserted mode, want the spool's 7", raw)
	}
	if err := s2.Write(context.Background(), ackBatch(1, 7)); err != nil {
		t.Fatal(err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s2.Write(context.Background(), ackBatch(2, 7)); !errors.Is(err, history.ErrClosed) {
		t.Fatalf("write after Close: %v", err)
	}
}
