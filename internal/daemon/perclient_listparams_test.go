package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestPrefixNeverPerClientListChangeAsSent: a list change of a client's
// own upstream session reaches a client of a prefix: never, per_client
// view with the params the server sent — none from server-everything
// (a TypeScript server), {} from a go-sdk server — on the stream it
// would come on directly, with fast_path on and off. The change is the
// one each server makes as the client's session starts (a tool for the
// client's capabilities; the go-sdk server's handler adds one at
// initialized too), which a go-sdk client, whose standalone stream is
// open as it sends notifications/initialized, hears directly.
func TestPrefixNeverPerClientListChangeAsSent(t *testing.T) {
	t.Parallel()
	evURL := testpeer.StartEverything(t, "streamableHttp")
	goSDK := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		var s *mcp.Server
		s = mcp.NewServer(&mcp.Implementation{Name: "grows", Version: "1"}, &mcp.ServerOptions{
			InitializedHandler: func(context.Context, *mcp.InitializedRequest) {
				s.AddTool(&mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}}, emptyTool)
			},
		})
		s.AddTool(&mcp.Tool{Name: "early", InputSchema: map[string]any{"type": "object"}}, emptyTool)
		return s
	}, nil))
	t.Cleanup(goSDK.Close) // after the daemons, whose sessions hold its streams
	announcing := serveHTTP(t, announcingServer(), nil)
	servers := []neverServer{{"evh", "ev", evURL}, {"grows", "grows", goSDK.URL}, {"announce", "announce", announcing}}
	on, off := startNeverViews(t, true, servers...), startNeverViews(t, false, servers...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	waitServersUp(ctx, t, servers, on, off)
	t.Run("server-everything over stdio", func(t *testing.T) {
		// Directly, over its stdin and stdout.
		ev := everythingPerClient(t)
		ev.NoIdentityMeta = true
		var direct []string
		var mu sync.Mutex
		read := func(m jsonrpc.Message) {
			if r, ok := m.(*jsonrpc.Request); ok && r.Method == "notifications/tools/list_changed" {
				params := "-"
				if r.Params != nil {
					params = string(r.Params)
				}
				mu.Lock()
				direct = append(direct, params)
				mu.Unlock()
			}
		}
		cmd := exec.Command(ev.Command, ev.Args...)
		cs, err := answeringRaw("", nil, nil).Connect(ctx, recordingTransport{Transport: &mcp.CommandTransport{Command: cmd}, read: read}, nil)
		if err != nil {
			t.Fatalf("connecting to server-everything over stdio: %v", err)
		}
		t.Cleanup(func() { cs.Close() })
		waitFor(t, "directly: a tools/list_changed", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(direct) > 0
		})
		mu.Lock()
		want := slices.Compact(slices.Sorted(slices.Values(direct)))
		mu.Unlock()
		if !slices.Equal(want, []string{"-"}) {
			t.Fatalf("directly the client read list changes with the params %q; want none (the case this test is about)", want)
		}
		// Through a view of it.
		cfg := testConfig(ev)
		cfg.Gateway.Views = []config.View{{Name: "ev", Servers: []string{"ev"}, Prefix: config.PrefixNever}}
		r := start(t, cfg)
		r.d.waitFirstAttempts(ctx)
		spy := &wireRecorder{}
		connectSpied(t, ctx, answeringRaw("", spy, nil), r.url+"/mcp/ev", spy, "trigger-elicitation-request")
		waitFor(t, "through the view: a tools/list_changed", func() bool {
			return len(spy.notifications("notifications/tools/list_changed")) > 0
		})
		var got []string
		for _, n := range spy.notifications("notifications/tools/list_changed") {
			_, params, _ := strings.Cut(n, " ")
			got = append(got, params)
		}
		if got = slices.Compact(slices.Sorted(slices.Values(got))); !slices.Equal(got, want) {
			t.Errorf("through the view the client read list changes with the params %q; directly %q", got, want)
		}
	})

	for _, c := range []struct{ name, direct, view, tool, want string }{
		{"server-everything", evURL, "/mcp/ev", "trigger-elicitation-request", "GET -"},
		{"go-sdk server", goSDK.URL, "/mcp/grows", "late", "GET {}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sides := []wireSide{{"directly", ""}, {"fast_path on", on.url}, {"fast_path off", off.url}}
			got := make([][]string, len(sides))
			for i, side := range sides {
				url := c.direct
				if side.base != "" {
					url = side.base + c.view
				}
				spy := &wireRecorder{}
				connectSpied(t, ctx, answeringRaw("", spy, nil), url, spy, c.tool)
				waitFor(t, side.name+": a tools/list_changed", func() bool {
					return len(spy.notifications("notifications/tools/list_changed")) > 0
				})
				// How many: server-everything says so once per tool it
				// adds, the gateway's batched; what each is: compared.
				got[i] = slices.Compact(slices.Sorted(slices.Values(spy.notifications("notifications/tools/list_changed"))))
			}
			if !slices.Equal(got[0], []string{c.want}) {
				t.Fatalf("directly the client read the list changes %q; want %q (the case this test is about)", got[0], c.want)
			}
			for i := 1; i < len(sides); i++ {
				if diff := cmp.Diff(got[0], got[i]); diff != "" {
					t.Errorf("%s: the list changes the client read (stream and params), directly (-) and through the view (+):\n%s", sides[i].name, diff)
				}
			}
		})
	}

	// A list change the server sends on a call's stream, without params:
	// on the lean path (fast_path on) and through the SDK's client (off).
	// Directly it comes on the call's stream; through the view on the
	// client's standalone stream (docs/gateway.md): the params are
	// compared.
	t.Run("on a call's stream", func(t *testing.T) {
		sides := []wireSide{{"directly", ""}, {"fast_path on", on.url}, {"fast_path off", off.url}}
		for _, side := range sides {
			url := announcing
			if side.base != "" {
				url = side.base + "/mcp/announce"
			}
			spy := &wireRecorder{}
			cs := connectSpied(t, ctx, answeringRaw("", spy, nil), url, spy, "announce")
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "announce", Arguments: map[string]any{}}); err != nil || res.IsError {
				t.Fatalf("%s: announce: %v %v", side.name, err, res)
			}
			waitFor(t, side.name+": the prompts/list_changed", func() bool {
				return len(spy.notifications("notifications/prompts/list_changed")) > 0
			})
			var got []string
			for _, n := range spy.notifications("notifications/prompts/list_changed") {
				_, params, _ := strings.Cut(strings.TrimPrefix(n, "POST "), " ")
				if side.base == "" {
					if !strings.HasPrefix(n, "POST tools/call ") {
						t.Fatalf("directly the list change came %q; want it on the call's stream (the case this test is about)", n)
					}
				}
				got = append(got, params)
			}
			if !slices.Equal(got, []string{"-"}) {
				t.Errorf("%s: the client read the call's list change with the params %q; want none, as the server sent it", side.name, got)
			}
		}
	})

}

