package upstream

import (
	"context"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/oauth"
)

// signInPoll is how often a server waiting for a sign-in looks at its
// stored sign-in: a login from the CLI (another process) is noticed
// within this time, without a restart.
const signInPoll = 200 * time.Millisecond

// signInNeeded returns why a connection attempt (or a lost connection)
// needs a person to sign in, or nil when err is another failure.
func (s *Supervisor) signInNeeded(err error) *oauth.NeedsSignInError {
	a := s.opts.Dial.Auth
	if a == nil || err == nil {
		return nil
	}
	if e, ok := oauth.AsNeedsSignIn(err); ok && e.User == "" {
		return e
	}
	return a.NeedsSignIn()
}

// awaitSignIn shows the needs_auth state, with why and the command to
// run, and waits until the stored sign-in changes (a login, in this
// process or another), the server is enabled or disabled, or ctx ends. It
// reports whether Run should go on (try again).
func (s *Supervisor) awaitSignIn(ctx context.Context, e *oauth.NeedsSignInError) bool {
	a := s.opts.Dial.Auth
	stamp := a.stamp()
	msg, hint := e.Error(), "run: "+e.Command()
	s.update(func(sn *Snapshot) {
		if sn.State != StateNeedsAuth {
			sn.Since = s.now()
		}
		sn.State, sn.LastError, sn.Suggestions = StateNeedsAuth, msg, []string{hint}
		sn.Retrying, sn.NextRetryAt, sn.Attempt = false, time.Time{}, 0
		s.settled = true
	})
	s.logger.Warn("needs sign-in", logKeyErr, msg, logKeyHints, []string{hint})
	if s.opts.Once {
		return false
	}
	t := time.NewTicker(signInPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-s.kick:
			return true
		case <-t.C:
			if a.stamp() != stamp {
				s.logger.Info("the stored sign-in changed; connecting")
				return true
			}
		}
	}
}
