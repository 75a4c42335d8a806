package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// LLDZabbix is bench lld's --target mode: the same host count linked to
// the same template on a real Zabbix 6.0 server, whose configuration
// syncer reports how long its cache sync took.
type LLDZabbix struct {
	URL, User, Password string
	TemplateName        string
	Prefix              string
	AgentPort           int
	Enabled             bool
	Hosts               []int // cumulative steps
	Log                 io.Writer
	// CleanupErr is set by Run when deleting what it created failed:
	// the figures it returns stand, the peer needs cleaning by hand.
	CleanupErr error
}

// LLDZabbixStep is one step's figures on the Zabbix server.
type LLDZabbixStep struct {
	Hosts int
	// Create is host.create's time for the step's new hosts (linking
	// included: Zabbix copies the template's items in the same call).
	Create time.Duration
	// SyncBefore is the syncer's last report before the step; Sync the
	// first sync that started after the hosts were created, SyncNext the
	// one after it (incremental, nothing new).
	SyncBefore, Sync, SyncNext float64
	Items                      int // the server's items on the step's hosts (item.get countOutput)
}

// LLDZabbixColumns is the CSV header of bench lld --target.
var LLDZabbixColumns = []string{"hosts", "create_s", "hosts_per_s", "items", "sync_before_s", "sync_s", "sync_next_s"}

func (s LLDZabbixStep) row() []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	return []string{strconv.Itoa(s.Hosts), f(s.Create.Seconds()), strconv.FormatFloat(float64(s.Hosts)/s.Create.Seconds(), 'f', 0, 64),
		strconv.Itoa(s.Items), f(s.SyncBefore), f(s.Sync), f(s.SyncNext)}
}

var syncerTitle = regexp.MustCompile(`configuration syncer \[synced configuration in ([0-9.]+) sec, idle ([0-9]+) sec\]`)

// errSyncing is syncerReport's answer while a sync runs (the title then
// says "syncing configuration").
var errSyncing = errors.New("syncing")

// syncerReport reads the configuration syncer's process title: the
// duration of its last sync. The server must run on this machine.
func syncerReport() (string, float64, error) {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte("configuration syncer")) {
			continue
		}
		if m := syncerTitle.FindSubmatch(b); m != nil {
			v, _ := strconv.ParseFloat(string(m[1]), 64)
			return string(m[0]), v, nil
		}
		return "", 0, errSyncing
	}
	return "", 0, errors.New("no Zabbix configuration syncer process on this machine (its title reports each sync)")
}

// lastSync is syncerReport waiting out a sync in progress.
func lastSync(ctx context.Context) (string, float64, error) {
	for {
		title, v, err := syncerReport()
		if err != errSyncing {
			return title, v, err
		}
		select {
		case <-ctx.Done():
			return "", 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// nextSync waits until the syncer's title changes from last (a sync
// ended) and returns it. Two syncs of equal duration look the same: the
// wait ends after 3 sync periods at most, returning the title as is.
func nextSync(ctx context.Context, last string) (string, float64, error) {
	deadline := time.Now().Add(65 * time.Second)
	for {
		title, v, err := syncerReport()
		if err == errSyncing {
			title, err = last, nil
		}
		if err != nil || title != last || time.Now().After(deadline) {
			return title, v, err
		}
		select {
		case <-ctx.Done():
			return "", 0, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Run creates the hosts step by step, measures, and deletes them all.
func (z *LLDZabbix) Run(ctx context.Context) (out []LLDZabbixStep, err error) {
	c := NewAPIClient(z.URL, 5*time.Minute)
	if err := c.Login(ctx, z.User, z.Password); err != nil {
		return nil, err
	}
	var tm []struct {
		TemplateID string `json:"templateid"`
	}
	if err := c.Call(ctx, "template.get", map[string]any{"filter": map[string]any{"host": z.TemplateName}, "output": []string{"templateid"}}, &tm); err != nil {
		return nil, err
	}
	if len(tm) != 1 {
		return nil, fmt.Errorf("template %q not found on %s", z.TemplateName, z.URL)
	}
	var g struct {
		IDs []string `json:"groupids"`
	}
	if err := c.Call(ctx, "hostgroup.create", map[string]any{"name": z.Prefix + "-bench-lld"}, &g); err != nil {
		return nil, err
	}
	var hostIDs []string
	defer func() {
		// Always clean up, even after a failure or an interrupt. Each call
		// has its own deadline (the client's): deleting 10,000 hosts from
		// a busy peer takes longer than any one bound on the whole. A
		// failed cleanup is reported as such (CleanupErr) and does not
		// discard what was measured.
		for from := 0; from < len(hostIDs); from += 100 {
			if e := c.Call(context.Background(), "host.delete", hostIDs[from:min(from+100, len(hostIDs))], nil); e != nil {
				z.CleanupErr = errors.Join(z.CleanupErr, fmt.Errorf("deleting hosts %d..: %w", from, e))
			}
			fmt.Fprintf(z.Log, "\r%d/%d hosts deleted", min(from+100, len(hostIDs)), len(hostIDs))
		}
		if e := c.Call(context.Background(), "hostgroup.delete", g.IDs, nil); e != nil {
			z.CleanupErr = errors.Join(z.CleanupErr, fmt.Errorf("deleting the group: %w", e))
		}
	}()
	status := 1
	if z.Enabled {
		status = 0
	}
	for _, n := range z.Hosts {
		st := LLDZabbixStep{Hosts: n}
		var title string
		if title, st.SyncBefore, err = lastSync(ctx); err != nil {
			return out, err
		}
		start := time.Now()
		for len(hostIDs) < n {
			batch := min(100, n-len(hostIDs))
			var hosts []map[string]any
			for i := len(hostIDs); i < len(hostIDs)+batch; i++ {
				hosts = append(hosts, map[string]any{"host": fmt.Sprintf("%s-%05d", z.Prefix, i), "status": status,
					"groups":     []any{map[string]any{"groupid": g.IDs[0]}},
					"templates":  []any{map[string]any{"templateid": tm[0].TemplateID}},
					"interfaces": []any{map[string]any{"type": 1, "main": 1, "useip": 1, "ip": "127.0.0.1", "dns": "", "port": strconv.Itoa(z.AgentPort)}}})
			}
			var res struct {
				IDs []string `json:"hostids"`
			}
			if err := c.Call(ctx, "host.create", hosts, &res); err != nil {
				return out, err
			}
			hostIDs = append(hostIDs, res.IDs...)
			fmt.Fprintf(z.Log, "\r%d/%d hosts created", len(hostIDs), n)
		}
		st.Create = time.Since(start)
		fmt.Fprintln(z.Log)
		// The sync running while the last hosts were created may have
		// missed them: the one that starts after is the measure.
		if title, _, err = nextSync(ctx, title); err != nil {
			return out, err
		}
		if title, st.Sync, err = nextSync(ctx, title); err != nil {
			return out, err
		}
		if _, st.SyncNext, err = nextSync(ctx, title); err != nil {
			return out, err
		}
		var cnt flexCount
		if err := c.Call(ctx, "item.get", map[string]any{"groupids": g.IDs, "countOutput": true}, &cnt); err == nil {
			st.Items = int(cnt)
		}
		fmt.Fprintf(z.Log, "%d hosts: created in %v, %d items; sync %.3f s before, %.3f s after, then %.3f s\n",
			n, st.Create.Round(time.Millisecond), st.Items, st.SyncBefore, st.Sync, st.SyncNext)
		out = append(out, st)
	}
	return out, nil
}
