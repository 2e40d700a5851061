package daemon

import (
	"context"
	"log/slog"
	"sync"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
)

// oauthRunner owns the gateway's OAuth authenticator (gateway.oauth): it
// builds it from the configuration, runs it (keeping the authorization
// server's keys fresh) for as long as the daemon runs, and replaces it when
// a reload changes the block, stopping the old one. An unchanged block
// keeps the running authenticator, with its keys and its cache of checked
// tokens.
type oauthRunner struct {
	logger *slog.Logger

	mu     sync.Mutex
	cfg    *config.OAuth
	cur    *tokenauth.Authenticator
	runCtx context.Context // set by start; nil before and after
	stop   context.CancelFunc
	wg     sync.WaitGroup // the running authenticator's Run
}

// build returns an authenticator for a gateway.oauth block (nil for none).
func (o *oauthRunner) build(c *config.OAuth) (*tokenauth.Authenticator, error) {
	if c == nil {
		return nil, nil
	}
	opts := c.Options()
	opts.Logger = o.logger
	a, err := tokenauth.New(opts)
	if err != nil {
		return nil, fault.Wrap(fault.Config, err, "gateway.oauth: %v", err).
			WithSuggestions("fix gateway.oauth (docs/auth-gateway.md#configuration)")
	}
	return a, nil
}

// init builds the first authenticator; nothing runs until start.
func (o *oauthRunner) init(c *config.OAuth) (*tokenauth.Authenticator, error) {
	a, err := o.build(c)
	if err != nil {
		return nil, err
	}
	o.cfg, o.cur = c, a
	return a, nil
}

// start runs the current authenticator until stopAll; ctx bounds every
// authenticator started from now on.
func (o *oauthRunner) start(ctx context.Context) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.runCtx = ctx
	o.runLocked()
}

// runLocked runs o.cur, when there is one, under a context of its own.
func (o *oauthRunner) runLocked() {
	if o.cur == nil || o.runCtx == nil {
		return
	}
	ctx, cancel := context.WithCancel(o.runCtx)
	o.stop = cancel
	a := o.cur
	o.wg.Go(func() { _ = a.Run(ctx) })
}

// stopLocked stops the running authenticator and waits for its Run.
func (o *oauthRunner) stopLocked() {
	if o.stop != nil {
		o.stop()
		o.stop = nil
	}
	o.wg.Wait()
}

// prepare builds the authenticator a reloaded block asks for: changed
// reports whether it differs from the running one (a nil authenticator
// with changed set means OAuth was turned off). A block tokenauth refuses
// is an error, and nothing changes.
func (o *oauthRunner) prepare(c *config.OAuth) (a *tokenauth.Authenticator, changed bool, err error) {
	o.mu.Lock()
	same := o.cfg.Same(c)
	o.mu.Unlock()
	if same {
		return nil, false, nil
	}
	a, err = o.build(c)
	return a, err == nil, err
}

// swap makes a prepared authenticator the running one and stops the old.
func (o *oauthRunner) swap(c *config.OAuth, a *tokenauth.Authenticator) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stopLocked()
	o.cfg, o.cur = c, a
	o.runLocked()
}

// stopAll stops the running authenticator for good.
func (o *oauthRunner) stopAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stopLocked()
	o.runCtx = nil
}
