package sshsim

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/ssh"
)

// Reply is what one command does.
type Reply struct {
	Stdout, Stderr []byte
	// Exit is the exit status sent when the command ends.
	Exit uint32
	// Flood writes Stdout over and over without end (at least a byte
	// when it is empty), until the client goes: a command printing
	// without end.
	Flood bool
	// Hang accepts the command and never answers nor ends it.
	Hang bool
}

// Options configures a Fleet.
type Options struct {
	// Passwords are the users that log in with a password.
	Passwords map[string]string
	// KeyboardInteractiveOnly offers the password as
	// "keyboard-interactive" only (one "Password:" prompt), as servers
	// with PAM do; by default both "password" and "keyboard-interactive"
	// take it.
	KeyboardInteractiveOnly bool
	// Keys are the users that log in with a public key.
	Keys map[string][]ssh.PublicKey
	// CA, if set, signs user certificates the servers accept for the
	// users they name as principals.
	CA ssh.PublicKey
	// ECDSAHostKey gives each server an ECDSA P-256 host key beside its
	// ed25519 one, as Debian's sshd has both (golang.org/x/crypto's
	// client asks for ECDSA first).
	ECDSAHostKey bool
	// KeyExchanges are the key exchanges the servers offer; default
	// DebianKeyExchanges, so that clients negotiate what they would with
	// Debian 12's sshd (golang.org/x/crypto's own default starts with
	// the ML-KEM hybrid, which OpenSSH offers from 9.9 only).
	KeyExchanges []string
	// Run answers every command: server is the index of the server
	// (0..n-1). Default: "echo ARGS" prints ARGS and a newline, anything
	// else prints nothing and exits 127.
	Run func(server int, user, command string) Reply
}

// DebianKeyExchanges are the key exchanges of OpenSSH 9.2 (Debian 12)
// that golang.org/x/crypto/ssh implements, in OpenSSH's order.
var DebianKeyExchanges = []string{"curve25519-sha256", "curve25519-sha256@libssh.org", "ecdh-sha2-nistp256",
	"ecdh-sha2-nistp384", "ecdh-sha2-nistp521", "diffie-hellman-group-exchange-sha256", "diffie-hellman-group16-sha512",
	"diffie-hellman-group14-sha256"}

// Fleet is n simulated SSH servers.
type Fleet struct {
	opts     Options
	lns      []net.Listener
	hostKeys []ssh.PublicKey
	configs  []*ssh.ServerConfig
	wg       sync.WaitGroup
	closed   atomic.Bool

	mu    sync.Mutex
	conns map[net.Conn]struct{}

	// Sessions counts the exec requests run, Logins the connections
	// that logged in.
	Sessions atomic.Uint64
	_        [56]byte
	Logins   atomic.Uint64
}

// Start starts n servers on 127.0.0.1.
func Start(n int, opts Options) (*Fleet, error) {
	if opts.Run == nil {
		opts.Run = Echo
	}
	f := &Fleet{opts: opts, conns: map[net.Conn]struct{}{}}
	for i := 0; i < n; i++ {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			f.Close()
			return nil, err
		}
		signer, err := ssh.NewSignerFromKey(priv)
		if err != nil {
			f.Close()
			return nil, err
		}
		cfg := f.serverConfig()
		cfg.AddHostKey(signer)
		if opts.ECDSAHostKey {
			ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				f.Close()
				return nil, err
			}
			es, err := ssh.NewSignerFromKey(ek)
			if err != nil {
				f.Close()
				return nil, err
			}
			cfg.AddHostKey(es)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("sshsim: cannot listen for server %d: %w", i, err)
		}
		f.lns = append(f.lns, ln)
		f.hostKeys = append(f.hostKeys, signer.PublicKey())
		f.configs = append(f.configs, cfg)
	}
	for i, ln := range f.lns {
		f.wg.Add(1)
		go f.accept(i, ln)
	}
	return f, nil
}

// Echo is the default Run: "echo ARGS" prints ARGS and a newline.
func Echo(_ int, _ string, command string) Reply {
	if rest, ok := bytes.CutPrefix([]byte(command), []byte("echo ")); ok {
		return Reply{Stdout: append(rest, '\n')}
	}
	if command == "echo" {
		return Reply{Stdout: []byte("\n")}
	}
	return Reply{Stderr: []byte("sh: 1: " + command + ": not found\n"), Exit: 127}
}

