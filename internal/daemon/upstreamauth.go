package daemon

import (
	"log/slog"
	"slices"

	"github.com/switchboard-mcp/switchboard/internal/oauth"
)

// newUpstreamAuth returns the manager of the servers' OAuth sign-ins, kept in the
// state directory, or nil when there is none (a daemon in a test).
func newUpstreamAuth(stateDir string, logger *slog.Logger, stored func()) (*oauth.Manager, error) {
	if stateDir == "" {
		return nil, nil
	}
	return oauth.New(oauth.Options{StateDir: stateDir, Logger: logger, OnStore: stored})
}

// UpstreamAuth returns the manager of the upstream servers' sign-ins (nil
// without a state directory).
func (d *Daemon) UpstreamAuth() *oauth.Manager { return d.upstreamAuth }

// refreshSecrets tells the engine's redactor the stored tokens and client
// secrets, after a sign-in or refresh here or a connection (which may
// follow a sign-in by another process).
func (d *Daemon) refreshSecrets() {
	if d.upstreamAuth == nil || d.eng == nil {
		return
	}
	secrets, err := d.upstreamAuth.Secrets()
	if err != nil {
		d.logger.Warn("reading the stored sign-ins for redaction", "err", err)
	}
	slices.Sort(secrets)
	d.eng.SetSecrets(secrets)
}
