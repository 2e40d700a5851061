//lint:file-ignore SA1019 the tests exercise logging, deprecated only from protocol 2026-07-28; clients use it today.

package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestGatewayCallSurvivesAClosedStream: the TypeScript SDK's SSE polling
// example closes the call's event stream mid-call (retry: 2 s). Through
// the gateway the call still completes, on the lean path and on the SDK's
// (fast_path: false), and no sooner than the server's retry interval. The
// example sends its progress logs with no related request
// (sendLoggingMessage(params, sessionId)), so the server puts them on its
// standalone stream: the client gets those sent while the call's stream
// was closed on its own standalone stream, as it would directly.
func TestGatewayCallSurvivesAClosedStream(t *testing.T) {
	t.Parallel()
	url := testpeer.StartSSEPolling(t)
	for _, fast := range []bool{true, false} {
		// The two paths side by side: each waits out the server's retry
		// interval, which is the point.
		t.Run(map[bool]string{true: "fast path", false: "SDK path"}[fast], func(t *testing.T) {
			t.Parallel()
			closedStreamCall(t, url, fast)
		})
	}
}

// closedStreamCall is TestGatewayCallSurvivesAClosedStream on one path.
func closedStreamCall(t *testing.T, url string, fast bool) {
	cfg := testConfig(httpUpstream("poll", url))
	cfg.Servers[0].RequestTimeout = 60 * time.Second
	cfg.Gateway.DisableFastPath = !fast
	r := start(t, cfg)
	s := newCapableSession(t, r.url+"/mcp", clientCaps)
	s.waitListed("poll__long-task")
	if resp := s.post(`{"jsonrpc":"2.0","id":"lvl","method":"logging/setLevel","params":{"level":"info"}}`, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("logging/setLevel: HTTP %d", resp.StatusCode)
	}
	standalone := s.openStandalone()
	begin := time.Now()
	msgs := s.exchange(`{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"poll__long-task","arguments":{}}}`, answerAll)
	took := time.Since(begin)
	b, _ := json.Marshal(msgs)
	text := string(b)
	if !strings.Contains(text, "Long task completed successfully!") {
		t.Errorf("fast_path %v: the call's stream has no result: %s", fast, text)
	}
	for _, want := range []string{"Progress: 75% - Almost done (sent while client disconnected)...", "Progress: 100% - Complete!"} {
		if got := standalone.waitFor(want, 15*time.Second); !got {
			t.Errorf("fast_path %v: the client's standalone stream did not get %q (the server sent it on its own); call stream: %s; standalone: %s", fast, want, text, standalone.String())
		}
	}
	if res, _ := msgs[len(msgs)-1]["result"].(map[string]any); res == nil || res["isError"] == true {
		t.Errorf("fast_path %v: the call failed: %s", fast, text)
	}
	if min := 2*time.Second + testpeer.SSEPollingRetry; took < min {
		t.Errorf("fast_path %v: the call took %v, want at least %v (the reconnect came before retry:)", fast, took, min)
	}
}

