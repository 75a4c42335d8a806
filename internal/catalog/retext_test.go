package catalog

import "testing"

// TestRenameRewritesTriggerExpressions: a host rename, a template rename
// and an item key change show in every trigger expression naming them
// (and in their copies on linked hosts), as in Zabbix 6.0, where
// trigger.get with expandExpression gives the new names (recorded from
// 6.0.14: host.update of host, then item.update of key_, each followed
// by trigger.get); the stored text survives a reload, and the rewritten
// expression can be written back (a clone) as is.
func TestRenameRewritesTriggerExpressions(t *testing.T) {
	f := newTmplFixture(t)
	f.link(t, f.h1, f.tmpl)
	var own, k uint64
	mustEdit(t, f.c, func(e *Edit) error {
		it, err := e.CreateItems([]NewItem{
			{HostID: f.h2, ItemSpec: ItemSpec{Key: "k", ValueType: "uint"}},
			{HostID: f.h2, ItemSpec: ItemSpec{Key: "k[1]", ValueType: "uint"}},
		})
		if err != nil {
			return err
		}
		k = it[0]
		tr, err := e.CreateTriggers([]TriggerFields{
			{Description: "own", Expression: "last(/h1/trap)>5 and last(/h1/agent.ping)=0 or last(/h2/k[1])>0 and last(/h2/k)>1",
				RecoveryMode: RecoverRecoveryExpression, RecoveryExpression: "last(/h1/trap)<2", Enabled: true},
		})
		own = tr[0]
		return err
	})
	copyOf := func() *Trigger {
		for _, tr := range f.c.Snapshot().Triggers() {
			if tr.TemplateID == f.trig {
				return &tr
			}
		}
		t.Fatal("h1 has no copy of the template trigger")
		return nil
	}
	check := func(step, wantOwn, wantRecovery, wantTmpl, wantCopy string) {
		t.Helper()
		s := f.c.Snapshot()
		if tr := s.Trigger(own); tr.Expression != wantOwn || tr.RecoveryExpression != wantRecovery {
			t.Errorf("%s: trigger %q / %q, want %q / %q", step, tr.Expression, tr.RecoveryExpression, wantOwn, wantRecovery)
		}
		if tr := s.TemplateTrigger(f.trig); tr.Expression != wantTmpl {
			t.Errorf("%s: template trigger %q, want %q", step, tr.Expression, wantTmpl)
		}
		if tr := copyOf(); tr.Expression != wantCopy {
			t.Errorf("%s: h1's copy %q, want %q", step, tr.Expression, wantCopy)
		}
	}
	rename := func(id uint64, name string) {
		mustEdit(t, f.c, func(e *Edit) error { return e.UpdateHosts([]HostUpdate{{ID: id, Host: &name}}) })
	}
	rename(f.h1, "h1-new")
	check("host rename", "last(/h1-new/trap)>5 and last(/h1-new/agent.ping)=0 or last(/h2/k[1])>0 and last(/h2/k)>1",
		"last(/h1-new/trap)<2", "last(/T/agent.ping)=0", "last(/h1-new/agent.ping)=0")
	rename(f.tmpl, "T2")
	check("template rename", "last(/h1-new/trap)>5 and last(/h1-new/agent.ping)=0 or last(/h2/k[1])>0 and last(/h2/k)>1",
		"last(/h1-new/trap)<2", "last(/T2/agent.ping)=0", "last(/h1-new/agent.ping)=0")
	key := func(id uint64, key string) {
		mustEdit(t, f.c, func(e *Edit) error { return e.UpdateItems([]ItemUpdate{{ID: id, Key: &key}}) })
	}
	// A template item's key change reaches its copies, and their
	// triggers, too; "k" is not taken for the start of "k[1]".
	key(f.ping, "agent.ping2")
	key(k, "kk")
	want := "last(/h1-new/trap)>5 and last(/h1-new/agent.ping2)=0 or last(/h2/k[1])>0 and last(/h2/kk)>1"
	check("key change", want, "last(/h1-new/trap)<2", "last(/T2/agent.ping2)=0", "last(/h1-new/agent.ping2)=0")
	f.reload(t)
	check("reload", want, "last(/h1-new/trap)<2", "last(/T2/agent.ping2)=0", "last(/h1-new/agent.ping2)=0")
	// The bug this guards: cloning the trigger failed on the old name.
	createTriggers(t, f.c, TriggerFields{Description: "clone", Expression: want})
}

func TestRewriteKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"last(/h/k)>1", "last(/h/k2)>1"},
		{"last( /h/k ,#3)>1 or min(/h/k,5m)<0", "last( /h/k2 ,#3)>1 or min(/h/k2,5m)<0"},
		{"last(/h/k[1])>1 and last(/h/k.x)>1 and last(/hh/k)>1 and last(/h/kk)>1", "last(/h/k[1])>1 and last(/h/k.x)>1 and last(/hh/k)>1 and last(/h/kk)>1"},
		{"last(/h/k", "last(/h/k2"},
		{"", ""},
	} {
		if got := rewriteKey(c.in, "h", "k", "k2"); got != c.want {
			t.Errorf("rewriteKey(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
