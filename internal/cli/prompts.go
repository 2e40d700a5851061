package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
)

// newPromptsCmd is `switchboard prompts [SERVER]`.
func newPromptsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prompts [SERVER]",
		Short: "List prompts",
		Long: `List the prompts of every server, or of one, with their arguments (* marks required
ones). Exits 1 when a server in scope is not connected, with a line each on stderr.`,
		Example: `  switchboard prompts
  switchboard prompts everything --json`,
		ValidArgsFunction: onlyFirst(a.completeServer),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.prompts(cmd.Context(), args)
		},
	}
	a.adhocFlags(cmd)
	return cmd
}

// prompts lists prompts, from the daemon when one runs. A server that is
// not connected is reported on stderr and makes the exit code 1.
func (a *app) prompts(ctx context.Context, args []string) error {
	if len(args) > 1 {
		return usagef("usage: switchboard prompts [SERVER]")
	}
	b, server, done, err := a.listingBackend(ctx, args)
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
	} else if len(list.Prompts) > 0 || len(list.Unavailable) == 0 {
		// (Nothing to list and servers unavailable: only their errors, no
		// heading above an empty table.)
		// The arguments are the names a person passes to prompt (NAME=VALUE):
		// whole, as the prompt's; the description gives way.
		t := a.newTable("SERVER", "PROMPT", "ARGUMENTS", "DESCRIPTION").keepWhole(0, 1, 2)
		for _, p := range list.Prompts {
			var argNames []string
			for _, arg := range p.Arguments {
				n := arg.Name
				if arg.Required {
					n += "*"
				}
				argNames = append(argNames, n)
			}
			t.row(p.Server, p.Name, strings.Join(argNames, ","), firstLine(p.Description, 60))
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	return a.reportUnavailable(list.Unavailable)
}
