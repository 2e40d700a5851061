package toolcall

import (
	"slices"

	"github.com/switchboard-mcp/switchboard/internal/redact"
)

// SetSecrets tells the redactor of history, logs and results (see
// Redactor) secret values besides the configuration's: the OAuth tokens
// and client secrets of signed-in servers, which change as tokens are
// refreshed. Each call replaces the previous set; calls in flight keep
// the redactor they started with.
func (e *Engine) SetSecrets(secrets []string) {
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	if slices.Equal(secrets, e.extra) {
		return
	}
	e.extra = slices.Clone(secrets)
	old := e.set.Load()
	st := *old
	st.redactor = redact.New(append(slices.Clone(old.secrets), secrets...))
	e.set.Store(&st)
}
