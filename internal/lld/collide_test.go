package lld_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/lld"
	"github.com/peregrine-mon/peregrine/internal/trigger"
)

// Two prototypes whose keys are the same once expanded: the first
// makes the item, the second is reported on the rule and changes
// nothing (issue 26, bad input).
func TestPrototypeKeysCollide(t *testing.T) {
	ctx := context.Background()
	cat, err := catalog.Open(ctx, catalog.Options{Path: filepath.Join(t.TempDir(), "c.db"), ExprRefs: trigger.ItemRefs})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	var rule uint64
	_, err = cat.Edit(ctx, func(e *catalog.Edit) error {
		gids, err := e.CreateGroups([]string{"g"})
		if err != nil {
			return err
		}
		hids, err := e.CreateHosts([]catalog.NewHost{{Host: "h", GroupIDs: gids}})
		if err != nil {
			return err
		}
		proto := func(key string) catalog.ItemPrototype {
			return catalog.ItemPrototype{Item: catalog.ItemSpec{Key: key, Name: key, Type: "trapper", ValueType: "3"}}
		}
		ids, err := e.CreateItems([]catalog.NewItem{{HostID: hids[0], ItemSpec: catalog.ItemSpec{Key: "r", Type: "trapper"},
			LLD: &catalog.LLDRule{ItemPrototypes: []catalog.ItemPrototype{proto("p[{#A}]"), proto("p[{#B}]")}}}})
		if err != nil {
			return err
		}
		rule = ids[0]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	eng := lld.New(lld.Options{Catalog: cat, Now: func() time.Time { return now }})
	eng.Apply(ctx, []lld.Value{{RuleID: rule, Value: `[{"{#A}":"x","{#B}":"x"}]`}})
	// Recorded from 6.0.14: the same words as for a key taken by an
	// item, one line per collision.
	if got, want := eng.RuleError(rule), "Cannot create item: item with the same key \"p[x]\" already exists.\n"; got != want {
		t.Errorf("rule error %q, want %q", got, want)
	}
	h := cat.Snapshot().Host("h")
	n := 0
	for _, it := range h.Items() {
		if it.Discovery != nil {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d items discovered, want 1", n)
	}
}
