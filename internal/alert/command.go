package alert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx/delay"
)

// Alert types (Zabbix's alerttype).
const (
	AlertMessage = 0
	AlertCommand = 1
)

// Commander runs a global script's command for one host: on the server
// or through the host's agent. Run must honour ctx (its deadline is the
// command timeout) and return the command's output, or an error saying
// what failed (with the output, if any).
type Commander interface {
	Run(ctx context.Context, sc *catalog.GlobalScript, host *catalog.Host, command string) (output string, err error)
}

// AgentQuery asks a passive agent for one item key (the agent protocol
// of spec §3.1) and returns its value, or an error with the agent's
// "not supported" text or the network failure.
type AgentQuery func(ctx context.Context, hostID uint64, addr, key string) (string, error)

// CommandRunner is the built-in Commander.
//
// For a host behind a proxy, execute_on 0 and 2 go to the proxy
// (Proxy), which runs the command itself or asks the host's agent, as
// Zabbix 6.0 does; execute_on 1 runs on the server.
//
// On the server (execute_on 1, and 2 for a host without a proxy) the command
// runs as Zabbix runs it, through the shell: /bin/sh -c COMMAND, in its
// own process group, killed whole at the timeout, output (stdout and
// stderr) bounded. A shell, because a Zabbix script is a shell command
// line (pipes, redirections, variables), not a program and arguments;
// this is why only super admins may create scripts.
//
// On the agent (execute_on 0) it asks the host's main agent interface
// for system.run["COMMAND"], which the agent runs only if its
// configuration allows the key (AllowKey=system.run[*]); the agent's
// refusal is the error.
type CommandRunner struct {
	// Shell runs server commands; default /bin/sh.
	Shell string
	// Agent queries passive agents; nil: agent execution fails.
	Agent AgentQuery
	// MaxOutput bounds the output kept (default 64 KiB, Zabbix's limit
	// of a script's result).
	MaxOutput int
	// ServerDisabled refuses commands on the server (Zabbix 7's
	// EnableGlobalScripts=0); agents' commands still run.
	ServerDisabled bool
	// Webhook runs a webhook script (type 5) with its input as "value"
	// (WebhookSender.RunWebhookScript); nil: webhook scripts fail.
	Webhook func(ctx context.Context, script, value string) (string, error)
	// Proxy has the proxy monitoring host run the command (a remote
	// command task) and returns its output; nil: commands for hosts
	// behind proxies fail.
	Proxy func(ctx context.Context, sc *catalog.GlobalScript, host *catalog.Host, command string) (string, error)
}

// DefaultScriptTimeout is a webhook script's time limit when it sets
// none (Zabbix's 30s).
const DefaultScriptTimeout = 30 * time.Second

