// Package catalog is the merged, namespaced view of every upstream's tools,
// prompts, resources and resource templates.
//
// Discovery fetches all pages of each list from a connected server and
// caches them per server for a TTL (seed 000: 5 minutes); a server's
// `notifications/*/list_changed` refreshes the affected list, a user can
// refresh on demand, and a configuration change drops the cache. Each tool
// gets a client-safe exposed name (`server__tool`, see [ExposedName]) and
// its input schema compiled once; a schema that will not compile is kept and
// flagged, never fatal to discovery. Look-ups work by exposed name or by
// (server, tool).
package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/sync/errgroup"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// Kind is one of the lists a server offers.
type Kind string

// The lists.
const (
	KindTools     Kind = "tools"
	KindPrompts   Kind = "prompts"
	KindResources Kind = "resources" // resources and resource templates
)

// Tool is one upstream tool in the merged view.
type Tool struct {
	Server  string
	Exposed string // client-safe name, unique across servers
	Def     *mcp.Tool
	// Schema is the compiled input schema; nil when it did not compile.
	Schema *jsonschema.Schema
	// SchemaError says why the input schema did not compile ("" if it did).
	SchemaError string
	// OutputSchema is the compiled output schema (output.go); nil when the
	// tool declares none or it did not compile.
	OutputSchema *jsonschema.Schema
	// OutputSchemaError says why a declared output schema did not compile.
	OutputSchemaError string
}

// Prompt is one upstream prompt in the merged view.
type Prompt struct {
	Server  string
	Exposed string
	Def     *mcp.Prompt
}

// Resource is one upstream resource.
type Resource struct {
	Server string
	Def    *mcp.Resource
}

// ResourceTemplate is one upstream resource template.
type ResourceTemplate struct {
	Server string
	Def    *mcp.ResourceTemplate
}

// Source hands out live connections; *upstream.Pool implements it.
type Source interface {
	Client(server string) (*upstream.Client, error)
}

