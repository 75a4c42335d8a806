package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// Proxies' tasks (see doc.go, "Proxies"): remote commands and "check
// now" for hosts behind a proxy, as Zabbix 6.0 hands them over, recorded
// from 6.0.14 (testdata/proxy_tasks_zabbix60.json):
//   - the server sends its pending tasks in its reply to an active
//     proxy's "proxy data" and in its acknowledgement of a passive
//     proxy's, as "tasks": [...]: a remote command is
//     {"type":2,"clock","ttl":600,"commandtype","command","execute_on",
//     "port","authtype","username","password","publickey","privatekey",
//     "alertid","parent_taskid","hostid"}, a check now
//     {"type":6,"clock","ttl":3600,"itemid"};
//   - a remote command's result comes back in a later "proxy data"'s
//     "tasks": {"type":3,"clock","ttl","status":0 or -1,"info",
//     "parent_taskid"}; script.execute answers the info as its value
//     (status 0) or as its error (-1).
//
// Tasks are kept in memory (a restart forgets them, as the API caller
// waiting for a result is gone too), at most maxProxyTasks per proxy,
// each dropped once its ttl has passed unsent.

// Zabbix 6.0's task types and times to live.
const (
	taskRemoteCommand       = 2
	taskRemoteCommandResult = 3
	taskCheckNow            = 6
	remoteCommandTTL        = 600
	checkNowTTL             = 3600
	maxProxyTasks           = 1000
)

// ProxyCommand is a remote command for a proxy to run for one of its
// hosts: a global script's type (commandtype), execute_on and command
// line (macros expanded), and its SSH or Telnet login.
type ProxyCommand struct {
	HostID      uint64
	CommandType int
	ExecuteOn   int
	Command     string
	Port        int
	AuthType    int
	Username    string
	Password    string
	PublicKey   string
	PrivateKey  string
}

// ErrProxyTasksFull is returned when a proxy has maxProxyTasks tasks
// waiting: it has not asked for them for a long time.
var ErrProxyTasksFull = errors.New("too many tasks are waiting for the proxy (is it connected?)")

type proxyTask struct {
	id     uint64
	typ    int
	clock  int64
	ttl    int64
	cmd    *ProxyCommand
	itemID uint64
	done   chan proxyTaskResult // remote commands: buffered, 1
}

type proxyTaskResult struct {
	status int
	info   string
}

// proxyTasks are the tasks waiting for each proxy and the remote
// commands waiting for their results.
type proxyTasks struct {
	mu      sync.Mutex
	seq     uint64
	pending map[uint64][]*proxyTask // by proxy ID
	waiting map[uint64]*proxyTask   // sent remote commands, by task ID
}

func (t *proxyTasks) add(proxyID uint64, pt *proxyTask) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending == nil {
		t.pending, t.waiting = map[uint64][]*proxyTask{}, map[uint64]*proxyTask{}
	}
	if len(t.pending[proxyID]) >= maxProxyTasks {
		return ErrProxyTasksFull
	}
	t.seq++
	pt.id = t.seq
	t.pending[proxyID] = append(t.pending[proxyID], pt)
	if pt.done != nil {
		t.waiting[pt.id] = pt
	}
	return nil
}

// take removes proxy's pending tasks, those past their ttl dropped.
func (t *proxyTasks) take(proxyID uint64, now int64) []*proxyTask {
	t.mu.Lock()
	defer t.mu.Unlock()
	ps := t.pending[proxyID]
	if len(ps) == 0 {
		return nil
	}
	delete(t.pending, proxyID)
	out := ps[:0]
	for _, pt := range ps {
		if now-pt.clock > pt.ttl {
			if pt.done != nil {
				delete(t.waiting, pt.id)
				pt.done <- proxyTaskResult{status: -1, info: "timeout while waiting for the proxy to take the remote command"}
			}
			continue
		}
		out = append(out, pt)
	}
	return out
}

// forget drops a task whose caller gave up.
func (t *proxyTasks) forget(proxyID, id uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.waiting, id)
	ps := t.pending[proxyID]
	for i, pt := range ps {
		if pt.id == id {
			t.pending[proxyID] = append(ps[:i:i], ps[i+1:]...)
			break
		}
	}
}

// complete hands a result to the remote command waiting for it; false
// if none is (unknown, or its caller gave up).
func (t *proxyTasks) complete(id uint64, r proxyTaskResult) bool {
	t.mu.Lock()
	pt := t.waiting[id]
	delete(t.waiting, id)
	t.mu.Unlock()
	if pt == nil {
		return false
	}
	pt.done <- r
	return true
}

