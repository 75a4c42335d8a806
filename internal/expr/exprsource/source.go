package exprsource

import (
	"context"
	"fmt"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/expr"
	"github.com/peregrine-mon/peregrine/internal/history"
)

// StoreSource is an expr.Source over the server's data: item queries
// resolved in one catalog snapshot, values read from the history store,
// trends from it when it keeps them. Calculated items use one per
// evaluation; a trigger evaluator may use it for periods longer than its
// value cache holds.
type StoreSource struct {
	Store history.Reader
	// TrendStore is Store as a history.TrendReader, nil when it keeps
	// none.
	TrendStore history.TrendReader
	Snap       *catalog.Snapshot
	// Self is the host of //key, {HOST.HOST} and {HOST.NAME} (the
	// calculated item's or trigger's host); nil when there is none.
	Self *catalog.Host
	// Reuse makes History return its values in one buffer kept by the
	// source and reused by the next call, instead of a new slice per
	// call: expr's functions are done with a read before they make the
	// next (expr.Source's contract). The trigger evaluator sets it on
	// its per-shard source; a caller that keeps results must not.
	Reuse bool
	buf   []history.Sample
	// Memo, when set, remembers Item's answers. A caller evaluating one
	// expression many times in one snapshot with one Self (the trigger
	// evaluator, per trigger) keeps one per expression and empties it
	// when the snapshot or Self changes: a query is then resolved once
	// per catalog change instead of two map lookups per read.
	Memo *[]Resolved
	// Known, when set, is the newest value of item Known.ItemID at or
	// before its own time: the value whose commit caused the evaluation
	// (the trigger evaluator sets it). A read of that item's newest
	// value as of exactly that nanosecond (last() at the evaluated time,
	// {ITEM.VALUE}) returns it without reading Store.
	Known *history.Sample
}

// Resolved is an item query as Item answered it, kept in a Memo.
type Resolved struct {
	Ref  expr.ItemRef
	Item *catalog.Item
	Err  error
}

// maxReuse is the largest buffer (values) Reuse keeps between calls: a
// rare long read should not pin its memory in every shard's source.
const maxReuse = 1024

// AppendReader is a history.Reader that can also append what it reads
// to a slice directly (the value cache: one copy, one allocation of the
// exact size, instead of a callback per value into a growing slice).
type AppendReader interface {
	AppendRead(ctx context.Context, q history.Query, dst []history.Sample) ([]history.Sample, error)
}

// Item resolves a query's host and key to an enabled item on a
// monitored host, with Zabbix's wording when it cannot.
func (s *StoreSource) Item(ref expr.ItemRef) (*catalog.Item, error) {
	if s.Memo == nil {
		return s.resolve(ref)
	}
	for i := range *s.Memo {
		// The refs come from one parsed expression: equal strings share
		// their memory, so the comparison is mostly a pointer check.
		if r := &(*s.Memo)[i]; r.Ref == ref {
			return r.Item, r.Err
		}
	}
	it, err := s.resolve(ref)
	*s.Memo = append(*s.Memo, Resolved{Ref: ref, Item: it, Err: err})
	return it, err
}

func (s *StoreSource) resolve(ref expr.ItemRef) (*catalog.Item, error) {
	host := ref.Host
	switch host {
	case "", "{HOST.HOST}", "{HOST.HOST1}", "{HOST.NAME}", "{HOST.NAME1}":
		if s.Self == nil {
			return nil, fmt.Errorf("item query \"/%s/%s\" names no host", ref.Host, ref.Key)
		}
		host = s.Self.Host
	}
	it := s.Snap.Lookup(host, ref.Key)
	if it == nil {
		return nil, fmt.Errorf("item \"/%s/%s\" does not exist", host, ref.Key)
	}
	if !it.Enabled {
		return nil, fmt.Errorf("item \"/%s/%s\" is disabled", host, ref.Key)
	}
	if it.Host == nil || !it.Host.Enabled {
		return nil, fmt.Errorf("host %q is not monitored", host)
	}
	return it, nil
}

