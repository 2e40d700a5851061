package control

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// connectWait bounds how long Prompt and ReadResource wait for a server
// that is connecting.
const connectWait = 30 * time.Second

// scope checks server ("" for all) and makes the lists fresh.
func (l *local) scope(ctx context.Context, server string) error {
	cfg, err := l.config()
	if err != nil {
		return err
	}
	if l.c.Pool == nil || l.c.Catalog == nil {
		return missing("servers")
	}
	if server != "" {
		if _, ok := cfg.Server(server); !ok {
			return upstream.UnknownServer(cfg, server)
		}
	}
	l.c.Catalog.EnsureFresh(ctx)
	return nil
}

// unavailable says, a line each, why the servers in scope that are not
// connected are not: the enabled ones, and the one server asked for even
// when it is disabled (the line says so, and how to enable it).
func (l *local) unavailable(server string) []string {
	var out []string
	for _, snap := range l.c.Pool.Snapshots() {
		if (server == "" && !snap.Enabled) || (server != "" && snap.Server != server) {
			continue
		}
		_, err := l.c.Pool.Client(snap.Server)
		if err == nil && !snap.Enabled {
			// Disabled a moment ago: it is still disconnecting.
			err = fault.New(fault.Connection, "server %s is disabled", snap.Server).
				WithSuggestions(fmt.Sprintf("run: switchboard servers enable %s", snap.Server))
		}
		if err != nil {
			line := err.Error()
			if fe := fault.As(err); fe != nil {
				for _, s := range fe.Suggestions {
					line += "\n  hint: " + s
				}
			}
			out = append(out, line)
		}
	}
	return out
}

// disabled returns the servers that are disabled. Their tools, prompts
// and resources stay in the catalog from before (so that enabling one
// again shows them at once), but a listing leaves them out, as the
// gateway does: they cannot be used.
func (l *local) disabled() map[string]bool {
	out := map[string]bool{}
	for _, snap := range l.c.Pool.Snapshots() {
		if !snap.Enabled {
			out[snap.Server] = true
		}
	}
	return out
}

// Prompts implements Backend.
func (l *local) Prompts(ctx context.Context, server string) (PromptList, error) {
	if err := l.scope(ctx, server); err != nil {
		return PromptList{}, err
	}
	list := PromptList{Prompts: []PromptInfo{}}
	off := l.disabled()
	for _, p := range l.c.Catalog.Prompts() {
		if (server == "" || p.Server == server) && !off[p.Server] {
			list.Prompts = append(list.Prompts, PromptInfo{Server: p.Server, Prompt: p.Def})
		}
	}
	list.Unavailable = l.unavailable(server)
	return list, nil
}

// Prompt implements Backend.
func (l *local) Prompt(ctx context.Context, req PromptRequest) (*mcp.GetPromptResult, error) {
	if req.Server == "" || req.Name == "" {
		return nil, fault.New(fault.Validation, "a prompt needs a server and a name")
	}
	if err := l.scope(ctx, req.Server); err != nil {
		return nil, err
	}
	c, err := l.c.Pool.WaitConnected(ctx, req.Server, connectWait)
	if err != nil {
		return nil, err
	}
	// Check the name and required arguments first, for a clear message.
	var names []string
	found := false
	for _, p := range l.c.Catalog.Prompts() {
		if p.Server != req.Server {
			continue
		}
		names = append(names, p.Def.Name)
		if p.Def.Name != req.Name {
			continue
		}
		found = true
		for _, arg := range p.Def.Arguments {
			if _, ok := req.Arguments[arg.Name]; arg.Required && !ok {
				return nil, fault.New(fault.Validation, "prompt %s needs argument %s", req.Name, arg.Name).
					WithDetail("field", arg.Name).
					WithSuggestions(fmt.Sprintf("add %s=… (%s)", arg.Name, firstLine(arg.Description, 60)))
			}
		}
	}
	if !found && len(names) > 0 {
		return nil, fault.New(fault.NotFound, "server %s has no prompt named %q", req.Server, req.Name).
			WithSuggestions(suggest.Closest(req.Name, names, 3)...)
	}
	return c.GetPrompt(ctx, req.Name, req.Arguments)
}

// Resources implements Backend.
func (l *local) Resources(ctx context.Context, server string) (ResourceList, error) {
	if err := l.scope(ctx, server); err != nil {
		return ResourceList{}, err
	}
	list := ResourceList{Resources: []ResourceInfo{}, Templates: []TemplateInfo{}}
	off := l.disabled()
	for _, r := range l.c.Catalog.Resources() {
		if (server == "" || r.Server == server) && !off[r.Server] {
			list.Resources = append(list.Resources, ResourceInfo{Server: r.Server, Resource: r.Def})
		}
	}
	for _, t := range l.c.Catalog.ResourceTemplates() {
		if (server == "" || t.Server == server) && !off[t.Server] {
			list.Templates = append(list.Templates, TemplateInfo{Server: t.Server, ResourceTemplate: t.Def})
		}
	}
	list.Unavailable = l.unavailable(server)
	return list, nil
}

// ReadResource implements Backend.
func (l *local) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	if server == "" || uri == "" {
		return nil, fault.New(fault.Validation, "reading a resource needs a server and a URI")
	}
	if err := l.scope(ctx, server); err != nil {
		return nil, err
	}
	c, err := l.c.Pool.WaitConnected(ctx, server, connectWait)
	if err != nil {
		return nil, err
	}
	return c.ReadResource(ctx, uri)
}

// firstLine is s's first line, cut to n runes.
func firstLine(s string, n int) string {
	for i, r := range s {
		if r == '\n' {
			s = s[:i]
			break
		}
	}
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
