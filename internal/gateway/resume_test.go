package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestCallStreamResumes checks that a go-sdk client whose connection
// breaks mid-call resumes the call's stream with Last-Event-ID and gets
// the rest of it — the progress it missed, then the progress and result
// sent after it came back — on both call paths.
func TestCallStreamResumes(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast_path=%v", fast), func(t *testing.T) {
			r := newRig(t, map[string]string{"alpha": "ok"}, fmt.Sprintf("gateway:\n  fast_path: %v\n", fast))
			var mu sync.Mutex
			var progress []string
			c := mcp.NewClient(&mcp.Implementation{Name: "resume", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					progress = append(progress, req.Params.Message)
					mu.Unlock()
				},
			})
			cut := &testpeer.CutTransport{Method: "tools/call"}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.srv.URL + "/mcp", HTTPClient: &http.Client{Transport: cut}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cs.Close() }()
			// Six steps of 300 ms: the client, cut after the first, comes
			// back after its 1 s backoff, when some steps are stored and
			// some are still to come.
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__stream", Arguments: map[string]any{"steps": 6, "step_ms": 300},
				Meta: mcp.Meta{"progressToken": "resume-token"}})
			if err != nil {
				t.Fatalf("the call failed: %v", err)
			}
			if got := resultText(t, res); got != "streamed 6 steps" {
				t.Errorf("got result %q, want %q", got, "streamed 6 steps")
			}
			if wasCut, resumed := cut.Resumed(); !wasCut || len(resumed) == 0 {
				t.Fatalf("the call's stream was not cut and resumed (cut %v, resumed with %q)", wasCut, resumed)
			}
			// Progress notifications are handled asynchronously by the
			// client: wait for all six.
			want := []string{"step 1 of 6", "step 2 of 6", "step 3 of 6", "step 4 of 6", "step 5 of 6", "step 6 of 6"}
			deadline := time.Now().Add(10 * time.Second)
			for {
				mu.Lock()
				got := slices.Clone(progress)
				mu.Unlock()
				slices.Sort(got)
				if slices.Equal(got, want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("got progress %q, want each of %q once", got, want)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// TestCallStreamResumesTSClient checks the same with the TypeScript SDK's
// client, whose connection goes through a proxy that breaks it after the
// call's first event.
func TestCallStreamResumesTSClient(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast_path=%v", fast), func(t *testing.T) {
			r := newRig(t, map[string]string{"alpha": "ok"}, fmt.Sprintf("gateway:\n  fast_path: %v\n", fast))
			cut := &testpeer.CutTransport{Method: "tools/call"}
			proxy := cut.Proxy(t, r.srv.URL)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			lines, err := testpeer.RunTSClient(t, ctx, testpeer.TSClientInput{
				Target: testpeer.TSTarget{Transport: "http", URL: proxy + "/mcp"},
				Steps: []testpeer.TSStep{{"op": "call", "name": "alpha__stream", "arguments": map[string]any{"steps": 6, "step_ms": 300},
					"progress": true, "timeout_ms": 15000}},
			})
			if err != nil {
				t.Fatal(err)
			}
			call := lines[1]
			if !call.OK() || call.Text() != "streamed 6 steps" {
				t.Fatalf("the call: ok %v, text %q, error %v; want %q", call.OK(), call.Text(), call.Err(), "streamed 6 steps")
			}
			var progress []struct {
				Message string `json:"message"`
			}
			if err := call.Field("progress", &progress); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range progress {
				got = append(got, p.Message)
			}
			if want := []string{"step 1 of 6", "step 2 of 6", "step 3 of 6", "step 4 of 6", "step 5 of 6", "step 6 of 6"}; !slices.Equal(got, want) {
				t.Errorf("got progress %q, want %q", got, want)
			}
			if wasCut, resumed := cut.Resumed(); !wasCut || len(resumed) == 0 {
				t.Errorf("the call's stream was not cut and resumed (cut %v, resumed with %q)", wasCut, resumed)
			}
		})
	}
}

// TestResumeUnknownStream checks that a GET whose Last-Event-ID names no
// stream the gateway keeps gets the error a go-sdk server with an event
// store gives (400 "failed to replay events"), as a JSON-RPC error.
func TestResumeUnknownStream(t *testing.T) {
	r := newRig(t, map[string]string{"alpha": "ok"}, "")
	session := rawSession(t, r.srv.URL+"/mcp")
	req, err := http.NewRequest(http.MethodGet, r.srv.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = session.Clone()
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("Last-Event-ID", "NOSUCHSTREAM_3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &e) != nil || e.Error.Code != -32600 ||
		!strings.Contains(e.Error.Message, "failed to replay events") {
		t.Errorf("got HTTP %d %s, want 400 with a -32600 error saying %q", resp.StatusCode, body, "failed to replay events")
	}
}
