// Package testutil starts the real Zabbix programs (zabbix_sender, and
// zabbix_agentd and zabbix_agent2 in active mode; zabbix_get, snmpd and
// ClickHouse later) on loopback for integration tests, and parses what
// they print.
//
// A program that is not installed skips the test, except under CI (the
// CI environment variable set), where a missing program is a failure:
// .ci/run installs them, so absence there is a broken pipeline, not a
// reason to pass.
package testutil
