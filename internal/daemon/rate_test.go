package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// twoUsers is a configuration whose gateway knows alice and bob by their
// tokens.
func twoUsers(t *testing.T) *config.Config {
	cfg := testConfig(okHTTPServer(t, "alpha"))
	cfg.Gateway.Tokens = []config.Token{
		{Name: "alice", User: "alice", Secret: "alice-secret"},
		{Name: "bob", User: "bob", Secret: "bob-secret"},
	}
	return cfg
}

// TestGatewayRateLimited: a call over limits.rate is an error result of
// type rate_limited_error with details.retry_after; other users are not
// affected; the history and the per-user metrics count it.
func TestGatewayRateLimited(t *testing.T) {
	t.Parallel()
	cfg := twoUsers(t)
	// Two calls at once, then one every 10 s.
	cfg.Limits.Rate.PerUser = config.Bucket{PerSecond: 0.1, Burst: 2}
	r := start(t, cfg)
	alice := r.connect(t, "/mcp", bearer("alice-secret"), nil)
	bob := r.connect(t, "/mcp", bearer("bob-secret"), nil)
	waitTools(t, alice, "alpha's tools", has("alpha__echo"))
	echo := map[string]any{"message": "hi"}
	for i := range 2 {
		if res := call(t, alice, "alpha__echo", echo); res.IsError {
			t.Fatalf("alice's call %d: %s", i, textOf(res))
		}
	}
	res := call(t, alice, "alpha__echo", echo)
	if got := errorType(t, res); got != "rate_limited_error" {
		t.Fatalf("alice's third call: error_type %q (%s), want rate_limited_error", got, textOf(res))
	}
	var e struct {
		Message string `json:"message"`
		Details struct {
			RetryAfter float64 `json:"retry_after"`
			Limit      string  `json:"limit"`
		} `json:"details"`
		Suggestions []string `json:"suggestions"`
	}
	if err := json.Unmarshal([]byte(textOf(res)), &e); err != nil {
		t.Fatal(err)
	}
	if e.Details.RetryAfter <= 0 || e.Details.RetryAfter > 10 || e.Details.Limit != "limits.rate.per_user" ||
		!strings.Contains(e.Message, "user alice made more calls than limits.rate.per_user allows") || len(e.Suggestions) == 0 {
		t.Errorf("the error: got %s, want retry_after in (0, 10], the limit, alice and suggestions", textOf(res))
	}
	if res := call(t, bob, "alpha__echo", echo); res.IsError {
		t.Errorf("bob's call while alice is limited: %s", textOf(res))
	}

	r.waitRecords(t, store.CallFilter{Identity: "alice", Limit: 10}, func(recs []store.CallRecord) bool {
		return len(recs) == 3 && recs[0].ErrorKind == "rate_limited" && recs[0].Status == "error"
	})
	req, _ := http.NewRequest("GET", r.url+"/metrics", nil)
	req.Header = bearer("alice-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`switchboard_user_rate_limited_total{user="alice"} 1`,
		`switchboard_user_calls_total{status="success",user="alice"} 2`,
		`switchboard_user_calls_total{status="success",user="bob"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
}

// TestGatewayFairAcrossUsers: while alice floods the gateway with calls
// that wait for the two slots, bob's calls still get through in bounded
// time: a freed slot goes to each waiting user in turn.
func TestGatewayFairAcrossUsers(t *testing.T) {
	cfg := twoUsers(t)
	cfg.Limits.MaxConcurrent = 2
	r := start(t, cfg)
	const flood, hold = 40, 200 // alice's callers; ms each call holds a slot
	aliceSessions := make([]*mcp.ClientSession, 4)
	for i := range aliceSessions {
		aliceSessions[i] = r.connect(t, "/mcp", bearer("alice-secret"), nil)
	}
	bob := r.connect(t, "/mcp", bearer("bob-secret"), nil)
	waitTools(t, bob, "alpha's tools", has("alpha__hold"))
	args := map[string]any{"ms": hold}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for i := range flood {
		cs := aliceSessions[i%len(aliceSessions)]
		wg.Go(func() {
			for ctx.Err() == nil {
				_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__hold", Arguments: args})
			}
		})
	}
	// Once alice's calls fill the queue...
	deadline := time.Now().Add(20 * time.Second)
	for r.d.eng.Stats().Waiting < flood-4 {
		if time.Now().After(deadline) {
			t.Fatalf("alice's calls never queued: %+v", r.d.eng.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// ... each of bob's calls waits about one turn, not for alice's
	// whole queue (19 turns of 200 ms with two slots first come first
	// served).
	const bound = 2 * time.Second
	for i := range 5 {
		start := time.Now()
		res, err := bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__hold", Arguments: args})
		took := time.Since(start)
		if err != nil || res.IsError {
			t.Fatalf("bob's call %d: %v %v", i, err, res)
		}
		if took > bound {
			t.Errorf("bob's call %d took %s behind alice's flood, want under %s", i, took.Round(time.Millisecond), bound)
		}
		t.Logf("bob's call %d took %s", i, took.Round(time.Millisecond))
	}
}
