package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// A server whose lists depend on its client — on the client's roots, on
// the capabilities it declared (server-everything adds tools for clients
// that can sample, elicit or give roots), on what the client did — lists
// different things to different clients. The catalog holds what the
// shared session lists. A client session whose requests go to an owned
// upstream session of its own (session: per_client, per_user) is given
// that session's lists instead: tools/list, prompts/list, resources/list
// and resources/templates/list answer, for such a server, what its own
// session lists, named and filtered as the view names and filters the
// catalog's, and a tools/call of one of them is checked against the
// definition its own session gave. The owned session is opened at the
// client's first list request (not only at its first call): listing is
// what a client does first, and what it lists must already be its own.
// Its lists are fetched once and again after each of its list_changed
// (SessionNotify).
//
// A prefix: never view of one server lists in the server's own order, as
// the server does; other views sort by name, as the SDK does.

// ownListKey names the lists of one owned upstream session.
type ownListKey struct {
	server string
	key    upstream.SessionKey
}

// ownLists caches the lists of owned upstream sessions.
type ownLists struct {
	mu sync.Mutex
	m  map[ownListKey]*ownList
}

// The kinds of list an owned session's cache holds; a resources
// list_changed covers resource templates too.
const (
	listTools     = "tools"
	listPrompts   = "prompts"
	listResources = "resources"
)

// ownList is what one owned session lists; a kind is fetched on first
// use and again after the session's list_changed of it.
type ownList struct {
	c *upstream.Client
	// keepRaw keeps each page's result as the server wrote it, for a
	// per_client session's client (asgiven.go).
	keepRaw bool

	fetch sync.Mutex // serialises fetching

	mu        sync.Mutex
	gen       map[string]uint64 // bumped by each list_changed
	fetched   map[string]bool
	stable    map[string]bool   // kinds once fetched with no list_changed meanwhile (owninit.go)
	pages     map[string][]page // by list method: the server's pages
	tools     []catalog.Tool
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
	st        startupState // what its client sessions were given (owninit.go)
}

// entry returns the cache of server's owned session key, which is c: a
// new one when the session is new.
func (l *ownLists) entry(server string, key upstream.SessionKey, c *upstream.Client) *ownList {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[ownListKey]*ownList{}
	}
	k := ownListKey{server, key}
	e := l.m[k]
	if e == nil || e.c != c {
		e = &ownList{c: c, keepRaw: key.Mode == config.SessionPerClient,
			gen: map[string]uint64{}, fetched: map[string]bool{}, stable: map[string]bool{}}
		l.m[k] = e
	}
	return e
}

// peek returns the cache of server's owned session key, if it has one.
func (l *ownLists) peek(server string, key upstream.SessionKey) *ownList {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[ownListKey{server, key}]
}

// invalidate marks the list a list_changed (method) of server's owned
// session key names as stale. It never blocks on a fetch: it runs on the
// upstream's reader, which a fetch waits on.
func (l *ownLists) invalidate(server string, key upstream.SessionKey, method string) {
	e := l.peek(server, key)
	if e == nil {
		return
	}
	kind := listKindOf(method)
	e.mu.Lock()
	e.gen[kind]++
	delete(e.fetched, kind)
	e.mu.Unlock()
}

// forget drops what the lists of every owned session know of client
// session ss, which ended.
func (l *ownLists) forget(ss *mcp.ServerSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.m {
		e.forget(ss)
	}
}

// drop forgets the lists of the owned sessions of owner id (a client
// session's key, or a user none of whose sessions is left).
func (l *ownLists) drop(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.m {
		if k.key.ID == id {
			delete(l.m, k)
		}
	}
}

