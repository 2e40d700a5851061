package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// This file checks that a prefix: never, per_client view answers the
// lists (page by page), prompts/get, resources/read,
// completion/complete and ping with the server's own bytes (issue 17:
// "nothing differs"): the same requests go to the server directly and
// through the view, by hand, and each result is compared as sent — key
// order, numbers, a false the server wrote out (server-everything's
// required: false, hasMore: false), no cache hints the server did not
// send. Servers: server-everything over stdio and over streamable HTTP,
// and a go-sdk server over streamable HTTP; the view's clients: streamable
// HTTP (fast_path on, then off) and serve --stdio.

// rawPeer is one end of an MCP session spoken by hand.
type rawPeer interface {
	// answer sends the request method with the JSON params and returns
	// its result and error, as sent.
	answer(method, params string) (result, rpcErr json.RawMessage)
}

// httpPeer is a rawPeer over streamable HTTP.
type httpPeer struct {
	t  *testing.T
	s  *rawSession
	id atomic.Int64
}

func newHTTPPeer(t *testing.T, url string) *httpPeer {
	t.Helper()
	return &httpPeer{t: t, s: newRawSession(t, url, nil)}
}

func (p *httpPeer) answer(method, params string) (json.RawMessage, json.RawMessage) {
	p.t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, 100+p.id.Add(1), method, params)
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(answerOf(p.t, p.s.post(body, nil)), &m); err != nil {
		p.t.Fatalf("%s: decoding the answer: %v", method, err)
	}
	return m.Result, m.Error
}

// connPeer is a rawPeer over a connection of one stream (stdio, or
// serve --stdio's in-memory pipe).
type connPeer struct {
	t    *testing.T
	conn mcp.Connection
	next int64
}

func newConnPeer(t *testing.T, tr mcp.Transport) *connPeer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := tr.Connect(ctx)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	p := &connPeer{t: t, conn: conn}
	if _, e := p.answer("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`); e != nil {
		t.Fatalf("initialize: %s", e)
	}
	if err := conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("notifications/initialized: %v", err)
	}
	return p
}

func (p *connPeer) answer(method, params string) (json.RawMessage, json.RawMessage) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.next++
	id, _ := jsonrpc.MakeID(float64(100 + p.next))
	if err := p.conn.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: json.RawMessage(params)}); err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
	for {
		msg, err := p.conn.Read(ctx)
		if err != nil {
			p.t.Fatalf("%s: reading the answer: %v", method, err)
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			if m.ID != id {
				continue
			}
			if m.Error != nil {
				b, _ := json.Marshal(m.Error)
				return nil, b
			}
			return m.Result, nil
		case *jsonrpc.Request:
			if m.IsCall() { // the client declared nothing to answer with
				_ = p.conn.Write(ctx, &jsonrpc.Response{ID: m.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "not supported"}})
			}
		}
	}
}

