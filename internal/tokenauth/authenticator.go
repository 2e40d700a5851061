package tokenauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/sync/singleflight"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// Log attribute keys.
const (
	logIssuer     = "issuer"
	logURL        = "url"
	logReason     = "reason"
	logError      = "error"
	logCount      = "count"
	logUser       = "user"
	logPath       = "path"
	logSuppressed = "suppressed"
)

// Authenticator validates the access tokens of requests to the gateway and
// serves the metadata that tells clients where to get them. It is safe for
// concurrent use.
type Authenticator struct {
	s    *settings
	algs []jose.SignatureAlgorithm
	// scopes holds the scopes each view with scopes of its own needs
	// (Scopes and the view's); other views need Scopes.
	scopes map[string][]string
	keys   keySet
	disc   discovery
	cache  tokenCache
	sf     singleflight.Group // one validation per token at a time

	lastWarn atomic.Int64 // unix nanoseconds of the last throttled warning
	quiet    atomic.Int64 // warnings suppressed since
}

// New checks the options and returns an Authenticator. It does not reach
// the authorization server: keys and metadata are fetched by Run, or by
// the first request that needs them.
func New(o Options) (*Authenticator, error) {
	s, err := o.check()
	if err != nil {
		return nil, err
	}
	a := &Authenticator{s: s}
	for _, alg := range s.algorithms {
		a.algs = append(a.algs, jose.SignatureAlgorithm(alg))
	}
	a.keys.a = a
	a.scopes = map[string][]string{}
	for view, extra := range s.ViewScopes {
		need := slices.Clone(s.Scopes)
		for _, sc := range extra {
			if !slices.Contains(need, sc) {
				need = append(need, sc)
			}
		}
		a.scopes[view] = need
	}
	a.cache.lru, err = lru.New[[32]byte, cacheEntry](s.CacheSize)
	if err != nil {
		return nil, fmt.Errorf("oauth: token cache: %w", err)
	}
	return a, nil
}

