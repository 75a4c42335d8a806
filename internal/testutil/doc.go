// Package testutil starts the real programs (zabbix_sender, and
// zabbix_agentd and zabbix_agent2 in active and passive mode, zabbix_get,
// with pre-shared keys too (WritePSK, PSKArgs, PSKConfig); net-snmp's
// snmpd (StartSnmpd), snmptrap and snmpinform (SendTrap, SendInform);
// the Zabbix Java gateway and a small JVM with remote JMX
// (StartJavaGateway, StartJMXApp); sshd and telnetd (StartSshd,
// StartTelnetd); a private PostgreSQL, StartPostgres, with psqlODBC's
// driver and a temporary odbc.ini for the database monitor checker;
// ClickHouse) on loopback for integration tests, and parses what they
// print.
// InTmpfs runs a test with a small tmpfs of its own (in a user and
// mount namespace made by unshare), so that a disk can really fill up.
// catalogtest opens a test catalog with a spec. The simulated peers
// (agentsim for Zabbix agents, snmpsim for SNMP agents) are not here but
// under internal/bench/sim: `peregrine bench` runs them, and the
// production binary links nothing from this package or its subpackages
// (cmd/peregrine's TestBinaryLinksNoTestHelpers).
//
// Only _test.go files may import testutil and its subpackages (a rule
// internal/buildcheck's layer test enforces; docs/layout.md), so that the
// helpers may import any stage, as catalogtest imports trigger.
//
// A program that is not installed skips the test, except under CI (the
// CI environment variable set), where a missing program is a failure:
// .ci/run installs them, so absence there is a broken pipeline, not a
// reason to pass.
package testutil
