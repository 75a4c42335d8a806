// Package telnet runs Zabbix Telnet checks (item type 14): it logs in to
// a Telnet server with the item's user name and password, runs the
// item's command (catalog.Item.Params) at the shell prompt and makes its
// output the value. The client is small and its own (proto.go): no
// maintained Go Telnet library fits a bounded, deadline-driven client,
// and the protocol part needed is RFC 854's option negotiation.
//
// Key. telnet.run[<unique short description>,<ip>,<port>,<encoding>]:
// ip defaults to the item's interface's address, port to 23, encoding
// names the output's character set (package zbx/charset). Errors of the
// key are 6.0's words (recorded from 6.0.14).
//
// The dialogue is Zabbix's: read until the last character that is not a
// space is ':' (the login prompt) and send the user name; again to ':'
// (the password prompt) and send the password; read to one of '$', '#',
// '>' or '%' (the shell prompt), keeping which; send the command, its
// lines ending CR LF; read to that prompt character again. Zabbix looks
// at the end of what it has once the server pauses for 0.1 s; Peregrine
// looks at the end of each segment received, without waiting. What
// came after the command is cleaned as Zabbix cleans it: lines made
// Unix ones (CR LF, LF CR, CR to LF; CR NUL dropped), the terminal's
// echo of the command removed, then one continuation prompt per line
// break of the command while there is one, a leading line break, and
// the prompt's line. The output is not trimmed; it is converted to
// UTF-8, invalid bytes as '?'. The expected values of the integration
// test are 6.0.14's against the same daemon.
//
// Options: every option the server offers or asks for is refused but
// suppress go-ahead, agreed both ways, as Zabbix does; an answer is sent
// only when it changes the option's state (RFC 854), at most 1,024 per
// check; subnegotiations are skipped; an escaped 255 is data.
//
// Bounds and failures. Each stage of the dialogue may bring at most
// Options.MaxOutput bytes (poll.command_max_output), subnegotiations
// included; more makes the item not supported at once. One deadline,
// the check's timeout, bounds the connect and the whole dialogue, so a
// silent or slow server costs its own check one timeout, counted once in
// peregrine_poll_telnet_errors_total{reason="timeout"}. Every failure
// makes the item not supported and leaves the interface alone, as in
// Zabbix 6.0; the messages start with 6.0's words ("Cannot connect to
// TELNET server", "No login prompt", "No password prompt", "Login
// failed", "Cannot find prompt after command execution") and say why.
// When ctx ends, every connection's deadline moves to now and its check
// is reported abandoned (a network error). A process out of descriptors
// or ports is a local error.
//
// Metrics: peregrine_poll_telnet_checks_total by result,
// peregrine_poll_telnet_errors_total by reason,
// peregrine_poll_telnet_in_flight. Failures are logged at most once a
// minute per reason, never with the password.
//
// Concurrency: Check starts one goroutine per check and returns (the
// scheduler bounds how many are in flight); nothing is kept between
// checks. Safe for concurrent use.
package telnet
