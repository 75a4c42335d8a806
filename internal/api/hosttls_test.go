package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/peregrine-mon/peregrine/internal/catalog"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// TestHostTLSAPI: host.create/update store the tls_* fields, host.get
// returns them (never a pre-shared key), members not given keep their
// value, and invalid values get Zabbix's messages.
// noKeyOr is the refusal of PSK without an identity, or in a build
// without OpenSSL, of PSK (naming field).
func noKeyOr(field string) string {
	if !zbxpsk.Available {
		return `Invalid parameter "/1/` + field + `": ` + zbxpsk.ErrUnavailable.Error() + "."
	}
	return `Incorrect value for field "tls_psk_identity": cannot be empty.`
}

func TestHostTLSAPI(t *testing.T) {
	f, _, _ := newIfaceFixture(t)
	g := f.ids(t, "hostgroup.create", `{"name":"G"}`, "groupids")[0]
	f.ids(t, "host.create", fmt.Sprintf(`{"host":"plain","groups":[{"groupid":%q}]}`, g), "hostids")
	hid := f.ids(t, "host.create", fmt.Sprintf(`{"host":"secure","groups":[{"groupid":%q}],"tls_connect":4,"tls_accept":"4",
		"tls_issuer":"CN=Test CA","tls_subject":"CN=agent,O=Peregrine","tls_psk_identity":"","tls_psk":""}`, g), "hostids")[0]
	if got, want := f.cat.Snapshot().Host("secure").Ext().TLS, (catalog.HostTLS{Connect: 4, Accept: 4, Issuer: "CN=Test CA", Subject: "CN=agent,O=Peregrine"}); got != want {
		t.Fatalf("stored %+v, want %+v", got, want)
	}
	got := f.get(t, "host.get", `{"output":["host","tls_connect","tls_accept","tls_issuer","tls_subject","tls_psk","tls_psk_identity"],"sortfield":"host"}`)
	want := []map[string]any{
		{"host": "plain", "hostid": f.get(t, "host.get", `{"filter":{"host":"plain"}}`)[0]["hostid"], "tls_connect": "1", "tls_accept": "1", "tls_issuer": "", "tls_subject": ""},
		{"host": "secure", "hostid": hid, "tls_connect": "4", "tls_accept": "4", "tls_issuer": "CN=Test CA", "tls_subject": "CN=agent,O=Peregrine"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("host.get (-want +got):\n%s", d)
	}
	for _, h := range f.get(t, "host.get", `{"output":"extend"}`) {
		if _, ok := h["tls_psk"]; ok {
			t.Fatalf("host.get extend returns tls_psk: %v", h)
		}
	}
	// A pre-shared key given to a host without PSK is refused (recorded
	// from 6.0.14), and nothing is stored.
	if _, e := f.call(t, "super", "host.create", fmt.Sprintf(`{"host":"psk","groups":[{"groupid":%q}],"tls_connect":1,"tls_psk_identity":"id","tls_psk":"0123456789abcdef0123456789abcdef"}`, g)); e == nil || e.Data != `Incorrect value for field "tls_psk_identity": should be empty.` {
		t.Fatalf("host.create with a key and no PSK: error %+v", e)
	}
	if f.cat.Snapshot().Host("psk") != nil {
		t.Fatal("a refused host.create created the host")
	}
	// Only tls_accept: the other members stay.
	f.ids(t, "host.update", fmt.Sprintf(`{"hostid":%q,"tls_accept":5}`, hid), "hostids")
	if got, want := f.cat.Snapshot().Host("secure").Ext().TLS, (catalog.HostTLS{Connect: 4, Accept: 5, Issuer: "CN=Test CA", Subject: "CN=agent,O=Peregrine"}); got != want {
		t.Fatalf("after update %+v, want %+v", got, want)
	}
	for _, c := range []struct{ params, want string }{
		{`"tls_connect":3`, `Invalid parameter "/1/tls_connect": value must be one of 1, 2, 4.`},
		{`"tls_accept":0`, `Invalid parameter "/1/tls_accept": value must be one of 1-7.`},
		{`"tls_accept":8`, `Invalid parameter "/1/tls_accept": value must be one of 1-7.`},
		{`"tls_subject":"` + strings.Repeat("x", 1025) + `"`, `Invalid parameter "/1/tls_subject": value is too long.`},
		// PSK without an identity (psk_test.go has the rest).
		{`"tls_connect":2`, noKeyOr("tls_connect")},
		{`"tls_accept":"3"`, noKeyOr("tls_accept")},
	} {
		_, e := f.call(t, "super", "host.update", fmt.Sprintf(`{"hostid":%q,%s}`, hid, c.params))
		if e == nil || e.Data != c.want {
			t.Errorf("%s: error %+v, want %q", c.params[:min(len(c.params), 30)], e, c.want)
		}
	}
}
