package oauth

import (
	"errors"
	"fmt"
	"strings"
)

// Reasons a server needs sign-in, as NeedsSignInError.Reason says them.
const (
	ReasonNotSignedIn        = "not signed in"
	ReasonRefreshRefused     = "the authorization server refused the stored refresh token (it expired or was revoked)"
	ReasonNoRefreshToken     = "the access token expired and the authorization server gave no refresh token"
	ReasonTokenRejected      = "the server rejected the access token and it cannot be refreshed"
	ReasonRegistrationGone   = "the authorization server no longer knows Switchboard's client registration (it was revoked or expired)"
	ReasonMoreScopes         = "the server asks for more access"
	ReasonStoreUnreadable    = "the stored sign-in cannot be read"
	ReasonResourceChanged    = "the server's URL changed since the sign-in"
	ReasonClientCredsRefused = "the authorization server refused the configured client credentials"
)

// NeedsSignInError says that a server can be used only after a person signs
// in (again), and which command does it. It carries no secret: it is safe
// to show in the CLI, JSON, logs and the console.
type NeedsSignInError struct {
	Server string
	// User is the user whose sign-in is missing, for servers signed in per
	// user; empty for a shared sign-in.
	User string
	// Reason says why, in words for a person (one of the Reason constants).
	Reason string
	// Scopes are the scopes the next sign-in will ask for, when a step-up
	// challenge named them.
	Scopes []string
	// Err is the cause, if there was one.
	Err error
	// command is the program name messages use (Options.Command).
	command string
	// login, if set, is the whole sign-in command (Options.LoginCommand).
	login func(server, user string) string
}

// Command returns the exact command that signs in.
func (e *NeedsSignInError) Command() string {
	if e.login != nil {
		return e.login(e.Server, e.User)
	}
	prog := e.command
	if prog == "" {
		prog = "switchboard"
	}
	cmd := prog + " auth login " + e.Server
	if e.User != "" {
		cmd += " --user " + e.User
	}
	return cmd
}

// Error says what is missing and what to run.
func (e *NeedsSignInError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "server %s needs sign-in", e.Server)
	if e.User != "" {
		fmt.Fprintf(&b, " for user %s", e.User)
	}
	if e.Reason != "" {
		b.WriteString(": " + e.Reason)
	}
	if len(e.Scopes) > 0 {
		b.WriteString(" (scopes: " + strings.Join(e.Scopes, " ") + ")")
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	fmt.Fprintf(&b, "; run `%s`", e.Command())
	return b.String()
}

// Unwrap returns the cause.
func (e *NeedsSignInError) Unwrap() error { return e.Err }

// AsNeedsSignIn returns the NeedsSignInError in err's chain, if any: the
// test for the needs_auth state.
func AsNeedsSignIn(err error) (*NeedsSignInError, bool) {
	var e *NeedsSignInError
	ok := errors.As(err, &e)
	return e, ok
}

// RedirectError is an authorization response that came back with an error
// (RFC 6749 §4.1.2.1), such as access_denied when the person clicked Deny.
type RedirectError struct {
	Code        string // the error parameter
	Description string // error_description, if any
}

// Error names the code and what it usually means.
func (e *RedirectError) Error() string {
	msg := "the authorization server answered the sign-in with " + e.Code
	if e.Description != "" {
		msg += " (" + e.Description + ")"
	}
	switch e.Code {
	case "access_denied":
		msg += ": the sign-in was declined; run the login again and allow access"
	case "invalid_scope":
		msg += ": the server does not offer a requested scope; check the scopes in the server's oauth settings"
	case "unauthorized_client", "invalid_client":
		msg += ": the authorization server does not accept this client; check client_id, or remove it to register dynamically"
	}
	return msg
}

// ErrStateMismatch is returned when the redirect's state is not the one the
// sign-in sent: the redirect did not come from this sign-in (an old browser
// tab, or a forged request), and its code is not used.
var ErrStateMismatch = errors.New("the redirect's state does not match this sign-in: it came from another sign-in attempt or was forged, and was ignored; run the login again")

// AuthServerError is a failure to use an authorization server or the
// server's metadata: unreachable, not an authorization server, a metadata
// document that fails its checks (a mismatched issuer, no PKCE S256).
type AuthServerError struct {
	// Step says what was being done ("discovering the authorization server").
	Step string
	// URL is the address involved (never one carrying a secret).
	URL string
	// Hint says what to do about it.
	Hint string
	Err  error
}

// Error says what failed, where, why and what to do.
func (e *AuthServerError) Error() string {
	msg := e.Step
	if e.URL != "" {
		msg += " (" + e.URL + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// Unwrap returns the cause.
func (e *AuthServerError) Unwrap() error { return e.Err }

// InsufficientScopeError is returned when a server keeps answering 403
// insufficient_scope after the scopes it named were granted, or after the
// bounded number of step-ups: the sign-in cannot fix it.
type InsufficientScopeError struct {
	Server string
	Scopes []string // what the server asked for last
	Reason string
}

// Error says what the server asked for and why no more is tried.
func (e *InsufficientScopeError) Error() string {
	return fmt.Sprintf("server %s refuses the call for want of scopes %q: %s", e.Server, strings.Join(e.Scopes, " "), e.Reason)
}
