package catalog

// Benchmarks of the catalog at scale. Commands (compare runs with
// benchstat):
//
//	go test -run '^$' -bench 'Lookup' -benchmem -count 6 ./internal/catalog/
//	go test -run '^$' -bench 'Build' -benchmem -count 6 ./internal/catalog/
//	go test -run '^$' -bench 'Apply|Open' -benchtime 1x -count 3 ./internal/catalog/
//
// and the end-to-end figures, logged by the test:
//
//	go test -run TestMillionItems -v ./internal/catalog/

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// heapAlloc returns the live heap after a full collection.
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// memInput makes the input of buildSnapshot for a generated spec, with IDs
// assigned as SQLite would, without a database.
func memInput(tb testing.TB, hosts, perHost int) ([]Host, []Item) {
	tb.Helper()
	ns, err := genSpec(hosts, perHost).normalize(true, nil)
	if err != nil {
		tb.Fatal(err)
	}
	hs := make([]Host, 0, len(ns.hosts))
	items := make([]Item, 0, ns.items)
	for i, nh := range ns.hosts {
		hs = append(hs, Host{ID: uint64(i + 1), Host: nh.host, Name: nh.name, Enabled: nh.enabled, GroupIDs: []uint64{1}})
		for _, it := range nh.items {
			it.ID = uint64(len(items) + 1)
			it.HostID = uint64(i + 1)
			items = append(items, it)
		}
	}
	return hs, items
}

// lookupKeys returns every (host, key) pair of s in a fixed random order,
// so that benchmarks do not walk the slab sequentially.
func lookupKeys(s *Snapshot) [][2]string {
	keys := make([][2]string, 0, s.ItemCount())
	for it := range s.allItems {
		keys = append(keys, [2]string{it.Host.Host, it.Key})
	}
	rng := rand.New(rand.NewPCG(42, 42))
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys
}

var sizes = []struct {
	name           string
	hosts, perHost int
}{
	{"items=100k", 100, 1000},
	{"items=1M", 1000, 1000},
	// The estate's shape (issue 30): hosts of 10 items, whose key
	// tables are small.
	{"items=1M-10/host", 100000, 10},
}

// BenchmarkLookup measures Snapshot.Lookup of existing items in random
// order (the worst case: every lookup misses the CPU caches two or three
// times), host by host (a batch from one host), of unknown keys on known
// hosts (miss), and Snapshot.Item by ID. Snapshots are built in memory;
// the database plays no part in lookups.
func BenchmarkLookup(b *testing.B) {
	for _, sz := range sizes {
		hosts, items := memInput(b, sz.hosts, sz.perHost)
		s, err := buildSnapshot(1, nil, hosts, itemSource{extra: items})
		if err != nil {
			b.Fatal(err)
		}
		keys := lookupKeys(s)
		// The same pairs host by host, as one agent's or sender's batch
		// arrives; the key bytes are copies, as when they come off the wire.
		hostOrder := make([][2]string, 0, len(keys))
		for _, h := range s.Hosts() {
			for _, it := range h.Items() {
				hostOrder = append(hostOrder, [2]string{h.Host, string([]byte(it.Key))})
			}
		}
		for _, order := range []struct {
			name string
			keys [][2]string
		}{{"hit-random", keys}, {"hit-host-order", hostOrder}} {
			b.Run(sz.name+"/"+order.name, func(b *testing.B) {
				b.ReportAllocs()
				keys := order.keys
				i := 0
				for b.Loop() {
					k := &keys[i]
					if s.Lookup(k[0], k[1]) == nil {
						b.Fatal("miss")
					}
					if i++; i == len(keys) {
						i = 0
					}
				}
				b.ReportMetric(1e9/(float64(b.Elapsed().Nanoseconds())/float64(b.N)), "lookups/s")
			})
		}
		b.Run(sz.name+"/miss", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				k := &keys[i]
				if s.Lookup(k[0], "no.such.key[1]") != nil {
					b.Fatal("hit")
				}
				if i++; i == len(keys) {
					i = 0
				}
			}
		})
		b.Run(sz.name+"/by-id", func(b *testing.B) {
			b.ReportAllocs()
			rng := rand.New(rand.NewPCG(1, 1))
			n := uint64(s.ItemCount())
			for b.Loop() {
				if s.Item(1+rng.Uint64N(n)) == nil {
					b.Fatal("miss")
				}
			}
		})
	}
}

