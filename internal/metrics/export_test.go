package metrics

import "github.com/prometheus/client_golang/prometheus"

// The black-box tests (package metrics_test) read a few internals on purpose: they count
// the series of the calls and requests vectors directly, and size their loops and
// expectations by the package's own bounds, so that a change to a bound moves the tests too.

// CallsVec returns the calls counter vector of m.
func CallsVec(m *Metrics) *prometheus.CounterVec { return m.calls }

// RequestsVec returns the gateway requests counter vector of m.
func RequestsVec(m *Metrics) *prometheus.CounterVec { return m.requests }

// MaxMethods is the number of distinct method labels kept before OtherLabel.
const MaxMethods = maxMethods

// Namespace prefixes every metric name.
const Namespace = namespace

// OutcomeSuccess is the outcome label of a request that succeeded.
const OutcomeSuccess = outcomeSuccess

// States are the upstream states exported as switchboard_upstream_state series.
var States = states
