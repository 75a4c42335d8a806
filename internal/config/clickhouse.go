package config

import (
	"net/url"
	"os"
	"regexp"
	"time"
)

// AckMode is history.clickhouse.ack with its default applied: "inserted"
// with state.store: postgres, "spooled" otherwise.
func (c *Config) AckMode() string {
	if a := c.History.ClickHouse.Ack; a != "" {
		return a
	}
	if c.State.Store == "postgres" {
		return "inserted"
	}
	return "spooled"
}

func (c *ClickHouseConfig) validate() error {
	if len(c.URLs) == 0 {
		return fieldErr("history.clickhouse.urls", "must name at least one ClickHouse HTTP endpoint, such as http://127.0.0.1:8123/")
	}
	for _, s := range c.URLs {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fieldErr("history.clickhouse.urls", "%q is not an http:// or https:// address", redactURL(s))
		}
	}
	if !clickhouseDB.MatchString(c.Database) {
		return fieldErr("history.clickhouse.database", "must be letters, digits and _ (not starting with a digit), not %q", c.Database)
	}
	if c.BatchSize < 1000 || c.BatchSize > 10_000_000 {
		return fieldErr("history.clickhouse.batch_size", "must be between 1000 and 10000000, not %d", c.BatchSize)
	}
	if c.FlushInterval < Duration(10*time.Millisecond) || c.FlushInterval > Duration(time.Minute) {
		return fieldErr("history.clickhouse.flush_interval", "must be between 10ms and 1m, not %s", c.FlushInterval)
	}
	if c.SpoolLimit < int64(c.BatchSize) {
		return fieldErr("history.clickhouse.spool_limit", "must be at least history.clickhouse.batch_size (%d), not %d", c.BatchSize, c.SpoolLimit)
	}
	if c.QueryTimeout < Duration(time.Second) || c.QueryTimeout > Duration(time.Hour) {
		return fieldErr("history.clickhouse.query_timeout", "must be between 1s and 1h, not %s", c.QueryTimeout)
	}
	if c.Ack != "" && c.Ack != "spooled" && c.Ack != "inserted" {
		return fieldErr("history.clickhouse.ack", "must be \"spooled\" or \"inserted\", not %q", c.Ack)
	}
	if c.AckTimeout < Duration(time.Second) || c.AckTimeout > c.QueryTimeout {
		return fieldErr("history.clickhouse.ack_timeout", "must be between 1s and history.clickhouse.query_timeout (%s), not %s", c.QueryTimeout, c.AckTimeout)
	}
	if c.Cluster != "" && !clickhouseDB.MatchString(c.Cluster) {
		return fieldErr("history.clickhouse.cluster", "must be letters, digits and _, not %q", c.Cluster)
	}
	t := c.TLS
	if (t.CertFile == "") != (t.KeyFile == "") {
		return fieldErr("history.clickhouse.tls.cert_file", "and history.clickhouse.tls.key_file must be set together")
	}
	for _, f := range []struct{ name, path string }{{"history.clickhouse.tls.ca_file", t.CAFile}, {"history.clickhouse.tls.cert_file", t.CertFile}, {"history.clickhouse.tls.key_file", t.KeyFile}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			return fieldErr(f.name, "cannot be read: %v", err)
		}
	}
	return nil
}

var clickhouseDB = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)
