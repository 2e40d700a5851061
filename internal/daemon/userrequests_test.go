package daemon

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// A user's requests open at once on the MCP endpoints (calls waiting for
// their answers, event streams) are bounded by
// gateway.max_requests_per_user: the next one is answered 429 naming the
// key, another user is still served, and the user is served again once
// a request ends. Without the bound one user could hold as many
// connections as their sessions and calls allowed, all of the gateway's.
func TestRequestsPerUserLimit(t *testing.T) {
	t.Parallel()
	cfg := testConfig(okHTTPServer(t, "alpha"))
	cfg.Gateway.Tokens = []config.Token{
		{Name: "alice", User: "alice", Secret: "alice-token"},
		{Name: "bob", User: "bob", Secret: "bob-token"},
	}
	cfg.Gateway.MaxRequestsPerUser = 2
	r := start(t, cfg)
	waitFor(t, "alpha's tools", func() bool { code, _ := get(t, r.url+"/readyz"); return code == http.StatusOK })
	bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
	alice := newRawSession(t, r.url+"/mcp", bearer("alice-token"))
	bob := newRawSession(t, r.url+"/mcp", bearer("bob-token"))

	// Two slow calls of alice's, open until cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{}, 2)
	dir := t.TempDir()
	for i := range 2 {
		mark := filepath.Join(dir, fmt.Sprint(i))
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"alpha__slow","arguments":{"seconds":30,"mark":%q}}}`, 10+i, mark)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", alice.id)
		req.Header.Set("Authorization", "Bearer alice-token")
		go func() {
			defer func() { done <- struct{}{} }()
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		waitFor(t, "alice's slow call to reach its server", func() bool { _, err := os.Stat(mark); return err == nil })
	}

	echo := `{"jsonrpc":"2.0","id":"e","method":"tools/call","params":{"name":"alpha__echo","arguments":{"message":"hi"}}}`
	resp := alice.post(echo, nil)
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("alice's third request: got %d %s, want 429", resp.StatusCode, body)
	}
	if id, code, msg := rpcError(t, body); string(id) != `"e"` || code != -32000 || !strings.Contains(msg, `user "alice" already has 2 requests open`) || !strings.Contains(msg, "gateway.max_requests_per_user") {
		t.Errorf("alice's third request: got id %s, %d %q; want id \"e\", -32000 naming gateway.max_requests_per_user", id, code, msg)
	}
	if resp := bob.post(echo, nil); resp.StatusCode != http.StatusOK || !strings.Contains(readAll(t, resp), `"text":"hi"`) {
		t.Errorf("bob's call beside alice's: got %d, want 200 with the echo", resp.StatusCode)
	}

	// Her slow calls end: she is served again.
	cancel()
	<-done
	<-done
	waitFor(t, "alice to be served again", func() bool {
		resp := alice.post(echo, nil)
		return resp.StatusCode == http.StatusOK && strings.Contains(readAll(t, resp), `"text":"hi"`)
	})
}
