package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/peregrine-mon/peregrine/internal/config"
	"github.com/peregrine-mon/peregrine/internal/server"
)

var (
	record      = flag.Bool("record", false, "record the golden files from the real Zabbix 6.0 peer (make conformance-record)")
	peerAPI     = flag.String("peer-api", "http://127.0.0.1:10088/api_jsonrpc.php", "the peer's JSON-RPC URL")
	peerTrapper = flag.String("peer-trapper", "127.0.0.1:10061", "the peer's trapper")
	peerConf    = flag.String("peer-conf", "/tmp/zbxpeer/zabbix_server.conf", "the peer's zabbix_server.conf, for its runtime control")
	onlyCase    = flag.String("case", "", "run only this case")
	updateTable = flag.Bool("update-table", false, "rewrite the conformance table in docs/compat.md")
	updateOpen  = flag.Bool("update-open", false, "rewrite testdata/open-differences.txt with the differences not yet fixed")
)

const (
	openFile  = "testdata/open-differences.txt"
	corpusDir = "testdata/corpus"
	goldenDir = "testdata/golden"
	compatDoc = "../../docs/compat.md"
)

// golden is a recorded case.
type golden struct {
	Case     string       `json:"case"`
	About    string       `json:"about"`
	Recorded string       `json:"recorded"`
	Steps    []StepAnswer `json:"steps"`
}

func cases(t *testing.T) []Case {
	t.Helper()
	cs, err := LoadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	if *onlyCase != "" {
		var out []Case
		for _, c := range cs {
			if c.Name == *onlyCase {
				out = append(out, c)
			}
		}
		cs = out
	}
	if len(cs) == 0 {
		t.Fatal("no corpus cases")
	}
	return cs
}

// TestConformance replays the golden answers of the real Zabbix 6.0
// against a Peregrine server (or, with -record, records them from the
// peer). Every difference must be listed in docs/compat.md.
func TestConformance(t *testing.T) {
	if *record {
		recordPeer(t)
		return
	}
	doc, err := os.ReadFile(compatDoc)
	if err != nil {
		t.Fatal(err)
	}
	intended, err := ParseIntended(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	used := make([]bool, len(intended))
	open := readOpen(t)
	var stillOpen []string
	var tallies []Tally
	for _, c := range cases(t) {
		g := readGolden(t, c.Name)
		tgt := startPeregrine(t)
		r := NewRunner(tgt, time.Now())
		got, runErr := r.Run(context.Background(), c)
		tally := Tally{Case: c.Name}
		if runErr != nil {
			// A step's answer could not feed the next call: the rest of
			// the case cannot run, which is a difference of its own.
			key := c.Name + " stopped: " + runErr.Error()
			stillOpen = append(stillOpen, key)
			if !open[key] && !*updateOpen {
				t.Errorf("case %s stopped (not in %s): %v", c.Name, openFile, runErr)
			}
		}
		byID := map[string]StepAnswer{}
		for _, a := range got {
			byID[a.ID] = a
		}
		for _, want := range g.Steps {
			a, ok := byID[want.ID]
			if !ok && runErr != nil {
				tally.Calls++
				tally.Open++ // not run
				continue
			}
			if !ok {
				t.Errorf("case %s: golden step %s is not in the corpus: re-record (make conformance-record)", c.Name, want.ID)
				continue
			}
			tally.Calls++
			diffs := diff(c.Name, want.ID, "", maskUUIDs(roundTrip(want.Answer)), roundTrip(a.Answer))
			if len(diffs) == 0 {
				tally.Identical++
				continue
			}
			explained, isOpen := true, false
			for _, d := range diffs {
				hit := false
				for i, e := range intended {
					if e.matches(d) {
						used[i], hit = true, true
					}
				}
				if hit {
					continue
				}
				explained = false
				key := openKey(d)
				stillOpen = append(stillOpen, key)
				if open[key] || *updateOpen {
					isOpen = true
					continue
				}
				t.Errorf("difference not in docs/compat.md nor in %s: %s", openFile, d)
			}
			switch {
			case explained:
				tally.Intended++
			case isOpen:
				tally.Open++
			}
		}
		if runErr == nil && len(got) != len(g.Steps) {
			t.Errorf("case %s: %d steps answered, %d recorded: re-record (make conformance-record)", c.Name, len(got), len(g.Steps))
		}
		tallies = append(tallies, tally)
	}
	if *onlyCase != "" || t.Failed() {
		return
	}
	now := map[string]bool{}
	for _, k := range stillOpen {
		now[k] = true
	}
	if *updateOpen {
		writeOpen(t, now)
	} else {
		for k := range open {
			if !now[k] {
				t.Errorf("%s lists a difference that no longer occurs, remove it (-update-open): %s", openFile, k)
			}
		}
	}
	for i, e := range intended {
		if !used[i] {
			t.Errorf("docs/compat.md:%d lists a difference that no longer occurs (%s %s %s): remove it", e.Line, e.Case, e.Step, e.Path)
		}
	}
	table := RenderTable(tallies)
	newDoc, ok := ReplaceTable(string(doc), table)
	if !ok {
		t.Fatalf("docs/compat.md has no %s … %s markers", tableBegin, tableEnd)
	}
	if newDoc != string(doc) {
		if *updateTable {
			if err := os.WriteFile(compatDoc, []byte(newDoc), 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Errorf("docs/compat.md's conformance table is out of date; run go test ./internal/conformance -run TestConformance -update-table:\n%s", table)
		}
	}
}

// openKey names a difference in the open list: where, and the two
// values, so that a change of either shows as a new difference.
func openKey(d Difference) string {
	return d.Case + " " + d.Step + " " + d.Path + " want=" + clip(d.Want) + " got=" + clip(d.Got)
}

// readOpen reads the differences not fixed yet: the backlog the test
// accepts while it lasts, one per line.
func readOpen(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	raw, err := os.ReadFile(openFile)
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out[l] = true
		}
	}
	return out
}

