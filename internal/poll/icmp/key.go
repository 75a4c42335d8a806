package icmp

import (
	"fmt"
	"strconv"
	"time"

	"github.com/peregrine-mon/peregrine/internal/zbx/itemkey"
)

// kind is which of the three ICMP keys a check is.
type kind uint8

const (
	kindPing kind = iota // icmpping: 1 if any reply came back, else 0
	kindLoss             // icmppingloss: percentage of packets lost
	kindSec              // icmppingsec: response time in seconds, 0 if none
)

// mode is icmppingsec's statistic.
type mode uint8

const (
	modeAvg mode = iota
	modeMin
	modeMax
)

// Zabbix 6.0's defaults and bounds of the ICMP keys' parameters (its
// "table of default values" for simple checks).
const (
	defPackets  = 3
	minPackets  = 1
	maxPackets  = 10000
	defInterval = 1000 * time.Millisecond
	minInterval = 20 * time.Millisecond
	defSize     = 56 // ICMP data bytes, fping's default
	minSize     = 24
	maxSize     = 65507 // the largest IPv4 datagram's payload less the ICMP header
	defTimeout  = 500 * time.Millisecond
	minTimeout  = 50 * time.Millisecond
)

// params is one ICMP check's parsed key.
type params struct {
	kind     kind
	target   string // "" = the interface's address
	packets  int
	interval time.Duration
	size     int
	timeout  time.Duration
	mode     mode
}

// IsKey reports whether key names one of the ICMP simple checks
// (icmpping, icmppingloss, icmppingsec), with or without parameters.
func IsKey(key string) bool {
	k, err := itemkey.Parse(key)
	if err != nil {
		return false
	}
	switch k.Name {
	case "icmpping", "icmppingloss", "icmppingsec":
		return true
	}
	return false
}

// parseKey parses an ICMP key with Zabbix 6.0's parameters, defaults and
// bounds; the error is the item's "not supported" message.
func parseKey(key string) (params, error) {
	p := params{packets: defPackets, interval: defInterval, size: defSize, timeout: defTimeout}
	k, err := itemkey.Parse(key)
	if err != nil {
		return p, err
	}
	maxParams := 5
	switch k.Name {
	case "icmpping":
		p.kind = kindPing
	case "icmppingloss":
		p.kind = kindLoss
	case "icmppingsec":
		p.kind, maxParams = kindSec, 6
	default:
		return p, fmt.Errorf("unsupported ICMP key %q: use icmpping, icmppingloss or icmppingsec", k.Name)
	}
	if len(k.Params) > maxParams {
		return p, fmt.Errorf("too many parameters: %s takes at most %d", k.Name, maxParams)
	}
	for i, prm := range k.Params {
		if prm.Array != nil {
			return p, fmt.Errorf("parameter %d must not be an array", i+1)
		}
		v := prm.Value
		if v == "" {
			continue // the default
		}
		switch i {
		case 0:
			p.target = v
		case 1:
			n, err := strconv.Atoi(v)
			if err != nil || n < minPackets || n > maxPackets {
				return p, fmt.Errorf("number of packets %q is not between %d and %d", v, minPackets, maxPackets)
			}
			p.packets = n
		case 2:
			n, err := strconv.Atoi(v)
			if err != nil || time.Duration(n)*time.Millisecond < minInterval || n > 3600_000 {
				return p, fmt.Errorf("interval %q should be at least %d (milliseconds) and at most 3600000", v, minInterval.Milliseconds())
			}
			p.interval = time.Duration(n) * time.Millisecond
		case 3:
			n, err := strconv.Atoi(v)
			if err != nil || n < minSize || n > maxSize {
				return p, fmt.Errorf("packet size %q is not between %d and %d", v, minSize, maxSize)
			}
			p.size = n
		case 4:
			n, err := strconv.Atoi(v)
			if err != nil || time.Duration(n)*time.Millisecond < minTimeout || n > 3600_000 {
				return p, fmt.Errorf("timeout %q should be at least %d (milliseconds) and at most 3600000", v, minTimeout.Milliseconds())
			}
			p.timeout = time.Duration(n) * time.Millisecond
		case 5:
			switch v {
			case "avg":
				p.mode = modeAvg
			case "min":
				p.mode = modeMin
			case "max":
				p.mode = modeMax
			default:
				return p, fmt.Errorf("mode %q is not supported: use min, max or avg", v)
			}
		}
	}
	return p, nil
}
