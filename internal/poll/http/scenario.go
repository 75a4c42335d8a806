package http

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/usermacro"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
)

// Scenarios returns the checker of web scenarios (item type 9, see
// scenario.go): the scheduler hands it a scenario's web.test.fail item,
// and it runs the scenario's steps in order and reports every item of
// the scenario (poll.Result.Also), sharing c's connections and bounds.
func (c *Checker) Scenarios() poll.Checker { return scenarios{c} }

type scenarios struct{ c *Checker }

func (w scenarios) Check(ctx context.Context, batch []poll.Check, done func(*poll.Result)) {
	c := w.c
	c.inFlight.Add(int64(len(batch)))
	for i := range batch {
		c.run(func() {
			r := c.scenario(ctx, &batch[i])
			c.inFlight.Add(-1)
			c.results[r.Status].Inc()
			done(r)
		})
	}
}

// maxScenarioVars bounds the variables a scenario run may hold, and
// maxVarLen one's value: a regex capturing a whole page into a variable
// used in the next URL must not grow without end.
const (
	maxScenarioVars = 256
	maxVarLen       = 64 << 10
)

// stepResult is what one step measured.
type stepResult struct {
	code  int
	secs  float64
	speed float64
	clock time.Time
	ok    bool // the request got a response (values are stored)
}

// scenario runs the scenario of ch's web.test.fail item as Zabbix 6.0's
// HTTP poller does: steps in order, cookies kept across them, each step
// tried up to retries times, stopping at the first failing one; the
// values of every step that got a response, then the scenario's
// (web.test.fail: the failed step's number or 0; web.test.error only
// on failure; web.test.in the average speed of the steps measured).
func (c *Checker) scenario(ctx context.Context, ch *poll.Check) *poll.Result {
	res := &poll.Result{Check: *ch}
	it := c.opts.Item(ch.ItemID)
	var t *catalog.HTTPTest
	if c.opts.HTTPTest != nil {
		t = c.opts.HTTPTest(ch.ItemID)
	}
	if it == nil || t == nil {
		return c.fail(res, reasonConfig, "the item is not a web scenario's web.test.fail item")
	}
	var sc *usermacro.Scope
	if it.Host != nil {
		sc = it.Host.UserMacros()
	}
	r := &scenarioRun{c: c, t: t, host: it.Host, sc: sc, vars: map[string]string{}}
	jar, _ := cookiejar.New(nil) // cannot fail without options
	r.jar = jar
	for _, v := range t.Variables {
		if err := r.setVar(v, nil); err != nil {
			return r.finish(res, 1, err.Error())
		}
	}
	failed, msg := 0, ""
	for i := range t.Steps {
		var sr stepResult
		var err error
		for try := 0; try < max(t.Retries, 1); try++ {
			sr, err = r.step(ctx, &t.Steps[i])
			if err == nil || ctx.Err() != nil {
				break
			}
		}
		if ctx.Err() != nil {
			return abandoned(res)
		}
		if sr.ok {
			r.stepValues(&res.Also, t, i, &sr)
		}
		if err != nil {
			failed, msg = i+1, err.Error()
			break
		}
	}
	return r.finish(res, failed, msg)
}

// scenarioRun is one run of a scenario.
type scenarioRun struct {
	c     *Checker
	t     *catalog.HTTPTest
	host  *catalog.Host
	sc    *usermacro.Scope
	jar   http.CookieJar
	vars  map[string]string
	speed float64 // sum of the steps' speeds
	n     int     // steps measured
}

func (r *scenarioRun) stepValues(out *[]poll.Value, t *catalog.HTTPTest, i int, sr *stepResult) {
	r.speed += sr.speed
	r.n++
	st := &t.Steps[i]
	add := func(id uint64, v string) {
		if id != 0 {
			*out = append(*out, poll.Value{ItemID: id, Value: []byte(v), Clock: sr.clock})
		}
	}
	add(st.ItemIDs[0], strconv.FormatFloat(sr.speed, 'f', -1, 64))
	add(st.ItemIDs[1], strconv.FormatFloat(sr.secs, 'f', 6, 64))
	add(st.ItemIDs[2], strconv.Itoa(sr.code))
}

// finish completes res: the web.test.fail value is its own, the
// scenario's speed and error go with the steps' values.
func (r *scenarioRun) finish(res *poll.Result, failed int, msg string) *poll.Result {
	now := time.Now()
	speed := 0.0
	if r.n > 0 {
		speed = math.Floor(r.speed / float64(r.n)) // recorded from 6.0.14: whole bytes per second
	}
	if id := r.t.ItemIDs[catalog.WebScenarioIn]; id != 0 {
		res.Also = append(res.Also, poll.Value{ItemID: id, Value: []byte(strconv.FormatFloat(speed, 'f', -1, 64)), Clock: now})
	}
	if id := r.t.ItemIDs[catalog.WebScenarioError]; id != 0 && failed != 0 {
		res.Also = append(res.Also, poll.Value{ItemID: id, Value: []byte(msg), Clock: now})
	}
	if failed != 0 {
		r.c.failures[reasonWeb].Inc()
	}
	res.Status, res.Value, res.Clock = poll.OK, []byte(strconv.Itoa(failed)), now
	return res
}

