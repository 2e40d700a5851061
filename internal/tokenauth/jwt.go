package tokenauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// looksLikeJWT reports whether a token has the shape of a JWS in compact
// form: three dot-separated parts, the first a JSON header naming an alg.
func looksLikeJWT(token string) bool {
	if strings.Count(token, ".") != 2 {
		return false
	}
	_, ok := headerAlg(token)
	return ok
}

// headerAlg decodes the alg of a compact JWS's header, unverified: for
// choosing the path and for messages only.
func headerAlg(token string) (string, bool) {
	head, _, _ := strings.Cut(token, ".")
	if len(head) > 4096 {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return "", false
	}
	var h struct {
		Alg *string `json:"alg"`
	}
	if json.Unmarshal(raw, &h) != nil || h.Alg == nil {
		return "", false
	}
	return *h.Alg, true
}

// checkJWT validates a JWT access token: signature (go-jose, with the
// allowed algorithms and the authorization server's keys), issuer,
// audience, and exp, nbf and iat with the leeway; then maps its claims.
func (a *Authenticator) checkJWT(ctx context.Context, token string) (*Identity, *tokenError) {
	s := a.s
	tok, err := jwt.ParseSigned(token, a.algs)
	if err != nil {
		if alg, ok := headerAlg(token); ok && !slices.Contains(s.algorithms, alg) {
			return nil, invalid(fmt.Sprintf("the token is signed with %q, which the gateway does not accept (it accepts %s)", clip(alg), strings.Join(s.algorithms, ", ")), err)
		}
		return nil, invalid("the token is not a well-formed signed JWT", err)
	}
	if len(tok.Headers) != 1 {
		return nil, invalid("the token does not have exactly one signature", nil)
	}
	h := tok.Headers[0]
	keys, terr := a.keys.forToken(ctx, h.KeyID, h.Algorithm)
	if terr != nil {
		return nil, terr
	}
	var std jwt.Claims
	var c claims
	verified := false
	for _, key := range keys {
		err = tok.Claims(key.Key, &std, &c)
		if err == nil {
			verified = true
			break
		}
		if !errors.Is(err, jose.ErrCryptoFailure) {
			return nil, invalid("the token's claims are malformed", err)
		}
	}
	if !verified {
		return nil, invalid("the token's signature does not verify", err)
	}
	if !issuersEqual(std.Issuer, s.Issuer) {
		return nil, invalid(fmt.Sprintf("the token was issued by %q, not by the gateway's authorization server", clip(std.Issuer)), nil)
	}
	if !a.ownsAudience(std.Audience) {
		return nil, invalid(fmt.Sprintf("the token was issued for %s, not for this gateway (%s)", describeAudience(std.Audience), a.ResourceURL("")), nil)
	}
	if std.Expiry == nil {
		return nil, invalid("the token has no expiry (exp)", nil)
	}
	switch err := std.ValidateWithLeeway(jwt.Expected{Time: s.Now()}, s.Leeway); {
	case errors.Is(err, jwt.ErrExpired):
		return nil, invalid("the token has expired", err)
	case errors.Is(err, jwt.ErrNotValidYet):
		return nil, invalid("the token is not valid yet (nbf)", err)
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, invalid("the token is issued in the future (iat)", err)
	case err != nil:
		return nil, invalid("the token's claims do not validate", err)
	}
	id, err := a.identity(c, MethodJWT, std.Expiry.Time())
	if err != nil {
		return nil, invalid(err.Error(), nil)
	}
	return id, nil
}

// ownsAudience reports whether an aud claim names this gateway: its base
// URL, the base URL followed by an endpoint path, or a configured audience
// (a trailing slash aside, as oauthex.MatchesResource allows).
func (a *Authenticator) ownsAudience(aud []string) bool {
	base := a.ResourceURL("")
	for _, v := range aud {
		v = strings.TrimSuffix(v, "/")
		if v == base {
			return true
		}
		if rest, ok := strings.CutPrefix(v, base); ok {
			if _, isEndpoint := endpointView(rest); isEndpoint {
				return true
			}
		}
		for _, extra := range a.s.Audiences {
			if v == strings.TrimSuffix(extra, "/") {
				return true
			}
		}
	}
	return false
}

// describeAudience names an aud claim for a message, shortened: it comes
// from the client.
func describeAudience(aud []string) string {
	const most = 3
	switch len(aud) {
	case 0:
		return "no audience (aud)"
	case 1:
		return fmt.Sprintf("%q", clip(aud[0]))
	}
	shown := make([]string, 0, most)
	for _, a := range aud[:min(len(aud), most)] {
		shown = append(shown, fmt.Sprintf("%q", clip(a)))
	}
	if len(aud) > most {
		shown = append(shown, fmt.Sprintf("and %d more", len(aud)-most))
	}
	return strings.Join(shown, ", ")
}

// clip shortens a value from a token for a message.
func clip(s string) string {
	const most = 100
	if len(s) <= most {
		return s
	}
	return s[:most] + "..."
}
