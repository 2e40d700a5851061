package tokenauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// checkIntrospected validates an opaque token at the introspection endpoint
// (RFC 7662): it must be active, and — where the response says — issued by
// the configured issuer, for this gateway, and within its lifetime.
func (a *Authenticator) checkIntrospected(ctx context.Context, token string) (*Identity, *tokenError) {
	c, terr := a.introspect(ctx, token)
	if terr != nil {
		return nil, terr
	}
	s := a.s
	now := s.Now()
	if iss, ok := c["iss"].(string); ok && !issuersEqual(iss, s.Issuer) {
		return nil, invalid(fmt.Sprintf("the token was issued by %q, not by the gateway's authorization server", clip(iss)), nil)
	}
	if aud := c.audience(); !a.ownsAudience(aud) {
		return nil, invalid(fmt.Sprintf("the token was issued for %s, not for this gateway (%s)", describeAudience(aud), a.ResourceURL("")), nil)
	}
	exp, hasExp := c.date("exp")
	if hasExp && now.Add(-s.Leeway).After(exp) {
		return nil, invalid("the token has expired", nil)
	}
	if nbf, ok := c.date("nbf"); ok && now.Add(s.Leeway).Before(nbf) {
		return nil, invalid("the token is not valid yet (nbf)", nil)
	}
	id, err := a.identity(c, MethodIntrospection, exp)
	if err != nil {
		return nil, invalid(err.Error(), nil)
	}
	return id, nil
}

// introspect asks the introspection endpoint about a token and returns the
// response's claims when the token is active.
func (a *Authenticator) introspect(ctx context.Context, token string) (claims, *tokenError) {
	in := a.s.Introspection
	endpoint, err := a.introspectionURL(ctx)
	if err != nil {
		return nil, unavailable("the authorization server's introspection endpoint is not known", err)
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	if in.ClientID != "" && in.AuthMethod == "client_secret_post" {
		form.Set("client_id", in.ClientID)
		form.Set("client_secret", in.ClientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, unavailable("the introspection request could not be made", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if in.ClientID != "" && in.AuthMethod != "client_secret_post" {
		// RFC 6749 §2.3.1: the id and secret are form-encoded first.
		req.SetBasicAuth(url.QueryEscape(in.ClientID), url.QueryEscape(in.ClientSecret))
	}
	res, err := a.s.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, unavailable("the request ended before the token was checked", ctx.Err())
		}
		return nil, unavailable("the authorization server's introspection endpoint cannot be reached", fmt.Errorf("introspecting at %s: %w", endpoint, err))
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, unavailable("the introspection response could not be read", fmt.Errorf("reading the response of %s: %w", endpoint, err))
	}
	if len(body) > maxDocumentBytes {
		return nil, unavailable("the introspection response is too large", fmt.Errorf("the response of %s is over %d bytes", endpoint, maxDocumentBytes))
	}
	var c claims
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	jsonErr := dec.Decode(&c)
	active, hasActive := c["active"].(bool)
	switch {
	case res.StatusCode != http.StatusOK && hasActive && !active:
		// RFC 7662 answers 200 with active false; some servers (the
		// TypeScript SDK's demo) answer 4xx with the same body.
		return nil, inactive()
	case res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden:
		return nil, unavailable("the authorization server refused the gateway's introspection request",
			fmt.Errorf("%s answered %s: check the introspection client id and secret", endpoint, res.Status))
	case res.StatusCode != http.StatusOK:
		return nil, unavailable("the authorization server's introspection endpoint failed", fmt.Errorf("%s answered %s", endpoint, res.Status))
	case jsonErr != nil:
		return nil, unavailable("the introspection response is not JSON", fmt.Errorf("decoding the response of %s: %w", endpoint, jsonErr))
	case !hasActive:
		return nil, unavailable("the introspection response has no active field", fmt.Errorf("%s answered without \"active\" (RFC 7662 §2.2)", endpoint))
	case !active:
		return nil, inactive()
	}
	return c, nil
}

func inactive() *tokenError {
	return &tokenError{status: http.StatusUnauthorized, code: "invalid_token", desc: "the token is not active (revoked, expired or unknown to the authorization server)", negative: true}
}
