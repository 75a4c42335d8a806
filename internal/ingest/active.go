package ingest

import (
	"container/list"
	"net"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/peregrine-mon/peregrine/internal/catalog"
)

// Results of an "active checks" request, as the "result" label.
type activeResult int

const (
	activeOK activeResult = iota
	activeUnknownHost
	activeHostDisabled
	activeBadRequest
	activeTLSRefused
	numActiveResults
)

var activeResultNames = [numActiveResults]string{"ok", "unknown_host", "host_disabled", "bad_request", "tls_refused"}

// maxHostNameLen is Zabbix's limit on a technical host name.
const maxHostNameLen = 128

// AgentInfo is what an active agent said about itself in its latest
// "active checks" request (and heartbeat), kept for auto-registration:
// Zabbix registers an unknown host from exactly these fields.
type AgentInfo struct {
	Host         string
	HostMetadata string // HostMetadata or HostMetadataItem's value
	IP           string // the "ip" member (the agent's ListenIP), or ""
	Interface    string // the "interface" member (HostInterface), or ""
	Port         string // the "port" member (ListenPort), or ""
	Version      string // the "version" member; "" for 6.0 zabbix_agentd
	Remote       string // the connection's remote address
	Known        bool   // the host existed in the catalog at the time
	LastSeen     time.Time
	// LastHeartbeat is when the latest "active check heartbeat" came
	// (6.2+ agents); zero if none.
	LastHeartbeat time.Time
}

// Limits on what an agent's self-description may take in memory: the
// agents refuse a HostMetadata over 2034 bytes; the other fields are
// addresses and names. Longer values are cut (at a character boundary).
const (
	maxHostMetadataBytes = 2034
	maxAgentFieldBytes   = 255
)

// agentRegistry keeps the AgentInfo of the most recently seen hosts in
// memory only: after a restart agents tell it all again within one
// RefreshActiveChecks period. Hosts in the catalog and unknown hosts are
// kept apart, each list bounded (least recently seen dropped first), so
// that a flood of made-up host names (at most about 3 KB each) only
// pushes out other unknown hosts, never the catalog's.
type agentRegistry struct {
	mu   sync.Mutex
	m    map[string]*list.Element // of *agentEntry
	lrus [2]list.List             // [0] unknown hosts, [1] known; front = most recent
	max  [2]int
}

type agentEntry struct {
	info AgentInfo
	list int // index into lrus
}

func newAgentRegistry(known, unknown int) *agentRegistry {
	return &agentRegistry{m: map[string]*list.Element{}, max: [2]int{unknown, known}}
}

func listOf(known bool) int {
	if known {
		return 1
	}
	return 0
}

// update records info for its host; a heartbeat-only update (hb) keeps
// the details of the latest "active checks".
func (r *agentRegistry) update(info AgentInfo, hb bool) {
	info.HostMetadata = cutUTF8(info.HostMetadata, maxHostMetadataBytes)
	info.IP = cutUTF8(info.IP, maxAgentFieldBytes)
	info.Interface = cutUTF8(info.Interface, maxAgentFieldBytes)
	info.Port = cutUTF8(info.Port, maxAgentFieldBytes)
	info.Version = cutUTF8(info.Version, maxAgentFieldBytes)
	l := listOf(info.Known)
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.m[info.Host]; ok {
		ae := e.Value.(*agentEntry)
		if hb {
			old := ae.info
			old.LastHeartbeat, old.Remote, old.Known = info.LastHeartbeat, info.Remote, info.Known
			info = old
		} else {
			info.LastHeartbeat = ae.info.LastHeartbeat
		}
		r.lrus[ae.list].Remove(e)
		delete(r.m, info.Host)
	}
	if r.lrus[l].Len() >= r.max[l] {
		old := r.lrus[l].Back()
		r.lrus[l].Remove(old)
		delete(r.m, old.Value.(*agentEntry).info.Host)
	}
	r.m[info.Host] = r.lrus[l].PushFront(&agentEntry{info: info, list: l})
}

func (r *agentRegistry) get(host string) (AgentInfo, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.m[host]; ok {
		return e.Value.(*agentEntry).info, true
	}
	return AgentInfo{}, false
}

// cutUTF8 cuts s to at most n bytes without splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ActiveAgent returns what the active agent of host said in its latest
// "active checks" request or heartbeat.
func (s *Server) ActiveAgent(host string) (AgentInfo, bool) { return s.agents.get(host) }

