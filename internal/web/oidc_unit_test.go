package web

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestOIDCSessionEnds: a session signed in at the authorization server
// lasts while the console signs in there, and ends when a reload turns the
// console's sign-in off or changes the issuer; a static token that happens
// to be named "oauth" is not taken for one.
func TestOIDCSessionEnds(t *testing.T) {
	const issuer = "https://login.example.com/realms/team"
	withConsole := func(iss string, console *config.OAuthConsole) *config.Config {
		cfg := config.Default()
		cfg.Gateway.OAuth = &config.OAuth{Resource: "https://mcp.example.com", Issuer: iss, Console: console}
		return cfg
	}
	signedIn := session{authed: true, token: oidcSessionToken, fingerprint: oidcFingerprint(issuer), user: "alice"}
	tokenNamedOAuth := config.Token{Name: "oauth", User: "mallory", Secret: "s3cret"}
	for _, tc := range []struct {
		name string
		se   session
		cfg  *config.Config
		want bool
	}{
		{"console signs in at the issuer", signedIn, withConsole(issuer, &config.OAuthConsole{}), true},
		{"the issuer with a trailing slash", signedIn, withConsole(issuer+"/", &config.OAuthConsole{}), true},
		{"console sign-in turned off", signedIn, withConsole(issuer, nil), false},
		{"another issuer", signedIn, withConsole("https://other.example.com", &config.OAuthConsole{}), false},
		{"gateway.oauth removed", signedIn, config.Default(), true}, // no auth at all: the console is open on loopback
		{"a static token named oauth", session{authed: true, token: "oauth", fingerprint: fingerprint(tokenNamedOAuth), user: "mallory"},
			withConsole(issuer, &config.OAuthConsole{}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := loggedIn(tc.se, tc.cfg); got != tc.want {
				t.Errorf("loggedIn: got %v, want %v", got, tc.want)
			}
		})
	}
}
