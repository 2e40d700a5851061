package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// errAuthorizationRefused marks an authorization request the authorization
// server answered itself instead of showing a sign-in page or redirecting:
// it does not know the client or its redirect URI (RFC 6749 §4.1.2.1: the
// one case where it must not redirect), so a browser would show an error
// page and the sign-in would wait for a redirect that never comes.
var errAuthorizationRefused = errors.New("the authorization server refused the sign-in request")

// probeUserAgent is the User-Agent of refusedAuthorization's request, so
// that an authorization server's logs tell it from a person's browser.
const probeUserAgent = "Switchboard (checking the client registration before a sign-in)"

// refusedAuthorization asks the authorization endpoint for authURL as a
// browser would, without following redirects, and returns an error that
// wraps errAuthorizationRefused when it answers 400, or any 4xx naming
// invalid_client or unauthorized_client; nil otherwise (a sign-in page, a
// redirect, an unreachable server: the browser is the judge of those).
func (m *Manager) refusedAuthorization(ctx context.Context, authURL string) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil
	}
	req.Header.Set("Accept", "text/html, application/json;q=0.9")
	req.Header.Set("User-Agent", probeUserAgent)
	hc := *m.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode < 400 || resp.StatusCode >= 500 {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	code, desc := authorizationError(resp.Header.Get("Content-Type"), body)
	if resp.StatusCode != http.StatusBadRequest && code != "invalid_client" && code != "unauthorized_client" {
		return nil
	}
	what := code
	switch {
	case what != "" && desc != "":
		what += " (" + desc + ")"
	case what == "":
		what = desc
	}
	if what == "" {
		return fmt.Errorf("%w: HTTP %d", errAuthorizationRefused, resp.StatusCode)
	}
	return fmt.Errorf("%w: HTTP %d, %s", errAuthorizationRefused, resp.StatusCode, what)
}

// authorizationError reads an authorization endpoint's error answer: an
// OAuth error object (error, error_description), or the first line of a
// plain-text page; HTML gives nothing (its markup says nothing reliable).
func authorizationError(contentType string, body []byte) (code, desc string) {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(body, &e) == nil {
			return printable(e.Error), printable(e.Description)
		}
	case mt == "text/plain":
		line, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
		return "", printable(line)
	}
	return "", ""
}

// printable keeps an answer's words safe to show on one line: at most 200
// characters, control characters dropped.
func printable(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
