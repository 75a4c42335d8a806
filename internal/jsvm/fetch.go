package jsvm

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// DefaultMaxBody bounds a response body an HTTPFetcher reads.
const DefaultMaxBody = 1 << 20

// HTTPFetcher makes the requests of scripts' HttpRequest objects (webhooks
// and script items) with a Go HTTP client: its Fetch is a Job's
// FetchFunc. Each request is bounded by the run's context (its time
// limit) and its response body by MaxBody; a longer body fails the
// request. The zero HTTPFetcher uses http.DefaultClient. Safe for
// concurrent use.
type HTTPFetcher struct {
	Client *http.Client
	// MaxBody bounds each response body read (default DefaultMaxBody).
	MaxBody int64
}

func (f *HTTPFetcher) client() *http.Client {
	if f.Client != nil {
		return f.Client
	}
	return http.DefaultClient
}

func (f *HTTPFetcher) maxBody() int64 {
	if f.MaxBody > 0 {
		return f.MaxBody
	}
	return DefaultMaxBody
}

// Fetch makes one request of a script's HttpRequest.
func (f *HTTPFetcher) Fetch(ctx context.Context, r *Request) (*Response, error) {
	var body io.Reader
	if r.HasBody {
		body = strings.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, body)
	if err != nil {
		return nil, fmt.Errorf("cannot make the request: %w", err)
	}
	for _, h := range r.Header {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := f.client().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("cannot send request: timeout (%s %s)", r.Method, r.URL)
		}
		return nil, fmt.Errorf("cannot send request: %w", err)
	}
	defer resp.Body.Close()
	limit := f.maxBody()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read the response of %s: %w", r.URL, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("response of %s is larger than %d bytes", r.URL, limit)
	}
	h := make(map[string]string, len(resp.Header))
	for k, v := range resp.Header {
		h[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return &Response{Status: resp.StatusCode, Header: h, Body: string(b)}, nil
}
