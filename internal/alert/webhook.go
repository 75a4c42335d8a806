package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/jsvm"
)

// WebhookSender delivers webhook alerts. With a script (Zabbix's form),
// the script runs as the body of a function of one argument, value: the
// JSON object of the alert's expanded parameters as a string. It may
// use HttpRequest (addHeader, clearHeader, get, post, put, patch,
// delete, getStatus, getHeaders, and the older CurlHttpRequest's
// AddHeader, Post, Status...; CurlHttpRequest is the same),
// Zabbix.log (or Zabbix.Log), btoa and atob; a thrown error fails the
// attempt with its message. The script runs in JS (package jsvm: the
// server's pool of worker processes), bounded by the send's deadline
// (the media type's timeout) and the runner's memory limit; a script
// past either fails the attempt with the reason. The requests its
// HttpRequest makes are made here, with Client and MaxBody.
// Without a script (a Peregrine convenience), the parameters other than
// "URL" are POSTed as a JSON object to the parameter "URL", and any
// status other than 2xx fails the attempt.
type WebhookSender struct {
	// MaxBody bounds each response body read (default 1 MiB); a longer
	// body fails the request.
	MaxBody int64
	Client  *http.Client
	Logger  *slog.Logger
	// JS runs the scripts; nil runs them in this process (jsvm.Local:
	// tests and tools only, see its comment).
	JS jsvm.Runner
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
	log := w.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	js := w.JS
	if js == nil {
		js = &jsvm.Local{}
	}
	// The send's deadline is the media type's timeout; without one,
	// Zabbix's longest (60 s).
	timeout := maxWebhookTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	res, err := js.Run(ctx, &jsvm.Job{Kind: jsvm.Webhook, Script: script, Value: value, Timeout: timeout, Fetch: w.fetch,
		Log: func(level, msg string) {
			// Debug: a script may log on every alert.
			log.Debug("webhook script", "level", level, "message", msg)
		}})
	if err != nil {
		return "", scriptErr(err)
	}
	return res.Value, nil
}

// maxWebhookTimeout bounds a script run without a deadline: the longest
// timeout a Zabbix 6.0 media type may have.
const maxWebhookTimeout = 60 * time.Second

// scriptErr words a failed run: a thrown value as the script threw it,
// the limits and the runner's failures after "webhook script: ".
func scriptErr(err error) error {
	var e *jsvm.Error
	if errors.As(err, &e) && e.Reason == jsvm.Thrown {
		return errors.New(e.Msg)
	}
	return fmt.Errorf("webhook script: %w", err)
}

// fetch makes one request of a script's HttpRequest, with Client and
// MaxBody (jsvm.HTTPFetcher, which script items share).
func (w *WebhookSender) fetch(ctx context.Context, r *jsvm.Request) (*jsvm.Response, error) {
	f := jsvm.HTTPFetcher{Client: w.Client, MaxBody: w.maxBody()}
	return f.Fetch(ctx, r)
}
