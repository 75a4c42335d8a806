package catalog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// downgradeHTTPTests undoes the 33 → 34 migration (web scenarios),
// after downgradeItemLogTimeFmt.
var downgradeHTTPTests = append(slices.Clone(downgradeItemLogTimeFmt), "DROP TABLE httptests", "DROP TABLE httpsteps")

// TestHTTPTestMigration: a version 33 catalog opens with no scenarios
// and takes new ones.
func TestHTTPTestMigration(t *testing.T) {
	f := newTmplFixture(t)
	f.c.Close()
	execAll(t, f.path, append(slices.Clone(downgradeHTTPTests), "UPDATE catalog_meta SET schema_version = 33")...)
	c, err := Open(context.Background(), Options{Path: f.path})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(c.Snapshot().HTTPTests()) != 0 {
		t.Fatal("scenarios after migration")
	}
	mustEdit(t, c, func(e *Edit) error { _, err := e.CreateHTTPTests([]HTTPTest{webScenario(f.h1, "x", "a")}); return err })
	if len(c.Snapshot().HTTPTests()) != 1 {
		t.Fatal("no scenario")
	}
}

func webScenario(host uint64, name string, steps ...string) HTTPTest {
	t := HTTPTest{HostID: host, Name: name, HTTPTestFields: DefaultHTTPTestFields, Tags: []Tag{{Tag: "s", Value: "web"}}}
	for i, s := range steps {
		t.Steps = append(t.Steps, HTTPStep{Name: s, No: i + 1, URL: "http://127.0.0.1/" + s, Timeout: DefaultStepTimeout, FollowRedirects: 1})
	}
	return t
}

// webItemsOf returns the web items of host h (template or host) by key.
func webItemsOf(c *Catalog, h uint64) map[string]*Item {
	out := map[string]*Item{}
	for _, it := range c.Snapshot().HostOrTemplate(h).Items() {
		if it.Type == WebItem {
			out[it.Key] = it
		}
	}
	return out
}

// TestHTTPTestItems: a scenario has the items 6.0 makes for it (keys,
// names, value types, units, interval, tags, recorded from 6.0.14); a
// rename renames them in place, a step removed takes its items, and a
// deleted scenario takes all of them.
func TestHTTPTestItems(t *testing.T) {
	f := newTmplFixture(t)
	var id uint64
	mustEdit(t, f.c, func(e *Edit) error {
		ids, err := e.CreateHTTPTests([]HTTPTest{webScenario(f.h1, "login", "get page", "post, form")})
		id = ids[0]
		return err
	})
	wi := webItemsOf(f.c, f.h1)
	want := map[string]string{
		"web.test.in[login,,bps]":                  "0 Bps Download speed for scenario \"login\".",
		"web.test.fail[login]":                     "3  Failed step of scenario \"login\".",
		"web.test.error[login]":                    "1  Last error message of scenario \"login\".",
		"web.test.in[login,get page,bps]":          "0 Bps Download speed for step \"get page\" of scenario \"login\".",
		"web.test.time[login,get page,resp]":       "0 s Response time for step \"get page\" of scenario \"login\".",
		"web.test.rspcode[login,get page]":         "3  Response code for step \"get page\" of scenario \"login\".",
		"web.test.in[login,\"post, form\",bps]":    "0 Bps Download speed for step \"post, form\" of scenario \"login\".",
		"web.test.time[login,\"post, form\",resp]": "0 s Response time for step \"post, form\" of scenario \"login\".",
		"web.test.rspcode[login,\"post, form\"]":   "3  Response code for step \"post, form\" of scenario \"login\".",
	}
	if len(wi) != len(want) {
		t.Fatalf("web items: %v", wi)
	}
	for k, w := range want {
		it := wi[k]
		if it == nil {
			t.Fatalf("no item %q", k)
		}
		if got := strings.TrimSpace(string(rune('0'+it.ValueType))) + " " + it.Units + " " + it.Name; got != w || it.Delay != "1m" || it.History != "30d" ||
			it.Trends != "90d" || !it.Enabled || len(it.Tags) != 1 {
			t.Errorf("%s: %q %+v", k, got, it)
		}
	}
	sc := f.c.Snapshot().HTTPTest(id)
	if got := f.c.Snapshot().HTTPTestOfItem(wi["web.test.fail[login]"].ID); got == nil || got.ID != id {
		t.Fatal("scenario not found by its web.test.fail item")
	}
	// Rename and drop a step: the items follow, IDs kept.
	failID := wi["web.test.fail[login]"].ID
	mustEdit(t, f.c, func(e *Edit) error {
		n := *e.HTTPTest(id)
		n.Name, n.Steps, n.Status = "sign in", n.Steps[:1], 1
		return e.UpdateHTTPTests([]HTTPTest{n})
	})
	wi = webItemsOf(f.c, f.h1)
	if len(wi) != 6 || wi["web.test.fail[sign in]"] == nil || wi["web.test.fail[sign in]"].ID != failID || wi["web.test.fail[sign in]"].Enabled {
		t.Fatalf("after rename: %v", wi)
	}
	if s2 := f.c.Snapshot().HTTPTest(id); s2.Steps[0].ID != sc.Steps[0].ID {
		t.Fatal("step ID not kept")
	}
	f.reload(t)
	mustEdit(t, f.c, func(e *Edit) error { return e.DeleteHTTPTests([]uint64{id}) })
	if wi = webItemsOf(f.c, f.h1); len(wi) != 0 || len(f.c.Snapshot().HTTPTests()) != 0 {
		t.Fatalf("after delete: %v", wi)
	}
}

