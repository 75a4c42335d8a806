package ipmi

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/poll"
	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestIntegrationSimulator reads the OpenIPMI simulator (ipmi_sim, on a
// loopback UDP port, the sensors of testutil.IPMISimSensors) as Zabbix
// 6.0.14 read the same simulator with the same sensors (its answers in
// testdata/zabbix-6.0.14-items.json): a threshold sensor's converted
// reading, a discrete sensor's state bits, ipmi.get, sensors named by
// "id:" and "name:", and a sensor the BMC does not have.
func TestIntegrationSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	sim := testutil.StartIPMISim(t)
	cat := &items{}
	creds := catalog.HostIPMI{AuthType: -1, Privilege: 2, Username: sim.User, Password: sim.Password}
	cat.add(1, "cpu.temp", "CPU Temp", creds)
	cat.add(2, "ps1", "PS1 Status", creds)
	cat.add(3, catalog.IPMIGetKey, "", creds)
	cat.add(4, "by.name", "name:(7.1).CPU Temp", creds)
	cat.add(5, "by.id", "id:CPU Temp", creds)
	cat.add(6, "missing", "No Such", creds)
	cat.add(7, "case", "cpu temp", creds)
	// The same sensors over IPMI v1.5 (authentication type MD5) with
	// the admin privilege.
	cat.add(8, "v15", "CPU Temp", catalog.HostIPMI{AuthType: 2, Privilege: 4, Username: sim.User, Password: sim.Password})
	c := New(Options{Item: cat.get})
	defer c.Close()
	check := func(id uint64, key string) poll.Check {
		return poll.Check{ItemID: id, HostID: 1, InterfaceID: 1, Key: key, Addr: sim.Addr, Timeout: 5 * time.Second, Due: time.Now()}
	}
	batch := []poll.Check{check(1, "cpu.temp"), check(2, "ps1"), check(3, catalog.IPMIGetKey), check(4, "by.name"),
		check(5, "by.id"), check(6, "missing"), check(7, "case"), check(8, "v15")}
	got := runChecks(t, c, batch, 30*time.Second)
	want := map[uint64]string{1: "47", 2: "9", 4: "47", 5: "47", 8: "47"}
	for id, v := range want {
		if r := got[id]; r.Status != poll.OK || string(r.Value) != v {
			t.Errorf("%s: %s %q %q, want %q", r.Key, r.Status, r.Value, r.Error, v)
		}
	}
	_, port, _ := strings.Cut(sim.Addr, ":")
	for id, name := range map[uint64]string{6: "No Such", 7: "cpu temp"} {
		// Zabbix's words (recorded from 6.0.14).
		if r, msg := got[id], "sensor or control "+name+"@[127.0.0.1]:"+port+" does not exist"; r.Status != poll.NotSupported || r.Error != msg {
			t.Errorf("%s: %s %q, want not supported %q", r.Key, r.Status, r.Error, msg)
		}
	}
	if r := got[3]; r.Status != poll.OK || !json.Valid(r.Value) {
		t.Fatalf("ipmi.get: %s %q %q", r.Status, r.Value, r.Error)
	}

	// The threshold crossed, as recorded from 6.0.14: 0x95 is 73.5 °C,
	// above the upper non-critical (55) and critical (71) thresholds.
	sim.Command(t, "sensor_set_value 0x20 0 1 0x95 0")
	got = runChecks(t, c, []poll.Check{check(1, "cpu.temp"), check(3, catalog.IPMIGetKey)}, 30*time.Second)
	if r := got[1]; r.Status != poll.OK || string(r.Value) != "73.5" {
		t.Errorf("cpu.temp after the change: %s %q %q, want 73.5", r.Status, r.Value, r.Error)
	}
	wantGet := recordedGet(t)
	var gotGet []map[string]any
	if err := json.Unmarshal(got[3].Value, &gotGet); err != nil {
		t.Fatalf("ipmi.get %q: %v", got[3].Value, err)
	}
	// Zabbix lists the sensors in OpenIPMI's order, Peregrine in the
	// repository's: compared by id.
	byID := func(a, b map[string]any) int { return strings.Compare(a["id"].(string), b["id"].(string)) }
	slices.SortFunc(gotGet, byID)
	slices.SortFunc(wantGet, byID)
	if d := cmp.Diff(wantGet, gotGet); d != "" {
		t.Errorf("ipmi.get differs from Zabbix 6.0.14's (-zabbix +peregrine):\n%s", d)
	}
	// The value text itself is 6.0's number format ("%f").
	if !strings.Contains(string(got[3].Value), `"value":73.500000,"units":"C","threshold":{"lower":{},"upper":{"non_crit":55.000000,"crit":71.000000,"non_recover":79.000000}}`) {
		t.Errorf("ipmi.get's threshold sensor is not written as 6.0 writes it: %s", got[3].Value)
	}
	if n := c.sessionsOpened.Load(); n > 2*2 { // two BMC keys (v2.0 and v1.5), two sessions each at most
		t.Errorf("%d sessions opened for two BMC keys of at most 2 sessions each: sessions are not kept", n)
	}
}