func writeOpen(t *testing.T, keys map[string]bool) {
	t.Helper()
	lines := make([]string, 0, len(keys))
	for k := range keys {
		lines = append(lines, k)
	}
	sort.Strings(lines)
	head := "# Differences from the real Zabbix 6.0 not fixed yet: the conformance backlog (issue 24).\n" +
		"# TestConformance accepts these and fails on any other; fixing one means removing its line\n" +
		"# (go test ./internal/conformance -run TestConformance -update-open). Never add a line by hand.\n"
	if err := os.WriteFile(openFile, []byte(head+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// roundTrip makes a normalised answer compare as its JSON does.
func roundTrip(x any) any {
	b, _ := json.Marshal(x)
	var y any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	_ = dec.Decode(&y)
	return y
}

func readGolden(t *testing.T, name string) golden {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(goldenDir, name+".json"))
	if err != nil {
		t.Fatalf("case %s has no golden file (record it: make conformance-record): %v", name, err)
	}
	var g golden
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&g); err != nil {
		t.Fatal(err)
	}
	return g
}

// startPeregrine runs a fresh server in this process on loopback ports.
func startPeregrine(t *testing.T) Target {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Trapper.Listen = "127.0.0.1:0"
	cfg.HTTP.Listen = "127.0.0.1:0"
	s, err := server.New(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server stopped with %v", err)
		}
	})
	pw, err := os.ReadFile(filepath.Join(cfg.DataDir, "admin-password"))
	if err != nil {
		t.Fatal(err)
	}
	return Target{
		Name:          "peregrine",
		API:           "http://" + s.HTTPAddr().String() + "/api_jsonrpc.php",
		Trapper:       s.TrapperAddr().String(),
		Admin:         "Admin",
		AdminPassword: strings.TrimSpace(string(pw)),
		// Values are acknowledged once durable; triggers and events
		// follow on the shards' goroutines.
		Sync: func(context.Context) error { time.Sleep(500 * time.Millisecond); return nil },
	}
}

