package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/peregrine-mon/peregrine/internal/zbx"
)

// PollTarget is a real Zabbix server for `bench poll --target`: its
// pollers poll the same simulated agents, configured through its API.
type PollTarget struct {
	Name     string // label in the report ("zabbix")
	APIURL   string
	Trapper  string // the server's port, for queue.get
	User     string
	Password string
	// ConfigDelay is how long the server takes to load new items
	// (Zabbix: CacheUpdateFrequency); added to the default warm-up.
	ConfigDelay time.Duration
}

// pollGroup is the host group of the bench's hosts on a real server.
const pollGroup = "peregrine-bench-poll"

// zabbixPoll holds what a run against a real server keeps between
// steps.
type zabbixPoll struct {
	t       *PollTarget
	api     *APIClient
	cpu     ServerCPU
	groupID string
	hostIDs []string
}

func (b *PollBench) startZabbix(ctx context.Context) (*zabbixPoll, error) {
	t := b.Target
	z := &zabbixPoll{t: t, api: NewAPIClient(t.APIURL, 5*time.Minute)}
	if err := z.api.Login(ctx, t.User, t.Password); err != nil {
		return nil, fmt.Errorf("cannot log in to %s (check --user and --password): %w", t.APIURL, err)
	}
	if _, p, err := net.SplitHostPort(t.Trapper); err == nil {
		if n, err := strconv.Atoi(p); err == nil {
			z.cpu = ServerCPU{PIDs: ListeningPIDs(n)}
		}
	}
	var groups []struct {
		GroupID string `json:"groupid"`
	}
	if err := z.api.Call(ctx, "hostgroup.get", map[string]any{"filter": map[string]any{"name": []string{pollGroup}}, "output": []string{"groupid"}}, &groups); err != nil {
		return nil, err
	}
	if len(groups) > 0 {
		// Left by an interrupted run: its hosts would be polled too.
		return nil, fmt.Errorf("host group %q exists on %s: delete it and its hosts first (left by an interrupted run?)", pollGroup, t.APIURL)
	}
	var r struct {
		GroupIDs []string `json:"groupids"`
	}
	if err := z.api.Call(ctx, "hostgroup.create", map[string]any{"name": pollGroup}, &r); err != nil {
		return nil, err
	}
	if len(r.GroupIDs) != 1 {
		return nil, errors.New("hostgroup.create returned no id")
	}
	z.groupID = r.GroupIDs[0]
	return z, nil
}

// provision creates hosts [from, to), each with an agent interface on
// its simulated agent and ItemsPerHost passive agent items, as
// PollBench.provision does in Peregrine's catalog.
func (z *zabbixPoll) provision(ctx context.Context, b *PollBench, from, to int, addrs []string) error {
	delay := strconv.Itoa(int(b.Interval/time.Second)) + "s"
	for lo := from; lo < to; lo += 40 {
		hi := min(to, lo+40)
		var hosts []map[string]any
		for h := lo; h < hi; h++ {
			ip, port, _ := strings.Cut(addrs[h%len(addrs)], ":")
			hosts = append(hosts, map[string]any{
				"host": fmt.Sprintf("pb-poll-%06d", h), "groups": []map[string]string{{"groupid": z.groupID}},
				"interfaces": []map[string]any{{"type": 1, "main": 1, "useip": 1, "ip": ip, "dns": "", "port": port}},
			})
		}
		var hr struct {
			HostIDs []string `json:"hostids"`
		}
		if err := z.api.Call(ctx, "host.create", hosts, &hr); err != nil {
			return fmt.Errorf("cannot create the bench hosts: %w", err)
		}
		if len(hr.HostIDs) != hi-lo {
			return fmt.Errorf("host.create returned %d ids for %d hosts", len(hr.HostIDs), hi-lo)
		}
		z.hostIDs = append(z.hostIDs, hr.HostIDs...)
		var ifaces []struct {
			HostID      string `json:"hostid"`
			InterfaceID string `json:"interfaceid"`
		}
		if err := z.api.Call(ctx, "hostinterface.get", map[string]any{"hostids": hr.HostIDs, "output": []string{"hostid", "interfaceid"}}, &ifaces); err != nil {
			return err
		}
		ifaceOf := map[string]string{}
		for _, i := range ifaces {
			ifaceOf[i.HostID] = i.InterfaceID
		}
		var items []map[string]any
		for _, hid := range hr.HostIDs {
			for i := 0; i < b.ItemsPerHost; i++ {
				items = append(items, map[string]any{"hostid": hid, "interfaceid": ifaceOf[hid], "name": "bench item " + strconv.Itoa(i),
					"key_": "bench.item[" + strconv.Itoa(i) + "]", "type": 0, "value_type": 3, "delay": delay, "history": "1h", "trends": "0"})
			}
		}
		if err := z.api.Call(ctx, "item.create", items, nil); err != nil {
			return fmt.Errorf("cannot create the bench items: %w", err)
		}
	}
	return nil
}

