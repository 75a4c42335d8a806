package lld_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/lld"
)

// BenchmarkApply measures one Edit applying the vfs.fs.discovery
// results of many hosts of a catalog whose hosts link "Linux by Zabbix
// agent active": unchanged results (the steady state: nothing written,
// no snapshot built) and results that each add a file system (one
// transaction and one snapshot build for the whole batch).
//
//	go test ./internal/lld/ -run '^$' -bench Apply -benchtime 20x -count 6
func BenchmarkApply(b *testing.B) {
	for _, hosts := range []int{100, 1000} {
		f := newFixture(b, hosts)
		eng := lld.New(lld.Options{Catalog: f.cat})
		ctx := context.Background()
		rules := make([]uint64, hosts)
		for i := range hosts {
			rules[i] = f.rule(b, i, "vfs.fs.discovery").ID
		}
		vals := func(n int) []lld.Value {
			out := make([]lld.Value, hosts)
			for i, r := range rules {
				out[i] = lld.Value{RuleID: r, Value: fmt.Sprintf(`[{"{#FSNAME}":"/","{#FSTYPE}":"ext4"},{"{#FSNAME}":"/d%d","{#FSTYPE}":"xfs"}]`, n)}
			}
			return out
		}
		eng.Apply(ctx, vals(0))
		b.Run(fmt.Sprintf("hosts=%d/unchanged", hosts), func(b *testing.B) {
			v := vals(0)
			b.ReportAllocs()
			for b.Loop() {
				eng.Apply(ctx, v)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(hosts), "ns/result")
		})
		b.Run(fmt.Sprintf("hosts=%d/changed", hosts), func(b *testing.B) {
			b.ReportAllocs()
			n := 1
			for b.Loop() {
				eng.Apply(ctx, vals(n))
				n++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(hosts), "ns/result")
		})
	}
}
