package testutil

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// Telnetd is a real Telnet daemon started by StartTelnetd.
type Telnetd struct {
	// Addr is its "127.0.0.1:port".
	Addr string
	// User and Password are the login its login program takes.
	User, Password string
}

// StartTelnetd runs GNU inetutils' telnetd (Debian inetutils-telnetd)
// on a free port of 127.0.0.1 as inetd runs it: the test accepts each
// connection and starts a telnetd with the socket as its standard
// input and output. The daemon negotiates its options and runs, on a
// pseudo-terminal, a login program of the test's instead of /bin/login
// (-E), so that no system account is needed: it prompts "login: " and
// "Password: " (echo off), refuses any pair but User and Password with
// "Login incorrect", and then runs /bin/sh -i with the prompt "$ ".
// Everything is stopped when the test ends.
func StartTelnetd(t testing.TB) *Telnetd {
	t.Helper()
	bin := Need(t, "/usr/sbin/telnetd", "inetutils-telnetd")
	dir := t.TempDir()
	d := &Telnetd{User: "zbx", Password: "s3cret"}
	login := filepath.Join(dir, "login.sh")
	script := fmt.Sprintf(`#!/bin/sh
printf 'login: '
read -r u
printf 'Password: '
stty -echo 2>/dev/null
read -r p
stty echo 2>/dev/null
printf '\r\n'
if [ "$u" != %q ] || [ "$p" != %q ]; then printf 'Login incorrect\r\n'; exit 1; fi
cd %q
HOME=%q PS1='$ ' ENV= exec /bin/sh -i
`, d.User, d.Password, dir, dir)
	if err := os.WriteFile(login, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d.Addr = ln.Addr().String()
	var (
		mu     sync.Mutex
		procs  = map[*exec.Cmd]bool{}
		closed bool
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f, err := c.(*net.TCPConn).File()
			c.Close()
			if err != nil {
				continue
			}
			// -h: no host banner before the login prompt.
			cmd := exec.Command(bin, "-h", "-E", login)
			cmd.Stdin, cmd.Stdout = f, f
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			mu.Lock()
			if closed {
				mu.Unlock()
				f.Close()
				return
			}
			err = cmd.Start()
			f.Close()
			if err != nil {
				mu.Unlock()
				continue
			}
			procs[cmd] = true
			wg.Add(1)
			mu.Unlock()
			go func() {
				defer wg.Done()
				_ = cmd.Wait()
				mu.Lock()
				delete(procs, cmd)
				mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		closed = true
		for cmd := range procs {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		mu.Unlock()
		wg.Wait()
	})
	return d
}
