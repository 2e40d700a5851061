package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Defaults of Options.
const (
	DefaultRefreshLeeway = time.Minute
	DefaultMaxStepUps    = 3
	DefaultLoginTimeout  = 5 * time.Minute
	DefaultClientName    = "Switchboard"
	DefaultCommand       = "switchboard"
	requestTimeout       = 30 * time.Second
)

// Log attribute keys.
const (
	logServer = "server"
	logUser   = "user"
	logIssuer = "issuer"
	logErr    = "err"
)

// Options configure a Manager.
type Options struct {
	// StateDir is Switchboard's state directory; the store lives in its
	// oauth/ folder. Required.
	StateDir string
	// HTTPClient makes the requests to metadata, registration, token and
	// revocation endpoints; nil means a client with a 30 s timeout. The
	// go-sdk's discovery refuses to dial private-network addresses (an SSRF
	// guard) unless this client's transport sets its own DialContext: a
	// caller that must reach a company's authorization server on a private
	// network passes a client whose transport has a net.Dialer's DialContext.
	HTTPClient *http.Client
	// Logger gets one line per sign-in, refresh failure and logout, with
	// server and issuer names only; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// OpenBrowser opens the authorization URL; nil means [OpenBrowser].
	OpenBrowser func(ctx context.Context, url string) (done <-chan error, err error)
	// Command is the program name used in the commands messages suggest;
	// default "switchboard".
	Command string
	// LoginCommand, if set, returns the whole command that signs a person
	// in to server (for a server known by other means than its name, such
	// as an ad hoc URL); default "<Command> auth login SERVER [--user USER]".
	LoginCommand func(server, user string) string
	// ClientName is the client_name sent in dynamic registration; default
	// "Switchboard".
	ClientName string
	// RefreshLeeway is how long before expiry a token is refreshed;
	// default one minute.
	RefreshLeeway time.Duration
	// MaxStepUps bounds the step-up authorizations of one handler within
	// ten minutes; default 3.
	MaxStepUps int
	// LoginTimeout bounds the wait for the browser's redirect; default 5 min.
	LoginTimeout time.Duration
	// OnStore, if set, is called after this manager stored tokens (a
	// sign-in or a refresh), so that a caller can update what its
	// redactor knows (see Secrets). It must not block.
	OnStore func()
}

// Server is one upstream server as the package needs it.
type Server struct {
	// Name is the server's name in the configuration: the key of its
	// stored sign-in.
	Name string
	// URL is the MCP endpoint.
	URL string
	// Settings are its oauth settings.
	Settings Settings
}

// Manager keeps the sign-ins of all servers, in one state directory. It is
// safe for concurrent use, and several processes may share a directory.
type Manager struct {
	opts  Options
	store *store
	hc    *http.Client
	log   *slog.Logger

	mu      sync.Mutex
	refresh map[string]*sync.Mutex // per grant: one refresh at a time in this process
}

