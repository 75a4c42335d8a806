package alert

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/dop251/goja"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// WebhookSender delivers webhook alerts. With a script (Zabbix's form),
// the script runs as the body of a function of one argument, value: the
// JSON object of the alert's expanded parameters as a string. It may
// use HttpRequest (addHeader, clearHeader, get, post, put, patch,
// delete, getStatus, getHeaders, and the older CurlHttpRequest's
// AddHeader, Post, Status...; CurlHttpRequest is the same),
// Zabbix.log (or Zabbix.Log), btoa and atob; a thrown error fails the
// attempt with its message.
// Without a script (a Peregrine convenience), the parameters other than
// "URL" are POSTed as a JSON object to the parameter "URL", and any
// status other than 2xx fails the attempt.
type WebhookSender struct {
	// MaxBody bounds each response body read (default 1 MiB); a longer
	// body fails the request.
	MaxBody int64
	Client  *http.Client
	Logger  *slog.Logger
}

func (w *WebhookSender) client() *http.Client {
	if w.Client != nil {
		return w.Client
	}
	return http.DefaultClient
}

func (w *WebhookSender) maxBody() int64 {
	if w.MaxBody > 0 {
		return w.MaxBody
	}
	return 1 << 20
}

// Send implements Sender.
func (w *WebhookSender) Send(ctx context.Context, mt *catalog.MediaType, a *Alert) error {
	if strings.TrimSpace(mt.Script) == "" {
		return w.plain(ctx, a)
	}
	obj := map[string]string{}
	for _, p := range a.Params {
		obj[p.Name] = p.Value
	}
	val, _ := json.Marshal(obj)
	_, err := w.run(ctx, mt.Script, string(val))
	return err
}

func (w *WebhookSender) plain(ctx context.Context, a *Alert) error {
	url := ""
	obj := map[string]string{}
	for _, p := range a.Params {
		if strings.EqualFold(p.Name, "URL") {
			url = p.Value
			continue
		}
		obj[p.Name] = p.Value
	}
	if url == "" {
		return errors.New(`webhook has neither a script nor a "URL" parameter`)
	}
	body, _ := json.Marshal(obj)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("cannot make the request to %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.client().Do(req)
	if err != nil {
		return fmt.Errorf("cannot send to %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
	}
	return nil
}

// RunWebhookScript runs a webhook script with value as its argument,
// as Send does, and returns its result as a string (mediatype.test-style
// use and tests).
func (w *WebhookSender) RunWebhookScript(ctx context.Context, script, value string) (string, error) {
	return w.run(ctx, script, value)
}

func (w *WebhookSender) run(ctx context.Context, script, value string) (string, error) {
	prog, err := goja.Compile("webhook", "(function (value) {\n"+script+"\n})", false)
	if err != nil {
		return "", fmt.Errorf("cannot compile the webhook script: %w", err)
	}
	vm := goja.New()
	stop := context.AfterFunc(ctx, func() { vm.Interrupt("execution timeout") })
	defer stop()
	log := w.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	zbx := vm.NewObject()
	_ = zbx.Set("log", func(c goja.FunctionCall) goja.Value {
		// Debug: a script may log on every alert.
		log.Debug("webhook script", "level", c.Argument(0).String(), "message", c.Argument(1).String())
		return goja.Undefined()
	})
	// Zabbix.Log is the older spelling some of Zabbix's own webhooks use.
	_ = zbx.Set("Log", zbx.Get("log"))
	_ = vm.Set("Zabbix", zbx)
	// btoa and atob, as Zabbix's engine has them: base64 of the bytes
	// of a string (UTF-8), and back.
	_ = vm.Set("btoa", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) })
	_ = vm.Set("atob", func(s string) (string, error) {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return "", fmt.Errorf("atob: invalid base64: %w", err)
		}
		return string(b), nil
	})
	ctor := func(c goja.ConstructorCall) *goja.Object { return w.httpRequest(ctx, vm, c.This) }
	_ = vm.Set("HttpRequest", ctor)
	_ = vm.Set("CurlHttpRequest", ctor)
	fv, err := vm.RunProgram(prog)
	if err != nil {
		return "", scriptErr(err)
	}
	fn, _ := goja.AssertFunction(fv)
	res, err := fn(goja.Undefined(), vm.ToValue(value))
	if err != nil {
		return "", scriptErr(err)
	}
	if goja.IsUndefined(res) || goja.IsNull(res) {
		return "", nil
	}
	return res.String(), nil
}

