package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/zbx/charset"
)

// Defaults of Options.
const (
	// DefaultMaxOutput is Zabbix 6.0's limit of an SSH command's output
	// (recorded from 6.0.14: "Command output exceeded limit of 512 KB").
	DefaultMaxOutput = 512 << 10
	DefaultTimeout   = 3 * time.Second
)

// Options configures a Checker.
type Options struct {
	// Item returns the current configuration of an item (the catalog's
	// latest snapshot): its command (Params) and login (Login).
	Item func(id uint64) *catalog.Item
	// KeyDir is where public-key items' key files are
	// (poll.ssh_key_location); "" makes them not supported.
	KeyDir string
	// KnownHosts, if set, is an OpenSSH known_hosts file: servers whose
	// host key it does not list are refused. "" accepts any host key, as
	// Zabbix 6.0 does.
	KnownHosts string
	// MaxOutput bounds a command's output; more makes the item not
	// supported. Default DefaultMaxOutput.
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
	reasonConfig    = iota // the key or the item's login cannot be used
	reasonConnect          // the TCP connection failed
	reasonHandshake        // the SSH handshake failed (or the host key was refused)
	reasonAuth             // the server refused the login
	reasonChannel          // the session or the command could not be started, or broke off
	reasonTimeout          // the check's timeout passed
	reasonTooLarge         // the output passed MaxOutput
	numReasons
)

var reasonNames = [numReasons]string{"config", "connect_failed", "handshake", "auth", "channel", "timeout", "too_large"}

// Checker runs SSH checks (item type 13). Safe for concurrent use.
type Checker struct {
	opts     Options
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	hostKey  gossh.HostKeyCallback
	keys     keyCache
	throttle *selfmon.LogThrottle

	inFlight *selfmon.Gauge
	results  [poll.NumStatus]*selfmon.Counter
	failures [numReasons]*selfmon.Counter
}

// New returns a Checker. It reads Options.KnownHosts, if set, once:
// an error names the file.
func New(opts Options) (*Checker, error) {
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
	// Zabbix 6.0 (libssh2) never looks at a known_hosts file: any host
	// key is accepted unless the operator names one (docs/configuration.md).
	c.hostKey = gossh.InsecureIgnoreHostKey() //nolint:gosec // Zabbix's behaviour by default; poll.ssh_known_hosts verifies
	if opts.KnownHosts != "" {
		cb, err := knownhosts.New(opts.KnownHosts)
		if err != nil {
			return nil, fmt.Errorf("cannot read poll.ssh_known_hosts %s: %w", opts.KnownHosts, err)
		}
		c.hostKey = cb
	}
	m := opts.Metrics
	c.inFlight = m.Gauge("peregrine_poll_ssh_in_flight", "SSH checks in flight.")
	for s := range c.results {
		c.results[s] = m.Counter("peregrine_poll_ssh_checks_total", "SSH checks done, by result.", "result", poll.Status(s).String())
	}
	for r := range c.failures {
		c.failures[r] = m.Counter("peregrine_poll_ssh_errors_total", "SSH checks that brought no value, by reason (timeout: one per check that ran out of time).", "reason", reasonNames[r])
	}
	return c, nil
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
	local  bool  // this server's fault (descriptors, ports): a local error
	err    error // the library's error, when there is one
}

func (f *failure) Error() string { return f.msg }

func fail(reason int, format string, args ...any) *failure {
	return &failure{reason: reason, msg: fmt.Sprintf(format, args...)}
}