// load fetches kind from the session unless it is fresh.
func (e *ownList) load(ctx context.Context, server, kind string) error {
	e.fetch.Lock()
	defer e.fetch.Unlock()
	e.mu.Lock()
	fresh, gen := e.fetched[kind], e.gen[kind]
	e.mu.Unlock()
	if fresh {
		return nil
	}
	var (
		tools     []catalog.Tool
		prompts   []*mcp.Prompt
		resources []*mcp.Resource
		templates []*mcp.ResourceTemplate
		pages     = map[string][]page{}
		sum       uint64
		err       error
	)
	switch kind {
	case listTools:
		var defs []*mcp.Tool
		if defs, pages["tools/list"], err = fetchPages(ctx, "tools/list", e.keepRaw, e.c.ListToolsPage); err == nil {
			sum = listDigest(defs)
			for _, d := range defs {
				tools = append(tools, catalog.CompileTool(server, d))
			}
		}
	case listPrompts:
		prompts, pages["prompts/list"], err = fetchPages(ctx, "prompts/list", e.keepRaw, e.c.ListPromptsPage)
		sum = listDigest(prompts)
	case listResources:
		if resources, pages["resources/list"], err = fetchPages(ctx, "resources/list", e.keepRaw, e.c.ListResourcesPage); err == nil {
			templates, pages["resources/templates/list"], err = fetchPages(ctx, "resources/templates/list", e.keepRaw, e.c.ListResourceTemplatesPage)
			sum = listDigest(resources, templates)
		}
	}
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch kind {
	case listTools:
		e.tools = tools
	case listPrompts:
		e.prompts = prompts
	case listResources:
		e.resources, e.templates = resources, templates
	}
	if e.pages == nil {
		e.pages = map[string][]page{}
	}
	for m, p := range pages {
		e.pages[m] = p
	}
	if e.st.sum == nil {
		e.st.sum = map[string]uint64{}
	}
	e.st.sum[kind] = sum
	if e.gen[kind] == gen {
		e.fetched[kind] = true // else changed meanwhile: fetched again next time
		e.stable[kind] = true
	}
	return nil
}

// loadStable is load, fetching again (a few times at most) while the
// session says the list changed during the fetch, until the list has
// once been fetched whole after every change it announced: its owner may
// not be told of those (owninit.go), so what it is given first must
// already have them.
func (e *ownList) loadStable(ctx context.Context, server, kind string) error {
	for range maxStableFetches {
		if err := e.load(ctx, server, kind); err != nil {
			return err
		}
		e.mu.Lock()
		stable := e.stable[kind]
		e.mu.Unlock()
		if stable {
			return nil
		}
	}
	return nil
}

// maxStableFetches bounds loadStable's fetches.
const maxStableFetches = 3

// page is one page of a list as the server gave it: the cursor that
// asked for it ("" the first), the server's cursor of the next ("" after
// the last), where its entries lie in the whole list, and (when kept)
// its result as the server wrote it.
type page struct {
	cursor, next string
	lo, hi       int
	raw          json.RawMessage
}

// fetchPages lists every page get gives (a list method's), following the
// server's cursors, and returns the entries (nil ones left out) and the
// pages, each with its result as the server wrote it if keepRaw.
func fetchPages[T comparable](ctx context.Context, method string, keepRaw bool, get func(context.Context, string) ([]T, string, error)) ([]T, []page, error) {
	var (
		all   []T
		pages []page
		zero  T
	)
	seen := map[string]bool{}
	cursor := ""
	for {
		pctx, capt := ctx, (*upstream.ResultCapture)(nil)
		if keepRaw {
			pctx, capt = upstream.CaptureResult(ctx, method)
		}
		items, next, err := get(pctx, cursor)
		if err != nil {
			return nil, nil, err
		}
		lo := len(all)
		for _, it := range items {
			if it != zero {
				all = append(all, it)
			}
		}
		pages = append(pages, page{cursor: cursor, next: next, lo: lo, hi: len(all), raw: rawPage(capt)})
		if next == "" {
			return all, pages, nil
		}
		if seen[next] {
			return nil, nil, fmt.Errorf("the server gave the cursor %q twice: its pages go round in a circle", next)
		}
		seen[next] = true
		cursor = next
	}
}