// Options configures a Catalog.
type Options struct {
	Source Source
	// Servers are the configured servers, in order (their load_* flags
	// decide which lists are fetched).
	Servers []config.Server
	// TTL is how long a server's lists stay fresh (default 5 min).
	TTL time.Duration
	// Logger receives discovery problems; nil discards them.
	Logger *slog.Logger
	// OnChange is called after a server's lists change.
	OnChange func(server string, kind Kind)
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Catalog is the merged view. It is safe for concurrent use.
type Catalog struct {
	opts   Options
	logger *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	servers map[string]*entry
	order   []string
	// derived from the entries by rebuildLocked
	tools      []Tool
	byExposed  map[string]int
	byKey      map[Key]int
	prompts    []Prompt
	collisions []Collision

	pending map[pendingKey]bool // lists invalidated, awaiting Run
	wake    chan struct{}
	changed chan struct{}          // closed and replaced whenever a list changes
	timers  map[string]*time.Timer // settle refetches scheduled by Connected
}

type pendingKey struct {
	server string
	kind   Kind
}

type entry struct {
	srv     config.Server
	fetched map[Kind]time.Time
	errs    map[Kind]string
	started map[Kind]uint64 // sequence of the latest fetch started
	applied map[Kind]uint64 // sequence of the fetch whose result is held
	// connected is the sequence of the latest fetch started before the
	// server's latest connection (Connected): a held list with a higher
	// sequence was fetched on that connection.
	connected map[Kind]uint64
	tools     []Tool // Exposed filled by rebuildLocked
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

// New returns an empty catalog for the given servers.
func New(opts Options) *Catalog {
	if opts.TTL <= 0 {
		opts.TTL = config.DefaultDiscoveryTTL
	}
	c := &Catalog{opts: opts, logger: opts.Logger, now: opts.Now, servers: map[string]*entry{},
		pending: map[pendingKey]bool{}, wake: make(chan struct{}, 1), changed: make(chan struct{})}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	for _, s := range opts.Servers {
		c.order = append(c.order, s.Name)
		c.servers[s.Name] = newEntry(s)
	}
	c.rebuildLocked()
	return c
}

func newEntry(s config.Server) *entry {
	return &entry{srv: s, fetched: map[Kind]time.Time{}, errs: map[Kind]string{},
		started: map[Kind]uint64{}, applied: map[Kind]uint64{}, connected: map[Kind]uint64{}}
}

func (e *entry) wants(k Kind) bool {
	switch k {
	case KindTools:
		return e.srv.LoadTools
	case KindPrompts:
		return e.srv.LoadPrompts
	case KindResources:
		return e.srv.LoadResources
	}
	return false
}

// Refresh fetches every enabled list of one server now.
func (c *Catalog) Refresh(ctx context.Context, server string) error {
	var errs []error
	for _, k := range []Kind{KindTools, KindPrompts, KindResources} {
		if err := c.RefreshKind(ctx, server, k); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RefreshAll refreshes every connected server in parallel; servers that are
// not connected are skipped and keep what was cached.
func (c *Catalog) RefreshAll(ctx context.Context) error {
	var g errgroup.Group
	g.SetLimit(8)
	var mu sync.Mutex
	var errs []error
	for _, name := range c.Servers() {
		if _, err := c.opts.Source.Client(name); err != nil {
			continue
		}
		g.Go(func() error {
			if err := c.Refresh(ctx, name); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait()
	return errors.Join(errs...)
}

// RefreshKind fetches one list of one server now (all pages). A server that
// does not declare the capability has an empty list.
func (c *Catalog) RefreshKind(ctx context.Context, server string, kind Kind) error {
	c.mu.Lock()
	e, ok := c.servers[server]
	c.mu.Unlock()
	if !ok {
		return fault.New(fault.NotFound, "no server named %q", server)
	}
	if !e.wants(kind) {
		return nil
	}
	cl, err := c.opts.Source.Client(server)
	if err != nil {
		return err
	}
	c.mu.Lock()
	e.started[kind]++
	seq := e.started[kind]
	c.mu.Unlock()
	caps := cl.Capabilities()
	var (
		tools     []Tool
		prompts   []*mcp.Prompt
		resources []*mcp.Resource
		templates []*mcp.ResourceTemplate
	)
	switch kind {
	case KindTools:
		if caps.Tools != nil {
			defs, lerr := cl.ListTools(ctx)
			err = lerr
			for _, d := range defs {
				tools = append(tools, compileTool(server, d))
			}
		}
	case KindPrompts:
		if caps.Prompts != nil {
			prompts, err = cl.ListPrompts(ctx)
		}
	case KindResources:
		if caps.Resources != nil {
			resources, err = cl.ListResources(ctx)
			if err == nil {
				templates, err = cl.ListResourceTemplates(ctx)
			}
		}
	}
	if err != nil {
		c.mu.Lock()
		e.errs[kind] = fault.As(err).Message
		c.mu.Unlock()
		c.logger.Warn("discovery failed", "server", server, "kind", string(kind), "err", err)
		return err
	}
	c.applyTo(server, e, kind, seq, lists{tools, prompts, resources, templates})
	return nil
}

// lists is the result of one fetch.
type lists struct {
	tools     []Tool
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

// apply stores the result of the fetch numbered seq for the server's
// current entry (see applyTo).
func (c *Catalog) apply(server string, kind Kind, seq uint64, l lists) bool {
	c.mu.Lock()
	e := c.servers[server]
	c.mu.Unlock()
	return c.applyTo(server, e, kind, seq, l)
}

// applyTo stores the result of the fetch numbered seq, made for entry e,
// unless a fetch that started later has already been applied (it saw a
// newer list) or SetServers has removed or replaced e since. It reports
// whether the result was stored.
func (c *Catalog) applyTo(server string, e *entry, kind Kind, seq uint64, l lists) bool {
	c.mu.Lock()
	if e == nil || c.servers[server] != e || seq < e.applied[kind] {
		c.mu.Unlock()
		return false
	}
	e.applied[kind] = seq
	delete(e.errs, kind)
	e.fetched[kind] = c.now()
	switch kind {
	case KindTools:
		e.tools = l.tools
	case KindPrompts:
		e.prompts = l.prompts
	case KindResources:
		e.resources, e.templates = l.resources, l.templates
	}
	c.rebuildLocked()
	ch := c.changed
	c.changed = make(chan struct{})
	c.mu.Unlock()
	close(ch)
	if c.opts.OnChange != nil {
		c.opts.OnChange(server, kind)
	}
	return true
}

// Changed returns a channel that is closed at the next change of any list.
func (c *Catalog) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// Invalidate marks a list of a server as changed; Run refetches it. It
// never blocks, so it is safe to call from a notification handler.
func (c *Catalog) Invalidate(server string, kind Kind) {
	c.mu.Lock()
	c.pending[pendingKey{server, kind}] = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// SettleDelay is when Connected refetches a new connection's lists a
// second time.
const SettleDelay = time.Second

// Connected refetches every list of a server that has just connected, now
// and once more after SettleDelay: servers add tools right after
// initialize, and over streamable HTTP their list_changed can go out before
// the client's event stream is open and be lost. It never blocks.
func (c *Catalog) Connected(server string) {
	c.InvalidateServer(server)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.servers[server]; ok {
		for _, k := range []Kind{KindTools, KindPrompts, KindResources} {
			e.connected[k] = e.started[k]
		}
	}
	if c.timers == nil {
		c.timers = map[string]*time.Timer{}
	}
	if t, ok := c.timers[server]; ok {
		t.Stop()
	}
	c.timers[server] = time.AfterFunc(SettleDelay, func() { c.InvalidateServer(server) })
}

// InvalidateServer marks every list of a server as changed.
func (c *Catalog) InvalidateServer(server string) {
	for _, k := range []Kind{KindTools, KindPrompts, KindResources} {
		c.Invalidate(server, k)
	}
}

// Run refetches invalidated lists until ctx is done. Cancellation is not an
// error.
func (c *Catalog) Run(ctx context.Context) error {
	defer func() {
		c.mu.Lock()
		for _, t := range c.timers {
			t.Stop()
		}
		c.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.wake:
		}
		c.mu.Lock()
		batch := make([]pendingKey, 0, len(c.pending))
		for k := range c.pending {
			batch = append(batch, k)
		}
		clear(c.pending)
		c.mu.Unlock()
		sort.Slice(batch, func(i, j int) bool {
			if batch[i].server != batch[j].server {
				return batch[i].server < batch[j].server
			}
			return batch[i].kind < batch[j].kind
		})
		var g errgroup.Group
		g.SetLimit(8)
		for _, k := range batch {
			g.Go(func() error { _ = c.RefreshKind(ctx, k.server, k.kind); return nil })
		}
		_ = g.Wait()
	}
}

// Drop forgets everything cached for a server (its configuration changed,
// or it was removed).
func (c *Catalog) Drop(server string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.servers[server]; ok {
		started := e.started
		*e = *newEntry(e.srv)
		// Results of fetches under way are stale: move past them.
		for _, k := range []Kind{KindTools, KindPrompts, KindResources} {
			e.started[k] = started[k] + 1
			e.applied[k] = started[k] + 1
			e.connected[k] = started[k] + 1 // nothing held: not fetched since
		}
		c.rebuildLocked()
	}
}

// EnsureFresh refreshes the lists of connected servers whose cache is older
// than the TTL (or was never filled).
func (c *Catalog) EnsureFresh(ctx context.Context) {
	now := c.now()
	var g errgroup.Group
	g.SetLimit(8)
	for _, name := range c.Servers() {
		if _, err := c.opts.Source.Client(name); err != nil {
			continue
		}
		c.mu.Lock()
		e, ok := c.servers[name]
		if !ok { // removed meanwhile
			c.mu.Unlock()
			continue
		}
		var stale []Kind
		for _, k := range []Kind{KindTools, KindPrompts, KindResources} {
			if e.wants(k) && now.Sub(e.fetched[k]) >= c.opts.TTL {
				stale = append(stale, k)
			}
		}
		c.mu.Unlock()
		for _, k := range stale {
			g.Go(func() error { _ = c.RefreshKind(ctx, name, k); return nil })
		}
	}
	_ = g.Wait()
}

// rebuildLocked recomputes exposed names and indexes across all servers.
func (c *Catalog) rebuildLocked() {
	var keys []Key
	for _, name := range c.order {
		for _, t := range c.servers[name].tools {
			keys = append(keys, Key{Server: name, Name: t.Def.Name})
		}
	}
	names, collisions := AssignNames(keys)
	c.tools = c.tools[:0]
	c.byExposed = map[string]int{}
	c.byKey = map[Key]int{}
	for _, name := range c.order {
		for _, t := range c.servers[name].tools {
			k := Key{Server: name, Name: t.Def.Name}
			if _, dup := c.byKey[k]; dup {
				continue // a server listed the same tool twice; keep the first
			}
			t.Exposed = names[k]
			c.byKey[k] = len(c.tools)
			c.byExposed[t.Exposed] = len(c.tools)
			c.tools = append(c.tools, t)
		}
	}
	c.collisions = collisions

	var pkeys []Key
	for _, name := range c.order {
		for _, p := range c.servers[name].prompts {
			pkeys = append(pkeys, Key{Server: name, Name: p.Name})
		}
	}
	pnames, _ := AssignNames(pkeys)
	c.prompts = c.prompts[:0]
	for _, name := range c.order {
		for _, p := range c.servers[name].prompts {
			c.prompts = append(c.prompts, Prompt{Server: name, Exposed: pnames[Key{name, p.Name}], Def: p})
		}
	}
}

// Tools returns every tool, grouped by server in configuration order, each
// server's tools in the order the server listed them.
func (c *Catalog) Tools() []Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Tool(nil), c.tools...)
}

// ServerTools returns the tools of one server.
func (c *Catalog) ServerTools(server string) []Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Tool
	for _, t := range c.tools {
		if t.Server == server {
			out = append(out, t)
		}
	}
	return out
}

// Lookup finds a tool by exposed name.
func (c *Catalog) Lookup(exposed string) (Tool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.byExposed[exposed]
	if !ok {
		return Tool{}, false
	}
	return c.tools[i], true
}

// Tool finds a tool by server and upstream name. The error is of kind
// NotFound and suggests the closest names.
func (c *Catalog) Tool(server, name string) (Tool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.byKey[Key{Server: server, Name: name}]; ok {
		return c.tools[i], nil
	}
	e, ok := c.servers[server]
	if !ok {
		return Tool{}, fault.New(fault.NotFound, "no server named %q", server)
	}
	var names []string
	for _, t := range e.tools {
		names = append(names, t.Def.Name)
	}
	fe := fault.New(fault.NotFound, "server %s has no tool named %q", server, name).
		WithDetail("server", server).WithDetail("tool", name)
	if s := suggest.Closest(name, names, 3); len(s) > 0 {
		fe.WithSuggestions(s...)
		fe.Message += fmt.Sprintf("; did you mean %q?", s[0])
	} else if len(names) > 0 {
		fe.WithSuggestions(fmt.Sprintf("run: switchboard tools %s", server))
	}
	if msg := e.errs[KindTools]; msg != "" {
		fe.WithDetail("discovery_error", msg)
	}
	return Tool{}, fe
}

// FetchTool is Tool, except that when the server has no such tool in a
// list not fetched since the server (re)connected — the list after
// Connected is still to come, or its fetch failed — it fetches the list
// first (bounded by ctx) and looks again: a call made the moment a server
// connects finds the tools it has, as it would talking to the server. A
// miss in a list fetched on the current connection is answered at once,
// so calls of unknown names cost the server no list requests.
func (c *Catalog) FetchTool(ctx context.Context, server, name string) (Tool, error) {
	t, err := c.Tool(server, name)
	if err == nil || fault.KindOf(err) != fault.NotFound {
		return t, err
	}
	c.mu.Lock()
	e, ok := c.servers[server]
	current := ok && e.applied[KindTools] > e.connected[KindTools]
	c.mu.Unlock()
	if !ok || current {
		return t, err
	}
	_ = c.RefreshKind(ctx, server, KindTools) // a failure is in Tool's error (discovery_error)
	return c.Tool(server, name)
}

// Prompts returns every prompt.
func (c *Catalog) Prompts() []Prompt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Prompt(nil), c.prompts...)
}

// Resources returns every resource, by server in configuration order.
func (c *Catalog) Resources() []Resource {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Resource
	for _, name := range c.order {
		for _, r := range c.servers[name].resources {
			out = append(out, Resource{Server: name, Def: r})
		}
	}
	return out
}

// ResourceTemplates returns every resource template.
func (c *Catalog) ResourceTemplates() []ResourceTemplate {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []ResourceTemplate
	for _, name := range c.order {
		for _, r := range c.servers[name].templates {
			out = append(out, ResourceTemplate{Server: name, Def: r})
		}
	}
	return out
}

// Collisions reports exposed-name collisions and how they were resolved.
func (c *Catalog) Collisions() []Collision {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Collision(nil), c.collisions...)
}

// Errors returns the last discovery error of each list of a server.
func (c *Catalog) Errors(server string) map[Kind]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[Kind]string{}
	if e, ok := c.servers[server]; ok {
		for k, v := range e.errs {
			out[k] = v
		}
	}
	return out
}

// Fetched reports when a list of a server was last fetched (zero if never).
func (c *Catalog) Fetched(server string, kind Kind) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.servers[server]; ok {
		return e.fetched[kind]
	}
	return time.Time{}
}

