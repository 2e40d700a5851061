package gateway

//lint:file-ignore SA1019 sampling, elicitation, roots and logging are deprecated only from protocol 2026-07-28; clients and servers use them today, and the gateway forwards them.

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// viewServer is the MCP server clients of one view (spec) talk to. Its
// registries mirror the catalog, filtered and renamed for the view, and
// include only servers that are available right now.
type viewServer struct {
	g            *Gateway
	specPtr      atomic.Pointer[viewSpec] // replaced when a reload changes the view
	srv          *mcp.Server
	info         *mcp.Implementation // srv's own serverInfo
	instructions string

	mu        sync.Mutex // serialises sync
	tools     map[string]toolEntry
	prompts   map[string]promptEntry
	resources map[string]resourceEntry // by exposed URI
	templates map[string]resourceEntry // by URI template

	// causes records why the registries changed, for ownedListSending;
	// lastView and lastAvailable are the view and the available servers
	// of the latest sync (nil before the first).
	causes        listCauses
	lastView      *config.View
	lastAvailable map[string]bool
}

type toolEntry struct {
	server, name string
	def          *mcp.Tool // as registered (renamed, described)
	src          *mcp.Tool // the catalog's definition it came from
	// own is the definition a client's own upstream session listed, for
	// a call resolved through its own lists (ownlists.go); nil otherwise.
	own *catalog.Tool
}

type promptEntry struct {
	server, name string
	src          *mcp.Prompt
}

type resourceEntry struct {
	server string
	uri    string // the server's own URI (or URI template)
	src    any    // *mcp.Resource or *mcp.ResourceTemplate
}

// newViewServerLocked builds the server for spec; g.mu is held.
func (g *Gateway) newViewServerLocked(spec viewSpec) *viewServer {
	vs := &viewServer{
		g:            g,
		instructions: g.instructionsLocked(spec),
		tools:        map[string]toolEntry{},
		prompts:      map[string]promptEntry{},
		resources:    map[string]resourceEntry{},
		templates:    map[string]resourceEntry{},
	}
	vs.specPtr.Store(&spec)
	view := spec.view.Name
	vs.info = &mcp.Implementation{Name: "switchboard", Title: "Switchboard gateway (" + view + ")", Version: g.version}
	vs.srv = mcp.NewServer(vs.info, &mcp.ServerOptions{
		Instructions: vs.instructions,
		Logger:       sdkLogger(g.logger.With(logKeyView, view)),
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Completions: &mcp.CompletionCapabilities{},
			Logging:     &mcp.LoggingCapabilities{},
		},
		CompletionHandler:       vs.complete,
		SubscribeHandler:        vs.subscribe,
		RootsListChangedHandler: vs.rootsChanged,
		// A client's progress on a request an upstream sent it.
		ProgressNotificationHandler: g.clientProgress,
		UnsubscribeHandler:          vs.unsubscribe,
		InitializedHandler: func(ctx context.Context, req *mcp.InitializedRequest) {
			vs.causes.start(req.Session) // forgotten in sessionEnded
			cs := sessionOf(ctx)
			if id := req.Session.ID(); cs == nil && id != "" {
				cs = g.sess.get(id)
			}
			if cs == nil {
				g.sessionWatch(view, req.Session) // stdio
				return
			}
			g.noteInitStream(cs, req.Session)
			g.markInitialized(cs, vs)
		},
		KeepAlive: 0,
	})
	vs.srv.AddReceivingMiddleware(vs.serverInfoMiddleware, resultTypeMiddleware, g.sessionMiddleware(vs), vs.setLevelMiddleware, vs.pingMiddleware, vs.asGivenMiddleware, vs.ownListsMiddleware, vs.unlistedMiddleware, vs.asServerMiddleware)
	vs.srv.AddSendingMiddleware(answeredSending, fastSending, notifyAsSending, vs.ownedListSending, g.listenSending)
	vs.srv.AddReceivingMiddleware(g.eng.Tracing().ServerMiddleware) // outermost: its span covers the rest
	return vs
}

// spec returns what the server shows.
func (vs *viewServer) spec() viewSpec { return *vs.specPtr.Load() }

