package alert

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/smtp"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// EmailSender delivers email media types over SMTP with the standard
// library: plain, STARTTLS or SSL/TLS (smtp_security), AUTH PLAIN or
// LOGIN when smtp_authentication is 1 (the first the server offers),
// one message to every address of the alert's sendto. The message is
// UTF-8 (base64 body, RFC 2047 subject) with Date and Message-ID.
type EmailSender struct {
	Now func() time.Time
	// RootCAs verifies the server (tests); nil: the system's.
	TLSConfig *tls.Config
}

// Send implements Sender.
func (s *EmailSender) Send(ctx context.Context, mt *catalog.MediaType, a *Alert) error {
	port := mt.SMTPPort
	if port == 0 {
		port = 25
	}
	addr := net.JoinHostPort(mt.SMTPServer, strconv.Itoa(port))
	tc := &tls.Config{ServerName: mt.SMTPServer, MinVersion: tls.VersionTLS12}
	if s.TLSConfig != nil {
		tc = s.TLSConfig.Clone()
		tc.ServerName = mt.SMTPServer
	}
	// Zabbix's smtp_verify_peer/host off: no certificate check.
	tc.InsecureSkipVerify = mt.SMTPVerifyPeer == 0
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot connect to SMTP server %s: %w", addr, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if mt.SMTPSecurity == catalog.SMTPSSL {
		tconn := tls.Client(conn, tc)
		if err := tconn.HandshakeContext(ctx); err != nil {
			return fmt.Errorf("cannot start TLS with SMTP server %s: %w", addr, err)
		}
		conn = tconn
	}
	c, err := smtp.NewClient(conn, mt.SMTPServer)
	if err != nil {
		return fmt.Errorf("SMTP server %s: %w", addr, err)
	}
	defer c.Close()
	helo := mt.SMTPHelo
	if helo == "" {
		helo = "localhost"
	}
	if err := c.Hello(helo); err != nil {
		return fmt.Errorf("SMTP server %s refused HELO %s: %w", addr, helo, err)
	}
	if mt.SMTPSecurity == catalog.SMTPStartTLS {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return fmt.Errorf("SMTP server %s does not offer STARTTLS", addr)
		}
		if err := c.StartTLS(tc); err != nil {
			return fmt.Errorf("cannot start TLS with SMTP server %s: %w", addr, err)
		}
	}
	if mt.SMTPAuth == 1 {
		ok, mechs := c.Extension("AUTH")
		if !ok {
			return fmt.Errorf("SMTP server %s does not offer authentication", addr)
		}
		var auth smtp.Auth
		switch {
		case strings.Contains(mechs, "PLAIN"):
			auth = &plainAuth{user: mt.Username, pass: mt.Passwd}
		case strings.Contains(mechs, "LOGIN"):
			auth = &loginAuth{user: mt.Username, pass: mt.Passwd}
		default:
			return fmt.Errorf("SMTP server %s offers no AUTH PLAIN or LOGIN (offers %s)", addr, mechs)
		}
		if err := c.Auth(auth); err != nil {
			return fmt.Errorf("SMTP server %s refused the login of %q: %w", addr, mt.Username, err)
		}
	}
	from := mt.SMTPEmail
	if err := c.Mail(addrOnly(from)); err != nil {
		return fmt.Errorf("SMTP server %s refused sender %s: %w", addr, from, err)
	}
	var to []string
	for _, r := range strings.Split(a.SendTo, ",") {
		if r = strings.TrimSpace(r); r != "" {
			to = append(to, r)
		}
	}
	if len(to) == 0 {
		return errors.New("no recipient address (the user's media sendto is empty)")
	}
	for _, r := range to {
		if err := c.Rcpt(r); err != nil {
			return fmt.Errorf("SMTP server %s refused recipient %s: %w", addr, r, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("SMTP server %s refused DATA: %w", addr, err)
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	if _, err := w.Write(buildMessage(from, to, a.Subject, a.Message, mt.ContentType == 1, now())); err != nil {
		return fmt.Errorf("cannot send the message to SMTP server %s: %w", addr, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("SMTP server %s refused the message: %w", addr, err)
	}
	_ = c.Quit()
	return nil
}

// addrOnly takes the address out of "Name <a@b>".
func addrOnly(s string) string {
	if i := strings.LastIndexByte(s, '<'); i >= 0 {
		if j := strings.IndexByte(s[i:], '>'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return strings.TrimSpace(s)
}

// buildMessage formats an RFC 5322 message with a UTF-8 body.
func buildMessage(from string, to []string, subject, body string, html bool, now time.Time) []byte {
	var rnd [12]byte
	_, _ = rand.Read(rnd[:])
	domain := "peregrine"
	if _, d, ok := strings.Cut(addrOnly(from), "@"); ok && d != "" {
		domain = d
	}
	ctype := "text/plain"
	if html {
		ctype = "text/html"
	}
	var b strings.Builder
	b.WriteString("From: " + from + "\r\n")
	b.WriteString("To: " + strings.Join(to, ", ") + "\r\n")
	b.WriteString("Subject: " + mime.BEncoding.Encode("UTF-8", subject) + "\r\n")
	b.WriteString("Date: " + now.Format(time.RFC1123Z) + "\r\n")
	b.WriteString("Message-ID: <" + strconv.FormatInt(now.UnixNano(), 36) + "." + hex.EncodeToString(rnd[:]) + "@" + domain + ">\r\n")
	b.WriteString("MIME-Version: 1.0\r\n")
	b.WriteString("Content-Type: " + ctype + "; charset=\"UTF-8\"\r\n")
	b.WriteString("Content-Transfer-Encoding: base64\r\n\r\n")
	enc := base64.StdEncoding.EncodeToString([]byte(body))
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	b.WriteString(enc + "\r\n")
	return []byte(b.String())
}

// plainAuth is AUTH PLAIN. net/smtp's PlainAuth refuses unencrypted
// connections except to localhost; Zabbix lets the operator choose
// (smtp_security none with a password), and so does Peregrine.
type plainAuth struct{ user, pass string }

func (a *plainAuth) Start(*smtp.ServerInfo) (string, []byte, error) {
	return "PLAIN", []byte("\x00" + a.user + "\x00" + a.pass), nil
}

func (a *plainAuth) Next(_ []byte, more bool) ([]byte, error) {
	if more {
		return nil, errors.New("unexpected server challenge during AUTH PLAIN")
	}
	return nil, nil
}

// loginAuth is AUTH LOGIN: the user name and password in answer to the
// server's two prompts.
type loginAuth struct{ user, pass string }

func (a *loginAuth) Start(*smtp.ServerInfo) (string, []byte, error) { return "LOGIN", nil, nil }

func (a *loginAuth) Next(from []byte, more bool) ([]byte, error) {
	if !more {
		return nil, nil
	}
	switch strings.ToLower(strings.TrimSpace(string(from))) {
	case "username:":
		return []byte(a.user), nil
	case "password:":
		return []byte(a.pass), nil
	}
	return nil, fmt.Errorf("unexpected AUTH LOGIN prompt %q", from)
}
