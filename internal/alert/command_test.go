package alert

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// TestCommandOnServer: a server command runs through /bin/sh -c (a
// pipe works), its output is returned, a non-zero exit fails with the
// code and the output, and at the timeout the whole process group is
// killed: a background child that would write a file later never does.
func TestCommandOnServer(t *testing.T) {
	r := &CommandRunner{}
	sc := &catalog.GlobalScript{ExecuteOn: catalog.ExecOnServer}
	h := &catalog.Host{ID: 1, Host: "h"}
	out, err := r.Run(context.Background(), sc, h, `echo "one two" | tr a-z A-Z`)
	if err != nil || out != "ONE TWO" {
		t.Fatalf("pipe: %q, %v", out, err)
	}
	out, err = r.Run(context.Background(), sc, h, "echo broken; exit 3")
	if err == nil || err.Error() != "Process exited with code: 3. broken" || out != "broken" {
		t.Fatalf("exit 3: %q, %v", out, err)
	}
	mark := filepath.Join(t.TempDir(), "late")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = r.Run(ctx, sc, h, "(sleep 1; touch "+mark+") & sleep 30")
	if err == nil || !strings.Contains(err.Error(), "Timeout while executing") {
		t.Fatalf("timeout: %v", err)
	}
	time.Sleep(1500 * time.Millisecond) // past the moment the child would have written
	if _, err := os.Stat(mark); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the background child outlived the timeout: %v", err)
	}
	off := &CommandRunner{ServerDisabled: true}
	if _, err := off.Run(context.Background(), sc, h, "touch "+mark); err == nil || !strings.Contains(err.Error(), "disabled by server configuration") {
		t.Fatalf("server commands disabled: %v", err)
	}
	if _, err := os.Stat(mark); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a disabled server command ran: %v", err)
	}
	big := &CommandRunner{MaxOutput: 10}
	out, _ = big.Run(context.Background(), sc, h, "echo 0123456789abcdef")
	if out != "0123456789" {
		t.Fatalf("bounded output: %q", out)
	}
}

// TestCommandOnAgent: an agent command asks the host's main agent
// interface for system.run with the command quoted by the key rules.
func TestCommandOnAgent(t *testing.T) {
	var gotAddr, gotKey string
	r := &CommandRunner{Agent: func(_ context.Context, _ uint64, addr, key string) (string, error) {
		gotAddr, gotKey = addr, key
		return "ok", nil
	}}
	sc := &catalog.GlobalScript{ExecuteOn: catalog.ExecOnAgent}
	h := &catalog.Host{ID: 1, Host: "h", Interfaces: []catalog.Interface{{Type: catalog.InterfaceAgent, Main: true, UseIP: true, IP: "127.0.0.1", Port: "10050"}}}
	if out, err := r.Run(context.Background(), sc, h, `echo "hi"`); err != nil || out != "ok" {
		t.Fatalf("%q, %v", out, err)
	}
	if gotAddr != "127.0.0.1:10050" || gotKey != `system.run["echo \"hi\""]` {
		t.Fatalf("asked %s for %s", gotAddr, gotKey)
	}
	if _, err := r.Run(context.Background(), sc, h, `echo \`); err == nil {
		t.Fatal("a command ending in a backslash was accepted")
	}
	if _, err := r.Run(context.Background(), sc, &catalog.Host{Host: "none"}, "true"); err == nil || !strings.Contains(err.Error(), "No default interface") {
		t.Fatalf("host without an agent interface: %v", err)
	}
}

// TestGlobalWebhookScript: a webhook script (type 5) runs on the JavaScript
// engine with its parameters, host macros expanded, as "value" (a JSON
// object in the parameters' order, as 6.0 gives it: recorded from
// 6.0.14), within its own timeout; a command script's input stays its
// command line; without an engine a webhook script fails with a reason.
func TestGlobalWebhookScript(t *testing.T) {
	h := &catalog.Host{ID: 1, Host: "web01", Name: "Web 01", Interfaces: []catalog.Interface{{Type: catalog.InterfaceAgent, Main: true, UseIP: true, IP: "127.0.0.2", Port: "10050"}}}
	sc := &catalog.GlobalScript{Type: catalog.ScriptWebhook, Command: "return JSON.parse(value).n + '|' + value;", Timeout: "1s",
		Parameters: []catalog.ScriptParam{{Name: "z", Value: "{HOST.HOST}"}, {Name: "n", Value: "{HOST.NAME} {HOST.IP}"}}}
	in := ScriptInput(sc, h, nil)
	if want := `{"z":"web01","n":"Web 01 127.0.0.2"}`; in != want {
		t.Fatalf("input %s, want %s", in, want)
	}
	wh := &WebhookSender{}
	r := &CommandRunner{Webhook: wh.RunWebhookScript}
	out, err := r.Run(context.Background(), sc, h, in)
	if err != nil || out != "Web 01 127.0.0.2|"+in {
		t.Fatalf("run: %q, %v", out, err)
	}
	loop := &catalog.GlobalScript{Type: catalog.ScriptWebhook, Command: "while (true) {}", Timeout: "1s"}
	start := time.Now()
	if _, err := r.Run(context.Background(), loop, h, "{}"); err == nil {
		t.Fatal("a looping webhook script ended without an error")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("the 1s timeout took %v", d)
	}
	cmd := &catalog.GlobalScript{Type: catalog.ScriptCustom, Command: "echo {HOST.CONN}"}
	if got := ScriptInput(cmd, h, nil); got != "echo 127.0.0.2" {
		t.Fatalf("command input %q", got)
	}
	if _, err := (&CommandRunner{}).Run(context.Background(), sc, h, in); err == nil || !strings.Contains(err.Error(), "JavaScript") {
		t.Fatalf("no engine: %v", err)
	}
}

// TestCommandThroughProxy: for a host behind a proxy, execute_on 0
// (agent) and 2 (server, proxy) go to the proxy, as 6.0 sends them;
// execute_on 1 runs on the server.
func TestCommandThroughProxy(t *testing.T) {
	var got []int
	r := &CommandRunner{Proxy: func(ctx context.Context, sc *catalog.GlobalScript, h *catalog.Host, cmd string) (string, error) {
		got = append(got, sc.ExecuteOn)
		return "from proxy", nil
	}}
	h := &catalog.Host{Host: "h", ProxyID: 7}
	for _, on := range []int{catalog.ExecOnAgent, catalog.ExecOnProxy, catalog.ExecOnServer} {
		out, err := r.Run(context.Background(), &catalog.GlobalScript{ExecuteOn: on}, h, "echo on-server")
		want := "from proxy"
		if on == catalog.ExecOnServer {
			want = "on-server"
		}
		if err != nil || strings.TrimSpace(out) != want {
			t.Errorf("execute_on %d: %q, %v; want %q", on, out, err, want)
		}
	}
	if len(got) != 2 {
		t.Fatalf("the proxy ran %v, want execute_on 0 and 2", got)
	}
	r.Proxy = nil
	if _, err := r.Run(context.Background(), &catalog.GlobalScript{ExecuteOn: catalog.ExecOnProxy}, h, "x"); err == nil {
		t.Fatal("no error without a proxy runner")
	}
}
