package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

func runPrompts(ctx context.Context, a *app, args []string) error {
	s, err := a.openListing(ctx, "prompts", args)
	if err != nil {
		return err
	}
	defer s.close()
	prompts := s.cat.Prompts()
	if a.json {
		type promptJSON struct {
			Server string `json:"server"`
			*mcp.Prompt
		}
		out := make([]promptJSON, 0, len(prompts))
		for _, p := range prompts {
			out = append(out, promptJSON{p.Server, p.Def})
		}
		if err := a.printJSON(out); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tPROMPT\tARGUMENTS\tDESCRIPTION")
		for _, p := range prompts {
			var argNames []string
			for _, arg := range p.Def.Arguments {
				n := arg.Name
				if arg.Required {
					n += "*"
				}
				argNames = append(argNames, n)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Server, p.Def.Name, strings.Join(argNames, ","), firstLine(p.Def.Description, 60))
		}
		tw.Flush()
	}
	return a.reportFailures(s)
}

func runPrompt(ctx context.Context, a *app, args []string) error {
	fs := a.flags("prompt", true)
	cfg, server, rest, err := a.serverCommand(fs, args, "prompt SERVER NAME [key=value ...]")
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usagef("missing NAME; usage: switchboard prompt SERVER NAME [key=value ...]")
	}
	name := rest[0]
	promptArgs := map[string]string{}
	for _, p := range rest[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return usagef("argument %q is not key=value", p)
		}
		promptArgs[k] = v
	}
	s, c, err := a.connectOne(ctx, cfg, server)
	if err != nil {
		return err
	}
	defer s.close()
	// Check the name and required arguments first, for a clear message.
	var names []string
	found := false
	for _, p := range s.cat.Prompts() {
		if p.Server != server {
			continue
		}
		names = append(names, p.Def.Name)
		if p.Def.Name != name {
			continue
		}
		found = true
		for _, arg := range p.Def.Arguments {
			if _, ok := promptArgs[arg.Name]; arg.Required && !ok {
				return fault.New(fault.Validation, "prompt %s needs argument %s", name, arg.Name).
					WithSuggestions(fmt.Sprintf("add %s=… (%s)", arg.Name, firstLine(arg.Description, 60)))
			}
		}
	}
	if !found && len(names) > 0 {
		fe := fault.New(fault.NotFound, "server %s has no prompt named %q", server, name)
		fe.WithSuggestions(suggest.Closest(name, names, 3)...)
		return fe
	}
	res, err := c.GetPrompt(ctx, name, promptArgs)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(res)
	}
	if res.Description != "" {
		fmt.Fprintf(a.stdout, "# %s\n\n", res.Description)
	}
	r := &renderer{out: a.stdout, prefix: name}
	for _, m := range res.Messages {
		fmt.Fprintf(a.stdout, "[%s]\n", m.Role)
		if err := r.content(m.Content); err != nil {
			return err
		}
	}
	return nil
}