// BenchmarkBuildSnapshot measures building a snapshot from scratch (what
// Open does after reading the rows) and reports the memory the snapshot
// retains per item.
func BenchmarkBuildSnapshot(b *testing.B) {
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			hosts, items := memInput(b, sz.hosts, sz.perHost)
			before := heapAlloc()
			s, err := buildSnapshot(1, nil, slicesClone(hosts), itemSource{extra: items})
			if err != nil {
				b.Fatal(err)
			}
			retained := heapAlloc() - before
			runtime.KeepAlive(s)
			s = nil
			b.ResetTimer()
			for b.Loop() {
				if _, err := buildSnapshot(1, nil, slicesClone(hosts), itemSource{extra: items}); err != nil {
					b.Fatal(err)
				}
			}
			perOp := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(float64(len(items))/perOp, "items/s")
			b.ReportMetric(float64(retained)/float64(len(items)), "bytes/item")
		})
	}
}

func slicesClone(h []Host) []Host { return append([]Host(nil), h...) }

// BenchmarkApply measures Apply of a spec whose items are all new, into an
// empty catalog: validation, one transaction of inserts, snapshot build.
func BenchmarkApply(b *testing.B) {
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			spec := genSpec(sz.hosts, sz.perHost)
			n := sz.hosts * sz.perHost
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				c, err := Open(context.Background(), Options{Path: filepath.Join(b.TempDir(), "c.db")})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := c.Apply(context.Background(), spec)
				b.StopTimer()
				if err != nil || res.ItemsCreated != n {
					b.Fatal(res, err)
				}
				c.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(n)/(b.Elapsed().Seconds()/float64(b.N)), "items/s")
		})
	}
}

// BenchmarkApplyOneItem measures an Apply that changes one item of a big
// catalog: the cost is the O(items) snapshot rebuild, not SQLite.
func BenchmarkApplyOneItem(b *testing.B) {
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			c, _ := openTemp(b)
			mustApply(b, c, genSpec(sz.hosts, sz.perHost))
			host := c.Snapshot().Hosts()[0].Host
			key := c.Snapshot().Hosts()[0].Items()[0].Key
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				spec := Spec{Hosts: []HostSpec{{Host: host, Groups: []string{"Generated"}, Items: []ItemSpec{{Key: key, Units: fmt.Sprint(i)}}}}}
				if res := mustApply(b, c, spec); res.ItemsUpdated != 1 {
					b.Fatal(res)
				}
			}
		})
	}
}

// BenchmarkOpen measures opening a catalog: reading every row and
// building the snapshot. bytes/item is the Go heap the open catalog
// retains per item (SQLite's own page cache lives outside the Go heap).
func BenchmarkOpen(b *testing.B) {
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "c.db")
			c, err := openPath(path)
			if err != nil {
				b.Fatal(err)
			}
			mustApply(b, c, genSpec(sz.hosts, sz.perHost))
			c.Close()
			n := sz.hosts * sz.perHost
			var retained uint64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				before := heapAlloc()
				b.StartTimer()
				c, err := openPath(path)
				b.StopTimer()
				if err != nil || c.Snapshot().ItemCount() != n {
					b.Fatal(err)
				}
				retained = heapAlloc() - before
				c.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(n)/(b.Elapsed().Seconds()/float64(b.N)), "items/s")
			b.ReportMetric(float64(retained)/float64(n), "bytes/item")
		})
	}
}

