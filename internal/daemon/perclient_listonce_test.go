package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// perSessionServers serves streamable HTTP with a go-sdk server of its own
// per session, so that a test can change what one session lists, or what
// every session lists, as a server that keeps its lists per client does.
type perSessionServers struct {
	url     string
	mu      sync.Mutex
	servers []*mcp.Server // in the order their sessions opened
	opened  chan struct{}
}

func newPerSessionServers(t *testing.T) *perSessionServers {
	t.Helper()
	ss := &perSessionServers{opened: make(chan struct{}, 16)}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		// The SDK asks for a server on every request it has no session
		// for; a session keeps the one it initialized with.
		var s *mcp.Server
		s = mcp.NewServer(&mcp.Implementation{Name: "lists", Version: "1"}, &mcp.ServerOptions{
			InitializedHandler: func(context.Context, *mcp.InitializedRequest) {
				ss.mu.Lock()
				ss.servers = append(ss.servers, s)
				ss.mu.Unlock()
				ss.opened <- struct{}{}
			},
		})
		s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, emptyTool)
		s.AddPrompt(&mcp.Prompt{Name: "hello"}, emptyPrompt) // so that it declares prompts, and says when they change
		return s
	}, nil)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close) // after the daemon, whose sessions hold streams open
	ss.url = hs.URL
	return ss
}

// server returns the server of the i-th session, waiting for it to be
// initialized.
func (s *perSessionServers) server(t *testing.T, i int) *mcp.Server {
	t.Helper()
	for {
		s.mu.Lock()
		n := len(s.servers)
		var srv *mcp.Server
		if i < n {
			srv = s.servers[i]
		}
		s.mu.Unlock()
		if srv != nil {
			return srv
		}
		select {
		case <-s.opened:
		case <-time.After(20 * time.Second):
			t.Fatalf("upstream session %d did not open within 20s", i)
		}
	}
}

// all returns the servers of every session so far.
func (s *perSessionServers) all() []*mcp.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.servers)
}

func emptyTool(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
}

func emptyPrompt(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{}}, nil
}

// counted is a go-sdk client of the gateway that counts the
// tools/list_changed it gets and signals each prompts/list_changed.
type counted struct {
	cs      *mcp.ClientSession
	tools   atomic.Int32
	toolsCh chan struct{}
	prompts chan struct{}
}

func connectCounted(t *testing.T, r *running, path string) *counted {
	t.Helper()
	c := &counted{toolsCh: make(chan struct{}, 64), prompts: make(chan struct{}, 64)}
	client := mcp.NewClient(&mcp.Implementation{Name: "counted", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.tools.Add(1)
			c.toolsCh <- struct{}{}
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { c.prompts <- struct{}{} },
	})
	c.cs = r.connectClient(t, client, path, nil)
	return c
}

// wait waits for a signal on ch, failing the test with what.
func waitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: nothing within 20s", what)
	}
}

