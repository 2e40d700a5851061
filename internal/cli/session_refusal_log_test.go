package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSessionRefusalsLogOnceThenACount opens sessions in a loop past
// gateway.max_sessions, as an unfriendly client would: the log has one
// WARN for the first refusal, naming the limit and the client's address,
// and then one count, not a WARN per refused request.
func TestSessionRefusalsLogOnceThenACount(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	cfg := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(cfg, []byte("gateway:\n  listen: 127.0.0.1:0\n  max_sessions: 1\nservers: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- mainIn(t, ctx, &out, &errb, "serve", "--config", cfg) }()
	var base string
	eventuallyCLI(t, 30*time.Second, "serve to say where the gateway is", func() bool {
		m := reGatewayBase.FindStringSubmatch(out.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	})
	const n = 200
	codes := map[int]int{}
	for i := range n {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`, i)
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("initialize %d: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes[resp.StatusCode]++
	}
	if codes[http.StatusOK] != 1 || codes[http.StatusServiceUnavailable] != n-1 {
		t.Fatalf("status codes of %d initializes with max_sessions 1: got %v, want one 200 and the rest 503", n, codes)
	}
	cancel() // the count is logged at shutdown, if its interval has not passed
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	log := errb.String()
	first := regexp.MustCompile(`level=WARN msg="refused a client session over a limit[^"]*" limit=gateway\.max_sessions client=127\.0\.0\.1 view=\S+`)
	count := regexp.MustCompile(`level=WARN msg="refused more client sessions over a limit" limit=gateway\.max_sessions client=127\.0\.0\.1 view=\S+ refused=(\d+) during=\S+`)
	if got := len(first.FindAllString(log, -1)); got != 1 {
		t.Errorf("the first refusal's WARN: got %d, want 1; the log:\n%s", got, log)
	}
	total := 0
	for _, m := range count.FindAllStringSubmatch(log, -1) {
		var c int
		fmt.Sscan(m[1], &c)
		total += c
	}
	if total != n-2 {
		t.Errorf("the refusals counted after the first: got %d, want %d; the log:\n%s", total, n-2, log)
	}
	if lines := strings.Count(log, "refused"); lines > 3 {
		t.Errorf("the log has %d lines about %d refusals, want one and a count or two:\n%s", lines, n-1, log)
	}
}
