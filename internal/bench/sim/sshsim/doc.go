// Package sshsim simulates SSH servers for tests and benchmarks: a Fleet
// listens on n ports of 127.0.0.1 (loopback only), each a server with
// its own ed25519 host key built on golang.org/x/crypto/ssh, and runs
// every "exec" request through one function, whose Reply says what the
// command prints (on stdout and stderr), its exit status, and whether it
// floods or hangs. Users log in with a password (offered as "password"
// and, or only, as "keyboard-interactive", as PAM-backed servers do) or
// a public key.
//
// It is the SSH server of the SSH checker's tests where the real sshd
// cannot serve (password authentication needs a system user with a
// password; see internal/testutil.StartSshd for the real one) and of
// `peregrine bench checks --kind ssh`, which points both Peregrine and
// Zabbix at it. It does not import package testing.
//
// Concurrency: a Fleet is safe for concurrent use; Close stops every
// listener and connection and waits for their goroutines.
package sshsim
