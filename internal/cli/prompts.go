package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// runPrompts lists prompts, from the daemon when one runs. A server that
// is not connected is reported on stderr and makes the exit code 1.
func runPrompts(ctx context.Context, a *app, args []string) error {
	b, server, done, err := a.listingBackend(ctx, "prompts", args)
	if err != nil {
		return err
	}
	defer done()
	list, err := b.Prompts(ctx, server)
	if err != nil {
		return err
	}
	if a.json {
		if err := a.printJSON(list.Prompts); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tPROMPT\tARGUMENTS\tDESCRIPTION")
		for _, p := range list.Prompts {
			var argNames []string
			for _, arg := range p.Arguments {
				n := arg.Name
				if arg.Required {
					n += "*"
				}
				argNames = append(argNames, n)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Server, p.Name, strings.Join(argNames, ","), firstLine(p.Description, 60))
		}
		tw.Flush()
	}
	return a.reportUnavailable(list.Unavailable)
}

// listingBackend parses `COMMAND [SERVER]` and returns the backend to
// list from (the daemon's, or one connected to the servers in scope).
func (a *app) listingBackend(ctx context.Context, name string, args []string) (control.Backend, string, func(), error) {
	fs := a.flags(name, true)
	pos, err := parse(fs, args)
	if err != nil {
		return nil, "", nil, err
	}
	if len(pos) > 1 {
		return nil, "", nil, usagef("usage: switchboard %s [SERVER]", name)
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return nil, "", nil, err
	}
	server := ""
	if len(pos) == 1 {
		if _, ok := cfg.Server(pos[0]); !ok {
			return nil, "", nil, upstream.UnknownServer(cfg, pos[0])
		}
		server = pos[0]
	}
	b, done, err := a.backend(ctx, cfg, scope{connect: true, only: pos})
	if err != nil {
		return nil, "", nil, err
	}
	return b, server, done, nil
}

// reportUnavailable returns the error that says why servers in scope are
// not connected (printed a line each, or as one --json error) and makes the
// exit code 1; nil when every one is connected.
func (a *app) reportUnavailable(lines []string) error {
	if len(lines) > 0 {
		return &unavailableError{lines: lines}
	}
	return nil
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
	b, done, err := a.backend(ctx, cfg, scope{connect: true, only: []string{server}})
	if err != nil {
		return err
	}
	defer done()
	if err := checkPromptArgs(ctx, b, server, name, promptArgs); err != nil {
		return err
	}
	res, err := b.Prompt(ctx, control.PromptRequest{Server: server, Name: name, Arguments: promptArgs})
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

// checkPromptArgs rejects arguments the prompt does not declare, before
// the request is sent, with the closest declared names as suggestions.
// An unknown prompt is left to the backend, which says so.
func checkPromptArgs(ctx context.Context, b control.Backend, server, name string, args map[string]string) error {
	if len(args) == 0 {
		return nil
	}
	list, err := b.Prompts(ctx, server)
	if err != nil {
		return nil // the request reports it
	}
	for _, p := range list.Prompts {
		if p.Prompt == nil || p.Name != name {
			continue
		}
		var declared []string
		for _, arg := range p.Arguments {
			declared = append(declared, arg.Name)
		}
		var fields []fault.FieldDetail
		for _, k := range sortedKeys(args) {
			if contains(declared, k) {
				continue
			}
			fd := fault.FieldDetail{Field: k, Message: fmt.Sprintf("prompt %s has no argument %q", name, k), ReceivedValue: args[k], Received: true}
			if s := suggest.Closest(k, declared, 3); len(s) > 0 {
				fd.Message += fmt.Sprintf("; did you mean %q?", s[0])
				fd.Suggestion = s[0]
			}
			fields = append(fields, fd)
		}
		if len(fields) == 0 {
			return nil
		}
		fe := fault.New(fault.Validation, "arguments for prompt %s/%s are invalid", server, name).
			WithDetail("server", server).WithDetail("prompt", name)
		fe.Fields = fields
		if len(declared) > 0 {
			return fe.WithSuggestions("its arguments are: " + strings.Join(declared, ", "))
		}
		return fe.WithSuggestions("it takes no arguments")
	}
	return nil
}