// snapshot returns what e holds of kind, and whether it was fetched.
func (e *ownList) snapshot() (tools []catalog.Tool, prompts []*mcp.Prompt, resources []*mcp.Resource, templates []*mcp.ResourceTemplate, fetched map[string]bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f := make(map[string]bool, len(e.fetched))
	for k, v := range e.fetched {
		f[k] = v
	}
	return e.tools, e.prompts, e.resources, e.templates, f
}

// listKind is the kind of list each list method reads.
var listKind = map[string]string{
	"tools/list":               listTools,
	"prompts/list":             listPrompts,
	"resources/list":           listResources,
	"resources/templates/list": listResources,
}

// ownedServer is a server of the view whose lists, for one client
// session, are its own session's.
type ownedServer struct {
	server string
	key    upstream.SessionKey
	list   *ownList
}

// ownedKey is the key of the owned session of client session ss on srv
// ("" ID when ss has made no request yet).
func (g *Gateway) ownedKey(srv config.Server, ss *mcp.ServerSession) (upstream.SessionKey, bool) {
	key, user, ok := g.owners.key(ss)
	if !ok {
		return upstream.SessionKey{}, false
	}
	k := upstream.SessionKey{Mode: srv.Session, ID: key}
	if srv.Session == config.SessionPerUser {
		k.ID = user
	}
	return k, true
}

// ownServers returns the servers of the view that have owned sessions
// and are available; none for a request without a lasting session.
func (vs *viewServer) ownServers(ss *mcp.ServerSession) []config.Server {
	cfg := vs.g.config()
	if ss == nil || cfg.Gateway.Stateless {
		return nil
	}
	spec := vs.spec()
	var out []config.Server
	for _, s := range cfg.Servers {
		if !s.Enabled || !s.Session.Owned() || !spec.hasServer(s.Name) {
			continue
		}
		if _, err := vs.g.ups.Client(s.Name); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// openOwnLists returns, for a list request of kind in client session ss,
// the view's servers whose lists are ss's own, each with its lists of
// kind loaded: its owned session is opened if it is not open yet. A
// server whose owned session cannot be opened (max_sessions, say) is
// listed from the catalog, as before the session exists.
func (vs *viewServer) openOwnLists(ctx context.Context, req mcp.Request, kind string) []ownedServer {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	servers := vs.ownServers(ss)
	if len(servers) == 0 {
		return nil
	}
	var meta mcp.Meta
	if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
		meta = p.GetMeta() // a list request's params may be a typed nil
	}
	octx := vs.owned(ctx, req.GetExtra(), meta, ss)
	var out []ownedServer
	for _, s := range servers {
		c, err := vs.g.upstreamFor(octx, s.Name)
		if err != nil {
			vs.g.logger.Debug("listing from the catalog: the client's own upstream session did not open", logKeyServer, s.Name, logKeyErr, err)
			continue
		}
		key, ok := vs.g.ownedKey(s, ss)
		if !ok {
			continue
		}
		e := vs.g.ownLists.entry(s.Name, key, c)
		e.listedBy(ss)
		if err := e.loadStable(ctx, s.Name, kind); err != nil {
			vs.g.logger.Debug("listing from the catalog: the client's own upstream session did not list", logKeyServer, s.Name, logKeyErr, err)
			continue
		}
		e.gave(ss, kind)
		out = append(out, ownedServer{server: s.Name, key: key, list: e})
	}
	return out
}

// ownListsMiddleware answers the list requests of client sessions with
// owned upstream sessions from those sessions' lists, lists a prefix:
// never view of one server in the server's order, and sends the
// prompts/get and resources/read of entries only a session's own lists
// have to its own session. tools/call resolves names through ownTool.
func (vs *viewServer) ownListsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		kind, isList := listKind[method]
		switch {
		case isList:
			return vs.list(ctx, method, kind, req, next)
		case method == "tools/call":
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				if e, own := vs.ownTool(r.Session, r.Params.Name); own {
					return vs.callTool(e)(ctx, r)
				}
			}
		case method == "prompts/get":
			if r, ok := req.(*mcp.GetPromptRequest); ok && r.Params != nil {
				if e, own := vs.ownPrompt(r.Session, r.Params.Name); own {
					return vs.getPrompt(e)(ctx, r)
				}
			}
		case method == "resources/read":
			if r, ok := req.(*mcp.ReadResourceRequest); ok && r.Params != nil {
				if e, own := vs.ownResource(r.Session, r.Params.URI); own {
					return vs.readResource(e, e.uri)(ctx, r)
				}
			}
		}
		return next(ctx, method, req)
	}
}

