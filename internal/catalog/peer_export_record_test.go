package catalog_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

var (
	recordPeerExport = flag.Bool("record-peer-export", false,
		"record testdata/peer-export from the real Zabbix 6.0 peer's configuration.export (read-only)")
	peerExportAPI  = flag.String("peer-api", "http://127.0.0.1:10088/api_jsonrpc.php", "the peer's JSON-RPC URL")
	peerExportUser = flag.String("peer-user", "Admin", "the peer's API user")
	peerExportPass = flag.String("peer-password", "zabbix", "the peer's API password")
)

const (
	peerExportDir = "testdata/peer-export"
	// notOnPeerFile lists the official files whose templates the peer
	// does not hold (by name), so they cannot be recorded.
	notOnPeerFile = peerExportDir + "/not-on-peer.txt"
)

// TestRecordPeerExport records, for each official template file whose
// templates all exist on the peer by name, the peer's own
// configuration.export (YAML) of exactly those templates into
// testdata/peer-export/<file basename>. It only reads from the peer:
// template.get and configuration.export. Files whose templates are
// missing there are listed in testdata/peer-export/not-on-peer.txt. A
// recording that differs from the stored one only in its date is not
// rewritten. Skipped without -record-peer-export:
//
//	go test ./internal/catalog/ -run TestRecordPeerExport -record-peer-export
func TestRecordPeerExport(t *testing.T) {
	if !*recordPeerExport {
		t.Skip("records from the peer only with -record-peer-export")
	}
	dir := testutil.ZabbixTemplates(t)
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	})
	slices.Sort(files)
	p := &peerClient{url: *peerExportAPI}
	if err := p.call("user.login", map[string]any{"username": *peerExportUser, "password": *peerExportPass}, &p.auth); err != nil {
		t.Fatalf("peer login: %v", err)
	}
	var missing []string
	recorded, kept := 0, 0
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		names, err := templateNames(f)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if len(names) == 0 {
			continue // a media type file
		}
		var got []struct {
			ID   string `json:"templateid"`
			Host string `json:"host"`
		}
		if err := p.call("template.get", map[string]any{"output": []string{"host"}, "filter": map[string]any{"host": names}}, &got); err != nil {
			t.Fatalf("%s: template.get: %v", rel, err)
		}
		var ids []string
		var absent []string
		for _, n := range names {
			i := slices.IndexFunc(got, func(g struct {
				ID   string `json:"templateid"`
				Host string `json:"host"`
			}) bool {
				return g.Host == n
			})
			if i < 0 {
				absent = append(absent, n)
				continue
			}
			ids = append(ids, got[i].ID)
		}
		if len(absent) > 0 {
			missing = append(missing, fmt.Sprintf("%s: %s", filepath.Base(rel), strings.Join(absent, ", ")))
			continue
		}
		var doc string
		if err := p.call("configuration.export", map[string]any{"format": "yaml", "options": map[string]any{"templates": ids}}, &doc); err != nil {
			t.Fatalf("%s: configuration.export: %v", rel, err)
		}
		out := filepath.Join(peerExportDir, filepath.Base(rel))
		if old, err := os.ReadFile(out); err == nil && bytes.Equal(exportDates.ReplaceAll(old, nil), exportDates.ReplaceAll([]byte(doc), nil)) {
			kept++
			continue
		}
		if err := os.WriteFile(out, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		recorded++
	}
	list := "# Official template files whose templates the peer (Zabbix 6.0.14) does not hold\n" +
		"# by name: no export of theirs can be recorded. Written by TestRecordPeerExport.\n"
	for _, m := range missing {
		list += m + "\n"
	}
	if err := os.WriteFile(notOnPeerFile, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d recorded, %d unchanged, %d not on the peer", recorded, kept, len(missing))
}

// templateNames is the template: names of an official file.
func templateNames(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		ZabbixExport struct {
			Templates []struct {
				Template string `yaml:"template"`
			} `yaml:"templates"`
		} `yaml:"zabbix_export"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	var names []string
	for _, tm := range f.ZabbixExport.Templates {
		names = append(names, tm.Template)
	}
	return names, nil
}

// peerClient is a minimal JSON-RPC client of the peer's API.
type peerClient struct {
	url  string
	auth string
}

func (p *peerClient) call(method string, params any, result any) error {
	req := map[string]any{"jsonrpc": "2.0", "method": method, "params": params, "id": 1}
	if p.auth != "" {
		req["auth"] = p.auth
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	c := &http.Client{Timeout: 60 * time.Second}
	resp, err := c.Post(p.url, "application/json-rpc", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
			Data    string `json:"data"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return err
	}
	if r.Error != nil {
		return fmt.Errorf("%s %s", r.Error.Message, r.Error.Data)
	}
	return json.Unmarshal(r.Result, result)
}