// expand replaces the host's user macros, {HOST.*} macros and the
// run's variables in s.
func (r *scenarioRun) expand(s string) string {
	if !strings.ContainsRune(s, '{') {
		return s
	}
	if r.sc != nil && strings.Contains(s, "{$") {
		s = r.sc.Expand(s)
	}
	if r.host != nil && strings.Contains(s, "{HOST.") {
		s = expandHostMacros(s, r.host)
	}
	for k, v := range r.vars {
		if strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, v)
		}
	}
	return s
}

func expandHostMacros(s string, h *catalog.Host) string {
	ip, dns, conn := "", "", ""
	for _, t := range []catalog.InterfaceType{catalog.InterfaceAgent, catalog.InterfaceSNMP, catalog.InterfaceJMX, catalog.InterfaceIPMI} {
		if f := h.MainInterface(t); f != nil {
			ip, dns, conn = f.IP, f.DNS, f.DNS
			if f.UseIP {
				conn = f.IP
			}
			break
		}
	}
	return strings.NewReplacer("{HOST.HOST}", h.Host, "{HOST.NAME}", cmpOr(h.Name, h.Host), "{HOST.IP}", ip,
		"{HOST.DNS}", dns, "{HOST.CONN}", conn).Replace(s)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// setVar sets a scenario or step variable: a plain value (macros
// expanded), or "regex:PATTERN", the first group (else the match) of
// PATTERN in page, Zabbix's way to carry a token from one step to the
// next.
func (r *scenarioRun) setVar(v catalog.HTTPField, page []byte) error {
	val := v.Value
	if rx, ok := strings.CutPrefix(val, "regex:"); ok {
		re, err := regexp.Compile(rx)
		if err != nil {
			return fmt.Errorf("error in step variables %q: invalid regular expression: %v", v.Name+"="+v.Value, err)
		}
		m := re.FindSubmatch(page)
		if m == nil {
			// Recorded from 6.0.14.
			return fmt.Errorf("error in step variables \"%s=%s\": cannot extract the value of \"%s\" from response", v.Name, v.Value, v.Name)
		}
		if len(m) > 1 {
			val = string(m[1])
		} else {
			val = string(m[0])
		}
	} else {
		val = r.expand(val)
	}
	if len(val) > maxVarLen {
		val = val[:maxVarLen]
	}
	if _, ok := r.vars[v.Name]; !ok && len(r.vars) >= maxScenarioVars {
		return fmt.Errorf("too many variables (more than %d)", maxScenarioVars)
	}
	r.vars[v.Name] = val
	return nil
}

// step makes one attempt at st.
func (r *scenarioRun) step(ctx context.Context, st *catalog.HTTPStep) (stepResult, error) {
	var sr stepResult
	t := r.t
	switch t.Authentication {
	case catalog.HTTPAuthNone, catalog.HTTPAuthBasic:
	default:
		return sr, fmt.Errorf("authentication type %s is not supported: use none or basic, or an Authorization header", authName(uint8(t.Authentication)))
	}
	if t.SSLKeyPassword != "" {
		return sr, errors.New("encrypted private keys (ssl_key_password) are not supported: give an unencrypted key file readable by the server only")
	}
	codes, err := catalog.ParseStatusCodes(r.expand(st.StatusCodes))
	if err != nil {
		return sr, err
	}
	shared, err := r.c.client(transportKey{t.VerifyPeer == 1, t.VerifyHost == 1, r.expand(t.SSLCertFile), r.expand(t.SSLKeyFile), r.expand(t.HTTPProxy)})
	if err != nil {
		return sr, err
	}
	cl := &http.Client{Transport: shared.Transport, CheckRedirect: shared.CheckRedirect, Jar: r.jar}
	timeout := 15 * time.Second
	if secs, err := delay.Seconds(r.expand(st.Timeout)); err == nil && secs >= 1 && secs <= 3600 {
		timeout = time.Duration(secs) * time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if st.FollowRedirects == 0 {
		rctx = context.WithValue(rctx, noFollowKey{}, true)
	}
	req, err := r.request(rctx, st)
	if err != nil {
		return sr, err
	}
	reqURL := req.URL.String() // the step's, not a redirect's (recorded from 6.0.14)
	start := time.Now()
	resp, err := cl.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return sr, ctx.Err()
		}
		return sr, transportError(err, classify(err, rctx), time.Since(start), 0)
	}
	defer resp.Body.Close()
	buf := r.c.buf()
	defer r.c.putBuf(buf)
	if st.RetrieveMode != catalog.HTTPRetrieveBody {
		buf.Write(appendHeaders(nil, resp))
	}
	n, err := buf.ReadFrom(io.LimitReader(resp.Body, r.c.opts.MaxBodySize+1))
	if err != nil {
		if ctx.Err() != nil {
			return sr, ctx.Err()
		}
		return sr, transportError(err, classify(err, rctx), time.Since(start), n)
	}
	if n > r.c.opts.MaxBodySize {
		return sr, fmt.Errorf("response too large: the body is longer than %d bytes (poll.http_max_body_size)", r.c.opts.MaxBodySize)
	}
	sr.clock = time.Now()
	sr.secs = sr.clock.Sub(start).Seconds()
	sr.code, sr.ok = resp.StatusCode, true
	if sr.secs > 0 {
		sr.speed = math.Floor(float64(n) / sr.secs)
	}
	page := buf.Bytes()
	if !statusOK(codes, resp.StatusCode) {
		// Recorded from 6.0.14.
		return sr, fmt.Errorf("response code \"%d\" did not match any of the required status codes \"%s\"", resp.StatusCode, st.StatusCodes)
	}
	if pat := r.expand(st.Required); pat != "" {
		re, err := regexp.Compile(pat)
		if err != nil {
			return sr, fmt.Errorf("invalid required pattern %q: %v", pat, err)
		}
		if !re.Match(page) {
			// Recorded from 6.0.14.
			return sr, fmt.Errorf("required pattern \"%s\" was not found on %s", pat, reqURL)
		}
	}
	for _, v := range st.Variables {
		if err := r.setVar(v, page); err != nil {
			return sr, err
		}
	}
	return sr, nil
}

