package oauth

import (
	"net/http"
	"slices"
	"testing"
)

// FuzzChallenge: any WWW-Authenticate header parses without panicking, and
// the scopes chosen from it hold no empty or repeated scope.
func FuzzChallenge(f *testing.F) {
	f.Add(`Bearer resource_metadata="https://x.example/.well-known/oauth-protected-resource", scope="a b"`)
	f.Add(`Bearer error="insufficient_scope", scope="admin", Basic realm="x"`)
	f.Add(`Bearer scope=" a  a b "`)
	f.Add(`Bearer realm="x\"y", scope=`)
	f.Fuzz(func(t *testing.T, header string) {
		ch := parseChallenge(http.Header{"Www-Authenticate": {header}})
		got := selectScopes(nil, ch.Scopes, []string{"r"}, []string{"g"}, nil, []string{"offline_access"}, true)
		seen := map[string]bool{}
		for _, s := range got {
			if s == "" || seen[s] {
				t.Fatalf("selectScopes(%q) = %q: empty or repeated scope", header, got)
			}
			seen[s] = true
		}
		if !slices.Contains(got, "g") || !slices.Contains(got, "offline_access") {
			t.Fatalf("selectScopes(%q) = %q: lost the granted scope or offline_access", header, got)
		}
	})
}
