package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// This file checks that a client of protocol 2026-07-28 is sent list
// changes and resource updates on its subscriptions/listen streams as the
// server itself sends them (issue 17): a go-sdk client talks to a go-sdk
// server directly and, through serve --stdio (the one transport on which
// a client of the gateway keeps a session on 2026-07-28), to a prefix:
// never view of the same server; the server changes its tool list and
// updates a resource, and the notifications each client reads off the
// wire — method, params and _meta — are compared.

// listenServer is a go-sdk server with a tool and a resource clients may
// subscribe to, and no prompts (so no prompts capability); initialized, if not nil, is called once a
// client session has initialized with it.
func listenServer(initialized func(*mcp.Server)) *mcp.Server {
	var s *mcp.Server
	s = mcp.NewServer(&mcp.Implementation{Name: "lis", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		InitializedHandler: func(context.Context, *mcp.InitializedRequest) {
			if initialized != nil {
				initialized(s)
			}
		},
	})
	s.AddTool(&mcp.Tool{Name: "a", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "lis://r", Name: "r"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "lis://r", Text: "r"}}}, nil
		})
	return s
}

// addTool adds tool b to s.
func addTool(s *mcp.Server) {
	s.AddTool(&mcp.Tool{Name: "b", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
}

// sessionServers serves a server of its own to each upstream session
// (a stateful server whose lists are the session's), and keeps those
// that a session initialized with, in order.
type sessionServers struct {
	mu  sync.Mutex
	all []*mcp.Server
}

// serve serves a new listenServer for each session over streamable HTTP
// until the test ends.
func (ss *sessionServers) serve(t *testing.T) string {
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return listenServer(func(s *mcp.Server) {
			ss.mu.Lock()
			ss.all = append(ss.all, s)
			ss.mu.Unlock()
		})
	}, nil)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL
}

// next returns a new listenServer for an upstream session, kept as the
// next of those (inMemoryUpstream's servers, which are dialled, not
// initialized over HTTP).
func (ss *sessionServers) next() *mcp.Server {
	s := listenServer(nil)
	ss.mu.Lock()
	ss.all = append(ss.all, s)
	ss.mu.Unlock()
	return s
}

// inMemoryUpstream is a stdio server "lis" each of whose sessions (the
// shared one, each client's own) is newServer's server connected in
// memory instead of a process: it speaks every protocol version,
// 2026-07-28 included, with sessions. (A stateful streamable-HTTP server
// speaks 2025-11-25 at most, and a prefix: never view negotiates what its
// server would: its clients would not be on 2026-07-28.) Start the daemon
// with the option it returns.
func inMemoryUpstream(t *testing.T, newServer func() *mcp.Server) (config.Server, func(*Options)) {
	srv := testserver.Server(t, "lis", "ok")
	return srv, func(o *Options) {
		o.DialOptions = func(server string, do *upstream.DialOptions) {
			if server != "lis" {
				return
			}
			do.NewTransport = func(ctx context.Context) (mcp.Transport, error) {
				ct, st := mcp.NewInMemoryTransports()
				if _, err := newServer().Connect(context.WithoutCancel(ctx), st, nil); err != nil {
					return nil, err
				}
				return ct, nil
			}
		}
	}
}

func (ss *sessionServers) count() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.all)
}

func (ss *sessionServers) at(i int) *mcp.Server {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.all[i]
}

// wire is what a client read of the notifications this file is about,
// each as "method params" with the params' JSON in a canonical form.
type wire struct {
	mu   sync.Mutex
	seen []string
}

func (w *wire) add(method string, params json.RawMessage) {
	var v any
	_ = json.Unmarshal(params, &v)
	b, _ := json.Marshal(v) // map keys sorted
	w.mu.Lock()
	w.seen = append(w.seen, method+" "+string(b))
	w.mu.Unlock()
}

func (w *wire) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

// watched are the notifications wire records.
func watched(method string) bool {
	return strings.HasSuffix(method, "/list_changed") || method == "notifications/resources/updated" ||
		method == "notifications/subscriptions/acknowledged"
}

// read records m, a message the client read, if it is watched.
func (w *wire) read(m jsonrpc.Message) {
	if r, ok := m.(*jsonrpc.Request); ok && !r.IsCall() && watched(r.Method) {
		w.add(r.Method, r.Params)
	}
}

// listenPair is one kind of client, connected to a server directly and
// through the gateway: what each read, and the server of each.
type listenPair struct {
	name            string
	direct, through *wire
	// server is the server the direct client talks to; upstream the one
	// of the gateway's upstream session for the client (per_client), or
	// nil.
	server, upstream *mcp.Server
}

