package migrate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// maxAnswer bounds one API answer read into memory: a configuration
// export of a large template or a page of history is a few MB; anything
// bigger is a misconfigured page size, not something to buffer.
const maxAnswer = 256 << 20

// Client calls one Zabbix-compatible JSON-RPC API (a Zabbix 6.0 server's
// or Peregrine's). It is safe for concurrent use.
type Client struct {
	url     string
	auth    string
	session bool // auth is a session of user.login, ended by Close
	http    *http.Client
	id      atomic.Int64
	// Calls counts the requests made, for the report's rates.
	Calls atomic.Int64
}

// APIError is an error the API answered (as opposed to a transport
// failure): its message and data as the server wrote them.
type APIError struct {
	Method  string
	Code    int
	Message string
	Data    string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s: %s %s", e.Method, e.Message, e.Data)
}

// Dial makes a client of the API at url and logs in: with token when it
// is set (an API token, sent as "auth" as 6.0 takes it), else with user
// and password (user.login).
func Dial(ctx context.Context, url, user, password, token string, timeout time.Duration) (*Client, error) {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("API URL %q: want http:// or https:// and the path of api_jsonrpc.php", url)
	}
	c := &Client{url: url, http: &http.Client{Timeout: timeout}}
	if token != "" {
		c.auth = token
		var v string
		if err := c.Call(ctx, "apiinfo.version", map[string]any{}, &v); err != nil {
			return nil, fmt.Errorf("cannot reach the API at %s: %w", url, err)
		}
		return c, nil
	}
	var sess string
	if err := c.Call(ctx, "user.login", map[string]any{"username": user, "password": password}, &sess); err != nil {
		return nil, fmt.Errorf("cannot log in to %s as %q: %w", url, user, err)
	}
	c.auth, c.session = sess, true
	return c, nil
}

// Close ends the session Dial opened with user and password (an API
// token is left as it is).
func (c *Client) Close(ctx context.Context) error {
	if !c.session {
		return nil
	}
	c.session = false
	return c.Call(ctx, "user.logout", []any{}, nil)
}

// Call sends one request and decodes its result into out (nil: dropped).
func (c *Client) Call(ctx context.Context, method string, params any, out any) error {
	req := map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": c.id.Add(1)}
	if c.auth != "" && method != "apiinfo.version" && method != "user.login" {
		req["auth"] = c.auth
	}
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s: cannot encode the request: %w", method, err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/json-rpc")
	c.Calls.Add(1)
	resp, err := c.http.Do(hr)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return fmt.Errorf("%s: cannot read the answer: %w", method, err)
	}
	if len(data) > maxAnswer {
		return fmt.Errorf("%s: the answer is over %d MiB", method, maxAnswer>>20)
	}
	var ans struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    string `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &ans); err != nil {
		return fmt.Errorf("%s: HTTP %d, not a JSON-RPC answer: %.200s", method, resp.StatusCode, data)
	}
	if ans.Error != nil {
		return &APIError{Method: method, Code: ans.Error.Code, Message: ans.Error.Message, Data: ans.Error.Data}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(ans.Result, out); err != nil {
		return fmt.Errorf("%s: unexpected result: %w", method, err)
	}
	return nil
}

// reason is an error as a report line: an API error's data alone.
func reason(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		if ae.Data != "" {
			return ae.Data
		}
		return ae.Message
	}
	return err.Error()
}
