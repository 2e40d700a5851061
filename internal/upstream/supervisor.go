package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// SupervisorOptions configures a [Supervisor].
type SupervisorOptions struct {
	Server config.Server
	Health config.Health
	// Store persists disable state and failure counts; nil keeps them in memory.
	Store StateStore
	// Logger receives state changes; nil discards them.
	Logger *slog.Logger
	// Dial options for every connection (Events, Transport, ...).
	Dial DialOptions
	// OnChange is called after every change of the snapshot. It must not block.
	OnChange func(Snapshot)
	// OnConnect is called with every new connection once Client() hands it
	// out. It must not block.
	OnConnect func(*Client)
	// OnSessionOpen is called with every owned session once it is
	// connected, before any request uses it (see PoolOptions).
	OnSessionOpen func(SessionKey, *Client)
	// OnSessionNotify receives what an owned session tells its owner
	// alone (see PoolOptions).
	OnSessionNotify func(ctx context.Context, server string, key SessionKey, method string, params mcp.Params)
	// Once makes one connection attempt and no reconnects, and records no
	// failures in the store: the mode of one-shot CLI commands.
	Once bool
	// StdioPID is, for a server of serve --stdio (which has no control
	// socket), that serve's process id, and 0 otherwise: a server that
	// cannot start says what reaches the serve that runs it
	// (config.StartHint).
	StdioPID int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Supervisor keeps one upstream connected, or says why it is not.
//
// Its state machine follows seeds 000 and 001: created → connecting →
// connected; a dead process, a closed socket or a failed ping moves it to
// error and starts the retry sequence (waits of Health.Backoff[0], [1], ...
// before attempts 1, 2, ...). When the attempt numbered Health.MaxFailures
// fails too, the server is auto-disabled — recorded with the time and the
// last error — until a user enables it again, which resets the counters.
type Supervisor struct {
	opts   SupervisorOptions
	logger *slog.Logger
	store  StateStore
	now    func() time.Time

	kick chan struct{} // wakes Run after Enable / Disable

	mu      sync.Mutex
	snap    Snapshot
	rec     Record
	client  *Client
	changed chan struct{} // closed and replaced on every change
	settled bool          // the first attempt has concluded

	// owned are the per-client or per-user sessions (sessions.go).
	owned *ownedSessions

	// retiring, once set (before Run's context ends), makes Run retire
	// its connection rather than close it (retire.go).
	retiring atomic.Pointer[retirement]

	// droppedLogs counts the log messages its sessions dropped
	// (DialOptions.DroppedLogs).
	droppedLogs atomic.Uint64
}

// retirement is how a supervisor that a reload removed or replaced ends
// its connection: see [Client.Retire].
type retirement struct {
	bound    context.Context
	stopping error
	draining chan struct{} // closed (once) when a drain begins
	once     sync.Once
}

// drain closes r.draining (Retire's onDrain).
func (r *retirement) drain() { r.once.Do(func() { close(r.draining) }) }

// retire makes Run, once its context ends, retire its connection with
// r rather than close it.
func (s *Supervisor) retire(r *retirement) { s.retiring.Store(r) }

// errDisabled ends a connection that a user or the health loop disabled.
var errDisabled = errors.New("disabled")

// minRenewalGap is the least time between two sessions started at once
// because the server no longer had the previous one.
const minRenewalGap = time.Second

// NewSupervisor returns a supervisor for one server; call Run to start it.
func NewSupervisor(opts SupervisorOptions) *Supervisor {
	if opts.Health.MaxFailures <= 0 {
		opts.Health.MaxFailures = config.DefaultMaxFailures
	}
	if len(opts.Health.Backoff) == 0 {
		opts.Health.Backoff = config.DefaultBackoff
	}
	if opts.Health.PingTimeout <= 0 {
		opts.Health.PingTimeout = config.DefaultPingTimeout
	}
	s := &Supervisor{
		opts:    opts,
		logger:  opts.Logger,
		store:   opts.Store,
		now:     opts.Now,
		kick:    make(chan struct{}, 1),
		changed: make(chan struct{}),
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.logger = s.logger.With(logKeyServer, opts.Server.Name)
	if s.opts.Dial.DroppedLogs == nil {
		s.opts.Dial.DroppedLogs = &s.droppedLogs
	}
	s.owned = newOwnedSessions(s)
	if s.store == nil {
		s.store = NewMemoryStore()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.opts.Dial.Logger == nil {
		s.opts.Dial.Logger = opts.Logger
	}
	s.snap = Snapshot{
		Server:    opts.Server.Name,
		Transport: string(opts.Server.Transport),
		State:     StateCreated,
		Since:     s.now(),
		Status:    StatusUnknown,
		Enabled:   opts.Server.Enabled,
	}
	if !opts.Server.Enabled {
		s.snap.DisabledReason = "disabled in the configuration"
	}
	return s
}

// Name returns the server's name.
func (s *Supervisor) Name() string { return s.opts.Server.Name }

// Server returns the server's configuration.
func (s *Supervisor) Server() config.Server { return s.opts.Server }

// Snapshot returns the current health.
func (s *Supervisor) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.snap
	if s.client != nil {
		snap.Stderr = lastLines(s.client.Stderr(), 20)
	}
	snap.Sessions = s.owned.count()
	if s.opts.Dial.DroppedLogs != nil {
		snap.LogsDropped = s.opts.Dial.DroppedLogs.Load()
	}
	return snap
}

// Client returns the live connection, or an error of kind Connection that
// says why there is none.
func (s *Supervisor) Client() (*Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client != nil && s.snap.State == StateConnected {
		select {
		case <-s.client.Done():
			// Ended a moment ago; the supervisor is about to notice.
			return nil, fault.Wrap(fault.Connection, s.client.Err(), "server %s lost its connection and is reconnecting", s.opts.Server.Name).
				WithDetail("server", s.opts.Server.Name).WithDetail("state", string(StateDisconnected))
		default:
			return s.client, nil
		}
	}
	return nil, s.unavailableLocked()
}

func (s *Supervisor) unavailableLocked() error {
	name := s.opts.Server.Name
	var fe *fault.Error
	switch {
	case !s.snap.Enabled && s.snap.AutoDisabled:
		fe = fault.New(fault.Connection, "server %s was auto-disabled at %s after repeated failures: %s",
			name, s.snap.AutoDisabledAt.Format(time.RFC3339), s.snap.LastError).
			WithSuggestions(s.snap.Suggestions...).
			WithSuggestions(fmt.Sprintf("fix the cause, then run: switchboard servers enable %s", name))
	case !s.snap.Enabled && !s.opts.Server.Enabled:
		fe = fault.New(fault.Connection, "server %s is disabled in the configuration", name).
			WithSuggestions(fmt.Sprintf("set enabled: true for %s in the config file", name))
	case !s.snap.Enabled:
		fe = fault.New(fault.Connection, "server %s is disabled", name).
			WithSuggestions(fmt.Sprintf("run: switchboard servers enable %s", name))
	case s.snap.State == StateNeedsAuth:
		fe = fault.New(fault.Authentication, "%s", s.snap.LastError).WithSuggestions(s.snap.Suggestions...)
	case s.snap.State == StateCannotStart:
		fe = fault.New(fault.Config, "server %s cannot start: %s", name, s.snap.LastError).WithSuggestions(s.snap.Suggestions...)
	case s.snap.LastError != "":
		fe = fault.New(fault.Connection, "server %s is unavailable (%s): %s", name, s.snap.State, s.snap.LastError).
			WithSuggestions(s.snap.Suggestions...)
	case s.snap.State == StateDisconnected:
		fe = fault.New(fault.Connection, "server %s lost its connection and is reconnecting", name)
	default:
		fe = fault.New(fault.Connection, "server %s is not connected yet (%s)", name, s.snap.State)
	}
	fe.WithDetail("server", name).WithDetail("state", string(s.snap.State))
	if s.snap.Stderr != "" {
		fe.WithDetail("stderr", s.snap.Stderr)
	}
	return fe
}

// Changed returns a channel that is closed at the next change of the
// snapshot.
func (s *Supervisor) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// WaitSettled blocks until the first connection attempt has concluded:
// connected, failed (in Once mode, or once a retry is scheduled), or
// disabled.
func (s *Supervisor) WaitSettled(ctx context.Context) error {
	for {
		s.mu.Lock()
		settled, ch := s.settled, s.changed
		s.mu.Unlock()
		if settled {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// update applies f to the snapshot under the lock and announces the change.
func (s *Supervisor) update(f func(*Snapshot)) {
	s.mu.Lock()
	f(&s.snap)
	s.snap.Status = StatusOf(s.snap.State)
	ch := s.changed
	s.changed = make(chan struct{})
	snap := s.snap
	s.mu.Unlock()
	close(ch)
	if s.opts.OnChange != nil {
		s.opts.OnChange(snap)
	}
}

func (s *Supervisor) setState(st State, errMsg string) {
	s.update(func(sn *Snapshot) {
		if sn.State != st {
			sn.State = st
			sn.Since = s.now()
		}
		if errMsg != "" {
			sn.LastError = errMsg
		}
	})
	s.logger.Debug("state", logKeyState, string(st))
}

func (s *Supervisor) markSettled() {
	s.update(func(*Snapshot) { s.settled = true })
}

// Enable re-enables a server disabled by a user or by the health loop and
// resets its failure counters.
func (s *Supervisor) Enable(ctx context.Context) error {
	if !s.opts.Server.Enabled {
		return fault.New(fault.Config, "server %s is disabled in the configuration file; set enabled: true there", s.Name())
	}
	s.mu.Lock()
	s.rec = Record{LastConnectedAt: s.rec.LastConnectedAt}
	rec := s.rec
	s.mu.Unlock()
	if err := s.store.SaveState(ctx, s.Name(), rec); err != nil {
		return err
	}
	s.update(func(sn *Snapshot) {
		sn.Enabled, sn.AutoDisabled, sn.AutoDisabledAt, sn.DisabledReason = true, false, time.Time{}, ""
		sn.ConsecutiveFailures, sn.Attempt, sn.Retrying, sn.NextRetryAt = 0, 0, false, time.Time{}
	})
	s.wake()
	return nil
}

// Disable disconnects the server and keeps it disconnected until Enable.
func (s *Supervisor) Disable(ctx context.Context) error {
	s.mu.Lock()
	s.rec.Disabled, s.rec.AutoDisabled, s.rec.DisabledAt, s.rec.Reason = true, false, s.now(), "disabled by a user"
	rec := s.rec
	s.mu.Unlock()
	if err := s.store.SaveState(ctx, s.Name(), rec); err != nil {
		return err
	}
	s.update(func(sn *Snapshot) {
		sn.Enabled, sn.AutoDisabled, sn.DisabledReason = false, false, rec.Reason
		sn.Retrying, sn.NextRetryAt = false, time.Time{}
	})
	s.wake()
	return nil
}

func (s *Supervisor) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *Supervisor) enabled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap.Enabled
}

// Run supervises the server until ctx is done (or, in Once mode, until the
// single connection attempt has concluded and, if it succeeded, ctx is
// done). It closes the connection before returning. Cancellation is not an
// error.
func (s *Supervisor) Run(ctx context.Context) error {
	defer s.markSettled()
	defer s.owned.closeAll()
	rec, err := s.store.LoadState(ctx, s.Name())
	if err != nil {
		s.logger.Warn("loading server state", logKeyErr, err)
	}
	s.mu.Lock()
	s.rec = rec
	s.mu.Unlock()
	if rec.Disabled && s.opts.Server.Enabled {
		s.update(func(sn *Snapshot) {
			sn.Enabled, sn.AutoDisabled, sn.DisabledReason = false, rec.AutoDisabled, rec.Reason
			sn.AutoDisabledAt = rec.DisabledAt
			sn.LastError, sn.ConsecutiveFailures, sn.LastConnectedAt = rec.LastError, rec.ConsecutiveFailures, rec.LastConnectedAt
			if !rec.AutoDisabled {
				sn.AutoDisabledAt = time.Time{}
			}
		})
	}

	attempt := 0 // seed 000 retryState.currentAttempt
	var lastRenewal time.Time
	for {
		if ctx.Err() != nil {
			return nil
		}
		if !s.enabled() {
			s.setState(StateDisconnected, "")
			s.markSettled()
			if s.opts.Once {
				return nil
			}
			attempt = 0
			select {
			case <-ctx.Done():
				return nil
			case <-s.kick:
				continue
			}
		}

		if len(s.opts.Server.CannotStart) > 0 {
			s.cannotStart()
			if s.opts.Once {
				return nil
			}
			select {
			case <-ctx.Done():
				return nil
			case <-s.kick: // enabled or disabled: look again
				continue
			}
		}

		s.setState(StateConnecting, "")
		c, err := Dial(ctx, s.opts.Server, s.opts.Dial)
		if ctx.Err() != nil {
			if c != nil {
				_ = c.Close()
			}
			return nil
		}
		if err == nil {
			attempt = 0
			if !s.opts.Once {
				c.check.monitored.Store(true) // monitor checks it
			}
			s.connected(ctx, c)
			if s.opts.Once {
				<-ctx.Done()
				s.disconnect(c)
				return nil
			}
			err = s.monitor(ctx, c)
			s.disconnect(c)
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, errDisabled) {
				continue
			}
			if errors.Is(err, errSessionExpired) && s.now().Sub(lastRenewal) >= minRenewalGap {
				// The server restarted or ended the session: start a new
				// one at once, as the MCP specification says — no
				// failure, no backoff. (Twice within minRenewalGap is a
				// failure: a server that forgets every session.)
				lastRenewal = s.now()
				s.logger.Info("the server no longer has the session; starting a new one")
				continue
			}
		}

		if e := s.signInNeeded(err); e != nil {
			// Waiting for a person is no failure: no backoff, no count.
			if !s.awaitSignIn(ctx, e) {
				return nil
			}
			attempt = 0
			continue
		}
		// A failed attempt, or a connection lost.
		s.failed(ctx, err, attempt)
		if s.opts.Once {
			return nil
		}
		if attempt >= s.opts.Health.MaxFailures {
			s.autoDisable(ctx, err)
			attempt = 0
			continue
		}
		wait := s.opts.Health.Backoff[min(attempt, len(s.opts.Health.Backoff)-1)]
		attempt++
		next := s.now().Add(wait)
		s.update(func(sn *Snapshot) { sn.Retrying, sn.Attempt, sn.NextRetryAt = true, attempt, next })
		s.markSettled()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-s.kick:
			t.Stop()
			attempt = 0 // an explicit enable or disable starts over
		case <-t.C:
		}
		s.update(func(sn *Snapshot) { sn.Retrying, sn.NextRetryAt = false, time.Time{} })
	}
}

func (s *Supervisor) connected(ctx context.Context, c *Client) {
	now := s.now()
	s.mu.Lock()
	s.client = c
	s.rec.ConsecutiveFailures, s.rec.LastError, s.rec.LastConnectedAt = 0, "", now
	s.mu.Unlock()
	if !s.opts.Once && s.saveHealth(ctx) {
		// Another process sharing the store disabled the server meanwhile:
		// adopt it rather than serve on (and rather than overwrite it).
		s.adoptDisable()
	}
	s.update(func(sn *Snapshot) {
		sn.State, sn.Since = StateConnected, now
		sn.LastConnectedAt, sn.ConsecutiveFailures, sn.LastError, sn.Suggestions = now, 0, "", nil
		sn.Attempt, sn.Retrying, sn.NextRetryAt = 0, false, time.Time{}
		sn.Stderr = ""
		s.settled = true
	})
	s.logger.Info("connected")
	// Only now does Client() hand the connection out.
	if s.opts.OnConnect != nil {
		s.opts.OnConnect(c)
	}
}

func (s *Supervisor) disconnect(c *Client) {
	s.mu.Lock()
	if s.client == c {
		s.client = nil
	}
	s.mu.Unlock()
	if r := s.retiring.Load(); r != nil {
		_ = c.Retire(r.bound, r.stopping, r.drain)
	} else {
		_ = c.Close()
	}
	stderr := lastLines(c.Stderr(), 20)
	// Disconnected until failed records why: the snapshot never says
	// connected while Client has no connection to hand out.
	s.update(func(sn *Snapshot) {
		sn.Stderr = stderr
		if sn.State == StateConnected {
			sn.State, sn.Since = StateDisconnected, s.now()
		}
	})
}

// failed records a failed attempt or a lost connection. The error's
// message says what happened (Dial and the client explain it: see
// explain.go) and its suggestions what to try; both are kept.
func (s *Supervisor) failed(ctx context.Context, err error, attempt int) {
	msg := "connection ended"
	var hints []string
	stderr := ""
	if fe := fault.As(err); fe != nil {
		msg, hints = fe.Message, fe.Suggestions
		if v, ok := fe.Details["stderr"].(string); ok {
			stderr = v
		}
	}
	s.mu.Lock()
	s.rec.ConsecutiveFailures++
	s.rec.LastError = msg
	rec := s.rec
	s.mu.Unlock()
	if !s.opts.Once && s.saveHealth(ctx) {
		s.adoptDisable()
	}
	// Logged before it is announced: whoever waits for the failure finds
	// it in the log too.
	s.logger.Warn("upstream failure", logKeyErr, msg, logKeyHints, hints, "attempt", attempt)
	s.update(func(sn *Snapshot) {
		sn.State, sn.Since, sn.LastError, sn.Suggestions = StateError, s.now(), msg, hints
		sn.ConsecutiveFailures = rec.ConsecutiveFailures
		if stderr != "" {
			sn.Stderr = stderr
		}
		if s.opts.Once {
			s.settled = true
		}
	})
}

// cannotStart shows why the server cannot start (its configuration's
// CannotStart), where the file says it, and what to do; nothing is
// started and no failure is counted.
func (s *Supervisor) cannotStart() {
	var causes, hints []string
	for _, p := range s.opts.Server.CannotStart {
		fix := p.Fix
		p.Fix = ""
		causes = append(causes, p.String())
		if fix != "" && !slices.Contains(hints, fix) {
			hints = append(hints, fix)
		}
	}
	if !s.opts.Once {
		hints = append(hints, config.StartHint(s.opts.Server.CannotStart, s.opts.StdioPID))
	}
	msg := strings.Join(causes, "; ")
	s.update(func(sn *Snapshot) {
		if sn.State != StateCannotStart {
			sn.Since = s.now()
		}
		sn.State, sn.LastError, sn.Suggestions = StateCannotStart, msg, hints
		sn.Retrying, sn.NextRetryAt, sn.Attempt = false, time.Time{}, 0
		s.settled = true
	})
	s.logger.Warn("cannot start", logKeyErr, msg, logKeyHints, hints)
}

func (s *Supervisor) autoDisable(ctx context.Context, err error) {
	now := s.now()
	s.mu.Lock()
	s.rec.Disabled, s.rec.AutoDisabled, s.rec.DisabledAt = true, true, now
	s.rec.Reason = fmt.Sprintf("auto-disabled after %d failed reconnect attempts", s.opts.Health.MaxFailures)
	rec := s.rec
	s.mu.Unlock()
	if err := s.store.SaveState(ctx, s.Name(), rec); err != nil {
		s.logger.Warn("saving server state", logKeyErr, err)
	}
	s.update(func(sn *Snapshot) {
		sn.Enabled, sn.AutoDisabled, sn.AutoDisabledAt, sn.DisabledReason = false, true, now, rec.Reason
		sn.Retrying, sn.NextRetryAt, sn.Attempt = false, time.Time{}, 0
	})
	s.logger.Error("auto-disabled", logKeyErr, rec.LastError)
}

// monitor watches a live connection until it ends: the connection closes
// (a child exits — noticed at once), a ping fails, the server is disabled,
// or ctx ends.
func (s *Supervisor) monitor(ctx context.Context, c *Client) error {
	var checked chan struct{} // the check under way, asked for by a failed request
	var tick <-chan time.Time
	if iv := s.opts.Health.PingInterval; iv > 0 {
		t := time.NewTicker(iv)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.Done():
			return c.Err()
		case <-s.kick:
			if !s.enabled() {
				return errDisabled
			}
			continue
		case <-c.suspect:
			// A request could not reach the server: check now rather
			// than at the next ping, on a new connection (the kept-alive
			// ones may all be dead, as after a restart of the server).
			checked = c.check.begin()
			c.closePool()
		case <-tick:
		}
		pctx, cancel := context.WithTimeout(ctx, s.opts.Health.PingTimeout)
		lat, err := c.Ping(pctx)
		cancel()
		if err == nil {
			// The connection is fine: a caller waiting to retry goes on
			// (had it failed, the connection's end tells them).
			pass(checked)
			checked = nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			fe := fault.As(err)
			if fe.Kind == fault.Timeout {
				fe.Message = fmt.Sprintf("ping to %s got no answer within %s", s.Name(), s.opts.Health.PingTimeout)
			}
			return fe
		}
		now := s.now()
		s.update(func(sn *Snapshot) { sn.LastPingAt, sn.Latency = now, lat })
	}
}