// recordedGet is the ipmi.get value Zabbix 6.0.14 stored reading the
// same simulator (testdata/zabbix-6.0.14-items.json, recorded from
// 6.0.14: item.get of its items after the threshold was crossed).
func recordedGet(t *testing.T) []map[string]any {
	t.Helper()
	b, err := os.ReadFile("testdata/zabbix-6.0.14-items.json")
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Result []struct {
			Key       string `json:"key_"`
			LastValue string `json:"lastvalue"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	for _, it := range rec.Result {
		if it.Key == catalog.IPMIGetKey {
			var out []map[string]any
			if err := json.Unmarshal([]byte(it.LastValue), &out); err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	t.Fatal("no ipmi.get in the recording")
	return nil
}

// TestIntegrationFailures: wrong credentials make the item not
// supported with a clear reason (the BMC answered) and are counted; a
// BMC that never answers costs its check one timeout, counted, a
// network error; neither delays the checks of a working BMC in the same
// batch.
func TestIntegrationFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	sim := testutil.StartIPMISim(t)
	silent := silentUDP(t)
	cat := &items{}
	good := catalog.HostIPMI{AuthType: -1, Privilege: 2, Username: sim.User, Password: sim.Password}
	bad := good
	bad.Password = "not-the-password"
	unknown := good
	unknown.Username = "nobody"
	cat.add(1, "cpu.temp", "CPU Temp", good)
	cat.add(2, "badpw", "CPU Temp", bad)
	cat.add(3, "nouser", "CPU Temp", unknown)
	cat.add(4, "silent", "CPU Temp", good)
	cat.add(5, "ps1", "PS1 Status", good)
	c := New(Options{Item: cat.get})
	defer c.Close()
	const timeout = 3 * time.Second
	check := func(id uint64, key, addr string) poll.Check {
		return poll.Check{ItemID: id, Key: key, Addr: addr, Timeout: timeout, Due: time.Now()}
	}
	start := time.Now()
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	when := map[uint64]time.Duration{}
	got := map[uint64]*poll.Result{}
	all := make(chan struct{})
	batch := []poll.Check{check(4, "silent", silent), check(2, "badpw", sim.Addr), check(3, "nouser", sim.Addr), check(1, "cpu.temp", sim.Addr), check(5, "ps1", sim.Addr)}
	c.Check(t.Context(), batch, func(r *poll.Result) {
		<-mu
		got[r.ItemID], when[r.ItemID] = r, time.Since(start)
		if len(got) == len(batch) {
			close(all)
		}
		mu <- struct{}{}
	})
	select {
	case <-all:
	case <-time.After(timeout + 20*time.Second):
		t.Fatal("checks not reported")
	}
	<-mu
	for _, id := range []uint64{1, 5} {
		if r := got[id]; r.Status != poll.OK {
			t.Errorf("%s: %s %q", r.Key, r.Status, r.Error)
		}
		if when[id] >= timeout {
			t.Errorf("%s reported after %v, beside a BMC that never answers (timeout %v): one BMC held another's checks", got[id].Key, when[id], timeout)
		}
	}
	for _, id := range []uint64{2, 3} {
		r := got[id]
		if r.Status != poll.NotSupported || !strings.Contains(r.Error, "refused the session") || strings.Contains(r.Error, "not-the-password") {
			t.Errorf("%s: %s %q, want not supported saying the BMC refused the session (and no password)", r.Key, r.Status, r.Error)
		}
	}
	if r := got[4]; r.Status != poll.NetworkError || !strings.Contains(r.Error, "timed out after 3s") {
		t.Errorf("silent BMC: %s %q, want a network error saying it timed out", r.Status, r.Error)
	}
	if when[4] < timeout || when[4] > timeout+5*time.Second {
		t.Errorf("silent BMC reported after %v, want its timeout %v", when[4], timeout)
	}
	if n := c.timeouts.Load(); n != 1 {
		t.Errorf("timeouts counted %d, want 1", n)
	}
	if n := c.authFailures.Load(); n != 2 {
		t.Errorf("authentication failures counted %d, want 2", n)
	}
}
