package tokenauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/sync/singleflight"
)

// maxDocumentBytes bounds what is read of a key set, a metadata document
// or an introspection response.
const maxDocumentBytes = 1 << 20

// errRateLimited says that the key set was fetched too recently to fetch it
// again for a request.
var errRateLimited = errors.New("the key set was fetched moments ago")

// keyIndex is one fetched key set, indexed for lookups.
type keyIndex struct {
	byKID   map[string][]jose.JSONWebKey
	all     []jose.JSONWebKey // every usable signing key
	fetched time.Time
}

// keySet is the authorization server's signing keys: fetched on first use
// and by Run, and again — at most once per KeysMinInterval — when a token
// names a key id the set lacks.
type keySet struct {
	a     *Authenticator
	index atomic.Pointer[keyIndex]
	sf    singleflight.Group

	mu          sync.Mutex
	lastAttempt time.Time // of any fetch
	lastErr     error     // of the last fetch
	inflight    bool      // a fetch is under way
}

// forToken returns the keys that may have signed a token with the given
// key id (possibly empty) and algorithm. It fetches the set when it has
// none yet, or when the key id is unknown and the rate limit allows.
func (k *keySet) forToken(ctx context.Context, kid, alg string) ([]jose.JSONWebKey, *tokenError) {
	idx := k.index.Load()
	if idx == nil {
		if err := k.refresh(ctx, "first use", false); err != nil {
			return nil, unavailable("the authorization server's signing keys are not available", k.cause(err))
		}
		idx = k.index.Load()
	}
	if keys := idx.candidates(kid, alg); len(keys) > 0 {
		return keys, nil
	}
	if kid == "" {
		return nil, invalid(fmt.Sprintf("the token names no key id and no %s key of the authorization server fits it", alg), nil)
	}
	if len(idx.byKID[kid]) > 0 {
		// The key is published, for another algorithm or for encryption:
		// refetching would not change that.
		return nil, invalid(fmt.Sprintf("the key the token names is not a signing key for %s", alg), nil)
	}
	switch err := k.refresh(ctx, "unknown key id", false); {
	case errors.Is(err, errRateLimited):
		return nil, invalid("the token is signed with a key the authorization server does not publish (unknown key id)", nil)
	case err != nil:
		return nil, unavailable("the authorization server's signing keys could not be refetched for a new key id", err)
	}
	if keys := k.index.Load().candidates(kid, alg); len(keys) > 0 {
		return keys, nil
	}
	return nil, invalid("the token is signed with a key the authorization server does not publish (unknown key id)", nil)
}

// cause returns err, or the last fetch's error when err only says the
// fetch was rate limited.
func (k *keySet) cause(err error) error {
	if errors.Is(err, errRateLimited) {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.lastErr != nil {
			return k.lastErr
		}
	}
	return err
}

// candidates returns the keys of the set that fit a token's key id and
// algorithm: signing keys of the algorithm's type, with the key id when
// the token names one.
func (idx *keyIndex) candidates(kid, alg string) []jose.JSONWebKey {
	pool := idx.all
	if kid != "" {
		pool = idx.byKID[kid]
	}
	var out []jose.JSONWebKey
	for _, key := range pool {
		if fits(key, alg) {
			out = append(out, key)
		}
	}
	return out
}

