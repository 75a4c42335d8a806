package catalog

// Benchmarks of one small edit applied to a big running catalog (issue
// 30: the model at 10M items). Sizes come from the environment so that
// the 10M-item run can be made on a machine with the memory for it:
//
//	go test -run '^$' -bench 'EditScale' -benchtime 20x ./internal/catalog/
//	PEREGRINE_BENCH_HOSTS=10000,100000 PEREGRINE_BENCH_ITEMS=10 \
//	  go test -run '^$' -bench 'EditScale' -benchtime 20x -timeout 2h ./internal/catalog/
//	PEREGRINE_BENCH_HOSTS=1000000 PEREGRINE_BENCH_ITEMS=10 \
//	  go test -run '^$' -bench 'EditScale' -benchtime 5x -timeout 6h ./internal/catalog/
//
// Each size logs, besides ns/op of the edits: the time to reopen the
// catalog, the Go heap the open catalog retains per item and the
// first Items call of one host (what item.get by host walks).

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scaleSizes reads PEREGRINE_BENCH_HOSTS (host counts, comma-separated)
// and PEREGRINE_BENCH_ITEMS (items per host); defaults 1000 and 10.
func scaleSizes(tb testing.TB) (hosts []int, perHost int) {
	perHost = 10
	if v := os.Getenv("PEREGRINE_BENCH_ITEMS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			tb.Fatalf("PEREGRINE_BENCH_ITEMS=%q: want a positive number", v)
		}
		perHost = n
	}
	hs := cmp.Or(os.Getenv("PEREGRINE_BENCH_HOSTS"), "1000")
	for _, f := range strings.Split(hs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			tb.Fatalf("PEREGRINE_BENCH_HOSTS=%q: want positive numbers", hs)
		}
		hosts = append(hosts, n)
	}
	return hosts, perHost
}