// Run keeps the authorization server's keys fresh until ctx is cancelled:
// it fetches them at once (so that a misconfigured server shows in the log
// at start), then every KeysRefresh, and after a failure again within
// seconds to minutes. With introspection only, it looks up the endpoint
// once when it is not configured. Cancellation is not an error.
func (a *Authenticator) Run(ctx context.Context) error {
	s := a.s
	s.Logger.Info("oauth: accepting access tokens", slog.String(logIssuer, s.Issuer),
		slog.Bool("jwt", s.useJWT), slog.Bool("introspection", s.useIntro), slog.String("resource", a.ResourceURL("")))
	if !s.useJWT {
		if s.Introspection.URL == "" {
			if _, err := a.introspectionURL(ctx); err != nil && ctx.Err() == nil {
				s.Logger.Warn("oauth: cannot find the introspection endpoint; opaque tokens are refused until it is found", slog.String(logError, err.Error()))
			}
		}
		<-ctx.Done()
		return nil
	}
	const firstBackoff, maxBackoff = 5 * time.Second, 5 * time.Minute
	backoff := firstBackoff
	for {
		wait := s.KeysRefresh
		if err := a.keys.refresh(ctx, "scheduled", true); err != nil {
			wait, backoff = backoff, min(backoff*2, maxBackoff)
		} else {
			backoff = firstBackoff
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// Refusal is a request the Authenticator turned away: the HTTP status, the
// WWW-Authenticate challenge to send with it (empty when none), and the
// error the client is shown, whose cause is for the log only.
type Refusal struct {
	Status    int
	Challenge string
	Err       *fault.Error
}

// Error returns the error's text, with its cause.
func (r *Refusal) Error() string { return r.Err.Error() }

// Unwrap returns the error.
func (r *Refusal) Unwrap() error { return r.Err }

// Write answers the request: the status, the challenge, and the error as
// JSON (seed 002's error response).
func (r *Refusal) Write(w http.ResponseWriter) {
	h := w.Header()
	if r.Challenge != "" {
		h.Set("WWW-Authenticate", r.Challenge)
	}
	if r.Status == http.StatusServiceUnavailable {
		h.Set("Retry-After", "10")
	}
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(r.Status)
	_ = json.NewEncoder(w).Encode(r.Err)
}

// tokenError is why a token was refused: the status, the OAuth error code,
// a description safe for the client, and the cause for the log.
type tokenError struct {
	status   int
	code     string
	desc     string
	cause    error
	negative bool // the authorization server called the token inactive: cache the refusal
}

func invalid(desc string, cause error) *tokenError {
	return &tokenError{status: http.StatusUnauthorized, code: "invalid_token", desc: desc, cause: cause}
}

func unavailable(desc string, cause error) *tokenError {
	return &tokenError{status: http.StatusServiceUnavailable, desc: desc, cause: cause}
}

// bearer returns the token of an Authorization: Bearer header.
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != "" && strings.IndexByte(token, ' ') < 0 && strings.IndexByte(token, '\t') < 0
}

// Authenticate checks the bearer token of a request. For an MCP endpoint
// (/mcp, /mcp/{view}, /sse, /sse/{view}) it also checks that the identity
// may use the endpoint's view and that the token has the view's scopes;
// any other path is checked as the gateway as a whole (Scopes only).
//
// It returns the identity, or a refusal: 401 with a challenge naming the
// endpoint's metadata and scopes (and error="invalid_token" when a token
// was sent but is not valid), 403 with error="insufficient_scope" when the
// token lacks scopes the view needs, a plain 403 when the user's groups do
// not grant the view, or 503 when the authorization server cannot be
// reached to check the token.
func (a *Authenticator) Authenticate(r *http.Request) (*Identity, *Refusal) {
	endpoint := strings.TrimSuffix(r.URL.Path, "/")
	view, isEndpoint := endpointView(endpoint)
	if !isEndpoint {
		endpoint, view = "", ""
	}
	required := a.requiredScopes(view)

	token, ok := bearer(r)
	if !ok {
		meta := a.MetadataURL(endpoint)
		return nil, &Refusal{
			Status:    http.StatusUnauthorized,
			Challenge: challenge("", "", meta, required),
			Err: fault.New(fault.Authentication, "this gateway requires an OAuth access token").
				WithSuggestions("sign in with the authorization server named in the metadata at "+meta+", then send Authorization: Bearer <access token>").
				WithDetail("resource_metadata", meta),
		}
	}
	id, terr := a.validate(r.Context(), token)
	if terr != nil {
		return nil, a.refuse(r, terr, endpoint, required)
	}
	if isEndpoint && !id.Allows(view) {
		a.s.Logger.Debug("oauth: view not granted", slog.String(logUser, id.User), slog.String(logPath, r.URL.Path))
		return nil, &Refusal{
			Status: http.StatusForbidden,
			Err: fault.New(fault.Authorization, "user %q may not use the view %q", id.User, view).
				WithDetail("groups", id.Groups).
				WithSuggestions(a.viewHint(id)),
		}
	}
	if missing := id.missingScopes(required); len(missing) > 0 {
		// The MCP specification asks for the scopes already granted and
		// the missing ones, so that a client's step-up keeps what it has.
		want := slices.Clone(id.Scopes)
		for _, sc := range required {
			if !slices.Contains(want, sc) {
				want = append(want, sc)
			}
		}
		meta := a.MetadataURL(endpoint)
		desc := "the token lacks the scope " + strings.Join(missing, ", ")
		if len(missing) > 1 {
			desc = "the token lacks the scopes " + strings.Join(missing, ", ")
		}
		return nil, &Refusal{
			Status:    http.StatusForbidden,
			Challenge: challenge("insufficient_scope", desc, meta, want),
			Err: fault.New(fault.Authorization, "%s", desc).
				WithSuggestions("sign in again asking for the scopes "+strings.Join(want, " ")).
				WithDetail("resource_metadata", meta),
		}
	}
	return id, nil
}

// viewHint says how a user gets the views they may not use.
func (a *Authenticator) viewHint(id *Identity) string {
	views, _ := id.Views()
	if len(views) == 0 {
		return "none of your groups is granted a view: ask the gateway's administrator to add one to gateway.oauth.group_views"
	}
	return "use a view you are granted (" + strings.Join(views, ", ") + "), or ask the gateway's administrator to grant this one to one of your groups in gateway.oauth.group_views"
}

// refuse turns a token error into a refusal, logging it.
func (a *Authenticator) refuse(r *http.Request, terr *tokenError, endpoint string, required []string) *Refusal {
	cause := ""
	if terr.cause != nil {
		cause = terr.cause.Error()
	}
	if terr.status == http.StatusServiceUnavailable {
		a.warn("oauth: cannot check an access token: "+terr.desc, slog.String(logError, cause), slog.String(logPath, r.URL.Path))
		return &Refusal{
			Status: http.StatusServiceUnavailable,
			Err: fault.Wrap(fault.Connection, terr.cause, "the gateway cannot check access tokens right now: %s", terr.desc).
				WithSuggestions("try again shortly; if it persists, the gateway's log says what failed (its OAuth issuer, key set or introspection settings)"),
		}
	}
	meta := a.MetadataURL(endpoint)
	a.s.Logger.Debug("oauth: access token refused", slog.String(logReason, terr.desc), slog.String(logError, cause), slog.String(logPath, r.URL.Path))
	return &Refusal{
		Status:    terr.status,
		Challenge: challenge(terr.code, terr.desc, meta, required),
		Err: fault.Wrap(fault.Authentication, terr.cause, "the access token is not valid: %s", terr.desc).
			WithSuggestions("sign in again to get a new access token (the metadata at "+meta+" names the authorization server)").
			WithDetail("resource_metadata", meta),
	}
}

// warn logs a warning at most once every 10 seconds, counting the ones it
// holds back, so that a failing authorization server does not flood the
// log with one line per request.
func (a *Authenticator) warn(msg string, attrs ...slog.Attr) {
	const every = 10 * time.Second
	now := a.s.Now().UnixNano()
	last := a.lastWarn.Load()
	if last != 0 && now-last < int64(every) || !a.lastWarn.CompareAndSwap(last, now) {
		a.quiet.Add(1)
		return
	}
	if n := a.quiet.Swap(0); n > 0 {
		attrs = append(attrs, slog.Int64(logSuppressed, n))
	}
	a.s.Logger.LogAttrs(context.Background(), slog.LevelWarn, msg, attrs...)
}

// validate returns the identity of a token, from the cache or by checking
// it. Concurrent requests with the same token share one check.
func (a *Authenticator) validate(ctx context.Context, token string) (*Identity, *tokenError) {
	key := sha256.Sum256([]byte(token))
	if e, ok := a.cache.get(key, a.s.Now()); ok {
		if e.id == nil {
			return nil, inactive()
		}
		return e.id, nil
	}
	v, _, _ := a.sf.Do(string(key[:]), func() (any, error) {
		// The check outlives a cancelled first request: others may be
		// waiting for it. The HTTP client's timeout bounds it.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultHTTPTimeout)
		defer cancel()
		id, terr := a.check(cctx, token)
		now := a.s.Now()
		switch {
		case terr == nil:
			until := now.Add(a.s.CacheTTL)
			if !id.Expiry.IsZero() && id.Expiry.Add(a.s.Leeway).Before(until) {
				until = id.Expiry.Add(a.s.Leeway)
			}
			a.cache.put(key, cacheEntry{id: id, until: until})
		case terr.negative:
			a.cache.put(key, cacheEntry{until: now.Add(a.s.NegativeTTL)})
		}
		return result{id, terr}, nil
	})
	res := v.(result)
	return res.id, res.err
}

type result struct {
	id  *Identity
	err *tokenError
}

// check validates a token the cache does not know: as a JWT when it is one
// and keys are configured or discoverable, else by introspection.
func (a *Authenticator) check(ctx context.Context, token string) (*Identity, *tokenError) {
	switch {
	case a.s.useJWT && looksLikeJWT(token):
		return a.checkJWT(ctx, token)
	case a.s.useIntro:
		return a.checkIntrospected(ctx, token)
	}
	return nil, invalid("the token is not a JWT, and the gateway validates JWT access tokens only (no introspection is configured)", nil)
}

type identityCtxKey struct{}

// Middleware returns a handler that authenticates each request (see
// [Authenticator.Authenticate]), writes the refusal when there is one, and
// otherwise calls next with the identity in the request's context, both
// for [IdentityFromContext] and as the MCP SDK's auth.TokenInfo, which
// binds a streamable-HTTP session to its user.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	sdk := auth.RequireBearerToken(func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		id, _ := r.Context().Value(identityCtxKey{}).(*Identity)
		if id == nil {
			return nil, auth.ErrInvalidToken
		}
		return id.TokenInfo(), nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true, ClockSkew: a.s.Leeway})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, refusal := a.Authenticate(r)
		if refusal != nil {
			refusal.Write(w)
			return
		}
		sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), identityCtxKey{}, id)))
	})
}

