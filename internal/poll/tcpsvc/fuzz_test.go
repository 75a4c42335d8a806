package tcpsvc

import "testing"

// FuzzParseKey: any key parseKey accepts names a known service, a port
// in range and a host; nothing panics.
func FuzzParseKey(f *testing.F) {
	for _, k := range []string{"net.tcp.service[ssh]", "net.tcp.service.perf[tcp,127.0.0.1,80]", "net.tcp.service[http,,0]", "net.tcp.service[ntp]", `net.tcp.service["ldap",[a],1]`} {
		f.Add(k, "127.0.0.1:10050")
	}
	f.Fuzz(func(t *testing.T, key, iface string) {
		tg, err := parseKey(key, iface)
		if err != nil {
			return
		}
		if _, ok := services[tg.name]; !ok || tg.port < 1 || tg.port > 65535 || tg.host == "" {
			t.Fatalf("parseKey(%q, %q) accepted %+v", key, iface, tg)
		}
	})
}
