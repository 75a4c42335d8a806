package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
)

// Checks measures a server's own pollers through the API, the way the
// trapper scenarios measure its ingest: it creates hosts with items of
// one polled type (ICMP simple checks, SNMP, external checks), lets the
// server poll them, and reads what it stored back with history.get. It
// exists for the side-by-side runs against Zabbix 6.0 (bench icmp
// --zabbix-target, bench checks), where nothing but the API and the
// devices polled can observe the server. Two measurements:
//
//   - sweep: every item made due at once ("Execute now": task.create
//     type 6, batches of 1,000), then the time until every item has a
//     value clocked after the request, and each value's clock after the
//     request (p50/p99). Items have a 1-day delay (Zabbix's maximum) so
//     that their own schedule adds about one value per item per day.
//   - rate: items on a --delay schedule; after a warm-up, the values
//     stored per second of a window, against the ideal (items / delay),
//     and, for SNMP, the OIDs the devices answered in that window.
type Checks struct {
	Group string
	Hosts []CheckHost
	// History is history.get's "history" (value type) of every item.
	History int
	// Expect, if set, checks a value of the sweep (item index, value):
	// an empty string is right; otherwise it says what is wrong.
	Expect func(item int, value string) string
	Log    io.Writer
}

// CheckHost is one host to create: its interface and its items.
type CheckHost struct {
	Name  string
	Iface CheckIface
	Items []CheckItem
}

// CheckIface is a host interface (hostinterface object of 6.0).
type CheckIface struct {
	Type    int               // 1 agent, 2 SNMP
	IP      string            // address
	Port    string            // port
	Details map[string]string // SNMP: version, community, bulk
}

// CheckItem is one item: key, type, value type, SNMP OID and delay;
// for SSH items their command and login, a database monitor item's query
// and login.
type CheckItem struct {
	Key       string
	Type      int
	ValueType int
	OID       string
	Delay     string
	// Params, Username, Password: an SSH item's command and login, a
	// database monitor item's query and login.
	Params, Username, Password string
}

// checkSet is what Provision made.
type checkSet struct {
	groupID string
	hostIDs []string
	itemIDs []string // in the order of Hosts' items
	index   map[string]int
}

// Provision creates the group, the hosts with their interface and the
// items (host.create, hostinterface.get, item.create in batches).
func (k *Checks) provision(ctx context.Context, c *APIClient) (*checkSet, error) {
	s := &checkSet{index: map[string]int{}}
	var g struct {
		GroupIDs []string `json:"groupids"`
	}
	if err := c.Call(ctx, "hostgroup.create", map[string]any{"name": k.Group}, &g); err != nil {
		return nil, fmt.Errorf("cannot create the host group %q (delete it if a run left it): %w", k.Group, err)
	}
	s.groupID = g.GroupIDs[0]
	group := []map[string]string{{"groupid": s.groupID}}
	for lo := 0; lo < len(k.Hosts); lo += 100 {
		batch := k.Hosts[lo:min(len(k.Hosts), lo+100)]
		req := make([]map[string]any, len(batch))
		for i, h := range batch {
			iface := map[string]any{"type": h.Iface.Type, "main": 1, "useip": 1, "ip": h.Iface.IP, "dns": "", "port": h.Iface.Port}
			if h.Iface.Details != nil {
				iface["details"] = h.Iface.Details
			}
			req[i] = map[string]any{"host": h.Name, "groups": group, "interfaces": []any{iface}}
		}
		var r struct {
			HostIDs []string `json:"hostids"`
		}
		if err := c.Call(ctx, "host.create", req, &r); err != nil {
			return s, err
		}
		if len(r.HostIDs) != len(batch) {
			return s, fmt.Errorf("host.create returned %d ids for %d hosts", len(r.HostIDs), len(batch))
		}
		s.hostIDs = append(s.hostIDs, r.HostIDs...)
	}
	var ifaces []struct {
		HostID      string `json:"hostid"`
		InterfaceID string `json:"interfaceid"`
	}
	if err := c.Call(ctx, "hostinterface.get", map[string]any{"hostids": s.hostIDs, "output": []string{"hostid", "interfaceid"}}, &ifaces); err != nil {
		return s, err
	}
	ifaceOf := map[string]string{}
	for _, f := range ifaces {
		ifaceOf[f.HostID] = f.InterfaceID
	}
	var pending []map[string]any
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		var r struct {
			ItemIDs []string `json:"itemids"`
		}
		if err := c.Call(ctx, "item.create", pending, &r); err != nil {
			return err
		}
		if len(r.ItemIDs) != len(pending) {
			return fmt.Errorf("item.create returned %d ids for %d items", len(r.ItemIDs), len(pending))
		}
		for _, id := range r.ItemIDs {
			s.index[id] = len(s.itemIDs)
			s.itemIDs = append(s.itemIDs, id)
		}
		pending = pending[:0]
		fmt.Fprintf(k.Log, "checks: created %d items\n", len(s.itemIDs))
		return nil
	}
	for i, h := range k.Hosts {
		for _, it := range h.Items {
			m := map[string]any{"hostid": s.hostIDs[i], "interfaceid": ifaceOf[s.hostIDs[i]], "name": it.Key, "key_": it.Key,
				"type": it.Type, "value_type": it.ValueType, "delay": it.Delay, "history": "1d", "trends": "0"}
			if it.OID != "" {
				m["snmp_oid"] = it.OID
			}
			for k, v := range map[string]string{"params": it.Params, "username": it.Username, "password": it.Password} {
				if v != "" {
					m[k] = v
				}
			}
			pending = append(pending, m)
			if len(pending) == 1000 {
				if err := flush(); err != nil {
					return s, err
				}
			}
		}
	}
	return s, flush()
}