// connectListenPair connects a go-sdk client with opts, offering version
// ("" the SDK's newest), to server directly (in memory) and to the
// daemon's serve --stdio, and subscribes each to lis://r.
func connectListenPair(t *testing.T, r *running, server *mcp.Server, name, version string, opts func() *mcp.ClientOptions) *listenPair {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var sopts *mcp.ClientSessionOptions
	if version != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	p := &listenPair{name: name, direct: &wire{}, through: &wire{}, server: server}
	connect := func(tr mcp.Transport, w *wire) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "listen-client", Version: "1"}, opts())
		cs, err := c.Connect(ctx, recordingTransport{Transport: tr, read: w.read}, sopts)
		if err != nil {
			t.Fatalf("%s: connecting: %v", name, err)
		}
		t.Cleanup(func() { cs.Close() })
		if version == "" {
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("%s negotiated %s, want 2026-07-28 (the case this test is about)", name, v)
			}
		}
		// A client lists what it subscribes to, as a client of the
		// gateway must (the first list opens its own upstream session).
		if _, err := cs.ListResources(ctx, nil); err != nil {
			t.Fatalf("%s: resources/list: %v", name, err)
		}
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "lis://r"}); err != nil {
			t.Fatalf("%s: subscribing to lis://r: %v", name, err)
		}
		return cs
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	connect(ct, p.direct)

	ct, st = mcp.NewInMemoryTransports()
	stdioCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.d.gw.ServeStdio(stdioCtx, st)
	}()
	t.Cleanup(func() {
		stop()
		<-done
	})
	connect(ct, p.through)
	return p
}

// waitSame waits until each pair's clients have read the same
// notifications and want holds of what the direct one read, and fails
// with the difference if they do not within 20s. The acknowledgements of
// a client's listens are compared as a set (acksSorted).
func waitSame(t *testing.T, what string, pairs []*listenPair, want func(p *listenPair, seen []string) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, p := range pairs {
		for {
			d, th := acksSorted(p.direct.get()), acksSorted(p.through.get())
			if want(p, d) && cmp.Equal(d, th) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s: what the client read directly (-) and through the gateway (+), acknowledgements sorted:\n%s", what, p.name, cmp.Diff(d, th))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// acksSorted returns seen with its listens' acknowledgements first, in
// order of their text, then the rest in the order read. A client's two
// listens (the SDK's as it connects, and its subscription's) are
// acknowledged in either order, directly as through the gateway, for a
// server handles them concurrently; what follows them the tests set off
// once they are in.
func acksSorted(seen []string) []string {
	var acks, rest []string
	for _, m := range seen {
		if strings.HasPrefix(m, "notifications/subscriptions/acknowledged ") {
			acks = append(acks, m)
		} else {
			rest = append(rest, m)
		}
	}
	slices.Sort(acks)
	return append(acks, rest...)
}

// count returns how many of seen are of method.
func count(seen []string, method string) int {
	n := 0
	for _, s := range seen {
		if strings.HasPrefix(s, method+" ") {
			n++
		}
	}
	return n
}

// listening are the options of a client that listens for tool and
// prompt list changes: the SDK opts in to those the server declares.
func listening() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ToolListChangedHandler:   func(context.Context, *mcp.ToolListChangedRequest) {},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {},
	}
}

// TestPerClientListenIsTheServers: through a prefix: never view with
// session: per_client, a client on 2026-07-28 is sent its own upstream
// session's tools/list_changed and resources/updated on the listens that
// opted in to them, with their subscription ids, as a server sends them
// directly; one that did not opt in to list changes is not sent them; a
// client on 2025-11-25 gets them as before. The server is one per
// session, so what changes is the session's alone.
func TestPerClientListenIsTheServers(t *testing.T) {
	t.Parallel()
	var upstreams sessionServers
	srv, dial := inMemoryUpstream(t, upstreams.next)
	srv.Session = config.SessionPerClient
	srv.NoIdentityMeta = true
	// As serve --stdio does before its client's first message: the
	// server connected (the gateway's shared session) and listed.
	r, ctx := startNeverView(t, srv, dial)

	var pairs []*listenPair
	for _, c := range []struct {
		name, version string
		opts          func() *mcp.ClientOptions
	}{
		{"a client listening for tool changes", "", listening},
		{"a client listening for nothing but its resource", "", func() *mcp.ClientOptions { return nil }},
		{"a client on 2025-11-25", "2025-11-25", listening},
	} {
		n := upstreams.count()
		p := connectListenPair(t, r, listenServer(nil), c.name, c.version, c.opts)
		waitFor(t, c.name+"'s own upstream session", func() bool { return upstreams.count() > n })
		if got := upstreams.count(); got != n+1 {
			t.Fatalf("%s opened %d upstream sessions, want 1", c.name, got-n)
		}
		p.upstream = upstreams.at(n)
		pairs = append(pairs, p)
	}
	waitSame(t, "after connecting", pairs, func(*listenPair, []string) bool { return true })

	for _, p := range pairs {
		addTool(p.server)
		addTool(p.upstream)
	}
	waitSame(t, "after each session's server added a tool", pairs, func(p *listenPair, seen []string) bool {
		return p == pairs[1] || count(seen, "notifications/tools/list_changed") > 0
	})

	for _, p := range pairs {
		for _, s := range []*mcp.Server{p.server, p.upstream} {
			if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "lis://r"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitSame(t, "after each session's server updated lis://r", pairs, func(p *listenPair, seen []string) bool {
		return count(seen, "notifications/resources/updated") > 0
	})
	if n := count(pairs[1].through.get(), "notifications/tools/list_changed"); n != 0 {
		t.Errorf("the client that did not listen for tool changes was sent %d", n)
	}
	if testing.Verbose() {
		for _, p := range pairs {
			t.Logf("%s read: %q", p.name, p.through.get())
		}
	}
}

// TestSharedListenIsTheServers: with the shared upstream session, a
// client on 2026-07-28 is sent the list changes of the view (which the
// SDK sends, after the catalog changed) and the resource updates of the
// subscribed resource on the listens that opted in to them, as the server
// sends them directly.
func TestSharedListenIsTheServers(t *testing.T) {
	t.Parallel()
	s := listenServer(nil)
	srv, dial := inMemoryUpstream(t, func() *mcp.Server { return s })
	r, ctx := startNeverView(t, srv, dial)

	pairs := []*listenPair{
		connectListenPair(t, r, s, "a client listening for tool changes", "", listening),
		connectListenPair(t, r, s, "a client listening for nothing but its resource", "", func() *mcp.ClientOptions { return nil }),
	}
	waitSame(t, "after connecting", pairs, func(p *listenPair, seen []string) bool {
		listens := 1 // its subscription's
		if p == pairs[0] {
			listens = 2 // and the SDK's, for tool changes
		}
		return count(seen, "notifications/subscriptions/acknowledged") == listens
	})
	addTool(s)
	waitSame(t, "after the server added a tool", pairs, func(p *listenPair, seen []string) bool {
		return p == pairs[1] || count(seen, "notifications/tools/list_changed") > 0
	})
	if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "lis://r"}); err != nil {
		t.Fatal(err)
	}
	waitSame(t, "after the server updated lis://r", pairs, func(p *listenPair, seen []string) bool {
		return count(seen, "notifications/resources/updated") > 0
	})
	if testing.Verbose() {
		for _, p := range pairs {
			t.Logf("%s read: %q", p.name, p.through.get())
		}
	}
}

// askEverything makes c's subscriptions/listen ask for every list change
// and lis://r, whatever the server declared.
func askEverything(c *mcp.Client) {
	c.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if lp, ok := req.GetParams().(*mcp.SubscriptionsListenParams); ok && method == "subscriptions/listen" {
				p := *lp
				p.Notifications = &mcp.NotificationSubscriptions{ToolsListChanged: true, PromptsListChanged: true,
					ResourcesListChanged: true, ResourceSubscriptions: []string{"lis://r"}}
				cs, _ := req.GetSession().(*mcp.ClientSession)
				req = &mcp.ClientRequest[mcp.Params]{Session: cs, Params: &p}
			}
			return next(ctx, method, req)
		}
	})
}

