package historytest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// Opener returns a fresh, empty store for one subtest.
type Opener func(t *testing.T) history.Store

// ReadAll collects every sample q selects.
func ReadAll(t testing.TB, s history.Store, q history.Query) []history.Sample {
	t.Helper()
	var out []history.Sample
	err := s.Read(context.Background(), q, func(v *history.Sample) bool {
		c := *v
		if c.Log != nil {
			lm := *c.Log
			c.Log = &lm
		}
		out = append(out, c)
		return true
	})
	if err != nil {
		t.Fatalf("Read(%+v): %v", q, err)
	}
	return out
}

func write(t *testing.T, s history.Store, v []history.Sample) {
	t.Helper()
	if err := s.Write(context.Background(), v); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

// Run runs the contract suite.
func Run(t *testing.T, open Opener) {
	t.Run("AllValueTypes", func(t *testing.T) {
		s := open(t)
		in := []history.Sample{
			{ItemID: 1, Clock: 100, NS: 5, Type: history.Float, F: -1.5e300},
			{ItemID: 1, Clock: 101, Type: history.Float, F: math.SmallestNonzeroFloat64},
			{ItemID: 2, Clock: 100, Type: history.Uint, U: math.MaxUint64},
			{ItemID: 2, Clock: 102, Type: history.Uint, U: 1<<53 + 1}, // not representable as float64
			{ItemID: 3, Clock: 100, Type: history.Str, S: "héllo"},
			{ItemID: 4, Clock: 100, Type: history.Text, S: string(make([]byte, 65535))},
			{ItemID: 5, Clock: 100, NS: 999999999, Type: history.Log, S: "line one",
				Log: &history.LogMeta{Timestamp: 99, Source: "app", Severity: 4, EventID: 7}},
		}
		write(t, s, in)
		for _, id := range []uint64{1, 2, 3, 4, 5} {
			var want []history.Sample
			for _, v := range in {
				if v.ItemID == id {
					want = append(want, v)
				}
			}
			got := ReadAll(t, s, history.Query{ItemID: id, From: 0, Till: 1 << 31})
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("item %d (-want +got):\n%s", id, d)
			}
		}
	})

	t.Run("RangeOrderLimit", func(t *testing.T) {
		s := open(t)
		var in []history.Sample
		for i := 0; i < 10000; i++ {
			in = append(in, history.Sample{ItemID: 7, Clock: int64(1000 + i/2), NS: int32(i % 2), Type: history.Float, F: float64(i)})
		}
		// Unsorted input, split over several writes.
		r := rand.New(rand.NewPCG(1, 2))
		shuffled := append([]history.Sample(nil), in...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		for i := 0; i < len(shuffled); i += 1234 {
			write(t, s, shuffled[i:min(i+1234, len(shuffled))])
		}
		f := func(q history.Query, want []history.Sample) {
			t.Helper()
			got := ReadAll(t, s, q)
			if len(got) != len(want) {
				t.Fatalf("%+v: got %d samples, want %d", q, len(got), len(want))
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("%+v (-want +got):\n%s", q, d)
			}
		}
		rev := func(v []history.Sample) []history.Sample {
			out := make([]history.Sample, len(v))
			for i := range v {
				out[len(v)-1-i] = v[i]
			}
			return out
		}
		f(history.Query{ItemID: 7, From: 0, Till: 1 << 40}, in)
		f(history.Query{ItemID: 7, From: 1010, Till: 1019}, in[20:40]) // both ends inclusive
		f(history.Query{ItemID: 7, From: 1010, Till: 1019, Desc: true}, rev(in[20:40]))
		f(history.Query{ItemID: 7, From: 0, Till: 1 << 40, Limit: 5}, in[:5])
		f(history.Query{ItemID: 7, From: 0, Till: 1 << 40, Limit: 5, Desc: true}, rev(in[len(in)-5:]))
		f(history.Query{ItemID: 7, From: 0, Till: 1 << 40, Desc: true}, rev(in))
		f(history.Query{ItemID: 7, From: 6000, Till: 7000}, nil)
		f(history.Query{ItemID: 8, From: 0, Till: 1 << 40}, nil)
		// fn returning false stops the read.
		n := 0
		if err := s.Read(context.Background(), history.Query{ItemID: 7, From: 0, Till: 1 << 40}, func(*history.Sample) bool { n++; return n < 3 }); err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Fatalf("callback called %d times after returning false at 3", n)
		}
	})

	t.Run("DuplicateTimestampLastWins", func(t *testing.T) {
		s := open(t)
		write(t, s, []history.Sample{{ItemID: 9, Clock: 50, NS: 1, Type: history.Float, F: 1}, {ItemID: 9, Clock: 51, Type: history.Float, F: 3}})
		write(t, s, []history.Sample{{ItemID: 9, Clock: 50, NS: 1, Type: history.Float, F: 2}})
		got := ReadAll(t, s, history.Query{ItemID: 9, From: 0, Till: 100})
		want := []history.Sample{{ItemID: 9, Clock: 50, NS: 1, Type: history.Float, F: 2}, {ItemID: 9, Clock: 51, Type: history.Float, F: 3}}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("(-want +got):\n%s", d)
		}
	})

	t.Run("WriteDoesNotRetainInput", func(t *testing.T) {
		s := open(t)
		in := []history.Sample{{ItemID: 3, Clock: 1, Type: history.Log, S: "a", Log: &history.LogMeta{Severity: 1}}}
		write(t, s, in)
		in[0].Clock, in[0].Log.Severity = 2, 9
		got := ReadAll(t, s, history.Query{ItemID: 3, From: 0, Till: 10})
		if len(got) != 1 || got[0].Clock != 1 || got[0].Log.Severity != 1 {
			t.Fatalf("store kept a reference to the caller's batch: %+v", got)
		}
	})

	t.Run("ConcurrentWritersAndReaders", func(t *testing.T) {
		s := open(t)
		const writers, perWriter, batch = 4, 2000, 100
		var wg sync.WaitGroup
		stop := make(chan struct{})
		errc := make(chan error, writers+1)
		wg.Add(1)
		go func() { // a reader that must always see sorted, unique timestamps
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var prev *history.Sample
				err := s.Read(context.Background(), history.Query{ItemID: 1, From: 0, Till: 1 << 40}, func(v *history.Sample) bool {
					if prev != nil && !prev.Before(v) {
						errc <- fmt.Errorf("read out of order: %+v then %+v", *prev, *v)
						return false
					}
					c := *v
					prev = &c
					return true
				})
				if err != nil {
					errc <- err
					return
				}
			}
		}()
		var ww sync.WaitGroup
		for w := 0; w < writers; w++ {
			ww.Add(1)
			go func(w int) {
				defer ww.Done()
				b := make([]history.Sample, 0, batch)
				for i := 0; i < perWriter; i++ {
					b = append(b, history.Sample{ItemID: uint64(i % 3), Clock: int64(i), NS: int32(w), Type: history.Float, F: float64(i)})
					if len(b) == batch {
						if err := s.Write(context.Background(), b); err != nil {
							errc <- err
							return
						}
						b = b[:0]
					}
				}
			}(w)
		}
		ww.Wait()
		close(stop)
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatal(err)
		}
		total := 0
		for id := uint64(0); id < 3; id++ {
			total += len(ReadAll(t, s, history.Query{ItemID: id, From: 0, Till: 1 << 40}))
		}
		if total != writers*perWriter {
			t.Fatalf("read back %d samples, wrote %d", total, writers*perWriter)
		}
	})

	t.Run("Downsample", func(t *testing.T) { runDownsample(t, open) })
	t.Run("Realistic", func(t *testing.T) { runRealistic(t, open) })
	t.Run("ReadMany", func(t *testing.T) { runReadMany(t, open) })

	t.Run("Closed", func(t *testing.T) {
		s := open(t)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Write(context.Background(), []history.Sample{{ItemID: 1, Clock: 1}}); !errors.Is(err, history.ErrClosed) {
			t.Fatalf("Write after Close: %v, want ErrClosed", err)
		}
		if d, ok := s.(history.Downsampler); ok {
			_, err := d.Downsample(context.Background(), history.DownsampleQuery{ItemID: 1, From: 0, Till: 10, Buckets: 1})
			if !errors.Is(err, history.ErrClosed) {
				t.Fatalf("Downsample after Close: %v, want ErrClosed", err)
			}
		}
	})
}