// ScriptInput is what a global script runs with on host h: the command
// line with h's macros (and, with md, the event's) expanded, or for a
// webhook script the JSON object of its parameters, in their order,
// their values expanded so.
func ScriptInput(sc *catalog.GlobalScript, h *catalog.Host, md *MacroData) string {
	expand := func(s string) string {
		s = ExpandHost(s, h)
		if md != nil {
			s = Expand(s, md)
		}
		return s
	}
	if sc.Type != catalog.ScriptWebhook {
		return expand(sc.Command)
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range sc.Parameters {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.Name)
		v, _ := json.Marshal(expand(p.Value))
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

// Run implements Commander.
func (r *CommandRunner) Run(ctx context.Context, sc *catalog.GlobalScript, host *catalog.Host, command string) (string, error) {
	if sc.Type == catalog.ScriptWebhook {
		if r.Webhook == nil {
			return "", textError("Webhook scripts cannot run: no JavaScript engine is configured.")
		}
		limit := DefaultScriptTimeout
		if n, err := delay.Seconds(sc.Timeout); err == nil && n > 0 {
			limit = time.Duration(n) * time.Second
		}
		wctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		return r.Webhook(wctx, sc.Command, command)
	}
	if host != nil && host.ProxyID != 0 && sc.ExecuteOn != catalog.ExecOnServer {
		if r.Proxy == nil {
			return "", textError("Remote commands through proxies are not available.")
		}
		return r.Proxy(ctx, sc, host, command)
	}
	if sc.ExecuteOn == catalog.ExecOnAgent {
		return r.onAgent(ctx, host, command)
	}
	if r.ServerDisabled {
		return "", textError("Global script execution on Zabbix server is disabled by server configuration.") // Zabbix's text
	}
	return r.onServer(ctx, command)
}

func (r *CommandRunner) onServer(ctx context.Context, command string) (string, error) {
	shell := r.Shell
	if shell == "" {
		shell = "/bin/sh"
	}
	max := r.MaxOutput
	if max <= 0 {
		max = 64 << 10
	}
	cmd := exec.Command(shell, "-c", command)
	cmd.Dir = "/"
	out := &boundedBuf{max: max}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("cannot execute %s: %w", shell, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		// The group: the shell's children would otherwise outlive it and
		// keep its output open.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		return strings.TrimRight(out.b.String(), "\n"), textError("Timeout while executing a shell script.") // Zabbix's text
	}
	text := strings.TrimRight(out.b.String(), "\n")
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		msg := fmt.Sprintf("Process exited with code: %d.", ee.ExitCode())
		if text != "" {
			msg += " " + text
		}
		return text, textError(msg)
	}
	if err != nil {
		return text, fmt.Errorf("cannot execute %s: %w", shell, err)
	}
	return text, nil
}

// SystemRunKey quotes a command as the parameter of system.run, by the
// item key rules: inside double quotes only \" is an escape, so a
// command ending in a backslash cannot be quoted.
func SystemRunKey(command string) (string, error) {
	if strings.HasSuffix(command, `\`) {
		return "", textError("A command ending with a backslash cannot be passed to system.run.")
	}
	return `system.run["` + strings.ReplaceAll(command, `"`, `\"`) + `"]`, nil
}

func (r *CommandRunner) onAgent(ctx context.Context, host *catalog.Host, command string) (string, error) {
	if r.Agent == nil {
		return "", textError("Remote commands on agents are not available.")
	}
	f := host.MainInterface(catalog.InterfaceAgent)
	if f == nil {
		return "", textError(fmt.Sprintf("No default interface for \"Agent\" type on \"%s\".", host.Host))
	}
	key, err := SystemRunKey(command)
	if err != nil {
		return "", err
	}
	out, err := r.Agent(ctx, host.ID, f.Addr(), key)
	if err != nil {
		msg := fmt.Sprintf("Cannot run the command on the agent of %q (%s): %v", host.Host, f.Addr(), err)
		if strings.Contains(err.Error(), "Unsupported item key") {
			// zabbix_agentd 6.0 denies system.run unless allowed, and
			// says only that the key is unsupported.
			msg += " (the agent runs commands only with AllowKey=system.run[*])"
		}
		return "", textError(msg)
	}
	return out, nil
}

// ExpandHost expands the host macros of a command for the host it runs
// on: {HOST.HOST} {HOST.NAME} {HOST.ID} and, from the main agent
// interface, {HOST.IP} {HOST.DNS} {HOST.CONN} (empty without one). The
// values go into a shell command line unquoted, as in Zabbix: a
// script's author quotes them where a host's name may hold spaces.
func ExpandHost(command string, h *catalog.Host) string {
	if !strings.Contains(command, "{HOST.") {
		return command
	}
	var ip, dns, conn string
	if f := h.MainInterface(catalog.InterfaceAgent); f != nil {
		ip, dns = f.IP, f.DNS
		conn = dns
		if f.UseIP {
			conn = ip
		}
	}
	return strings.NewReplacer("{HOST.HOST}", h.Host, "{HOST.NAME}", h.Name, "{HOST.ID}", strconv.FormatUint(h.ID, 10),
		"{HOST.IP}", ip, "{HOST.DNS}", dns, "{HOST.CONN}", conn).Replace(command)
}
