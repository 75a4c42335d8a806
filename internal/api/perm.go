package api

import (
	"context"

	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Host-group permissions, as Zabbix applies them to the API: every get
// method shows only what the caller may read (hostgroup.get the host
// groups, host.get the hosts, item.get the items of those hosts,
// history.get and trend.get their values), omitting the rest as if it
// did not exist; with "editable" only what they may change. Write methods
// on hosts and items need read-write on the host (host.create on every
// group it names); otherwise they fail with "No permissions to referred
// object or it does not exist!", the same answer as for an object that
// does not exist, so that the answer does not tell which.
//
// A super admin may do everything. Anybody else gets the rights of their
// user groups (auth.Rights): per host, host groups no user group mentions
// do not count, a deny on any other denies, otherwise the highest
// permission wins. The rights are read once per request (the auth store
// caches them per user), and checking a host costs a map lookup per
// host group, so item.get over 100k items stays one pass.

// access is what the caller of one request may do.
type access struct{ r auth.Rights }

// access returns the caller's rights. A super admin's need no lookup.
func (s *Server) access(ctx context.Context, c *call) (access, error) {
	if c.user.Role == RoleSuperAdmin {
		return access{r: auth.AllRights()}, nil
	}
	if s.opts.Auth == nil {
		return access{}, nil
	}
	r, err := s.opts.Auth.Rights(ctx, c.user)
	if err != nil {
		s.opts.Logger.Error("api: cannot read permissions", "user", c.user.Username, "remote", c.remote, "err", err)
		return access{}, errApp("Cannot read the permissions of the user.")
	}
	return access{r: r}, nil
}

// all reports whether nothing needs checking.
func (a access) all() bool { return a.r.All() }

// host is the caller's permission on host h.
func (a access) host(h *catalog.Host) auth.Permission { return a.r.Host(h.GroupIDs) }

func (a access) canRead(h *catalog.Host) bool  { return a.host(h) >= auth.PermRead }
func (a access) canWrite(h *catalog.Host) bool { return a.host(h) == auth.PermReadWrite }

// sees reports whether a get method shows host h: readable, or writable
// with "editable".
func (a access) sees(h *catalog.Host, editable bool) bool {
	if editable {
		return a.canWrite(h)
	}
	return a.canRead(h)
}

// seesGroup is sees for host group id (its own permission).
func (a access) seesGroup(id uint64, editable bool) bool {
	p := a.r.Group(id)
	if editable {
		return p == auth.PermReadWrite
	}
	return p >= auth.PermRead
}

// readableIDs narrows the itemids and hostids of history.get and
// trend.get (hostIDs may be nil) to the items and hosts the caller may
// read (with editable: change), so that the others return no rows, as in Zabbix. When every ID
// of a list that was given is dropped, the list becomes {0}, an ID
// nothing has: an empty list would mean "not given" and widen the
// selection.
func (s *Server) readableIDs(ctx context.Context, c *call, itemIDs, hostIDs *ids, editable bool) error {
	a, err := s.access(ctx, c)
	if err != nil || a.all() {
		return err
	}
	snap := s.opts.Catalog.Snapshot()
	keep := func(list *ids, ok func(uint64) bool) {
		if list == nil || len(*list) == 0 {
			return
		}
		out := make(ids, 0, len(*list))
		for _, id := range *list {
			if ok(id) {
				out = append(out, id)
			}
		}
		if len(out) == 0 {
			out = append(out, 0)
		}
		*list = out
	}
	keep(itemIDs, func(id uint64) bool {
		it := snap.Item(id)
		return it != nil && a.sees(it.Host, editable)
	})
	keep(hostIDs, func(id uint64) bool {
		h := snap.HostByID(id)
		return h != nil && a.sees(h, editable)
	})
	return nil
}
