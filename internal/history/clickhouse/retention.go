package clickhouse

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// Retention (history.Dropper) drops whole partitions, never rows: ALTER
// TABLE ... DROP PARTITION is a file deletion in ClickHouse, a DELETE
// would be a mutation rewriting every part.
//
// Trends. While an hour's history exists, its trend is computed from it
// at read time (read.go): exact, whatever retries and rewrites did. A
// numeric day partition is rolled up into the trends table (one row per
// item and hour, computed in ClickHouse by INSERT ... SELECT over the
// deduplicated rows) just before it is dropped, so trends outlive
// history as Zabbix's do. The roll-up is idempotent: trends is a
// ReplacingMergeTree on (itemid, clock), and a roll-up repeated after a
// failed drop replaces its rows. Trends partitions are months.

// partitions lists the active partitions of table, as their partition
// values (YYYYMMDD for history, YYYYMM for trends).
func (s *Store) partitions(ctx context.Context, c *client, table string) ([]int64, error) {
	rc, err := c.do(ctx, fmt.Sprintf("SELECT DISTINCT toUInt32(toUInt64OrZero(partition)) FROM system.parts WHERE database = '%s' AND table = '%s' AND active FORMAT RowBinary", s.db, table), nil, nil)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: listing partitions of %s.%s: %w", s.db, table, err)
	}
	defer rc.Close()
	d := newRowReader(rc)
	var out []int64
	for d.more() {
		p := int64(d.u32())
		if d.err == nil && p != 0 {
			out = append(out, p)
		}
	}
	return out, d.err
}

// dayStart converts a YYYYMMDD partition value to its first second.
func dayStart(p int64) (int64, bool) {
	t, err := time.Parse("20060102", strconv.FormatInt(p, 10))
	return t.Unix(), err == nil
}

// DropBefore drops the history day partitions that end at or before
// cutoff, rolling numeric days up into trends first.
func (s *Store) DropBefore(cutoff int64) (int, error) {
	if s.closed.Load() {
		return 0, history.ErrClosed
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*s.o.QueryTimeout)
	defer cancel()
	n := 0
	for _, c := range s.shards {
		for _, t := range tables {
			m, err := s.dropDays(ctx, c, t, cutoff)
			n += m
			if err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// dropDays is DropBefore for one table of one server (a shard's local
// table in a cluster: partitions are per server).
func (s *Store) dropDays(ctx context.Context, c *client, t table, cutoff int64) (int, error) {
	n := 0
	{
		parts, err := s.partitions(ctx, c, t.name)
		if err != nil {
			return n, err
		}
		for _, p := range parts {
			start, ok := dayStart(p)
			if !ok || start+86400 > cutoff {
				continue
			}
			if t.typ.Numeric() {
				if err := s.rollup(ctx, c, &t, start); err != nil {
					return n, err
				}
			}
			if err := c.exec(ctx, fmt.Sprintf("ALTER TABLE %s.%s DROP PARTITION %d", s.db, t.name, p)); err != nil {
				return n, fmt.Errorf("clickhouse: dropping partition %d of %s.%s: %w", p, s.db, t.name, err)
			}
			n++
		}
	}
	return n, nil
}

// rollup writes the trends of one day of a numeric table.
func (s *Store) rollup(ctx context.Context, c *client, t *table, day int64) error {
	sql := fmt.Sprintf("INSERT INTO %[1]s.trends SELECT itemid, toStartOfHour(clock) AS h, count(), min(toFloat64(value)), max(toFloat64(value)), sum(toFloat64(value)), %[5]d "+
		"FROM (SELECT itemid, clock, value FROM %[1]s.%[2]s WHERE clock >= toDateTime(%[3]d) AND clock < toDateTime(%[4]d) ORDER BY itemid, clock, ns, ver DESC LIMIT 1 BY itemid, clock, ns) GROUP BY itemid, h",
		s.db, t.name, day, day+86400, time.Now().UnixNano())
	if err := c.exec(ctx, sql); err != nil {
		return fmt.Errorf("clickhouse: rolling up trends of %s.%s for %s: %w", s.db, t.name, time.Unix(day, 0).UTC().Format("2006-01-02"), err)
	}
	return nil
}

// DropTrendsBefore drops the trends month partitions that end at or
// before cutoff.
func (s *Store) DropTrendsBefore(cutoff int64) (int, error) {
	if s.closed.Load() {
		return 0, history.ErrClosed
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.o.QueryTimeout)
	defer cancel()
	n := 0
	for _, c := range s.shards {
		m, err := s.dropMonths(ctx, c, cutoff)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (s *Store) dropMonths(ctx context.Context, c *client, cutoff int64) (int, error) {
	parts, err := s.partitions(ctx, c, "trends")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range parts {
		m, err := time.Parse("200601", strconv.FormatInt(p, 10))
		if err != nil || m.AddDate(0, 1, 0).Unix() > cutoff {
			continue
		}
		if err := c.exec(ctx, fmt.Sprintf("ALTER TABLE %s.trends DROP PARTITION %d", s.db, p)); err != nil {
			return n, fmt.Errorf("clickhouse: dropping trends partition %d: %w", p, err)
		}
		n++
	}
	return n, nil
}

// rolledTrends reads item's rolled-up trends for hours in [from, till].
func (s *Store) rolledTrends(ctx context.Context, item uint64, from, till int64) ([]history.Trend, error) {
	sql := fmt.Sprintf("SELECT toUInt32(clock), num, value_min, value_max, value_sum FROM %s WHERE itemid = %d AND clock >= toDateTime(%d) AND clock <= toDateTime(%d) ORDER BY clock, ver DESC LIMIT 1 BY clock FORMAT RowBinary",
		s.from("trends"), item, from, till)
	rc, err := s.c.do(ctx, sql, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: trends of item %d: %w", item, err)
	}
	defer rc.Close()
	d := newRowReader(rc)
	var out []history.Trend
	for d.more() {
		tr := history.Trend{Clock: int64(d.u32()), Num: int64(d.u64()), Min: d.f64(), Max: d.f64(), Sum: d.f64()}
		if d.err == nil {
			out = append(out, tr)
		}
	}
	return out, d.err
}

// mergeTrends puts rolled-up hours that history no longer covers among
// the hours computed from history (both ascending).
func mergeTrends(fromHistory, rolled []history.Trend) []history.Trend {
	if len(rolled) == 0 {
		return fromHistory
	}
	out := make([]history.Trend, 0, len(fromHistory)+len(rolled))
	i, j := 0, 0
	for i < len(fromHistory) || j < len(rolled) {
		switch {
		case j == len(rolled) || (i < len(fromHistory) && fromHistory[i].Clock < rolled[j].Clock):
			out = append(out, fromHistory[i])
			i++
		case i == len(fromHistory) || rolled[j].Clock < fromHistory[i].Clock:
			out = append(out, rolled[j])
			j++
		default: // both: history is the truth (a roll-up whose drop failed)
			out = append(out, fromHistory[i])
			i++
			j++
		}
	}
	return out
}
