// Package external runs Zabbix external checks (item type 10) and
// Nagios plugins.
//
// Keys. A key script["arg1","arg2"] runs the executable file script,
// found in the first of the configured directories that has it
// (poll.external_scripts; by default Zabbix's externalscripts directory
// and /usr/lib/nagios/plugins, where Debian's monitoring-plugins install),
// with the key's parameters (Zabbix item-key parsing, package
// zbx/itemkey) as its arguments, without a shell. A name containing '/'
// or ".." is refused, so nothing outside those directories runs. In the
// parameters {HOST.CONN} and {HOST.PORT} are the item's interface's
// address and port (if it has one); other macros are not expanded yet.
//
// Zabbix's rule for external checks: stdout and stderr go to one pipe,
// exit code 0 makes the output (trailing white space removed) the value;
// any other code makes the item not supported with the output as the
// error ("Process exited with code: N." if there is none). So
// check_dummy["1","text"] is not supported with "WARNING: text", as in
// Zabbix.
//
// The key nagios[plugin,<arg>,...] runs plugin the same way but maps its
// outcome by the Nagios plugin API (spec §9) to a JSON value, which
// dependent items read by JSONPath:
//
//	{"state":1,"status":"WARNING","output":"text","long_output":"...",
//	 "perfdata":{"time":{"value":0.01,"uom":"s","warn":"1","crit":"2","min":0}},
//	 "exit_code":1}
//
// state is the exit code for 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN; any
// other code, death by a signal and a timeout are 3 UNKNOWN (Nagios's
// default for a timeout is CRITICAL; UNKNOWN says the check failed, not
// the service); exit_code keeps the process's code (-1 if killed). The
// first output line is TEXT[ | PERFDATA]; further lines are long_output,
// and after the first '|' in them the rest is more perfdata. Perfdata
// entries are 'label'=value[UOM];[warn];[crit];[min];[max] by label
// (value null for "U"); malformed entries are left out and counted in
// peregrine_poll_external_bad_perfdata_total. A script called "nagios"
// cannot be run as a plain external check.
//
// Bounds. At most Options.MaxProcesses processes run at once
// (poll.external_max_processes); further checks wait for a slot, and
// that wait is their latency. Each process runs in its own process
// group; at its timeout (the item's, else poll.default_timeout) the whole
// group is killed with SIGKILL, so a plugin's children die with it, and
// the item is not supported ("Timeout while executing ...") or, for
// nagios[], UNKNOWN. Output beyond Options.MaxOutput
// (poll.external_max_output, at least 8 KiB as the plugin guidelines ask)
// gets the group killed and the item not supported: a plugin printing
// megabytes costs a bounded read. The group is killed only while its
// leader is unreaped (the exit is awaited with waitid WNOWAIT first), so
// a recycled pid is never signalled. A failure to start for want of
// processes, memory or descriptors is a local error (blames no item).
// When the context of the Check call ends (the server stopping), a
// process still running is killed the same way and its check reported
// abandoned (a network error, which keeps no availability for these
// items), never as a timeout: nagios[] would make that an UNKNOWN value
// and a not supported item's steps may store one. A check still
// waiting for a slot is a local error.
//
// Metrics: peregrine_poll_external_latency_seconds is check latency as
// Nagios defines it, from the scheduled time to the process's start;
// peregrine_poll_external_execution_seconds from start to exit;
// peregrine_poll_external_checks_total by result,
// peregrine_poll_external_processes and _waiting. Reasons for not
// supported items are logged at most once a minute each.
//
// Concurrency: Check starts one goroutine per check and returns; the
// scheduler bounds how many are in flight. Safe for concurrent use.
package external
