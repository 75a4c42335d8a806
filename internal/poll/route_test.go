package poll

import (
	"context"
	"strings"
	"testing"
)

// recorder is a Checker that answers every check with its own name.
type recorder struct{ name string }

func (r recorder) Check(_ context.Context, batch []Check, done func(*Result)) {
	for _, c := range batch {
		done(&Result{Check: c, Status: OK, Value: []byte(r.name)})
	}
}

func TestKeyRouter(t *testing.T) {
	k := &KeyRouter{Routes: []Route{
		{Match: func(key string) bool { return strings.HasPrefix(key, "icmp") }, Checker: recorder{"icmp"}},
		{Match: func(key string) bool { return strings.HasPrefix(key, "net.tcp") }, Checker: recorder{"tcp"}},
	}}
	got := map[string]*Result{}
	k.Check(context.Background(), []Check{
		{ItemID: 1, Key: "icmpping"}, {ItemID: 2, Key: "net.tcp.service[ssh]"},
		{ItemID: 3, Key: "vmware.version[x]"}, {ItemID: 4, Key: "icmppingsec"},
	}, func(r *Result) { got[r.Key] = r })
	want := map[string]string{"icmpping": "icmp", "net.tcp.service[ssh]": "tcp", "icmppingsec": "icmp"}
	for key, w := range want {
		if r := got[key]; r == nil || r.Status != OK || string(r.Value) != w {
			t.Errorf("%s went to %+v, want %s", key, r, w)
		}
	}
	if r := got["vmware.version[x]"]; r == nil || r.Status != NotSupported || r.Error != "Unsupported item key." {
		t.Errorf("unknown key: %+v", r)
	}
}
