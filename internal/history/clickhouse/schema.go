package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/history"
)

// Version is a ClickHouse server release, as SELECT version() reports it.
type Version struct{ Major, Minor int }

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// atLeast reports whether v is major.minor or later.
func (v Version) atLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// Features are what the schema uses when the server has it. The
// thresholds are the releases that introduced each feature: column codecs
// (with DoubleDelta, Gorilla and T64) in 19.x, table TTL in 19.6. 18.16,
// Debian's package, has neither and gets the plain schema: its
// server-wide compression setting is the only codec.
type Features struct {
	Codecs bool
	TTL    bool
}

// FeaturesOf returns what v supports.
func FeaturesOf(v Version) Features {
	return Features{Codecs: v.atLeast(19, 11), TTL: v.atLeast(19, 6)}
}

func parseVersion(s string) (Version, error) {
	parts := strings.SplitN(strings.TrimSpace(s), ".", 3)
	if len(parts) < 2 {
		return Version{}, fmt.Errorf("clickhouse: cannot parse server version %q", s)
	}
	maj, err1 := strconv.Atoi(parts[0])
	min, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return Version{}, fmt.Errorf("clickhouse: cannot parse server version %q", s)
	}
	return Version{maj, min}, nil
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// table is one value type's history table.
type table struct {
	name    string // without database
	typ     history.ValueType
	value   string // the value columns' DDL without codecs
	valueC  string // the same with codecs, for servers that have them
	columns string // the INSERT column list
	read    string // the SELECT list after clock, ns
}

// tables are the per value type history tables, indexed by ValueType.
// One table per type keeps each column of one physical type, which is
// what makes the column codecs work (a wide table would mix floats,
// integers and strings in sparse columns), and matches Zabbix's history,
// history_uint, history_str, history_text and history_log.
var tables = [...]table{
	history.Float: {name: "history", typ: history.Float, value: "value Float64", valueC: "value Float64 CODEC(Gorilla, ZSTD)", columns: "itemid, clock, ns, value, ver", read: "value"},
	history.Str:   {name: "history_str", typ: history.Str, value: "value String", valueC: "value String CODEC(ZSTD)", columns: "itemid, clock, ns, value, ver", read: "value"},
	history.Log: {name: "history_log", typ: history.Log,
		value:   "value String, timestamp Int64, source String, severity Int32, logeventid Int64, meta UInt8",
		valueC:  "value String CODEC(ZSTD), timestamp Int64 CODEC(ZSTD), source String CODEC(ZSTD), severity Int32 CODEC(ZSTD), logeventid Int64 CODEC(ZSTD), meta UInt8",
		columns: "itemid, clock, ns, value, timestamp, source, severity, logeventid, meta, ver",
		read:    "value, timestamp, source, severity, logeventid, meta"},
	history.Uint: {name: "history_uint", typ: history.Uint, value: "value UInt64", valueC: "value UInt64 CODEC(T64, ZSTD)", columns: "itemid, clock, ns, value, ver", read: "value"},
	history.Text: {name: "history_text", typ: history.Text, value: "value String", valueC: "value String CODEC(ZSTD)", columns: "itemid, clock, ns, value, ver", read: "value"},
}

