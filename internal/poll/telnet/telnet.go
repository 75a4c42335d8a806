package telnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/zbx/charset"
	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// Defaults of Options.
const (
	DefaultPort      = 23
	DefaultMaxOutput = 512 << 10
	DefaultTimeout   = 3 * time.Second
)

// Options configures a Checker.
type Options struct {
	// Item returns the current configuration of an item (the catalog's
	// latest snapshot): its command (Params) and login (Login).
	Item func(id uint64) *catalog.Item
	// MaxOutput bounds what one stage of the dialogue (the text up to
	// the login prompt, the password prompt, the shell prompt, the
	// command's output) may bring; more makes the item not supported.
	// Default DefaultMaxOutput.
	MaxOutput int
	// DefaultTimeout applies to checks that come without one.
	DefaultTimeout time.Duration
	// Dial, when set, replaces net.Dialer (tests).
	Dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	Metrics *selfmon.Registry
	Logger  *slog.Logger
}

// Reasons a check brought no value, as the "reason" label.
const (
	reasonConfig   = iota // the key cannot be used
	reasonConnect         // the TCP connection failed
	reasonLogin           // no login or password prompt, or no shell prompt after them
	reasonPrompt          // no prompt after the command (the connection ended)
	reasonTimeout         // the check's timeout passed
	reasonTooLarge        // a stage brought more than MaxOutput
	numReasons
)

var reasonNames = [numReasons]string{"config", "connect_failed", "login", "prompt", "timeout", "too_large"}

// Checker runs Telnet checks (item type 14). Safe for concurrent use.
type Checker struct {
	opts     Options
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	throttle *selfmon.LogThrottle

	inFlight *selfmon.Gauge
	results  [poll.NumStatus]*selfmon.Counter
	failures [numReasons]*selfmon.Counter
}

// New returns a Checker.
func New(opts Options) *Checker {
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = DefaultMaxOutput
	}
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = DefaultTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = selfmon.NewRegistry()
	}
	c := &Checker{opts: opts, dial: opts.Dial, throttle: selfmon.NewLogThrottle(opts.Logger, time.Minute)}
	if c.dial == nil {
		c.dial = (&net.Dialer{}).DialContext
	}
	m := opts.Metrics
	c.inFlight = m.Gauge("peregrine_poll_telnet_in_flight", "Telnet checks in flight.")
	for s := range c.results {
		c.results[s] = m.Counter("peregrine_poll_telnet_checks_total", "Telnet checks done, by result.", "result", poll.Status(s).String())
	}
	for r := range c.failures {
		c.failures[r] = m.Counter("peregrine_poll_telnet_errors_total", "Telnet checks that brought no value, by reason (timeout: one per check that ran out of time).", "reason", reasonNames[r])
	}
	return c
}

// Check starts one goroutine per check and returns; the scheduler
// bounds how many are in flight.
func (c *Checker) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	c.inFlight.Add(int64(len(batch)))
	for i := range batch {
		go func(ch *poll.Check) {
			r := c.check(ctx, ch)
			c.inFlight.Add(-1)
			c.results[r.Status].Inc()
			done(r)
		}(&batch[i])
	}
}

// failure is why a check brought no value.
type failure struct {
	reason int
	msg    string
	local  bool
}

func fail(reason int, format string, args ...any) *failure {
	return &failure{reason: reason, msg: fmt.Sprintf(format, args...)}
}

func (c *Checker) check(ctx context.Context, ch *poll.Check) *poll.Result {
	res := &poll.Result{Check: *ch}
	if ctx.Err() != nil {
		return abandoned(res)
	}
	timeout := ch.Timeout
	if timeout <= 0 {
		timeout = c.opts.DefaultTimeout
	}
	v, f := c.run(ctx, ch, timeout)
	res.Clock = time.Now()
	switch {
	case f == nil:
		res.Status, res.Value = poll.OK, v
		return res
	case ctx.Err() != nil && f.reason != reasonConfig:
		return abandoned(res)
	case f.local:
		res.Status, res.Error = poll.LocalError, f.msg
		c.throttle.Warn("local", "Telnet check failed for want of a local resource", "item", ch.ItemID, "err", f.msg)
		return res
	}
	c.failures[f.reason].Inc()
	c.throttle.Warn(reasonNames[f.reason], "Telnet check not supported", "item", ch.ItemID, "key", ch.Key, "reason", reasonNames[f.reason], "err", f.msg)
	// Every failure makes the item not supported and leaves the
	// interface alone, as Zabbix 6.0 does.
	res.Status, res.Error = poll.NotSupported, f.msg
	return res
}

