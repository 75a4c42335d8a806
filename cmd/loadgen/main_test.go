package main

import (
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/bench"
	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// The catalog written for -serve must hold exactly the items the sender
// sends, as floats: a value for an item the catalog lacks would count as
// failed and make the run unclean.
func TestCatalogSpecMatchesPlan(t *testing.T) {
	l := load{layout: bench.Layout{Group: "Bench", HostPrefix: "h-", KeyPrefix: "k.", Hosts: 3, ItemsPerHost: 4}, duration: time.Second, packet: 5, data: bench.Data{Seed: 9}}
	now := time.Unix(1_800_000_000, 0)
	plan, err := l.plan(now)
	if err != nil {
		t.Fatal(err)
	}
	if plan.StartClock != now.Unix()-86400 || plan.PacketValues != 5 || plan.Duration != time.Second || plan.Data != l.data {
		t.Errorf("plan %+v", plan)
	}
	// In two edits, as run writes them, with two triggers per item.
	spec := catalogSpec(l.layout, 0, 2, nil, 2)
	spec.Hosts = append(spec.Hosts, catalogSpec(l.layout, 2, 3, nil, 2).Hosts...)
	have := map[string]string{}
	for _, h := range spec.Hosts {
		if len(h.Groups) != 1 || h.Groups[0] != "Bench" {
			t.Errorf("host %s groups %v", h.Host, h.Groups)
		}
		for _, it := range h.Items {
			have[h.Host+"/"+it.Key] = it.ValueType
		}
		if len(h.Triggers) != 2*len(h.Items) {
			t.Errorf("host %s: %d triggers for %d items, want 2 each", h.Host, len(h.Triggers), len(h.Items))
		}
		for _, tr := range h.Triggers {
			if refs, err := trigger.ItemRefs(tr.Expression); err != nil || len(refs) != 1 || refs[0].Host != h.Host {
				t.Errorf("trigger %q: refs %v, err %v", tr.Expression, refs, err)
			}
		}
	}
	if len(have) != plan.Items.Len() {
		t.Fatalf("catalog has %d items, the plan sends %d", len(have), plan.Items.Len())
	}
	for _, h := range plan.Items.Hosts {
		for _, k := range plan.Items.Keys {
			if vt, ok := have[h+"/"+k]; !ok || vt != "float" {
				t.Errorf("%s/%s: in catalog %v, value type %q", h, k, ok, vt)
			}
		}
	}
}

func TestPlanRefusesEmptyLoads(t *testing.T) {
	for _, l := range []load{
		{layout: bench.Layout{Hosts: 0, ItemsPerHost: 10}, duration: time.Second},
		{layout: bench.Layout{Hosts: 10, ItemsPerHost: -1}, duration: time.Second},
		{layout: bench.Layout{Hosts: 1, ItemsPerHost: 1}},
	} {
		if _, err := l.plan(time.Now()); err == nil || !strings.Contains(err.Error(), "must be positive") {
			t.Errorf("%+v: err %v", l, err)
		}
	}
}
