package daemon

//lint:file-ignore SA1019 elicitation is deprecated only from protocol 2026-07-28; clients use it today.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// urlClient is a go-sdk client of the gateway that declares elicitation
// in the given modes and records the notifications/elicitation/complete
// it gets.
func (r *running) urlClient(t *testing.T, modes ...string) (*mcp.ClientSession, chan string) {
	t.Helper()
	completed := make(chan string, 4)
	caps := &mcp.ElicitationCapabilities{}
	for _, m := range modes {
		switch m {
		case "form":
			caps.Form = &mcp.FormElicitationCapabilities{}
		case "url":
			caps.URL = &mcp.URLElicitationCapabilities{}
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "url-client", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: caps},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			completed <- req.Params.ElicitationID
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, completed
}

// TestURLElicitationRequiredThroughTheGateway: a go-sdk server answers
// -32042 until its completion URL is fetched. A go-sdk client of the
// gateway gets that error unchanged (code, message, data with the id and
// the URL), fetches the URL, gets the upstream's
// notifications/elicitation/complete, and calls again successfully — on
// a shared upstream session and a per_client one, on the gateway's own
// call path and through the SDK's (fast_path: false).
func TestURLElicitationRequiredThroughTheGateway(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		session config.SessionMode
		noFast  bool
	}{
		{"shared", config.SessionShared, false},
		{"shared, SDK path", config.SessionShared, true},
		{"per_client", config.SessionPerClient, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testserver.Server(t, "ue", "urlelicit")
			srv.Session = tc.session
			cfg := testConfig(srv)
			cfg.Gateway.DisableFastPath = tc.noFast
			r := start(t, cfg)
			cs, completed := r.urlClient(t, "form", "url")
			waitTools(t, cs, "ue's tools", has("ue__connect"))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ue__connect", Arguments: map[string]any{}})
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) {
				t.Fatalf("the first call: got %v, want the upstream's JSON-RPC error", err)
			}
			if rpc.Code != mcp.CodeURLElicitationRequired || rpc.Message != "URL elicitation required" {
				t.Errorf("the error: code %d, message %q; want %d, %q as the upstream sent it", rpc.Code, rpc.Message, mcp.CodeURLElicitationRequired, "URL elicitation required")
			}
			var data struct {
				Elicitations []*mcp.ElicitParams `json:"elicitations"`
			}
			if err := json.Unmarshal(rpc.Data, &data); err != nil || len(data.Elicitations) != 1 {
				t.Fatalf("the error's data %s (%v): want one elicitation", rpc.Data, err)
			}
			el := data.Elicitations[0]
			if el.Mode != "url" || el.ElicitationID != testserver.URLElicitationID || el.Message != "Connect your account" ||
				!strings.HasPrefix(el.URL, "http://127.0.0.1:") || !strings.HasSuffix(el.URL, "/connect/"+testserver.URLElicitationID) {
				t.Fatalf("the elicitation: got %+v, want the upstream's", el)
			}

			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, el.URL, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("visiting the URL: %v", err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			select {
			case id := <-completed:
				if id != testserver.URLElicitationID {
					t.Errorf("elicitation/complete for %q, want %q", id, testserver.URLElicitationID)
				}
			case <-ctx.Done():
				t.Fatal("the client got no notifications/elicitation/complete")
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ue__connect", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("the call after completion: %v %+v", err, res)
			}
			if got := textOf(res); got != "connected after 2 calls" {
				t.Errorf("the call after completion answered %q, want %q", got, "connected after 2 calls")
			}
		})
	}
}

// TestURLElicitationToAFormOnlyClient: an upstream's URL-mode
// elicitation during the call of a gateway client that declared form
// mode only is refused with the specification's invalid-params error,
// which names the mode, so that the upstream can fall back; the client
// is never shown it.
func TestURLElicitationToAFormOnlyClient(t *testing.T) {
	t.Parallel()
	cfg := testConfig(testserver.Server(t, "asks", "asks"))
	r := start(t, cfg)
	var shown atomic.Int32
	c := mcp.NewClient(&mcp.Implementation{Name: "form-client", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			shown.Add(1)
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	defer cs.Close()
	waitTools(t, cs, "asks' tools", has("asks__open"))
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "asks__open", Arguments: map[string]any{}})
	got := fmt.Sprint(err)
	if res != nil {
		got += " " + textOf(res)
	}
	if !strings.Contains(got, "does not support URL-mode elicitation") {
		t.Errorf("the call of asks__open: got %s; want the upstream told the client does not support URL-mode elicitation", got)
	}
	if n := shown.Load(); n != 0 {
		t.Errorf("the form-only client was shown %d URL elicitations", n)
	}
}

// TestPerClientSessionDeclaresItsClientsElicitation: a per_client
// upstream session declares the elicitation modes (and sampling) its
// owner's client declared: a form-only client's session declares no URL
// mode, a form-and-URL client's both; the shared session declares
// everything the gateway forwards (docs/gateway.md).
func TestPerClientSessionDeclaresItsClientsElicitation(t *testing.T) {
	t.Parallel()
	own := testserver.Server(t, "ue", "urlelicit")
	own.Session = config.SessionPerClient
	shared := testserver.Server(t, "sh", "urlelicit")
	r := start(t, testConfig(own, shared))
	formOnly, _ := r.urlClient(t, "form")
	both, _ := r.urlClient(t, "form", "url")
	waitTools(t, formOnly, "the tools", has("ue__caps", "sh__caps"))
	caps := func(cs *mcp.ClientSession, tool string) string {
		t.Helper()
		res := call(t, cs, tool, map[string]any{})
		if res.IsError {
			t.Fatalf("%s: %s", tool, textOf(res))
		}
		return textOf(res)
	}
	if got := caps(formOnly, "ue__caps"); !strings.Contains(got, `"elicitation":{"form":{}}`) || strings.Contains(got, "sampling") {
		t.Errorf("the form-only client's per_client session declared %s; want form-mode elicitation only, no sampling", got)
	}
	if got := caps(both, "ue__caps"); !strings.Contains(got, `"url":{}`) || !strings.Contains(got, `"form":{}`) {
		t.Errorf("the form-and-URL client's per_client session declared %s; want both modes", got)
	}
	if got := caps(formOnly, "sh__caps"); !strings.Contains(got, `"url":{}`) {
		t.Errorf("the shared session declared %s; want URL mode too (it serves every client)", got)
	}
}
