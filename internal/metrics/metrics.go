// Package metrics owns every Prometheus metric the Switchboard daemon
// exports on /metrics.
//
// A [Metrics] holds its own registry (never the global one) with the Go and
// process collectors. It counts finished tool calls as the engine's
// [toolcall.Recorder], passing each record on to the next recorder (the call
// history); it reads the engine's counters and every upstream's health when
// scraped, so nothing polls; and the gateway reports client sessions and
// forwarded requests to it. Labels carry only bounded names — server, tool,
// status, source, view, method, outcome, and the users the configuration
// names (SetUsers) — never arguments, other identities or error text.
package metrics

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// namespace prefixes every metric name.
const namespace = "switchboard"

// OtherLabel is the label value that stands for the tools (and servers)
// beyond the cardinality limit.
const OtherLabel = "_other"

// DefaultMaxTools is the number of distinct (server, tool) pairs counted
// under their own names when Options.MaxTools is not set.
const DefaultMaxTools = 1000

// maxMethods bounds the method label of gateway_requests_total.
const maxMethods = 100

// Log attribute keys.
const logKeyError = "error"

// Options configures a Metrics. Every field may be left zero.
type Options struct {
	// Stats returns the engine's counters; nil means none are exported.
	Stats func() toolcall.Stats
	// Snapshots returns every upstream's health; nil means none.
	Snapshots func() []upstream.Snapshot
	// Next receives every record after it is counted (the history
	// recorder); nil means none.
	Next toolcall.Recorder
	// HistoryWriteFailures returns how many call records the history
	// store failed to write (store.Recorder.WriteFailures); nil means the
	// metric is not exported.
	HistoryWriteFailures func() int64
	// HistoryUnavailable says since when the history store has been
	// unavailable (store.Recorder.Unavailable); nil means the metric is
	// not exported.
	HistoryUnavailable func() (since time.Time, waiting int, err error)
	// MaxTools is the number of distinct (server, tool) pairs counted under
	// their own names; later ones are counted as tool="_other". Zero means
	// DefaultMaxTools.
	MaxTools int
	// Logger receives errors met while serving a scrape; nil discards them.
	Logger *slog.Logger
}

// Metrics owns Switchboard's metrics and the registry that exports them.
// It is safe for concurrent use.
type Metrics struct {
	reg    *prometheus.Registry
	logger *slog.Logger
	next   toolcall.Recorder

	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	retries  *prometheus.CounterVec
	table    callTable

	userCalls   *prometheus.CounterVec
	userLimited *prometheus.CounterVec
	users       userTable

	sessions *prometheus.GaugeVec
	requests *prometheus.CounterVec
	methodMu sync.Mutex
	methods  map[string]string // method as given -> label value

	auditFailures *prometheus.CounterVec
}

var (
	_ toolcall.Recorder = (*Metrics)(nil)
	_ toolcall.Beginner = (*Metrics)(nil)
)

// durationBuckets spans a 1 ms call to a 5 min one.
var durationBuckets = []float64{
	.001, .0025, .005, .01, .025, .05, .1, .25, .5,
	1, 2.5, 5, 10, 30, 60, 120, 300,
}

// New returns a Metrics whose registry holds every Switchboard metric plus
// the Go and process collectors.
func New(opts Options) *Metrics {
	m := &Metrics{
		reg:    prometheus.NewRegistry(),
		logger: opts.Logger,
		next:   opts.Next,
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "calls_total",
			Help: "Tool calls finished, by server, tool, final status and source (cli, gateway, hook, document, agent).",
		}, []string{"server", "tool", "status", "source"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "call_duration_seconds",
			Help:    "Time from the start of a tool call to its end, retries included, by server and final status.",
			Buckets: durationBuckets,
		}, []string{"server", "status"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "call_retries_total",
			Help: "Retries of tool calls after a transient failure, by server.",
		}, []string{"server"}),
		sessions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "gateway_sessions",
			Help: "Gateway client sessions open, by view.",
		}, []string{"view"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "gateway_requests_total",
			Help: "Gateway requests other than tools/call forwarded upstream, by method and outcome (success or the error kind).",
		}, []string{"method", "outcome"}),
		userCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "user_calls_total",
			Help: "Tool calls finished, by user (the users the configuration names; _other for anyone else, _none without one) and final status.",
		}, []string{"user", "status"}),
		userLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "user_rate_limited_total",
			Help: "Tool calls refused by limits.rate, by user (bounded as in user_calls_total).",
		}, []string{"user"}),
		methods:       map[string]string{},
		auditFailures: newAuditFailures(),
	}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	maxTools := opts.MaxTools
	if maxTools <= 0 {
		maxTools = DefaultMaxTools
	}
	m.table.init(maxTools)
	m.users.init()
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.calls, m.duration, m.retries, m.sessions, m.requests, m.userCalls, m.userLimited, m.auditFailures,
	)
	if opts.Stats != nil {
		m.reg.MustRegister(engineCollector{stats: opts.Stats})
	}
	if opts.Snapshots != nil {
		m.reg.MustRegister(upstreamCollector{snapshots: opts.Snapshots})
	}
	if f := opts.HistoryWriteFailures; f != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: namespace, Name: "history_write_failures_total",
			Help: "Call records the history store failed to write, after retries (refused, or still waiting for an unavailable store at shutdown). A SQLite history keeps them in its journal for the next start; the daemon's log says why.",
		}, func() float64 { return float64(f()) }))
	}
	if f := opts.HistoryUnavailable; f != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: namespace, Name: "history_unavailable_seconds",
			Help: "How long the history store has been unavailable (a PostgreSQL database restarted or unreachable, a SQLite file's disk full), during which call records wait in memory; 0 while it is available.",
		}, func() float64 {
			since, _, _ := f()
			if since.IsZero() {
				return 0
			}
			return time.Since(since).Seconds()
		}))
	}
	return m
}

// Gatherer returns the registry /metrics serves, for exporting the same
// metrics elsewhere (over OTLP).
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// Handler returns the /metrics endpoint: every metric in the Prometheus
// text (or protobuf) exposition format. A collector that fails leaves its
// metrics out of the scrape rather than failing it; the error is logged.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      errorLog{m.logger},
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg,
	})
}

// errorLog adapts a slog.Logger to promhttp's Logger.
type errorLog struct{ l *slog.Logger }

func (e errorLog) Println(v ...any) {
	e.l.Error("serving metrics", logKeyError, strings.TrimSpace(fmt.Sprintln(v...)))
}

// labelValue makes s safe as a label value: the client library panics on
// invalid UTF-8, and names reaching here come from clients and servers.
func labelValue(s string) string {
	return strings.ToValidUTF8(s, "\uFFFD")
}