// check runs one check to its result.
func (c *Checker) check(ctx context.Context, ch *poll.Check) *poll.Result {
	res := &poll.Result{Check: *ch}
	if ctx.Err() != nil {
		return abandoned(res)
	}
	timeout := ch.Timeout
	if timeout <= 0 {
		timeout = c.opts.DefaultTimeout
	}
	out, f := c.run(ctx, ch, timeout)
	res.Clock = time.Now()
	switch {
	case f == nil:
		res.Status, res.Value = poll.OK, out
		return res
	case ctx.Err() != nil && f.reason != reasonConfig:
		return abandoned(res)
	case f.local:
		res.Status, res.Error = poll.LocalError, f.msg
		c.throttle.Warn("local", "SSH check failed for want of a local resource", "item", ch.ItemID, "err", f.msg)
		return res
	}
	c.failures[f.reason].Inc()
	c.throttle.Warn(reasonNames[f.reason], "SSH check not supported", "item", ch.ItemID, "key", ch.Key, "reason", reasonNames[f.reason], "err", f.msg)
	// Every failure makes the item not supported and leaves the
	// interface alone, as in Zabbix 6.0 (recorded from 6.0.14: a refused
	// connection makes the item not supported).
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

// run makes the check: it connects, logs in, runs the command and
// returns its output as the value.
func (c *Checker) run(ctx context.Context, ch *poll.Check, timeout time.Duration) ([]byte, *failure) {
	req, err := parseKey(ch.Key, ch.Addr)
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
	// CR LF from a browser's text area becomes LF, as Zabbix sends it
	// (recorded from 6.0.14).
	command = strings.ReplaceAll(command, "\r\n", "\n")
	cfg := &gossh.ClientConfig{
		User:              login.Username,
		HostKeyCallback:   c.hostKey,
		HostKeyAlgorithms: req.algos.hostKeys,
		ClientVersion:     "SSH-2.0-Peregrine",
	}
	cfg.KeyExchanges, cfg.Ciphers, cfg.MACs = req.algos.kex, req.algos.ciphers, req.algos.macs
	switch login.AuthType {
	case catalog.SSHAuthPublicKey:
		signer, f := c.signer(login)
		if f != nil {
			return nil, f
		}
		cfg.Auth = []gossh.AuthMethod{gossh.PublicKeys(signer)}
	default:
		pw := login.Password
		cfg.Auth = []gossh.AuthMethod{
			gossh.Password(pw),
			// Servers with PAM ask for the password this way; one prompt
			// gets it, as Zabbix answers.
			gossh.KeyboardInteractive(func(_, _ string, questions []string, _ []bool) ([]string, error) {
				if len(questions) != 1 {
					return make([]string, len(questions)), nil
				}
				return []string{pw}, nil
			}),
		}
	}

	deadline := time.Now().Add(timeout)
	// A library error caused by the deadline (an i/o timeout deep in
	// the handshake, a channel closed under a read) is a timeout: one
	// per check that ran out of time, counted as such.
	timedOut := func() bool { return !time.Now().Before(deadline) }
	conn, sc, chans, reqs, f := c.connect(ctx, req.addr, cfg, deadline, timeout, login.AuthType)
	var keyErr *knownhosts.KeyError
	if f != nil && errors.As(f.err, &keyErr) && len(keyErr.Want) > 0 && cfg.HostKeyAlgorithms == nil && !timedOut() {
		// known_hosts lists the host with keys of other types than the
		// one the server showed first: ask for those (a server has
		// several host keys; the library's preference need not match the
		// file's).
		cfg.HostKeyAlgorithms = hostKeyAlgorithms(keyErr.Want)
		conn, sc, chans, reqs, f = c.connect(ctx, req.addr, cfg, deadline, timeout, login.AuthType)
	}
	if f != nil {
		return nil, f
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if ctx.Err() != nil {
		return nil, fail(reasonChannel, "check abandoned")
	}
	client := gossh.NewClient(sc, chans, reqs)
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		if timedOut() {
			return nil, fail(reasonTimeout, "Cannot establish generic session channel: timed out after %s", timeout)
		}
		return nil, fail(reasonChannel, "Cannot establish generic session channel: %v", err)
	}
	defer sess.Close()
	out := &limitedBuffer{max: c.opts.MaxOutput, onFull: func() { conn.Close() }}
	sess.Stdout = out // stderr is discarded, as Zabbix reads stdout only
	err = sess.Run(command)
	if out.full {
		return nil, fail(reasonTooLarge, "Command output exceeded limit of %d KB", c.opts.MaxOutput>>10)
	}
	var exitErr *gossh.ExitError
	var missing *gossh.ExitMissingError
	switch {
	case err == nil || errors.As(err, &exitErr):
		// The command ended and said how: its exit status is ignored,
		// as Zabbix ignores it.
	case ctx.Err() != nil:
		return nil, fail(reasonChannel, "check abandoned")
	case timedOut():
		// Recorded from 6.0.14: a command that never ends is "Cannot
		// read data from SSH server".
		return nil, fail(reasonTimeout, "Cannot read data from SSH server: timed out after %s", timeout)
	case errors.As(err, &missing):
		// The channel closed without an exit status: what came is the
		// output, as Zabbix reads to the end of the channel. (A
		// connection cut by the deadline or ctx ends the same way, so
		// those are told apart above.)
	default:
		return nil, fail(reasonChannel, "Cannot read data from SSH server: %v", err)
	}
	return value(out.b.Bytes(), req.encoding), nil
}

// connect dials addr and makes the SSH handshake and login, all within
// deadline (which stays set on the connection for what follows); ctx
// ending moves the deadline to now.
func (c *Checker) connect(ctx context.Context, addr string, cfg *gossh.ClientConfig, deadline time.Time, timeout time.Duration, authType uint8) (
	net.Conn, gossh.Conn, <-chan gossh.NewChannel, <-chan *gossh.Request, *failure) {
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	conn, err := c.dial(dctx, "tcp", addr)
	if err != nil {
		if isLocal(err) {
			return nil, nil, nil, nil, &failure{reason: reasonConnect, msg: fmt.Sprintf("Cannot connect to SSH server %s: %v", addr, err), local: true}
		}
		if dctx.Err() != nil && ctx.Err() == nil {
			return nil, nil, nil, nil, fail(reasonTimeout, "Cannot connect to SSH server: cannot connect to %s: timed out after %s", addr, timeout)
		}
		return nil, nil, nil, nil, fail(reasonConnect, "Cannot connect to SSH server: cannot connect to %s: %v", addr, unwrapOp(err))
	}
	// One deadline for the whole exchange; ctx ending (the server
	// stopping) moves it to now, which ends every read and write.
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	sc, chans, reqs, err := gossh.NewClientConn(conn, addr, cfg)
	if err != nil {
		conn.Close()
		if !time.Now().Before(deadline) {
			return nil, nil, nil, nil, fail(reasonTimeout, "Cannot establish SSH session: timed out after %s", timeout)
		}
		f := handshakeFailure(err, authType)
		f.err = err
		return nil, nil, nil, nil, f
	}
	return conn, sc, chans, reqs, nil
}

// hostKeyAlgorithms are the host key algorithms that show keys of the
// types of want.
func hostKeyAlgorithms(want []knownhosts.KnownKey) []string {
	var out []string
	for _, k := range want {
		var algos []string
		switch t := k.Key.Type(); t {
		case gossh.KeyAlgoRSA:
			algos = []string{gossh.KeyAlgoRSASHA512, gossh.KeyAlgoRSASHA256, gossh.KeyAlgoRSA}
		default:
			algos = []string{t}
		}
		for _, a := range algos {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// value is a command's output as the item's value: converted from the
// key's encoding to UTF-8, white space trimmed at its end (recorded from
// 6.0.14: "  a b  \n\n\t" is "  a b"), invalid UTF-8 as '?'. It does not
// share out's memory: the value belongs to the scheduler.
func value(out []byte, encoding string) []byte {
	v := charset.ToUTF8(out, encoding)
	v = bytes.TrimRight(v, " \t\r\n\v\f")
	return bytes.Clone(v)
}

// handshakeFailure words a failed handshake: a refused login says which
// method failed, as Zabbix does (recorded from 6.0.14: "Password
// authentication failed: ..."); anything else is the session failing.
func handshakeFailure(err error, authType uint8) *failure {
	msg := err.Error()
	if i := strings.LastIndex(msg, "attempted methods"); i >= 0 && strings.Contains(msg, "unable to authenticate") {
		tried := msg[i:]
		switch {
		case authType == catalog.SSHAuthPublicKey && strings.Contains(tried, "publickey"):
			return fail(reasonAuth, "Public key authentication failed: the server refused the key")
		case authType == catalog.SSHAuthPublicKey:
			return fail(reasonAuth, "Unsupported authentication method: the server does not take public keys")
		case strings.Contains(tried, "password"):
			return fail(reasonAuth, "Password authentication failed: wrong user name or password")
		case strings.Contains(tried, "keyboard-interactive"):
			return fail(reasonAuth, "Keyboard-interactive authentication failed: wrong user name or password")
		}
		return fail(reasonAuth, "Unsupported authentication method: the server takes neither password nor keyboard-interactive")
	}
	return fail(reasonHandshake, "Cannot establish SSH session: %s", strings.TrimPrefix(msg, "ssh: handshake failed: "))
}

// isLocal reports whether a connect error is this server's (out of
// descriptors, memory or local ports) rather than the target's.
func isLocal(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.EADDRNOTAVAIL)
}

// unwrapOp drops net.OpError's "dial tcp ...:" prefix, which the message
// already says.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// limitedBuffer keeps up to max bytes; the first write beyond calls
// onFull (which closes the connection: a flood costs max bytes, not
// more) and fails.
type limitedBuffer struct {
	b      bytes.Buffer
	max    int
	full   bool
	onFull func()
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if l.full {
		return 0, errOutputFull
	}
	if l.b.Len()+len(p) > l.max {
		l.full = true
		l.onFull()
		return 0, errOutputFull
	}
	return l.b.Write(p)
}

var errOutputFull = errors.New("output limit reached")

// keyCache keeps parsed private keys by file, so that a key is read and
// parsed (an RSA key costs milliseconds) again only when its files
// change or its passphrase does. Bounded: it is cleared when it holds
// maxKeys.
type keyCache struct {
	mu sync.Mutex
	m  map[string]*cachedKey
}

const maxKeys = 1024

type cachedKey struct {
	pubMod, privMod time.Time
	pubSize         int64
	privSize        int64
	passphrase      string
	signer          gossh.Signer
}

// signer returns the signer of a public-key login: its private key,
// decrypted with the item's password if it has a passphrase, checked
// against its public key file (a certificate there is presented as
// such).
func (c *Checker) signer(l *catalog.LoginItem) (gossh.Signer, *failure) {
	if c.opts.KeyDir == "" {
		return nil, fail(reasonConfig, "Public key authentication needs poll.ssh_key_location (Zabbix's SSHKeyLocation), which is not set.")
	}
	pubPath, privPath, f := keyPaths(c.opts.KeyDir, l)
	if f != nil {
		return nil, f
	}
	pubInfo, err := os.Stat(pubPath)
	if err != nil || !pubInfo.Mode().IsRegular() {
		return nil, fail(reasonConfig, "Cannot access public key file %s", pubPath)
	}
	privInfo, err := os.Stat(privPath)
	if err != nil || !privInfo.Mode().IsRegular() {
		return nil, fail(reasonConfig, "Cannot access private key file %s", privPath)
	}
	cacheKey := pubPath + "\x00" + privPath
	c.keys.mu.Lock()
	if k := c.keys.m[cacheKey]; k != nil && k.pubMod.Equal(pubInfo.ModTime()) && k.privMod.Equal(privInfo.ModTime()) &&
		k.pubSize == pubInfo.Size() && k.privSize == privInfo.Size() && k.passphrase == l.Password {
		c.keys.mu.Unlock()
		return k.signer, nil
	}
	c.keys.mu.Unlock()
	signer, f := loadSigner(pubPath, privPath, l.Password)
	if f != nil {
		return nil, f
	}
	c.keys.mu.Lock()
	if c.keys.m == nil || len(c.keys.m) >= maxKeys {
		c.keys.m = map[string]*cachedKey{}
	}
	c.keys.m[cacheKey] = &cachedKey{pubMod: pubInfo.ModTime(), privMod: privInfo.ModTime(), pubSize: pubInfo.Size(),
		privSize: privInfo.Size(), passphrase: l.Password, signer: signer}
	c.keys.mu.Unlock()
	return signer, nil
}

// keyPaths joins the login's key file names to the key directory,
// refusing names that would leave it.
func keyPaths(dir string, l *catalog.LoginItem) (pub, priv string, f *failure) {
	join := func(field, name string) (string, *failure) {
		if name == "" {
			return "", fail(reasonConfig, "Public key authentication needs the item's %s: a file name in poll.ssh_key_location.", field)
		}
		if !isLocalName(name) {
			return "", fail(reasonConfig, "The item's %s %q must name a file inside poll.ssh_key_location.", field, name)
		}
		return dir + string(os.PathSeparator) + name, nil
	}
	if pub, f = join("publickey", l.PublicKey); f != nil {
		return "", "", f
	}
	priv, f = join("privatekey", l.PrivateKey)
	return pub, priv, f
}

// maxKeyFile bounds what is read of a key file.
const maxKeyFile = 64 << 10

func readKeyFile(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxKeyFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("larger than %d bytes: not a key file", maxKeyFile)
	}
	return b, nil
}

// loadSigner reads and parses a key pair. The errors name the files,
// never the passphrase.
func loadSigner(pubPath, privPath, passphrase string) (gossh.Signer, *failure) {
	privPEM, err := readKeyFile(privPath)
	if err != nil {
		return nil, fail(reasonConfig, "Cannot read private key file %s: %v", privPath, err)
	}
	signer, err := gossh.ParsePrivateKey(privPEM)
	var missing *gossh.PassphraseMissingError
	if errors.As(err, &missing) {
		if passphrase == "" {
			return nil, fail(reasonConfig, "Private key file %s is encrypted: set the item's password to its passphrase.", privPath)
		}
		signer, err = gossh.ParsePrivateKeyWithPassphrase(privPEM, []byte(passphrase))
		if err != nil {
			return nil, fail(reasonConfig, "Cannot decrypt private key file %s with the item's password (its passphrase).", privPath)
		}
	} else if err != nil {
		return nil, fail(reasonConfig, "Cannot parse private key file %s: %v", privPath, err)
	}
	pubText, err := readKeyFile(pubPath)
	if err != nil {
		return nil, fail(reasonConfig, "Cannot read public key file %s: %v", pubPath, err)
	}
	pub, _, _, _, err := gossh.ParseAuthorizedKey(pubText)
	if err != nil {
		return nil, fail(reasonConfig, "Cannot parse public key file %s: %v", pubPath, err)
	}
	if cert, ok := pub.(*gossh.Certificate); ok {
		if !bytes.Equal(cert.Key.Marshal(), signer.PublicKey().Marshal()) {
			return nil, fail(reasonConfig, "The certificate in %s is not for the private key in %s.", pubPath, privPath)
		}
		cs, err := gossh.NewCertSigner(cert, signer)
		if err != nil {
			return nil, fail(reasonConfig, "Cannot use the certificate in %s: %v", pubPath, err)
		}
		return cs, nil
	}
	if !bytes.Equal(pub.Marshal(), signer.PublicKey().Marshal()) {
		return nil, fail(reasonConfig, "The public key in %s is not the private key's in %s.", pubPath, privPath)
	}
	return signer, nil
}

// isLocalName reports whether a key file name stays inside the key
// directory.
func isLocalName(name string) bool {
	if strings.HasPrefix(name, "/") {
		return false
	}
	for part := range strings.SplitSeq(name, "/") {
		if part == ".." {
			return false
		}
	}
	return true
}
