package poll

import (
	"github.com/peregrine-mon/peregrine/internal/selfmon"
)

type metrics struct {
	dispatched  *selfmon.Counter
	results     [NumStatus]*selfmon.Counter // by Status
	stored      *selfmon.Counter
	dropped     *selfmon.Counter
	badValues   *selfmon.Counter
	storeErrors *selfmon.Counter
	missed      *selfmon.Counter
	deferred    *selfmon.Counter
	postponed   *selfmon.Counter
	limitHits   *selfmon.Counter
	badItems    *selfmon.Counter
	unavailable *selfmon.Counter
	recovered   *selfmon.Counter
	latency     *selfmon.Histogram
	// busy is the loop goroutine's time in its turns (zabbix[process,
	// poller,avg,busy]); checks waiting on the network are not work.
	busy *selfmon.Busy
}

// newMetrics registers the scheduler's metrics. The gauges read loop
// state through atomics or the published queue, never the loop's maps.
func newMetrics(r *selfmon.Registry, s *Scheduler) *metrics {
	m := &metrics{
		dispatched:  r.Counter("peregrine_poll_checks_started_total", "Checks handed to a checker."),
		stored:      r.Counter("peregrine_poll_values_stored_total", "Polled values stored through the pipeline."),
		dropped:     r.Counter("peregrine_poll_values_dropped_total", "Polled values dropped because their item was deleted or disabled while the check ran."),
		badValues:   r.Counter("peregrine_poll_values_bad_total", "Polled values that did not convert to the item's value type (the item became not supported)."),
		storeErrors: r.Counter("peregrine_poll_values_store_errors_total", "Polled values the pipeline refused to store."),
		missed:      r.Counter("peregrine_poll_checks_missed_total", "Whole update intervals that went by while a check waited (not run: only the latest is)."),
		deferred:    r.Counter("peregrine_poll_checks_deferred_total", "Checks postponed because their interface was unreachable or unavailable."),
		postponed:   r.Counter("peregrine_poll_checks_postponed_total", "Checks that failed with a network error while this server was behind (scheduling lag at least half the check's time): run again, the interface not blamed.", "reason", "server_behind"),
		limitHits:   r.Counter("peregrine_poll_in_flight_limit_hits_total", "Turns of the scheduler that left due checks waiting because of the in-flight limit while this server was behind (poll.max_in_flight_behind), not opening sockets it could not read in time.", "reason", "server_behind"),
		badItems:    r.Counter("peregrine_poll_items_unschedulable_total", "Times an item could not be scheduled (bad update interval or timeout, no interface)."),
		unavailable: r.Counter("peregrine_poll_interfaces_unavailable_total", "Times an interface became unavailable."),
		recovered:   r.Counter("peregrine_poll_interfaces_recovered_total", "Times an unavailable interface answered again."),
		latency: r.Histogram("peregrine_poll_check_latency_seconds",
			"Time from a check's scheduled time until its value (or not-supported state) was stored; network errors are not included.", latencyBuckets),
	}
	m.busy = r.Busy("peregrine_poll_busy_seconds_total", "Time the scheduler loop spent in its turns (taking results back, following catalog swaps, handing out checks, the queue).", 1)
	for st := range m.results {
		m.results[st] = r.Counter("peregrine_poll_checks_total", "Checks done, by result.", "result", Status(st).String())
	}
	for i, b := range QueueBuckets {
		r.GaugeFunc("peregrine_poll_queue", "Checks overdue (Zabbix's queue), by how late they are (the bucket's lower bound).",
			func() float64 { return float64(s.queue.buckets[i].Load()) }, "delay", b.Name)
	}
	r.GaugeFunc("peregrine_poll_in_flight", "Checks handed to checkers whose results are not stored yet.",
		func() float64 { return float64(s.inFlightGauge.Load()) })
	r.GaugeFunc("peregrine_poll_in_flight_limit", "The bound on checks in flight in effect: poll.max_in_flight, or lower while this server is behind (poll.max_in_flight_behind).",
		func() float64 { return float64(s.limitGauge.Load()) })
	r.GaugeFunc("peregrine_poll_items", "Items the scheduler polls.",
		func() float64 { return float64(s.itemsGauge.Load()) })
	return m
}