// TestGatewayCallStreamIDsResume pins what docs/gateway.md says the
// gateway promises as a server: the events of a call's stream carry ids
// (after their event: line, as the SDKs write them), a GET resuming after
// the last of a finished stream gets an event stream with nothing more,
// and one naming a stream the gateway does not keep gets the 400 a go-sdk
// server with an event store gives, rather than a stream that silently
// misses events. A client on 2025-11-25, on both paths (the lean path
// answers a call that sent nothing else as JSON, without ids).
func TestGatewayCallStreamIDsResume(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "hello", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "hello", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
		})
	url := serveHTTP(t, s, nil)
	for _, fast := range []bool{true, false} {
		cfg := testConfig(httpUpstream("h", url))
		cfg.Gateway.DisableFastPath = !fast
		r := start(t, cfg)
		rs := newCapableSession(t, r.url+"/mcp", clientCaps)
		rs.waitListed("h__hello")
		v := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}
		body := readAll(t, rs.post(`{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"h__hello","arguments":{}}}`, v))
		if !strings.Contains(body, `"text":"hi"`) {
			t.Fatalf("fast_path %v: the call failed: %s", fast, body)
		}
		var lastID string
		lines := strings.Split(body, "\n")
		for i, line := range lines {
			if id, ok := strings.CutPrefix(line, "id: "); ok {
				lastID = id
				if i == 0 || !strings.HasPrefix(lines[i-1], "event: ") {
					t.Errorf("fast_path %v: the id %q is not after its event's name: %q", fast, id, body)
				}
			}
			if strings.HasPrefix(line, "retry:") {
				t.Errorf("fast_path %v: the call's stream has %q; docs/gateway.md says the gateway sends no retry:", fast, line)
			}
		}
		if !fast && lastID == "" {
			t.Errorf("fast_path false: the SDK's event stream has no ids: %q", body)
		}
		get := func(lastEventID string) (int, string, string) {
			req, _ := http.NewRequest(http.MethodGet, r.url+"/mcp", nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Session-Id", rs.id)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			req.Header.Set("Last-Event-ID", lastEventID)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, resp.Header.Get("Content-Type"), readAll(t, resp)
		}
		if lastID != "" {
			if code, ct, got := get(lastID); code != http.StatusOK || ct != "text/event-stream" || strings.Contains(got, "data:") {
				t.Errorf("fast_path %v: resuming after the last event of a finished stream: got HTTP %d %s %q, want an empty event stream", fast, code, ct, got)
			}
		}
		if code, _, got := get("0_0"); code != http.StatusBadRequest || !strings.Contains(got, "failed to replay events") {
			t.Errorf("fast_path %v: a GET with an unknown Last-Event-ID: got HTTP %d %q, want 400 \"failed to replay events\"", fast, code, got)
		}
	}
}

// TestGatewayResumedStreamCarriesServerRequests: a go-sdk client whose
// connection to the gateway breaks after the first event of a prompts/get
// (the server's log message) resumes the request's stream with
// Last-Event-ID, and what the server sent on it meanwhile — progress, its
// roots/list request — and after — sampling, elicitation, the answer —
// reaches it there: the prompt completes with the client's answers, as
// from a server with an event store.
func TestGatewayResumedStreamCarriesServerRequests(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(testserver.Server(t, "asks", "requestasks")))
	var mu sync.Mutex
	var seen []string
	note := func(s string) {
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
	}
	c := requestAsksClient(note, mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			note(fmt.Sprint("log: ", req.Params.Data))
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			note("progress: " + req.Params.Message)
		},
	})
	cut := &testpeer.CutTransport{Method: "prompts/get"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", HTTPClient: &http.Client{Transport: cut}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	prompt := ""
	eventually(t, "the prompt is listed", func() bool {
		for p, err := range cs.Prompts(ctx, nil) {
			if err == nil && strings.HasSuffix(p.Name, "ask") {
				prompt = p.Name
			}
		}
		return prompt != ""
	})
	pp := &mcp.GetPromptParams{Name: prompt, Arguments: map[string]string{"key": "P"}}
	pp.SetProgressToken("tok-P")
	res, err := cs.GetPrompt(ctx, pp)
	if err != nil {
		t.Fatalf("prompts/get: %v", err)
	}
	want := `prompt P: roots [file:///client] sampled "answer sample prompt P" elicited form prompt P`
	if got := res.Messages[0].Content.(*mcp.TextContent).Text; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if wasCut, resumed := cut.Resumed(); !wasCut || len(resumed) == 0 {
		t.Fatalf("the prompt's stream was not cut and resumed (cut %v, resumed with %q)", wasCut, resumed)
	}
	eventually(t, "the log message and the progress reached the client", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(seen, "log: log prompt P") && slices.Contains(seen, "progress: progress prompt P")
	})
}