// History implements expr.Source: q's (From, Till] is the store's
// inclusive [From+1, Till].
func (s *StoreSource) History(ctx context.Context, ref expr.ItemRef, q expr.HistoryQuery) ([]history.Sample, error) {
	it, err := s.Item(ref)
	if err != nil {
		return nil, err
	}
	if k := s.Known; k != nil && k.ItemID == it.ID && q.Count == 1 && q.Till == k.Clock && q.Before == k.Clock*1e9+int64(k.NS) {
		if s.Reuse {
			s.buf = append(s.buf[:0], *k)
			return s.buf, nil
		}
		return []history.Sample{*k}, nil
	}
	hq := history.Query{ItemID: it.ID, Till: q.Till, Desc: true}
	if q.Count > 0 {
		hq.Limit = q.Count
	} else {
		hq.From = q.From + 1
		if hq.From > hq.Till {
			return nil, nil
		}
	}
	out, err := s.read(ctx, hq)
	if err != nil {
		return nil, fmt.Errorf("cannot read the history of \"/%s/%s\": %w", it.Host.Host, it.Key, err)
	}
	if q.Before == 0 || q.Before/1e9 != q.Till {
		return out, nil
	}
	// Values of second Till after Before are not there yet as of the
	// evaluation; newest first, they lead the result. A count read that
	// lost some to the cut reads again with room for them (a few rounds
	// at most: only values committed meanwhile can add more).
	for round := 0; ; round++ {
		cut := 0
		for cut < len(out) && out[cut].Clock*1e9+int64(out[cut].NS) > q.Before {
			cut++
		}
		if cut == 0 {
			return out, nil
		}
		if q.Count == 0 || len(out)-cut >= q.Count || len(out) < hq.Limit || round == 3 {
			out = out[cut:]
			if q.Count > 0 && len(out) > q.Count {
				out = out[:q.Count]
			}
			return out, nil
		}
		hq.Limit = q.Count + cut
		if out, err = s.read(ctx, hq); err != nil {
			return nil, fmt.Errorf("cannot read the history of \"/%s/%s\": %w", it.Host.Host, it.Key, err)
		}
	}
}

// read runs hq against the store, into the reused buffer with Reuse.
func (s *StoreSource) read(ctx context.Context, hq history.Query) ([]history.Sample, error) {
	var dst []history.Sample
	if s.Reuse {
		dst = s.buf[:0]
	}
	var out []history.Sample
	var err error
	if ar, ok := s.Store.(AppendReader); ok {
		out, err = ar.AppendRead(ctx, hq, dst)
	} else {
		out, err = readAppend(ctx, s.Store, hq, dst)
	}
	if s.Reuse && cap(out) <= maxReuse {
		s.buf = out
	}
	return out, err
}

// readAppend reads q from store into dst. Its callback captures the slice,
// which in History would move it to the heap on every call.
func readAppend(ctx context.Context, store history.Reader, q history.Query, dst []history.Sample) ([]history.Sample, error) {
	err := store.Read(ctx, q, func(v *history.Sample) bool {
		dst = append(dst, *v)
		return true
	})
	return dst, err
}

// Trends implements expr.Source.
func (s *StoreSource) Trends(ctx context.Context, ref expr.ItemRef, from, till int64) ([]history.Trend, error) {
	it, err := s.Item(ref)
	if err != nil {
		return nil, err
	}
	if s.TrendStore == nil {
		return nil, fmt.Errorf("the history store keeps no trends")
	}
	if till <= from {
		return nil, nil
	}
	t, err := s.TrendStore.ReadTrends(ctx, it.ID, from, till-1)
	if err != nil {
		return nil, fmt.Errorf("cannot read the trends of \"/%s/%s\": %w", it.Host.Host, it.Key, err)
	}
	return t, nil
}

// Items implements expr.ItemLister for the aggregate functions: the
// enabled items of monitored hosts whose key matches q.Key (expr.MatchKey),
// on the own host ("" and host macros), one named host, or every host
// ("*", which walks the whole catalog: meant for small setups until an
// index by key name exists), that pass the filter. Filters on host
// groups apply; filters on tags are refused (items have no tags yet, and
// a half-applied filter would give wrong sums).
func (s *StoreSource) Items(_ context.Context, q expr.ItemQuery) ([]expr.ItemRef, error) {
	var filter *expr.ItemFilter
	if q.Filter != "" {
		f, err := expr.ParseItemFilter(q.Filter)
		if err != nil {
			return nil, err
		}
		if f.UsesTags() {
			return nil, fmt.Errorf("item filters on tags (?[%s]) are not supported yet: items have no tags", q.Filter)
		}
		filter = f
	}
	var hosts []*catalog.Host
	switch q.Host {
	case "", "{HOST.HOST}", "{HOST.HOST1}", "{HOST.NAME}", "{HOST.NAME1}":
		if s.Self == nil {
			return nil, fmt.Errorf("item query \"/%s/%s\" names no host", q.Host, q.Key)
		}
		hosts = []*catalog.Host{s.Self}
	case "*":
		hosts = s.Snap.Hosts()
	default:
		if h := s.Snap.Host(q.Host); h != nil {
			hosts = []*catalog.Host{h}
		}
	}
	var out []expr.ItemRef
	for _, h := range hosts {
		if !h.Enabled {
			continue
		}
		if filter != nil {
			groups := make([]string, 0, len(h.GroupIDs))
			for _, id := range h.GroupIDs {
				if g := s.Snap.GroupByID(id); g != nil {
					groups = append(groups, g.Name)
				}
			}
			if !filter.Match(groups, nil) {
				continue
			}
		}
		for _, it := range h.Items() {
			if it.Enabled && expr.MatchKey(q.Key, it.Key) {
				out = append(out, expr.ItemRef{Host: h.Host, Key: it.Key})
			}
		}
	}
	return out, nil
}
