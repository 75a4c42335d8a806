package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestDial: with a token, every call but apiinfo.version carries it as
// "auth"; with user and password, user.login's session does, and Close
// logs it out; an API error comes back as an *APIError with its data.
func TestDial(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Method string `json:"method"`
			Auth   string `json:"auth"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		seen = append(seen, req.Method+" "+req.Auth)
		switch req.Method {
		case "apiinfo.version":
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","result":"6.0.14","id":1}`))
		case "user.login":
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","result":"sess","id":1}`))
		case "host.get":
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params.","data":"Incorrect method."},"id":1}`))
		default:
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","result":true,"id":1}`))
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c, err := Dial(ctx, srv.URL, "", "", "tok", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Call(ctx, "host.get", obj{}, nil)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Data != "Incorrect method." || reason(err) != "Incorrect method." {
		t.Errorf("API error: %v", err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	c, err = Dial(ctx, srv.URL, "Admin", "pw", "", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"apiinfo.version ", "host.get tok", "user.login ", "user.logout sess"}
	if len(seen) != len(want) {
		t.Fatalf("requests %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("request %d: %q, want %q", i, seen[i], want[i])
		}
	}
	if _, err := Dial(ctx, "ftp://x", "", "", "", time.Second); err == nil {
		t.Error("a URL that is not HTTP was taken")
	}
}
