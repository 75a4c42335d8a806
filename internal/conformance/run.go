package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// Target is a server a case runs against.
type Target struct {
	Name string // "zabbix" or "peregrine", for messages
	// API is the JSON-RPC URL; Trapper the trapper's host:port.
	API, Trapper string
	// Admin and AdminPassword log the run's "admin" session in.
	Admin, AdminPassword string
	// Sync waits until the configuration changed so far is in effect
	// and the values sent so far are processed.
	Sync func(ctx context.Context) error
	// Cleanup deletes what a failed earlier recording of c left behind
	// (nil: nothing to do, as on a fresh Peregrine).
	Cleanup func(ctx context.Context, r *Runner, c Case) error
}

// StepAnswer is one step's normalised answer; golden files hold them.
type StepAnswer struct {
	ID     string `json:"id"`
	Method string `json:"method"`
	Answer any    `json:"answer"`
}

// Runner runs cases against one target.
type Runner struct {
	T      Target
	Client *http.Client
	// T0 is the base time of the run's sent values: three hours before
	// the start of the hour the run starts in, so every hour the case
	// sends to is closed (trends are written) and "now" is after them.
	T0 int64
}

// NewRunner returns a Runner for t with T0 set from now.
func NewRunner(t Target, now time.Time) *Runner {
	h := now.Unix() / 3600 * 3600
	return &Runner{T: t, Client: &http.Client{Timeout: 60 * time.Second}, T0: h - 3*3600}
}

// Call makes one JSON-RPC call; auth "" sends none. It returns the
// decoded answer (numbers as json.Number).
func (r *Runner) Call(ctx context.Context, method string, params json.RawMessage, auth string) (any, error) {
	return r.call(ctx, method, params, auth, nil)
}

func (r *Runner) call(ctx context.Context, method string, params json.RawMessage, auth string, rpcid json.RawMessage) (any, error) {
	var id any = 1
	if len(rpcid) > 0 {
		id = rpcid
	}
	req := map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": id}
	if auth != "" {
		req["auth"] = auth
	}
	body, _ := json.Marshal(req)
	return r.post(ctx, method, body)
}

// post sends one request body and decodes the answer.
func (r *Runner) post(ctx context.Context, method string, body []byte) (any, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, r.T.API, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json-rpc")
	resp, err := r.Client.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, err
	}
	var x any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		// Zabbix's PHP API fails some malformed requests with an HTTP
		// error and no JSON at all: that is its answer, recorded as such.
		return map[string]any{"http": map[string]any{"status": json.Number(strconv.Itoa(resp.StatusCode)), "body": string(raw[:min(len(raw), 200)])}}, nil
	}
	return x, nil
}

// result is a call's result, or an error for an error answer.
func (r *Runner) result(ctx context.Context, method string, params any, auth string) (any, error) {
	p, _ := json.Marshal(params)
	x, err := r.Call(ctx, method, p, auth)
	if err != nil {
		return nil, err
	}
	m, _ := x.(map[string]any)
	if e, ok := m["error"]; ok {
		return nil, fmt.Errorf("%s %s: %v", r.T.Name, method, e)
	}
	return m["result"], nil
}

// Login opens a session and returns its token.
func (r *Runner) Login(ctx context.Context, user, password string) (string, error) {
	res, err := r.result(ctx, "user.login", map[string]string{"username": user, "password": password}, "")
	if err != nil {
		return "", err
	}
	s, ok := res.(string)
	if !ok {
		return "", fmt.Errorf("%s user.login: %v", r.T.Name, res)
	}
	return s, nil
}

// Run runs c and returns each step's normalised answer; when a step
// cannot run (an answer it needs could not be bound, a connection
// failed) it returns the answers so far with the error.
func (r *Runner) Run(ctx context.Context, c Case) ([]StepAnswer, error) {
	v := &vars{t0: r.T0, m: map[string]any{"adminpassword": r.T.AdminPassword}, clocks: map[int64]bool{}}
	tok, err := r.Login(ctx, r.T.Admin, r.T.AdminPassword)
	if err != nil {
		return nil, err
	}
	v.m["token:admin"] = tok
	if r.T.Cleanup != nil {
		if err := r.T.Cleanup(ctx, r, c); err != nil {
			return nil, fmt.Errorf("cleanup: %w", err)
		}
	}
	n := newNormaliser(r.T0)
	n.named = v.clocks
	var out []StepAnswer
	for _, s := range c.Steps {
		switch {
		case s.Sync:
			if r.T.Sync != nil {
				if err := r.T.Sync(ctx); err != nil {
					return out, fmt.Errorf("step %s: %w", s.ID, err)
				}
			}
			continue
		case s.Raw != "":
			x, err := r.post(ctx, "raw", []byte(s.Raw))
			if err != nil {
				return out, fmt.Errorf("step %s: %w", s.ID, err)
			}
			// The whole answer, id and jsonrpc included: they are what
			// differs at this layer.
			out = append(out, StepAnswer{ID: s.ID, Method: "raw", Answer: map[string]any{"raw": n.value("", x, true, true)}})
			continue
		case len(s.Send) > 0:
			a, err := r.send(ctx, v, s.Send)
			if err != nil {
				return out, fmt.Errorf("step %s: %w", s.ID, err)
			}
			out = append(out, StepAnswer{ID: s.ID, Method: "sender data", Answer: n.answer("", map[string]any{"result": a}, true)})
			continue
		}
		params, err := v.substitute(s.Params)
		if err != nil {
			return out, fmt.Errorf("step %s: %w", s.ID, err)
		}
		auth := ""
		switch s.As {
		case "", "admin":
			auth = tok
		case "none":
		default:
			t, ok := v.m["token:"+s.As].(string)
			if !ok {
				return out, fmt.Errorf("step %s: no session %q", s.ID, s.As)
			}
			auth = t
		}
		x, err := r.call(ctx, s.Method, params, auth, s.RPCID)
		if err != nil {
			return out, fmt.Errorf("step %s: %w", s.ID, err)
		}
		res := map[string]any{}
		if m, ok := x.(map[string]any); ok {
			res = m
		}
		bindErr := r.bindStep(n, v, s, res)
		ordered := s.Order == "keep" || (s.Order == "" && bytes.Contains(s.Params, []byte(`"sortfield"`)))
		n.sortFields = sortFields(params)
		a := n.answer(s.Method, x, ordered)
		if s.Compare == "shape" {
			a = shapeOf(a)
		}
		if m, ok := x.(map[string]any); ok && len(s.RPCID) > 0 {
			if am, ok := a.(map[string]any); ok {
				am["id"] = m["id"]
			}
		}
		out = append(out, StepAnswer{ID: s.ID, Method: s.Method, Answer: a})
		if bindErr != nil {
			// The answers so far are returned to be compared: the step
			// whose answer could not feed the next is among them.
			return out, bindErr
		}
	}
	return out, nil
}