// cleanup deletes what provision made.
func (k *Checks) cleanup(c *APIClient, s *checkSet) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for lo := 0; lo < len(s.hostIDs); lo += 500 {
		if err := c.Call(ctx, "host.delete", s.hostIDs[lo:min(len(s.hostIDs), lo+500)], nil); err != nil {
			return fmt.Errorf("cannot delete the bench hosts: %w", err)
		}
	}
	if s.groupID != "" {
		if err := c.Call(ctx, "hostgroup.delete", []string{s.groupID}, nil); err != nil {
			return fmt.Errorf("cannot delete the bench host group: %w", err)
		}
	}
	return nil
}

// SweepResult is one sweep: every item due at once.
type SweepResult struct {
	Items    int
	Values   int           // values clocked after the request, one per item expected
	Requests time.Duration // the task.create calls
	First    time.Duration // request → first value's clock
	All      time.Duration // request → last value's clock (when every item has one)
	P50, P99 time.Duration // request → value clock, over the items
	Missing  int           // items without a value at the timeout
	Wrong    int           // values Expect refused
	Example  string        // the first refused value, with the reason
	// DeviceOIDs, DeviceRequests: what the simulated devices answered
	// during the sweep (SNMP; 0 otherwise).
	DeviceOIDs, DeviceRequests uint64
	// ServerCPU and DBCPU: the CPU the server's processes and the
	// database's (ODBC) used during the sweep, when measured.
	ServerCPU, DBCPU time.Duration
	CPUMeasured      bool
}

// historyRow is one history.get row.
type historyRow struct {
	ItemID string `json:"itemid"`
	Clock  string `json:"clock"`
	NS     string `json:"ns"`
	Value  string `json:"value"`
}

// sweep makes every item due now and waits (up to timeout) until each
// has a value clocked after the request.
func (k *Checks) sweep(ctx context.Context, c *APIClient, s *checkSet, timeout time.Duration) (SweepResult, error) {
	r := SweepResult{Items: len(s.itemIDs)}
	// Start on a whole second: history.get selects by whole seconds, and
	// no value of an earlier round may fall in this one's range.
	t0 := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(t0))
	for lo := 0; lo < len(s.itemIDs); lo += 1000 {
		ids := s.itemIDs[lo:min(len(s.itemIDs), lo+1000)]
		tasks := make([]map[string]any, len(ids))
		for i, id := range ids {
			tasks[i] = map[string]any{"type": 6, "request": map[string]string{"itemid": id}}
		}
		if err := c.Call(ctx, "task.create", tasks, nil); err != nil {
			return r, err
		}
	}
	r.Requests = time.Since(t0)
	from := t0.Unix()
	deadline := time.Now().Add(timeout)
	for {
		n, err := c.historyCountType(ctx, k.History, s.itemIDs, from, math.MaxInt32)
		if err != nil {
			return r, err
		}
		if n >= int64(len(s.itemIDs)) || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	var rows []historyRow
	if err := c.Call(ctx, "history.get", map[string]any{"itemids": s.itemIDs, "history": k.History, "time_from": from,
		"output": []string{"itemid", "clock", "ns", "value"}}, &rows); err != nil {
		return r, err
	}
	k.score(&r, s, t0, rows)
	return r, nil
}

