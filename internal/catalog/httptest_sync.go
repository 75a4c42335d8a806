package catalog

import (
	"cmp"
	"slices"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// ItemID returns the ID of t's item wi (0 before syncWebItems made it).
func (t *HTTPTest) ItemID(wi WebItemSpec) uint64 {
	if wi.Step < 0 {
		return t.ItemIDs[wi.Kind-WebScenarioIn]
	}
	return t.Steps[wi.Step].ItemIDs[wi.Kind-WebStepIn]
}

func (t *HTTPTest) setItemID(wi WebItemSpec, id uint64) {
	if wi.Step < 0 {
		t.ItemIDs[wi.Kind-WebScenarioIn] = id
		return
	}
	t.Steps[wi.Step].ItemIDs[wi.Kind-WebStepIn] = id
}

// HTTPTestOfItem returns the scenario whose web.test.fail item is
// itemID (the item the scheduler schedules for the whole scenario), or
// nil.
func (s *Snapshot) HTTPTestOfItem(itemID uint64) *HTTPTest {
	if s.ext == nil {
		return nil
	}
	if i, ok := s.ext.webByFail[itemID]; ok {
		return &s.ext.webs[i]
	}
	return nil
}

// syncHTTPTests makes web scenarios follow the Edit's other changes
// before it commits, as syncGraphs does for graphs: scenarios of
// deleted hosts go, each template's scenarios are copied to what links
// the template (a copy follows its template's scenario but for its
// status, which a host may change; an owner's own scenario of the same
// name is taken over; unlinking keeps the copy as the owner's own), and
// then every scenario changed has exactly the items 6.0 makes for it
// (syncWebItems).
func (e *Edit) syncHTTPTests() error {
	if len(e.old.HTTPTests()) == 0 && (e.ext == nil || e.ext.web == nil) {
		return nil
	}
	if (e.ext == nil || e.ext.web == nil) && e.mst == nil && !e.itemsGone {
		return nil // neither scenarios nor links nor hosts changed
	}
	for _, t := range e.allHTTPTests() {
		if e.host(t.HostID) == nil {
			if err := e.removeHTTPTest(t.ID); err != nil {
				return err
			}
		}
	}
	for round := 0; round < 16; round++ {
		changed, err := e.inheritHTTPTestsOnce()
		if err != nil {
			return err
		}
		if !changed {
			break
		}
	}
	if e.ext == nil || e.ext.web == nil {
		return nil
	}
	// Templates' scenarios before their copies, level by level, so
	// that a copy's items find their template's.
	for round := 0; round < 16; round++ {
		changed, err := e.syncWebItems()
		if err != nil {
			return err
		}
		if !changed {
			return nil
		}
	}
	return nil
}

func (e *Edit) inheritHTTPTestsOnce() (bool, error) {
	all := e.allHTTPTests()
	live := make(map[uint64]bool, len(all))
	type copyKey struct{ tmpl, owner uint64 }
	copies := map[copyKey]*HTTPTest{}
	byOwner := map[uint64][]*HTTPTest{}
	tmplTests := map[uint64][]*HTTPTest{}
	for _, t := range all {
		live[t.ID] = true
		byOwner[t.HostID] = append(byOwner[t.HostID], t)
		if t.TemplateID != 0 {
			copies[copyKey{t.TemplateID, t.HostID}] = t
		}
		if h := e.host(t.HostID); h != nil && h.IsTemplate {
			tmplTests[t.HostID] = append(tmplTests[t.HostID], t)
		}
	}
	changed := false
	for _, t := range all {
		if t.TemplateID == 0 {
			continue
		}
		tt := e.HTTPTest(t.TemplateID)
		if tt == nil || !live[tt.ID] {
			if err := e.removeHTTPTest(t.ID); err != nil {
				return false, err
			}
			changed = true
			continue
		}
		if !slices.Contains(e.links(t.HostID), tt.HostID) {
			if id := t.ItemIDs[WebScenarioFail]; id != 0 && e.item(id) == nil {
				// Unlinked with templates_clear: its items, copies
				// of the template's, are gone; so is it.
				if err := e.removeHTTPTest(t.ID); err != nil {
					return false, err
				}
				changed = true
				continue
			}
			n := *t
			n.TemplateID = 0
			if e.host(t.HostID).IsTemplate {
				n.UUID = NewUUID()
			}
			if err := e.writeHTTPTest(&n); err != nil {
				return false, err
			}
			changed = true
		}
	}
	tmpls := make([]uint64, 0, len(tmplTests))
	for t := range tmplTests {
		tmpls = append(tmpls, t)
	}
	slices.Sort(tmpls)
	for _, tid := range tmpls {
		for _, owner := range e.childrenOf(tid) {
			if e.host(owner) == nil {
				continue
			}
			for _, tt := range tmplTests[tid] {
				cur := copies[copyKey{tt.ID, owner}]
				if cur == nil {
					for _, c := range byOwner[owner] {
						if c.Name == tt.Name && (c.TemplateID == 0 || !live[c.TemplateID]) {
							cur = c // the owner's own, taken over
						}
					}
				}
				want := httpTestCopy(tt, e.old.HTTPTest(tt.ID), owner, cur)
				if cur == nil {
					if _, err := e.insertHTTPTest(want); err != nil {
						return false, err
					}
					changed = true
					continue
				}
				if !sameHTTPTest(cur, want) {
					if err := e.writeHTTPTest(want); err != nil {
						return false, err
					}
					changed = true
				}
			}
		}
	}
	return changed, nil
}

// httpTestCopy is tt as a copy on owner; cur, the copy there, keeps
// its ID, items, the IDs and items of the steps still named the same,
// and the settings the owner changed on it that the template's change
// (from was, tt before this Edit) did not change, as 6.0 propagates
// only the fields a template's update sets.
func httpTestCopy(tt, was *HTTPTest, owner uint64, cur *HTTPTest) *HTTPTest {
	n := *tt
	n.ID, n.HostID, n.TemplateID, n.UUID, n.ItemIDs = 0, owner, tt.ID, "", [3]uint64{}
	n.Steps = slices.Clone(tt.Steps)
	for i := range n.Steps {
		n.Steps[i].ID, n.Steps[i].ItemIDs = 0, [3]uint64{}
	}
	if cur == nil {
		return &n
	}
	n.ID, n.ItemIDs = cur.ID, cur.ItemIDs
	for i := range n.Steps {
		for _, s := range cur.Steps {
			if s.Name == n.Steps[i].Name {
				n.Steps[i].ID, n.Steps[i].ItemIDs = s.ID, s.ItemIDs
			}
		}
	}
	if was == nil {
		was = tt
	}
	o, w, c := &n.HTTPTestFields, &was.HTTPTestFields, &cur.HTTPTestFields
	keepOwn(&o.Delay, w.Delay, c.Delay)
	keepOwn(&o.Status, w.Status, c.Status)
	keepOwn(&o.Agent, w.Agent, c.Agent)
	keepOwn(&o.Authentication, w.Authentication, c.Authentication)
	keepOwn(&o.HTTPUser, w.HTTPUser, c.HTTPUser)
	keepOwn(&o.HTTPPassword, w.HTTPPassword, c.HTTPPassword)
	keepOwn(&o.HTTPProxy, w.HTTPProxy, c.HTTPProxy)
	keepOwn(&o.Retries, w.Retries, c.Retries)
	keepOwn(&o.SSLCertFile, w.SSLCertFile, c.SSLCertFile)
	keepOwn(&o.SSLKeyFile, w.SSLKeyFile, c.SSLKeyFile)
	keepOwn(&o.SSLKeyPassword, w.SSLKeyPassword, c.SSLKeyPassword)
	keepOwn(&o.VerifyPeer, w.VerifyPeer, c.VerifyPeer)
	keepOwn(&o.VerifyHost, w.VerifyHost, c.VerifyHost)
	if slices.Equal(o.Headers, w.Headers) {
		o.Headers = c.Headers
	}
	if slices.Equal(o.Variables, w.Variables) {
		o.Variables = c.Variables
	}
	return &n
}

// keepOwn sets *v to the copy's own value c when the template's value did
// not change (*v equals was).
func keepOwn[T comparable](v *T, was, c T) {
	if *v == was {
		*v = c
	}
}

// sameHTTPTest reports whether a and b are equal in every field (no
// encoding: it runs once per copy whenever links or scenarios change).
func sameHTTPTest(a, b *HTTPTest) bool {
	return a.ID == b.ID && a.HostID == b.HostID && a.TemplateID == b.TemplateID && a.UUID == b.UUID && a.Name == b.Name &&
		a.ItemIDs == b.ItemIDs && a.HTTPTestFields.equal(&b.HTTPTestFields) && slices.Equal(a.Tags, b.Tags) &&
		slices.EqualFunc(a.Steps, b.Steps, func(x, y HTTPStep) bool { return x.equal(&y) })
}

func (f *HTTPTestFields) equal(o *HTTPTestFields) bool {
	return f.Delay == o.Delay && f.Status == o.Status && f.Agent == o.Agent && f.Authentication == o.Authentication &&
		f.HTTPUser == o.HTTPUser && f.HTTPPassword == o.HTTPPassword && f.HTTPProxy == o.HTTPProxy && f.Retries == o.Retries &&
		f.SSLCertFile == o.SSLCertFile && f.SSLKeyFile == o.SSLKeyFile && f.SSLKeyPassword == o.SSLKeyPassword &&
		f.VerifyPeer == o.VerifyPeer && f.VerifyHost == o.VerifyHost && slices.Equal(f.Headers, o.Headers) && slices.Equal(f.Variables, o.Variables)
}

func (s *HTTPStep) equal(o *HTTPStep) bool {
	return s.ID == o.ID && s.Name == o.Name && s.No == o.No && s.URL == o.URL && s.Timeout == o.Timeout && s.Posts == o.Posts &&
		s.PostType == o.PostType && s.Required == o.Required && s.StatusCodes == o.StatusCodes && s.FollowRedirects == o.FollowRedirects &&
		s.RetrieveMode == o.RetrieveMode && s.ItemIDs == o.ItemIDs && slices.Equal(s.PostFields, o.PostFields) &&
		slices.Equal(s.Headers, o.Headers) && slices.Equal(s.Variables, o.Variables) && slices.Equal(s.QueryFields, o.QueryFields)
}

// syncWebItems gives every scenario the Edit changed the items 6.0
// makes for it (HTTPTest.WebItems: type 9, the scenario's interval,
// status and tags; a copy's items copies of its template's) and deletes
// the web items of the hosts touched that no scenario has any more. It
// reports whether it wrote anything.
func (e *Edit) syncWebItems() (bool, error) {
	hosts := map[uint64]bool{}
	for id, t := range e.ext.web.tests {
		if o := e.old.HTTPTest(id); o != nil {
			hosts[o.HostID] = true
		}
		if t != nil {
			hosts[t.HostID] = true
		}
	}
	byHost := map[uint64][]*HTTPTest{} // one walk, not one per host
	for _, t := range e.allHTTPTests() {
		if hosts[t.HostID] {
			byHost[t.HostID] = append(byHost[t.HostID], t)
		}
	}
	changed := false
	order := make([]uint64, 0, len(hosts))
	for h := range hosts {
		order = append(order, h)
	}
	slices.Sort(order)
	for _, hid := range order {
		h := e.host(hid)
		if h == nil {
			continue // its items went with it
		}
		// The items the scenarios have; the host's other web items go
		// first, so that a step made anew (6.0 makes new items for a
		// step given without its httpstepid) can take their keys.
		tests := byHost[hid]
		keep := map[uint64]bool{}
		for _, t := range tests {
			for _, wi := range t.WebItems() {
				if it := e.webItemOf(t, wi, hid); it != nil {
					keep[it.ID] = true
				}
			}
		}
		var del []uint64
		for _, it := range e.hostItems(hid) {
			if it.Type == WebItem && !keep[it.ID] {
				del = append(del, it.ID)
			}
		}
		if len(del) > 0 {
			if err := e.propagate(func() error { return e.deleteWebItems(del) }); err != nil {
				return false, err
			}
			changed = true
		}
		for _, t := range tests {
			n := *t
			n.Steps = slices.Clone(t.Steps)
			wrote := false
			var tt *HTTPTest
			if t.TemplateID != 0 {
				tt = e.HTTPTest(t.TemplateID)
			}
			for _, wi := range n.WebItems() {
				want := Item{
					HostID: hid, Key: wi.Key, Name: wi.Name, Type: WebItem, ValueType: history.ValueType(wi.ValueType),
					Units: wi.Units, Delay: t.Delay, History: "30d", Trends: "90d", Enabled: t.Status == 0,
					HistorySeconds: 30 * 86400, TrendsSeconds: 90 * 86400, // 6.0.14 gives every web item these
					Tags: cloneTags(t.Tags),
				}
				if tt != nil && len(tt.Steps) == len(t.Steps) {
					want.TemplateID = tt.ItemID(wi)
				}
				cur := e.webItemOf(&n, wi, hid)
				if cur == nil {
					e.internItem(&want)
					if err := e.insertItem(&want); err != nil {
						return false, err
					}
					e.res.ItemsCreated++
					n.setItemID(wi, want.ID)
					wrote = true
					continue
				}
				want.ID = cur.ID
				if cur.sameConfig(&want) {
					continue
				}
				e.internItem(&want)
				if err := e.writeItem(&want, cur); err != nil {
					return false, err
				}
				e.res.ItemsUpdated++
				changed = true
			}
			if wrote {
				if err := e.writeHTTPTest(&n); err != nil {
					return false, err
				}
				changed = true
			}
		}
	}
	return changed, nil
}

// webItemOf returns t's item wi if it is still a web item of host.
func (e *Edit) webItemOf(t *HTTPTest, wi WebItemSpec, host uint64) *Item {
	if id := t.ItemID(wi); id != 0 {
		if it := e.item(id); it != nil && it.HostID == host && it.Type == WebItem {
			return it
		}
	}
	return nil
}

// deleteWebItems deletes web items; those already gone (copies of an
// item deleted before) are skipped.
func (e *Edit) deleteWebItems(ids []uint64) error {
	ids = slices.DeleteFunc(ids, func(id uint64) bool { return e.item(id) == nil })
	if len(ids) == 0 {
		return nil
	}
	return e.DeleteItems(ids)
}

// buildWebs puts the scenarios after the Edit into x.
func (e *Edit) buildWebs(x *extras) {
	for _, t := range e.allHTTPTests() {
		if e.host(t.HostID) != nil {
			x.webs = append(x.webs, *t)
		}
	}
	slices.SortFunc(x.webs, func(a, b HTTPTest) int { return cmp.Compare(a.ID, b.ID) })
}
