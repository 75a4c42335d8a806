package clickhouse

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// ServerError is an error ClickHouse answered with (an HTTP status other
// than 200 and its "Code: N, e.displayText() = ..." body). Code is
// ClickHouse's error code, 0 when the body did not carry one.
type ServerError struct {
	URL    string // the endpoint, without credentials
	Status int
	Code   int
	Msg    string
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("clickhouse %s: HTTP %d, code %d: %s", e.URL, e.Status, e.Code, e.Msg)
}

// Error codes Peregrine treats specially; the numbers are ClickHouse's
// (ErrorCodes.cpp) and have been stable since the 1.1 releases.
const (
	codeReadonly        = 164 // READONLY: the user or table is read-only
	codeQuotaExceeded   = 201 // QUOTA_EXPIRED: a quota interval is used up
	codeNotEnoughSpace  = 243 // NOT_ENOUGH_SPACE
	codeTooManyParts    = 252 // TOO_MANY_PARTS: inserts faster than merges
	codeUnknownTable    = 60
	codeUnknownDatabase = 81
)

// Kind names the class of a shipping failure for the error metric and
// the log: "unreachable" (network, the server is down), "readonly",
// "quota", "disk_full", "too_many_parts" or "server" (any other answer).
func Kind(err error) string {
	var se *ServerError
	if !errors.As(err, &se) {
		return "unreachable"
	}
	switch se.Code {
	case codeReadonly:
		return "readonly"
	case codeQuotaExceeded:
		return "quota"
	case codeNotEnoughSpace:
		return "disk_full"
	case codeTooManyParts:
		return "too_many_parts"
	}
	return "server"
}

var codeRE = regexp.MustCompile(`^Code: (\d+)`)

// client speaks ClickHouse's HTTP interface to one or more equivalent
// endpoints. A request that cannot reach an endpoint (connection refused,
// reset, timeout) is retried once on each other endpoint; an answer from
// a server, even an error, is final, since another replica would give
// the same answer.
type client struct {
	endpoints []*url.URL // credentials removed
	user      string
	password  string // never logged: errors name endpoints only
	http      *http.Client
	next      atomic.Uint32
}

// clientOptions are the client's settings (a subset of Options).
type clientOptions struct {
	URLs     []string
	User     string
	Password string
	TLS      *tls.Config
	Timeout  time.Duration
}

func newClient(o clientOptions) (*client, error) {
	if len(o.URLs) == 0 {
		return nil, errors.New("clickhouse: no URL configured; set history.clickhouse.urls")
	}
	c := &client{user: o.User, password: o.Password}
	for _, s := range o.URLs {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("clickhouse: URL %q is not an http:// or https:// address of a ClickHouse HTTP port", redact(s))
		}
		if u.User != nil { // credentials in the URL: take them, never log them
			if c.user == "" {
				c.user = u.User.Username()
			}
			if p, ok := u.User.Password(); ok && c.password == "" {
				c.password = p
			}
			u.User = nil
		}
		u.Path = "/"
		u.RawQuery = ""
		c.endpoints = append(c.endpoints, u)
	}
	tr := &http.Transport{
		Proxy:               nil, // loopback and LAN servers: never through a proxy
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     o.TLS,
		MaxIdleConnsPerHost: 16,
		// ClickHouse's keep_alive_timeout defaults to 3 s (10 s in the
		// test config); idling shorter avoids reusing a connection the
		// server is closing.
		IdleConnTimeout:    2 * time.Second,
		DisableCompression: true, // RowBinary over loopback: gzip costs more CPU than it saves
	}
	c.http = &http.Client{Transport: tr, Timeout: o.Timeout}
	return c, nil
}

// redact removes a password from a URL for messages.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = url.User(u.User.Username())
	return u.String()
}

// do sends one request with the SQL in the URL's query parameter and body
// as the request body (INSERT data), or the SQL as the body when body is
// nil. Statements name tables with their database, so no request depends
// on a session default.
// On success the caller owns the response body.
func (c *client) do(ctx context.Context, sql string, body []byte, settings map[string]string) (io.ReadCloser, error) {
	n := len(c.endpoints)
	start := int(c.next.Add(1)) % n
	var lastErr error
	for i := 0; i < n; i++ {
		ep := c.endpoints[(start+i)%n]
		rc, err := c.doOne(ctx, ep, sql, body, settings)
		if err == nil {
			return rc, nil
		}
		lastErr = err
		var se *ServerError
		if errors.As(err, &se) || ctx.Err() != nil {
			return nil, err
		}
	}
	return nil, lastErr
}

func (c *client) doOne(ctx context.Context, ep *url.URL, sql string, body []byte, settings map[string]string) (io.ReadCloser, error) {
	q := url.Values{}
	for k, v := range settings {
		q.Set(k, v)
	}
	var rd io.Reader
	if body != nil {
		q.Set("query", sql)
		rd = bytes.NewReader(body)
	} else {
		rd = strings.NewReader(sql)
	}
	u := *ep
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), rd)
	if err != nil {
		return nil, err
	}
	if c.user != "" || c.password != "" {
		// Basic auth works on every release (the X-ClickHouse-* headers
		// do not on the oldest).
		req.SetBasicAuth(c.user, c.password)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("clickhouse %s: %w", ep.Host, stripURL(err))
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		se := &ServerError{URL: ep.String(), Status: resp.StatusCode, Msg: strings.TrimSpace(string(msg))}
		if m := codeRE.FindSubmatch(msg); m != nil {
			se.Code, _ = strconv.Atoi(string(m[1]))
		}
		return nil, se
	}
	return resp.Body, nil
}

// stripURL drops the request URL (which holds the SQL) from a transport
// error; the endpoint is named by the caller.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// exec runs a statement and discards its result.
func (c *client) exec(ctx context.Context, sql string) error {
	rc, err := c.do(ctx, sql, nil, nil)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, rc)
	rc.Close()
	return err
}

// queryString runs a query and returns its whole text result, trimmed;
// for small answers (version(), counts).
func (c *client) queryString(ctx context.Context, sql string) (string, error) {
	rc, err := c.do(ctx, sql, nil, nil)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	return strings.TrimSpace(string(b)), err
}

// insert sends RowBinary rows to table.
func (c *client) insert(ctx context.Context, table, columns string, rows []byte, settings map[string]string) error {
	rc, err := c.do(ctx, "INSERT INTO "+table+" ("+columns+") FORMAT RowBinary", rows, settings)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, rc)
	rc.Close()
	return err
}