// IdentityFromContext returns the identity [Authenticator.Middleware] put
// in a request's context, or the one carried by the SDK's TokenInfo there.
func IdentityFromContext(ctx context.Context) *Identity {
	if id, ok := ctx.Value(identityCtxKey{}).(*Identity); ok {
		return id
	}
	return FromTokenInfo(auth.TokenInfoFromContext(ctx))
}

// cacheEntry is a checked token: its identity (nil when the authorization
// server called it inactive) and until when the answer holds.
type cacheEntry struct {
	id    *Identity
	until time.Time
}

// tokenCache holds checked tokens by the SHA-256 of the token, so that the
// tokens themselves are not kept; it is size-bounded (least recently used
// out first).
type tokenCache struct {
	lru *lru.Cache[[32]byte, cacheEntry]
}

func (c *tokenCache) get(key [32]byte, now time.Time) (cacheEntry, bool) {
	e, ok := c.lru.Get(key)
	if !ok {
		return cacheEntry{}, false
	}
	if !now.Before(e.until) {
		c.lru.Remove(key)
		return cacheEntry{}, false
	}
	return e, true
}

func (c *tokenCache) put(key [32]byte, e cacheEntry) { c.lru.Add(key, e) }

func (c *tokenCache) purge() { c.lru.Purge() }
