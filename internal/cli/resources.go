package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func runResources(ctx context.Context, a *app, args []string) error {
	s, err := a.openListing(ctx, "resources", args)
	if err != nil {
		return err
	}
	defer s.close()
	resources, templates := s.cat.Resources(), s.cat.ResourceTemplates()
	if a.json {
		type resJSON struct {
			Server string `json:"server"`
			*mcp.Resource
		}
		type tmplJSON struct {
			Server string `json:"server"`
			*mcp.ResourceTemplate
		}
		out := struct {
			Resources []resJSON  `json:"resources"`
			Templates []tmplJSON `json:"resourceTemplates"`
		}{[]resJSON{}, []tmplJSON{}}
		for _, r := range resources {
			out.Resources = append(out.Resources, resJSON{r.Server, r.Def})
		}
		for _, t := range templates {
			out.Templates = append(out.Templates, tmplJSON{t.Server, t.Def})
		}
		if err := a.printJSON(out); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tURI\tNAME\tMIME TYPE")
		for _, r := range resources {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Server, r.Def.URI, r.Def.Name, r.Def.MIMEType)
		}
		for _, t := range templates {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Server, t.Def.URITemplate, t.Def.Name+" (template)", t.Def.MIMEType)
		}
		tw.Flush()
	}
	return a.reportFailures(s)
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
	s, c, err := a.connectOne(ctx, cfg, server)
	if err != nil {
		return err
	}
	defer s.close()
	res, err := c.ReadResource(ctx, rest[0])
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
