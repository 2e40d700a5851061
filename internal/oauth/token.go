package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// maxTokenResponse bounds what is read of a token endpoint's answer.
const maxTokenResponse = 1 << 20

// client is the OAuth client used with one authorization server.
type client struct {
	ID           string
	Secret       secret
	AuthMethod   string
	Registration string
	// Stored is true for a dynamic registration made by an earlier
	// sign-in, which the authorization server may have forgotten since.
	Stored bool
}

// authStyle maps a token endpoint auth method to x/oauth2's. "none" sends
// client_id in the form and no secret, which is what AuthStyleInParams does
// with an empty secret.
func authStyle(method string) oauth2.AuthStyle {
	if method == AuthMethodBasic {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

// chooseAuthMethod picks the token endpoint auth method of a configured
// client: the configured one, else none for a client without a secret,
// else client_secret_basic where offered (RFC 8414's default when the list
// is absent), else client_secret_post.
func chooseAuthMethod(configured string, hasSecret bool, supported []string) string {
	switch {
	case configured != "":
		return configured
	case !hasSecret:
		return AuthMethodNone
	case len(supported) == 0 || slices.Contains(supported, AuthMethodBasic):
		return AuthMethodBasic
	case slices.Contains(supported, AuthMethodPost):
		return AuthMethodPost
	}
	return AuthMethodBasic
}

// TokenError is an error answer of a token, registration or revocation
// endpoint (RFC 6749 §5.2). It keeps the code and description, never the
// request or the body, so it carries no secret.
type TokenError struct {
	// Endpoint is the URL that answered.
	Endpoint string
	// Status is the HTTP status.
	Status int
	// Code is the error parameter (invalid_grant, invalid_client, ...).
	Code        string
	Description string
}

// Error says what the endpoint answered.
func (e *TokenError) Error() string {
	msg := fmt.Sprintf("%s answered %d", e.Endpoint, e.Status)
	if e.Code != "" {
		msg += " " + e.Code
	}
	if e.Description != "" {
		msg += " (" + e.Description + ")"
	}
	return msg
}

// tokenErrorFrom turns x/oauth2's error into a TokenError, dropping the
// body it keeps.
func tokenErrorFrom(endpoint string, err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return fmt.Errorf("requesting a token from %s: %w", endpoint, err)
	}
	te := &TokenError{Endpoint: endpoint, Code: re.ErrorCode, Description: re.ErrorDescription}
	if re.Response != nil {
		te.Status = re.Response.StatusCode
	}
	return te
}

// tokenResponse is a token endpoint's successful answer (RFC 6749 §5.1).
type tokenResponse struct {
	AccessToken  string      `json:"access_token"`
	TokenType    string      `json:"token_type"`
	RefreshToken string      `json:"refresh_token"`
	ExpiresIn    json.Number `json:"expires_in"`
	Scope        string      `json:"scope"`
	IDToken      string      `json:"id_token"`
}

// postForm sends a form to an authorization server endpoint with the
// client's authentication and returns the body of a 2xx answer.
func postForm(ctx context.Context, hc *http.Client, endpoint string, c client, form url.Values) ([]byte, error) {
	switch c.AuthMethod {
	case AuthMethodBasic:
	case AuthMethodPost:
		form.Set("client_id", c.ID)
		form.Set("client_secret", string(c.Secret))
	default:
		form.Set("client_id", c.ID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if c.AuthMethod == AuthMethodBasic {
		// RFC 6749 §2.3.1: both parts form-encoded before Basic.
		cred := url.QueryEscape(c.ID) + ":" + url.QueryEscape(string(c.Secret))
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(cred)))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		te := &TokenError{Endpoint: endpoint, Status: resp.StatusCode}
		var e struct {
			Code        string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(body, &e) == nil {
			te.Code, te.Description = e.Code, e.Description
		}
		return nil, te
	}
	return body, nil
}

// refreshToken spends a refresh token (RFC 6749 §6) with the resource
// indicator, which x/oauth2's refreshing token source cannot send.
func refreshToken(ctx context.Context, hc *http.Client, endpoint string, c client, refresh, resource string, now time.Time) (*tokenResponse, time.Time, error) {
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {refresh},
	}
	if resource != "" {
		form.Set("resource", resource)
	}
	body, err := postForm(ctx, hc, endpoint, c, form)
	if err != nil {
		return nil, time.Time{}, err
	}
	return decodeToken(endpoint, body, now)
}

// decodeToken reads a token endpoint's JSON answer.
func decodeToken(endpoint string, body []byte, now time.Time) (*tokenResponse, time.Time, error) {
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil {
		return nil, time.Time{}, fmt.Errorf("%s answered with a token response that is not JSON: %w", endpoint, err)
	}
	if tr.AccessToken == "" {
		return nil, time.Time{}, fmt.Errorf("%s answered without an access_token", endpoint)
	}
	var expiry time.Time
	if tr.ExpiresIn != "" {
		if secs, err := tr.ExpiresIn.Int64(); err == nil && secs > 0 {
			expiry = now.Add(time.Duration(secs) * time.Second)
		}
	}
	return &tr, expiry, nil
}

// fromOAuth2 reads what a token endpoint answered through x/oauth2.
func fromOAuth2(t *oauth2.Token) *tokenResponse {
	tr := &tokenResponse{AccessToken: t.AccessToken, TokenType: t.TokenType, RefreshToken: t.RefreshToken}
	if s, ok := t.Extra("scope").(string); ok {
		tr.Scope = s
	}
	if s, ok := t.Extra("id_token").(string); ok {
		tr.IDToken = s
	}
	return tr
}

// clientCredentialsToken gets a token for the client itself (RFC 6749
// §4.4) with the resource indicator. The go-sdk's extauth handler does the
// same but sends no resource and keeps the first request's context for
// later fetches, so x/oauth2's clientcredentials is used directly.
func clientCredentialsToken(ctx context.Context, hc *http.Client, endpoint string, c client, scopes []string, resource string) (*tokenResponse, time.Time, error) {
	cfg := &clientcredentials.Config{
		ClientID:     c.ID,
		ClientSecret: string(c.Secret),
		TokenURL:     endpoint,
		Scopes:       scopes,
		AuthStyle:    authStyle(c.AuthMethod),
	}
	if resource != "" {
		cfg.EndpointParams = url.Values{"resource": {resource}}
	}
	t, err := cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, hc))
	if err != nil {
		return nil, time.Time{}, tokenErrorFrom(endpoint, err)
	}
	return fromOAuth2(t), t.Expiry, nil
}

// revoke asks the authorization server to revoke a token (RFC 7009).
func revoke(ctx context.Context, hc *http.Client, endpoint string, c client, token, hint string) error {
	form := url.Values{"token": {token}}
	if hint != "" {
		form.Set("token_type_hint", hint)
	}
	_, err := postForm(ctx, hc, endpoint, c, form)
	return err
}

// subjectOf returns who an ID token names (email, preferred_username or
// sub), read without verification: it is shown to the person who signed
// in, never trusted.
func subjectOf(idToken string) string {
	parts := strings.Split(idToken, ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Sub      string `json:"sub"`
		Email    string `json:"email"`
		Username string `json:"preferred_username"`
	}
	if json.Unmarshal(payload, &claims) != nil {
		return ""
	}
	for _, s := range []string{claims.Email, claims.Username, claims.Sub} {
		if s != "" {
			return s
		}
	}
	return ""
}
