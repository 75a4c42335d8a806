package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/peregrine-mon/peregrine/internal/api"
	"github.com/peregrine-mon/peregrine/internal/auth"
	"github.com/peregrine-mon/peregrine/internal/ha"
	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// The queue on an HA standby (docs/ha.md). The queue is the active
// node's poller's, in its memory; Zabbix 6.0's frontends, on any machine,
// show it by asking the active node found in ha_node at its NodeAddress
// with the frontend's request "queue.get" on the trapper port, carrying
// the user's session. A Peregrine standby does the same: its queue.get
// asks the active node's trapper (ha.node_address) with the caller's
// session or token, and the active node answers as 6.0.14 does
// (recorded from the peer: {"response":"success","data":[...],
// "total":n} for type "details"; "Permission denied." unless the secret
// opens a super admin's session or token).

// queueRequest is the frontend request "queue.get".
type queueRequest struct {
	SID   string `json:"sid"`
	Type  string `json:"type"`
	Limit int    `json:"limit"`
}

// queueDetail is one check of the answer of type "details": 6.0's item
// ID and next check (Unix seconds), and Peregrine's lateness in
// milliseconds, which the standby's queue.get counts with.
type queueDetail struct {
	ItemID    string `json:"itemid"`
	NextCheck int64  `json:"nextcheck"`
	LateMs    int64  `json:"late_ms"`
}

// queueDenied is 6.0.14's answer to a request without a super admin's
// session or token.
const queueDenied = `{"response":"failed","info":"Permission denied."}`

// trapperQueue answers the trapper's "queue.get" (ingest.Options.Queue)
// on an active node with the poller's overdue checks, most overdue
// first; type "details" only (what a standby asks).
func (s *Server) trapperQueue(payload []byte) []byte {
	var req queueRequest
	if err := json.Unmarshal(payload, &req); err != nil || s.authStore == nil || s.Poller == nil {
		return []byte(queueDenied)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := s.authStore.Authenticate(ctx, req.SID)
	if err != nil || u.Role < auth.RoleSuperAdmin {
		return []byte(queueDenied)
	}
	if req.Type != "details" {
		return failedJSON("Peregrine answers queue.get of type \"details\" only.")
	}
	od := s.Poller.Overdue()
	now := time.Now()
	data := make([]queueDetail, 0, len(od))
	for _, c := range od {
		data = append(data, queueDetail{ItemID: strconv.FormatUint(c.ItemID, 10), NextCheck: now.Add(-time.Duration(c.Late) * time.Millisecond).Unix(), LateMs: c.Late})
	}
	total := len(data)
	if req.Limit > 0 && req.Limit < len(data) {
		data = data[:req.Limit]
	}
	b, _ := json.Marshal(struct {
		Response string        `json:"response"`
		Data     []queueDetail `json:"data"`
		Total    int           `json:"total"`
	}{"success", data, total})
	return b
}

func failedJSON(info string) []byte {
	b, _ := json.Marshal(struct {
		Response string `json:"response"`
		Info     string `json:"info"`
	}{"failed", info})
	return b
}

// standbyQueue is a standby's queue.get source: the active node's queue,
// asked for at its trapper address (api.QueueAsker).
type standbyQueue struct {
	s       *Server
	timeout time.Duration
}

// Overdue is never called: queue.get asks OverdueAs.
func (standbyQueue) Overdue() []api.OverdueCheck { return nil }

// OverdueAs asks the active node for its queue with the caller's
// session or token.
func (q standbyQueue) OverdueAs(ctx context.Context, secret string) ([]api.OverdueCheck, error) {
	ctx, cancel := context.WithTimeout(ctx, q.timeout)
	defer cancel()
	cl, err := q.s.node.Admin().Cluster(ctx)
	if err != nil {
		return nil, apiText(fmt.Sprintf("Cannot read the HA cluster's nodes to find the active node's queue: %v.", err))
	}
	addr := ""
	for _, n := range cl.Nodes {
		if n.Status == ha.StatusActive {
			addr = net.JoinHostPort(n.Address, strconv.Itoa(n.Port))
		}
	}
	if addr == "" {
		return nil, apiText("The HA cluster has no active node at the moment: the queue is the active node's poller's (a standby takes over within the failover delay).")
	}
	body, _ := json.Marshal(map[string]any{"request": "queue.get", "sid": secret, "type": "details"})
	reply, err := askTrapper(ctx, addr, body)
	if err != nil {
		return nil, apiText(fmt.Sprintf("Cannot read the active node's queue at %s: %v.", addr, err))
	}
	var r struct {
		Response string
		Info     string
		Data     []queueDetail
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		return nil, apiText(fmt.Sprintf("Cannot read the active node's queue at %s: %v.", addr, err))
	}
	if r.Response != "success" {
		if r.Info == "Permission denied." {
			return nil, apiText(fmt.Sprintf("The active node at %s gives its queue to super admins only (as Zabbix 6.0's server): %s", addr, r.Info))
		}
		return nil, apiText(fmt.Sprintf("The active node at %s refused its queue: %s", addr, r.Info))
	}
	out := make([]api.OverdueCheck, 0, len(r.Data))
	for _, d := range r.Data {
		id, err := strconv.ParseUint(d.ItemID, 10, 64)
		if err != nil {
			continue
		}
		out = append(out, api.OverdueCheck{ItemID: id, Late: d.LateMs})
	}
	return out, nil
}

// askTrapper sends one request to a Zabbix trapper port and returns
// its reply, bounded by ctx.
func askTrapper(ctx context.Context, addr string, payload []byte) ([]byte, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if err := zbx.WriteFrame(conn, payload, zbx.FlagProtocol, 0); err != nil {
		return nil, err
	}
	_, reply, err := zbx.NewReader(conn, zbx.ReaderOptions{MaxSize: 64 << 20}).ReadFrame()
	return reply, err
}
