package tokenauth_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
)

// FuzzAuthorization sends arbitrary Authorization headers: each must be
// refused with 401 (or, for a JWT shape whose key is unknown, 401 too) and
// nothing may panic.
func FuzzAuthorization(f *testing.F) {
	for _, seed := range []string{
		"", "Bearer", "Bearer x", "bearer  a.b.c", "Basic Zm9vOmJhcg==",
		"Bearer eyJhbGciOiJub25lIn0.e30.", "Bearer eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.e30.c2ln",
		"Bearer ....", "Bearer eyJhbGciOiJFUzI1NiJ9.eyJleHAiOiJub3cifQ.AAAA",
	} {
		f.Add(seed)
	}
	k := newSigningKey(f, "k1")
	clk := newClock()
	as := newAuthServer(f, k)
	a := jwtAuth(f, as, clk, func(o *tokenauth.Options) { o.KeysMinInterval = time.Hour })
	f.Fuzz(func(t *testing.T, header string) {
		req := httptest.NewRequest(http.MethodPost, gatewayURL+"/mcp", nil)
		req.Header["Authorization"] = []string{header}
		id, refusal := a.Authenticate(req)
		if id != nil || refusal == nil {
			t.Fatalf("Authorization %q was accepted as %v", header, id)
		}
		if refusal.Status != http.StatusUnauthorized {
			t.Fatalf("Authorization %q: status %d, want 401 (%v)", header, refusal.Status, refusal)
		}
	})
}

// FuzzClaims signs arbitrary payloads with the authorization server's key,
// so that the claim checks and the mapping to an identity see every shape
// of claims: nothing may panic, and an accepted token must name a user and
// carry this gateway's audience and the issuer.
func FuzzClaims(f *testing.F) {
	now := time.Now().Unix()
	for _, seed := range []string{
		fmt.Sprintf(`{"iss":%q,"aud":%q,"sub":"a","exp":%d,"scope":"mcp:tools"}`, "ISSUER", gatewayURL, now+3600),
		fmt.Sprintf(`{"iss":%q,"aud":[%q,1],"sub":7,"exp":%d,"scp":["mcp:tools",{}],"realm_access":{"roles":"eng ops"}}`, "ISSUER", gatewayURL, now+3600),
		`{"iss":"ISSUER","aud":null,"sub":"","exp":"soon"}`,
		`{"realm_access":[1,2],"groups":{"a":1},"exp":1e308,"nbf":-1}`,
		`[]`, `null`, `"x"`,
	} {
		f.Add([]byte(seed))
	}
	k := newSigningKey(f, "k1")
	clk := newClock()
	as := newAuthServer(f, k)
	a := jwtAuth(f, as, clk, func(o *tokenauth.Options) {
		o.GroupsClaim = "realm_access.roles"
		o.GroupViews = map[string][]string{"eng": {"default"}}
	})
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		payload = []byte(strings.ReplaceAll(string(payload), "ISSUER", as.issuer))
		jws, err := signer.Sign(payload)
		if err != nil {
			t.Skip() // not a payload the signer takes
		}
		tok, err := jws.CompactSerialize()
		if err != nil {
			t.Skip()
		}
		req := httptest.NewRequest(http.MethodPost, gatewayURL+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		id, refusal := a.Authenticate(req)
		if refusal != nil {
			if refusal.Status != http.StatusUnauthorized && refusal.Status != http.StatusForbidden {
				t.Fatalf("status %d for a token with a valid signature: %v", refusal.Status, refusal)
			}
			return
		}
		var c map[string]any
		if err := json.Unmarshal(payload, &c); err != nil {
			t.Fatalf("accepted claims that are not a JSON object: %s", payload)
		}
		if id.User == "" || c["iss"] != as.issuer {
			t.Fatalf("accepted %s as %+v", payload, id)
		}
	})
}
