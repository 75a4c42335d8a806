package config

import (
	"net"
	"strconv"
	"strings"
)

// JMXConfig configures the JMX checker (JMX agent items, type 16),
// which asks the Zabbix Java gateway: Zabbix's JavaGateway,
// JavaGatewayPort and StartJavaPollers. Restart to change.
type JMXConfig struct {
	// Gateway is the Java gateway's IP address or DNS name; "" (the
	// default) means none, and JMX items are not supported, saying so.
	Gateway string `yaml:"gateway"`
	// GatewayPort is the port the gateway listens on (its LISTEN_PORT).
	GatewayPort int `yaml:"gateway_port"`
	// MaxConnections bounds the connections to the gateway at once, as
	// StartJavaPollers bounds Zabbix's Java pollers (one connection
	// each); keep it at most the gateway's START_POLLERS.
	MaxConnections int `yaml:"max_connections"`
	// MaxKeysPerRequest bounds the keys of one request (Zabbix's 32).
	MaxKeysPerRequest int `yaml:"max_keys_per_request"`
	// MaxReplySize bounds one gateway reply (a jmx.discovery of a large
	// application server runs to megabytes).
	MaxReplySize ByteSize `yaml:"max_reply_size"`
	// MaxInFlight bounds JMX checks in flight; 0 leaves only
	// poll.max_in_flight.
	MaxInFlight int `yaml:"max_in_flight"`
}

// defaultJMX is the jmx section's defaults: Zabbix's JavaGatewayPort,
// the gateway's default START_POLLERS for the connections.
func defaultJMX() JMXConfig {
	return JMXConfig{GatewayPort: 10052, MaxConnections: 5, MaxKeysPerRequest: 32, MaxReplySize: 16 << 20}
}

// Addr is the gateway's "host:port", "" when none is configured.
func (j *JMXConfig) Addr() string {
	if j.Gateway == "" {
		return ""
	}
	return net.JoinHostPort(j.Gateway, strconv.Itoa(j.GatewayPort))
}

func (j *JMXConfig) validate(poll *PollConfig) error {
	if strings.ContainsAny(j.Gateway, " /[]") || strings.Count(j.Gateway, ":") == 1 {
		return fieldErr("jmx.gateway", "must be the Java gateway's IP address or DNS name, without a port (set jmx.gateway_port), not %q", j.Gateway)
	}
	if j.GatewayPort < 1 || j.GatewayPort > 65535 {
		return fieldErr("jmx.gateway_port", "must be between 1 and 65535, not %d", j.GatewayPort)
	}
	if j.MaxConnections < 1 || j.MaxConnections > 1000 {
		return fieldErr("jmx.max_connections", "must be between 1 and 1000 (Zabbix's StartJavaPollers range), not %d", j.MaxConnections)
	}
	if j.MaxKeysPerRequest < 1 || j.MaxKeysPerRequest > 1000 {
		return fieldErr("jmx.max_keys_per_request", "must be between 1 and 1000, not %d", j.MaxKeysPerRequest)
	}
	if j.MaxReplySize < 1024 || j.MaxReplySize > 1<<30 {
		return fieldErr("jmx.max_reply_size", "must be between 1KiB and 1GiB, not %d bytes", j.MaxReplySize)
	}
	if j.MaxInFlight < 0 || j.MaxInFlight > poll.MaxInFlight {
		return fieldErr("jmx.max_in_flight", "must be between 0 (no own bound) and poll.max_in_flight (%d), not %d", poll.MaxInFlight, j.MaxInFlight)
	}
	return nil
}
