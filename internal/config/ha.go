package config

import (
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// StateConfig is where the server's state lives (issue 31): "embedded"
// (the default: SQLite and Peregrine's own logs under data_dir, exactly
// as before) or "postgres" (PostgreSQL at state.postgres.dsn, which high
// availability needs). Restart to change.
type StateConfig struct {
	Store    string              `yaml:"store"`
	Postgres StatePostgresConfig `yaml:"postgres"`
}

// StatePostgresConfig is the PostgreSQL that holds the state when
// state.store is "postgres".
type StatePostgresConfig struct {
	// DSN is a libpq connection string or URL
	// ("postgres://user@host:5432/db", "host=... dbname=..."). Its
	// password is never logged or returned.
	DSN string `yaml:"dsn"`
}

// HAConfig makes the server a node of a high-availability cluster, as
// Zabbix 6.0's HANodeName and NodeAddress do: an empty node_name is a
// standalone server (the default). Restart to change.
type HAConfig struct {
	// NodeName is the node's name, unique in the cluster (HANodeName).
	NodeName string `yaml:"node_name"`
	// NodeAddress is where the other nodes and the UI reach this node,
	// host[:port] (NodeAddress); the port defaults to 10051 as in 6.0.
	NodeAddress string `yaml:"node_address"`
	// FailoverDelay is the cluster's failover delay when the cluster is
	// first created (6.0's default 1m, recorded from 6.0.14's
	// config.ha_failover_delay; 10s to 15m). Afterwards the cluster's
	// value, changed at run time with `peregrine ha set-failover-delay`,
	// wins over this one.
	FailoverDelay Duration `yaml:"failover_delay"`
}

// Enabled reports whether the server runs as an HA cluster node.
func (h *HAConfig) Enabled() bool { return h.NodeName != "" }

// Zabbix 6.0's bounds of the failover delay.
const (
	MinFailoverDelay = 10 * time.Second
	MaxFailoverDelay = 15 * time.Minute
)

// haNodeName is the form a node name takes: what the HANodeName of a
// 6.0 node can be (its ha_node.name column is 255 characters), kept to
// printable ASCII without spaces so that it can stand in agent and
// proxy configurations.
var haNodeName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,255}$`)

func defaultState() StateConfig { return StateConfig{Store: "embedded"} }

func defaultHA() HAConfig { return HAConfig{FailoverDelay: Duration(time.Minute)} }

func (s *StateConfig) validate() error {
	switch s.Store {
	case "embedded":
		if s.Postgres.DSN != "" {
			return fieldErr("state.postgres.dsn", "is set but state.store is \"embedded\": set state.store: postgres to use it, or remove it")
		}
	case "postgres":
		if strings.TrimSpace(s.Postgres.DSN) == "" {
			return fieldErr("state.postgres.dsn", "must be set when state.store is \"postgres\" (e.g. postgres://peregrine@db.example.com/peregrine)")
		}
		if err := checkDSN(s.Postgres.DSN); err != nil {
			return fieldErr("state.postgres.dsn", "%v", err)
		}
	default:
		return fieldErr("state.store", "must be \"embedded\" or \"postgres\", not %q", s.Store)
	}
	return nil
}

// checkDSN rejects a connection string that cannot be one, without
// naming its password; the driver parses it in full when it connects.
func checkDSN(dsn string) error {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return errorString("is not a valid postgres:// URL")
		}
		if u.Host == "" && u.Query().Get("host") == "" {
			return errorString("names no host")
		}
		return nil
	}
	if !strings.Contains(dsn, "=") {
		return errorString("must be a postgres:// URL or key=value pairs (host=... dbname=...)")
	}
	return nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

func (h *HAConfig) validate(c *Config) error {
	if h.FailoverDelay < Duration(MinFailoverDelay) || h.FailoverDelay > Duration(MaxFailoverDelay) || h.FailoverDelay%Duration(time.Second) != 0 {
		return fieldErr("ha.failover_delay", "must be whole seconds between 10s and 15m (Zabbix 6.0's range), not %s", h.FailoverDelay)
	}
	if !h.Enabled() {
		if h.NodeAddress != "" {
			return fieldErr("ha.node_address", "is set but ha.node_name is empty: a standalone server has no node address; set ha.node_name to run as a cluster node")
		}
		return nil
	}
	if !haNodeName.MatchString(h.NodeName) {
		return fieldErr("ha.node_name", "%q must be 1 to 255 letters, digits, '.', '_' or '-'", h.NodeName)
	}
	if h.NodeAddress == "" {
		return fieldErr("ha.node_address", "must be set for a cluster node (host or host:port where the UI and the other nodes reach it)")
	}
	if _, _, err := SplitNodeAddress(h.NodeAddress); err != nil {
		return fieldErr("ha.node_address", "%v", err)
	}
	if c.State.Store != "postgres" {
		return fieldErr("ha.node_name", "needs state.store: postgres (the nodes share their state in PostgreSQL; the embedded state is on one machine's disk), not %q", c.State.Store)
	}
	if c.History.Store != "clickhouse" {
		return fieldErr("ha.node_name", "needs history.store: clickhouse (every node must read the history the active one wrote; %q history lives on one node's disk or memory)", c.History.Store)
	}
	if c.AckMode() != "inserted" {
		return fieldErr("history.clickhouse.ack", "must be \"inserted\" on a cluster node (ha.node_name): a value acknowledged from this node's spool would be lost with its disk after a failover")
	}
	return nil
}

// SplitNodeAddress splits ha.node_address into host and port (10051
// when none is given, as 6.0's NodeAddress).
func SplitNodeAddress(a string) (string, int, error) {
	host, port := a, 10051
	if h, p, err := net.SplitHostPort(a); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, errorString("port of " + strconv.Quote(a) + " must be between 1 and 65535")
		}
		host, port = h, n
	} else if strings.Count(a, ":") == 1 {
		return "", 0, errorString(strconv.Quote(a) + " is not host or host:port")
	}
	if host == "" || len(host) > 255 || strings.ContainsAny(host, " \t/") {
		return "", 0, errorString(strconv.Quote(a) + " must name a host (an address or DNS name, at most 255 characters)")
	}
	return host, port, nil
}
