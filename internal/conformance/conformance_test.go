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
)

const (
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
	var tallies []Tally
	for _, c := range cases(t) {
		g := readGolden(t, c.Name)
		tgt := startPeregrine(t)
		r := NewRunner(tgt, time.Now())
		got, runErr := r.Run(context.Background(), c)
		if runErr != nil {
			t.Errorf("case %s stopped: %v", c.Name, runErr)
		}
		tally := Tally{Case: c.Name}
		byID := map[string]StepAnswer{}
		for _, a := range got {
			byID[a.ID] = a
		}
		for _, want := range g.Steps {
			a, ok := byID[want.ID]
			if !ok && runErr != nil {
				break
			}
			if !ok {
				t.Errorf("case %s: golden step %s is not in the corpus: re-record (make conformance-record)", c.Name, want.ID)
				continue
			}
			tally.Calls++
			diffs := diff(c.Name, want.ID, "", roundTrip(want.Answer), roundTrip(a.Answer))
			if len(diffs) == 0 {
				tally.Identical++
				continue
			}
			explained := true
			for _, d := range diffs {
				hit := false
				for i, e := range intended {
					if e.matches(d) {
						used[i], hit = true, true
					}
				}
				if !hit {
					explained = false
					t.Errorf("difference not in docs/compat.md: %s", d)
				}
			}
			if explained {
				tally.Intended++
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
		res, err := r.result(ctx, f.get, map[string]any{
			"output": []string{f.id}, "search": map[string]any{f.name: c.Prefix}, "startSearch": true,
		}, tok)
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
