package catalog

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// downgradeDRules undoes the 32 → 33 migration (network discovery), the
// first step of every older downgrade.
var downgradeDRules = []string{"DROP TABLE drules", "DROP TABLE dchecks", "DROP TABLE dhosts", "DROP TABLE dservices"}

// TestDRules: a fresh catalog has 6.0's rule "Local network" (2, check
// 2); rules are created, replaced with their checks and deleted with
// what they found; names are unique; everything survives a reopen, and a
// database of version 30 gains the tables and the default rule.
func TestDRules(t *testing.T) {
	ctx := context.Background()
	c, path := openTemp(t)
	rs := c.DRules()
	if len(rs) != 1 || rs[0].ID != 2 || rs[0].Name != "Local network" || rs[0].Status != 1 || len(rs[0].Checks) != 1 || rs[0].Checks[0].ID != 2 {
		t.Fatalf("fresh: %+v", rs)
	}
	ids, err := c.SaveDRules(ctx, []DRule{{Name: "r", IPRange: "10.0.0.1-3", Delay: "1h",
		Checks: []DCheck{{Type: DCheckICMP, Ports: "0", HostSource: 1}, {Type: DCheckAgent, Key: "system.uname", Ports: "10050", HostSource: 1}}}}, nil)
	if err != nil || len(ids) != 1 || ids[0] != 3 {
		t.Fatalf("create: %v %v", ids, err)
	}
	if _, err := c.SaveDRules(ctx, []DRule{{Name: "r", IPRange: "x"}}, nil); !errors.As(err, new(*DRuleExistsError)) {
		t.Fatalf("name taken: %v", err)
	}
	r := c.DRule(3)
	if r == nil || len(r.Checks) != 2 || r.Checks[0].ID != 3 || r.Checks[1].ID != 4 {
		t.Fatalf("read back: %+v", r)
	}
	h := &DHost{ID: c.NewDHostID(), DRuleID: 3, Status: DStatusUp, LastUp: 100}
	s1 := &DService{ID: c.NewDServiceID(), DHostID: h.ID, DCheckID: 3, IP: "10.0.0.1", Status: DStatusUp, LastUp: 100}
	s2 := &DService{ID: c.NewDServiceID(), DHostID: h.ID, DCheckID: 4, IP: "10.0.0.1", Port: 10050, Value: "Linux", Status: DStatusUp, LastUp: 100}
	if err := c.SaveDiscovery(ctx, DiscoveryChange{Hosts: []*DHost{h}, Services: []*DService{s1, s2}}); err != nil {
		t.Fatal(err)
	}
	// Replace the checks: the agent check goes, with its service.
	up := *r
	up.Checks = []DCheck{r.Checks[0], {Type: DCheckTCP, Ports: "22", HostSource: 1}}
	if _, err := c.SaveDRules(ctx, []DRule{up}, nil); err != nil {
		t.Fatal(err)
	}
	st := c.Discovery()
	if len(st.Hosts) != 1 || len(st.Services) != 1 || st.Services[s1.ID] == nil {
		t.Fatalf("after the update: %+v %+v", st.Hosts, st.Services)
	}
	c.Close()
	c2, err := Open(ctx, Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if r := c2.DRule(3); r == nil || len(r.Checks) != 2 || r.Checks[1].ID != 5 || r.Checks[1].Ports != "22" {
		t.Fatalf("reopened: %+v", r)
	}
	if st := c2.Discovery(); len(st.Hosts) != 1 || st.Services[s1.ID] == nil || st.Services[s1.ID].LastUp != 100 {
		t.Fatalf("reopened state: %+v", st.Services)
	}
	if id := c2.NewDHostID(); id != h.ID+1 {
		t.Fatalf("next dhost ID %d after %d", id, h.ID)
	}
	if _, err := c2.SaveDRules(ctx, nil, []uint64{3}); err != nil {
		t.Fatal(err)
	}
	if st := c2.Discovery(); len(st.Hosts)+len(st.Services) != 0 || c2.DRule(3) != nil {
		t.Fatalf("after delete: %+v", st)
	}
	c2.Close()
	execAll(t, path, append(slices.Clone(downgradeDRules), "UPDATE catalog_meta SET schema_version = 32")...)
	c3, err := Open(ctx, Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if rs := c3.DRules(); len(rs) != 1 || rs[0].ID != 2 {
		t.Fatalf("migrated: %+v", rs)
	}
}
