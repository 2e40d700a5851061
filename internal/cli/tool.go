package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/control"
)

// newToolCmd is `switchboard tool SERVER TOOL`.
func newToolCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tool SERVER TOOL",
		Short: "Show one tool's parameters",
		Long: `Show one tool readably: its description, hints (read-only, idempotent, destructive,
open-world), every parameter with its type, whether it is required, its description, enum
values, bounds, format and default (nested object properties with dotted names, the
properties of an array's object items as name[].property), and a ready-to-edit
'switchboard call' line. With --stdio or --url, give only TOOL.`,
		Example: `  switchboard tool github create_issue
  switchboard tool github create_issue --json
  switchboard tool --stdio "npx -y @modelcontextprotocol/server-everything" echo`,
		ValidArgsFunction: a.completeServerThenTool,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.tool(cmd.Context(), args)
		},
	}
	a.adhocFlags(cmd)
	return cmd
}

// tool shows one tool.
func (a *app) tool(ctx context.Context, args []string) error {
	cfg, server, rest, err := a.serverItemCommand(args, "tool SERVER TOOL")
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
	if err := a.describeTool(t); err != nil {
		return err
	}
	// The catalog keeps a disabled server's tools: say that a call fails.
	if infos, err := b.Servers(ctx); err == nil {
		for _, si := range infos {
			if si.Server == server && !si.Enabled {
				fmt.Fprintf(a.stderr, "note: server %s is disabled: calls fail until it is enabled (switchboard servers enable %s)\n", server, server)
			}
		}
	}
	return nil
}

// describeTool prints a tool's parameters for a person.
func (a *app) describeTool(t control.ToolInfo) error {
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
	switch t.TaskSupport {
	case "required":
		fmt.Fprintf(w, "  runs only as a task: call it with --task\n")
	case "optional":
		fmt.Fprintf(w, "  can run as a task (call --task)\n")
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
	lines, err := a.fieldSection(w, "Parameters", "none", schema)
	if err != nil {
		return err
	}
	// What call holds a result to (structuredContent), as the tool
	// declares it.
	if out, ok := catalog.SchemaMap(t.OutputSchema); ok {
		if _, err := a.fieldSection(w, "Result (structuredContent)", "as its output schema says, with no named fields", out); err != nil {
			return err
		}
	}
	if len(lines) == 0 {
		return nil
	}
	target := t.Server
	switch {
	case a.stdio != "":
		target = fmt.Sprintf("--stdio %q", a.stdio)
	case a.url != "":
		target = "--url " + a.url
	}
	if t.TaskSupport == "required" {
		target += " --task"
	}
	fmt.Fprintf(w, "Call it: switchboard call %s %s", target, t.Name)
	for _, l := range lines {
		if strings.Contains(l[1], "required") && !strings.Contains(l[0], ".") {
			fmt.Fprintf(w, " %s=…", l[0])
		}
	}
	fmt.Fprintln(w)
	return nil
}

// fieldSection writes heading and the fields of schema (paramLines), or
// "heading: none" when it names none, and returns them. Their text holds
// the allowed values and bounds: on a narrow terminal it wraps rather
// than being cut.
func (a *app) fieldSection(w io.Writer, heading, none string, schema map[string]any) ([][3]string, error) {
	var lines [][3]string
	paramLines(schema, schema, "", &lines)
	if len(lines) == 0 {
		fmt.Fprintf(w, "%s: %s\n", heading, none)
		return nil, nil
	}
	fmt.Fprintf(w, "%s:\n", heading)
	t := a.newTableTo(w).keepWhole(0).wrapLast()
	for _, l := range lines {
		t.row("  "+l[0], l[1], l[2])
	}
	return lines, t.flush()
}

// paramLines flattens an object schema into (name, type/required, notes)
// rows; nested object properties are shown with dotted names, and the
// properties of an array's object items as name[].property. Local $refs
// into root (pydantic's $defs) are followed.
func paramLines(root, schema map[string]any, prefix string, out *[][3]string) {
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
		m, _ := props[name].(map[string]any)
		p := catalog.Deref(root, m)
		typ := typeString(root, p)
		if required[name] {
			typ += ", required"
		}
		*out = append(*out, [3]string{prefix + name, typ, propNotes(p)})
		if obj := objectOf(root, p); obj != nil {
			paramLines(root, obj, prefix+name+".", out)
		}
		// The fields of an array's object items, as name[].field.
		if items, ok := p["items"].(map[string]any); ok {
			if obj := objectOf(root, catalog.Deref(root, items)); obj != nil {
				paramLines(root, obj, prefix+name+"[].", out)
			}
		}
	}
}

// objectOf returns the schema whose properties a parameter's value has:
// its own, else those of its one anyOf or oneOf branch that has any (an
// optional object, anyOf [{object}, {type: null}]); nil for none.
func objectOf(root, p map[string]any) map[string]any {
	if sub, ok := p["properties"].(map[string]any); ok && len(sub) > 0 {
		return p
	}
	var found map[string]any
	for _, key := range []string{"anyOf", "oneOf"} {
		branches, _ := p[key].([]any)
		for _, b := range branches {
			bm, _ := b.(map[string]any)
			if sub, ok := bm["properties"].(map[string]any); ok && len(sub) > 0 {
				if found != nil {
					return nil // several objects: which fields apply depends on the branch
				}
				found = bm
			}
		}
	}
	return found
}

func typeString(root, p map[string]any) string {
	types := catalog.PropTypes(p)
	if len(types) == 0 {
		return "any"
	}
	for i, t := range types {
		if t == "array" {
			if items, ok := p["items"].(map[string]any); ok {
				if it := catalog.PropTypes(catalog.Deref(root, items)); len(it) > 0 {
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
		// Whole, on one line: the column wraps it.
		notes = append(notes, strings.Join(strings.Fields(d), " "))
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
