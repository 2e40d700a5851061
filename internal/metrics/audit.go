package metrics

import "github.com/prometheus/client_golang/prometheus"

// auditFailures counts audit events that could not be written, by event.
func newAuditFailures() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "audit_write_failures_total",
		Help: "Audit events that could not be written to the audit trail (the file failed, or the writer fell behind), by event.",
	}, []string{"event"})
}

// AuditFailed counts an audit event that could not be written. The event
// names are package audit's constants, a bounded set.
func (m *Metrics) AuditFailed(event string) {
	m.auditFailures.WithLabelValues(event).Inc()
}