// TestHTTPTestInheritance: a template's scenario is copied to what
// links it, its items copies of the template's (templateid, as
// 6.0.14 shows them), follows the template's changes, cannot be deleted
// alone, stays the host's own after unlink, goes with clear.
func TestHTTPTestInheritance(t *testing.T) {
	f := newTmplFixture(t)
	var tid uint64
	mustEdit(t, f.c, func(e *Edit) error {
		ids, err := e.CreateHTTPTests([]HTTPTest{webScenario(f.tmpl, "site", "home")})
		tid = ids[0]
		return err
	})
	if s := f.c.Snapshot().HTTPTest(tid); s == nil || len(s.UUID) != 32 {
		t.Fatalf("template scenario: %+v", s)
	}
	f.link(t, f.h1, f.tmpl)
	copyOf := func(h uint64) *HTTPTest {
		for _, s := range f.c.Snapshot().HTTPTests() {
			if s.HostID == h {
				return &s
			}
		}
		return nil
	}
	c := copyOf(f.h1)
	if c == nil || c.TemplateID != tid || c.UUID != "" || c.Steps[0].ID == f.c.Snapshot().HTTPTest(tid).Steps[0].ID {
		t.Fatalf("copy: %+v", c)
	}
	ti, hi := webItemsOf(f.c, f.tmpl), webItemsOf(f.c, f.h1)
	if len(hi) != 6 {
		t.Fatalf("host web items: %v", hi)
	}
	for k, it := range hi {
		if it.TemplateID != ti[k].ID {
			t.Errorf("%s: templateid %d, want %d", k, it.TemplateID, ti[k].ID)
		}
	}
	mustEdit(t, f.c, func(e *Edit) error {
		n := *e.HTTPTest(tid)
		n.Delay = "30s"
		n.Steps = append(n.Steps, HTTPStep{Name: "about", No: 2, URL: "http://127.0.0.1/about", Timeout: "15s", FollowRedirects: 1})
		return e.UpdateHTTPTests([]HTTPTest{n})
	})
	if c = copyOf(f.h1); c.Delay != "30s" || len(c.Steps) != 2 || len(webItemsOf(f.c, f.h1)) != 9 {
		t.Fatalf("copy after update: %+v", c)
	}
	if hi = webItemsOf(f.c, f.h1); hi["web.test.time[site,about,resp]"].TemplateID != webItemsOf(f.c, f.tmpl)["web.test.time[site,about,resp]"].ID {
		t.Fatal("new step's item not a copy")
	}
	_, err := f.c.Edit(t.Context(), func(e *Edit) error { return e.DeleteHTTPTests([]uint64{c.ID}) })
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("deleting a copy: %v", err)
	}
	f.reload(t)
	// Unlink keeps the copy as the host's own.
	mustEdit(t, f.c, func(e *Edit) error { _, err := e.SetTemplates(f.h1, nil, nil, "templates"); return err })
	if c = copyOf(f.h1); c == nil || c.TemplateID != 0 {
		t.Fatalf("after unlink: %+v", c)
	}
	for k, it := range webItemsOf(f.c, f.h1) {
		if it.TemplateID != 0 {
			t.Errorf("%s still a copy", k)
		}
	}
	mustEdit(t, f.c, func(e *Edit) error { return e.DeleteHTTPTests([]uint64{c.ID}) })
	// Link again, then clear.
	f.link(t, f.h1, f.tmpl)
	if c = copyOf(f.h1); c == nil || len(webItemsOf(f.c, f.h1)) != 9 {
		t.Fatalf("copy again: %+v", c)
	}
	mustEdit(t, f.c, func(e *Edit) error { _, err := e.SetTemplates(f.h1, nil, []uint64{f.tmpl}, "templates"); return err })
	if c = copyOf(f.h1); c != nil || len(webItemsOf(f.c, f.h1)) != 0 {
		t.Fatalf("after clear: %+v %v", c, webItemsOf(f.c, f.h1))
	}
	// Deleting the template's scenario deletes the copies.
	f.link(t, f.h1, f.tmpl)
	mustEdit(t, f.c, func(e *Edit) error { return e.DeleteHTTPTests([]uint64{tid}) })
	if len(f.c.Snapshot().HTTPTests()) != 0 || len(webItemsOf(f.c, f.h1)) != 0 || len(webItemsOf(f.c, f.tmpl)) != 0 {
		t.Fatal("scenarios or items left")
	}
	f.reload(t)
	if !reflect.DeepEqual(f.c.Snapshot().HTTPTests(), []HTTPTest(nil)) {
		t.Fatal("reloaded scenarios")
	}
}

