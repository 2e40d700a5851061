package daemon

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lateErrorServer is a go-sdk server whose prompt "late" reports progress
// (when asked for it) and then fails with invalid params (-32602): an
// error answered after the request's event stream began.
func lateErrorServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "late-error", Version: "1"}, nil)
	s.AddPrompt(&mcp.Prompt{Name: "late"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half way"}); err != nil {
				return nil, err
			}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the prompt takes no gadget"}
	})
	return s
}

// getLatePrompt connects a go-sdk client over tr, gets prompt (asking
// for progress), and returns the protocol version it negotiated, the
// progress it was sent before the answer, and the error it got.
func getLatePrompt(t *testing.T, tr mcp.Transport, prompt string) (version string, progress []string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan string, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			got <- req.Params.Message
		}})
	cs, cerr := c.Connect(ctx, tr, nil)
	if cerr != nil {
		t.Fatalf("connecting: %v", cerr)
	}
	defer cs.Close()
	eventually(t, "the prompt is listed", func() bool {
		res, err := cs.ListPrompts(ctx, nil)
		return err == nil && len(res.Prompts) == 1
	})
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt, Meta: mcp.Meta{"progressToken": "p-1"}})
	// The progress went first on the stream; its handler runs on a
	// goroutine of its own.
	select {
	case m := <-got:
		progress = append(progress, m)
	case <-ctx.Done():
	}
	return cs.InitializeResult().ProtocolVersion, progress, err
}

// TestAnErrorAfterProgressReachesANewClient: on protocol 2026-07-28 the
// go-sdk's streamable server gives an error of code -32601, -32602, -32021
// or -32022 an HTTP status (SEP-2575); one answered after progress began
// the request's event stream it writes into the stream as plain JSON, and
// its client reads "request terminated without response" — directly, from
// a stateless go-sdk server. A client of a stateless gateway (on that
// version) whose request's server answers so after progress gets the
// progress and then the error, code and message, as an event of the
// stream (gateway/lateerror.go); and so it does when its server is such
// a go-sdk server, whose stray error the gateway's upstream client reads
// (upstream/lateerror.go).
func TestAnErrorAfterProgressReachesANewClient(t *testing.T) {
	t.Parallel()
	direct := serveHTTP(t, lateErrorServer(), &mcp.StreamableHTTPOptions{Stateless: true})
	version, progress, err := getLatePrompt(t, &mcp.StreamableClientTransport{Endpoint: direct, MaxRetries: -1}, "late")
	if version != "2026-07-28" || len(progress) != 1 || err == nil || !strings.Contains(err.Error(), "request terminated without response") {
		t.Errorf("directly: negotiated %s, got progress %q and error %v; want 2026-07-28, the progress, and the go-sdk's lost error "+
			"(if the go-sdk now sends it, gateway/lateerror.go and upstream/lateerror.go can go)", version, progress, err)
	}

	// The server's own leg is on 2025-11-25 (a stateful go-sdk server), so
	// the gateway gets its error; its client's leg is on 2026-07-28.
	s := httpUpstream("late", serveHTTP(t, lateErrorServer(), nil))
	s.NoIdentityMeta = true
	cfg := testConfig(s)
	cfg.Gateway.Stateless = true
	r := start(t, cfg)
	version, progress, err = getLatePrompt(t, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1}, "late__late")
	if version != "2026-07-28" {
		t.Errorf("through the gateway the client negotiated %s; want 2026-07-28, the case this test is about", version)
	}
	if len(progress) != 1 || progress[0] != "half way" {
		t.Errorf("through the gateway the client got progress %q; want [\"half way\"] before the answer", progress)
	}
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || werr.Message != "the prompt takes no gadget" {
		t.Errorf("through the gateway prompts/get failed with %v; want the server's -32602 \"the prompt takes no gadget\"", err)
	}

	// The server itself on 2026-07-28 (stateless): it loses the error on
	// the gateway's leg as it does directly; the gateway reads it all the
	// same (upstream/lateerror.go).
	s = httpUpstream("late", direct)
	s.NoIdentityMeta = true
	cfg = testConfig(s)
	cfg.Gateway.Stateless = true
	r = start(t, cfg)
	_, progress, err = getLatePrompt(t, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1}, "late__late")
	if len(progress) != 1 || !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || werr.Message != "the prompt takes no gadget" {
		t.Errorf("through the gateway from a server on 2026-07-28: progress %q, error %v; want the progress, then the server's -32602 \"the prompt takes no gadget\"", progress, err)
	}
}