// bytesServer is a go-sdk server with a paged list of each kind, a
// prompt with an optional argument and completions.
func bytesServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bytes", Version: "1"}, &mcp.ServerOptions{
		PageSize: 2,
		CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"Paris", "Perth"}, Total: 2}}, nil
		},
	})
	// A schema in the order its struct gives (type first), and one as
	// written, with a number in exponent form: the SDK's types decode
	// both into maps and numbers, which encode in another order and form.
	type in struct {
		City string `json:"city" jsonschema:"where"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "typed"}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "written", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"number","maximum":1e3}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	for i := range 3 {
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%d", i), Description: "a <tool> & more", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		s.AddPrompt(&mcp.Prompt{Name: fmt.Sprintf("p%d", i), Arguments: []*mcp.PromptArgument{{Name: "city", Required: true}, {Name: "state"}}},
			func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "in " + req.Params.Arguments["city"]}}}}, nil
			})
		uri := fmt.Sprintf("bytes://r%d", i)
		s.AddResource(&mcp.Resource{URI: uri, Name: fmt.Sprintf("r%d", i), MIMEType: "text/plain"},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "text of " + uri}}}, nil
			})
		s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: fmt.Sprintf("bytes://t%d/{x}", i), Name: fmt.Sprintf("t%d", i)},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{}, nil
			})
	}
	return s
}

// bytesRequest is one request compared by its result.
type bytesRequest struct{ method, params string }

// TestPrefixNeverPerClientResultsAreTheServers compares, byte for byte,
// what the server answers directly and through the view.
func TestPrefixNeverPerClientResultsAreTheServers(t *testing.T) {
	t.Parallel()
	everything := []bytesRequest{
		{"prompts/get", `{"name":"args-prompt","arguments":{"city":"Paris","state":"IDF"}}`},
		{"prompts/get", `{"name":"simple-prompt"}`},
		{"resources/read", `{"uri":"demo://resource/static/document/features.md"}`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"completable-prompt"},"argument":{"name":"department","value":"S"}}`},
		{"completion/complete", `{"ref":{"type":"ref/resource","uri":"demo://resource/dynamic/text/{resourceId}"},"argument":{"name":"resourceId","value":"4"}}`},
		{"ping", `{}`},
	}
	for _, c := range []struct {
		name     string
		server   func(t *testing.T) (srv config.Server, direct func(t *testing.T) rawPeer)
		requests []bytesRequest
	}{
		{"everything over stdio", func(t *testing.T) (config.Server, func(*testing.T) rawPeer) {
			srv := everythingPerClient(t)
			return srv, func(t *testing.T) rawPeer {
				bin, args := testpeer.EverythingCommand(t)
				return newConnPeer(t, &mcp.CommandTransport{Command: exec.Command(bin, args...)})
			}
		}, everything},
		{"everything over streamable HTTP", func(t *testing.T) (config.Server, func(*testing.T) rawPeer) {
			url := sharedEverything(t)
			srv := httpUpstream("ev", url)
			srv.Session = config.SessionPerClient
			return srv, func(t *testing.T) rawPeer { return newHTTPPeer(t, url) }
		}, everything},
		{"go-sdk over streamable HTTP", func(t *testing.T) (config.Server, func(*testing.T) rawPeer) {
			url := serveHTTP(t, bytesServer(), nil)
			srv := httpUpstream("ev", url)
			srv.Session = config.SessionPerClient
			return srv, func(t *testing.T) rawPeer { return newHTTPPeer(t, url) }
		}, []bytesRequest{
			{"prompts/get", `{"name":"p1","arguments":{"city":"Paris"}}`},
			{"resources/read", `{"uri":"bytes://r2"}`},
			{"completion/complete", `{"ref":{"type":"ref/prompt","name":"p1"},"argument":{"name":"city","value":"P"}}`},
			{"ping", `{}`},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, newDirect := c.server(t)
			srv.NoIdentityMeta = true
			cfg := testConfig(srv)
			cfg.Gateway.Views = []config.View{{Name: config.DefaultViewName, Servers: []string{srv.Name}, Prefix: config.PrefixNever}}
			sdkPath := *cfg
			sdkPath.Gateway.DisableFastPath = true
			var next atomic.Pointer[config.Config]
			r := start(t, cfg, func(o *Options) { o.Load = func() (*config.Config, error) { return next.Load(), nil } })
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r.d.waitFirstAttempts(ctx)
			direct := newDirect(t)

			compare := func(t *testing.T, through rawPeer) {
				t.Helper()
				same := func(what string, method, params string) json.RawMessage {
					t.Helper()
					want, wantErr := direct.answer(method, params)
					got, gotErr := through.answer(method, params)
					if wantErr != nil || gotErr != nil {
						t.Errorf("%s: errors directly %s, through the view %s", what, wantErr, gotErr)
						return nil
					}
					if string(got) != string(want) {
						t.Errorf("%s: through the view\n%s\nwant the server's\n%s", what, got, want)
					}
					return want
				}
				for _, list := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
					params := `{}`
					for page := 1; ; page++ {
						res := same(fmt.Sprintf("%s page %d", list, page), list, params)
						var p struct {
							NextCursor string `json:"nextCursor"`
						}
						if json.Unmarshal(res, &p) != nil || p.NextCursor == "" {
							break
						}
						if page == 20 {
							t.Fatalf("%s: more than 20 pages", list)
						}
						params = `{"cursor":` + strconv.Quote(p.NextCursor) + `}`
					}
				}
				for _, req := range c.requests {
					same(req.method+" "+req.params, req.method, req.params)
				}
			}

			t.Run("streamable HTTP, fast_path on", func(t *testing.T) { compare(t, newHTTPPeer(t, r.url+"/mcp")) })
			t.Run("serve --stdio", func(t *testing.T) {
				clientT, serverT := mcp.NewInMemoryTransports()
				sctx, stop := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- r.d.gw.ServeStdio(sctx, serverT) }()
				defer func() {
					stop()
					if err := <-done; err != nil {
						t.Errorf("ServeStdio: %v", err)
					}
				}()
				compare(t, newConnPeer(t, clientT))
			})
			next.Store(&sdkPath)
			if _, err := r.d.Reload(ctx); err != nil {
				t.Fatal(err)
			}
			t.Run("streamable HTTP, fast_path off", func(t *testing.T) { compare(t, newHTTPPeer(t, r.url+"/mcp")) })
		})
	}
}