func abandoned(res *poll.Result) *poll.Result {
	res.Status, res.Error = poll.NetworkError, "check abandoned: the server is stopping"
	if res.Clock.IsZero() {
		res.Clock = time.Now()
	}
	return res
}

// itemError is an item's not supported message.
type itemError string

func (e itemError) Error() string { return string(e) }

// Errors of the key, as Zabbix 6.0 words them.
const (
	errKeyFormat     itemError = "Invalid item key format."
	errKeyName       itemError = "Unsupported item key for this item type."
	errTooManyParams itemError = "Too many parameters."
	errPort          itemError = "Invalid third parameter."
	errNoAddress     itemError = "Telnet checks need the IP parameter of the key or a host interface to connect to."
	errArray         itemError = "Invalid item key format: no parameter of telnet.run may be an array."
)

// parseKey parses telnet.run[<unique short description>,<ip>,<port>,
// <encoding>] into the address to connect to (ip defaults to the
// interface's address iface, port to 23) and the encoding.
func parseKey(key, iface string) (addr, encoding string, err error) {
	k, err := itemkey.Parse(key)
	if err != nil {
		return "", "", errKeyFormat
	}
	if k.Name != "telnet.run" {
		return "", "", errKeyName
	}
	if len(k.Params) > 4 {
		return "", "", errTooManyParams
	}
	p := make([]string, 4)
	for i, v := range k.Params {
		if v.Array != nil {
			return "", "", errArray
		}
		p[i] = v.Value
	}
	host := p[1]
	if host == "" && iface != "" {
		if host, _, err = net.SplitHostPort(iface); err != nil {
			host = iface
		}
	}
	if host == "" {
		return "", "", errNoAddress
	}
	port := DefaultPort
	if p[2] != "" {
		n, err := strconv.ParseUint(p[2], 10, 16)
		if err != nil {
			return "", "", errPort
		}
		port = int(n)
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), p[3], nil
}

// lastChar is the last byte of b that is not a space, 0 for none (the
// prompt test Zabbix makes).
func lastChar(b []byte) byte {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != ' ' {
			return b[i]
		}
	}
	return 0
}

// run makes the check: the dialogue Zabbix has with a Telnet server.
// Read to a ':' (the login prompt), send the user name; read to a ':'
// (the password prompt), send the password; read to one of '$', '#',
// '>', '%' (the shell prompt, whose character it keeps); send the
// command; read to that character again. The text between is the
// command's output once cleaned (see output).
func (c *Checker) run(ctx context.Context, ch *poll.Check, timeout time.Duration) ([]byte, *failure) {
	addr, encoding, err := parseKey(ch.Key, ch.Addr)
	if err != nil {
		return nil, &failure{reason: reasonConfig, msg: err.Error()}
	}
	var it *catalog.Item
	if c.opts.Item != nil {
		it = c.opts.Item(ch.ItemID)
	}
	if it == nil {
		return nil, fail(reasonConfig, "The item is not in the configuration any more.")
	}
	login, command := &catalog.LoginItem{}, it.Ext().Params
	if it.Ext().Login != nil {
		login = it.Ext().Login
	}
	if it.Host != nil {
		sc := it.Host.UserMacros()
		login = login.Expand(sc)
		if strings.Contains(command, "{$") {
			command = sc.Expand(command)
		}
	}
	deadline := time.Now().Add(timeout)
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	nc, err := c.dial(dctx, "tcp", addr)
	if err != nil {
		if isLocal(err) {
			return nil, &failure{reason: reasonConnect, msg: fmt.Sprintf("Cannot connect to TELNET server %s: %v", addr, err), local: true}
		}
		if dctx.Err() != nil && ctx.Err() == nil {
			return nil, fail(reasonTimeout, "Cannot connect to TELNET server: cannot connect to %s: timed out after %s", addr, timeout)
		}
		return nil, fail(reasonConnect, "Cannot connect to TELNET server: cannot connect to %s: %v", addr, unwrapOp(err))
	}
	defer nc.Close()
	_ = nc.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	t := newConn(nc, c.opts.MaxOutput)

	// stage reads one stage; what fails is worded with what (6.0's
	// message for the stage) and timed out or cut off as it was.
	stage := func(reason int, what string, settle time.Duration, done func([]byte) bool) ([]byte, *failure) {
		b, err := t.readUntil(nil, done, settle, deadline)
		switch {
		case err == nil:
			return b, nil
		case errors.Is(err, errTooLarge):
			return nil, fail(reasonTooLarge, "%s the server sent more than %d bytes without one.", what, c.opts.MaxOutput)
		case !time.Now().Before(deadline):
			return nil, fail(reasonTimeout, "%s timed out after %s.", what, timeout)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fail(reason, "%s the server closed the connection.", what)
		}
		return nil, fail(reason, "%s %v.", what, err)
	}
	colon := func(b []byte) bool { return lastChar(b) == ':' }
	if _, f := stage(reasonLogin, "No login prompt:", 0, colon); f != nil {
		return nil, f
	}
	if err := t.write([]byte(login.Username + "\r\n")); err != nil {
		return nil, writeFailure(err, deadline, timeout)
	}
	if _, f := stage(reasonLogin, "No password prompt:", 0, colon); f != nil {
		return nil, f
	}
	if err := t.write([]byte(login.Password + "\r\n")); err != nil {
		return nil, writeFailure(err, deadline, timeout)
	}
	var prompt byte
	if _, f := stage(reasonLogin, "Login failed: no shell prompt ('$', '#', '>' or '%'):", 0, func(b []byte) bool {
		switch ch := lastChar(b); ch {
		case '$', '#', '>', '%':
			prompt = ch
			return true
		}
		return false
	}); f != nil {
		return nil, f
	}
	// The command's lines go as CR LF, as the protocol wants, whatever
	// a browser's text area sent.
	cmdLF := unixEOL([]byte(command))
	wire := bytes.ReplaceAll(cmdLF, []byte("\n"), []byte("\r\n"))
	if err := t.write(append(wire, '\r', '\n')); err != nil {
		return nil, writeFailure(err, deadline, timeout)
	}
	// A command of several lines is answered with a prompt after each:
	// wait Zabbix's pause after one for more. A one-line command's first
	// prompt after its output is the last, so it pays no pause.
	var settle time.Duration
	if bytes.IndexByte(cmdLF, '\n') >= 0 {
		settle = commandSettle
	}
	out, f := stage(reasonPrompt, "Cannot find prompt after command execution:", settle, func(b []byte) bool { return lastChar(b) == prompt })
	if f != nil {
		return nil, f
	}
	return charset.ToUTF8(output(out, cmdLF, prompt), encoding), nil
}

