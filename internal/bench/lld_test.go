package bench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/testutil"
)

// TestLLDBench runs bench lld's in-process steps on a few hosts with the
// official "Linux by Zabbix agent": every host gets the template's items
// and its three rules' discovered items and triggers; applying the same
// replies again changes nothing.
func TestLLDBench(t *testing.T) {
	dir := testutil.ZabbixTemplates(t)
	b := &LLDBench{Template: filepath.Join(dir, "os/linux/template_os_linux.yaml"), Hosts: []int{2, 5}, Batch: 3, FS: 2, Ifs: 3, Devs: 1}
	res, err := b.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("%d steps", len(res))
	}
	small, big := res[0], res[1]
	if small.Rules != 3*2 || big.Rules != 3*5 {
		t.Errorf("rules %d and %d, want 3 per host", small.Rules, big.Rules)
	}
	// Per host: the same items linked and discovered, whatever the count.
	if small.ItemsLinked*5 != big.ItemsLinked*2 || small.ItemsFound*5 != big.ItemsFound*2 || small.ItemsFound == 0 ||
		small.TriggersFound*5 != big.TriggersFound*2 || small.TriggersFound == 0 {
		t.Errorf("not per host: %+v %+v", small, big)
	}
	if small.BytesPerItem <= 0 {
		t.Errorf("bytes per item %v", small.BytesPerItem)
	}
}