// New returns a Manager for opts.StateDir.
func New(opts Options) (*Manager, error) {
	if opts.StateDir == "" {
		return nil, errors.New("oauth: Options.StateDir is required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.OpenBrowser == nil {
		opts.OpenBrowser = OpenBrowser
	}
	if opts.Command == "" {
		opts.Command = DefaultCommand
	}
	if opts.ClientName == "" {
		opts.ClientName = DefaultClientName
	}
	if opts.RefreshLeeway <= 0 {
		opts.RefreshLeeway = DefaultRefreshLeeway
	}
	if opts.MaxStepUps <= 0 {
		opts.MaxStepUps = DefaultMaxStepUps
	}
	if opts.LoginTimeout <= 0 {
		opts.LoginTimeout = DefaultLoginTimeout
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: requestTimeout}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st := newStore(opts.StateDir)
	st.saved = opts.OnStore
	return &Manager{opts: opts, store: st, hc: hc, log: log, refresh: make(map[string]*sync.Mutex)}, nil
}

// needsSignIn builds the typed error with the manager's command name.
func (m *Manager) needsSignIn(srv Server, user, reason string, scopes []string, err error) *NeedsSignInError {
	return &NeedsSignInError{Server: srv.Name, User: user, Reason: reason, Scopes: scopes, Err: err, command: m.opts.Command, login: m.opts.LoginCommand}
}

// LoginCommand returns the command that signs a person in to server.
func (m *Manager) LoginCommand(server, user string) string {
	return (&NeedsSignInError{Server: server, User: user, command: m.opts.Command, login: m.opts.LoginCommand}).Command()
}

// Status is what is known of one server's sign-in. It holds no secret.
type Status struct {
	Server string `json:"server"`
	User   string `json:"user,omitempty"`
	// State is StateSignedIn, StateNeedsAuth or StateNotSignedIn.
	State string `json:"state"`
	// Subject is whom the sign-in is for, when the authorization server
	// said (an ID token's email, preferred_username or sub), or the client
	// ID for the client-credentials grant.
	Subject      string    `json:"subject,omitempty"`
	Grant        Grant     `json:"grant,omitempty"`
	Issuer       string    `json:"issuer,omitempty"`
	ClientID     string    `json:"client_id,omitempty"`
	Registration string    `json:"registration,omitempty"`
	Scopes       []string  `json:"scopes,omitempty"`
	ExpiresAt    time.Time `json:"expires_at,omitzero"`
	// Refreshable is whether a refresh token is stored (or, for client
	// credentials, whether a new token can be had without a person).
	Refreshable bool      `json:"refreshable"`
	SignedInAt  time.Time `json:"signed_in_at,omitzero"`
	// Problem says why a new sign-in is needed; Command is what to run.
	Problem string `json:"problem,omitempty"`
	Command string `json:"command,omitempty"`
}

// States of a Status.
const (
	StateSignedIn    = "signed_in"
	StateNeedsAuth   = "needs_auth"
	StateNotSignedIn = "not_signed_in"
)

func (m *Manager) statusOf(g *grant) Status {
	st := Status{
		Server: g.Server, User: g.User, State: StateSignedIn, Subject: g.Subject, Grant: g.Kind,
		Issuer: g.Issuer, ClientID: g.ClientID, Registration: g.Registration,
		Scopes: g.Scopes, ExpiresAt: g.Expiry, SignedInAt: g.SignedInAt,
		Refreshable: g.RefreshToken != "" || g.Kind == GrantClientCredentials,
	}
	expired := !g.Expiry.IsZero() && !m.opts.Now().Before(g.Expiry)
	switch {
	case g.Problem != "":
		st.State, st.Problem = StateNeedsAuth, g.Problem
	case expired && !st.Refreshable:
		st.State, st.Problem = StateNeedsAuth, ReasonNoRefreshToken
	case len(g.WantScopes) > 0 && g.Kind != GrantClientCredentials:
		st.State, st.Problem = StateNeedsAuth, ReasonMoreScopes+" ("+joinScopes(g.WantScopes)+")"
	}
	if st.State == StateNeedsAuth {
		st.Command = m.LoginCommand(g.Server, g.User)
	}
	return st
}

// Status returns the sign-in state of one server (and user).
func (m *Manager) Status(srv Server, user string) (Status, error) {
	g, err := m.store.loadGrant(srv.Name, user, true)
	if err != nil {
		return Status{Server: srv.Name, User: user, State: StateNeedsAuth, Problem: ReasonStoreUnreadable, Command: m.LoginCommand(srv.Name, user)}, err
	}
	if g == nil {
		st := Status{Server: srv.Name, User: user, State: StateNotSignedIn, Grant: srv.Settings.grant()}
		if srv.Settings.grant() == GrantAuthorizationCode {
			st.Command = m.LoginCommand(srv.Name, user)
		}
		return st, nil
	}
	if g.ServerURL != "" && g.ServerURL != srv.URL {
		st := m.statusOf(g)
		st.State, st.Problem, st.Command = StateNeedsAuth, ReasonResourceChanged, m.LoginCommand(srv.Name, user)
		return st, nil
	}
	return m.statusOf(g), nil
}

// Statuses returns the state of every stored sign-in, ordered by server
// and user. Records that do not open are reported in the error, and the
// others returned.
func (m *Manager) Statuses() ([]Status, error) {
	gs, err := m.store.grants()
	out := make([]Status, 0, len(gs))
	for _, g := range gs {
		out = append(out, m.statusOf(g))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].User < out[j].User
	})
	return out, err
}