// fits reports whether key can verify a signature made with alg.
func fits(key jose.JSONWebKey, alg string) bool {
	if key.Algorithm != "" && key.Algorithm != alg {
		return false
	}
	switch pub := key.Key.(type) {
	case *rsa.PublicKey:
		return alg[0] == 'R' || alg[0] == 'P'
	case *ecdsa.PublicKey:
		switch alg {
		case "ES256":
			return pub.Curve == elliptic.P256()
		case "ES384":
			return pub.Curve == elliptic.P384()
		case "ES512":
			return pub.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// refresh fetches the key set. Unless force is set, it does not start a
// fetch (and returns errRateLimited) when one started less than
// KeysMinInterval ago; it joins a fetch in progress, so that a request
// arriving while Run loads the set waits for it rather than failing.
// Concurrent callers share one fetch.
func (k *keySet) refresh(ctx context.Context, reason string, force bool) error {
	s := k.a.s
	recent := func() bool {
		return !k.lastAttempt.IsZero() && s.Now().Sub(k.lastAttempt) < s.KeysMinInterval
	}
	k.mu.Lock()
	limited := !force && !k.inflight && recent()
	k.mu.Unlock()
	if limited {
		return errRateLimited
	}
	_, err, _ := k.sf.Do("keys", func() (any, error) {
		k.mu.Lock()
		if !force && recent() {
			// The fetch this caller meant to join ended just before:
			// its result stands.
			err := k.lastErr
			k.mu.Unlock()
			return nil, err
		}
		k.lastAttempt, k.inflight = s.Now(), true
		k.mu.Unlock()
		// Requests come here with a context detached from their client
		// (validate), so one client going away does not fail the fetch
		// others wait for; Run's cancellation does end it.
		fctx, cancel := context.WithTimeout(ctx, DefaultHTTPTimeout)
		defer cancel()
		err := k.fetch(fctx, reason)
		k.mu.Lock()
		k.lastErr, k.inflight = err, false
		k.mu.Unlock()
		return nil, err
	})
	return err
}

// fetch gets the key set and replaces the index.
func (k *keySet) fetch(ctx context.Context, reason string) error {
	a := k.a
	url, err := a.jwksURL(ctx)
	if err != nil {
		a.s.Logger.Warn("oauth: cannot find the authorization server's signing keys", slog.String(logIssuer, a.s.Issuer), slog.String(logError, err.Error()))
		return err
	}
	idx, skipped, err := a.getKeys(ctx, url)
	if err != nil {
		err = fmt.Errorf("fetching the signing keys from %s: %w", url, err)
		a.s.Logger.Warn("oauth: cannot fetch the authorization server's signing keys; tokens signed with keys not yet fetched are refused",
			slog.String(logReason, reason), slog.String(logError, err.Error()))
		return err
	}
	idx.fetched = a.s.Now()
	old := k.index.Swap(idx)
	if skipped > 0 {
		a.s.Logger.Debug("oauth: keys in the key set that cannot verify signatures were ignored", slog.Int(logCount, skipped), slog.String(logURL, url))
	}
	if old == nil || !sameKIDs(old, idx) {
		a.s.Logger.Info("oauth: signing keys loaded", slog.String(logURL, url), slog.Int(logCount, len(idx.all)), slog.String(logReason, reason))
	}
	if old != nil && removedKey(old, idx) {
		// A key the server withdrew may have been compromised: trust no
		// token checked with it.
		a.cache.purge()
	}
	return nil
}

// getKeys fetches and indexes a JWK set (RFC 7517 §5). Keys that cannot
// verify signatures here (encryption keys, symmetric keys, unknown types)
// are skipped and counted, rather than failing the whole set.
func (a *Authenticator) getKeys(ctx context.Context, url string) (*keyIndex, int, error) {
	body, err := a.get(ctx, url)
	if err != nil {
		return nil, 0, err
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, 0, fmt.Errorf("the key set is not JSON: %w", err)
	}
	idx := &keyIndex{byKID: map[string][]jose.JSONWebKey{}}
	skipped := 0
	for _, raw := range doc.Keys {
		var key jose.JSONWebKey
		if err := key.UnmarshalJSON(raw); err != nil || !key.Valid() {
			skipped++
			continue
		}
		key = key.Public()
		if !key.Valid() || (key.Use != "" && key.Use != "sig") {
			skipped++
			continue
		}
		switch key.Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		default:
			skipped++
			continue
		}
		idx.all = append(idx.all, key)
		idx.byKID[key.KeyID] = append(idx.byKID[key.KeyID], key)
	}
	if len(idx.all) == 0 {
		return nil, skipped, fmt.Errorf("the key set has no signing key (%d keys, none usable)", len(doc.Keys))
	}
	return idx, skipped, nil
}

func sameKIDs(a, b *keyIndex) bool {
	if len(a.byKID) != len(b.byKID) {
		return false
	}
	for kid := range a.byKID {
		if _, ok := b.byKID[kid]; !ok {
			return false
		}
	}
	return true
}

// removedKey reports whether a key of old is missing from next.
func removedKey(old, next *keyIndex) bool {
	for _, key := range old.all {
		if !slices.ContainsFunc(next.byKID[key.KeyID], func(k jose.JSONWebKey) bool {
			return k.Key != nil && publicEqual(k.Key, key.Key)
		}) {
			return true
		}
	}
	return false
}

// publicEqual compares two public keys (each crypto public key type has
// Equal).
func publicEqual(x, y crypto.PublicKey) bool {
	e, ok := x.(interface{ Equal(crypto.PublicKey) bool })
	return ok && e.Equal(y)
}

// get fetches a document from the authorization server, bounded in size.
func (a *Authenticator) get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	res, err := a.s.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxDocumentBytes))
		return nil, &statusError{Status: res.StatusCode}
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxDocumentBytes {
		return nil, fmt.Errorf("the document is over %d bytes", maxDocumentBytes)
	}
	return body, nil
}

// statusError is an HTTP answer other than the one expected.
type statusError struct{ Status int }

func (e *statusError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
}
