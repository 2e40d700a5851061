package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// newReadCmd is `switchboard read SERVER URI`.
func newReadCmd(a *app) *cobra.Command {
	var outDir string
	cmd := &cobra.Command{
		Use:   "read SERVER URI",
		Short: "Read a resource",
		Long: `Read a resource: text contents go to stdout, binary contents are saved to new files
whose paths are printed (--out-dir). With --stdio or --url, give only URI.`,
		Example: `  switchboard read everything demo://resource/static/document/features.md
  switchboard read everything demo://resource/dynamic/blob/1 --out-dir ./blobs
  switchboard read everything demo://resource/dynamic/text/1 --json`,
		ValidArgsFunction: a.completeServerThenURI,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.read(cmd.Context(), args, outDir)
		},
	}
	a.adhocFlags(cmd)
	cmd.Flags().StringVar(&outDir, "out-dir", "", "`directory` for binary contents (default: the temp dir)")
	_ = cmd.RegisterFlagCompletionFunc("out-dir", completeDirs)
	return cmd
}

// read reads one resource.
func (a *app) read(ctx context.Context, args []string, outDir string) error {
	cfg, server, rest, err := a.serverCommand(args, "read SERVER URI")
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
	r := &renderer{out: a.stdout, outDir: outDir, prefix: "resource"}
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