// ProxyCommand has proxy proxyID run c and returns its output; it
// waits until the proxy answers or ctx ends. 6.0's words for a failed
// command are the proxy's (its result's info).
func (s *Server) ProxyCommand(ctx context.Context, proxyID uint64, c ProxyCommand) (string, error) {
	pt := &proxyTask{typ: taskRemoteCommand, clock: time.Now().Unix(), ttl: remoteCommandTTL, cmd: &c, done: make(chan proxyTaskResult, 1)}
	if err := s.tasks.add(proxyID, pt); err != nil {
		return "", err
	}
	s.pm.tasks["remote_command/queued"].Inc()
	select {
	case r := <-pt.done:
		if r.status != 0 {
			return "", errors.New(r.info)
		}
		return r.info, nil
	case <-ctx.Done():
		s.tasks.forget(proxyID, pt.id)
		s.pm.tasks["remote_command/timeout"].Inc()
		return "", fmt.Errorf("timeout while waiting for the remote command's result from the proxy: %w", ctx.Err())
	}
}

// ProxyCheckNow asks proxy proxyID to check each item at once (6.0's
// check now task, one per item).
func (s *Server) ProxyCheckNow(proxyID uint64, itemIDs []uint64) error {
	now := time.Now().Unix()
	for _, id := range itemIDs {
		if err := s.tasks.add(proxyID, &proxyTask{typ: taskCheckNow, clock: now, ttl: checkNowTTL, itemID: id}); err != nil {
			return err
		}
		s.pm.tasks["check_now/queued"].Inc()
	}
	return nil
}

// appendTasks appends `,"tasks":[...]` for tasks (nothing for none).
func appendTasks(b []byte, tasks []*proxyTask) []byte {
	if len(tasks) == 0 {
		return b
	}
	b = append(b, `,"tasks":[`...)
	for i, pt := range tasks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":`...)
		b = strconv.AppendInt(b, int64(pt.typ), 10)
		b = append(b, `,"clock":`...)
		b = strconv.AppendInt(b, pt.clock, 10)
		b = append(b, `,"ttl":`...)
		b = strconv.AppendInt(b, pt.ttl, 10)
		if pt.typ == taskCheckNow {
			b = append(b, `,"itemid":`...)
			b = strconv.AppendUint(b, pt.itemID, 10)
			b = append(b, '}')
			continue
		}
		c := pt.cmd
		b = append(b, `,"commandtype":`...)
		b = strconv.AppendInt(b, int64(c.CommandType), 10)
		b = append(b, `,"command":`...)
		b = appendJSONString(b, c.Command)
		b = append(b, `,"execute_on":`...)
		b = strconv.AppendInt(b, int64(c.ExecuteOn), 10)
		b = append(b, `,"port":`...)
		b = strconv.AppendInt(b, int64(c.Port), 10)
		b = append(b, `,"authtype":`...)
		b = strconv.AppendInt(b, int64(c.AuthType), 10)
		for _, f := range [...]struct{ k, v string }{{"username", c.Username}, {"password", c.Password}, {"publickey", c.PublicKey}, {"privatekey", c.PrivateKey}} {
			b = append(b, `,"`...)
			b = append(b, f.k...)
			b = append(b, `":`...)
			b = appendJSONString(b, f.v)
		}
		b = append(b, `,"alertid":0,"parent_taskid":`...)
		b = strconv.AppendUint(b, pt.id, 10)
		b = append(b, `,"hostid":`...)
		b = strconv.AppendUint(b, c.HostID, 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

// proxyTaskRow is one row of the "tasks" part of a proxy's data.
type proxyTaskRow struct {
	Type         int    `json:"type"`
	Status       int    `json:"status"`
	Info         string `json:"info"`
	ParentTaskID uint64 `json:"parent_taskid"`
}

// takeTaskResults hands the remote commands' results in a proxy's
// "tasks" part to their callers; rows of other types and results nobody
// waits for (after a restart, or a caller that gave up) are counted.
func (s *Server) takeTaskResults(proxy string, raw json.RawMessage) error {
	if raw == nil {
		return nil
	}
	var rows []proxyTaskRow
	if err := json.Unmarshal(raw, &rows); err != nil {
		return fmt.Errorf(`"tasks" is not an array of task results: %w`, err)
	}
	for _, r := range rows {
		if r.Type != taskRemoteCommandResult || !s.tasks.complete(r.ParentTaskID, proxyTaskResult{status: r.Status, info: r.Info}) {
			s.pm.tasks["result/unexpected"].Inc()
			if n, ok := s.throttle.Allow("proxy:task_result"); ok {
				s.opts.Logger.Info("proxy sent a task result nobody waits for (a restart, or the caller gave up)", "proxy", proxy, "type", r.Type, "parent_taskid", r.ParentTaskID, "suppressed", n)
			}
			continue
		}
		s.pm.tasks["result/ok"].Inc()
	}
	return nil
}