// LogoutResult says what Logout did.
type LogoutResult struct {
	Server string `json:"server"`
	User   string `json:"user,omitempty"`
	// WasSignedIn is false when nothing was stored.
	WasSignedIn bool `json:"was_signed_in"`
	// Revoked is true when the authorization server accepted the
	// revocation (RFC 7009) of the stored tokens.
	Revoked bool `json:"revoked"`
	// Note says what the person should know: no revocation offered (the
	// token stays valid until it expires), or why revocation failed.
	Note string `json:"note,omitempty"`
}

// Logout revokes the stored tokens where the authorization server offers
// revocation (the refresh token first, which ends the grant, then the
// access token) and forgets them. A failed revocation is reported in the
// result; the tokens are forgotten all the same.
func (m *Manager) Logout(ctx context.Context, srv Server, user string) (LogoutResult, error) {
	res := LogoutResult{Server: srv.Name, User: user}
	g, err := m.store.loadGrant(srv.Name, user, true)
	if err != nil {
		// Unreadable: it cannot be revoked, but it can be forgotten.
		res.Note = "the stored sign-in could not be read, so it was removed without revocation"
		return res, m.store.deleteGrant(srv.Name, user)
	}
	if g == nil {
		return res, nil
	}
	res.WasSignedIn = true
	switch {
	case g.RevocationEndpoint == "":
		res.Note = "the authorization server offers no revocation (RFC 7009): the access token stays valid until it expires"
		if !g.Expiry.IsZero() {
			res.Note += " at " + g.Expiry.Format(time.RFC3339)
		}
	default:
		c, cerr := m.clientFor(srv, g)
		if cerr != nil {
			res.Note = "the tokens could not be revoked: " + cerr.Error()
			break
		}
		ctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		var errs []error
		if g.RefreshToken != "" {
			errs = append(errs, revoke(ctx, m.hc, g.RevocationEndpoint, c, string(g.RefreshToken), "refresh_token"))
		}
		if g.AccessToken != "" {
			errs = append(errs, revoke(ctx, m.hc, g.RevocationEndpoint, c, string(g.AccessToken), "access_token"))
		}
		if err := errors.Join(errs...); err != nil {
			res.Note = "revoking the tokens failed, they were forgotten here but may stay valid until they expire: " + err.Error()
		} else {
			res.Revoked = true
		}
	}
	if err := m.store.deleteGrant(srv.Name, user); err != nil {
		return res, fmt.Errorf("forgetting the sign-in of %s: %w", srv.Name, err)
	}
	m.log.Info("oauth: signed out", logServer, srv.Name, logUser, user, "revoked", res.Revoked)
	return res, nil
}

// clientFor returns the client a stored grant was obtained with, for
// refresh and revocation.
func (m *Manager) clientFor(srv Server, g *grant) (client, error) {
	switch g.Registration {
	case RegistrationConfigured:
		if srv.Settings.ClientID != g.ClientID {
			return client{}, m.needsSignIn(srv, g.User, "the configured oauth.client_id changed since the sign-in", nil, nil)
		}
		return client{ID: g.ClientID, Secret: secret(srv.Settings.ClientSecret), AuthMethod: g.AuthMethod, Registration: g.Registration}, nil
	case RegistrationMetadataDocument:
		return client{ID: g.ClientID, AuthMethod: AuthMethodNone, Registration: g.Registration}, nil
	default:
		reg, err := m.store.loadRegistration(g.Issuer)
		if err != nil {
			return client{}, m.needsSignIn(srv, g.User, ReasonStoreUnreadable, nil, err)
		}
		if reg == nil || reg.ClientID != g.ClientID {
			return client{}, m.needsSignIn(srv, g.User, ReasonRegistrationGone, nil, nil)
		}
		return client{ID: reg.ClientID, Secret: reg.ClientSecret, AuthMethod: reg.AuthMethod, Registration: RegistrationDynamic}, nil
	}
}

