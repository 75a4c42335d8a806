package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// downgradeHostPSK undoes the 20 → 21 migration (hosts' pre-shared
// keys) after downgradeItemLogin, the first steps of every older
// downgrade.
var downgradeHostPSK = append(slices.Clone(downgradeItemLogin), "ALTER TABLE hosts DROP COLUMN tls_psk_identity", "ALTER TABLE hosts DROP COLUMN tls_psk")

const (
	pskA = "1f87b595725ac58dd977beef14b97461a7c1045b9a1c923453302c5473193478"
	pskB = "2F87B595725AC58DD977BEEF14B97461"
)

func needPSK(t *testing.T) {
	t.Helper()
	if !zbxpsk.Available {
		t.Skip("this build has no PSK (built without cgo or with the nopsk tag); TestPSKRefusedWithoutOpenSSL covers it")
	}
}

// TestEditHostPSK: a host's identity and key are stored as given (the
// key's case kept, as Zabbix stores it), survive a reopen, are indexed
// by identity (hosts sharing one, ascending by ID), are dropped when the
// settings no longer use PSK, and never show in formatted output.
func TestEditHostPSK(t *testing.T) {
	needPSK(t)
	c, path := openTemp(t)
	mustApply(t, c, testSpec())
	g := c.Snapshot().Group("Linux servers").ID
	var ids []uint64
	mustEdit(t, c, func(e *Edit) (err error) {
		ids, err = e.CreateHosts([]NewHost{
			{Host: "psk-a", GroupIDs: []uint64{g}, TLS: HostTLS{Connect: 2, Accept: 2, PSKIdentity: "PSK 001", PSK: pskA}},
			{Host: "psk-b", GroupIDs: []uint64{g}, TLS: HostTLS{Connect: 1, Accept: 3, PSKIdentity: "PSK 001", PSK: pskB}},
			{Host: "plain", GroupIDs: []uint64{g}},
		})
		return err
	})
	c = reloadMatches(t, c, path)
	s := c.Snapshot()
	if got := s.HostByID(ids[1]).Ext().TLS; got != (HostTLS{Connect: 1, Accept: 3, PSKIdentity: "PSK 001", PSK: pskB}) {
		t.Fatalf("psk-b after reopen: %+v", got)
	}
	if hs := s.PSKHosts("PSK 001"); len(hs) != 2 || hs[0].ID != ids[0] || hs[1].ID != ids[1] {
		t.Fatalf("PSKHosts: %v", hs)
	}
	if hs := s.PSKHosts("nobody"); hs != nil {
		t.Fatalf("PSKHosts(nobody): %v", hs)
	}
	// Two hosts share the identity: the newest one's key is used.
	if k, ok := s.PSKKey("PSK 001"); !ok || len(k) != 16 || k[0] != 0x2f {
		t.Fatalf("PSKKey of a shared identity: %x %v", k, ok)
	}
	if _, ok := s.PSKKey("nobody"); ok {
		t.Fatal("PSKKey(nobody) found a key")
	}
	k, ok := s.HostByID(ids[0]).Ext().TLS.PSKKey()
	if !ok || k.Identity != "PSK 001" || len(k.Secret) != 32 || k.Secret[0] != 0x1f {
		t.Fatalf("PSKKey: %v %v", k, ok)
	}
	h := s.HostByID(ids[0])
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("host", "tls", h.Ext().TLS, "psk", h.Ext().TLS.PSK)
	js, _ := json.Marshal(h.Ext().TLS)
	for _, out := range []string{fmt.Sprintf("%v %+v %#v %s %q %x", h, h.Ext().TLS, h.Ext().TLS, h.Ext().TLS.PSK, h.Ext().TLS.PSK, h.Ext().TLS.PSK), logged.String(), string(js)} {
		if strings.Contains(strings.ToLower(out), pskA[:12]) {
			t.Errorf("the key shows in %q", out)
		}
	}

	// Only the key changes; then the settings stop using PSK: both go.
	newKey := zbxpsk.Secret(strings.Repeat("ab", 16))
	mustEdit(t, c, func(e *Edit) error {
		return e.UpdateHosts([]HostUpdate{{ID: ids[0], TLS: &HostTLSPatch{PSK: &newKey}}})
	})
	if got := c.Snapshot().HostByID(ids[0]).Ext().TLS; got.PSK != newKey || got.PSKIdentity != "PSK 001" {
		t.Fatalf("after the key changed: %+v", got)
	}
	one := uint8(1)
	mustEdit(t, c, func(e *Edit) error {
		return e.UpdateHosts([]HostUpdate{{ID: ids[1], TLS: &HostTLSPatch{Accept: &one}}})
	})
	c = reloadMatches(t, c, path)
	s = c.Snapshot()
	if got := s.HostByID(ids[1]).Ext().TLS; got != DefaultHostTLS {
		t.Fatalf("psk-b after it stopped using PSK: %+v", got)
	}
	if hs := s.PSKHosts("PSK 001"); len(hs) != 1 || hs[0].ID != ids[0] {
		t.Fatalf("PSKHosts after the update: %v", hs)
	}

	for _, bad := range []struct {
		tls  HostTLS
		want string
	}{
		{HostTLS{Connect: 2, Accept: 1, PSK: pskA}, "tls_psk_identity: the PSK identity is empty"},
		{HostTLS{Connect: 2, Accept: 1, PSKIdentity: "x"}, "tls_psk: a pre-shared key has at least 32"},
		{HostTLS{Connect: 2, Accept: 1, PSKIdentity: "x", PSK: zbxpsk.Secret(pskA[:31])}, "tls_psk: a pre-shared key has at least 32"},
		{HostTLS{Connect: 2, Accept: 1, PSKIdentity: "x", PSK: zbxpsk.Secret(pskA[:33])}, "tls_psk: a pre-shared key has an even number"},
		{HostTLS{Connect: 2, Accept: 1, PSKIdentity: "x", PSK: zbxpsk.Secret(strings.Repeat("zz", 16))}, "only hexadecimal"},
		{HostTLS{Connect: 2, Accept: 1, PSKIdentity: "x", PSK: zbxpsk.Secret(strings.Repeat("ab", 257))}, "at most 512"},
		{HostTLS{Connect: 2, Accept: 1, PSKIdentity: strings.Repeat("é", 129), PSK: pskA}, "longer than 128 characters"},
	} {
		_, err := c.Edit(context.Background(), func(e *Edit) error {
			return e.UpdateHosts([]HostUpdate{{ID: ids[2], TLS: SetTLS(bad.tls)}})
		})
		if err == nil || !strings.Contains(err.Error(), "hosts[0].tls") || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: error %v, want hosts[0].tls: %s", bad.tls.PSKIdentity, err, bad.want)
		}
		if err != nil && strings.Contains(err.Error(), pskA[:12]) {
			t.Errorf("the key shows in %v", err)
		}
	}
	// Check (what a load runs) refuses an identity or key a host that
	// does not use PSK holds.
	if err := (HostTLS{Connect: 1, Accept: 1, PSKIdentity: "x"}).Check(); err == nil {
		t.Error("Check: an identity without PSK accepted")
	}
	if err := (HostTLS{Connect: 1, Accept: 1, PSK: pskA}).Check(); err == nil {
		t.Error("Check: a key without PSK accepted")
	}
}

