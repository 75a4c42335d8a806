package telnet

import (
	"bufio"
	"errors"
	"io"
	"net"
	"time"
)

// Telnet commands and the option this client agrees to (RFC 854, 858).
const (
	cmdSE   = 240
	cmdSB   = 250
	cmdWILL = 251
	cmdWONT = 252
	cmdDO   = 253
	cmdDONT = 254
	cmdIAC  = 255

	optSGA = 3 // suppress go-ahead: the one option enabled, as Zabbix does
)

// maxReplies bounds the negotiation answers sent in one check: a server
// that asks without end gets this many, then silence.
const maxReplies = 1024

// conn is one Telnet connection: it reads the data stream, answering
// option negotiation as it goes. Every option is refused but suppress
// go-ahead, which is agreed both ways (as Zabbix agrees it), and an
// answer is sent only when it changes the option's state (RFC 854's
// rule against negotiation loops; RFC 1143 in its simplest form, as
// this side never asks first). Subnegotiations are skipped. The parser
// keeps its state between reads, so a command split across reads or
// stages is handled.
type conn struct {
	c   net.Conn
	r   *bufio.Reader
	max int // bound of one stage's data
	// state of the stream parser
	st    uint8
	verb  byte
	us    [256]bool // options enabled on this side (WILL sent)
	him   [256]bool // options enabled on the server's side (DO sent)
	sbLen int       // bytes of the current subnegotiation skipped
	sent  int       // negotiation answers sent
	reply []byte
	wrErr error
}

const (
	stData = iota
	stIAC
	stVerb // IAC WILL/WONT/DO/DONT: the option byte next
	stSB   // inside a subnegotiation
	stSBIAC
)

// errTooLarge: a stage's data passed the bound.
var errTooLarge = errors.New("output too large")

func newConn(c net.Conn, max int) *conn {
	return &conn{c: c, r: bufio.NewReaderSize(c, 4096), max: max}
}

// readUntil appends the data bytes read to buf until done reports true
// or the stream ends. done is asked whenever what has arrived is
// consumed: Zabbix reads until the server pauses (0.1 s without data)
// and then looks at the end of what it has, so a prompt ("$ ") is
// judged whole, never cut after its first byte. Peregrine looks at the
// end of every segment received; with settle > 0 it then waits that
// long for more before believing it (the command stage: a command of
// two lines is answered with two prompts, and Zabbix returns both, the
// second shell's answer arriving within its pause), and goes on reading
// if more comes. deadline is the check's, restored after the wait.
func (t *conn) readUntil(buf []byte, done func([]byte) bool, settle time.Duration, deadline time.Time) ([]byte, error) {
	finished := func() bool {
		if !done(buf) {
			return false
		}
		if settle <= 0 {
			return true
		}
		wait := time.Now().Add(settle)
		if !deadline.IsZero() && deadline.Before(wait) {
			wait = deadline
		}
		_ = t.c.SetReadDeadline(wait)
		_, err := t.r.Peek(1)
		_ = t.c.SetReadDeadline(deadline)
		return err != nil // quiet for the pause (or the stream ended): done
	}
	for {
		b, err := t.r.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return buf, err
		}
		d, isData := t.feed(b)
		if t.wrErr != nil {
			return buf, t.wrErr
		}
		if !isData {
			if t.sbLen > t.max {
				return buf, errTooLarge
			}
			// A segment may end with a command after the prompt.
			if t.r.Buffered() == 0 && len(buf) > 0 && finished() {
				return buf, nil
			}
			continue
		}
		if len(buf) >= t.max {
			return buf, errTooLarge
		}
		buf = append(buf, d)
		if t.r.Buffered() == 0 && finished() {
			return buf, nil
		}
	}
}

// feed runs one byte through the parser and reports the data byte it
// makes, if any.
func (t *conn) feed(b byte) (byte, bool) {
	switch t.st {
	case stData:
		if b == cmdIAC {
			t.st = stIAC
			return 0, false
		}
		return b, true
	case stIAC:
		switch b {
		case cmdIAC: // an escaped 255 is data
			t.st = stData
			return b, true
		case cmdWILL, cmdWONT, cmdDO, cmdDONT:
			t.st, t.verb = stVerb, b
		case cmdSB:
			t.st, t.sbLen = stSB, 0
		default: // NOP, GA, DM, AYT... nothing to do
			t.st = stData
		}
		return 0, false
	case stVerb:
		t.st = stData
		t.negotiate(t.verb, b)
		return 0, false
	case stSB:
		t.sbLen++
		if b == cmdIAC {
			t.st = stSBIAC
		}
		return 0, false
	case stSBIAC:
		t.sbLen++
		if b == cmdSE {
			t.st = stData
		} else {
			t.st = stSB // IAC IAC inside: data of the subnegotiation
		}
		return 0, false
	}
	t.st = stData
	return 0, false
}

// negotiate answers one WILL, WONT, DO or DONT.
func (t *conn) negotiate(verb, opt byte) {
	switch verb {
	case cmdWILL: // the server will: agree to SGA only
		switch {
		case t.him[opt]:
		case opt == optSGA:
			t.him[opt] = true
			t.answer(cmdDO, opt)
		default:
			t.answer(cmdDONT, opt)
		}
	case cmdWONT:
		if t.him[opt] {
			t.him[opt] = false
			t.answer(cmdDONT, opt)
		}
	case cmdDO: // the server asks this side to: SGA only
		switch {
		case t.us[opt]:
		case opt == optSGA:
			t.us[opt] = true
			t.answer(cmdWILL, opt)
		default:
			t.answer(cmdWONT, opt)
		}
	case cmdDONT:
		if t.us[opt] {
			t.us[opt] = false
			t.answer(cmdWONT, opt)
		}
	}
}

func (t *conn) answer(verb, opt byte) {
	if t.sent >= maxReplies {
		return
	}
	t.sent++
	t.reply = append(t.reply[:0], cmdIAC, verb, opt)
	if _, err := t.c.Write(t.reply); err != nil {
		t.wrErr = err
	}
}

// write sends data, doubling IAC bytes as the protocol wants.
func (t *conn) write(p []byte) error {
	out := make([]byte, 0, len(p)+2)
	for _, b := range p {
		out = append(out, b)
		if b == cmdIAC {
			out = append(out, cmdIAC)
		}
	}
	_, err := t.c.Write(out)
	return err
}