// setView applies a reloaded definition of the server's view; the next
// sync brings the registries (and so the clients) in step.
func (vs *viewServer) setView(v config.View) {
	spec := vs.spec()
	spec.view = v
	vs.specPtr.Store(&spec)
}

// sessionCount returns the number of connected sessions.
func (vs *viewServer) sessionCount() int {
	n := 0
	for range vs.srv.Sessions() {
		n++
	}
	return n
}

// closeSessions ends every session of the server.
func (vs *viewServer) closeSessions() {
	for ss := range vs.srv.Sessions() {
		_ = ss.Close()
	}
}

// sync brings the registries in step with the catalog and the upstreams'
// availability. The SDK batches the resulting list_changed notifications.
func (vs *viewServer) sync(context.Context) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	g, spec := vs.g, vs.spec()
	available := map[string]bool{}
	cfg := g.config()
	for _, s := range cfg.Servers {
		if !spec.hasServer(s.Name) || !s.Enabled {
			continue
		}
		if _, err := g.ups.Client(s.Name); err == nil {
			available[s.Name] = true
		}
	}
	// A change of the view, or of which servers are available, changes
	// what every session lists; any other is a change of the entries of
	// the servers named (listCauses).
	all := vs.lastView == nil || !reflect.DeepEqual(*vs.lastView, spec.view) || !maps.Equal(vs.lastAvailable, available)
	view := spec.view
	vs.lastView, vs.lastAvailable = &view, available
	changed := map[string]bool{}
	recordChange := func(method string) {
		if len(changed) > 0 {
			vs.causes.record(method, changed, all)
			changed = map[string]bool{}
		}
	}

	// Tools.
	want := map[string]toolEntry{}
	for _, t := range g.cat.Tools() {
		if !available[t.Server] || t.Def == nil {
			continue
		}
		name, ok := spec.toolName(t)
		if !ok {
			continue
		}
		if _, dup := want[name]; dup {
			g.logger.Warn("two tools have the same name in a view; keeping the first (rename one)", logKeyView, spec.view.Name, logKeyTool, name)
			continue
		}
		if prev, ok := vs.tools[name]; ok && prev.src == t.Def && prev.server == t.Server && prev.def.Description == spec.description(t) {
			want[name] = prev
			continue
		}
		def := *t.Def
		def.Name = name
		def.Description = spec.description(t)
		def.InputSchema = objectSchema(t.Def.InputSchema)
		want[name] = toolEntry{server: t.Server, name: t.Def.Name, def: &def, src: t.Def}
	}
	var drop []string
	for name, e := range vs.tools {
		if w, ok := want[name]; !ok || w.def != e.def {
			if !ok {
				drop = append(drop, name)
				changed[e.server] = true
			}
		}
	}
	if len(drop) > 0 {
		vs.srv.RemoveTools(drop...)
	}
	for name, e := range want {
		if prev, ok := vs.tools[name]; ok && prev.def == e.def {
			continue
		}
		if prev, ok := vs.tools[name]; ok && sameJSON(prev.def, e.def) {
			want[name] = prev
			continue
		}
		if prev, ok := vs.tools[name]; ok {
			changed[prev.server] = true
		}
		changed[e.server] = true
		vs.addTool(e)
	}
	vs.tools = want
	recordChange("notifications/tools/list_changed")

	// Prompts.
	wantP := map[string]promptEntry{}
	for _, p := range g.cat.Prompts() {
		if !available[p.Server] || p.Def == nil {
			continue
		}
		name := spec.promptName(p)
		if _, dup := wantP[name]; dup {
			continue
		}
		wantP[name] = promptEntry{server: p.Server, name: p.Def.Name, src: p.Def}
	}
	var dropP []string
	for name, e := range vs.prompts {
		if _, ok := wantP[name]; !ok {
			dropP = append(dropP, name)
			changed[e.server] = true
		}
	}
	if len(dropP) > 0 {
		vs.srv.RemovePrompts(dropP...)
	}
	for name, e := range wantP {
		if prev, ok := vs.prompts[name]; ok && prev.server == e.server && (prev.src == e.src || sameJSON(prev.src, e.src)) {
			wantP[name] = prev
			continue
		}
		if prev, ok := vs.prompts[name]; ok {
			changed[prev.server] = true
		}
		changed[e.server] = true
		def := *e.src
		def.Name = name
		vs.srv.AddPrompt(&def, vs.getPrompt(e))
	}
	vs.prompts = wantP
	recordChange("notifications/prompts/list_changed")

	// Resources: URIs pass through unchanged, except that a URI listed by
	// two servers of the view is exposed under switchboard://server/… for
	// every server but the first in configuration order.
	wantR := map[string]resourceEntry{}
	resources := g.cat.Resources()
	order := serverOrder(cfg)
	slices.SortStableFunc(resources, func(a, b catalog.Resource) int { return order[a.Server] - order[b.Server] })
	for _, r := range resources {
		if !available[r.Server] || r.Def == nil {
			continue
		}
		uri := r.Def.URI
		if _, dup := wantR[uri]; dup {
			uri = exposedURI(r.Server, r.Def.URI)
		}
		wantR[uri] = resourceEntry{server: r.Server, uri: r.Def.URI, src: r.Def}
	}
	var dropR []string
	for uri, e := range vs.resources {
		if _, ok := wantR[uri]; !ok {
			dropR = append(dropR, uri)
			changed[e.server] = true
		}
	}
	if len(dropR) > 0 {
		vs.srv.RemoveResources(dropR...)
	}
	for uri, e := range wantR {
		if prev, ok := vs.resources[uri]; ok && prev.server == e.server && (prev.src == e.src || sameJSON(prev.src, e.src)) {
			wantR[uri] = prev
			continue
		}
		if prev, ok := vs.resources[uri]; ok {
			changed[prev.server] = true
		}
		changed[e.server] = true
		def := *e.src.(*mcp.Resource)
		def.URI = uri
		if !safeAdd(func() { vs.srv.AddResource(&def, vs.readResource(e, uri)) }) {
			g.logger.Warn("skipping a resource with an invalid URI", logKeyServer, e.server)
			delete(wantR, uri)
		}
	}
	vs.resources = wantR

	wantT := map[string]resourceEntry{}
	for _, t := range g.cat.ResourceTemplates() {
		if !available[t.Server] || t.Def == nil {
			continue
		}
		if _, dup := wantT[t.Def.URITemplate]; dup {
			continue
		}
		wantT[t.Def.URITemplate] = resourceEntry{server: t.Server, uri: t.Def.URITemplate, src: t.Def}
	}
	var dropT []string
	for u, e := range vs.templates {
		if _, ok := wantT[u]; !ok {
			dropT = append(dropT, u)
			changed[e.server] = true
		}
	}
	if len(dropT) > 0 {
		vs.srv.RemoveResourceTemplates(dropT...)
	}
	for u, e := range wantT {
		if prev, ok := vs.templates[u]; ok && prev.server == e.server && (prev.src == e.src || sameJSON(prev.src, e.src)) {
			wantT[u] = prev
			continue
		}
		if prev, ok := vs.templates[u]; ok {
			changed[prev.server] = true
		}
		changed[e.server] = true
		def := *e.src.(*mcp.ResourceTemplate)
		if !safeAdd(func() { vs.srv.AddResourceTemplate(&def, vs.readTemplate(e)) }) {
			g.logger.Warn("skipping a resource template that does not parse", logKeyServer, e.server)
			delete(wantT, u)
		}
	}
	vs.templates = wantT
	// Resources and their templates share one list_changed.
	recordChange("notifications/resources/list_changed")
	vs.causes.made()
}

