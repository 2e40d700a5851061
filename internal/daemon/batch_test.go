package daemon

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A JSON-RPC batch (protocol 2025-03-26, which a request without
// Mcp-Protocol-Version speaks) of more than gateway.max_batch messages is
// refused, naming the key; without the bound one post of 38,000 calls had
// the daemon serve them all at once (1 GB, 20,000 goroutines).
func TestBatchLimit(t *testing.T) {
	t.Parallel()
	cfg := testConfig(okHTTPServer(t, "alpha"))
	cfg.Gateway.MaxBatch = 3
	r := start(t, cfg)
	s := newRawSession(t, r.url+"/mcp", nil)
	batch := func(n int) (int, string) {
		t.Helper()
		var parts []string
		for i := range n {
			parts = append(parts, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+10))
		}
		return postBody(t, r.url+"/mcp", strings.NewReader("["+strings.Join(parts, ",")+"]"), http.Header{
			"Mcp-Session-Id": {s.id}, "Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}})
	}
	if code, body := batch(3); code != http.StatusOK || strings.Count(body, `"result"`) != 3 {
		t.Errorf("a batch of 3: got %d %s, want 200 with 3 answers", code, body)
	}
	code, body := batch(4)
	if code != http.StatusBadRequest {
		t.Errorf("a batch of 4: got %d %s, want 400", code, body)
	}
	if _, rpcCode, msg := rpcError(t, body); rpcCode != -32600 || !strings.Contains(msg, "the batch has 4 messages, over gateway.max_batch (3)") {
		t.Errorf("a batch of 4: got %d %q, want -32600 naming gateway.max_batch", rpcCode, msg)
	}
}
