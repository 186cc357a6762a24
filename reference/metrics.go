package reference

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the reference's Prometheus series. Every counter is a
// decision the protocol makes, so a dashboard shows what the keys went
// through: claimed, replayed, waited, refused, recovered, expired.
type Metrics struct {
	Claims         prometheus.Counter     // keys claimed (first requests)
	Replays        prometheus.Counter     // stored results answered again
	Conflicts      prometheus.Counter     // 409s after the max wait
	Mismatches     prometheus.Counter     // 422s: key reused with another body
	Waits          prometheus.Counter     // duplicates that waited for an owner
	WaitSeconds    prometheus.Histogram   // how long they waited
	Recoveries     *prometheus.CounterVec // by {by: retry|sweeper, outcome: charged|declined|rejected|indeterminate}
	GatewayCalls   *prometheus.CounterVec // by {outcome}
	GatewaySeconds prometheus.Histogram
	Expired        *prometheus.CounterVec // by {phase: compacted|forgotten}
	Rejected       *prometheus.CounterVec // client-input refusals by {status}
	Unavailable    prometheus.Counter     // retryable 5xx for database trouble
}

// NewMetrics creates the series and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	const ns = "idemcheck_reference"
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help})
	}
	m := &Metrics{
		Claims:     counter("claims_total", "Idempotency keys claimed by a first request."),
		Replays:    counter("replays_total", "Stored results answered again."),
		Conflicts:  counter("conflicts_total", "Duplicates answered 409 after the max wait."),
		Mismatches: counter("mismatches_total", "Keys reused with a different request (422)."),
		Waits:      counter("waits_total", "Duplicates that waited for the key's owner."),
		WaitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "wait_seconds",
			Help: "Time duplicates waited for the key's owner.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)}),
		Recoveries: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "recoveries_total",
			Help: "Keys taken over after their owner's lease expired, by who took them and the gateway's answer."},
			[]string{"by", "outcome"}),
		GatewayCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "gateway_calls_total",
			Help: "Gateway charge calls by classified outcome."}, []string{"outcome"}),
		GatewaySeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "gateway_seconds",
			Help: "Gateway charge call latency.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 15)}),
		Expired: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "expired_total",
			Help: "Finished keys compacted to tombstones after the TTL, and tombstones forgotten."}, []string{"phase"}),
		Rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "rejected_total",
			Help: "Requests refused for client input, by status."}, []string{"status"}),
		Unavailable: counter("unavailable_total", "Retryable 503s answered because the database failed."),
	}
	if reg != nil {
		reg.MustRegister(m.Claims, m.Replays, m.Conflicts, m.Mismatches, m.Waits, m.WaitSeconds, m.Recoveries,
			m.GatewayCalls, m.GatewaySeconds, m.Expired, m.Rejected, m.Unavailable)
	}
	return m
}