// TestPerClientListChangeOnce: a client of a prefix: never view of a
// per_client server is told of a list change once, as directly. A change
// the server makes for every session at once reaches it from its own
// upstream session only, not a second time when the catalog (the shared
// session's lists) reloads; a reload that changes the view's filters,
// which no upstream session announces, reaches it once, from the gateway.
// A client that has connected but not listed yet (e) is not told of the
// catalog's change, as directly: it will list from its own session.
//
// Each step ends on a barrier: a client d of the view that lists the
// server from the catalog (its own upstream session cannot open: the
// server's max_sessions is 1, a's) is told of every change of the
// catalog, after the clients under test, which connected first, on the
// same pass of the SDK's; once d has had the SDK's notification, a
// prompt added to a's own upstream session alone reaches a on the same
// stream, after anything sent to it before.
func TestPerClientListChangeOnce(t *testing.T) {
	t.Parallel()
	up := newPerSessionServers(t)
	srv := httpUpstream("up", up.url)
	srv.Session = config.SessionPerClient
	srv.MaxSessions = 1 // a's: d lists from the catalog
	cfg := testConfig(srv)
	cfg.Gateway.Views = []config.View{{Name: "v", Servers: []string{"up"}, Prefix: config.PrefixNever}}
	var cur atomic.Pointer[config.Config]
	cur.Store(cfg)
	r := start(t, cfg, func(o *Options) { o.Load = func() (*config.Config, error) { return cur.Load(), nil } })
	// The server is connected and in the catalog before any client
	// connects: a server that becomes available changes what every
	// session of the view lists, and e, which connects before the
	// daemon's own session with the server would otherwise be up, was
	// rightly told of it (listcauses.go) — not of the change under test.
	waitReady(t, r)

	a := connectCounted(t, r, "/mcp/v")
	waitTools(t, a.cs, "the server's tools", has("echo")) // opens a's own upstream session
	e := newRawSession(t, r.url+"/mcp/v", nil)            // connected, listed nothing
	est := e.openStandalone()
	d := connectCounted(t, r, "/mcp/v")
	waitTools(t, d.cs, "the server's tools, from the catalog", has("echo")) // cannot open its own session
	shared, own := up.server(t, 0), up.server(t, 1)
	barrier := func(name string) {
		t.Helper()
		own.AddPrompt(&mcp.Prompt{Name: name}, emptyPrompt)
		waitSignal(t, a.prompts, "a's prompts/list_changed from its own session ("+name+")")
	}
	barrier("settled")
	if len(up.all()) != 2 || shared == own {
		t.Fatalf("the upstream has %d sessions, want the shared one and a's", len(up.all()))
	}
	drain := func(c *counted) {
		for {
			select {
			case <-c.toolsCh:
			default:
				return
			}
		}
	}
	drain(d)

	drain(a)
	// A change for every session at once: each upstream session says so.
	before := a.tools.Load()
	for _, s := range up.all() {
		s.AddTool(&mcp.Tool{Name: "extra", InputSchema: map[string]any{"type": "object"}}, emptyTool)
	}
	waitSignal(t, d.toolsCh, "d's tools/list_changed after the catalog reloaded")
	waitSignal(t, a.toolsCh, "a's tools/list_changed")
	barrier("after-extra")
	if got := a.tools.Load() - before; got != 1 {
		t.Errorf("a change the server made for every session reached the client %d times, want once (from its own session), as directly", got)
	}
	if names := toolNames(t, a.cs); !has("echo", "extra")(names) {
		t.Errorf("a lists %v after the change, want echo and extra", names)
	}
	if names := toolNames(t, d.cs); !has("echo", "extra")(names) {
		t.Errorf("d lists %v after the change, want echo and extra", names)
	}
	// e, which has not listed tools, heard nothing of it: directly, its
	// own session's list did not change for it. Once it has listed the
	// prompts (from the catalog, as d), a change of the catalog's prompts
	// reaches it on the same stream, after anything sent to it before.
	readAll(t, e.post(`{"jsonrpc":"2.0","id":2,"method":"prompts/list"}`, nil))
	shared.AddPrompt(&mcp.Prompt{Name: "shared-only"}, emptyPrompt)
	if !est.waitFor("notifications/prompts/list_changed", 20*time.Second) {
		t.Fatalf("e was not told of the catalog's prompts change within 20s:\n%s", est)
	}
	if strings.Contains(est.String(), "notifications/tools/list_changed") {
		t.Errorf("e, which connected but listed no tools, was told of the catalog's tools change; directly it would not:\n%s", est)
	}

	// A reload that changes the view's filters: no upstream session says
	// so, the gateway must.
	drain(a)
	next := *cfg
	next.Gateway.Views = []config.View{{Name: "v", Servers: []string{"up"}, Prefix: config.PrefixNever, Exclude: []string{"extra"}}}
	cur.Store(&next)
	before = a.tools.Load()
	if _, err := r.d.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Here d is no barrier: a batch of the SDK's from before may still be
	// on its way to it. The reload's reaches a, then the barrier.
	waitSignal(t, a.toolsCh, "a's tools/list_changed after the reload")
	barrier("after-reload")
	if got := a.tools.Load() - before; got != 1 {
		t.Errorf("a reload that changed the view's filters reached the client %d times, want once", got)
	}
	if names := toolNames(t, a.cs); !has("echo")(names) || !lacks("extra")(names) {
		t.Errorf("a lists %v after the reload, want echo without extra", names)
	}
}