// addTool registers e; a definition the SDK refuses is logged and left
// out rather than taking the gateway down.
func (vs *viewServer) addTool(e toolEntry) {
	if !safeAdd(func() { vs.srv.AddTool(e.def, vs.callTool(e)) }) {
		vs.g.logger.Warn("skipping a tool the MCP SDK refuses to serve", logKeyServer, e.server, logKeyTool, e.name)
	}
}

// safeAdd runs an SDK registration, which panics on definitions it deems
// invalid, and reports whether it succeeded.
func safeAdd(f func()) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	f()
	return true
}

// objectSchema returns schema when it is a JSON object schema, which the
// SDK requires of every tool; a server that sends none (or one without
// "type") gets the permissive {"type":"object"} plus what it sent.
func objectSchema(schema any) any {
	m, ok := schema.(map[string]any)
	if !ok {
		raw, err := json.Marshal(schema)
		if err == nil {
			_ = json.Unmarshal(raw, &m)
		}
	}
	if m == nil {
		return map[string]any{"type": "object"}
	}
	if m["type"] == "object" {
		return schema
	}
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out["type"] = "object"
	return out
}

// sameJSON reports whether a and b encode to the same JSON.
func sameJSON(a, b any) bool {
	if reflect.DeepEqual(a, b) {
		return true
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

func serverOrder(cfg *config.Config) map[string]int {
	m := make(map[string]int, len(cfg.Servers))
	for i, s := range cfg.Servers {
		m[s.Name] = i
	}
	return m
}

// Attribute keys used in logs.
const (
	logKeyView   = "view"
	logKeyServer = "server"
	logKeyTool   = "tool"
	logKeyErr    = "err"
	logKeyMethod = "method"
)

// maxServerWait bounds how long a client's initialize of a prefix: never
// view waits for its server's connection, to answer with its identity.
const maxServerWait = 10 * time.Second

// connectWaiter is what the gateway's Upstreams implement when they can
// wait for a server's connection (*upstream.Pool).
type connectWaiter interface {
	WaitConnected(ctx context.Context, name string, d time.Duration) (*upstream.Client, error)
}

// asServerMiddleware makes a prefix: never view, which shows one server
// under that server's own names, introduce itself as that server does:
// its answer to initialize (and to server/discover, protocol 2026-07-28)
// carries the server's serverInfo (name, title, version, icons, website),
// its instructions (after gateway.instructions, if any) and the
// capabilities it declared, and it negotiates the protocol version the
// server would (asServerVersion). Until the server is connected (waited
// for, briefly) the gateway's own are given, and the version is the one
// the gateway negotiates. A subscriptions/listen
// is agreed to what the server's capabilities allow (listen.go).
func (vs *viewServer) asServerMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "subscriptions/listen" {
			if server := vs.soleServer(); server != "" {
				req = vs.narrowListen(server, req)
			}
			return next(ctx, method, req)
		}
		if method != "initialize" && method != "server/discover" {
			return next(ctx, method, req)
		}
		server := vs.soleServer()
		if server == "" {
			return next(ctx, method, req)
		}
		var c *upstream.Client
		if w, ok := vs.g.ups.(connectWaiter); ok {
			c, _ = w.WaitConnected(ctx, server, maxServerWait)
		} else {
			c, _ = vs.g.ups.Client(server)
		}
		if c == nil || c.InitializeResult() == nil {
			return next(ctx, method, req)
		}
		up := c.InitializeResult()
		req, err := asServerVersion(method, req, up.ProtocolVersion, vs.g.config().Gateway.Stateless)
		if err != nil {
			return nil, err
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		vs.g.mu.Lock()
		instructions := vs.g.instructionsLocked(vs.spec())
		vs.g.mu.Unlock()
		switch r := res.(type) {
		case *mcp.InitializeResult:
			out := *r
			if up.ServerInfo != nil {
				info := *up.ServerInfo
				out.ServerInfo = &info
			}
			if up.Capabilities != nil {
				out.Capabilities = up.Capabilities
			}
			out.Instructions = instructions
			return &out, nil
		case *mcp.DiscoverResult:
			out := *r
			if up.ServerInfo != nil {
				// The SDK adds its own serverInfo only where none is.
				info := *up.ServerInfo
				meta := maps.Clone(r.Meta)
				if meta == nil {
					meta = mcp.Meta{}
				}
				meta[mcp.MetaKeyServerInfo] = &info
				out.Meta = meta
			}
			if up.Capabilities != nil {
				out.Capabilities = up.Capabilities
			}
			out.Instructions = instructions
			return &out, nil
		}
		return res, err
	}
}

// soleServer returns the one server a prefix: never view shows ("" for
// any other view).
func (vs *viewServer) soleServer() string {
	spec := vs.spec()
	if spec.prefixed() {
		return ""
	}
	var only string
	for _, s := range vs.g.config().Servers {
		if !s.Enabled || !spec.hasServer(s.Name) {
			continue
		}
		if only != "" {
			return ""
		}
		only = s.Name
	}
	return only
}
