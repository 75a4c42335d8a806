package icmp

import "testing"

// FuzzParseKey: any key parseKey accepts has its parameters within
// Zabbix's bounds; nothing panics.
func FuzzParseKey(f *testing.F) {
	for _, k := range []string{"icmpping", "icmppingloss[10.0.0.1,4]", "icmppingsec[,10,20,24,50,max]", `icmppingsec[,10,20,65507,50,"min"]`, "icmpping[,0]", "icmpping[[a]]"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		p, err := parseKey(key)
		if err != nil {
			return
		}
		if p.packets < minPackets || p.packets > maxPackets || p.interval < minInterval || p.size < minSize || p.size > maxSize ||
			p.timeout < minTimeout || p.kind > kindSec || p.mode > modeMax {
			t.Fatalf("parseKey(%q) accepted %+v", key, p)
		}
	})
}
