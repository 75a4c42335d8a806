package ingest

import (
	"slices"

	"github.com/peregrine-mon/peregrine/internal/pipeline"
	"github.com/peregrine-mon/peregrine/internal/selfmon"
	"github.com/peregrine-mon/peregrine/internal/zbx/zbxpsk"
)

// Reasons a request or a frame is refused, as the "reason" label.
type badReason int

const (
	badHeader badReason = iota
	badFlags
	badTooLarge
	badTruncated
	badCompression
	badTimeout
	badIO
	badBusy
	badShare
	badFormat
	badJSON
	badUnsupported
	badNoData
	badStore
	badSession
	badTLSHandshake     // the TLS handshake failed (no or a bad client certificate, ...)
	badTLSPSK           // the client wants a pre-shared key, and this build has none (no cgo)
	badTLSNotConfigured // a TLS client, and no tls section in the configuration
	badTLSPSKIdentity   // a pre-shared key with an identity no host has
	badTLSPSKKey        // a pre-shared key that differs from its identity's
	numBadReasons
)

var badReasonNames = [numBadReasons]string{
	"bad_header", "bad_flags", "too_large", "truncated", "bad_compression", "timeout",
	"io_error", "memory_busy", "memory_share", "not_json", "bad_json", "unsupported_request", "no_data", "store_error",
	"bad_session", "tls_handshake", "tls_psk_unsupported", "tls_not_configured",
	"tls_psk_unknown_identity", "tls_psk_wrong_key",
}

// Reasons one value is counted as failed: the trapper's own, then the
// acceptance refusals of package preprocess in its order, so that every
// way in counts a refusal under the same label.
type failReason int

const (
	failMissingField failReason = iota
	failBadClock
	failStore
	failDuplicate  // an agent row retransmitted (its session's id already stored)
	failBadField   // an agent row field of the wrong type (itemid, id, state, ...)
	failTLS        // the host does not accept this connection (tls_accept, tls_issuer, tls_subject)
	failPeer       // the sender's address is not in the item's allowed hosts (traphosts.go)
	failRefused    // failRefused-1+r is pipeline.Refusal r (r >= 1)
	numFailReasons = failRefused + failReason(pipeline.NumRefusals) - 1
)

// refused maps a preprocess refusal (not Accepted) to its fail reason.
func refused(r pipeline.Refusal) failReason { return failRefused - 1 + failReason(r) }

var failReasonNames = func() (n [numFailReasons]string) {
	n[failMissingField], n[failBadClock], n[failStore] = "missing_field", "bad_clock", "store_error"
	n[failDuplicate], n[failBadField], n[failTLS] = "duplicate", "bad_field", "tls_refused"
	n[failPeer] = "host_not_allowed"
	for r := pipeline.Refusal(1); r < pipeline.NumRefusals; r++ {
		n[refused(r)] = r.String()
	}
	return
}()

type metrics struct {
	connections *selfmon.Counter
	requests    *selfmon.Counter
	bad         [numBadReasons]*selfmon.Counter
	received    *selfmon.Counter
	processed   *selfmon.Counter
	failed      [numFailReasons]*selfmon.Counter
	// Active agents.
	active     [numActiveResults]*selfmon.Counter
	heartbeats *selfmon.Counter
	// autoregRefused counts "active checks" whose registration the
	// autoregistration encryption policy refused.
	autoregRefused *selfmon.Counter
	notSupported   *selfmon.Counter
	logPosErrors   *selfmon.Counter
	// busy is the time connections spent on requests, from the frame
	// read to the reply written (store waits included), over
	// MaxConnections slots: zabbix[process,trapper,avg,busy].
	busy *selfmon.Busy
	// tlsConnections counts completed TLS handshakes with a
	// certificate; pskConnections those with a pre-shared key, by
	// cipher suite (zbxpsk.Suites, then any other).
	tlsConnections *selfmon.Counter
	pskConnections []*selfmon.Counter
}

// countPSK counts a completed PSK handshake under its suite.
func (m *metrics) countPSK(cipher string) {
	for i, s := range zbxpsk.Suites {
		if s == cipher {
			m.pskConnections[i].Inc()
			return
		}
	}
	m.pskConnections[len(zbxpsk.Suites)].Inc()
}