// TestHTTPTestHostDeleted: deleting a host deletes its scenarios and
// their items; deleting a template deletes its scenarios and clears
// their copies from what linked it.
func TestHTTPTestHostDeleted(t *testing.T) {
	f := newTmplFixture(t)
	mustEdit(t, f.c, func(e *Edit) error {
		_, err := e.CreateHTTPTests([]HTTPTest{webScenario(f.h2, "own", "a"), webScenario(f.tmpl, "tpl", "b")})
		return err
	})
	f.link(t, f.h1, f.tmpl)
	if n := len(f.c.Snapshot().HTTPTests()); n != 3 {
		t.Fatalf("%d scenarios", n)
	}
	mustEdit(t, f.c, func(e *Edit) error { return e.DeleteHosts([]uint64{f.h2}) })
	mustEdit(t, f.c, func(e *Edit) error { return e.DeleteHosts([]uint64{f.tmpl}) })
	if ts := f.c.Snapshot().HTTPTests(); len(ts) != 0 {
		t.Fatalf("scenarios left: %+v", ts)
	}
	if wi := webItemsOf(f.c, f.h1); len(wi) != 0 {
		t.Fatalf("web items left on h1: %v", wi)
	}
	f.reload(t)
}

// go test -run '^$' -bench 'LinkWebScenario' -benchtime 3x ./internal/catalog/
//
// BenchmarkLinkWebScenario links a template with one three-step web
// scenario to every host in one Edit: the copies and their 12 items per
// host, and an unrelated edit afterwards (a host's description), which
// must not walk the scenarios.
func BenchmarkLinkWebScenario(b *testing.B) {
	for _, hosts := range []int{1000} {
		b.Run("hosts="+strconv.Itoa(hosts), func(b *testing.B) {
			c := reopenTrigB(b, filepath.Join(b.TempDir(), "catalog.db"))
			spec := Spec{}
			for i := range hosts {
				spec.Hosts = append(spec.Hosts, HostSpec{Host: fmt.Sprintf("host-%05d", i), Groups: []string{"G"}})
			}
			mustApply(b, c, spec)
			var tmpl uint64
			mustEdit(b, c, func(e *Edit) error {
				ids, err := e.CreateHosts([]NewHost{{Host: "Web", Template: true}})
				if err != nil {
					return err
				}
				tmpl = ids[0]
				_, err = e.CreateHTTPTests([]HTTPTest{webScenario(tmpl, "login", "get", "post", "check")})
				return err
			})
			var hostIDs []uint64
			for _, h := range c.Snapshot().Hosts() {
				hostIDs = append(hostIDs, h.ID)
			}
			b.ResetTimer()
			for range b.N {
				mustEdit(b, c, func(e *Edit) error {
					for _, h := range hostIDs {
						if _, err := e.LinkTemplates(h, []uint64{tmpl}, "templates"); err != nil {
							return err
						}
					}
					return nil
				})
				start := time.Now()
				desc := "x"
				mustEdit(b, c, func(e *Edit) error { return e.UpdateHosts([]HostUpdate{{ID: hostIDs[0], Description: &desc}}) })
				b.ReportMetric(float64(time.Since(start).Microseconds()), "µs/unrelated-edit")
				b.StopTimer()
				mustEdit(b, c, func(e *Edit) error {
					for _, h := range hostIDs {
						if _, err := e.SetTemplates(h, nil, []uint64{tmpl}, "templates"); err != nil {
							return err
						}
					}
					return nil
				})
				b.StartTimer()
			}
			b.ReportMetric(float64(len(c.Snapshot().HTTPTests())), "scenarios")
		})
	}
}