// queue is the server's count of items overdue by more than 5 s
// (queue.get "overview", what the frontend's Queue page shows), asked
// on the server's port with the API session as sid.
func (z *zabbixPoll) queue(ctx context.Context) (int64, error) {
	req, _ := json.Marshal(map[string]string{"request": "queue.get", "sid": z.api.token, "type": "overview"})
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "tcp", z.t.Trapper)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(zbx.AppendFrame(nil, req, zbx.FlagProtocol)); err != nil {
		return 0, err
	}
	_, payload, err := zbx.NewReader(c, zbx.ReaderOptions{MaxSize: 16 << 20}).ReadFrame()
	if err != nil {
		return 0, fmt.Errorf("queue.get: %w", err)
	}
	return parseQueue(payload)
}

// parseQueue sums the delay buckets of a queue.get "overview" reply:
// {"response":"success","data":[{"itemtype":0,"delay5":N,...}]}.
func parseQueue(payload []byte) (int64, error) {
	var r struct {
		Response string                       `json:"response"`
		Info     string                       `json:"info"`
		Data     []map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(payload, &r); err != nil {
		return 0, fmt.Errorf("queue.get reply %.100q: %w", payload, err)
	}
	if r.Response != "success" {
		return 0, fmt.Errorf("queue.get: %s %s", r.Response, r.Info)
	}
	var n int64
	for _, row := range r.Data {
		for k, v := range row {
			if !strings.HasPrefix(k, "delay") {
				continue
			}
			c, err := strconv.ParseInt(strings.Trim(string(v), `"`), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("queue.get: %s is %s", k, v)
			}
			n += c
		}
	}
	return n, nil
}

// measure samples one window: checks answered at the agents (the
// counter both targets share), the server's CPU and its queue.
func (z *zabbixPoll) measure(ctx context.Context, b *PollBench, agents *agentsProc) (pollStep, error) {
	var r pollStep
	a0, err := agents.count()
	if err != nil {
		return r, err
	}
	s0, t0 := z.cpu.Sample(), time.Now()
	ag0 := agents.cpu()
	select {
	case <-time.After(b.Window):
	case <-ctx.Done():
		return r, ctx.Err()
	}
	a1, err := agents.count()
	if err != nil {
		return r, err
	}
	wall := time.Since(t0).Seconds()
	cpu := (z.cpu.Sample() - s0).Seconds()
	r.atAgents = float64(a1-a0) / wall
	r.done = r.atAgents
	r.cpu = cpu / wall
	if a1 > a0 {
		r.perCheck = cpu / float64(a1-a0)
	}
	r.agentsCPU = (agents.cpu() - ag0).Seconds() / wall
	r.peak, r.p50, r.p99 = math.NaN(), math.NaN(), math.NaN()
	q, err := z.queue(ctx)
	if err != nil {
		return r, err
	}
	r.queue = float64(q)
	return r, nil
}

// cleanup deletes the bench's hosts (their items go with them) and
// group, leaving the server as it was found.
func (z *zabbixPoll) cleanup(ctx context.Context) error {
	return Cleanup(ctx, z.api, Provisioned{GroupID: z.groupID, HostIDs: z.hostIDs})
}