func newMetrics(r *selfmon.Registry, s *Server) *metrics {
	m := &metrics{
		connections: r.Counter("peregrine_trapper_connections_total", "Trapper connections accepted."),
		requests:    r.Counter("peregrine_trapper_requests_total", "Trapper frames read completely."),
		received:    r.Counter("peregrine_trapper_values_received_total", "Values received in sender data and agent data requests and history.push calls."),
		processed:   r.Counter("peregrine_trapper_values_processed_total", "Values accepted and stored (acknowledged as processed)."),
	}
	for i := range m.bad {
		m.bad[i] = r.Counter("peregrine_trapper_bad_requests_total", "Frames or requests refused, by reason.", "reason", badReasonNames[i])
	}
	for i := range m.failed {
		m.failed[i] = r.Counter("peregrine_trapper_values_failed_total", "Values counted as failed, by reason.", "reason", failReasonNames[i])
	}
	for i := range m.active {
		m.active[i] = r.Counter("peregrine_trapper_active_checks_total", "Active agents' \"active checks\" requests, by result.", "result", activeResultNames[i])
	}
	m.busy = r.Busy("peregrine_trapper_busy_seconds_total", "Time trapper connections spent handling requests (frame read to reply written, store waits included), summed over connections.", s.opts.MaxConnections)
	m.tlsConnections = r.Counter("peregrine_trapper_tls_connections_total", "Trapper connections that completed a TLS handshake with a client certificate.")
	for _, cs := range append(slices.Clone(zbxpsk.Suites), "other") {
		m.pskConnections = append(m.pskConnections, r.Counter("peregrine_trapper_tls_psk_connections_total", "Trapper connections that completed a TLS handshake with a pre-shared key, by cipher suite.", "cipher", cs))
	}
	m.autoregRefused = r.Counter("peregrine_trapper_autoreg_refused_total", "Auto-registrations of unknown active agents refused by the autoregistration encryption settings (tls_accept, PSK).")
	m.heartbeats = r.Counter("peregrine_trapper_heartbeats_total", "Active agents' heartbeats received (6.2+ agents).")
	m.notSupported = r.Counter("peregrine_trapper_values_not_supported_total", "Values that made their item not supported (agent rows with state 1, values that do not fit the item's value type); counted as processed, not stored.")
	m.logPosErrors = r.Counter("peregrine_trapper_log_position_errors_total", "Agent data requests whose log positions (lastlogsize) could not be saved after their values were stored.")
	r.GaugeFunc("peregrine_trapper_agent_sessions", "Active-agent sessions remembered for retransmission detection (at most 100,000, least recently used forgotten first).", func() float64 { return float64(s.sessions.count.Load()) })
	r.CounterFunc("peregrine_trapper_agent_sessions_evicted_total", "Active-agent sessions forgotten to stay within the bound of 100,000 (a forgotten session's retransmissions would be stored again).", func() float64 { return float64(s.sessions.evicted.Load()) })
	r.GaugeFunc("peregrine_trapper_connections_active", "Trapper connections accepted and not yet closed.", func() float64 { return float64(s.active.Load()) })
	r.GaugeFunc("peregrine_trapper_buffered_bytes", "Bytes trapper connections hold for frames, inflated payloads, decoded rows and values (bounded by trapper.max_buffered_bytes).", func() float64 { return float64(s.budget.inUse()) })
	r.CounterFunc("peregrine_trapper_buffer_collections_total", "Garbage collections the trapper ran because released buffers, not yet collected, stood between a connection and trapper.max_buffered_bytes.", func() float64 { return float64(s.budget.collections.Load()) })
	r.Rate("peregrine_trapper_values_received_per_second", "Values received per second over the last rate interval.", func() float64 { return float64(m.received.Load()) })
	r.Rate("peregrine_trapper_values_processed_per_second", "Values processed per second over the last rate interval.", func() float64 { return float64(m.processed.Load()) })
	r.Rate("peregrine_trapper_values_failed_per_second", "Values failed per second over the last rate interval.", func() float64 { return float64(m.failedTotal()) })
	return m
}

func (m *metrics) failedTotal() uint64 {
	var n uint64
	for _, c := range m.failed {
		n += c.Load()
	}
	return n
}

// countFailed adds one request's processed values and its failures by
// reason.
func (m *metrics) countFailed(processed int, failed *[numFailReasons]int) {
	m.processed.Add(uint64(processed))
	for r, n := range failed {
		if n > 0 {
			m.failed[r].Add(uint64(n))
		}
	}
}

// Busy is the trapper's busy time (see selfmon.Busy); Goroutines is
// trapper.max_connections.
func (s *Server) Busy() *selfmon.Busy { return s.m.busy }