// createTable returns the DDL of t in db.
//
// ReplacingMergeTree(ver) on ORDER BY (itemid, clock, ns): a value sent
// twice (a shipper retry after a timeout whose insert did land) or
// written twice (Zabbix's last-write-wins for one timestamp) is one row
// after merges, the highest ver winning; reads do the same before merges
// with LIMIT 1 BY clock, ns. ver is assigned by the shipper in write
// order. Day partitions are what retention drops.
func createTable(db string, t table, f Features, ttl time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s.%s (", db, t.name)
	if f.Codecs {
		// Sorted item ids and clocks are runs and small steps; ns is
		// random (agents send it so), only ZSTD helps it.
		b.WriteString("itemid UInt64 CODEC(DoubleDelta, ZSTD), clock DateTime CODEC(DoubleDelta, ZSTD), ns UInt32 CODEC(ZSTD), ")
		b.WriteString(t.valueC)
		b.WriteString(", ver UInt64 CODEC(DoubleDelta, ZSTD)")
	} else {
		b.WriteString("itemid UInt64, clock DateTime, ns UInt32, ")
		b.WriteString(t.value)
		b.WriteString(", ver UInt64")
	}
	b.WriteString(") ENGINE = ReplacingMergeTree(ver) PARTITION BY toYYYYMMDD(clock) ORDER BY (itemid, clock, ns)")
	if f.TTL && ttl > 0 {
		fmt.Fprintf(&b, " TTL clock + INTERVAL %d SECOND", int64(ttl/time.Second))
	}
	b.WriteString(" SETTINGS index_granularity = 8192")
	return b.String()
}

// migrations are the schema's versions in order; migration i brings the
// schema from version i to i+1. Applied versions are recorded in
// peregrine_schema, so a restart applies only what is new, and a newer
// schema than this build knows is refused.
//
// With a cluster every table also gets a Distributed twin named
// <table>_all over cluster, sharded by itemid, so that all values of an
// item are on one shard (deduplication and LIMIT 1 BY work per shard).
// There is no ON CLUSTER (it needs ZooKeeper): migrate runs on each
// server.
func migrations(db string, f Features, ttl time.Duration, cluster string) [][]string {
	dist := func(name string) string {
		return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %[1]s.%[2]s_all AS %[1]s.%[2]s ENGINE = Distributed(%[3]s, %[1]s, %[2]s, itemid)", db, name, cluster)
	}
	var v1 []string
	for _, t := range tables {
		v1 = append(v1, createTable(db, t, f, ttl))
		if cluster != "" {
			v1 = append(v1, dist(t.name))
		}
	}
	// 2: hourly trends of dropped history (retention.go).
	v2 := []string{"CREATE TABLE IF NOT EXISTS " + db + ".trends (itemid UInt64, clock DateTime, num UInt64, value_min Float64, value_max Float64, value_sum Float64, ver UInt64) " +
		"ENGINE = ReplacingMergeTree(ver) PARTITION BY toYYYYMM(clock) ORDER BY (itemid, clock) SETTINGS index_granularity = 8192"}
	if cluster != "" {
		v2 = append(v2, dist("trends"))
	}
	return [][]string{v1, v2}
}

// migrate creates the database and brings its schema up to date. It
// reads the schema version first and runs DDL only when the schema is
// behind, so that a user without DDL rights (readonly=2, or a replica's
// writer) can open an up-to-date database.
func migrate(ctx context.Context, c *client, db string, f Features, ttl time.Duration, cluster string) (applied int, err error) {
	ms := migrations(db, f, ttl, cluster)
	s, err := c.queryString(ctx, "SELECT max(version) FROM "+db+".peregrine_schema")
	if err != nil {
		var se *ServerError
		if !errors.As(err, &se) || (se.Code != codeUnknownTable && se.Code != codeUnknownDatabase) {
			return 0, fmt.Errorf("clickhouse: reading the schema version: %w", err)
		}
		if err := c.exec(ctx, "CREATE DATABASE IF NOT EXISTS "+db); err != nil {
			return 0, fmt.Errorf("clickhouse: creating database %s: %w", db, err)
		}
		if err := c.exec(ctx, "CREATE TABLE IF NOT EXISTS "+db+".peregrine_schema (version UInt32, applied DateTime) ENGINE = TinyLog"); err != nil {
			return 0, fmt.Errorf("clickhouse: creating %s.peregrine_schema: %w", db, err)
		}
		s = "0"
	}
	have, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("clickhouse: schema version %q is not a number", s)
	}
	if have > len(ms) {
		return 0, fmt.Errorf("clickhouse: database %s has schema version %d, newer than this Peregrine knows (%d); run a newer Peregrine or another database", db, have, len(ms))
	}
	for v := have; v < len(ms); v++ {
		for _, stmt := range ms[v] {
			if err := c.exec(ctx, stmt); err != nil {
				return applied, fmt.Errorf("clickhouse: schema migration %d: %w", v+1, err)
			}
		}
		if err := c.exec(ctx, fmt.Sprintf("INSERT INTO %s.peregrine_schema VALUES (%d, now())", db, v+1)); err != nil {
			return applied, fmt.Errorf("clickhouse: recording schema version %d: %w", v+1, err)
		}
		applied++
	}
	return applied, nil
}
