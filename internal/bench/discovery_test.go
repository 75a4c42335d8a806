package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The range must stay on loopback, and at most a /16.
func TestDiscoveryRange(t *testing.T) {
	for _, args := range [][]string{{}, {"--target", "http://x/api_jsonrpc.php", "--net", "10.0.0.0/24"},
		{"--target", "http://x/api_jsonrpc.php", "--net", "127.0.0.0/8"}, {"--target", "http://x/api_jsonrpc.php", "--net", "::1/128"},
		{"--target", "http://x/api_jsonrpc.php", "--port", "0"}} {
		var out bytes.Buffer
		if code := discoveryMain(t.Context(), args, io.Discard, &out); code != 2 || !strings.Contains(out.String(), "bench discovery:") {
			t.Errorf("%v: exit %d, %q", args, code, out.String())
		}
	}
	_, n, _ := net.ParseCIDR("127.1.0.0/29")
	ips, err := loopbackRange(n)
	if err != nil || len(ips) != 6 || ips[0].String() != "127.1.0.1" || ips[5].String() != "127.1.0.6" {
		t.Errorf("127.1.0.0/29: %v %v", ips, err)
	}
}

// A fake API that "discovers" every listening address of the rule's
// range: the bench finds them all, reports none unexpected and deletes
// its rule.
func TestDiscoveryRun(t *testing.T) {
	var mu sync.Mutex
	var iprange, port string
	deleted := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		defer mu.Unlock()
		var result any = true
		switch req.Method {
		case "apiinfo.version":
			result = "6.0.14"
		case "user.login":
			result = "token"
		case "drule.create":
			var p struct {
				IPRange string `json:"iprange"`
				DChecks []struct {
					Ports string `json:"ports"`
				} `json:"dchecks"`
			}
			_ = json.Unmarshal(req.Params, &p)
			iprange, port = p.IPRange, p.DChecks[0].Ports
			result = map[string]any{"druleids": []string{"5"}}
		case "dservice.get":
			_, n, _ := net.ParseCIDR(iprange)
			ips, _ := loopbackRange(n)
			var rows []map[string]string
			for i, ip := range ips {
				c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.String(), port), time.Second)
				if err != nil {
					continue
				}
				c.Close()
				rows = append(rows, map[string]string{"ip": ip.String(), "status": "0", "lastup": itoa(1000 + i)})
			}
			result = rows
		case "drule.delete":
			deleted = true
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "result": result, "id": 1})
	}))
	defer srv.Close()
	_, n, _ := net.ParseCIDR("127.1.9.0/28")
	b := &DiscoveryBench{Target: Target{APIURL: srv.URL, User: "Admin"}, Net: n, Port: 47091, Prefix: "t", Delay: "10s",
		Timeout: 30 * time.Second, Poll: 10 * time.Millisecond}
	res, err := b.Run(context.Background())
	if err != nil {
		t.Skipf("cannot listen on 127.1.9.0/28 here: %v", err)
	}
	var out bytes.Buffer
	res.Write(&out, b)
	if res.Live != 7 || res.Services != 7 || res.Unexpected != 0 || res.TimedOut || res.Span != 12*time.Second || !deleted {
		t.Errorf("%+v, deleted %v:\n%s", res, deleted, out.String())
	}
}