// activeChecks answers an "active checks" request (spec §4.2) with the
// host's enabled items of type Zabbix agent (active), in the form the
// Zabbix 6.0 server gives the agent's version (activeFormOf,
// appendActiveItem): key, itemid and the interval as configured for
// 4.4 and later (agent 2 sends "6.0"), key, key_orig and the interval in
// integer seconds for older agents and for 6.0 zabbix_agentd, which
// sends no version and reads the interval with atoi ("1m" would be 1
// second). Both carry lastlogsize and mtime (the stored position of log
// items, 0 otherwise). No config_revision: 7.0 agents then take the full
// list every time, as they do from a 6.0 server.
func (s *Server) activeChecks(cs *connState, recv time.Time, remote string) []byte {
	top := &cs.req.top
	if top.host == nil {
		return s.activeFailed(activeBadRequest, remote, "", `cannot find the "host" member in the request`)
	}
	host := string(top.host)
	if msg := checkHostName(host); msg != "" {
		return s.activeFailed(activeBadRequest, remote, host, "invalid host name ["+truncateForLog(host)+"]: "+msg)
	}
	if top.ip != nil && net.ParseIP(string(top.ip)) == nil {
		return s.activeFailed(activeBadRequest, remote, host, strconv.Quote(truncateForLog(string(top.ip)))+" is not a valid IP address")
	}
	snap := s.opts.Catalog.Snapshot()
	h := snap.Host(host)
	s.agents.update(AgentInfo{
		Host: host, HostMetadata: string(top.hostMetadata), IP: string(top.ip), Interface: string(top.iface),
		Port: string(top.port), Version: string(top.version), Remote: remote, Known: h != nil, LastSeen: recv,
	}, false)
	if h == nil {
		if err := s.autoRegister(cs, remote, false, recv); err != nil {
			return s.activeFailed(activeTLSRefused, remote, host, err.Error())
		}
		return s.activeFailed(activeUnknownHost, remote, host, "host ["+host+"] not found")
	}
	if !h.Enabled {
		return s.activeFailed(activeHostDisabled, remote, host, "host ["+host+"] not monitored")
	}
	if err := s.allowed(h, &cs.peer, remote); err != nil {
		return s.activeFailed(activeTLSRefused, remote, host, err.Error())
	}
	// A known host's registration only matters when its details changed;
	// the registrar tells that (and ignores a refusal's cause: the
	// host's own settings allowed the connection).
	_ = s.autoRegister(cs, remote, true, recv)
	s.m.active[activeOK].Inc()
	f := activeFormOf(top.version)
	a := activeHost{snap: snap, host: h}
	out := append(cs.out[:0], `{"response":"success","data":[`...)
	n := 0
	for _, it := range h.Items() {
		if it.Type != catalog.ZabbixAgentActive || !it.Enabled {
			continue
		}
		if n > 0 {
			out = append(out, ',')
		}
		var ok bool
		if out, ok = s.appendActiveItem(out, &a, it, f, recv); ok {
			n++
		} else if n > 0 {
			out = out[:len(out)-1] // the comma
		}
	}
	out = append(out, ']')
	if f.refreshUnsupported {
		out = append(out, `,"refresh_unsupported":600`...)
	}
	out = append(out, '}')
	cs.out = out
	return out
}

// activeFailed counts and logs (throttled) a refused "active checks"
// request and returns Zabbix's failure reply.
func (s *Server) activeFailed(r activeResult, remote, host, info string) []byte {
	s.m.active[r].Inc()
	if n, ok := s.throttle.Allow("active:" + activeResultNames[r]); ok {
		s.opts.Logger.Warn("active checks request refused", "result", activeResultNames[r], "host", truncateForLog(host), "remote", remote, "info", info, "suppressed", n)
	}
	return failedReply(info)
}

// heartbeat records an "active check heartbeat" (6.2+ agents). The agent
// reads no reply.
func (s *Server) heartbeat(cs *connState, recv time.Time, remote string) {
	s.m.heartbeats.Inc()
	host := string(cs.req.top.host)
	if checkHostName(host) != "" {
		return
	}
	known := s.opts.Catalog.Snapshot().Host(host) != nil
	s.agents.update(AgentInfo{Host: host, Remote: remote, Known: known, LastHeartbeat: recv}, true)
}

// checkHostName applies Zabbix's rule for technical host names: 1 to 128
// characters of 0-9 a-z A-Z . _ - and space. It returns "" if valid.
func checkHostName(h string) string {
	if h == "" {
		return "empty host name"
	}
	if utf8.RuneCountInString(h) > maxHostNameLen {
		return "host name is longer than 128 characters"
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '_' || c == '-' || c == ' ' {
			continue
		}
		return "character " + strconv.QuoteRune(rune(c)) + " is not allowed"
	}
	return ""
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD, the rest
// as is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
