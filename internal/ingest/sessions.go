package ingest

import (
	"slices"
	"sync"
	"sync/atomic"
)

// sessionTokenLen is the length Zabbix requires of an agent's session
// token (32 hex characters, random per agent start).
const sessionTokenLen = 32

// sessionKey names one agent session: a host and the agent's token.
// Zabbix keys sessions by (host, token) too, so one agent process that
// serves several host names has one session per name.
type sessionKey struct {
	host  uint64
	token [sessionTokenLen]byte
}

// session is the dedup state of one agent session: the highest row id
// stored. mu is held across one request's processing, from the duplicate
// check to the store's acknowledgement, so that a retransmission that
// arrives while the first copy is still being stored waits and then sees
// the ids as taken, instead of both copies being stored.
type session struct {
	mu   sync.Mutex
	last uint64 // guarded by mu
	key  sessionKey
	// LRU links, guarded by the shard's mutex.
	prev, next *session
}

// sessionShards spreads the sessions over independently locked shards so
// that agents do not serialise on one mutex.
const sessionShards = 16

// sessions is a bounded registry of agent sessions: at most max entries,
// the least recently used dropped first. Dropping a session forgets its
// last id: a retransmission of that session's old rows would then be
// stored again. The bound is there for a flood of made-up tokens; real
// agents make a new token only when they restart, and a retransmission
// comes within seconds of the original.
type sessions struct {
	shards  [sessionShards]sessionShard
	evicted atomic.Uint64
	count   atomic.Int64
}

type sessionShard struct {
	mu   sync.Mutex
	m    map[sessionKey]*session
	head session // sentinel of the LRU ring: head.next is the newest
	max  int
}

func newSessions(limit int) *sessions {
	ss := &sessions{}
	per := max(1, (limit+sessionShards-1)/sessionShards)
	for i := range ss.shards {
		sh := &ss.shards[i]
		sh.m = make(map[sessionKey]*session)
		sh.head.next, sh.head.prev = &sh.head, &sh.head
		sh.max = per
	}
	return ss
}

func (k *sessionKey) shard() int {
	// The token is random, so a few of its bytes spread keys evenly.
	return int(k.token[0]^k.token[7]^byte(k.host)) % sessionShards
}

// get returns the session for k, creating it (and evicting the least
// recently used one of its shard if full), and marks it most recently
// used. The caller locks the session's mu itself.
func (ss *sessions) get(k sessionKey) *session {
	sh := &ss.shards[k.shard()]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s := sh.m[k]
	if s != nil {
		unlink(s)
	} else {
		if len(sh.m) >= sh.max {
			old := sh.head.prev
			unlink(old)
			delete(sh.m, old.key)
			ss.evicted.Add(1)
			ss.count.Add(-1)
		}
		s = &session{key: k}
		sh.m[k] = s
		ss.count.Add(1)
	}
	s.prev, s.next = &sh.head, sh.head.next
	sh.head.next.prev = s
	sh.head.next = s
	return s
}

func unlink(s *session) {
	s.prev.next, s.next.prev = s.next, s.prev
	s.prev, s.next = nil, nil
}

// lockAll returns the sessions of token for the given hosts, locked, in
// ascending host order: every request locks in that order, so two
// requests that share sessions cannot deadlock. hosts is sorted and
// deduplicated in place.
func (ss *sessions) lockAll(token []byte, hosts []uint64, out []*session) ([]uint64, []*session) {
	slices.Sort(hosts)
	hosts = slices.Compact(hosts)
	out = out[:0]
	for _, h := range hosts {
		k := sessionKey{host: h}
		copy(k.token[:], token)
		s := ss.get(k)
		s.mu.Lock()
		out = append(out, s)
	}
	return hosts, out
}
