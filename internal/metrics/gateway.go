package metrics

import (
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// outcomeSuccess is the outcome of a forwarded request that succeeded.
const outcomeSuccess = "success"

// SessionOpened counts a gateway client session opened on a view.
func (m *Metrics) SessionOpened(view string) {
	m.sessions.WithLabelValues(labelValue(view)).Inc()
}

// SessionClosed counts a gateway client session on a view as closed.
func (m *Metrics) SessionClosed(view string) {
	m.sessions.WithLabelValues(labelValue(view)).Dec()
}

// Forwarded counts a gateway request other than tools/call (prompts/get,
// resources/read, ...) by method and outcome: "success" when err is nil,
// otherwise the error's kind (fault.KindOf), never its text.
func (m *Metrics) Forwarded(method string, err error) {
	outcome := outcomeSuccess
	if err != nil {
		outcome = string(fault.KindOf(err))
	}
	m.requests.WithLabelValues(m.methodLabel(method), outcome).Inc()
}

// methodLabel bounds the method label: the first maxMethods distinct
// methods keep their names, later ones are counted as "_other".
func (m *Metrics) methodLabel(method string) string {
	m.methodMu.Lock()
	defer m.methodMu.Unlock()
	if l, ok := m.methods[method]; ok {
		return l
	}
	if len(m.methods) >= maxMethods {
		return OtherLabel
	}
	l := labelValue(method)
	m.methods[method] = l
	return l
}