// recordPeer runs every case against the real Zabbix 6.0 and writes the
// golden files.
func recordPeer(t *testing.T) {
	tgt := Target{
		Name: "zabbix", API: *peerAPI, Trapper: *peerTrapper,
		Admin: "Admin", AdminPassword: "zabbix",
		Sync:    peerSync,
		Cleanup: peerCleanup,
	}
	var ver string
	{
		r := NewRunner(tgt, time.Now())
		res, err := r.result(context.Background(), "apiinfo.version", map[string]any{}, "")
		if err != nil {
			t.Fatalf("no peer at %s (start it: ../shared/peers/zabbix/setup.sh): %v", *peerAPI, err)
		}
		ver, _ = res.(string)
	}
	for _, c := range cases(t) {
		r := NewRunner(tgt, time.Now())
		got, err := r.Run(context.Background(), c)
		// What the case left on the peer goes now, so that the next
		// case's unscoped calls see a fresh server's objects only.
		if cerr := peerCleanup(context.Background(), r, c); cerr != nil {
			t.Errorf("case %s: cleanup after: %v", c.Name, cerr)
		}
		if err != nil {
			t.Errorf("case %s: %v", c.Name, err)
			continue
		}
		g := golden{Case: c.Name, About: c.About, Recorded: "Zabbix " + ver + " (../shared/peers/zabbix), " + time.Now().UTC().Format("2006-01-02"), Steps: got}
		b, err := json.MarshalIndent(g, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(goldenDir, c.Name+".json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %s: %d answers", c.Name, len(got))
	}
}

// peerSync has the peer reload its configuration cache (it reads it
// every CacheUpdateFrequency seconds otherwise) and gives its history
// syncers time to process what was sent.
func peerSync(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, "zabbix_server", "-c", *peerConf, "-R", "config_cache_reload").CombinedOutput()
	if err != nil {
		return fmt.Errorf("zabbix_server -R config_cache_reload: %v: %s", err, out)
	}
	time.Sleep(3 * time.Second)
	return nil
}

// cleanupFamilies says how to find and delete a family's leftovers.
var cleanupFamilies = map[string]struct{ get, del, name, id string }{
	"host":        {"host.get", "host.delete", "host", "hostid"},
	"template":    {"template.get", "template.delete", "host", "templateid"},
	"hostgroup":   {"hostgroup.get", "hostgroup.delete", "name", "groupid"},
	"user":        {"user.get", "user.delete", "username", "userid"},
	"usergroup":   {"usergroup.get", "usergroup.delete", "name", "usrgrpid"},
	"mediatype":   {"mediatype.get", "mediatype.delete", "name", "mediatypeid"},
	"action":      {"action.get", "action.delete", "name", "actionid"},
	"maintenance": {"maintenance.get", "maintenance.delete", "name", "maintenanceid"},
	"script":      {"script.get", "script.delete", "name", "scriptid"},
	"service":     {"service.get", "service.delete", "name", "serviceid"},
	"sla":         {"sla.get", "sla.delete", "name", "slaid"},
	"token":       {"token.get", "token.delete", "name", "tokenid"},
	"regexp":      {"regexp.get", "regexp.delete", "name", "regexpid"},
	"proxy":       {"proxy.get", "proxy.delete", "host", "proxyid"},
	"drule":       {"drule.get", "drule.delete", "name", "druleid"},
	"dashboard":   {"dashboard.get", "dashboard.delete", "name", "dashboardid"},
	"correlation": {"correlation.get", "correlation.delete", "name", "correlationid"},
	// Global macros: a macro's name cannot hold the prefix's "-", so
	// the case names its global macros "{$" + the prefix in capitals
	// with "_" for "-" ("{$CF_LG_...}" for "cf-lg").
	"globalmacro": {"usermacro.get", "usermacro.deleteglobal", "macro", "globalmacroid"},
}

func peerCleanup(ctx context.Context, r *Runner, c Case) error {
	if c.Prefix == "" {
		return nil
	}
	tok, err := r.Login(ctx, r.T.Admin, r.T.AdminPassword)
	if err != nil {
		return err
	}
	for _, fam := range c.Cleanup {
		f, ok := cleanupFamilies[fam]
		if !ok {
			return fmt.Errorf("no cleanup for %q", fam)
		}
		params := map[string]any{
			"output": []string{f.id}, "search": map[string]any{f.name: c.Prefix}, "startSearch": true,
		}
		if fam == "globalmacro" {
			params["globalmacro"] = true
			params["search"] = map[string]any{f.name: "{$" + strings.ToUpper(strings.ReplaceAll(c.Prefix, "-", "_"))}
		}
		res, err := r.result(ctx, f.get, params, tok)
		if err != nil {
			return err
		}
		var ids []any
		for _, o := range res.([]any) {
			ids = append(ids, o.(map[string]any)[f.id])
		}
		if len(ids) > 0 {
			if _, err := r.result(ctx, f.del, ids, tok); err != nil {
				return err
			}
		}
	}
	return nil
}
