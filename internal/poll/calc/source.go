package calc

import (
	"context"
	"fmt"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/expr"
	"github.com/peregrine-mon/peregrine/internal/history"
)

// source is the expr.Source of one evaluation: item queries resolved in
// one catalog snapshot, values from the history store.
type source struct {
	store  history.Reader
	trends history.TrendReader
	snap   *catalog.Snapshot
	self   *catalog.Host // the calculated item's host
}

// item resolves a query's host and key to an enabled item on a
// monitored host, with Zabbix's wording when it cannot.
func (s *source) item(ref expr.ItemRef) (*catalog.Item, error) {
	host := ref.Host
	switch host {
	case "", "{HOST.HOST}", "{HOST.HOST1}", "{HOST.NAME}", "{HOST.NAME1}":
		host = s.self.Host
	}
	it := s.snap.Lookup(host, ref.Key)
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
func (s *source) History(ctx context.Context, ref expr.ItemRef, q expr.HistoryQuery) ([]history.Sample, error) {
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
	err = s.store.Read(ctx, hq, func(v *history.Sample) bool {
		out = append(out, *v)
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read the history of \"/%s/%s\": %w", it.Host.Host, it.Key, err)
	}
	return out, nil
}

// Trends implements expr.Source.
func (s *source) Trends(ctx context.Context, ref expr.ItemRef, from, till int64) ([]history.Trend, error) {
	it, err := s.item(ref)
	if err != nil {
		return nil, err
	}
	if s.trends == nil {
		return nil, fmt.Errorf("the history store keeps no trends")
	}
	if till <= from {
		return nil, nil
	}
	t, err := s.trends.ReadTrends(ctx, it.ID, from, till-1)
	if err != nil {
		return nil, fmt.Errorf("cannot read the trends of \"/%s/%s\": %w", it.Host.Host, it.Key, err)
	}
	return t, nil
}