// list answers a list request (method, of kind): the SDK's answer from
// the view's registries, with the entries of servers whose lists are the
// session's own replaced by that session's, in the server's order for a
// prefix: never view of one server, else by name.
func (vs *viewServer) list(ctx context.Context, method, kind string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	if ss, _ := req.GetSession().(*mcp.ServerSession); ss != nil && !vs.g.config().Gateway.Stateless {
		vs.causes.gave(ss, "notifications/"+kind+"/list_changed") // listcauses.go
	}
	sole, cursor := vs.soleServer(), listCursor(req.GetParams())
	if cursor != "" && sole == "" {
		return next(ctx, method, req) // a page the SDK gave: it goes on
	}
	own := vs.openOwnLists(ctx, req, kind)
	for _, o := range own {
		if o.server == sole {
			return vs.ownPage(ctx, req, method, cursor, o)
		}
	}
	if cursor != "" {
		return next(ctx, method, req)
	}
	if sole == "" && len(own) == 0 {
		return next(ctx, method, req)
	}
	res, err := next(ctx, method, req)
	if err != nil {
		return res, err
	}
	ownBy := map[string]ownedServer{}
	for _, o := range own {
		ownBy[o.server] = o
	}
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		if r.NextCursor != "" {
			return res, nil
		}
		out := *r
		out.Tools = vs.ownToolList(r.Tools, ownBy, sole)
		return &out, nil
	case *mcp.ListPromptsResult:
		if r.NextCursor != "" {
			return res, nil
		}
		out := *r
		out.Prompts = vs.ownPromptList(r.Prompts, ownBy, sole)
		return &out, nil
	case *mcp.ListResourcesResult:
		if r.NextCursor != "" {
			return res, nil
		}
		out := *r
		out.Resources = vs.ownResourceList(r.Resources, ownBy, sole)
		return &out, nil
	case *mcp.ListResourceTemplatesResult:
		if r.NextCursor != "" {
			return res, nil
		}
		out := *r
		out.ResourceTemplates = vs.ownTemplateList(r.ResourceTemplates, ownBy, sole)
		return &out, nil
	}
	return res, nil
}

// protocolCacheDefault is the cache hint of a page the gateway builds
// itself: the go-sdk's types always send ttlMs and cacheScope, and an
// empty cacheScope is no value the protocol allows. The protocol's
// defaults (0, "public") are what the SDK's own answers carry where the
// server gave none (the upstream client does not keep the server's).
var protocolCacheDefault = mcp.Cacheable{CacheScope: "public"}