// saveHealth stores the record's health fields (failures, last error,
// last connection) without undoing a user's disable that another process
// sharing the store — a replica — recorded since this one read it. It
// reports whether it found such a disable (now also in s.rec). Another
// replica's auto-disable is not adopted: it says that replica could not
// reach the server (its own child, its own network), not that this one
// cannot.
func (s *Supervisor) saveHealth(ctx context.Context) (disabledElsewhere bool) {
	stored, err := s.store.LoadState(ctx, s.Name())
	s.mu.Lock()
	if err == nil && stored.Disabled && !stored.AutoDisabled && !s.rec.Disabled {
		s.rec.Disabled, s.rec.AutoDisabled, s.rec.DisabledAt, s.rec.Reason = true, stored.AutoDisabled, stored.DisabledAt, stored.Reason
		disabledElsewhere = true
	}
	rec := s.rec
	s.mu.Unlock()
	if err := s.store.SaveState(ctx, s.Name(), rec); err != nil {
		s.logger.Warn("saving server state", logKeyErr, err)
	}
	return disabledElsewhere
}

// adoptDisable applies a disable found in the store: the server is
// disconnected and stays so until enabled.
func (s *Supervisor) adoptDisable() {
	s.mu.Lock()
	rec := s.rec
	s.mu.Unlock()
	s.update(func(sn *Snapshot) {
		sn.Enabled, sn.AutoDisabled, sn.DisabledReason = false, rec.AutoDisabled, rec.Reason
		if rec.AutoDisabled {
			sn.AutoDisabledAt = rec.DisabledAt
		}
		sn.Retrying, sn.NextRetryAt = false, time.Time{}
	})
	s.logger.Info("disabled elsewhere (a process sharing the store)", "reason", rec.Reason)
	s.wake()
}
