// Package alert turns events into notifications: Zabbix 6.0's trigger
// actions (event source 0), auto-registration actions (2: their filter
// is checked by Options.Autoreg, package autoreg; their send-message
// and remote-command operations run once, no recovery; no host rights
// are checked, there is no host yet), discovery actions (1: as
// auto-registration's, the filter checked by Options.Discovery, package
// netdisc, for every discovery event whatever its value; remote
// commands are stored, not run) and internal-event actions (3:
// internal.go, event type, host group, host, template and tags of the
// item's or trigger's host, with escalations and recovery operations as
// trigger actions), escalations, media types (email, script, webhook)
// and alerts. FilterHolds is the filter evaluation both use.
//
// # What it owns
//
//   - Matching (match.go): each problem event is checked against the
//     enabled trigger actions' filters: host group, host, trigger, event
//     name (contains), severity (=, <>, >=, <=), tag name and tag value,
//     problem is (not) suppressed (Options.Suppressed, the maintenance
//     hook; default the event's own flag); evaluation and/or (same
//     condition type or-ed, types and-ed), and, or, or a custom formula
//     ("A and (B or not C)").
//   - Escalations (engine.go): a matching action starts an escalation at
//     step 1. Each step runs the operations whose esc_step_from..to
//     (to 0: no end) include it, then waits the shortest esc_period of
//     those operations (0: the action's); the escalation is done when no
//     operation covers a later step, and then only waits for the problem
//     to end. An operation with conditions (opconditions: "event
//     acknowledged" or not, match.go) runs at a step only if they hold
//     then; its step counts for the step's duration either way. The recovery event ends it: recovery operations run (send
//     a message, or notify everyone the escalation messaged), and update
//     operations run for each acknowledge of an escalated problem. An
//     escalation of a deleted or disabled action, or of a problem no
//     longer stored, is cancelled; a problem found resolved at a step is
//     recovered then; with pause_suppressed a suppressed problem's
//     escalation is re-checked each minute instead of stepping.
//   - Alerts: one per user medium an operation reaches (active, the
//     event's severity in its mask, now in its period, of the
//     operation's media type or any). A user without a medium of the
//     type gets one failed alert "No media defined for user.", as in
//     Zabbix. Subject and message come from the operation or, with
//     default_msg, from the media type's template for problem (0),
//     recovery (1) or update (2). Macros (macros.go, Expand) are
//     expanded when the alert is made, in subject, message, webhook
//     parameters and script parameters: {EVENT.ID NAME SEVERITY NSEVERITY
//     STATUS VALUE DATE TIME TAGS TAGSJSON OPDATA ACK.STATUS},
//     {EVENT.RECOVERY.ID DATE TIME NAME STATUS VALUE TAGS TAGSJSON},
//     {EVENT.UPDATE.MESSAGE ACTION DATE TIME}, {HOST.NAME HOST.HOST
//     HOST.ID}<N>, {ITEM.NAME KEY ID LASTVALUE VALUE}<N> (items by
//     ascending ID), {TRIGGER.ID NAME NAME.ORIG SEVERITY NSEVERITY STATUS
//     VALUE DESCRIPTION URL EXPRESSION}, {ACTION.ID NAME}, {ALERT.SENDTO
//     SUBJECT MESSAGE}. A macro without data is "*UNKNOWN*"; an unknown
//     one stays as written.
//   - Remote commands (engine.go command, command.go): an operation of
//     type 1 makes one command alert (alerttype 1) per target host: the
//     hosts it names (0: the event's trigger's hosts) and those of the
//     host groups it names, outside the script's host group refused.
//     Host macros are the target host's, the others the event's. Command
//     alerts go through the queue of media type ID 0 and run once (a
//     command is not known to be safe to run twice; only one in flight
//     at a crash runs again after the restart, marked as an alert in
//     flight is), bounded by
//     Options.CommandTimeout, through Options.Commander: CommandRunner
//     runs /bin/sh -c on the server (the shell, as Zabbix: a script is a
//     command line) in its own process group, killed whole at the
//     timeout, or asks the host's agent for system.run. The output
//     (bounded) and error are kept on the alert.
//   - Delivery (queue.go): one queue per media type (a slice and a
//     signal channel) and one dispatcher goroutine that starts at most
//     maxsessions sends at once (0: Options.MaxSessions), no faster
//     than Options.RateLimit a second. A failed attempt with attempts
//     left (maxattempts, default 3) waits attempt_interval outside the
//     sessions and goes back first in the queue; the last failure is
//     the alert's status 2 ("failed") with its error and retries, as
//     alert.get shows it. Each send is bounded by the media type's
//     timeout.
//   - Back-pressure (backpressure.go): a queue holds at most
//     Options.QueueSize alerts waiting (queued or waiting for a retry).
//     An escalation step that would add alerts to a full queue does not
//     run: the escalation waits, first in first out per media type, and
//     runs the step once the queue drained to half its bound. No alert
//     is failed or dropped for a full queue, and a flood's memory stays
//     bounded (a waiting escalation has made no alert yet). A step that
//     alone makes more alerts than the bound runs when the queue is not
//     full; recovery and update messages, retries and alerts re-queued
//     at start go past the bound. Metrics: peregrine_alert_backlog,
//     _queued_total, _sent_total, _failed_total, _retries_total,
//     _repeats_total, _steps_waited_total, _events_dropped_total, _escalations, and per
//     media type peregrine_alert_queue_length{mediatypeid} (alerts) and
//     peregrine_alert_escalations_waiting{mediatypeid}; Queues gives
//     both to the API (mediatype.get's selectQueue).
//   - TestSend (testsend.go): one message through a media type now,
//     outside escalations and the log, for the API's mediatype.test
//     (6.0's media type "Test"); a webhook's return value comes back.
//   - Senders: webhook.go (Zabbix's JavaScript form with HttpRequest,
//     the older CurlHttpRequest names, Zabbix.log, btoa and atob, run by
//     package jsvm on Options.JS, the server's pool of worker processes:
//     bounded by the media type's timeout and the pool's memory limit,
//     512 MiB per script as Zabbix's, past which the attempt fails with
//     the reason while the server's heap stays put; the HTTP requests
//     are made here, bounded by MaxBody. Each of the 31 webhooks Zabbix
//     6.0 ships runs, TestDefaultWebhooksRun; or, as a Peregrine
//     convenience, a JSON POST of the parameters to the "URL"
//     parameter), script.go (exec without a shell, process group killed
//     at the timeout), email.go (net/smtp: none, STARTTLS or SSL, AUTH
//     PLAIN or LOGIN, UTF-8 message with Date and Message-ID). SMS media
//     types are stored but have no sender: their alerts fail with the
//     reason.
//   - Durability (store.go; docs/format/alerts.md): alerts, escalations
//     and the highest event ID decided are appended to a log with the
//     history WAL's framing (Options.Sync) before alerts are queued, and
//     checkpointed into a new segment at open and when the log outgrows
//     what is live. A restart restores escalations (steps fire at their
//     times), re-queues alerts not yet delivered (a delivered one is
//     never sent again; one in flight at a crash may be sent twice, and
//     is marked: each attempt is preceded by a "send started" record,
//     and an attempt found started with no outcome at open, after a
//     kill or a takeover, counts in Retries and sets Alert.Repeat, so
//     the alert's Error says it may be a repeat (RepeatSent once sent,
//     status staying sent), counted in peregrine_alert_repeats_total),
//     matches events the event store committed after the watermark, and
//     runs the update operations of the acknowledges from the ack mark
//     on (the lowest ack ID not yet decided; an ack whose update alerts
//     are already logged is not decided twice), so an acknowledge
//     committed just before a kill -9 still sends its messages. An
//     escalation step's alerts and the escalation's next step are one
//     log record (a group), as are a recovery's alerts and the
//     escalation's end: a kill -9 between them can neither run the step
//     again nor lose its alerts. Options.KeepAlerts bounds the finished
//     alerts kept for alert.get (trimmed when a sixteenth over).
//   - The log's place (backend.go): a WAL in Options.Dir, or, with
//     Options.Postgres (state.store: postgres), table alert_log in
//     PostgreSQL (package pglog) whose every write checks the HA lease
//     in its own transaction: a node that lost its lease logs nothing,
//     so it queues no new alert, starts no attempt (a send's start is
//     logged first) and records no delivery.
//   - A follower (Follower, follow.go: an HA standby's alert.get): the
//     PostgreSQL log read without writing, Follow applying what the
//     active node committed since; when a checkpoint deleted records it
//     had not read, it reads the log again from its start. It sends
//     nothing.
//
// # What it does not own
//
// Making events (package trigger), storing them (package event: Events
// is read for problems and their resolution), the configuration
// (catalog's AlertConfig; the API validates it), user groups
// (Options.UsersOfGroups), maintenance (Options.Suppressed), and users'
// rights (Options.Rights). The engine applies Zabbix's rule with them: a
// user (named, or a member of a user group) is sent a message about an
// event only with at least read permission on a host of its trigger;
// others are skipped, counted in peregrine_alert_recipients_denied_total
// and logged once a minute per action and user. "Notify all involved"
// re-checks, since rights may have changed since the problem.
//
// # Concurrency contract
//
// Notify may be called from any goroutine and never blocks on sending:
// it queues the batch, not a copy (the committer must leave it
// unchanged; the engine only reads it), in an inbox bounded by
// Options.InboxSize
// (overflow counted in peregrine_alert_events_dropped_total) and wakes
// Run. Run's goroutine alone matches and escalates; dispatchers and
// sends run on their own goroutines and only touch their queue (q.mu),
// its counters of waiting escalations (atomics), the engine's wake
// signal, and the log (wmu read-locked for writes, then mu). Alerts,
// Queues and Escalations may be called from any goroutine.
package alert
