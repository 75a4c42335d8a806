package catalog

// ownerChangesOnly reports whether next, the configuration asked for a
// copy of a template's discovery rule, differs from cur, the copy's, only
// in what the copy's owner may change on its prototypes (recorded from
// 6.0.14, internal/conformance case inherited_edits): an item
// prototype's status, discover, interval, history, trends, description
// and tags (as on an inherited item); a trigger prototype's status,
// priority, discover, comments, URL and tags (as on an inherited
// trigger); a host prototype's status and discover. The rest is the
// template's: the API refuses or ignores it before asking.
func ownerChangesOnly(cur, next *LLDRule) bool {
	if cur == nil || next == nil || len(cur.ItemPrototypes) != len(next.ItemPrototypes) ||
		len(cur.TriggerPrototypes) != len(next.TriggerPrototypes) || len(cur.HostPrototypes) != len(next.HostPrototypes) {
		return false
	}
	c := cloneLLD(next)
	for i := range c.ItemPrototypes {
		p, o := &c.ItemPrototypes[i], &cur.ItemPrototypes[i]
		if p.ID != o.ID {
			return false
		}
		p.Discover = o.Discover
		p.Item.Status, p.Item.Delay, p.Item.History, p.Item.Trends = o.Item.Status, o.Item.Delay, o.Item.History, o.Item.Trends
		p.Item.Description, p.Item.Tags = o.Item.Description, o.Item.Tags
	}
	for i := range c.TriggerPrototypes {
		p, o := &c.TriggerPrototypes[i], &cur.TriggerPrototypes[i]
		if p.ID != o.ID {
			return false
		}
		p.Discover = o.Discover
		p.Fields.Enabled, p.Fields.Priority = o.Fields.Enabled, o.Fields.Priority
		p.Fields.Comments, p.Fields.URL, p.Fields.Tags = o.Fields.Comments, o.Fields.URL, o.Fields.Tags
	}
	for i := range c.HostPrototypes {
		p, o := &c.HostPrototypes[i], &cur.HostPrototypes[i]
		if p.ID != o.ID {
			return false
		}
		p.Status, p.Discover = o.Status, o.Discover
	}
	return cur.equal(c)
}
