package daemon

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
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

// signIns runs the sign-ins the console starts: each waits for the
// browser in the background, owned by the daemon's serve group and
// cancelled with it, one at a time per server and user.
type signIns struct {
	mu      sync.Mutex
	ctx     context.Context // the serve context; nil until the console runs
	wg      *sync.WaitGroup
	running map[string]bool
}

func (s *signIns) start(ctx context.Context, wg *sync.WaitGroup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctx, s.wg, s.running = ctx, wg, map[string]bool{}
}

// consoleSignIn is the console's "Sign in": nil without a sign-in store.
func (d *Daemon) consoleSignIn() func(ctx context.Context, server, user string) (string, error) {
	if d.upstreamAuth == nil {
		return nil
	}
	return d.signIn
}

// signIn starts the sign-in of server (for user, if the server is signed
// in per user) and returns the authorization URL once it is known. The
// sign-in completes when the browser comes back to the loopback redirect
// listener; the server then connects as after `auth login`.
func (d *Daemon) signIn(ctx context.Context, name, user string) (string, error) {
	cfg := d.config()
	srv, ok := cfg.Server(name)
	if !ok {
		return "", upstream.UnknownServer(cfg, name)
	}
	if srv.Transport == config.TransportStdio || srv.Transport == "" {
		return "", fault.New(fault.Validation, "server %s is a stdio server: it has no sign-in", name)
	}
	if srv.Auth != config.AuthPerUser {
		user = ""
	}
	s := &d.signIns
	key := name + "\x00" + user
	s.mu.Lock()
	if s.ctx == nil {
		s.mu.Unlock()
		return "", fault.New(fault.Internal, "the daemon is not serving yet")
	}
	if s.running[key] {
		s.mu.Unlock()
		return "", fault.New(fault.LimitExceeded, "a sign-in to %s is already waiting for the browser", name).
			WithSuggestions("finish it in the tab it opened, or wait for it to time out (5 minutes)")
	}
	s.running[key] = true
	runCtx, wg := s.ctx, s.wg
	s.mu.Unlock()
	actor := audit.ActorFrom(ctx, audit.Actor{Via: audit.ViaConsole})

	urls, errs := make(chan string, 1), make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.running, key)
			s.mu.Unlock()
		}()
		_, err := d.upstreamAuth.Login(runCtx, upstream.OAuthServer(srv), oauth.LoginOptions{
			User: user, NoBrowser: true, OnURL: func(u string) { urls <- u },
		})
		d.auditSignIn(actor, name, err)
		if err != nil {
			d.logger.Warn("console sign-in failed", "server", name, "err", err)
			errs <- err
		}
	}()
	select {
	case u := <-urls:
		return u, nil
	case err := <-errs:
		return "", fault.Wrap(fault.Authentication, err, "signing in to %s: %v", name, err).
			WithSuggestions("run: " + d.upstreamAuth.LoginCommand(name, user))
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