// TestPrefixNeverPerClientFilteredPagesAreTheGateways checks that a
// prefix: never, per_client view still filters and renames: a page with a
// tool its exclude leaves out or its rename renames is the gateway's
// answer (the view's entries), and a page it shows whole and unchanged is
// the server's bytes.
func TestPrefixNeverPerClientFilteredPagesAreTheGateways(t *testing.T) {
	t.Parallel()
	url := serveHTTP(t, bytesServer(), nil)
	srv := httpUpstream("ev", url)
	srv.Session = config.SessionPerClient
	cfg := testConfig(srv)
	cfg.Gateway.Views = []config.View{{Name: "filtered", Servers: []string{"ev"}, Prefix: config.PrefixNever,
		Exclude: []string{"t1"}, Rename: map[string]string{"t2": "two"}}}
	r := start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r.d.waitFirstAttempts(ctx)
	direct, through := newHTTPPeer(t, url), newHTTPPeer(t, r.url+"/mcp/filtered")

	// The server's pages (of two): t0 t1 | t2 typed | written.
	params := `{}`
	for page, want := range [][]string{{"t0"}, {"two", "typed"}, {"written"}} {
		server, _ := direct.answer("tools/list", params)
		got, e := through.answer("tools/list", params)
		if e != nil {
			t.Fatalf("tools/list page %d: %s", page+1, e)
		}
		var p struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(got, &p); err != nil {
			t.Fatalf("tools/list page %d: %v", page+1, err)
		}
		var names []string
		for _, tool := range p.Tools {
			names = append(names, tool.Name)
		}
		if fmt.Sprint(names) != fmt.Sprint(want) {
			t.Errorf("tools/list page %d: got %v, want %v", page+1, names, want)
		}
		if whole := page == 2; whole != (string(got) == string(server)) {
			t.Errorf("tools/list page %d: the server's bytes %v, want %v:\n%s\nthe server's:\n%s", page+1, !whole, whole, got, server)
		}
		params = `{"cursor":` + strconv.Quote(p.NextCursor) + `}`
	}
	// What the view does not change is the server's.
	for _, req := range []bytesRequest{
		{"prompts/get", `{"name":"p1","arguments":{"city":"Paris"}}`},
		{"resources/read", `{"uri":"bytes://r2"}`},
	} {
		want, _ := direct.answer(req.method, req.params)
		if got, _ := through.answer(req.method, req.params); string(got) != string(want) {
			t.Errorf("%s: through the view\n%s\nwant the server's\n%s", req.method, got, want)
		}
	}
}
