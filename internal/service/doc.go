// Package service is Zabbix 6.0's services and SLAs: the services tree,
// each service's status computed from the open problems, the durable
// history of status changes, and the SLA report computed from it.
//
// # What it owns
//
//   - The SQLite database Options.Path (data_dir/services.db, through
//     internal/sqlitedb: one owner, durable commits): services and SLAs
//     as JSON objects with Zabbix's field names (Config, published
//     whole and never modified; Engine.Edit changes a copy), each
//     service's current status, and every status change with its clock
//     (Zabbix's service_alarms), kept for Options.Retention (365 days,
//     Zabbix's default services data storage period) and deleted daily.
//     IDs are never reused. With Options.Postgres the same tables live
//     in PostgreSQL instead (schema peregrine_services, sqlitedb.OpenPG,
//     every write transaction fenced by the HA lease). An HA standby
//     opens them with OpenFollower (follow.go): read-only, the statuses
//     and status changes the active node stored, the followed open
//     problems matched for ProblemEvents, Follow reading them again;
//     Edit fails with sqlitedb.ErrReadOnly.
//   - Status calculation (eval.go), as Zabbix 6.0's server does it: a
//     service without children has the highest severity of the open
//     problems carrying all its problem tags; a service with children
//     combines their statuses by its algorithm, each child's propagation
//     rule and its status rules. The clock of a change is the deciding
//     problem's (see eval.go). TestStatusGolden and TestAlarmSequence
//     hold it to statuses and changes recorded from Zabbix 6.0.14.
//   - Feeding: Engine.Notify takes each committed event batch (new
//     problems, OK events, severity changes of acknowledges) into a
//     bounded queue without blocking the trigger path; Run applies it
//     (Sync for tests). At Open, and when the queue overflowed, the
//     problems are rebuilt from the event store's open problems and
//     every status recalculated; a change found then is recorded at its
//     problem's clock, or now.
//   - The SLA report (sli.go): reporting periods in the SLA's time zone
//     (ReportingPeriods), the weekly schedule, excluded downtimes, and
//     uptime, downtime, SLI and error budget per period and service
//     (ComputeSLI), as Zabbix 6.0's frontend computes them
//     (TestSLIGolden replays 48 recorded sla.getsli answers).
//
// # What it does not own
//
// Validating services and SLAs and their Zabbix error texts, and who may
// read or change them (package api, which edits through Engine.Edit);
// the problems themselves (package event, package trigger).
//
// # Concurrency
//
// An Engine may be used from any goroutine. Edits and the application of
// problem changes are serialised by one mutex, which also guards the
// statuses; Config is an atomic load; Notify takes only the queue's
// lock. Reads of status changes go to the database, whose one
// connection serialises them with writes.
package service