func (f *Fleet) serverConfig() *ssh.ServerConfig {
	cfg := &ssh.ServerConfig{ServerVersion: "SSH-2.0-sshsim"}
	cfg.KeyExchanges = f.opts.KeyExchanges
	if cfg.KeyExchanges == nil {
		cfg.KeyExchanges = DebianKeyExchanges
	}
	checkPassword := func(user, pw string) error {
		if want, ok := f.opts.Passwords[user]; ok && want == pw {
			return nil
		}
		return errors.New("wrong password")
	}
	if len(f.opts.Passwords) > 0 {
		if !f.opts.KeyboardInteractiveOnly {
			cfg.PasswordCallback = func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
				return nil, checkPassword(c.User(), string(pw))
			}
		}
		cfg.KeyboardInteractiveCallback = func(c ssh.ConnMetadata, ask ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
			ans, err := ask(c.User(), "", []string{"Password: "}, []bool{false})
			if err != nil {
				return nil, err
			}
			if len(ans) != 1 {
				return nil, errors.New("one answer expected")
			}
			return nil, checkPassword(c.User(), ans[0])
		}
	}
	if len(f.opts.Keys) > 0 || f.opts.CA != nil {
		certs := &ssh.CertChecker{IsUserAuthority: func(k ssh.PublicKey) bool {
			return f.opts.CA != nil && bytes.Equal(k.Marshal(), f.opts.CA.Marshal())
		}}
		cfg.PublicKeyCallback = func(c ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if _, ok := key.(*ssh.Certificate); ok {
				return certs.Authenticate(c, key)
			}
			for _, k := range f.opts.Keys[c.User()] {
				if bytes.Equal(k.Marshal(), key.Marshal()) {
					return nil, nil // the signature check follows
				}
			}
			return nil, errors.New("unknown key")
		}
	}
	return cfg
}

// Addr is server i's "127.0.0.1:port".
func (f *Fleet) Addr(i int) string { return f.lns[i].Addr().String() }

// HostKey is server i's ed25519 host key.
func (f *Fleet) HostKey(i int) ssh.PublicKey { return f.hostKeys[i] }

// Len is the number of servers.
func (f *Fleet) Len() int { return len(f.lns) }

func (f *Fleet) accept(i int, ln net.Listener) {
	defer f.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if !f.track(c) {
			c.Close()
			return
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer f.untrack(c)
			f.serve(i, c)
		}()
	}
}

func (f *Fleet) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed.Load() {
		return false
	}
	f.conns[c] = struct{}{}
	return true
}

func (f *Fleet) untrack(c net.Conn) {
	c.Close()
	f.mu.Lock()
	delete(f.conns, c)
	f.mu.Unlock()
}

// serve runs one connection: the handshake, then its session channels.
func (f *Fleet) serve(i int, c net.Conn) {
	sc, chans, reqs, err := ssh.NewServerConn(c, f.configs[i])
	if err != nil {
		return
	}
	defer sc.Close()
	f.Logins.Add(1)
	go ssh.DiscardRequests(reqs)
	var wg sync.WaitGroup
	defer wg.Wait()
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "session channels only")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.session(i, sc.User(), sc, ch, creqs)
		}()
	}
}

// session answers a session channel's requests: exec runs the command.
func (f *Fleet) session(i int, user string, sc *ssh.ServerConn, ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	for req := range reqs {
		if req.Type != "exec" {
			if req.WantReply {
				_ = req.Reply(false, nil)
			}
			continue
		}
		var p struct{ Command string }
		if err := ssh.Unmarshal(req.Payload, &p); err != nil {
			_ = req.Reply(false, nil)
			continue
		}
		_ = req.Reply(true, nil)
		f.Sessions.Add(1)
		r := f.opts.Run(i, user, p.Command)
		switch {
		case r.Hang:
			_ = sc.Wait() // until the client goes
			return
		case r.Flood:
			out := r.Stdout
			if len(out) == 0 {
				out = bytes.Repeat([]byte("flood "), 64<<10/6)
			}
			for {
				if _, err := ch.Write(out); err != nil {
					return
				}
			}
		}
		if len(r.Stdout) > 0 {
			_, _ = ch.Write(r.Stdout)
		}
		if len(r.Stderr) > 0 {
			_, _ = ch.Stderr().Write(r.Stderr)
		}
		var st [4]byte
		binary.BigEndian.PutUint32(st[:], r.Exit)
		_, _ = ch.SendRequest("exit-status", false, st[:])
		_ = ch.CloseWrite()
		return
	}
}

// Close stops every server and connection and waits for their
// goroutines.
func (f *Fleet) Close() {
	f.mu.Lock()
	f.closed.Store(true)
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	for _, ln := range f.lns {
		ln.Close()
	}
	f.wg.Wait()
}
