package server

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/alert"
	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/event"
	"github.com/peregrine-mon/peregrine/internal/history"
	"github.com/peregrine-mon/peregrine/internal/poll"
)

// notifyStore is the event store as the trigger state machine sees it:
// after each successful commit the batch (IDs assigned) goes to notify.
// Embedding keeps the store's other methods (OpenProblems, for
// Reconcile).
type notifyStore struct {
	*event.Store
	notify func(*event.Batch)
}

func (n notifyStore) Commit(b *event.Batch) error {
	if err := n.Store.Commit(b); err != nil {
		return err
	}
	n.notify(b)
	return nil
}

// usersOfGroups returns the members of user groups, for operations that
// message groups.
func (s *Server) usersOfGroups(ids []uint64) []uint64 {
	if s.authStore == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	gs, err := s.authStore.UserGroups(ctx)
	if err != nil {
		s.log.Error("alert: cannot read user groups; their members get no message", "err", err)
		return nil
	}
	want := map[uint64]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var out []uint64
	for _, g := range gs {
		if want[g.ID] {
			out = append(out, g.UserIDs...)
		}
	}
	return out
}

// readsOf is the alert engine's Options.Rights: what a user may read,
// by the rights of their user groups (a super admin reads everything).
// A user who no longer exists reads nothing.
func (s *Server) readsOf(userID uint64) (func([]uint64) bool, error) {
	if s.authStore == nil {
		return func([]uint64) bool { return true }, nil // no accounts: no permissions to apply
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	us, err := s.authStore.Users(ctx)
	if err != nil {
		return nil, err
	}
	for _, u := range us {
		if u.ID != userID {
			continue
		}
		r, err := s.authStore.Rights(ctx, u)
		if err != nil {
			return nil, err
		}
		return func(groups []uint64) bool { return r.Host(groups) >= auth.PermRead }, nil
	}
	return func([]uint64) bool { return false }, nil
}

// sampleText is a value as {ITEM.LASTVALUE} shows it.
func sampleText(s *history.Sample) string {
	switch s.Type {
	case history.Float:
		return strconv.FormatFloat(s.F, 'f', -1, 64)
	case history.Uint:
		return strconv.FormatUint(s.U, 10)
	}
	return s.S
}

// apiAlerting serves the API's action, media type and alert methods
// from the catalog and the engine.
type apiAlerting struct {
	e          *alert.Engine
	c          *catalog.Catalog
	minStep    time.Duration
	cmd        alert.Commander
	cmdTimeout time.Duration
}

func (a *apiAlerting) AlertConfig() *catalog.AlertConfig { return a.c.AlertConfig() }

func (a *apiAlerting) EditAlerts(ctx context.Context, fn func(*catalog.AlertConfig) error) error {
	return a.c.EditAlerts(ctx, fn)
}

func (a *apiAlerting) Alerts(keep func(*alert.Alert) bool) []alert.Alert { return a.e.Alerts(keep) }

func (a *apiAlerting) MinStepDuration() time.Duration { return a.minStep }

// TestMediaType is api.AlertTester: a test send through a media type.
func (a *apiAlerting) TestMediaType(ctx context.Context, id uint64, sendto, subject, message string, params []alert.Param) (string, error) {
	mt := a.c.AlertConfig().MediaTypes[id]
	if mt == nil {
		return "", errors.New("no such media type")
	}
	return a.e.TestSend(ctx, mt, sendto, subject, message, params)
}

// Queues is api.AlertQueues: each media type's backlog.
func (a *apiAlerting) Queues() map[uint64]alert.QueueState { return a.e.Queues() }

func (a *apiAlerting) RunScript(ctx context.Context, sc *catalog.GlobalScript, host *catalog.Host, command string) (string, error) {
	if sc.Type != catalog.ScriptWebhook { // a webhook script has its own timeout
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.cmdTimeout)
		defer cancel()
	}
	return a.cmd.Run(ctx, sc, host, command)
}

// commander runs global scripts: on the server through /bin/sh, on
// agents through the commands' agent checker (s.cmdAgent, made in the
// rules stage; a command before then fails).
func (s *Server) commander() alert.Commander {
	// Webhook scripts run as webhook media types do: in the JavaScript
	// workers (s.JS, made before the alert engine), with their bounds.
	wh := &alert.WebhookSender{Logger: s.log}
	if s.JS != nil {
		wh.JS = s.JS
	}
	return &alert.CommandRunner{Agent: s.agentQuery, ServerDisabled: !s.cfg.Alerts.EnableGlobalScripts, Webhook: wh.RunWebhookScript,
		Proxy: s.proxyCommand}
}

// agentQuery asks a passive agent for one key, bounded by ctx's deadline.
func (s *Server) agentQuery(ctx context.Context, hostID uint64, addr, key string) (string, error) {
	if s.cmdAgent == nil {
		return "", errors.New("the agent checker is not running")
	}
	timeout := 30 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	done := make(chan *poll.Result, 1)
	s.cmdAgent.Check(ctx, []poll.Check{{HostID: hostID, Key: key, Addr: addr, Timeout: timeout, Due: time.Now()}},
		func(r *poll.Result) { done <- r })
	r := <-done
	if r.Status != poll.OK {
		return "", errors.New(r.Error)
	}
	return strings.TrimRight(string(r.Value), "\n"), nil
}
