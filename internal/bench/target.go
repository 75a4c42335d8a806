package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Target is a server speaking the Zabbix protocols: Peregrine or a real
// Zabbix server with its frontend's API.
type Target struct {
	Name     string // label in reports ("peregrine", "zabbix")
	APIURL   string // http://127.0.0.1:8080/api_jsonrpc.php
	Trapper  string // 127.0.0.1:10051
	User     string
	Password string
	// ServerCPU is the set of local processes whose CPU is reported as the
	// server's.
	ServerCPU ServerCPU
	Sender    Sender
}

// ReadPassword returns the contents of a password file without the
// trailing newline.
func ReadPassword(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the password file (set --password-file): %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// DiscoverServerCPU finds the local processes listening on the target's
// trapper and API ports plus extra ports (a database).
func DiscoverServerCPU(t *Target, extraPorts []int) ServerCPU {
	var ports []int
	if _, p, err := net.SplitHostPort(t.Trapper); err == nil {
		if n, err := strconv.Atoi(p); err == nil {
			ports = append(ports, n)
		}
	}
	if u, err := url.Parse(t.APIURL); err == nil {
		p := u.Port()
		if p == "" {
			p = "80"
		}
		if n, err := strconv.Atoi(p); err == nil {
			ports = append(ports, n)
		}
	}
	ports = append(ports, extraPorts...)
	var sc ServerCPU
	seen := map[int]bool{}
	for _, p := range ports {
		for _, pid := range ListeningPIDs(p) {
			if !seen[pid] {
				seen[pid] = true
				sc.PIDs = append(sc.PIDs, pid)
				if pid == os.Getpid() {
					sc.Self = true
				}
			}
		}
	}
	return sc
}

// Layout is a set of bench hosts in one group, each with the same float
// trapper items.
type Layout struct {
	Group        string
	HostPrefix   string // host i is HostPrefix + i
	Hosts        int
	ItemsPerHost int
	KeyPrefix    string // key j is KeyPrefix + j
	// ValueType is the items' value_type (0 float, the default; bench
	// preprocess's JSON masters are 4, text).
	ValueType int
	// Steps, if set, is every item's "preprocessing" (Zabbix 6.0's
	// objects: type, params, error_handler, error_handler_params).
	Steps []map[string]string
	// Template, if set, is the name of a template (in Group) that holds
	// the items; every host is linked to it, so the items the trapper
	// takes are inherited copies, as a real estate's are.
	Template string
}

// HostName is host i's technical name.
func (l Layout) HostName(i int) string { return l.HostPrefix + strconv.Itoa(i) }

// Key is item j's key.
func (l Layout) Key(j int) string { return l.KeyPrefix + strconv.Itoa(j) }

// ItemSet is the first hosts hosts with all their items.
func (l Layout) ItemSet(hosts int) ItemSet {
	s := ItemSet{Hosts: make([]string, hosts), Keys: make([]string, l.ItemsPerHost)}
	for i := range s.Hosts {
		s.Hosts[i] = l.HostName(i)
	}
	for j := range s.Keys {
		s.Keys[j] = l.Key(j)
	}
	return s
}

// Provisioned is what Provision created or found.
type Provisioned struct {
	GroupID      string
	TemplateID   string   // Layout.Template's id, if set
	HostIDs      []string // by host index
	CreatedItems int
	Elapsed      time.Duration
}

const itemBatch = 2000

// Provision makes sure the layout's group, hosts and items exist through
// the API (hostgroup.create, host.create, item.create with type 2
// trapper and value_type 0 float), reusing what is already there, and
// waits until the trapper accepts values for them: Zabbix reads new items
// into its configuration cache only every CacheUpdateFrequency seconds.
func Provision(ctx context.Context, c *APIClient, t *Target, l Layout, status func(string)) (Provisioned, error) {
	start := time.Now()
	var p Provisioned
	var groups []struct {
		GroupID string `json:"groupid"`
	}
	if err := c.Call(ctx, "hostgroup.get", map[string]any{"filter": map[string]any{"name": []string{l.Group}}, "output": []string{"groupid"}}, &groups); err != nil {
		return p, err
	}
	if len(groups) > 0 {
		p.GroupID = groups[0].GroupID
	} else {
		var r struct {
			GroupIDs []string `json:"groupids"`
		}
		if err := c.Call(ctx, "hostgroup.create", map[string]any{"name": l.Group}, &r); err != nil {
			return p, err
		}
		if len(r.GroupIDs) != 1 {
			return p, errors.New("hostgroup.create returned no id")
		}
		p.GroupID = r.GroupIDs[0]
	}
	if l.Template != "" {
		id, err := provisionTemplate(ctx, c, l.Template, p.GroupID)
		if err != nil {
			return p, err
		}
		p.TemplateID = id
	}
	names := make([]string, l.Hosts)
	for i := range names {
		names[i] = l.HostName(i)
	}
	var hosts []struct {
		HostID string `json:"hostid"`
		Host   string `json:"host"`
	}
	if err := c.Call(ctx, "host.get", map[string]any{"filter": map[string]any{"host": names}, "output": []string{"hostid", "host"}}, &hosts); err != nil {
		return p, err
	}
	byName := map[string]string{}
	for _, h := range hosts {
		byName[h.Host] = h.HostID
	}
	p.HostIDs = make([]string, l.Hosts)
	var missing []int
	for i, n := range names {
		if id, ok := byName[n]; ok {
			p.HostIDs[i] = id
		} else {
			missing = append(missing, i)
		}
	}
	group := []map[string]string{{"groupid": p.GroupID}}
	for len(missing) > 0 {
		batch := missing[:min(len(missing), 100)]
		missing = missing[len(batch):]
		req := make([]map[string]any, len(batch))
		for k, i := range batch {
			req[k] = map[string]any{"host": names[i], "groups": group}
			if p.TemplateID != "" {
				req[k]["templates"] = []map[string]string{{"templateid": p.TemplateID}}
			}
		}
		var r struct {
			HostIDs []string `json:"hostids"`
		}
		if err := c.Call(ctx, "host.create", req, &r); err != nil {
			return p, err
		}
		if len(r.HostIDs) != len(batch) {
			return p, fmt.Errorf("host.create returned %d ids for %d hosts", len(r.HostIDs), len(batch))
		}
		for k, i := range batch {
			p.HostIDs[i] = r.HostIDs[k]
		}
	}
	if err := linkTemplate(ctx, c, p); err != nil {
		return p, err
	}
	// Items: find the keys each owner (every host, or the one template)
	// already has, create the others.
	owners := p.HostIDs
	if p.TemplateID != "" {
		owners = []string{p.TemplateID}
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
		p.CreatedItems += len(pending)
		pending = pending[:0]
		if status != nil {
			status(fmt.Sprintf("created %d items", p.CreatedItems))
		}
		return nil
	}
	for lo := 0; lo < len(owners); lo += 100 {
		hi := min(len(owners), lo+100)
		var items []struct {
			HostID string `json:"hostid"`
			Key    string `json:"key_"`
		}
		if err := c.Call(ctx, "item.get", map[string]any{"hostids": owners[lo:hi], "output": []string{"hostid", "key_"}}, &items); err != nil {
			return p, err
		}
		have := map[string]bool{}
		for _, it := range items {
			have[it.HostID+"\x00"+it.Key] = true
		}
		for i := lo; i < hi; i++ {
			for j := 0; j < l.ItemsPerHost; j++ {
				k := l.Key(j)
				if have[owners[i]+"\x00"+k] {
					continue
				}
				it := map[string]any{
					"hostid": owners[i], "name": k, "key_": k, "type": 2, "value_type": l.ValueType,
					"history": "90d", "trends": "0",
				}
				if l.Steps != nil {
					it["preprocessing"] = l.Steps
				}
				pending = append(pending, it)
				if len(pending) == itemBatch {
					if err := flush(); err != nil {
						return p, err
					}
				}
			}
		}
	}
	if err := flush(); err != nil {
		return p, err
	}
	if err := waitAccepted(ctx, t, l, status); err != nil {
		return p, err
	}
	p.Elapsed = time.Since(start)
	return p, nil
}

// provisionTemplate finds or creates the template named name in group
// groupid and returns its id.
func provisionTemplate(ctx context.Context, c *APIClient, name, groupid string) (string, error) {
	var found []struct {
		TemplateID string `json:"templateid"`
	}
	if err := c.Call(ctx, "template.get", map[string]any{"filter": map[string]any{"host": []string{name}}, "output": []string{"templateid"}}, &found); err != nil {
		return "", err
	}
	if len(found) > 0 {
		return found[0].TemplateID, nil
	}
	var r struct {
		TemplateIDs []string `json:"templateids"`
	}
	if err := c.Call(ctx, "template.create", map[string]any{"host": name, "groups": []map[string]string{{"groupid": groupid}}}, &r); err != nil {
		return "", err
	}
	if len(r.TemplateIDs) != 1 {
		return "", errors.New("template.create returned no id")
	}
	return r.TemplateIDs[0], nil
}

// linkTemplate links p's template to those of its hosts (made by an
// earlier run without it) that are not linked yet.
func linkTemplate(ctx context.Context, c *APIClient, p Provisioned) error {
	if p.TemplateID == "" {
		return nil
	}
	var linked []struct {
		HostID string `json:"hostid"`
	}
	if err := c.Call(ctx, "host.get", map[string]any{"hostids": p.HostIDs, "templateids": []string{p.TemplateID}, "output": []string{"hostid"}}, &linked); err != nil {
		return err
	}
	done := make(map[string]bool, len(linked))
	for _, h := range linked {
		done[h.HostID] = true
	}
	var todo []map[string]string
	for _, id := range p.HostIDs {
		if !done[id] {
			todo = append(todo, map[string]string{"hostid": id})
		}
	}
	for lo := 0; lo < len(todo); lo += 100 {
		req := map[string]any{"hosts": todo[lo:min(len(todo), lo+100)], "templates": []map[string]string{{"templateid": p.TemplateID}}}
		if err := c.Call(ctx, "host.massadd", req, nil); err != nil {
			return err
		}
	}
	return nil
}

// probeClock is the clock of the probe values sent while waiting for the
// server to know new items: far before every measured range.
const probeClock = 1_000_000_000

// waitAccepted sends one value to the last item of every host (clock in
// 2001, outside every measured range) until all are processed.
func waitAccepted(ctx context.Context, t *Target, l Layout, status func(string)) error {
	items := ItemSet{Keys: []string{l.Key(l.ItemsPerHost - 1)}}
	for i := 0; i < l.Hosts; i++ {
		items.Hosts = append(items.Hosts, l.HostName(i))
	}
	s := t.Sender
	s.Conns = 1
	deadline := time.Now().Add(3 * time.Minute)
	for attempt := 0; ; attempt++ {
		res, err := s.Send(ctx, SendPlan{Items: items, StartClock: probeClock + int64(attempt), Rounds: 1, PacketValues: 1000}, nil)
		if err != nil {
			return err
		}
		if res.Errors == 0 && res.Failed == 0 && res.Processed == int64(l.Hosts) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the trapper at %s still refuses values for the new items after 3 minutes (processed %d of %d, first error %v)", t.Trapper, res.Processed, l.Hosts, res.FirstErr)
		}
		if status != nil {
			status(fmt.Sprintf("waiting for the server to load the new items (%d of %d hosts accepted)", res.Processed, l.Hosts))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// Cleanup deletes the layout's hosts (their items go with them) and the
// group.
func Cleanup(ctx context.Context, c *APIClient, p Provisioned) error {
	for lo := 0; lo < len(p.HostIDs); lo += 100 {
		if err := c.Call(ctx, "host.delete", p.HostIDs[lo:min(len(p.HostIDs), lo+100)], nil); err != nil {
			return err
		}
	}
	if p.TemplateID != "" {
		// The template goes when no other host is linked to it.
		var linked []struct {
			HostID string `json:"hostid"`
		}
		if err := c.Call(ctx, "host.get", map[string]any{"templateids": []string{p.TemplateID}, "output": []string{"hostid"}}, &linked); err != nil {
			return err
		}
		if len(linked) == 0 {
			if err := c.Call(ctx, "template.delete", []string{p.TemplateID}, nil); err != nil {
				return err
			}
		}
	}
	if p.GroupID == "" {
		return nil
	}
	// The group goes only when no other host is left in it (another
	// scenario's hosts kept with --keep, or a host added by hand).
	var left []struct {
		HostID string `json:"hostid"`
	}
	if err := c.Call(ctx, "host.get", map[string]any{"groupids": []string{p.GroupID}, "output": []string{"hostid"}}, &left); err != nil {
		return err
	}
	if len(left) > 0 {
		return nil
	}
	return c.Call(ctx, "hostgroup.delete", []string{p.GroupID}, nil)
}

// ItemID looks up one item's id.
func ItemID(ctx context.Context, c *APIClient, hostid, key string) (string, error) {
	var items []struct {
		ItemID string `json:"itemid"`
	}
	if err := c.Call(ctx, "item.get", map[string]any{"hostids": []string{hostid}, "filter": map[string]any{"key_": []string{key}}, "output": []string{"itemid"}}, &items); err != nil {
		return "", err
	}
	if len(items) != 1 {
		return "", fmt.Errorf("item %q on host %s: found %d", key, hostid, len(items))
	}
	return items[0].ItemID, nil
}

// Counter counts readable values (one history.get countOutput call).
type Counter func(ctx context.Context) (int64, error)

// WaitCount polls count until it reaches want, stops growing for stall,
// or timeout passes. It returns the last count, the time the call that
// first returned it ended (when a reader had them all: the method's
// "time until history.get returns them"), and that call's duration (a
// slow count call delays the figure by up to that much).
func WaitCount(ctx context.Context, count Counter, want int64, poll, stall, timeout time.Duration, tick func(int64)) (n int64, at time.Time, call time.Duration, err error) {
	start := time.Now()
	last, lastChange := int64(-1), time.Now()
	at = start
	for {
		t0 := time.Now()
		got, err := count(ctx)
		if err != nil {
			return n, at, call, err
		}
		now := time.Now()
		if got != last {
			last, lastChange, at, call = got, now, now, now.Sub(t0)
		}
		n = got
		if tick != nil {
			tick(n)
		}
		if n >= want || now.Sub(lastChange) >= stall || now.Sub(start) >= timeout {
			return n, at, call, nil
		}
		select {
		case <-ctx.Done():
			return n, at, call, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// ItemIDsByHost returns, per host id, the item ids of the layout's keys
// in key order.
func ItemIDsByHost(ctx context.Context, c *APIClient, hostids []string, l Layout) (map[string][]string, error) {
	var items []struct {
		ItemID string `json:"itemid"`
		HostID string `json:"hostid"`
		Key    string `json:"key_"`
	}
	if err := c.Call(ctx, "item.get", map[string]any{"hostids": hostids, "output": []string{"itemid", "hostid", "key_"}}, &items); err != nil {
		return nil, err
	}
	pos := map[string]int{}
	for j := 0; j < l.ItemsPerHost; j++ {
		pos[l.Key(j)] = j
	}
	out := map[string][]string{}
	for _, h := range hostids {
		out[h] = make([]string, l.ItemsPerHost)
	}
	for _, it := range items {
		j, ok := pos[it.Key]
		if ids, okh := out[it.HostID]; ok && okh {
			ids[j] = it.ItemID
		}
	}
	for h, ids := range out {
		for j, id := range ids {
			if id == "" {
				return nil, fmt.Errorf("host %s has no item %q", h, l.Key(j))
			}
		}
	}
	return out, nil
}
