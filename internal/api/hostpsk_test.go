package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// TestHostPSKAPI: host.create, host.update and host.massupdate take
// tls_psk_identity and tls_psk with 6.0's checks and words (every
// refusal below recorded from 6.0.14), store them as given, drop them
// when the settings stop using PSK, and host.get never returns them
// while filtering and searching on the identity (not the key).
func TestHostPSKAPI(t *testing.T) {
	if !zbxpsk.Available {
		t.Skip("this build has no PSK (built without cgo or with the nopsk tag); TestHostPSKUnavailable covers it")
	}
	f, _, _ := newIfaceFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	const key = "1f87b595725ac58dd977beef14b97461"
	create := func(name, tls string) (string, *rpcError) {
		res, e := f.call(t, "super", "host.create", fmt.Sprintf(`{"host":%q,"groups":[{"groupid":%q}],%s}`, name, g, tls))
		return string(res), e
	}
	long := strings.Repeat("a", 129)
	for _, c := range []struct {
		tls  string
		code int
		want string
	}{
		{`"tls_connect":2,"tls_accept":2`, -32602, `Incorrect value for field "tls_psk_identity": cannot be empty.`},
		{`"tls_connect":2,"tls_accept":2,"tls_psk_identity":"id1"`, -32602, `Incorrect value for field "tls_psk": cannot be empty.`},
		{`"tls_connect":2,"tls_accept":2,"tls_psk":"` + key + `"`, -32602, `Incorrect value for field "tls_psk_identity": cannot be empty.`},
		{`"tls_connect":2,"tls_accept":2,"tls_psk_identity":"id1","tls_psk":"abc"`, -32602, `Incorrect value for field "tls_psk": an even number of hexadecimal characters is expected.`},
		{`"tls_connect":2,"tls_accept":2,"tls_psk_identity":"id1","tls_psk":"` + key[:31] + `"`, -32602, `Incorrect value for field "tls_psk": an even number of hexadecimal characters is expected.`},
		{`"tls_connect":2,"tls_accept":2,"tls_psk_identity":"id1","tls_psk":"` + key[:30] + `"`, -32602, `Incorrect value for field "tls_psk": minimum length is 32 characters.`},
		{`"tls_connect":2,"tls_accept":2,"tls_psk_identity":"id1","tls_psk":"` + key[:31] + `z"`, -32602, `Incorrect value for field "tls_psk": an even number of hexadecimal characters is expected.`},
		{`"tls_connect":2,"tls_accept":1,"tls_psk_identity":"k","tls_psk":null`, -32602, `Incorrect value for field "tls_psk": an even number of hexadecimal characters is expected.`},
		// The lengths come after the other checks, as application errors.
		{`"tls_connect":2,"tls_accept":1,"tls_psk_identity":"` + long + `","tls_psk":"abc"`, -32602, `Incorrect value for field "tls_psk": an even number of hexadecimal characters is expected.`},
		{`"tls_connect":2,"tls_accept":1,"tls_psk_identity":"` + long + `","tls_psk":"` + key + `"`, -32500, `Value "` + long + `" is too long for field "tls_psk_identity" - 129 characters. Allowed length is 128 characters.`},
		// 6.0 quotes the key here; Peregrine never does.
		{`"tls_connect":2,"tls_accept":1,"tls_psk_identity":"ok","tls_psk":"` + strings.Repeat("ab", 257) + `"`, -32500, `Value is too long for field "tls_psk" - 514 characters. Allowed length is 512 characters.`},
		{`"tls_connect":1,"tls_accept":1,"tls_psk_identity":"id3","tls_psk":"` + key + `"`, -32602, `Incorrect value for field "tls_psk_identity": should be empty.`},
		{`"tls_connect":1,"tls_accept":1,"tls_psk":"` + key + `"`, -32602, `Incorrect value for field "tls_psk": should be empty.`},
	} {
		if _, e := create("refused", c.tls); e == nil || e.Code != c.code || e.Data != c.want {
			t.Errorf("%.60s: error %+v, want %d %q", c.tls, e, c.code, c.want)
		}
	}
	if f.cat.Snapshot().Host("refused") != nil {
		t.Fatal("a refused host.create created its host")
	}
	// Accepted: 32 digits; 128 two-byte characters; the key's case kept;
	// empty values with no PSK; a number as the identity; two hosts with
	// one identity (6.0 lets them).
	mustCreate := func(name, tls string) string {
		t.Helper()
		res, e := create(name, tls)
		if e != nil {
			t.Fatalf("%s: %+v", name, e)
		}
		return res
	}
	mustCreate("psk-a", `"tls_connect":2,"tls_accept":2,"tls_psk_identity":"id1","tls_psk":"`+key+`"`)
	mustCreate("psk-b", `"tls_connect":1,"tls_accept":3,"tls_psk_identity":"id1","tls_psk":"`+strings.ToUpper(key)+`"`)
	mustCreate("psk-c", `"tls_connect":2,"tls_accept":1,"tls_psk_identity":"`+strings.Repeat("é", 128)+`","tls_psk":"`+strings.Repeat("ab", 256)+`"`)
	mustCreate("psk-d", `"tls_connect":2,"tls_accept":1,"tls_psk_identity":5,"tls_psk":"`+key+`"`)
	mustCreate("plain", `"tls_connect":1,"tls_accept":1,"tls_psk_identity":"","tls_psk":""`)
	s := f.cat.Snapshot()
	if got := s.Host("psk-b").Ext().TLS; got != (catalog.HostTLS{Connect: 1, Accept: 3, PSKIdentity: "id1", PSK: zbxpsk.Secret(strings.ToUpper(key))}) {
		t.Fatalf("psk-b stored %+v", got)
	}
	if got := s.Host("psk-d").Ext().TLS.PSKIdentity; got != "5" {
		t.Fatalf("psk-d identity %q", got)
	}

	// host.get: never the identity or the key, even asked for; filter and
	// search on the identity; a condition on the key matches nothing.
	for _, h := range f.get(t, "host.get", `{"output":"extend"}`) {
		if _, ok := h["tls_psk"]; ok {
			t.Fatalf("host.get extend returns tls_psk: %v", h)
		}
	}
	for _, h := range f.get(t, "host.get", `{"output":["host","tls_psk_identity","tls_psk"]}`) {
		if len(h) != 2 {
			t.Fatalf("host.get output with tls_psk*: %v", h)
		}
	}
	names := func(params string) string {
		var out []string
		for _, h := range f.get(t, "host.get", params) {
			out = append(out, h["host"].(string))
		}
		return strings.Join(out, ",")
	}
	if got := names(`{"output":["host"],"filter":{"tls_psk_identity":"id1"},"sortfield":"host"}`); got != "psk-a,psk-b" {
		t.Errorf("filter on the identity: %s", got)
	}
	if got := names(`{"output":["host"],"search":{"tls_psk_identity":"id"},"sortfield":"host"}`); got != "psk-a,psk-b" {
		t.Errorf("search on the identity: %s", got)
	}
	if got := names(`{"output":["host"],"filter":{"tls_psk":"` + key + `"}}`); got != "" {
		t.Errorf("filter on the key matched %s", got)
	}

	// host.update: the key alone; an identity to a host without PSK is
	// refused; leaving PSK drops both; coming back needs them again.
	ida := s.Host("psk-a").ID
	update := func(params string) *rpcError {
		_, e := f.call(t, "super", "host.update", fmt.Sprintf(`{"hostid":"%d",%s}`, ida, params))
		return e
	}
	if e := update(`"tls_psk":"` + strings.Repeat("cd", 16) + `"`); e != nil {
		t.Fatalf("update the key: %+v", e)
	}
	if got := f.cat.Snapshot().Host("psk-a").Ext().TLS; got.PSK != zbxpsk.Secret(strings.Repeat("cd", 16)) || got.PSKIdentity != "id1" {
		t.Fatalf("after the key update: %+v", got)
	}
	if e := update(`"tls_psk_identity":""`); e == nil || e.Data != `Incorrect value for field "tls_psk_identity": cannot be empty.` {
		t.Errorf("empty identity on a PSK host: %+v", e)
	}
	if e := update(`"tls_connect":1,"tls_accept":1`); e != nil {
		t.Fatalf("leave PSK: %+v", e)
	}
	if got := f.cat.Snapshot().Host("psk-a").Ext().TLS; got != catalog.DefaultHostTLS {
		t.Fatalf("after leaving PSK: %+v", got)
	}
	if e := update(`"tls_psk_identity":"x"`); e == nil || e.Data != `Incorrect value for field "tls_psk_identity": should be empty.` {
		t.Errorf("identity on a host without PSK: %+v", e)
	}
	if e := update(`"tls_connect":2`); e == nil || e.Data != `Incorrect value for field "tls_psk_identity": cannot be empty.` {
		t.Errorf("back to PSK without a key: %+v", e)
	}

	// host.massupdate: any tls_* member needs both directions; with PSK
	// the identity and key are checked; without, dropped silently.
	hosts := fmt.Sprintf(`[{"hostid":"%d"},{"hostid":"%d"}]`, s.Host("plain").ID, s.Host("psk-b").ID)
	mass := func(params string) *rpcError {
		_, e := f.call(t, "super", "host.massupdate", fmt.Sprintf(`{"hosts":%s,%s}`, hosts, params))
		return e
	}
	both := "Cannot update host encryption settings. Connection settings for both directions should be specified."
	for _, p := range []string{`"tls_issuer":"CN=x"`, `"tls_psk":"` + key + `"`, `"tls_psk_identity":"m2"`, `"tls_connect":2`} {
		if e := mass(p); e == nil || e.Data != both {
			t.Errorf("massupdate %s: %+v", p, e)
		}
	}
	if e := mass(`"tls_connect":2,"tls_accept":2`); e == nil || e.Data != `Incorrect value for field "tls_psk_identity": cannot be empty.` {
		t.Errorf("massupdate to PSK without an identity: %+v", e)
	}
	if e := mass(`"tls_connect":2,"tls_accept":2,"tls_psk_identity":"m","tls_psk":"zz"`); e == nil || e.Data != `Incorrect value for field "tls_psk": an even number of hexadecimal characters is expected.` {
		t.Errorf("massupdate with a bad key: %+v", e)
	}
	if e := mass(`"tls_connect":2,"tls_accept":2,"tls_psk_identity":"m","tls_psk":"` + key + `"`); e != nil {
		t.Fatalf("massupdate to PSK: %+v", e)
	}
	if got := names(`{"output":["host"],"filter":{"tls_psk_identity":"m"},"sortfield":"host"}`); got != "plain,psk-b" {
		t.Errorf("after massupdate to PSK: %s", got)
	}
	if e := mass(`"tls_connect":1,"tls_accept":1,"tls_psk_identity":"m2","tls_psk":"` + key + `"`); e != nil {
		t.Fatalf("massupdate out of PSK with a key given: %+v", e)
	}
	for _, n := range []string{"plain", "psk-b"} {
		if got := f.cat.Snapshot().Host(n).Ext().TLS; got != catalog.DefaultHostTLS {
			t.Errorf("%s after massupdate out of PSK: %+v", n, got)
		}
	}
}

// TestHostPSKUnavailable: a build without OpenSSL refuses PSK hosts when
// they are configured, saying why.
func TestHostPSKUnavailable(t *testing.T) {
	if zbxpsk.Available {
		t.Skip("this build has PSK")
	}
	f, _, _ := newIfaceFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	_, e := f.call(t, "super", "host.create", fmt.Sprintf(`{"host":"psk","groups":[{"groupid":%q}],"tls_connect":2,"tls_psk_identity":"id","tls_psk":"0123456789abcdef0123456789abcdef"}`, g))
	if e == nil || !strings.HasPrefix(e.Data, `Invalid parameter "/1/tls_connect": TLS with a pre-shared key (PSK) is not available in this build`) {
		t.Fatalf("host.create with PSK: %+v", e)
	}
}