// TestMillionItems applies 1,000 hosts × 1,000 items, looks every item
// up, reopens and looks them up again, and logs the timings and memory.
// It asserts no timings.
func TestMillionItems(t *testing.T) {
	if testing.Short() {
		t.Skip("1M items take about a minute; run without -short")
	}
	if raceEnabled {
		t.Skip("1M items under the race detector take too long")
	}
	const hosts, perHost = 1000, 1000
	const n = hosts * perHost
	spec := genSpec(hosts, perHost)
	path := filepath.Join(t.TempDir(), "c.db")
	c, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := mustApply(t, c, spec)
	t.Logf("Apply of %d new items: %v (%.0f items/s)", n, time.Since(start), n/time.Since(start).Seconds())
	if res.ItemsCreated != n || c.Snapshot().ItemCount() != n {
		t.Fatalf("result %+v, %d items in the snapshot", res, c.Snapshot().ItemCount())
	}
	lookupAll := func(s *Snapshot) {
		t.Helper()
		start := time.Now()
		for hi := range spec.Hosts {
			hs := &spec.Hosts[hi]
			for ii := range hs.Items {
				if it := s.Lookup(hs.Host, hs.Items[ii].Key); it == nil || it.Key != hs.Items[ii].Key {
					t.Fatalf("Lookup(%q, %q) = %v", hs.Host, hs.Items[ii].Key, it)
				}
			}
		}
		d := time.Since(start)
		t.Logf("Lookup of all %d items in spec order: %v (%.1f ns/lookup)", n, d, float64(d.Nanoseconds())/n)
	}
	lookupAll(c.Snapshot())

	start = time.Now()
	if res := mustApply(t, c, spec); res.Changed() || res.Unchanged != n+hosts {
		t.Fatalf("re-apply: %+v", res)
	}
	t.Logf("Apply of the same %d items (no change): %v", n, time.Since(start))

	spec.Hosts[500].Items[500].Units = "changed"
	start = time.Now()
	if res := mustApply(t, c, spec); res.ItemsUpdated != 1 {
		t.Fatalf("apply with one change: %+v", res)
	}
	t.Logf("Apply of %d items with one change (diff, write, rebuild): %v", n, time.Since(start))
	applied := c.Snapshot()
	c.Close()

	before := heapAlloc()
	start = time.Now()
	c, err = openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Logf("Open with %d items: %v", n, time.Since(start))
	t.Logf("heap retained by the reopened catalog: %.0f bytes/item", float64(int64(heapAlloc())-int64(before))/n)
	loaded := c.Snapshot()
	if loaded.Version() != applied.Version() || loaded.ItemCount() != n {
		t.Fatalf("reopened: version %d, %d items", loaded.Version(), loaded.ItemCount())
	}
	for a := range applied.allItems {
		l := loaded.Item(a.ID)
		if l == nil || !l.sameConfig(a) || l.HostID != a.HostID || l.HistorySeconds != a.HistorySeconds || l.TrendsSeconds != a.TrendsSeconds {
			t.Fatalf("item %d: applied %+v, loaded %+v", a.ID, a, l)
		}
	}
	lookupAll(c.Snapshot())
}

// BenchmarkHostItems measures a walk of every host's Items, as the API's
// candidate walk and the poller's target list make on each call, over
// one snapshot (after the first walk the sorted slices are cached). One
// op is one walk; ns/item is per item listed. Run:
//
//	go test -run '^$' -bench BenchmarkHostItems/items=100k -benchtime 20x -count 6 ./internal/catalog/
func BenchmarkHostItems(b *testing.B) {
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			hosts, items := memInput(b, sz.hosts, sz.perHost)
			s, err := buildSnapshot(1, nil, hosts, itemSource{extra: items})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				for _, h := range s.Hosts() {
					n += len(h.Items())
				}
			}
			if n != b.N*len(items) {
				b.Fatalf("listed %d items in %d walks, want %d each", n, b.N, len(items))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/item")
		})
	}
}

// BenchmarkSetTriggers measures installing the trigger slab and its
// indexes into a snapshot of 100k / 1M items with one trigger each (what
// every trigger.create rebuilds: the slab as Edit.buildTriggers makes it,
// old triggers with their host IDs, the new ones without).
//
//	go test -run '^$' -bench BenchmarkSetTriggers -benchtime 5x ./internal/catalog/
func BenchmarkSetTriggers(b *testing.B) {
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			hosts, items := memInput(b, sz.hosts, sz.perHost)
			s, err := buildSnapshot(1, nil, slicesClone(hosts), itemSource{extra: items})
			if err != nil {
				b.Fatal(err)
			}
			trigs := make([]Trigger, 0, len(items))
			i := 0
			for it := range s.allItems {
				i++
				trigs = append(trigs, Trigger{ID: uint64(i), Description: "t", Expression: "last(/h/k)>0", Enabled: true, ItemIDs: []uint64{it.ID}})
			}
			s.setTriggers(slices.Clone(trigs)) // host IDs set, as in a snapshot's slab
			old := s.triggers
			fresh := len(old) - 10_000 // the last call's triggers come without host IDs
			b.ReportAllocs()
			for b.Loop() {
				in := slices.Clone(old)
				for i := fresh; i < len(in); i++ {
					in[i].HostIDs = nil
				}
				s.setTriggers(in)
			}
			b.ReportMetric(float64(len(old))*float64(b.N)/b.Elapsed().Seconds(), "triggers/s")
		})
	}
}
