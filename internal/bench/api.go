package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// APIClient speaks the Zabbix JSON-RPC API at one URL. It authenticates
// with the "auth" member, which both Zabbix 6.0 and Peregrine accept. It
// is safe for concurrent use after Login.
type APIClient struct {
	URL   string
	HTTP  *http.Client
	token string
	id    atomic.Int64
}

// APIError is an error object returned by the server.
type APIError struct {
	Method  string
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data"`
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s: API error %d: %s %s", e.Method, e.Code, e.Message, e.Data)
}

// NewAPIClient returns a client with a long overall timeout: history
// reads of millions of rows from Zabbix take seconds to minutes.
func NewAPIClient(url string, timeout time.Duration) *APIClient {
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	return &APIClient{URL: url, HTTP: &http.Client{Timeout: timeout, Transport: tr}}
}

// Login gets a session token with user.login ("username", the 6.0 name).
func (c *APIClient) Login(ctx context.Context, user, password string) error {
	var tok string
	if err := c.call(ctx, "user.login", map[string]string{"username": user, "password": password}, false, &tok); err != nil {
		return err
	}
	c.token = tok
	return nil
}

// Call runs one authenticated method and decodes its result into out
// (nil: discard).
func (c *APIClient) Call(ctx context.Context, method string, params, out any) error {
	return c.call(ctx, method, params, true, out)
}

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
	Auth    string `json:"auth,omitempty"`
	ID      int64  `json:"id"`
}

func (c *APIClient) body(method string, params any, auth bool) ([]byte, error) {
	req := rpcRequest{JSONRPC: "2.0", Method: method, Params: params, ID: c.id.Add(1)}
	if auth {
		req.Auth = c.token
	}
	return json.Marshal(req)
}