// TestNeverViewListenIsAgreedAsTheServer: a prefix: never view answers a
// client on 2026-07-28's server/discover as its server does (serverInfo,
// capabilities, instructions), and a listen asking for more than its
// server declares (list changes of prompts, which it has none of) is
// agreed to what the server would agree to.
func TestNeverViewListenIsAgreedAsTheServer(t *testing.T) {
	t.Parallel()
	s := listenServer(nil)
	srv, dial := inMemoryUpstream(t, func() *mcp.Server { return s })
	r, ctx := startNeverView(t, srv, dial)

	type introduced struct {
		ServerInfo   *mcp.Implementation
		Capabilities *mcp.ServerCapabilities
		Instructions string
		Ack          string
	}
	ack := func(tr mcp.Transport) introduced {
		t.Helper()
		var w wire
		c := mcp.NewClient(&mcp.Implementation{Name: "listen-client", Version: "1"}, listening())
		askEverything(c)
		cs, err := c.Connect(ctx, recordingTransport{Transport: tr, read: w.read}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		waitFor(t, "the listen's acknowledgement", func() bool { return len(w.get()) > 0 })
		ir := cs.InitializeResult()
		return introduced{ir.ServerInfo, ir.Capabilities, ir.Instructions, w.get()[0]}
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	direct := ack(ct)

	ct, st = mcp.NewInMemoryTransports()
	stdioCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.d.gw.ServeStdio(stdioCtx, st)
	}()
	defer func() {
		stop()
		<-done
	}()
	if diff := cmp.Diff(direct, ack(ct)); diff != "" {
		t.Errorf("what the client was told directly (-) and through the gateway (+):\n%s", diff)
	}
}

// startNeverView starts a daemon whose default view is srv (named "lis")
// with prefix: never, and waits for its first connection attempt; the
// context it returns ends with the test, 20 s at most.
func startNeverView(t *testing.T, srv config.Server, opts ...func(*Options)) (*running, context.Context) {
	t.Helper()
	cfg := testConfig(srv)
	cfg.Gateway.Views = []config.View{{Name: config.DefaultViewName, Servers: []string{"lis"}, Prefix: config.PrefixNever}}
	r := start(t, cfg, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	r.d.waitFirstAttempts(ctx)
	return r, ctx
}