// resolveClient picks the client for a sign-in, in the order the issue and
// the specification give: the configured client, else the client ID
// metadata document URL when the authorization server supports them, else
// the stored dynamic registration for this authorization server (when it
// lists redirectURI), else a new dynamic registration, which is stored.
func (m *Manager) resolveClient(ctx context.Context, srv Server, asm *oauthex.AuthServerMeta, redirectURI string) (client, error) {
	set := srv.Settings
	if set.ClientID != "" {
		return client{
			ID: set.ClientID, Secret: secret(set.ClientSecret), Registration: RegistrationConfigured,
			AuthMethod: chooseAuthMethod(set.AuthMethod, set.ClientSecret != "", asm.TokenEndpointAuthMethodsSupported),
		}, nil
	}
	if set.ClientMetadataURL != "" && asm.ClientIDMetadataDocumentSupported {
		return client{ID: set.ClientMetadataURL, AuthMethod: AuthMethodNone, Registration: RegistrationMetadataDocument}, nil
	}
	if asm.RegistrationEndpoint == "" {
		hint := "register a client with it and set oauth.client_id (and oauth.client_secret_env) on server " + srv.Name
		if asm.ClientIDMetadataDocumentSupported {
			hint += ", or set oauth.client_metadata_url"
		}
		return client{}, &AuthServerError{
			Step: "registering with the authorization server",
			URL:  asm.Issuer,
			Err:  errors.New("it offers no dynamic client registration"),
			Hint: hint,
		}
	}
	reg, err := m.store.loadRegistration(asm.Issuer)
	if err != nil {
		m.log.Warn("oauth: stored registration unreadable, registering again", logIssuer, asm.Issuer, logErr, err)
		reg = nil
	}
	now := m.opts.Now()
	if reg != nil && slices.Contains(reg.RedirectURIs, redirectURI) && (reg.SecretExpiresAt.IsZero() || now.Before(reg.SecretExpiresAt)) {
		return client{ID: reg.ClientID, Secret: reg.ClientSecret, AuthMethod: reg.AuthMethod, Registration: RegistrationDynamic, Stored: true}, nil
	}
	meta := &oauthex.ClientRegistrationMetadata{
		RedirectURIs:            []string{redirectURI},
		TokenEndpointAuthMethod: AuthMethodNone,
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		ClientName:              m.opts.ClientName,
		ApplicationType:         "native",
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, meta, m.hc)
	if err != nil {
		return client{}, &AuthServerError{
			Step: "registering Switchboard with the authorization server",
			URL:  asm.RegistrationEndpoint,
			Err:  err,
			Hint: "if it does not allow dynamic registration, register a client by hand and set oauth.client_id on server " + srv.Name,
		}
	}
	method := resp.TokenEndpointAuthMethod
	if method == "" {
		method = AuthMethodNone
		if resp.ClientSecret != "" {
			method = AuthMethodBasic
		}
	}
	reg = &registration{
		Issuer: asm.Issuer, ClientID: resp.ClientID, ClientSecret: secret(resp.ClientSecret),
		AuthMethod: method, RedirectURIs: []string{redirectURI}, RegisteredAt: now,
		SecretExpiresAt: resp.ClientSecretExpiresAt,
	}
	if err := m.store.saveRegistration(reg); err != nil {
		return client{}, err
	}
	m.log.Info("oauth: registered a client", logServer, srv.Name, logIssuer, asm.Issuer)
	return client{ID: reg.ClientID, Secret: reg.ClientSecret, AuthMethod: reg.AuthMethod, Registration: RegistrationDynamic}, nil
}

// joinScopes shows scopes as the protocol writes them.
func joinScopes(s []string) string { return strings.Join(s, " ") }

// Secrets returns every token and client secret the store holds now, for
// the redactor of logs and history (which also knows bearer and JWT
// shapes). Tokens rotate: call it again after a sign-in or refresh to keep
// the list current.
func (m *Manager) Secrets() ([]string, error) {
	gs, err := m.store.grants()
	var out []string
	add := func(s secret) {
		if s != "" {
			out = append(out, string(s))
		}
	}
	issuers := map[string]bool{}
	for _, g := range gs {
		add(g.AccessToken)
		add(g.RefreshToken)
		issuers[g.Issuer] = true
	}
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for iss := range issuers {
		reg, err := m.store.loadRegistration(iss)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if reg != nil {
			add(reg.ClientSecret)
		}
	}
	return out, errors.Join(errs...)
}

// Stamp identifies the stored sign-in of server (and user) as it is now:
// it changes whenever a sign-in, refresh or logout rewrites it, in this
// process or another. It is a file's size and modification time (no
// decryption), cheap enough to poll while a server waits for a sign-in;
// empty when nothing is stored.
func (m *Manager) Stamp(server, user string) string {
	info, err := os.Stat(m.store.grantPath(server, user))
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d/%d", info.ModTime().UnixNano(), info.Size())
}
