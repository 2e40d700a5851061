package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestClientProgressOnAServersRequest: a server's elicitation/create may
// carry a progressToken in its _meta, under which the client reports
// progress (notifications/progress) while it works on the answer.
// Directly the server hears it; through the gateway it must too — on the
// shared session and on a client's own (per_client, per_user), with
// fast_path on and off. The server here (a go-sdk server) records the
// progress it hears and says in its result what it heard by the time the
// answer came (or soon after: the progress and the answer are two posts);
// the client (a raw streamable-HTTP client with no standalone stream)
// reports progress before it answers, after another client of the same
// view reports progress under the same token, which the server must not
// hear on the session that asked (directly it comes on the other client's
// own session): only the client the request went to speaks for it.
func TestClientProgressOnAServersRequest(t *testing.T) {
	t.Parallel()
	type progress struct {
		on *mcp.ServerSession
		p  *mcp.ProgressNotificationParams
	}
	heard := make(chan progress, 16)
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, &mcp.ServerOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationServerRequest) {
			heard <- progress{req.Session, req.Params}
		},
	})
	srv.AddTool(&mcp.Tool{Name: "asks", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Meta: mcp.Meta{"progressToken": "ask-1"}, Message: "name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"username": map[string]any{"type": "string"}}}})
			if err != nil {
				return nil, err
			}
			text := "heard nothing"
			wait := time.After(5 * time.Second) // what the server would wait for its client's progress, at most
		hear:
			for {
				select {
				case h := <-heard:
					if h.on != req.Session {
						continue // progress on another session: not about this request
					}
					text = fmt.Sprintf("heard %v %v/%v %q", h.p.ProgressToken, h.p.Progress, h.p.Total, h.p.Message)
					break hear
				case <-wait:
					break hear
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text + " then " + res.Action}}}, nil
		})
	url := serveHTTP(t, srv, nil)

	// call calls the tool as a client that reports progress on the
	// elicitation before it answers it, and returns the call's result.
	call := func(t *testing.T, endpoint string, gateway bool) string {
		s := newCapableSession(t, endpoint, clientCaps)
		other := newCapableSession(t, endpoint, clientCaps) // another client of the same view
		if gateway {
			s.waitListed("asks")
		}
		msgs := s.exchange(`{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"asks","arguments":{}}}`,
			func(method string, params map[string]any) any {
				meta, _ := params["_meta"].(map[string]any)
				tok, ok := meta["progressToken"]
				if method != "elicitation/create" || !ok {
					t.Errorf("the client was asked %s with _meta %v; want elicitation/create with the server's progressToken", method, meta)
					return answerAll(method, params)
				}
				for _, c := range []struct {
					s   *rawSession
					msg string
				}{{other, "not asked"}, {s, "typing"}} {
					// The other client reports under the same token first:
					// not the request it was asked, so the server must not
					// hear it.
					note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
						"params": map[string]any{"progressToken": tok, "progress": 1, "total": 2, "message": c.msg}})
					if resp := c.s.post(string(note), nil); resp.StatusCode != http.StatusAccepted {
						t.Errorf("posting progress: HTTP %d: %s", resp.StatusCode, readAll(t, resp))
					}
				}
				return answerAll(method, params)
			})
		var res struct {
			Result mcp.CallToolResult `json:"result"`
		}
		b, _ := json.Marshal(msgs[len(msgs)-1])
		if err := json.Unmarshal(b, &res); err != nil || len(res.Result.Content) != 1 {
			t.Fatalf("the call's answer: %s", b)
		}
		return res.Result.Content[0].(*mcp.TextContent).Text
	}

	const want = `heard ask-1 1/2 "typing" then accept`
	if got := call(t, url, false); got != want {
		t.Fatalf("directly: got %q, want %q", got, want)
	}
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast_path=%v", fast), func(t *testing.T) {
			var servers []config.Server
			var views []config.View
			for _, mode := range []config.SessionMode{config.SessionShared, config.SessionPerClient, config.SessionPerUser} {
				s := httpUpstream(string(mode), url)
				s.Session, s.RequestTimeout = mode, 30*time.Second
				servers = append(servers, s)
				views = append(views, config.View{Name: string(mode), Servers: []string{s.Name}, Prefix: config.PrefixNever})
			}
			cfg := testConfig(servers...)
			cfg.Gateway.DisableFastPath = !fast
			cfg.Gateway.Views = views
			r := start(t, cfg)
			for _, v := range views {
				t.Run(v.Name, func(t *testing.T) {
					if got := call(t, r.url+"/mcp/"+v.Name, true); got != want {
						t.Errorf("got %q, want %q (as directly)", got, want)
					}
				})
			}
		})
	}
}