// ownPage answers a list request (method, with cursor) of a prefix: never
// view of one server, o, from its client's own upstream session: the page
// the cursor names, with the server's cursor of the next, as the server
// gave them to the session, named and filtered as the view names and
// filters entries. A cursor of a list since replaced (the server said it
// changed) is passed to the server, which answers it as it would the
// client directly. A page the view shows whole and unchanged reaches a
// per_client session's client as the server wrote it (asgiven.go).
func (vs *viewServer) ownPage(ctx context.Context, req mcp.Request, method, cursor string, o ownedServer) (mcp.Result, error) {
	e := o.list
	e.mu.Lock()
	var (
		pg    page
		found bool
	)
	for _, p := range e.pages[method] {
		if p.cursor == cursor {
			pg, found = p, true
			break
		}
	}
	var (
		tools     []catalog.Tool
		prompts   []*mcp.Prompt
		resources []*mcp.Resource
		templates []*mcp.ResourceTemplate
	)
	if found {
		switch method {
		case "tools/list":
			tools = slices.Clone(e.tools[pg.lo:pg.hi])
		case "prompts/list":
			prompts = slices.Clone(e.prompts[pg.lo:pg.hi])
		case "resources/list":
			resources = slices.Clone(e.resources[pg.lo:pg.hi])
		case "resources/templates/list":
			templates = slices.Clone(e.templates[pg.lo:pg.hi])
		}
	}
	e.mu.Unlock()
	var err error
	if !found {
		var capt *upstream.ResultCapture
		if e.keepRaw {
			ctx, capt = upstream.CaptureResult(ctx, method)
		}
		switch method {
		case "tools/list":
			var defs []*mcp.Tool
			if defs, pg.next, err = e.c.ListToolsPage(ctx, cursor); err == nil {
				for _, d := range defs {
					if d != nil {
						tools = append(tools, catalog.CompileTool(o.server, d))
					}
				}
			}
		case "prompts/list":
			prompts, pg.next, err = e.c.ListPromptsPage(ctx, cursor)
		case "resources/list":
			resources, pg.next, err = e.c.ListResourcesPage(ctx, cursor)
		case "resources/templates/list":
			templates, pg.next, err = e.c.ListResourceTemplatesPage(ctx, cursor)
		}
		if err != nil {
			return nil, upstreamError(o.server, err)
		}
		pg.raw = rawPage(capt)
	}
	spec := vs.spec()
	var (
		out       mcp.Result
		unchanged = true // every entry shown as the server listed it
	)
	switch method {
	case "tools/list":
		r := &mcp.ListToolsResult{Cacheable: protocolCacheDefault, Tools: []*mcp.Tool{}, NextCursor: pg.next}
		for _, t := range tools {
			te, ok := vs.ownViewTool(spec, t)
			if ok {
				r.Tools = append(r.Tools, te.def)
			}
			unchanged = unchanged && ok && te.def.Name == t.Def.Name && te.def.Description == t.Def.Description
		}
		out = r
	case "prompts/list":
		r := &mcp.ListPromptsResult{Cacheable: protocolCacheDefault, Prompts: []*mcp.Prompt{}, NextCursor: pg.next}
		for _, p := range prompts {
			if p == nil {
				continue
			}
			def := *p
			def.Name = vs.ownPromptName(spec, o.server, p.Name)
			unchanged = unchanged && def.Name == p.Name
			r.Prompts = append(r.Prompts, &def)
		}
		out = r
	case "resources/list":
		r := &mcp.ListResourcesResult{Cacheable: protocolCacheDefault, Resources: []*mcp.Resource{}, NextCursor: pg.next}
		for _, res := range resources {
			if res == nil {
				continue
			}
			def := *res
			def.URI = vs.ownResourceURI(o.server, res.URI)
			unchanged = unchanged && def.URI == res.URI
			r.Resources = append(r.Resources, &def)
		}
		out = r
	default:
		r := &mcp.ListResourceTemplatesResult{Cacheable: protocolCacheDefault, ResourceTemplates: []*mcp.ResourceTemplate{}, NextCursor: pg.next}
		for _, t := range templates {
			if t != nil {
				r.ResourceTemplates = append(r.ResourceTemplates, t)
			}
		}
		out = r
	}
	if given, ok := vs.pageAsGiven(req, o, pg, unchanged); ok {
		return given, nil
	}
	return out, nil
}

