package catalog

import (
	"context"
	"slices"
	"testing"
)

// downgradeLLDHosts undoes the 31 → 32 migration (discovered hosts),
// after downgradeDRules.
var downgradeLLDHosts = append(slices.Clone(downgradeDRules), "DROP TABLE host_discovery")

// TestHostDiscoveryReopen: a discovered host's link survives a reopen;
// a catalog migrated from 31 has no discovered host.
func TestHostDiscoveryReopen(t *testing.T) {
	c, path := openTemp(t)
	ctx := context.Background()
	_, err := c.Edit(ctx, func(e *Edit) error {
		gids, err := e.CreateGroups([]string{"g"})
		if err != nil {
			return err
		}
		ids, err := e.CreateHosts([]NewHost{{Host: "h", GroupIDs: gids}})
		if err != nil {
			return err
		}
		return e.setHostDiscovery(ids[0], &Discovery{RuleID: 7, ProtoID: 8, TSDelete: 9})
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Snapshot().Host("h").Ext().Discovery; d == nil || *d != (Discovery{RuleID: 7, ProtoID: 8, TSDelete: 9}) {
		t.Fatalf("in the edit's snapshot: %+v", d)
	}
	c.Close()
	c2, err := Open(ctx, Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if d := c2.Snapshot().Host("h").Ext().Discovery; d == nil || d.RuleID != 7 {
		t.Fatalf("reopened: %+v", d)
	}
	c2.Close()
	execAll(t, path, append(slices.Clone(downgradeLLDHosts), "UPDATE catalog_meta SET schema_version = 31")...)
	c3, err := Open(ctx, Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if d := c3.Snapshot().Host("h").Ext().Discovery; d != nil {
		t.Fatalf("migrated: %+v", d)
	}
}