// request builds a step's request: variables and macros in its URL,
// query fields, posts and headers; query and form fields URL-encoded;
// headers only (retrieve_mode 1) as a HEAD, as cURL's NOBODY makes it.
func (r *scenarioRun) request(ctx context.Context, st *catalog.HTTPStep) (*http.Request, error) {
	t := r.t
	raw := r.expand(st.URL)
	u, err := url.Parse(withScheme(raw))
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("invalid URL %q: %v", raw, err)
	}
	if len(st.QueryFields) > 0 {
		var q strings.Builder
		q.WriteString(u.RawQuery)
		for _, f := range st.QueryFields {
			if q.Len() > 0 {
				q.WriteByte('&')
			}
			q.WriteString(url.QueryEscape(r.expand(f.Name)) + "=" + url.QueryEscape(r.expand(f.Value)))
		}
		u.RawQuery = q.String()
	}
	var body io.Reader
	method := http.MethodGet
	switch {
	case st.PostType == catalog.StepPostForm && len(st.PostFields) > 0 || st.PostType != catalog.StepPostForm && st.Posts != "":
		method = http.MethodPost
		if st.PostType == catalog.StepPostForm {
			var b bytes.Buffer
			for i, f := range st.PostFields {
				if i > 0 {
					b.WriteByte('&')
				}
				b.WriteString(url.QueryEscape(r.expand(f.Name)) + "=" + url.QueryEscape(r.expand(f.Value)))
			}
			body = &b
		} else {
			body = strings.NewReader(r.expand(st.Posts))
		}
	case st.RetrieveMode == catalog.HTTPRetrieveHeaders:
		method = http.MethodHead
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("cannot make the request: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded") // cURL's
	}
	req.Header.Set("User-Agent", r.expand(t.Agent))
	for _, hs := range [][]catalog.HTTPField{t.Headers, st.Headers} {
		for _, f := range hs {
			name, val := r.expand(f.Name), r.expand(f.Value)
			if strings.EqualFold(name, "Host") {
				req.Host = val
				continue
			}
			req.Header.Set(name, val)
		}
	}
	if t.Authentication == catalog.HTTPAuthBasic {
		req.SetBasicAuth(r.expand(t.HTTPUser), r.expand(t.HTTPPassword))
	}
	return req, nil
}

// transportError words a failed request as cURL's error and message
// that 6.0 stores ("Couldn't connect to server: ...", "Timeout was
// reached: Operation timed out after N milliseconds with M bytes
// received", recorded from 6.0.14); the detail after the colon is Go's.
func transportError(err error, reason int, took time.Duration, got int64) error {
	switch reason {
	case reasonTimeout:
		return curlError(fmt.Sprintf("Timeout was reached: Operation timed out after %d milliseconds with %d bytes received", took.Milliseconds(), got))
	case reasonConnect:
		return curlError(fmt.Sprintf("Couldn't connect to server: %v", err))
	case reasonTLS:
		return curlError(fmt.Sprintf("SSL connect error: %v", err))
	}
	return curlError(fmt.Sprintf("Failure when receiving data from the peer: %v", err))
}

// curlError is a message in cURL's words, which start with a capital
// letter (Go's errors do not, hence a type of its own).
type curlError string

func (e curlError) Error() string { return string(e) }