// announcingServer is a go-sdk server whose tool "announce" says, on its
// call's stream, that its prompts changed, with no params (as a
// TypeScript server writes a list change): it sends the notification in
// place of a progress notification, which goes on the call's stream.
func announcingServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "announce", Version: "1"}, nil)
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/progress" && ctx.Value(announceKey{}) != nil {
				ss, _ := req.GetSession().(*mcp.ServerSession)
				return next(ctx, "notifications/prompts/list_changed", &mcp.ServerRequest[mcp.Params]{Session: ss})
			}
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "announce"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if err := req.Session.NotifyProgress(context.WithValue(ctx, announceKey{}, true), &mcp.ProgressNotificationParams{}); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "announced"}}}, nil, nil
	})
	return s
}

// announceKey marks the context of announcingServer's list change.
type announceKey struct{}

// neverServer is a streamable-HTTP server at url, named server, shown by
// a prefix: never view named view.
type neverServer struct{ server, view, url string }

// waitServersUp waits until each of rs has its servers' tools in its
// catalog, so that the servers are up before the clients come: a server
// that comes while a client is connected is a change of every list,
// which the gateway tells.
func waitServersUp(ctx context.Context, t *testing.T, servers []neverServer, rs ...*running) {
	t.Helper()
	for _, r := range rs {
		r.d.waitFirstAttempts(ctx)
		eventually(t, "the catalog has every server's tools", func() bool {
			for _, s := range servers {
				if len(r.d.cat.ServerTools(s.server)) == 0 {
					return false
				}
			}
			return true
		})
	}
}

// startNeverViews starts a daemon (fast_path as fast) with each of
// servers as session: per_client without identity _meta, each shown by a
// prefix: never view of its own.
func startNeverViews(t *testing.T, fast bool, servers ...neverServer) *running {
	t.Helper()
	return startNeverViewsAs(t, fast, nil, servers...)
}

// startNeverViewsAs is startNeverViews with the session: of each server
// that modes names as it says (per_client for the others).
func startNeverViewsAs(t *testing.T, fast bool, modes map[string]config.SessionMode, servers ...neverServer) *running {
	t.Helper()
	var srvs []config.Server
	var views []config.View
	for _, s := range servers {
		srv := httpUpstream(s.server, s.url)
		mode := modes[s.server]
		if mode == "" {
			mode = config.SessionPerClient
		}
		srv.Session, srv.NoIdentityMeta, srv.RequestTimeout = mode, true, 30*time.Second
		srvs = append(srvs, srv)
		views = append(views, config.View{Name: s.view, Servers: []string{s.server}, Prefix: config.PrefixNever})
	}
	cfg := testConfig(srvs...)
	cfg.Gateway.DisableFastPath = !fast
	cfg.Gateway.Views = views
	return start(t, cfg)
}
