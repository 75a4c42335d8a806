package catalog

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// go test -run '^$' -bench 'LinkTemplate' -benchtime 3x -count 6 ./internal/catalog/
//
// BenchmarkLinkTemplate links one template of 41 items (agent items,
// trappers, dependents) and 14 triggers to every host of a catalog in
// one Edit, as host.massadd or template.massadd does: one transaction
// and one snapshot build for all the copies, whatever the number of
// hosts. The links are cleared again outside the timer. It reports the
// copies made per second and the heap the copies add to the snapshot
// per copied item (live heap after the link minus before, over hosts ×
// 41), and the CPU time of the link (the process's, GC included).
func BenchmarkLinkTemplate(b *testing.B) {
	for _, hosts := range []int{1000, 10000} {
		b.Run("items=41/hosts="+strconv.Itoa(hosts), func(b *testing.B) {
			c := reopenTrigB(b, filepath.Join(b.TempDir(), "catalog.db"))
			spec := Spec{}
			for i := range hosts {
				spec.Hosts = append(spec.Hosts, HostSpec{Host: fmt.Sprintf("host-%05d", i), Groups: []string{"G"},
					Interfaces: []InterfaceSpec{{IP: "127.0.0.1"}}})
			}
			mustApply(b, c, spec)
			var tmpl uint64
			mustEdit(b, c, func(e *Edit) error {
				ids, err := e.CreateHosts([]NewHost{{Host: "Linux", Template: true}})
				if err != nil {
					return err
				}
				tmpl = ids[0]
				var items []NewItem
				for i := range 27 {
					items = append(items, NewItem{HostID: tmpl, ItemSpec: ItemSpec{Key: "agent.k" + strconv.Itoa(i), Type: "zabbix_agent", ValueType: "uint",
						Tags: []TagSpec{{Tag: "component", Value: "system"}}}})
				}
				for i := range 7 {
					items = append(items, NewItem{HostID: tmpl, ItemSpec: ItemSpec{Key: "trap" + strconv.Itoa(i), ValueType: "float"}})
				}
				ids, err = e.CreateItems(items)
				if err != nil {
					return err
				}
				var deps []NewItem
				for i := range 7 {
					deps = append(deps, NewItem{HostID: tmpl, MasterItemID: ids[i], ItemSpec: ItemSpec{Key: "dep" + strconv.Itoa(i), Type: "dependent", ValueType: "float",
						Preprocessing: []PreprocSpec{{Type: "MULTIPLIER", Parameters: []string{"8"}}}}})
				}
				if _, err := e.CreateItems(deps); err != nil {
					return err
				}
				var trigs []TriggerFields
				for i := range 14 {
					trigs = append(trigs, TriggerFields{Description: "t" + strconv.Itoa(i), Expression: fmt.Sprintf("last(/Linux/agent.k%d)>%d", i, i), Enabled: true})
				}
				_, err = e.CreateTriggers(trigs)
				return err
			})
			hostIDs := make([]uint64, 0, hosts)
			for _, h := range c.Snapshot().Hosts() {
				hostIDs = append(hostIDs, h.ID)
			}
			link := func(want []uint64, clear []uint64) {
				mustEdit(b, c, func(e *Edit) error {
					for _, h := range hostIDs {
						if _, err := e.SetTemplates(h, want, clear, "templates"); err != nil {
							return err
						}
					}
					return nil
				})
			}
			var heap float64
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				before := liveHeap()
				c0 := cpuTime()
				b.StartTimer()
				link([]uint64{tmpl}, nil)
				b.StopTimer()
				cpu += cpuTime() - c0
				heap = float64(liveHeap()-before) / float64(hosts*41)
				if n := c.Snapshot().ItemCount(); n != hosts*41 {
					b.Fatalf("%d items after the link, want %d", n, hosts*41)
				}
				link(nil, []uint64{tmpl})
				b.StartTimer()
			}
			b.ReportMetric(float64(hosts*41)*float64(b.N)/b.Elapsed().Seconds(), "copies/s")
			b.ReportMetric(heap, "heapB/item")
			// The process's CPU time per link: the machine is shared, and
			// its wall time says more about the neighbours than the link.
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// liveHeap is the live heap after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func reopenTrigB(b *testing.B, path string) *Catalog {
	b.Helper()
	c, err := Open(b.Context(), Options{Path: path, ExprRefs: fakeRefs})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}
