package web_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationProblemsStormReal is the incident storm in the browser
// against Peregrine itself: a whole server in this process, 50 hosts of
// 1,000 trapper items, one trigger `last(/host/key)>0` per item created
// with trigger.create (batches of 1,000, as `peregrine bench storm`
// does), and one value 1 per item sent with the real zabbix_sender, so
// 50,000 problems are opened by the trigger engine and stored in its
// event store. Then measureStorm times the problems page in headless
// Chromium. It is a measurement that takes a minute or two of CPU, so it
// runs only with PEREGRINE_UI_STORM=1:
//
//	PEREGRINE_UI_STORM=1 go test -count=1 -run TestIntegrationProblemsStormReal -v ./internal/web/
//
// PEREGRINE_UI_STORM_N sets another count (a multiple of 1,000).
func TestIntegrationProblemsStormReal(t *testing.T) {
	if testing.Short() || os.Getenv("PEREGRINE_UI_STORM") == "" {
		t.Skip("measurement: set PEREGRINE_UI_STORM=1 (50,000 problems through the trapper, headless Chromium)")
	}
	testutil.Need(t, "zabbix_sender", "zabbix-agent")
	n := 50000
	if v, err := strconv.Atoi(os.Getenv("PEREGRINE_UI_STORM_N")); err == nil && v >= 1000 {
		n = v / 1000 * 1000
	}
	const perHost = 1000
	hosts := n / perHost
	spec := catalog.Spec{}
	for h := 0; h < hosts; h++ {
		hs := catalog.HostSpec{Host: fmt.Sprintf("storm-%02d", h), Groups: []string{"Storm"}}
		for i := 0; i < perHost; i++ {
			hs.Items = append(hs.Items, catalog.ItemSpec{Key: fmt.Sprintf("if.down[%d]", i), Name: fmt.Sprintf("Interface %d down", i), ValueType: "unsigned"})
		}
		spec.Hosts = append(spec.Hosts, hs)
	}
	t0 := time.Now()
	s, base, password := startServer(t, spec)
	token := apiLogin(t, base, password)
	// Severity k%6 and tag service=svc-k%20 by item k: a sixth of the
	// storm is Disaster.
	disaster := 0
	for h := 0; h < hosts; h++ {
		batch := make([]map[string]any, 0, perHost)
		for i := 0; i < perHost; i++ {
			k := h*perHost + i
			if k%6 == 5 {
				disaster++
			}
			batch = append(batch, map[string]any{
				"description": fmt.Sprintf("Interface %d down on {HOST.HOST}", i),
				"expression":  fmt.Sprintf("last(/storm-%02d/if.down[%d])>0", h, i),
				"priority":    k % 6, "tags": []map[string]string{{"tag": "service", "value": "svc-" + strconv.Itoa(k%20)}},
			})
		}
		apiCall(t, base, token, "trigger.create", batch)
	}
	t.Logf("server, %d items and %d triggers in %v", n, n, time.Since(t0).Round(time.Millisecond))

	// One 1 per item through the trapper, with the real zabbix_sender.
	t0 = time.Now()
	var lines strings.Builder
	for h := 0; h < hosts; h++ {
		for i := 0; i < perHost; i++ {
			fmt.Fprintf(&lines, "storm-%02d if.down[%d] 1\n", h, i)
		}
	}
	f := filepath.Join(t.TempDir(), "storm.txt")
	if err := os.WriteFile(f, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := testutil.RunSender(t, s.TrapperAddr().String(), "-i", f); res.Processed != n {
		t.Fatalf("zabbix_sender: %+v, want %d processed", res, n)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var c string
		json.Unmarshal(apiCall(t, base, token, "problem.get", map[string]any{"countOutput": true}), &c)
		if c == strconv.Itoa(n) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("problem.get counts %s open problems 2 min after the storm, want %d", c, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d values sent and %d problems open in %v", n, n, time.Since(t0).Round(time.Millisecond))

	ctx, sh := browser(t)
	login(t, ctx, base, password)
	fig := measureStorm(t, ctx, sh, base, stormExpect{total: n, disaster: disaster})
	fig.log(t, fmt.Sprintf("problems page, %d problems (Peregrine's problem.get)", n))

	// The rows show what the trigger engine made of the storm: host,
	// expanded name, tag.
	var host, name, tags string
	const row = `.problem-row:not(.loading)`
	run(t, ctx, "a row's details", chromedp.WaitVisible(row+` .problem-name`, chromedp.ByQuery),
		textOf(row+` .host-name`, &host), textOf(row+` .problem-name`, &name), textOf(row+` .tags`, &tags))
	if !strings.HasPrefix(host, "storm-") || !strings.HasPrefix(name, "Interface ") || !strings.HasSuffix(name, " on "+host+" (1)") || !strings.HasPrefix(tags, "service: svc-") {
		t.Errorf("first row: host %q, name %q, tags %q", host, name, tags)
	}
}
