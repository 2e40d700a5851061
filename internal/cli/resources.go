package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
)

// runResources lists resources and resource templates, from the daemon
// when one runs. A server that is not connected is reported on stderr and
// makes the exit code 1.
func runResources(ctx context.Context, a *app, args []string) error {
	b, server, done, err := a.listingBackend(ctx, "resources", args)
	if err != nil {
		return err
	}
	defer done()
	list, err := b.Resources(ctx, server)
	if err != nil {
		return err
	}
	if a.json {
		out := list
		out.Unavailable = nil
		if err := a.printJSON(out); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tURI\tNAME\tMIME TYPE")
		for _, r := range list.Resources {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Server, r.URI, r.Name, r.MIMEType)
		}
		for _, t := range list.Templates {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Server, t.URITemplate, t.Name+" (template)", t.MIMEType)
		}
		tw.Flush()
	}
	return a.reportUnavailable(list.Unavailable)
}

func runRead(ctx context.Context, a *app, args []string) error {
	fs := a.flags("read", true)
	outDir := fs.String("out-dir", "", "`directory` for binary contents (default: the temp dir)")
	cfg, server, rest, err := a.serverCommand(fs, args, "read SERVER URI")
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usagef("usage: switchboard read SERVER URI")
	}
	b, done, err := a.backend(ctx, cfg, scope{connect: true, only: []string{server}})
	if err != nil {
		return err
	}
	defer done()
	res, err := b.ReadResource(ctx, server, rest[0])
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(res)
	}
	r := &renderer{out: a.stdout, outDir: *outDir, prefix: "resource"}
	for _, rc := range res.Contents {
		if rc.Blob != nil {
			if err := r.saveBlob("resource", rc.MIMEType, rc.Blob); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintln(a.stdout, rc.Text)
	}
	return nil
}