// shapeOf keeps an answer's error, or its result's JSON type.
func shapeOf(a any) any {
	m, ok := a.(map[string]any)
	if !ok {
		return a
	}
	r, ok := m["result"]
	if !ok {
		return a
	}
	kind := "<null>"
	switch r.(type) {
	case []any:
		kind = "<array>"
	case map[string]any:
		kind = "<object>"
	case string:
		kind = "<string>"
	case json.Number:
		kind = "<number>"
	case bool:
		kind = "<bool>"
	}
	return map[string]any{"result": kind}
}

// sortFields are the fields a request sorts by ("sortfield", one or a
// list), or nil.
func sortFields(params json.RawMessage) []string {
	var p struct {
		SortField json.RawMessage `json:"sortfield"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.SortField) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(p.SortField, &one) == nil {
		return []string{one}
	}
	var list []string
	_ = json.Unmarshal(p.SortField, &list)
	return list
}

// bindStep records the step's bindings and the IDs a create returned.
func (r *Runner) bindStep(n *normaliser, v *vars, s Step, res map[string]any) error {
	result, ok := res["result"]
	if !ok {
		if len(s.Bind) > 0 {
			return fmt.Errorf("step %s (%s) failed on %s: %v", s.ID, s.Method, r.T.Name, res["error"])
		}
		return nil
	}
	for name, path := range s.Bind {
		x, err := extract(res, path)
		if err != nil {
			return fmt.Errorf("step %s on %s: %w", s.ID, r.T.Name, err)
		}
		v.m[name] = x
		if strings.HasPrefix(name, "token:") {
			// A session for "as"; a token is no ID.
			continue
		}
		parts := splitPath(path)
		key := ""
		for i := len(parts) - 1; i >= 0; i-- {
			if parts[i] != "*" && !isID(parts[i]) && !strings.HasPrefix(parts[i], "[") {
				key = parts[i]
				break
			}
		}
		n.bind(key, x, name)
	}
	// A create's IDs are named after the step: "$step.groupids.0".
	if strings.HasSuffix(s.Method, ".create") || strings.HasSuffix(s.Method, ".createglobal") {
		if m, ok := result.(map[string]any); ok {
			for k, ids := range m {
				if isIDKey(k) {
					n.bind(k, ids, s.ID+"."+k)
					v.m[s.ID+"."+k] = ids
					if l, ok := ids.([]any); ok {
						for i, id := range l {
							v.m[s.ID+"."+k+"."+strconv.Itoa(i)] = id
						}
					}
				}
			}
		}
	}
	return nil
}

// send sends one "sender data" frame to the trapper and returns its
// decoded answer.
func (r *Runner) send(ctx context.Context, v *vars, vals []SendValue) (any, error) {
	type value struct {
		Host  string `json:"host"`
		Key   string `json:"key"`
		Value string `json:"value"`
		Clock int64  `json:"clock,omitempty"`
		NS    *int   `json:"ns,omitempty"`
	}
	req := struct {
		Request string  `json:"request"`
		Data    []value `json:"data"`
	}{Request: "sender data"}
	zero := 0
	for _, sv := range vals {
		x := value{Host: sv.Host, Key: sv.Key, Value: sv.Value}
		if sv.Clock != "" {
			c, ok := v.timeExpr(strings.TrimPrefix(sv.Clock, "$"))
			if !ok {
				return nil, fmt.Errorf("clock %q is not $T0+N", sv.Clock)
			}
			x.Clock, x.NS = c, &zero
		}
		req.Data = append(req.Data, x)
	}
	payload, _ := json.Marshal(req)
	d := net.Dialer{Timeout: 10 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", r.T.Trapper)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if err := zbx.WriteFrame(conn, payload, 0, 10*time.Second); err != nil {
		return nil, err
	}
	zr := zbx.NewReader(conn, zbx.ReaderOptions{})
	h, err := zr.ReadHeader()
	if err != nil {
		return nil, err
	}
	body, err := zr.ReadBody(h)
	if err != nil {
		return nil, err
	}
	var x any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("trapper answer is not JSON: %.200s", body)
	}
	return x, nil
}
