package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/control"
)

// newResourcesCmd is `switchboard resources [SERVER]`.
func newResourcesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "resources [SERVER]",
		Short: "List resources and resource templates",
		Long: `List the resources and resource templates of every server, or of one: URI (or URI
template), name and MIME type. --json prints one list: each entry has "kind" ("resource" or
"template") and the MCP fields (uri or uriTemplate, name, mimeType, ...) with its server.
Exits 1 when a server in scope is not connected, with a line each on stderr.`,
		Example: `  switchboard resources
  switchboard resources everything --json`,
		ValidArgsFunction: onlyFirst(a.completeServer),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.resources(cmd.Context(), args)
		},
	}
	a.adhocFlags(cmd)
	return cmd
}

// resourceEntry is a resource in `resources --json`.
type resourceEntry struct {
	Kind string `json:"kind"`
	control.ResourceInfo
}

// templateEntry is a resource template in `resources --json`.
type templateEntry struct {
	Kind string `json:"kind"`
	control.TemplateInfo
}

// resources lists resources and resource templates, from the daemon when
// one runs. A server that is not connected is reported on stderr and makes
// the exit code 1.
func (a *app) resources(ctx context.Context, args []string) error {
	if len(args) > 1 {
		return usagef("usage: switchboard resources [SERVER]")
	}
	b, server, done, err := a.listingBackend(ctx, args)
	if err != nil {
		return err
	}
	defer done()
	list, err := b.Resources(ctx, server)
	if err != nil {
		return err
	}
	if a.json {
		out := make([]any, 0, len(list.Resources)+len(list.Templates))
		for _, r := range list.Resources {
			out = append(out, resourceEntry{"resource", r})
		}
		for _, t := range list.Templates {
			out = append(out, templateEntry{"template", t})
		}
		if err := a.printJSON(out); err != nil {
			return err
		}
	} else if len(list.Resources)+len(list.Templates) > 0 || len(list.Unavailable) == 0 {
		// (Nothing to list and servers unavailable: only their errors, no
		// heading above an empty table.)
		// The name is the free text, last, the column that gives way (as a
		// description does in tools and prompts); the MIME type is a short
		// token, kept whole.
		t := a.newTable("SERVER", "URI", "MIME TYPE", "NAME").keepWhole(0, 1, 2)
		for _, r := range list.Resources {
			t.row(r.Server, r.URI, r.MIMEType, r.Name)
		}
		for _, tm := range list.Templates {
			t.row(tm.Server, tm.URITemplate, tm.MIMEType, tm.Name+" (template)")
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	return a.reportUnavailable(list.Unavailable)
}