// Servers returns the configured server names in order.
func (c *Catalog) Servers() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.order...)
}

// SetServers replaces the set of servers the catalog covers, for a
// configuration reload. Removed servers' entries are dropped (as Drop);
// added servers are tracked and fetched when they connect (Connected);
// servers whose configuration changed (anything but Pos) lose what was
// cached and are fetched again when their new connection comes up.
// Unchanged servers keep their cache. Exposed names are reassigned across
// the new set, and Changed() is notified once; OnChange is called for each
// list of a removed or changed server.
//
// Added and changed servers that the Source already reports connected are
// fetched at once, so SetServers may be called before or after the pool
// applies the same configuration.
func (c *Catalog) SetServers(servers []config.Server) {
	c.mu.Lock()
	next := make(map[string]*entry, len(servers))
	order := make([]string, 0, len(servers))
	var dropped, fetch []string
	for _, s := range servers {
		if _, dup := next[s.Name]; dup {
			continue // config validation refuses duplicates; keep the first
		}
		order = append(order, s.Name)
		if e, ok := c.servers[s.Name]; ok && sameServer(e.srv, s) {
			next[s.Name] = e
			continue
		}
		if _, ok := c.servers[s.Name]; ok {
			dropped = append(dropped, s.Name)
		}
		// A new entry: fetches under way for the old one are discarded by
		// apply, which checks the entry.
		next[s.Name] = newEntry(s)
		fetch = append(fetch, s.Name)
	}
	for _, name := range c.order {
		if _, ok := next[name]; ok {
			continue
		}
		dropped = append(dropped, name)
		if t, ok := c.timers[name]; ok {
			t.Stop()
			delete(c.timers, name)
		}
	}
	for k := range c.pending {
		if _, ok := next[k.server]; !ok {
			delete(c.pending, k)
		}
	}
	c.servers, c.order = next, order
	c.rebuildLocked()
	ch := c.changed
	c.changed = make(chan struct{})
	c.mu.Unlock()
	close(ch)

	for _, name := range fetch {
		if _, err := c.opts.Source.Client(name); err == nil {
			c.InvalidateServer(name)
		}
	}
	if c.opts.OnChange != nil {
		for _, name := range dropped {
			for _, k := range []Kind{KindTools, KindPrompts, KindResources} {
				c.opts.OnChange(name, k)
			}
		}
	}
}

