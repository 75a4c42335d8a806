// Package ssh runs Zabbix SSH checks (item type 13) with
// golang.org/x/crypto/ssh: it connects, logs in, runs the item's command
// (catalog.Item.Params) in an "exec" session and makes what the command
// printed on stdout the value.
//
// Key. ssh.run[<unique short description>,<ip>,<port>,<encoding>,<ssh
// options>]: ip defaults to the item's interface's address and port to
// 22 (never the interface's port, which is the agent's). encoding names
// the output's character set (package zbx/charset). ssh options is
// "KexAlgorithms=a,b;HostkeyAlgorithms=...;Ciphers=...;MACs=...", the
// algorithms offered; each must be one the library implements. Zabbix
// 6.0.14 takes four parameters and refuses a fifth ("Too many
// parameters."); later 6.0 releases take the options, as Peregrine does.
// Errors of the key are 6.0's words (recorded from 6.0.14).
//
// Login (catalog.LoginItem). authtype 0: the password, offered as
// "password" and, for servers that only ask that way (PAM), as
// "keyboard-interactive" answering a single prompt with it. authtype 1:
// the key pair whose file names publickey and privatekey give, in
// Options.KeyDir (poll.ssh_key_location, Zabbix's SSHKeyLocation; unset,
// such items are not supported), the item's password being the private
// key's passphrase; the public key file must match the private key, or
// hold a certificate for it, which is presented. Parsed keys are cached
// by file until a file or the passphrase changes. User macros of the
// item's host resolve in the login and the command; a command's CR LF
// becomes LF, as Zabbix sends it.
//
// Host keys. Zabbix 6.0 (libssh2) accepts any host key, and so does
// this checker by default, so that migrated items keep working; with
// Options.KnownHosts (poll.ssh_known_hosts) it refuses servers whose key
// that OpenSSH known_hosts file does not list; a server showing a key of
// another type than the file lists for it (servers have several) is
// asked again for the types listed. docs/configuration.md says what
// accepting any key costs.
//
// Value. stdout only (stderr is discarded and the exit status ignored,
// as in Zabbix), converted to UTF-8, trailing white space trimmed,
// invalid UTF-8 as '?' (recorded from 6.0.14). Output beyond
// Options.MaxOutput (poll.command_max_output; Zabbix's limit is 512 KiB)
// closes the connection at once and makes the item not supported
// ("Command output exceeded limit of N KB").
//
// Failures. Every failure (refused, timed out, login refused, no value)
// makes the item not supported and leaves the interface's availability
// alone, as in Zabbix 6.0 (recorded: a refused connection is a not
// supported item); the messages start with 6.0's words ("Cannot connect
// to SSH server", "Cannot establish SSH session", "Password
// authentication failed", "Cannot read data from SSH server") and say
// the rest in Peregrine's. One deadline, the check's timeout, bounds the
// connect, the handshake, the login and the command together, so a
// silent or slow server costs its own check one timeout, counted once in
// peregrine_poll_ssh_errors_total{reason="timeout"}, and nothing else.
// A process out of descriptors or ports is a local error (no item
// blamed). When ctx ends (the server stopping) every connection's
// deadline moves to now and its check is reported abandoned (a network
// error).
//
// Metrics: peregrine_poll_ssh_checks_total by result,
// peregrine_poll_ssh_errors_total by reason, peregrine_poll_ssh_in_flight.
// Failures are logged at most once a minute per reason, never with the
// password or the passphrase.
//
// Concurrency: Check starts one goroutine per check and returns (the
// scheduler bounds how many are in flight); nothing is kept between
// checks but the parsed keys, so there is nothing to close. Safe for
// concurrent use.
package ssh