// commandSettle is how long the command stage of a command of several
// lines waits after a prompt for more output: Zabbix's pause between
// reads (0.1 s).
const commandSettle = 100 * time.Millisecond

func writeFailure(err error, deadline time.Time, timeout time.Duration) *failure {
	if !time.Now().Before(deadline) {
		return fail(reasonTimeout, "Cannot send to TELNET server: timed out after %s.", timeout)
	}
	return fail(reasonLogin, "Cannot send to TELNET server: %v.", err)
}

// unixEOL turns CR LF, LF CR and a lone CR into LF and drops CR NUL, as
// Zabbix reads a Telnet server's lines.
func unixEOL(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n',
			b[i] == '\n' && i+1 < len(b) && b[i+1] == '\r':
			out = append(out, '\n')
			i++
		case b[i] == '\r' && i+1 < len(b) && b[i+1] == 0:
			i++
		case b[i] == '\r':
			out = append(out, '\n')
		default:
			out = append(out, b[i])
		}
	}
	return out
}

// output cleans what came after the command up to the prompt, as Zabbix
// does: lines made Unix ones; the command's echo removed, then for a
// command of several lines the continuation prompts ("$ ", "# ", "> ",
// "% ") at the start, one per line break while there are some; a line
// break at the start removed; and the last line, the prompt's, cut off
// with the line break before it. The result is a new slice.
func output(b, cmdLF []byte, prompt byte) []byte {
	b = unixEOL(b)
	b = bytes.TrimPrefix(b, cmdLF)
	for range bytes.Count(cmdLF, []byte("\n")) {
		cut := false
		for _, p := range []string{"$ ", "# ", "> ", "% "} {
			if rest, ok := bytes.CutPrefix(b, []byte(p)); ok {
				b, cut = rest, true
				break
			}
		}
		if !cut {
			break
		}
	}
	b = bytes.TrimPrefix(b, []byte("\n"))
	end := len(b)
	seen := false
	for end > 0 {
		end--
		if !seen && b[end] == prompt {
			seen = true
		}
		if seen && b[end] == '\n' {
			break
		}
	}
	return b[:end]
}

// isLocal reports whether a connect error is this server's (out of
// descriptors, memory or local ports) rather than the target's.
func isLocal(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.EADDRNOTAVAIL)
}

func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}