// BenchmarkEditScale measures one host rename and one item.update (the
// units of one item) committed to a catalog of N hosts with one trigger
// per 5 items: SQLite's transaction plus the next snapshot.
func BenchmarkEditScale(b *testing.B) {
	hosts, perHost := scaleSizes(b)
	for _, n := range hosts {
		b.Run(fmt.Sprintf("hosts=%d/items=%d", n, n*perHost), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "c.db")
			c, err := Open(context.Background(), Options{Path: path, ExprRefs: fakeRefs})
			if err != nil {
				b.Fatal(err)
			}
			for from := 0; from < n; from += 10000 {
				sp := genSpec(min(10000, n-from), perHost)
				var trigs []TriggerFields
				for i := range sp.Hosts {
					sp.Hosts[i].Host = fmt.Sprintf("host-%07d.example.net", from+i)
					// A trigger on each of genSpec's custom.check.N items
					// (every 4th): at 10 items per host, one per 5 items,
					// the 2M triggers for 10M items.
					for j := 3; j < perHost; j += 4 {
						trigs = append(trigs, TriggerFields{Description: "check {HOST.NAME}", Priority: 3, Enabled: true,
							Expression: fmt.Sprintf("last(/%s/custom.check.%d)>0", sp.Hosts[i].Host, j)})
					}
				}
				mustApply(b, c, sp)
				mustEdit(b, c, func(e *Edit) error { _, err := e.CreateTriggers(trigs); return err })
			}
			c.Close()
			before := heapAlloc()
			start := time.Now()
			c, err = Open(context.Background(), Options{Path: path, ExprRefs: fakeRefs})
			if err != nil {
				b.Fatal(err)
			}
			openS := time.Since(start).Seconds()
			perItem := float64(heapAlloc()-min(before, heapAlloc())) / float64(n*perHost)
			defer c.Close()
			h := c.Snapshot().Hosts()[n/2]
			it := h.Items()[0]
			start = time.Now()
			_ = c.Snapshot().HostByID(h.ID).Items()
			walk := time.Since(start)
			b.Run("rename", func(b *testing.B) {
				for i := range b.N {
					name := fmt.Sprintf("%s-%d", h.Host, i)
					if _, err := c.Edit(context.Background(), func(e *Edit) error {
						return e.UpdateHosts([]HostUpdate{{ID: h.ID, Host: &name}})
					}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("item.update", func(b *testing.B) {
				for i := range b.N {
					units := strconv.Itoa(i)
					if _, err := c.Edit(context.Background(), func(e *Edit) error {
						return e.UpdateItems([]ItemUpdate{{ID: it.ID, Units: &units}})
					}); err != nil {
						b.Fatal(err)
					}
				}
			})
			// A benchmark with sub-benchmarks prints no metrics of its own.
			b.Logf("%d hosts, %d items, %d triggers: open %.2f s, %.0f B of heap per item (triggers included), one host's Items %v",
				n, n*perHost, len(c.Snapshot().Triggers()), openS, perItem, walk)
		})
	}
}

// BenchmarkDeriveScale is the model at scale without SQLite (issue 30,
// part 4): N hosts × M items with one trigger per 5 items, built in
// memory as Open builds them, then one item.update after another
// applied to the running snapshot (derive: the item's host made anew,
// the index shards and pages it is in copied, the sorted host list
// copied; the trigger slab shared, as Edit.build shares it). ns/op is
// one such update; its time is flat in the number of items, the host
// list's copy (8 bytes per host) being the one part that grows. It
// reports the build times of items and triggers (build-s,
// trig-build-s), the Go heap the built snapshot holds per item (items
// only) and per trigger, and the latency of one host's first Items
// call (what item.get by host walks) and of a Lookup; then the catalog's
// part of problem.get for 1,000 problems of random triggers (each
// trigger, its hosts and their groups looked up, as the API's
// permission and host filters do: problems1000-ns) and LLD's snapshot
// step for 100,000 discovered items, 100 on each of 1,000 hosts, derived
// into the running snapshot (lld100k-ms; SQLite's inserts, which an
// ApplyDiscovery adds, are measured by `peregrine bench lld`). With
// PEREGRINE_BENCH_MEMPROFILE=file the heap is profiled after the items
// are built (file.hosts-N; go tool pprof -sample_index=inuse_space).
//
//	PEREGRINE_BENCH_HOSTS=10000,100000 PEREGRINE_BENCH_ITEMS=10 \
//	  go test -run '^$' -bench 'DeriveScale' -benchtime 200x -benchmem ./internal/catalog/
//	# the size, 1M hosts × 10 items, 2M triggers (≈ 16 GB free):
//	PEREGRINE_BENCH_HOSTS=1000000 PEREGRINE_BENCH_ITEMS=10 \
//	  go test -run '^$' -bench 'DeriveScale' -benchtime 200x -benchmem -timeout 2h ./internal/catalog/
func BenchmarkDeriveScale(b *testing.B) {
	hosts, perHost := scaleSizes(b)
	for _, n := range hosts {
		b.Run(fmt.Sprintf("hosts=%d/items=%d", n, n*perHost), func(b *testing.B) {
			before := heapAlloc()
			hs, items := memInput(b, n, perHost)
			start := time.Now()
			s, err := buildSnapshot(1, []Group{{ID: 1, Name: "G"}}, hs, itemSource{extra: items})
			if err != nil {
				b.Fatal(err)
			}
			buildS := time.Since(start).Seconds()
			hs, items = nil, nil
			withItems := heapAlloc()
			writeHeapProfile(b, n)
			perItem := float64(withItems-min(before, withItems)) / float64(n*perHost)
			trigs := make([]Trigger, 0, n*perHost/5)
			for it := range s.allItems {
				if it.ID%5 == 0 {
					trigs = append(trigs, Trigger{ID: uint64(len(trigs) + 1), Description: "check {HOST.NAME}", Priority: 3, Enabled: true,
						Expression: "last(/" + it.Host.Host + "/" + it.Key + ")>0", ItemIDs: []uint64{it.ID}})
				}
			}
			start = time.Now()
			s.setTriggers(trigs)
			trigS := time.Since(start).Seconds()
			withTrigs := heapAlloc()
			perTrig := float64(withTrigs-min(withItems, withTrigs)) / float64(max(len(s.triggers), 1))
			h := s.hosts[len(s.hosts)/2]
			start = time.Now()
			its := h.Items()
			byHost := time.Since(start)
			start = time.Now()
			_ = s.Lookup(h.Host, its[len(its)-1].Key)
			lookup := time.Since(start)
			b.ResetTimer()
			for i := range b.N {
				it := s.hosts[(i*7919)%len(s.hosts)].Items()[0]
				p := *it
				p.Units = strconv.Itoa(i)
				next, err := derive(s, s.version+1, s.groups, &partChange{items: map[uint64]*Item{p.ID: &p}}, false)
				if err != nil {
					b.Fatal(err)
				}
				next.shareTriggers(s)
				s = next
			}
			b.StopTimer()
			if got := s.Item(its[0].ID); got == nil || got.Key != its[0].Key || len(s.TriggersOfItem(5)) != 1 {
				b.Fatal("the derived snapshot lost an item or a trigger")
			}
			probNs := problemLookups(s, 1000)
			lldMs := deriveDiscovered(b, s, 100_000)
			// After ResetTimer, which drops metrics.
			b.ReportMetric(buildS, "build-s")
			b.ReportMetric(trigS, "trig-build-s")
			b.ReportMetric(perItem, "heap-B/item")
			b.ReportMetric(perTrig, "heap-B/trigger")
			b.ReportMetric(float64(byHost.Nanoseconds()), "items-of-host-ns")
			b.ReportMetric(float64(lookup.Nanoseconds()), "lookup-ns")
			b.ReportMetric(probNs, "problems1000-ns")
			b.ReportMetric(lldMs, "lld100k-ms")
		})
	}
}

// problemLookups returns the time of the catalog's part of a problem.get
// answering n problems of random triggers: each trigger by ID, its
// hosts by ID and their groups checked, as the API's permission and
// group filters make them.
func problemLookups(s *Snapshot, n int) float64 {
	ts := s.Triggers()
	if len(ts) == 0 {
		return 0
	}
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = ts[(i*7919+13)%len(ts)].ID
	}
	want := []uint64{2, 1}
	start := time.Now()
	found := 0
	for _, id := range ids {
		t := s.Trigger(id)
		if t == nil {
			continue
		}
		for _, hid := range t.HostIDs {
			if h := s.HostByID(hid); h != nil && slices.ContainsFunc(h.GroupIDs, func(g uint64) bool { return slices.Contains(want, g) }) {
				found++
				break
			}
		}
	}
	d := time.Since(start)
	if found == 0 {
		panic("no trigger found")
	}
	return float64(d.Nanoseconds())
}

// deriveDiscovered derives from s the snapshot with n new discovered
// items, 100 on each of n/100 hosts, and returns the time in ms.
func deriveDiscovered(b *testing.B, s *Snapshot, n int) float64 {
	b.Helper()
	var maxID uint64
	for it := range s.allItems {
		maxID = max(maxID, it.ID)
	}
	pc := &partChange{items: map[uint64]*Item{}}
	made := make([]Item, n)
	for i := range made {
		h := s.hosts[(i/100)%len(s.hosts)]
		proto := &h.items[0]
		made[i] = Item{ID: maxID + 1 + uint64(i), HostID: h.ID, Key: fmt.Sprintf("vfs.fs.size[/mnt/d%d,pused]", i%100), Name: "Space used",
			Type: proto.Type, ValueType: proto.ValueType, Enabled: true, Delay: proto.Delay, History: proto.History, Trends: proto.Trends,
			HistorySeconds: proto.HistorySeconds, TrendsSeconds: proto.TrendsSeconds, Units: "%",
			Discovery: &Discovery{RuleID: proto.ID, ProtoID: proto.ID}}
		pc.created = append(pc.created, &made[i])
	}
	start := time.Now()
	next, err := derive(s, s.version+1, s.groups, pc, false)
	if err != nil {
		b.Fatal(err)
	}
	next.shareTriggers(s)
	d := time.Since(start)
	if next.ItemCount() != s.ItemCount()+n {
		b.Fatalf("derived %d items, want %d", next.ItemCount(), s.ItemCount()+n)
	}
	return float64(d.Microseconds()) / 1000
}

// writeHeapProfile writes the heap profile to
// $PEREGRINE_BENCH_MEMPROFILE.hosts-n when that is set.
func writeHeapProfile(b *testing.B, n int) {
	p := os.Getenv("PEREGRINE_BENCH_MEMPROFILE")
	if p == "" {
		return
	}
	f, err := os.Create(fmt.Sprintf("%s.hosts-%d", p, n))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}