// score fills r from the sweep's rows: each item's first value after t0.
func (k *Checks) score(r *SweepResult, s *checkSet, t0 time.Time, rows []historyRow) {
	first := map[int]historyRow{}
	at := func(h historyRow) time.Time {
		sec, _ := strconv.ParseInt(h.Clock, 10, 64)
		ns, _ := strconv.ParseInt(h.NS, 10, 64)
		return time.Unix(sec, ns)
	}
	for _, h := range rows {
		i, ok := s.index[h.ItemID]
		if !ok {
			continue
		}
		if f, seen := first[i]; !seen || at(h).Before(at(f)) {
			first[i] = h
		}
	}
	r.Values = len(rows)
	r.Missing = len(s.itemIDs) - len(first)
	lat := make([]time.Duration, 0, len(first))
	for i, h := range first {
		lat = append(lat, at(h).Sub(t0))
		if k.Expect != nil {
			if why := k.Expect(i, h.Value); why != "" {
				if r.Wrong++; r.Example == "" {
					r.Example = why
				}
			}
		}
	}
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	r.First, r.All = lat[0], lat[len(lat)-1]
	r.P50, r.P99 = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
}

// rate counts the values stored with clock in [from, till) per second.
func (k *Checks) rate(ctx context.Context, c *APIClient, s *checkSet, from, till time.Time) (float64, error) {
	n, err := c.historyCountType(ctx, k.History, s.itemIDs, from.Unix(), till.Unix()-1)
	if err != nil {
		return 0, err
	}
	return float64(n) / till.Sub(from).Seconds(), nil
}

// historyCountType is HistoryCountItems for any value type.
func (c *APIClient) historyCountType(ctx context.Context, history int, itemids []string, from, till int64) (int64, error) {
	var n flexCount
	err := c.Call(ctx, "history.get", map[string]any{
		"itemids": itemids, "history": history, "countOutput": true,
		"time_from": from, "time_till": till,
	}, &n)
	return int64(n), err
}

// sweepRow is a sweep as a table row and a CSV row.
func sweepRow(target string, round int, r SweepResult) (table, csv []string) {
	rate := 0.0
	if r.All > 0 {
		rate = float64(r.Items-r.Missing) / r.All.Seconds()
	}
	srvCPU, dbCPU := perCheckMS(r.ServerCPU, r.Items-r.Missing, r.CPUMeasured), perCheckMS(r.DBCPU, r.Items-r.Missing, r.CPUMeasured)
	table = []string{target, strconv.Itoa(round), human(float64(r.Items)), secs(r.All.Seconds()), secs(r.P50.Seconds()), secs(r.P99.Seconds()),
		human(rate), strconv.Itoa(r.Missing), strconv.Itoa(r.Wrong), human(float64(r.DeviceOIDs)), human(float64(r.DeviceRequests)), msOrDash(srvCPU), msOrDash(dbCPU)}
	csv = []string{target, strconv.Itoa(round), fi(int64(r.Items)), f(r.All.Seconds()), f(r.P50.Seconds()), f(r.P99.Seconds()), f(rate),
		fi(int64(r.Missing)), fi(int64(r.Wrong)), f(r.First.Seconds()), f(r.Requests.Seconds()), fi(int64(r.DeviceOIDs)), fi(int64(r.DeviceRequests)), f(srvCPU), f(dbCPU)}
	return table, csv
}

// perCheckMS is CPU per check in milliseconds (-1 when not measured).
func perCheckMS(cpu time.Duration, checks int, measured bool) float64 {
	if !measured || checks <= 0 {
		return -1
	}
	return cpu.Seconds() * 1000 / float64(checks)
}

func msOrDash(v float64) string {
	if v < 0 {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', 3, 64) + " ms"
}

// SweepColumns is the CSV header of sweep rows.
var SweepColumns = []string{"target", "round", "checks", "sweep_s", "p50_s", "p99_s", "checks_per_s", "missing", "wrong", "first_s", "request_s", "device_oids", "device_requests",
	"server_cpu_ms_per_check", "db_cpu_ms_per_check"}

// sweepHeader is the table header of sweep rows.
var sweepHeader = []string{"target", "round", "checks", "all done after", "p50", "p99", "checks/s", "missing", "wrong", "device OIDs", "device requests", "server CPU/check", "DB CPU/check"}
