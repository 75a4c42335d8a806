package calc

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
}

// item resolves a query's host and key to an enabled item on a
// monitored host, with Zabbix's wording when it cannot.
func (s *StoreSource) item(ref expr.ItemRef) (*catalog.Item, error) {
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
	it, err := s.item(ref)
	if err != nil {
		return nil, err
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
	var out []history.Sample
	err = s.Store.Read(ctx, hq, func(v *history.Sample) bool {
		out = append(out, *v)
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read the history of \"/%s/%s\": %w", it.Host.Host, it.Key, err)
	}
	return out, nil
}

// Trends implements expr.Source.
func (s *StoreSource) Trends(ctx context.Context, ref expr.ItemRef, from, till int64) ([]history.Trend, error) {
	it, err := s.item(ref)
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
