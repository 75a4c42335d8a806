package catalog

import (
	"context"
	"strings"
	"testing"
)

// TestMigrateV4TLS opens a database of schema version 4 (no host
// encryption settings): hosts get Zabbix's defaults, unencrypted both
// ways, and can then be given certificates.
func TestMigrateV4TLS(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, testSpec())
	want := c.Snapshot()
	if got := want.Host("web-01").Ext().TLS; got != DefaultHostTLS {
		t.Fatalf("imported host TLS %+v, want the default", got)
	}
	c.Close()
	execAll(t, path, downgradeTLS...)
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if d := diffMigrated(want, c2.Snapshot()); d != "" {
		t.Fatalf("migrated snapshot differs:\n%s", d)
	}
	if got := c2.Snapshot().Host("web-01").Ext().TLS; got != DefaultHostTLS {
		t.Fatalf("migrated host TLS %+v, want the default", got)
	}
	var ver int
	if err := c2.db.QueryRow("SELECT schema_version FROM catalog_meta").Scan(&ver); err != nil || ver != schemaVersion {
		t.Fatalf("schema version %d after the upgrade (%v)", ver, err)
	}
}

// TestEditHostTLS: create and update store the settings, a reopen sees
// what the snapshot saw, a re-import keeps them, and invalid settings are
// refused with the field named.
func TestEditHostTLS(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}}}})
	gid := c.Snapshot().Group("G").ID
	certOnly := HostTLS{Connect: 4, Accept: 4, Issuer: "CN=CA", Subject: "CN=agent,O=Peregrine"}
	mustEdit(t, c, func(e *Edit) error {
		_, err := e.CreateHosts([]NewHost{{Host: "secure", GroupIDs: []uint64{gid}, TLS: certOnly}, {Host: "plain", GroupIDs: []uint64{gid}}})
		return err
	})
	s := c.Snapshot()
	if got := s.Host("secure").Ext().TLS; got != certOnly {
		t.Fatalf("created TLS %+v, want %+v", got, certOnly)
	}
	if got := s.Host("plain").Ext().TLS; got != DefaultHostTLS {
		t.Fatalf("created without TLS: %+v, want the default", got)
	}
	both := HostTLS{Connect: 1, Accept: 5}
	mustEdit(t, c, func(e *Edit) error {
		return e.UpdateHosts([]HostUpdate{{ID: s.Host("plain").ID, TLS: SetTLS(both)}})
	})
	if got := c.Snapshot().Host("plain").Ext().TLS; got != both {
		t.Fatalf("updated TLS %+v, want %+v", got, both)
	}
	// A patch of one field keeps the others.
	subj := "CN=other"
	mustEdit(t, c, func(e *Edit) error {
		return e.UpdateHosts([]HostUpdate{{ID: s.Host("secure").ID, TLS: &HostTLSPatch{Subject: &subj}}})
	})
	if got, want := c.Snapshot().Host("secure").Ext().TLS, (HostTLS{Connect: 4, Accept: 4, Issuer: "CN=CA", Subject: "CN=other"}); got != want {
		t.Fatalf("patched TLS %+v, want %+v", got, want)
	}
	certOnly.Subject = subj
	// A re-import of the spec leaves the settings alone.
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "h", Groups: []string{"G"}}, {Host: "secure", Groups: []string{"G"}}}})
	want := c.Snapshot()
	if got := want.Host("secure").Ext().TLS; got != certOnly {
		t.Fatalf("TLS after a re-import %+v", got)
	}
	c.Close()
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if d := diffViews(want, c2.Snapshot()); d != "" {
		t.Fatalf("reopened snapshot differs:\n%s", d)
	}
	for _, bad := range []struct {
		tls  HostTLS
		want string
	}{
		{HostTLS{Connect: 3, Accept: 1}, "tls_connect must be one of 1"},
		{HostTLS{Connect: 1, Accept: 8}, "tls_accept must be a sum"},
		{HostTLS{Connect: 1, Accept: 1, Subject: strings.Repeat("x", 1025)}, "tls_subject is longer than 1024"},
		// A pre-shared key needs its identity and key (psk_test.go has
		// the rest).
		{HostTLS{Connect: 2, Accept: 1}, "tls_psk_identity"},
		{HostTLS{Connect: 4, Accept: 6, PSKIdentity: "id"}, "tls_psk"},
	} {
		_, err := c2.Edit(context.Background(), func(e *Edit) error {
			return e.UpdateHosts([]HostUpdate{{ID: want.Host("h").ID, TLS: SetTLS(bad.tls)}})
		})
		if err == nil || !strings.Contains(err.Error(), "hosts[0].tls") || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: error %v, want hosts[0].tls: %s", bad.tls, err, bad.want)
		}
	}
}

// TestApplyHostTLS: the import sets encryption settings when given
// (members left out take their defaults), keeps them when absent, and
// refuses invalid ones with the field named; a reopen agrees.
func TestApplyHostTLS(t *testing.T) {
	c, path := openTemp(t)
	spec := Spec{Hosts: []HostSpec{
		{Host: "a", Groups: []string{"G"}, TLS: &TLSSpec{Connect: 4, Accept: 4, Subject: "CN=a"}},
		{Host: "b", Groups: []string{"G"}},
	}}
	mustApply(t, c, spec)
	s := c.Snapshot()
	if got, want := s.Host("a").Ext().TLS, (HostTLS{Connect: 4, Accept: 4, Subject: "CN=a"}); got != want {
		t.Fatalf("a: %+v, want %+v", got, want)
	}
	if got := s.Host("b").Ext().TLS; got != DefaultHostTLS {
		t.Fatalf("b: %+v", got)
	}
	// b gets settings (accept only: connect takes its default); a's
	// spec drops tls: a keeps its settings.
	spec.Hosts[0].TLS = nil
	spec.Hosts[1].TLS = &TLSSpec{Accept: 5}
	if res := mustApply(t, c, spec); res.HostsUpdated != 1 {
		t.Fatalf("result %+v, want one host updated", res)
	}
	want := c.Snapshot()
	if got := want.Host("a").Ext().TLS; got.Connect != 4 || got.Subject != "CN=a" {
		t.Fatalf("a after an import without tls: %+v", got)
	}
	if got := want.Host("b").Ext().TLS; got != (HostTLS{Connect: 1, Accept: 5}) {
		t.Fatalf("b: %+v", got)
	}
	spec.Hosts[1].TLS = &TLSSpec{Connect: 3}
	if _, err := c.Apply(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "hosts[1].tls") || !strings.Contains(err.Error(), "tls_connect must be one of") {
		t.Fatalf("invalid tls: %v", err)
	}
	spec.Hosts[1].TLS = &TLSSpec{Accept: 3}
	if _, err := c.Apply(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "hosts[1].tls") || !strings.Contains(err.Error(), "tls_psk_identity") {
		t.Fatalf("PSK in tls_accept without an identity: %v", err)
	}
	c.Close()
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if d := diffViews(want, c2.Snapshot()); d != "" {
		t.Fatalf("reopened snapshot differs:\n%s", d)
	}
}
