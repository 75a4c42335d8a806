package catalog

import (
	"testing"
	"unsafe"
)

// TestHostSize keeps Host small (issue 30: a host of 10 items is a
// tenth of each item's bytes): a field most hosts leave at its default
// belongs in HostExtra.
func TestHostSize(t *testing.T) {
	if s := unsafe.Sizeof(Host{}); unsafe.Sizeof(uintptr(0)) == 8 && s > 224 {
		t.Errorf("Host takes %d bytes, want at most 224: put rarely set fields in HostExtra", s)
	}
}

// TestHostExtraShared checks that hosts with Zabbix's defaults share one
// HostExtra, also after a reload, that a host's own settings are its
// own and leave the previous snapshot's host alone, and that neither
// shared HostExtra is ever written.
func TestHostExtraShared(t *testing.T) {
	f := newTmplFixture(t)
	check := func(s *Snapshot, wantH2 HostTLS) {
		t.Helper()
		h1, h2, tm := s.Host("h1"), s.Host("h2"), s.Template(f.tmpl)
		if h1 == nil || h2 == nil || tm == nil {
			t.Fatal("a host is missing")
		}
		if h1.Extra != &defaultHostExtra || h1.Ext().TLS != DefaultHostTLS || h1.Ext().IPMI != DefaultHostIPMI {
			t.Errorf("h1 does not share the default HostExtra: %p %+v", h1.Extra, h1.Ext())
		}
		if h2.Ext().TLS != wantH2 || h2.Ext().IPMI != DefaultHostIPMI {
			t.Errorf("h2: TLS %+v IPMI %+v, want TLS %+v", h2.Ext().TLS, h2.Ext().IPMI, wantH2)
		}
		if (wantH2 == DefaultHostTLS) != (h2.Extra == &defaultHostExtra) {
			t.Errorf("h2's HostExtra %p: shared %v, want %v", h2.Extra, h2.Extra == &defaultHostExtra, wantH2 == DefaultHostTLS)
		}
		if len(tm.Ext().UUID) != 32 || tm.Extra == &defaultHostExtra {
			t.Errorf("template's HostExtra: %+v", tm.Ext())
		}
	}
	check(f.c.Snapshot(), DefaultHostTLS)
	f.reload(t)
	old := f.c.Snapshot()
	check(old, DefaultHostTLS)
	enc := HostTLS{Connect: 4, Accept: 4, Issuer: "CN=CA"}
	mustEdit(t, f.c, func(e *Edit) error { return e.UpdateHosts([]HostUpdate{{ID: f.h2, TLS: SetTLS(enc)}}) })
	check(f.c.Snapshot(), enc)
	check(old, DefaultHostTLS)
	f.reload(t)
	check(f.c.Snapshot(), enc)
	mustEdit(t, f.c, func(e *Edit) error { return e.UpdateHosts([]HostUpdate{{ID: f.h2, TLS: SetTLS(DefaultHostTLS)}}) })
	check(f.c.Snapshot(), DefaultHostTLS)
	if noHostExtra != (HostExtra{}) {
		t.Fatalf("the shared empty HostExtra was written: %+v", noHostExtra)
	}
	if defaultHostExtra != (HostExtra{TLS: DefaultHostTLS, IPMI: DefaultHostIPMI}) {
		t.Fatalf("the shared default HostExtra was written: %+v", defaultHostExtra)
	}
}
