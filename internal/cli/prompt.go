package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// newPromptCmd is `switchboard prompt SERVER NAME [key=value ...]`.
func newPromptCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prompt SERVER NAME [key=value ...]",
		Short: "Render a prompt",
		Long: `Render one prompt: each message as [role] followed by its content. A missing
required argument, or one the prompt does not declare (with the closest declared name as a
suggestion), is reported before the request is sent. With --stdio or --url, give only NAME.`,
		Example: `  switchboard prompt everything simple-prompt
  switchboard prompt everything args-prompt city=Paris state=Texas --json`,
		ValidArgsFunction: a.completePrompt,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.prompt(cmd.Context(), args)
		},
	}
	a.adhocFlags(cmd)
	return cmd
}

// prompt renders one prompt.
func (a *app) prompt(ctx context.Context, args []string) error {
	cfg, server, rest, err := a.serverItemCommand(args, "prompt SERVER NAME [key=value ...]")
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

// completePrompt completes `prompt SERVER NAME`: a server, then one of its
// prompts.
func (a *app) completePrompt(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	n := 2 // SERVER PROMPT
	if a.adhoc() {
		n = 1
	}
	if !a.adhoc() && len(args) == 0 {
		return a.serverCompletions(), cobra.ShellCompDirectiveNoFileComp
	}
	cfg, server, rest, err := a.serverCommand(args, "")
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	a.withCompletionBackend(cmd.Context(), cfg, server, func(ctx context.Context, b control.Backend) {
		list, err := b.Prompts(ctx, server)
		if err != nil {
			return
		}
		if len(args) < n {
			for _, p := range list.Prompts {
				out = append(out, withDesc(p.Name, p.Description))
			}
			return
		}
		// PROMPT's arguments not given yet, as key=.
		given := map[string]bool{}
		for _, kv := range rest[1:] {
			k, _, _ := strings.Cut(kv, "=")
			given[k] = true
		}
		for _, p := range list.Prompts {
			if p.Name != rest[0] {
				continue
			}
			for _, arg := range p.Arguments {
				if !given[arg.Name] {
					out = append(out, withDesc(arg.Name+"=", arg.Description))
				}
			}
		}
	})
	if len(args) < n {
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}