// ownViewTool is tool t of an owned session as the view shows it, and
// whether it shows it.
func (vs *viewServer) ownViewTool(spec viewSpec, t catalog.Tool) (toolEntry, bool) {
	exposed := catalog.ExposedName(t.Server, t.Def.Name)
	if ct, err := vs.g.cat.Tool(t.Server, t.Def.Name); err == nil {
		exposed = ct.Exposed
	}
	ct := catalog.Tool{Server: t.Server, Exposed: exposed, Def: t.Def}
	name, ok := spec.toolName(ct)
	if !ok {
		return toolEntry{}, false
	}
	def := *t.Def
	def.Name = name
	def.Description = spec.description(ct)
	def.InputSchema = objectSchema(t.Def.InputSchema)
	own := t
	own.Exposed = exposed
	return toolEntry{server: t.Server, name: t.Def.Name, def: &def, src: t.Def, own: &own}, true
}

// ownToolList is the tools/list of a session: sdk's, with the tools of
// the servers in own replaced by their sessions' own.
func (vs *viewServer) ownToolList(sdk []*mcp.Tool, own map[string]ownedServer, sole string) []*mcp.Tool {
	spec := vs.spec()
	vs.mu.Lock()
	entries := vs.tools
	vs.mu.Unlock()
	var out []*mcp.Tool
	seen := map[string]bool{}
	for _, t := range sdk {
		if e, ok := entries[t.Name]; ok {
			if _, mine := own[e.server]; mine {
				continue
			}
		}
		out = append(out, t)
		seen[t.Name] = true
	}
	byServer := map[string][]*mcp.Tool{}
	for _, o := range own {
		tools, _, _, _, _ := o.list.snapshot()
		for _, t := range tools {
			e, ok := vs.ownViewTool(spec, t)
			if !ok || seen[e.def.Name] {
				continue
			}
			seen[e.def.Name] = true
			byServer[o.server] = append(byServer[o.server], e.def)
		}
	}
	if sole != "" {
		if mine, ok := byServer[sole]; ok {
			return mine // as the session listed them
		}
		return inServerOrder(out, func(t *mcp.Tool) string { return t.Name }, vs.catalogToolOrder(spec, sole))
	}
	for _, o := range own {
		out = append(out, byServer[o.server]...)
	}
	slices.SortFunc(out, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ownPromptList is ownToolList for prompts.
func (vs *viewServer) ownPromptList(sdk []*mcp.Prompt, own map[string]ownedServer, sole string) []*mcp.Prompt {
	spec := vs.spec()
	vs.mu.Lock()
	entries := vs.prompts
	vs.mu.Unlock()
	var out []*mcp.Prompt
	seen := map[string]bool{}
	for _, p := range sdk {
		if e, ok := entries[p.Name]; ok {
			if _, mine := own[e.server]; mine {
				continue
			}
		}
		out = append(out, p)
		seen[p.Name] = true
	}
	byServer := map[string][]*mcp.Prompt{}
	for _, o := range own {
		_, prompts, _, _, _ := o.list.snapshot()
		for _, p := range prompts {
			if p == nil {
				continue
			}
			def := *p
			def.Name = vs.ownPromptName(spec, o.server, p.Name)
			if seen[def.Name] {
				continue
			}
			seen[def.Name] = true
			byServer[o.server] = append(byServer[o.server], &def)
		}
	}
	if sole != "" {
		if mine, ok := byServer[sole]; ok {
			return mine
		}
		var order []string
		for _, p := range vs.g.cat.Prompts() {
			if p.Server == sole && p.Def != nil {
				order = append(order, spec.promptName(p))
			}
		}
		return inServerOrder(out, func(p *mcp.Prompt) string { return p.Name }, order)
	}
	for _, o := range own {
		out = append(out, byServer[o.server]...)
	}
	slices.SortFunc(out, func(a, b *mcp.Prompt) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ownPromptName is the name prompt name of server has in the view.
func (vs *viewServer) ownPromptName(spec viewSpec, server, name string) string {
	exposed := catalog.ExposedName(server, name)
	for _, p := range vs.g.cat.Prompts() {
		if p.Server == server && p.Def != nil && p.Def.Name == name {
			exposed = p.Exposed
			break
		}
	}
	return spec.promptName(catalog.Prompt{Server: server, Exposed: exposed, Def: &mcp.Prompt{Name: name}})
}

// ownResourceURI is the URI under which resource uri of server is shown
// in the view: its own, unless another server of the view has it.
func (vs *viewServer) ownResourceURI(server, uri string) string {
	vs.mu.Lock()
	e, ok := vs.resources[uri]
	vs.mu.Unlock()
	if ok && e.server != server {
		return exposedURI(server, uri)
	}
	return uri
}

// ownResourceList is ownToolList for resources.
func (vs *viewServer) ownResourceList(sdk []*mcp.Resource, own map[string]ownedServer, sole string) []*mcp.Resource {
	vs.mu.Lock()
	entries := vs.resources
	vs.mu.Unlock()
	var out []*mcp.Resource
	seen := map[string]bool{}
	for _, r := range sdk {
		if e, ok := entries[r.URI]; ok {
			if _, mine := own[e.server]; mine {
				continue
			}
		}
		out = append(out, r)
		seen[r.URI] = true
	}
	byServer := map[string][]*mcp.Resource{}
	for _, o := range own {
		_, _, resources, _, _ := o.list.snapshot()
		for _, r := range resources {
			if r == nil {
				continue
			}
			def := *r
			def.URI = vs.ownResourceURI(o.server, r.URI)
			if seen[def.URI] {
				continue
			}
			seen[def.URI] = true
			byServer[o.server] = append(byServer[o.server], &def)
		}
	}
	if sole != "" {
		if mine, ok := byServer[sole]; ok {
			return mine
		}
		var order []string
		for _, r := range vs.g.cat.Resources() {
			if r.Server == sole && r.Def != nil {
				order = append(order, r.Def.URI)
			}
		}
		return inServerOrder(out, func(r *mcp.Resource) string { return r.URI }, order)
	}
	for _, o := range own {
		out = append(out, byServer[o.server]...)
	}
	slices.SortFunc(out, func(a, b *mcp.Resource) int { return strings.Compare(a.URI, b.URI) })
	return out
}

// ownTemplateList is ownToolList for resource templates.
func (vs *viewServer) ownTemplateList(sdk []*mcp.ResourceTemplate, own map[string]ownedServer, sole string) []*mcp.ResourceTemplate {
	vs.mu.Lock()
	entries := vs.templates
	vs.mu.Unlock()
	var out []*mcp.ResourceTemplate
	seen := map[string]bool{}
	for _, t := range sdk {
		if e, ok := entries[t.URITemplate]; ok {
			if _, mine := own[e.server]; mine {
				continue
			}
		}
		out = append(out, t)
		seen[t.URITemplate] = true
	}
	byServer := map[string][]*mcp.ResourceTemplate{}
	for _, o := range own {
		_, _, _, templates, _ := o.list.snapshot()
		for _, t := range templates {
			if t == nil || seen[t.URITemplate] {
				continue
			}
			seen[t.URITemplate] = true
			byServer[o.server] = append(byServer[o.server], t)
		}
	}
	if sole != "" {
		if mine, ok := byServer[sole]; ok {
			return mine
		}
		var order []string
		for _, t := range vs.g.cat.ResourceTemplates() {
			if t.Server == sole && t.Def != nil {
				order = append(order, t.Def.URITemplate)
			}
		}
		return inServerOrder(out, func(t *mcp.ResourceTemplate) string { return t.URITemplate }, order)
	}
	for _, o := range own {
		out = append(out, byServer[o.server]...)
	}
	slices.SortFunc(out, func(a, b *mcp.ResourceTemplate) int { return strings.Compare(a.URITemplate, b.URITemplate) })
	return out
}

// catalogToolOrder is the view's names of server's tools in the order
// the server listed them.
func (vs *viewServer) catalogToolOrder(spec viewSpec, server string) []string {
	var order []string
	for _, t := range vs.g.cat.ServerTools(server) {
		if t.Def == nil {
			continue
		}
		if name, ok := spec.toolName(t); ok {
			order = append(order, name)
		}
	}
	return order
}

// inServerOrder returns items ordered as order names them (a server's own
// order); items order does not name keep their place after those.
func inServerOrder[T any](items []T, name func(T) string, order []string) []T {
	idx := make(map[string]int, len(order))
	for i, n := range order {
		if _, dup := idx[n]; !dup {
			idx[n] = i
		}
	}
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b T) int {
		ia, oka := idx[name(a)]
		ib, okb := idx[name(b)]
		switch {
		case oka && okb:
			return ia - ib
		case oka:
			return -1
		case okb:
			return 1
		}
		return 0
	})
	return out
}

// listCursor is the cursor of a list request's params ("" for the first
// page).
func listCursor(p mcp.Params) string {
	switch p := p.(type) {
	case *mcp.ListToolsParams:
		if p != nil {
			return p.Cursor
		}
	case *mcp.ListPromptsParams:
		if p != nil {
			return p.Cursor
		}
	case *mcp.ListResourcesParams:
		if p != nil {
			return p.Cursor
		}
	case *mcp.ListResourceTemplatesParams:
		if p != nil {
			return p.Cursor
		}
	}
	return ""
}

// ownList returns the lists of client session ss's own upstream session
// on server, as far as they were fetched (nil if none was).
func (vs *viewServer) ownListOf(ss *mcp.ServerSession, srv config.Server) *ownList {
	key, ok := vs.g.ownedKey(srv, ss)
	if !ok {
		return nil
	}
	return vs.g.ownLists.peek(srv.Name, key)
}

// ownTool resolves a tool name of client session ss among the tools its
// own upstream sessions listed to it (in its latest tools/list): the
// entry to call, with the session's definition to check the call
// against. false when ss has no such list, or it has no such name: the
// view's registry (the catalog's) then answers.
func (vs *viewServer) ownTool(ss *mcp.ServerSession, name string) (toolEntry, bool) {
	spec := vs.spec()
	for _, s := range vs.ownServers(ss) {
		e := vs.ownListOf(ss, s)
		if e == nil {
			continue
		}
		tools, _, _, _, fetched := e.snapshot()
		if !fetched[listTools] {
			continue
		}
		for _, t := range tools {
			if te, ok := vs.ownViewTool(spec, t); ok && te.def.Name == name {
				return te, true
			}
		}
	}
	return toolEntry{}, false
}

// ownPrompt resolves a prompt name of client session ss that only its own
// upstream sessions' lists have.
func (vs *viewServer) ownPrompt(ss *mcp.ServerSession, name string) (promptEntry, bool) {
	vs.mu.Lock()
	_, registered := vs.prompts[name]
	vs.mu.Unlock()
	if registered {
		return promptEntry{}, false
	}
	spec := vs.spec()
	for _, s := range vs.ownServers(ss) {
		e := vs.ownListOf(ss, s)
		if e == nil {
			continue
		}
		_, prompts, _, _, fetched := e.snapshot()
		if !fetched[listPrompts] {
			continue
		}
		for _, p := range prompts {
			if p != nil && vs.ownPromptName(spec, s.Name, p.Name) == name {
				return promptEntry{server: s.Name, name: p.Name, src: p}, true
			}
		}
	}
	return promptEntry{}, false
}

// ownResource resolves a resource URI of client session ss that only its
// own upstream sessions' lists have.
func (vs *viewServer) ownResource(ss *mcp.ServerSession, uri string) (resourceEntry, bool) {
	if _, ok := vs.routeURI(uri); ok {
		return resourceEntry{}, false
	}
	for _, s := range vs.ownServers(ss) {
		e := vs.ownListOf(ss, s)
		if e == nil {
			continue
		}
		_, _, resources, _, fetched := e.snapshot()
		if !fetched[listResources] {
			continue
		}
		for _, r := range resources {
			if r != nil && vs.ownResourceURI(s.Name, r.URI) == uri {
				return resourceEntry{server: s.Name, uri: r.URI, src: r}, true
			}
		}
	}
	return resourceEntry{}, false
}
