package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// newToolsCmd is `switchboard tools [SERVER]`.
func newToolsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools [SERVER]",
		Short: "List tools",
		Long: `List the tools of every server, or of one: server, tool and the first line of its
description. A tool whose input schema does not compile is listed and flagged (it can still
be called, unvalidated). When two tools map to the same client-safe name, a note says how the
collision was resolved. Exits 1 when a server in scope is not connected, with a line each on
stderr. Answers from the daemon when one serves this configuration.`,
		Example: `  switchboard tools
  switchboard tools github --json
  switchboard tools --stdio "npx -y @modelcontextprotocol/server-everything"`,
		ValidArgsFunction: onlyFirst(a.completeServer),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.tools(cmd.Context(), args)
		},
	}
	a.adhocFlags(cmd)
	return cmd
}

// tools lists tools, from the daemon when one runs. A server that is not
// connected is reported on stderr and makes the exit code 1.
func (a *app) tools(ctx context.Context, args []string) error {
	if len(args) > 1 {
		return usagef("usage: switchboard tools [SERVER]")
	}
	b, server, done, err := a.listingBackend(ctx, args)
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
	} else if len(list.Tools) > 0 || len(list.Unavailable) == 0 {
		// (Nothing to list and servers unavailable: only their errors, no
		// heading above an empty table.)
		t := a.newTable("SERVER", "TOOL", "DESCRIPTION").keepWhole(0, 1)
		for _, tool := range list.Tools {
			desc := firstLine(tool.Description, 70)
			if tool.SchemaError != "" {
				desc = "(!) broken input schema: " + firstLine(tool.SchemaError, 50)
			}
			t.row(tool.Server, tool.Name, desc)
		}
		if err := t.flush(); err != nil {
			return err
		}
		for _, c := range list.Collisions {
			fmt.Fprintf(a.stderr, "note: tools %s share the exposed name %s; the others got a hashed suffix\n", strings.Join(c.Keys, ", "), c.Name)
		}
	}
	return a.reportUnavailable(list.Unavailable)
}

// listingBackend returns the backend a listing of `COMMAND [SERVER]`
// lists from (the daemon's, or one connected to the servers in scope) and
// the server, "" for all.
func (a *app) listingBackend(ctx context.Context, args []string) (control.Backend, string, func(), error) {
	cfg, err := a.loadConfig()
	if err != nil {
		return nil, "", nil, err
	}
	server := ""
	if len(args) == 1 {
		if _, ok := cfg.Server(args[0]); !ok {
			return nil, "", nil, upstream.UnknownServer(cfg, args[0])
		}
		server = args[0]
	}
	b, done, err := a.backend(ctx, cfg, scope{connect: true, only: args})
	if err != nil {
		return nil, "", nil, err
	}
	return b, server, done, nil
}
