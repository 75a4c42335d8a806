package catalog

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// downgradeProxies undoes the 28 → 29 migration (proxies, hosts'
// proxy) after downgradeAutoreg.
var downgradeProxies = append(slices.Clone(downgradeAutoreg), "DROP TABLE host_proxy", "DROP TABLE proxies")

func TestProxies(t *testing.T) {
	c, path := openTrig(t)
	ctx := context.Background()
	h := c.Snapshot().Host("web-01")
	var act, pas uint64
	_, err := c.Edit(ctx, func(e *Edit) error {
		ids, err := e.CreateProxies([]Proxy{
			{Name: "px-a", Status: ProxyActive, TLS: HostTLS{Connect: 1, Accept: 2, PSKIdentity: "id-a", PSK: zbxpsk.Secret("0123456789abcdef0123456789abcdef")}, AutoCompress: true},
			{Name: "px-p", Status: ProxyPassive, TLS: DefaultHostTLS, Interface: ProxyInterface{UseIP: true, IP: "127.0.0.1", Port: "10051"}},
		})
		if err != nil {
			return err
		}
		act, pas = ids[0], ids[1]
		return e.SetHostsProxy([]uint64{h.ID}, act)
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(c *Catalog) {
		t.Helper()
		s := c.Snapshot()
		if p := s.ProxyByName("px-a"); p == nil || p.ID != act || s.Proxy(pas).Interface.Address() != "127.0.0.1:10051" {
			t.Fatalf("proxies: %+v", s.Proxies())
		}
		if s.Host("web-01").ProxyID != act || len(s.ProxyHosts(act)) != 1 {
			t.Fatalf("web-01's proxy: %d", s.Host("web-01").ProxyID)
		}
		if k, ok := s.ProxyPSKKey("id-a"); !ok || len(k) != 16 {
			t.Fatalf("proxy key: %v", ok)
		}
	}
	check(c)
	if err := c.SaveProxyLastAccess(ctx, map[uint64]int64{act: 1700000000, 999: 5}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c = reopenTrig(t, path)
	check(c)
	if got := c.Snapshot().Proxy(act).LastAccess; got != 1700000000 {
		t.Fatalf("lastaccess after reopen: %d", got)
	}
	_, err = c.Edit(ctx, func(e *Edit) error { return e.DeleteProxies([]uint64{act}) })
	var inUse *ProxyInUseError
	if !errors.As(err, &inUse) || inUse.Error() != `Host "web-01" is monitored by proxy "px-a".` {
		t.Fatalf("delete of a proxy in use: %v", err)
	}
	_, err = c.Edit(ctx, func(e *Edit) error {
		_, err := e.CreateProxies([]Proxy{{Name: "px-a", Status: 5, TLS: DefaultHostTLS}})
		return err
	})
	var dup *ProxyExistsError
	if !errors.As(err, &dup) {
		t.Fatalf("duplicate: %v", err)
	}
	_, err = c.Edit(ctx, func(e *Edit) error {
		if err := e.SetHostsProxy([]uint64{h.ID}, 0); err != nil {
			return err
		}
		return e.DeleteProxies([]uint64{act})
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Snapshot(); s.Host("web-01").ProxyID != 0 || s.Proxy(act) != nil || len(s.Proxies()) != 1 {
		t.Fatalf("after delete: %+v", s.Proxies())
	}
}

// TestMigrateProxies: a version 26 catalog gains the tables, no proxies.
func TestMigrateProxies(t *testing.T) {
	c, path := openTrig(t)
	c.Close()
	execAll(t, path, append(slices.Clone(downgradeProxies), "UPDATE catalog_meta SET schema_version = 28")...)
	c = reopenTrig(t, path)
	if len(c.Snapshot().Proxies()) != 0 || c.Snapshot().Host("web-01") == nil {
		t.Fatal("migrated catalog")
	}
}
