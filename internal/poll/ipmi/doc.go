// Package ipmi is the IPMI checker (item type 12): it reads sensors of
// a host's BMC through its IPMI interface (type 3, port 623) with the
// host's IPMI settings (authentication type, privilege, username,
// password), as Zabbix 6.0's IPMI pollers do, through the
// github.com/bougou/go-ipmi library (IPMI v2.0 RMCP+ and v1.5 over UDP,
// pure Go).
//
// Items. An item's ipmi_sensor names a sensor by the ID string of its
// sensor data record ("CPU Temp", or "id:CPU Temp") or by OpenIPMI's
// full name ("name:(7.1).CPU Temp", entity and instance first), matched
// exactly. A threshold sensor's value is its reading converted to its
// units (y = L[(Mx + B·10^Bexp)·10^Rexp], "73.5"); a discrete sensor's
// value is the bitmask of its asserted states that the record says it
// returns ("9": states 0 and 3). The key ipmi.get needs no sensor: its
// value is every sensor as Zabbix 6.0's JSON (id, name, sensor and
// reading types with their names, state and its names, and for
// threshold sensors value, units and the readable thresholds), the
// master item of IPMI low-level discovery. Names follow OpenIPMI 2.0.33
// (names.go). Records are parsed here (sdr.go), not by the library: the
// masks decide values, and the parser is fuzzed.
//
// Sessions. Each BMC (address, port and credentials) has a bounded pool
// of sessions (Options.MaxSessionsPerBMC, default 2): a check takes
// one, opening it if none is idle, and gives it back; sessions are kept
// (the library sends keep-alives) until unused for Options.IdleClose,
// as Zabbix keeps its sessions, and a check waits for a free one within
// its own timeout, so a BMC is never asked more than the pool allows.
// The BMC's sensor list (its SDR repository) is read once per session
// pool and again after Options.SDRRefresh, or when a sensor is not in
// it (at most once a minute). A request that fails on a kept session is
// tried once on a new one if time is left (the BMC may have dropped the
// session).
//
// Failures. Every check ends within its timeout. A BMC that does not
// answer costs its check one timeout, a network error (the interface's
// availability counts it), counted in
// peregrine_poll_ipmi_timeouts_total and logged at most once a minute;
// one that refuses the credentials makes the item not supported, saying
// which host settings to check (peregrine_poll_ipmi_auth_failures_total).
// A sensor the repository does not list is not supported with Zabbix's
// words ("sensor or control X@[addr]:port does not exist"), as is one
// without a reading ("sensor data is not available"). Passwords are
// never logged: errors name the host's settings, not their values.
//
// Concurrency: Check starts one goroutine per check and returns; the
// scheduler bounds how many are in flight. Close, once the scheduler
// has stopped, waits for them and closes every session. Safe for
// concurrent use.
package ipmi