// TestApplyHostPSK: the import takes psk_identity and psk.
func TestApplyHostPSK(t *testing.T) {
	needPSK(t)
	c, _ := openTemp(t)
	mustApply(t, c, Spec{Hosts: []HostSpec{{Host: "a", Groups: []string{"G"}, TLS: &TLSSpec{Connect: 2, Accept: 2, PSKIdentity: "id-a", PSK: pskA}}}})
	if got := c.Snapshot().Host("a").Ext().TLS; got != (HostTLS{Connect: 2, Accept: 2, PSKIdentity: "id-a", PSK: pskA}) {
		t.Fatalf("a: %+v", got)
	}
	_, err := c.Apply(context.Background(), Spec{Hosts: []HostSpec{{Host: "b", Groups: []string{"G"}, TLS: &TLSSpec{Connect: 2, Accept: 2, PSKIdentity: "id-b", PSK: "abc"}}}})
	if err == nil || !strings.Contains(err.Error(), "tls_psk") {
		t.Fatalf("bad key imported: %v", err)
	}
}

// TestMigrateV20HostPSK: a database of schema version 20 gains the
// columns, every host with no identity and no key.
func TestMigrateV20HostPSK(t *testing.T) {
	c, path := openTemp(t)
	mustApply(t, c, testSpec())
	want := c.Snapshot()
	c.Close()
	execAll(t, path, append(slices.Clone(downgradeHostPSK), "UPDATE catalog_meta SET schema_version = 20")...)
	c2, err := openPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if d := diffMigrated(want, c2.Snapshot()); d != "" {
		t.Fatalf("migrated snapshot differs:\n%s", d)
	}
	for _, h := range c2.Snapshot().Hosts() {
		if h.Ext().TLS.PSKIdentity != "" || h.Ext().TLS.PSK != "" {
			t.Fatalf("host %s after the migration: %+v", h.Host, h.Ext().TLS)
		}
	}
}

// TestPSKRefusedWithoutOpenSSL: a build without PSK refuses it when it
// is configured, naming the cause.
func TestPSKRefusedWithoutOpenSSL(t *testing.T) {
	tl := HostTLS{Connect: 2, Accept: 1, PSKIdentity: "x", PSK: pskA}
	err := tl.CheckSupported()
	if zbxpsk.Available {
		if err != nil {
			t.Fatalf("CheckSupported with OpenSSL: %v", err)
		}
		return
	}
	if !errors.Is(err, zbxpsk.ErrUnavailable) {
		t.Fatalf("CheckSupported without OpenSSL: %v", err)
	}
}