func (c *APIClient) call(ctx context.Context, method string, params any, auth bool, out any) error {
	body, err := c.body(method, params, auth)
	if err != nil {
		return err
	}
	raw, err := c.post(ctx, body, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *APIError       `json:"error"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return fmt.Errorf("%s: cannot decode the response (%.200q): %w", method, raw, err)
	}
	if resp.Error != nil {
		resp.Error.Method = method
		return resp.Error
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Result, out); err != nil {
		return fmt.Errorf("%s: cannot decode the result (%.200q): %w", method, resp.Result, err)
	}
	return nil
}

// post sends body; with sink it streams the response into sink and
// returns nil bytes, otherwise it returns the whole response.
func (c *APIClient) post(ctx context.Context, body []byte, sink io.Writer) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json-rpc")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("HTTP %s: %.200q", resp.Status, b)
	}
	if sink != nil {
		_, err = io.Copy(sink, resp.Body)
		return nil, err
	}
	return io.ReadAll(resp.Body)
}

// Version is apiinfo.version.
func (c *APIClient) Version(ctx context.Context) (string, error) {
	var v string
	err := c.call(ctx, "apiinfo.version", struct{}{}, false, &v)
	return v, err
}

// flexCount decodes a count that Zabbix returns as a string and others
// may return as a number.
type flexCount int64

func (f *flexCount) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not a count: %s", b)
	}
	*f = flexCount(n)
	return nil
}

// HistoryCount counts the float history rows of hosts with clock in
// [from, till] with history.get countOutput: the same call on Zabbix and
// on Peregrine, so "readable" means the same on both.
func (c *APIClient) HistoryCount(ctx context.Context, hostids []string, from, till int64) (int64, error) {
	return c.historyCount(ctx, "hostids", hostids, from, till)
}

// HistoryCountItems is HistoryCount by item ids.
func (c *APIClient) HistoryCountItems(ctx context.Context, itemids []string, from, till int64) (int64, error) {
	return c.historyCount(ctx, "itemids", itemids, from, till)
}

func (c *APIClient) historyCount(ctx context.Context, by string, ids []string, from, till int64) (int64, error) {
	var n flexCount
	err := c.Call(ctx, "history.get", map[string]any{
		by: ids, "history": 0, "countOutput": true,
		"time_from": from, "time_till": till,
	}, &n)
	return int64(n), err
}

// rowCounter counts history rows in a streamed history.get response by
// the occurrences of `"clock":`, without decoding: the reader's CPU
// stays small next to the server's.
type rowCounter struct {
	rows    int64
	bytes   int64
	carry   []byte
	errSeen bool
}

var clockTok = []byte(`"clock":`)
var errTok = []byte(`"error":`)

func (r *rowCounter) Write(p []byte) (int, error) {
	r.bytes += int64(len(p))
	buf := p
	if len(r.carry) > 0 {
		buf = append(r.carry, p...)
	}
	r.rows += int64(bytes.Count(buf, clockTok))
	if !r.errSeen && r.bytes < 4096 && bytes.Contains(buf, errTok) {
		r.errSeen = true
	}
	// Keep a tail shorter than the token so a token split across writes
	// is counted once, in the next write.
	k := min(len(clockTok)-1, len(buf))
	// The token has no border (no proper prefix equal to a suffix), so a
	// token counted in this write cannot be counted again.
	r.carry = append(r.carry[:0], buf[len(buf)-k:]...)
	return len(p), nil
}

// HistoryRead runs history.get of the newest limit float rows of itemid,
// streaming the response, and returns the rows and bytes received.
func (c *APIClient) HistoryRead(ctx context.Context, itemid string, limit int) (rows, size int64, err error) {
	body, err := c.body("history.get", map[string]any{
		"itemids": []string{itemid}, "history": 0, "output": "extend",
		"sortfield": "clock", "sortorder": "DESC", "limit": limit,
	}, true)
	if err != nil {
		return 0, 0, err
	}
	var rc rowCounter
	if _, err := c.post(ctx, body, &rc); err != nil {
		return rc.rows, rc.bytes, err
	}
	if rc.errSeen && rc.rows == 0 {
		return 0, rc.bytes, errors.New("history.get returned an error object")
	}
	return rc.rows, rc.bytes, nil
}

// HistoryRange runs history.get of the float values of itemids with clock
// in [from, till], ascending, as Grafana's Zabbix data source asks for a
// panel's items, streaming the response; it returns the rows and bytes
// received.
func (c *APIClient) HistoryRange(ctx context.Context, itemids []string, from, till int64) (rows, size int64, err error) {
	body, err := c.body("history.get", map[string]any{
		"itemids": itemids, "history": 0, "output": "extend",
		"time_from": from, "time_till": till, "sortfield": "clock", "sortorder": "ASC",
	}, true)
	if err != nil {
		return 0, 0, err
	}
	var rc rowCounter
	if _, err := c.post(ctx, body, &rc); err != nil {
		return rc.rows, rc.bytes, err
	}
	if rc.errSeen && rc.rows == 0 {
		return 0, rc.bytes, errors.New("history.get returned an error object")
	}
	return rc.rows, rc.bytes, nil
}

// ProblemCount counts the open problems of hosts with problem.get
// countOutput (a string on Zabbix, the cheapest count on both servers).
func (c *APIClient) ProblemCount(ctx context.Context, hostids []string) (int64, error) {
	var n flexCount
	err := c.Call(ctx, "problem.get", map[string]any{"hostids": hostids, "countOutput": true}, &n)
	return int64(n), err
}

// ProblemRead runs problem.get (output extend) of the open problems of
// hosts, newest first, at most limit (0: all), streaming the response,
// and returns the problems received (counted by their "clock" member;
// "r_clock" does not match the token).
func (c *APIClient) ProblemRead(ctx context.Context, hostids []string, limit int) (int64, error) {
	params := map[string]any{"hostids": hostids, "output": "extend", "sortfield": []string{"eventid"}, "sortorder": "DESC"}
	if limit > 0 {
		params["limit"] = limit
	}
	body, err := c.body("problem.get", params, true)
	if err != nil {
		return 0, err
	}
	var rc rowCounter
	if _, err := c.post(ctx, body, &rc); err != nil {
		return rc.rows, fmt.Errorf("problem.get: %w", err)
	}
	if rc.errSeen && rc.rows == 0 {
		return 0, errors.New("problem.get returned an error object")
	}
	return rc.rows, nil
}
