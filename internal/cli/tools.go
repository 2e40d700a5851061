package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// toolJSON is a tool as `tools --json` and `tool --json` print it.
type toolJSON struct {
	Server      string               `json:"server"`
	Name        string               `json:"name"`
	Exposed     string               `json:"exposed"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description,omitempty"`
	InputSchema any                  `json:"inputSchema,omitempty"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
	SchemaError string               `json:"schemaError,omitempty"`
}

func toToolJSON(t catalog.Tool) toolJSON {
	return toolJSON{
		Server: t.Server, Name: t.Def.Name, Exposed: t.Exposed, Title: t.Def.Title,
		Description: t.Def.Description, InputSchema: t.Def.InputSchema,
		Annotations: t.Def.Annotations, SchemaError: t.SchemaError,
	}
}

func runTools(ctx context.Context, a *app, args []string) error {
	s, err := a.openListing(ctx, "tools", args)
	if err != nil {
		return err
	}
	defer s.close()
	tools := s.cat.Tools()
	if a.json {
		out := make([]toolJSON, 0, len(tools))
		for _, t := range tools {
			out = append(out, toToolJSON(t))
		}
		if err := a.printJSON(out); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tTOOL\tDESCRIPTION")
		for _, t := range tools {
			desc := firstLine(t.Def.Description, 70)
			if t.SchemaError != "" {
				desc = "(!) broken input schema: " + firstLine(t.SchemaError, 50)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Server, t.Def.Name, desc)
		}
		tw.Flush()
		for _, c := range s.cat.Collisions() {
			fmt.Fprintf(a.stderr, "note: tools %s share the exposed name %s; the others got a hashed suffix\n", keysString(c.Keys), c.Name)
		}
	}
	return a.reportFailures(s)
}

func keysString(keys []catalog.Key) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.Server + "/" + k.Name
	}
	return strings.Join(parts, ", ")
}

func runTool(ctx context.Context, a *app, args []string) error {
	fs := a.flags("tool", true)
	cfg, server, rest, err := a.serverCommand(fs, args, "tool SERVER TOOL")
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("usage: switchboard tool SERVER TOOL")
	}
	s, _, err := a.connectOne(ctx, cfg, server)
	if err != nil {
		return err
	}
	defer s.close()
	t, err := s.findTool(ctx, server, rest[0])
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(toToolJSON(t))
	}
	a.describeTool(t)
	return nil
}

// listSettle is how long a command waits for a server that announces
// tools through list_changed before it reports a tool as not found.
const listSettle = 2 * time.Second

// findTool looks a tool up. If it is not there and the server announces
// list changes (tools.listChanged), it waits up to listSettle for the tool
// to appear, refetching on every change notification and every 250 ms (a
// notification sent before the client's stream opened is lost, so waiting
// for notifications alone is not enough).
func (s *session) findTool(ctx context.Context, server, name string) (catalog.Tool, error) {
	t, err := s.cat.Tool(server, name)
	if err == nil {
		return t, nil
	}
	c, cerr := s.client(server)
	if cerr != nil || c.Capabilities().Tools == nil || !c.Capabilities().Tools.ListChanged {
		if rerr := s.cat.RefreshKind(ctx, server, catalog.KindTools); rerr != nil {
			return catalog.Tool{}, rerr
		}
		return s.cat.Tool(server, name)
	}
	deadline := time.NewTimer(listSettle)
	defer deadline.Stop()
	poll := time.NewTicker(250 * time.Millisecond)
	defer poll.Stop()
	for {
		changed := s.cat.Changed()
		if rerr := s.cat.RefreshKind(ctx, server, catalog.KindTools); rerr != nil {
			return catalog.Tool{}, rerr
		}
		if t, err = s.cat.Tool(server, name); err == nil {
			return t, nil
		}
		select {
		case <-changed:
		case <-poll.C:
		case <-deadline.C:
			return t, err
		case <-ctx.Done():
			return t, fault.Wrap(fault.Cancelled, ctx.Err(), "waiting for the tool list of %s", server)
		}
	}
}

// describeTool prints a tool's parameters for a person.
func (a *app) describeTool(t catalog.Tool) {
	w := a.stdout
	title := t.Def.Name
	if t.Def.Title != "" && t.Def.Title != t.Def.Name {
		title += " — " + t.Def.Title
	}
	fmt.Fprintf(w, "%s (server %s, exposed as %s)\n", title, t.Server, t.Exposed)
	if d := strings.TrimSpace(t.Def.Description); d != "" {
		for _, line := range strings.Split(d, "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	if an := t.Def.Annotations; an != nil {
		var flags []string
		if an.ReadOnlyHint {
			flags = append(flags, "read-only")
		}
		if an.IdempotentHint {
			flags = append(flags, "idempotent")
		}
		if an.DestructiveHint != nil && *an.DestructiveHint {
			flags = append(flags, "destructive")
		}
		if an.OpenWorldHint != nil && *an.OpenWorldHint {
			flags = append(flags, "open-world")
		}
		if len(flags) > 0 {
			fmt.Fprintf(w, "Hints: %s\n", strings.Join(flags, ", "))
		}
	}
	if t.SchemaError != "" {
		fmt.Fprintf(w, "Input schema is broken (%s); calls are not validated.\n", t.SchemaError)
	}
	schema, _ := asMap(t.Def.InputSchema)
	var lines [][3]string
	paramLines(schema, "", &lines)
	if len(lines) == 0 {
		fmt.Fprintln(w, "Parameters: none")
		return
	}
	fmt.Fprintln(w, "Parameters:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, l := range lines {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", l[0], l[1], l[2])
	}
	tw.Flush()
	target := t.Server
	switch {
	case a.stdio != "":
		target = fmt.Sprintf("--stdio %q", a.stdio)
	case a.url != "":
		target = "--url " + a.url
	}
	fmt.Fprintf(w, "Call it: switchboard call %s %s", target, t.Def.Name)
	for _, l := range lines {
		if strings.Contains(l[1], "required") && !strings.Contains(l[0], ".") {
			fmt.Fprintf(w, " %s=…", l[0])
		}
	}
	fmt.Fprintln(w)
}

// paramLines flattens an object schema into (name, type/required, notes)
// rows; nested object properties are shown with dotted names.
func paramLines(schema map[string]any, prefix string, out *[][3]string) {
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		return
	}
	required := map[string]bool{}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	// Required first, then by name.
	sort.Slice(names, func(i, j int) bool {
		if required[names[i]] != required[names[j]] {
			return required[names[i]]
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		p, _ := props[name].(map[string]any)
		typ := typeString(p)
		if required[name] {
			typ += ", required"
		}
		*out = append(*out, [3]string{prefix + name, typ, propNotes(p)})
		if sub, ok := p["properties"].(map[string]any); ok && len(sub) > 0 {
			paramLines(p, prefix+name+".", out)
		}
	}
}

func typeString(p map[string]any) string {
	types := propTypes(p)
	if len(types) == 0 {
		return "any"
	}
	for i, t := range types {
		if t == "array" {
			if items, ok := p["items"].(map[string]any); ok {
				if it := propTypes(items); len(it) > 0 {
					types[i] = "array of " + strings.Join(it, "|")
				}
			}
		}
	}
	return strings.Join(types, "|")
}

func propNotes(p map[string]any) string {
	var notes []string
	if d, ok := p["description"].(string); ok && d != "" {
		notes = append(notes, firstLine(d, 70))
	}
	if e, ok := p["enum"].([]any); ok {
		vals := make([]string, len(e))
		for i, v := range e {
			b, _ := json.Marshal(v)
			vals[i] = string(b)
		}
		notes = append(notes, "one of "+strings.Join(vals, ", "))
	}
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems", "format", "pattern"} {
		if v, ok := p[k]; ok {
			b, _ := json.Marshal(v)
			notes = append(notes, k+" "+string(b))
		}
	}
	if v, ok := p["default"]; ok {
		b, _ := json.Marshal(v)
		notes = append(notes, "default "+string(b))
	}
	return strings.Join(notes, "; ")
}
