package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// runTools lists tools, from the daemon when one runs. A server that is
// not connected is reported on stderr and makes the exit code 1.
func runTools(ctx context.Context, a *app, args []string) error {
	fs := a.flags("tools", true)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("usage: switchboard tools [SERVER]")
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	server := ""
	if len(pos) == 1 {
		if _, ok := cfg.Server(pos[0]); !ok {
			return upstream.UnknownServer(cfg, pos[0])
		}
		server = pos[0]
	}
	b, done, err := a.backend(ctx, cfg, scope{connect: true, only: pos})
	if err != nil {
		return err
	}
	defer done()
	list, err := b.Tools(ctx, server)
	if err != nil {
		return err
	}
	if a.json {
		if err := a.printJSON(list.Tools); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tTOOL\tDESCRIPTION")
		for _, t := range list.Tools {
			desc := firstLine(t.Description, 70)
			if t.SchemaError != "" {
				desc = "(!) broken input schema: " + firstLine(t.SchemaError, 50)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Server, t.Name, desc)
		}
		tw.Flush()
		for _, c := range list.Collisions {
			fmt.Fprintf(a.stderr, "note: tools %s share the exposed name %s; the others got a hashed suffix\n", strings.Join(c.Keys, ", "), c.Name)
		}
	}
	return a.reportUnavailable(list.Unavailable)
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
	b, done, err := a.backend(ctx, cfg, scope{connect: true, only: []string{server}})
	if err != nil {
		return err
	}
	defer done()
	t, err := b.Tool(ctx, server, rest[0])
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(t)
	}
	a.describeTool(t)
	return nil
}

// describeTool prints a tool's parameters for a person.
func (a *app) describeTool(t control.ToolInfo) {
	w := a.stdout
	title := t.Name
	if t.Title != "" && t.Title != t.Name {
		title += " — " + t.Title
	}
	fmt.Fprintf(w, "%s (server %s, exposed as %s)\n", title, t.Server, t.Exposed)
	if d := strings.TrimSpace(t.Description); d != "" {
		for _, line := range strings.Split(d, "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	if an := t.Annotations; an != nil {
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
	schema, _ := catalog.SchemaMap(t.InputSchema)
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
	fmt.Fprintf(w, "Call it: switchboard call %s %s", target, t.Name)
	for _, l := range lines {
		if strings.Contains(l[1], "required") && !strings.Contains(l[0], ".") {
			fmt.Fprintf(w, " %s=…", l[0])
		}
	}
	fmt.Fprintln(w)
}

// paramLines flattens an object schema into (name, type/required, notes)
// rows; nested object properties are shown with dotted names, and the
// properties of an array's object items as name[].property.
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
		// The fields of an array's object items, as name[].field.
		if items, ok := p["items"].(map[string]any); ok {
			if sub, ok := items["properties"].(map[string]any); ok && len(sub) > 0 {
				paramLines(items, prefix+name+"[].", out)
			}
		}
	}
}

func typeString(p map[string]any) string {
	types := catalog.PropTypes(p)
	if len(types) == 0 {
		return "any"
	}
	for i, t := range types {
		if t == "array" {
			if items, ok := p["items"].(map[string]any); ok {
				if it := catalog.PropTypes(items); len(it) > 0 {
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
