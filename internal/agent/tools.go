package agent

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// Selection narrows the tools the model is offered. Every non-empty field
// narrows further; the zero Selection offers every tool of every enabled
// server in the catalog.
type Selection struct {
	// Servers keeps the tools of these servers.
	Servers []string
	// Tools keeps exposed names (server__tool) matching one of these globs
	// (path.Match syntax).
	Tools []string
	// View keeps the tools of this gateway view (its servers, include and
	// exclude), named and described as the view shows them (its prefix
	// mode, renames and descriptions).
	View string
	// Server keeps one server's tools: the server a document section is
	// bound to.
	Server string
}

// functionName is the form the chat completions API accepts for a
// function's name. The catalog's exposed names always have it; a view's
// name for a tool (a rename, or with prefix never the tool's own name)
// may not, and then the model gets the exposed name instead.
var functionName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

// IsZero reports whether s narrows nothing.
func (s Selection) IsZero() bool {
	return len(s.Servers) == 0 && len(s.Tools) == 0 && s.View == "" && s.Server == ""
}

// Tool is one tool offered to the model (seed 001's AIToolContext entry).
type Tool struct {
	// Name is the function name the model sees: the catalog's client-safe
	// exposed name (server__tool), or with a view, the name the view
	// gives the tool when that is a valid function name.
	Name   string
	Server string
	// Tool is the tool's name at its server.
	Tool        string
	Description string
	// Schema is the tool's input schema as a JSON object.
	Schema map[string]any
}

// ToolContext is the set of tools offered to the model, looked up by the
// name the model calls.
type ToolContext struct {
	tools  []Tool
	byName map[string]int
}

// NewToolContext selects, from the catalog, the tools of the servers that
// are enabled in cfg, narrowed by sel. It fails with a fault.NotFound error
// when sel names a server or view that does not exist, and when a
// narrowing selection leaves no tool.
func NewToolContext(cfg *config.Config, cat *catalog.Catalog, sel Selection) (*ToolContext, error) {
	var names []string
	enabled := map[string]bool{}
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
		enabled[s.Name] = s.Enabled
	}
	unknown := func(name string) error {
		fe := fault.New(fault.NotFound, "no server named %q is configured", name)
		if s := suggest.Closest(name, names, 1); len(s) > 0 {
			fe.Message += fmt.Sprintf("; did you mean %q?", s[0])
			fe.WithSuggestions(s...)
		} else if len(names) > 0 {
			fe.WithSuggestions("configured servers: " + strings.Join(names, ", "))
		}
		return fe
	}
	for _, s := range sel.Servers {
		if _, ok := enabled[s]; !ok {
			return nil, unknown(s)
		}
	}
	if sel.Server != "" {
		if _, ok := enabled[sel.Server]; !ok {
			return nil, unknown(sel.Server)
		}
	}
	var view config.View
	if sel.View != "" {
		v, ok := cfg.Gateway.View(sel.View)
		if !ok {
			var views []string
			for _, v := range cfg.Gateway.Views {
				views = append(views, v.Name)
			}
			fe := fault.New(fault.NotFound, "no gateway view named %q is configured", sel.View)
			if s := suggest.Closest(sel.View, views, 1); len(s) > 0 {
				fe.Message += fmt.Sprintf("; did you mean %q?", s[0])
			}
			return nil, fe.WithSuggestions("views are defined under gateway.views; \"default\" is every server")
		}
		view = v
	}
	tc := &ToolContext{byName: map[string]int{}}
	for _, t := range catalog.SortedTools(cat.Tools()) {
		switch {
		case !enabled[t.Server]:
			continue
		case len(sel.Servers) > 0 && !slices.Contains(sel.Servers, t.Server):
			continue
		case sel.Server != "" && t.Server != sel.Server:
			continue
		case !config.MatchTools(sel.Tools, t.Exposed):
			continue
		}
		tool := Tool{Name: t.Exposed, Server: t.Server, Tool: t.Def.Name, Description: t.Def.Description, Schema: objectSchema(t.Def.InputSchema)}
		if sel.View != "" {
			base := view.ToolBase(t.Exposed, t.Def.Name)
			if !view.Shows(t.Server, base) {
				continue
			}
			tool.Description = view.Description(base, t.Def.Description)
			if name := view.ToolName(base); functionName().MatchString(name) {
				tool.Name = name
			}
		}
		if i, dup := tc.byName[tool.Name]; dup {
			prev := tc.tools[i]
			return nil, fault.New(fault.Config, "two tools would both be offered to the model as %q: %s/%s and %s/%s", tool.Name, prev.Server, prev.Tool, tool.Server, tool.Tool).
				WithSuggestions("give one of them another name with the view's rename", "narrow the selection so that only one of them is offered")
		}
		tc.byName[tool.Name] = len(tc.tools)
		tc.tools = append(tc.tools, tool)
	}
	if len(tc.tools) == 0 && !sel.IsZero() {
		return nil, fault.New(fault.NotFound, "no tool matches the selection (%s)", sel).
			WithSuggestions("check the servers are enabled and connected (switchboard servers)", "list the tools with switchboard tools")
	}
	return tc, nil
}

// String describes the selection for messages.
func (s Selection) String() string {
	var parts []string
	if len(s.Servers) > 0 {
		parts = append(parts, "servers "+strings.Join(s.Servers, ","))
	}
	if len(s.Tools) > 0 {
		parts = append(parts, "tools "+strings.Join(s.Tools, ","))
	}
	if s.View != "" {
		parts = append(parts, "view "+s.View)
	}
	if s.Server != "" {
		parts = append(parts, "section server "+s.Server)
	}
	if len(parts) == 0 {
		return "everything"
	}
	return strings.Join(parts, "; ")
}

// objectSchema returns a tool's input schema as a JSON object, with "type":
// "object" when it says nothing else (function parameters must be an
// object).
func objectSchema(schema any) map[string]any {
	var m map[string]any
	if schema != nil {
		if b, err := json.Marshal(schema); err == nil {
			_ = json.Unmarshal(b, &m)
		}
	}
	if m == nil {
		m = map[string]any{}
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	if _, ok := m["properties"]; !ok && m["type"] == "object" {
		m["properties"] = map[string]any{}
	}
	return m
}

// Tools returns the tools, sorted by name.
func (tc *ToolContext) Tools() []Tool { return slices.Clone(tc.tools) }

// Len returns how many tools there are.
func (tc *ToolContext) Len() int { return len(tc.tools) }

// Lookup returns the tool the model calls name.
func (tc *ToolContext) Lookup(name string) (Tool, bool) {
	i, ok := tc.byName[name]
	if !ok {
		return Tool{}, false
	}
	return tc.tools[i], true
}

// Names returns the function names.
func (tc *ToolContext) Names() []string {
	out := make([]string, len(tc.tools))
	for i, t := range tc.tools {
		out[i] = t.Name
	}
	return out
}

// Functions returns the tools as function definitions for the model.
func (tc *ToolContext) Functions() []llm.Function {
	out := make([]llm.Function, len(tc.tools))
	for i, t := range tc.tools {
		out[i] = llm.Function{Name: t.Name, Description: t.Description, Parameters: t.Schema}
	}
	return out
}
