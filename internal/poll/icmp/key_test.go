package icmp

import (
	"strings"
	"testing"
	"time"
)

func TestParseKey(t *testing.T) {
	f := func(key string, want params) {
		t.Helper()
		got, err := parseKey(key)
		if err != nil {
			t.Fatalf("parseKey(%q): %v", key, err)
		}
		if got != want {
			t.Errorf("parseKey(%q) = %+v, want %+v", key, got, want)
		}
	}
	def := params{packets: 3, interval: time.Second, size: 56, timeout: 500 * time.Millisecond}
	f("icmpping", def)
	f("icmpping[]", def)
	f("icmpping[,,,,]", def)
	loss := def
	loss.kind = kindLoss
	loss.target, loss.packets = "10.0.0.1", 4
	f("icmppingloss[10.0.0.1,4]", loss)
	sec := def
	sec.kind, sec.packets, sec.interval, sec.size, sec.timeout, sec.mode = kindSec, 10, 20*time.Millisecond, 24, 50*time.Millisecond, modeMax
	f("icmppingsec[,10,20,24,50,max]", sec)
	sec.mode, sec.size = modeMin, 65507
	f(`icmppingsec[,10,20,65507,50,"min"]`, sec)
}

func TestParseKeyErrors(t *testing.T) {
	f := func(key, want string) {
		t.Helper()
		_, err := parseKey(key)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseKey(%q) = %v, want an error with %q", key, err, want)
		}
	}
	f("icmpping[,0]", "number of packets \"0\" is not between 1 and 10000")
	f("icmpping[,10001]", "not between 1 and 10000")
	f("icmpping[,x]", "number of packets")
	f("icmpping[,,19]", "interval \"19\" should be at least 20")
	f("icmpping[,,,23]", "packet size \"23\" is not between 24 and 65507")
	f("icmpping[,,,65508]", "packet size")
	f("icmpping[,,,,49]", "timeout \"49\" should be at least 50")
	f("icmppingsec[,,,,,median]", "mode \"median\" is not supported")
	f("icmpping[,,,,,avg]", "too many parameters")
	f("icmppingsec[,,,,,avg,1]", "too many parameters")
	f("icmpping[[a,b]]", "must not be an array")
	f("icmpping[", "invalid item key")
	f("net.tcp.service[ssh]", "unsupported ICMP key")
}

// TestValue checks the three keys' values from a run's tallies, as
// Zabbix computes them: any reply makes icmpping 1, loss is a
// percentage of the packets sent, icmppingsec ignores lost packets, is 0
// without a reply and at least 0.0001 with one.
func TestValue(t *testing.T) {
	f := func(k kind, m mode, sent, recv int, rtts []time.Duration, want string) {
		t.Helper()
		r := &run{p: params{kind: k, mode: m, packets: sent}, sent: sent}
		for _, d := range rtts {
			if r.recv == 0 || d < r.min {
				r.min = d
			}
			r.max = max(r.max, d)
			r.sum += d
			r.recv++
		}
		if r.recv != recv {
			t.Fatalf("bad case: %d rtts for %d replies", len(rtts), recv)
		}
		if got := string(r.value()); got != want {
			t.Errorf("value(kind %d, mode %d, %d/%d, %v) = %s, want %s", k, m, recv, sent, rtts, got, want)
		}
	}
	ms := time.Millisecond
	f(kindPing, 0, 3, 0, nil, "0")
	f(kindPing, 0, 3, 1, []time.Duration{ms}, "1")
	f(kindLoss, 0, 3, 0, nil, "100")
	f(kindLoss, 0, 4, 3, []time.Duration{ms, ms, ms}, "25")
	f(kindLoss, 0, 3, 1, []time.Duration{ms}, "66.66666666666667")
	f(kindLoss, 0, 3, 3, []time.Duration{ms, ms, ms}, "0")
	f(kindSec, modeAvg, 3, 0, nil, "0")
	f(kindSec, modeAvg, 3, 2, []time.Duration{ms, 3 * ms}, "0.002000")
	f(kindSec, modeMin, 3, 2, []time.Duration{ms, 3 * ms}, "0.001000")
	f(kindSec, modeMax, 3, 2, []time.Duration{ms, 3 * ms}, "0.003000")
	f(kindSec, modeAvg, 1, 1, []time.Duration{10 * time.Microsecond}, "0.000100")
}

func TestIsKey(t *testing.T) {
	for key, want := range map[string]bool{
		"icmpping": true, "icmppingloss[1.2.3.4]": true, "icmppingsec[,,,,,min]": true,
		"icmppingretry": false, "net.tcp.service[ssh]": false, "icmpping[": false,
	} {
		if got := IsKey(key); got != want {
			t.Errorf("IsKey(%q) = %v, want %v", key, got, want)
		}
	}
}
