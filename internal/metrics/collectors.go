package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// The engine's gauges, read from toolcall.Stats at scrape time.
var (
	inFlightDesc = prometheus.NewDesc(namespace+"_calls_in_flight",
		"Tool calls running now (holding a concurrency slot).", nil, nil)
	queuedDesc = prometheus.NewDesc(namespace+"_calls_queued",
		"Tool calls waiting for a concurrency slot.", nil, nil)
	stoppedDesc = prometheus.NewDesc(namespace+"_calls_stopped",
		"1 while calls are stopped (switchboard stop), 0 otherwise.", nil, nil)
)

// engineCollector exports the engine's counters when scraped.
type engineCollector struct {
	stats func() toolcall.Stats
}

func (c engineCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- inFlightDesc
	ch <- queuedDesc
	ch <- stoppedDesc
}

func (c engineCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.stats()
	ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(st.InFlight))
	ch <- prometheus.MustNewConstMetric(queuedDesc, prometheus.GaugeValue, float64(st.Waiting))
	ch <- prometheus.MustNewConstMetric(stoppedDesc, prometheus.GaugeValue, boolValue(st.Stopped))
}

// The upstreams' health, read from their snapshots at scrape time.
var (
	stateDesc = prometheus.NewDesc(namespace+"_upstream_state",
		"Connection state of an upstream server: 1 for its current state, 0 for the others.",
		[]string{"server", "state"}, nil)
	upDesc = prometheus.NewDesc(namespace+"_upstream_up",
		"1 when an upstream server is connected, 0 otherwise.", []string{"server"}, nil)
	latencyDesc = prometheus.NewDesc(namespace+"_upstream_latency_seconds",
		"Round-trip time of the last health ping to an upstream server; absent until the first ping.",
		[]string{"server"}, nil)
	failuresDesc = prometheus.NewDesc(namespace+"_upstream_consecutive_failures",
		"Failures (connect, crash, ping) of an upstream server since it was last connected.",
		[]string{"server"}, nil)
	autoDisabledDesc = prometheus.NewDesc(namespace+"_upstream_auto_disabled",
		"1 when an upstream server was disabled after repeated failures, 0 otherwise.",
		[]string{"server"}, nil)
	sessionsDesc = prometheus.NewDesc(namespace+"_upstream_sessions",
		"Per-client or per-user upstream sessions of a server open besides its shared one (session: per_client, per_user).",
		[]string{"server"}, nil)
	logsDroppedDesc = prometheus.NewDesc(namespace+"_upstream_log_messages_dropped_total",
		"Log messages of a server dropped because they came faster than the gateway's clients read them; each client was told how many, with a warning.",
		[]string{"server"}, nil)
)

// states is every connection state, so that upstream_state always has one
// series per state.
var states = []upstream.State{
	upstream.StateCreated,
	upstream.StateConnecting,
	upstream.StateConnected,
	upstream.StateDisconnected,
	upstream.StateError,
	upstream.StateCannotStart,
}

// upstreamCollector exports the health of the upstreams that exist when
// scraped; a server removed from the configuration disappears.
type upstreamCollector struct {
	snapshots func() []upstream.Snapshot
}

func (c upstreamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- stateDesc
	ch <- upDesc
	ch <- latencyDesc
	ch <- failuresDesc
	ch <- autoDisabledDesc
	ch <- sessionsDesc
	ch <- logsDroppedDesc
}

func (c upstreamCollector) Collect(ch chan<- prometheus.Metric) {
	snaps := c.snapshots()
	seen := make(map[string]struct{}, len(snaps))
	for _, sn := range snaps {
		// A duplicate would fail the whole scrape; a pool never has one.
		server := labelValue(sn.Server)
		if _, dup := seen[server]; dup {
			continue
		}
		seen[server] = struct{}{}
		for _, st := range states {
			ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, boolValue(sn.State == st), server, string(st))
		}
		ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, boolValue(sn.State == upstream.StateConnected), server)
		if !sn.LastPingAt.IsZero() {
			ch <- prometheus.MustNewConstMetric(latencyDesc, prometheus.GaugeValue, sn.Latency.Seconds(), server)
		}
		ch <- prometheus.MustNewConstMetric(failuresDesc, prometheus.GaugeValue, float64(sn.ConsecutiveFailures), server)
		ch <- prometheus.MustNewConstMetric(autoDisabledDesc, prometheus.GaugeValue, boolValue(sn.AutoDisabled), server)
		ch <- prometheus.MustNewConstMetric(sessionsDesc, prometheus.GaugeValue, float64(sn.Sessions), server)
		ch <- prometheus.MustNewConstMetric(logsDroppedDesc, prometheus.CounterValue, float64(sn.LogsDropped), server)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
