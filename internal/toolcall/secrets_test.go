package toolcall_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// TestSetSecrets: secrets the engine is told besides the configuration's
// (the OAuth tokens of signed-in servers) are redacted from the history
// and from results of servers that redact, and stay known across a
// configuration change until replaced.
func TestSetSecrets(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, func(c *config.Config) { c.Servers[0].RedactResults = true })
	const token = "oauth-access-token-4f1d9c"
	req := toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "got " + token}}
	f.eng.SetSecrets([]string{token})
	res, err := f.eng.Call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(res); strings.Contains(got, token) {
		t.Errorf("result: got %q, want the token redacted", got)
	}
	for _, r := range f.rec.all() {
		if strings.Contains(string(r.Args), token) || strings.Contains(r.ErrorMessage, token) {
			t.Errorf("the history record shows the token: %+v", r)
		}
	}
	next := f.nextConfig()
	if err := f.eng.SetConfig(next); err != nil {
		t.Fatal(err)
	}
	if got := f.eng.Redactor().String("x " + token); strings.Contains(got, token) {
		t.Errorf("after SetConfig: got %q, want the token still redacted", got)
	}
	f.eng.SetSecrets(nil)
	if got := f.eng.Redactor().String("x " + token); !strings.Contains(got, token) {
		t.Errorf("after SetSecrets(nil): got %q, want the old token no longer known", got)
	}
}
