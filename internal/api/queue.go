package api

import (
	"cmp"
	"context"
	"slices"
	"strconv"
)

// QueueReader gives the polled checks that are overdue (the poller).
type QueueReader interface {
	// Overdue returns the checks more than 5 s late when the queue was
	// last computed (at most a second ago). The caller MUST NOT modify
	// the slice.
	Overdue() []OverdueCheck
}

// QueueAsker is an optional part of QueueReader whose queue is another
// node's (an HA standby asks the active node's poller, as Zabbix 6.0's
// frontend does): queue.get passes the caller's session or token, which
// that node checks, and answers an error with -32500.
type QueueAsker interface {
	OverdueAs(ctx context.Context, secret string) ([]OverdueCheck, error)
}

// OverdueCheck is one check of the queue.
type OverdueCheck struct {
	ItemID uint64
	Late   int64 // milliseconds
}

// queueBuckets are the columns of Zabbix's queue (its frontend's
// Administration → Queue): checks late by more than 5 s, 10 s, 30 s,
// 1 m, 5 m and 10 m, each up to the next. The same ranges as the
// poller's peregrine_poll_queue{delay=...}.
var queueBuckets = [...]struct {
	name string
	from int64 // seconds late, inclusive
}{{"5s", 5}, {"10s", 10}, {"30s", 30}, {"1m", 60}, {"5m", 300}, {"10m", 600}}

// queueParams are queue.get's parameters; any other member is refused
// as by the *.get methods.
type queueParams struct {
	// HostIDs keeps the checks of these hosts only.
	HostIDs opt[ids] `json:"hostids"`
	// GroupBy adds per-host ("host") and per-item-type ("type") counts.
	GroupBy opt[[]string] `json:"groupby"`
	// Limit bounds the per-host list (the hosts with most overdue
	// checks first).
	Limit opt[int64] `json:"limit"`
}

// queueCounts counts checks per bucket.
type queueCounts [len(queueBuckets)]int

func (q *queueCounts) add(lateMs int64) {
	late := lateMs / 1000
	for i := len(queueBuckets) - 1; i >= 0; i-- {
		if late >= queueBuckets[i].from {
			q[i]++
			return
		}
	}
	q[0]++ // listed as overdue (over 5 s) though under a whole 5 s: rounding
}

func (q *queueCounts) total() int {
	n := 0
	for _, c := range q {
		n += c
	}
	return n
}

// object renders the counts as {"total": "n", "delay": {"5s": "n", ...}}
// into o.
func (q *queueCounts) into(o object) object {
	d := make(map[string]string, len(queueBuckets))
	for i, b := range queueBuckets {
		d[b.name] = strconv.Itoa(q[i])
	}
	o["total"] = strconv.Itoa(q.total())
	o["delay"] = d
	return o
}

// queueGet serves queue.get, Peregrine's extension (Zabbix has no public
// method; its frontend reads the queue through the server's internal
// protocol): the polled checks overdue by more than 5 s, counted by
// delay bucket, overall and, with "groupby", per host and per item
// type. Callers see only the checks of hosts they may read; a check
// whose item has left the catalog since the queue was computed is left
// out.
func (s *Server) queueGet(ctx context.Context, c *call) (any, error) {
	var p queueParams
	if err := decodeGetStrict(c.params, &p); err != nil {
		return nil, err
	}
	byHost, byType := false, false
	for i, g := range p.GroupBy.Value {
		switch g {
		case "host":
			byHost = true
		case "type":
			byType = true
		default:
			return nil, errParams(`Invalid parameter "/groupby/%d": value must be one of "host", "type".`, i+1)
		}
	}
	a, err := s.access(ctx, c)
	if err != nil {
		return nil, err
	}
	var checks []OverdueCheck
	if qa, ok := s.opts.Queue.(QueueAsker); ok {
		if checks, err = qa.OverdueAs(ctx, c.token); err != nil {
			return nil, errApp("%s", err.Error())
		}
	} else if s.opts.Queue != nil {
		checks = s.opts.Queue.Overdue()
	}
	var want map[uint64]bool
	if len(p.HostIDs.Value) > 0 {
		want = make(map[uint64]bool, len(p.HostIDs.Value))
		for _, id := range p.HostIDs.Value {
			want[id] = true
		}
	}
	snap := s.opts.Catalog.Snapshot()
	var all queueCounts
	hosts := map[uint64]*queueCounts{}
	types := map[int]*queueCounts{}
	everything := a.all()
	for _, ch := range checks {
		it := snap.Item(ch.ItemID)
		if it == nil || it.Host == nil || (want != nil && !want[it.Host.ID]) || (!everything && !a.canRead(it.Host)) {
			continue
		}
		all.add(ch.Late)
		if byHost {
			hc := hosts[it.Host.ID]
			if hc == nil {
				hc = &queueCounts{}
				hosts[it.Host.ID] = hc
			}
			hc.add(ch.Late)
		}
		if byType {
			tc := types[int(it.Type)]
			if tc == nil {
				tc = &queueCounts{}
				types[int(it.Type)] = tc
			}
			tc.add(ch.Late)
		}
	}
	out := all.into(object{})
	if byHost {
		hostIDs := make([]uint64, 0, len(hosts))
		for id := range hosts {
			hostIDs = append(hostIDs, id)
		}
		slices.SortFunc(hostIDs, func(x, y uint64) int {
			if d := hosts[y].total() - hosts[x].total(); d != 0 {
				return d
			}
			return cmp.Compare(x, y)
		})
		if p.Limit.Given() && p.Limit.Value >= 0 && int(p.Limit.Value) < len(hostIDs) {
			hostIDs = hostIDs[:p.Limit.Value]
		}
		list := make([]object, 0, len(hostIDs))
		for _, id := range hostIDs {
			h := snap.HostByID(id)
			list = append(list, hosts[id].into(object{"hostid": strconv.FormatUint(id, 10), "host": h.Host, "name": h.Name}))
		}
		out["hosts"] = list
	}
	if byType {
		ts := make([]int, 0, len(types))
		for t := range types {
			ts = append(ts, t)
		}
		slices.Sort(ts)
		list := make([]object, 0, len(ts))
		for _, t := range ts {
			list = append(list, types[t].into(object{"type": strconv.Itoa(t)}))
		}
		out["types"] = list
	}
	return out, nil
}
