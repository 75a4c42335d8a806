#!/usr/bin/env bash
# usage: bench/peregrine-ha-failover.sh [KILLS]
# Peregrine's HA failover time, beside bench/zabbix-ha-failover.sh's for Zabbix 6.0 (docs/ha.md):
# runs the integration test TestIntegrationHANodeFailover with KILLS kills (default 20): two
# `peregrine serve` node processes on Debian's postgresql-15 and clickhouse-server (started by the
# test on loopback ports), failover delay 10s, the real zabbix_sender sending a value every 200 ms
# to ServerActive=b;a; each time the active node is killed with SIGKILL, the time until the other
# node is active and until the sender's first value is acknowledged after the kill; the killed node
# comes back as a standby. Prints one line per kill and the values' check at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
KILLS=${1:-20}
PEREGRINE_HA_KILLS=$KILLS go test -count=1 -timeout 90m -run '^TestIntegrationHANodeFailover$' -v ./internal/server/ |
  grep -E 'hanode_integration_test.go|^(--- |ok|FAIL)'