func scriptErr(err error) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		return fmt.Errorf("webhook script: %v", ie.Value())
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return errors.New(ex.Value().String())
	}
	return err
}

// httpRequest fills this with Zabbix's HttpRequest methods.
func (w *WebhookSender) httpRequest(ctx context.Context, vm *goja.Runtime, this *goja.Object) *goja.Object {
	var headers []string
	status := 0
	var respHeaders http.Header
	_ = this.Set("addHeader", func(h string) { headers = append(headers, h) })
	_ = this.Set("clearHeader", func() { headers = nil })
	_ = this.Set("getStatus", func() int { return status })
	_ = this.Set("getHeaders", func() map[string]any {
		out := map[string]any{}
		for k, v := range respHeaders {
			out[strings.ToLower(k)] = strings.Join(v, ", ")
		}
		return out
	})
	_ = this.Set("setProxy", func(string) {})
	_ = this.Set("setHttpAuth", func(goja.FunctionCall) goja.Value { return goja.Undefined() })
	do := func(method string) func(goja.FunctionCall) goja.Value {
		return func(c goja.FunctionCall) goja.Value {
			url := c.Argument(0).String()
			var body io.Reader
			if len(c.Arguments) > 1 && !goja.IsUndefined(c.Argument(1)) && !goja.IsNull(c.Argument(1)) {
				body = strings.NewReader(c.Argument(1).String())
			}
			req, err := http.NewRequestWithContext(ctx, method, url, body)
			if err != nil {
				panic(vm.NewGoError(fmt.Errorf("cannot make the request: %w", err)))
			}
			for _, h := range headers {
				k, v, _ := strings.Cut(h, ":")
				req.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
			}
			resp, err := w.client().Do(req)
			if err != nil {
				if ctx.Err() != nil {
					panic(vm.NewGoError(fmt.Errorf("cannot send request: timeout (%s %s)", method, url)))
				}
				panic(vm.NewGoError(fmt.Errorf("cannot send request: %w", err)))
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(io.LimitReader(resp.Body, w.maxBody()+1))
			if err != nil {
				panic(vm.NewGoError(fmt.Errorf("cannot read the response of %s: %w", url, err)))
			}
			if int64(len(b)) > w.maxBody() {
				panic(vm.NewGoError(fmt.Errorf("response of %s is larger than %d bytes", url, w.maxBody())))
			}
			status, respHeaders = resp.StatusCode, resp.Header
			return vm.ToValue(string(b))
		}
	}
	for name, m := range map[string]string{"get": "GET", "post": "POST", "put": "PUT", "patch": "PATCH", "delete": "DELETE", "head": "HEAD"} {
		_ = this.Set(name, do(m))
		// The older CurlHttpRequest's names (Get, Post, ...), which some
		// of Zabbix's own webhooks still use.
		_ = this.Set(strings.ToUpper(name[:1])+name[1:], do(m))
	}
	for _, alias := range [][2]string{{"AddHeader", "addHeader"}, {"ClearHeader", "clearHeader"}, {"GetHeaders", "getHeaders"},
		{"Status", "getStatus"}, {"SetProxy", "setProxy"}, {"SetHttpAuth", "setHttpAuth"}} {
		_ = this.Set(alias[0], this.Get(alias[1]))
	}
	return nil
}