// sameServer reports whether two resolved servers are the same but for
// where they were defined.
func sameServer(a, b config.Server) bool {
	a.Pos, b.Pos = config.Pos{}, config.Pos{}
	return reflect.DeepEqual(a, b)
}

// SortedTools returns tools sorted by exposed name.
func SortedTools(ts []Tool) []Tool {
	out := append([]Tool(nil), ts...)
	sort.Slice(out, func(i, j int) bool { return out[i].Exposed < out[j].Exposed })
	return out
}

// noLoader refuses every external schema reference: an upstream's schema
// must not make Switchboard read local files or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q is not allowed", url)
}

// compileTool compiles a tool's input schema; failures are recorded on the
// tool, never returned.
func compileTool(server string, def *mcp.Tool) Tool {
	t := Tool{Server: server, Def: def}
	t.compileOutput()
	sch, err := CompileSchema(def.InputSchema)
	if err != nil {
		t.SchemaError = err.Error()
		return t
	}
	t.Schema = sch
	return t
}

// CompileSchema compiles a JSON Schema given as any JSON-marshalable value.
// Drafts 4 to 2020-12 are recognised by $schema; the default is 2020-12.
// External references are refused.
func CompileSchema(schema any) (*jsonschema.Schema, error) {
	if schema == nil {
		return nil, errors.New("tool has no input schema")
	}
	return compileSchema(schema, "input schema", "switchboard:///input-schema.json")
}

// compileSchema compiles a tool's input or output schema (what), which
// must be an object schema, as CompileSchema says.
func compileSchema(schema any, what, loc string) (*jsonschema.Schema, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", what, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", what, err)
	}
	if m, ok := doc.(map[string]any); !ok {
		return nil, fmt.Errorf("%s is a %T, not an object", what, doc)
	} else if typ, ok := m["type"]; ok && typ != "object" {
		return nil, fmt.Errorf("%s type is %v, want \"object\"", what, typ)
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.UseLoader(noLoader{})
	if err := comp.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	sch, err := comp.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("%s does not compile: %w", what, err)
	}
	return sch, nil
}
