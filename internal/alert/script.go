package alert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// ScriptSender runs script media types: Dir/exec_path with the alert's
// expanded parameters as arguments, without a shell, in its own process
// group; at the media type's timeout the whole group is killed. A
// non-zero exit fails the attempt with the program's output.
type ScriptSender struct {
	Dir string
	// MaxOutput bounds the output kept for the error text (default 4 KiB).
	MaxOutput int
}

// boundedBuf keeps the first max bytes written.
type boundedBuf struct {
	b   bytes.Buffer
	max int
}

func (w *boundedBuf) Write(p []byte) (int, error) {
	if room := w.max - w.b.Len(); room > 0 {
		w.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Send implements Sender.
func (s *ScriptSender) Send(ctx context.Context, mt *catalog.MediaType, a *Alert) error {
	if s.Dir == "" {
		return errors.New("script media types are disabled: set alerts.scripts_dir")
	}
	name := mt.ExecPath
	if name == "" || strings.Contains(name, "/") || name == "." || name == ".." {
		return fmt.Errorf("script name %q must be a file name in %s", name, s.Dir)
	}
	args := make([]string, len(a.Params))
	for i, p := range a.Params {
		args[i] = p.Value
	}
	cmd := exec.Command(filepath.Join(s.Dir, name), args...)
	cmd.Dir = s.Dir
	max := s.MaxOutput
	if max <= 0 {
		max = 4 << 10
	}
	out := &boundedBuf{max: max}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot execute %s: %w", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		// The group, not only the child: a script's own children would
		// otherwise keep running and hold its output open.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		return textError(fmt.Sprintf("Timeout while executing %s.", name)) // Zabbix's text
	}
	if err != nil {
		text := strings.TrimSpace(out.b.String())
		if text == "" {
			text = err.Error()
		}
		return fmt.Errorf("%s failed: %s", name, text)
	}
	return nil
}
