package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/notebook"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// docUsage is the synopsis of `switchboard doc`.
const docUsage = "usage: switchboard doc run [--only LINE] [--dry-run] [--check] [--concurrency N] FILE.md | doc list FILE.md"

// runDoc runs `switchboard doc run|list FILE.md` (docs/documents.md).
func runDoc(ctx context.Context, a *app, args []string) error {
	sub, rest, ok := subcommand(args)
	if !ok {
		if slices.Contains(args, "-h") || slices.Contains(args, "--help") {
			fmt.Fprintln(a.stdout, docUsage)
			return nil
		}
		return usagef("missing subcommand; %s", docUsage)
	}
	switch sub {
	case "run":
		return runDocRun(ctx, a, rest)
	case "list":
		return runDocList(a, rest)
	}
	return usagef("unknown subcommand %q; %s", sub, docUsage)
}

// docFile parses the flags and returns the one FILE argument.
func docFile(fsArgs []string, parseFn func([]string) ([]string, error), sub string) (string, error) {
	pos, err := parseFn(fsArgs)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", usagef("doc %s takes one FILE.md; %s", sub, docUsage)
	}
	return pos[0], nil
}

func runDocList(a *app, args []string) error {
	fs := a.flags("doc list", true)
	path, err := docFile(args, func(x []string) ([]string, error) { return parse(fs, x) }, "list")
	if err != nil {
		return err
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	rep, err := notebook.Inspect(path, cfg)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(rep)
	}
	if len(rep.Blocks) == 0 {
		fmt.Fprintf(a.stdout, "%s has no tool-call blocks\n", path)
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LINE\tID\tSERVER\tTOOL\tSTATUS\tWHY")
	for _, b := range rep.Blocks {
		id, server, tool := dash(b.ID), dash(b.Server), dash(b.Tool)
		if b.ID != "" {
			id = "^" + b.ID
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", b.Line, id, server, tool, b.Status, dash(b.Why))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, b := range rep.Blocks {
		if b.Error != nil {
			fmt.Fprintf(a.stderr, "%s:%d: %s\n", path, b.Line, strings.TrimPrefix(blockError(b.Error), fmt.Sprintf("line %d: ", b.Line)))
		}
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runDocRun(ctx context.Context, a *app, args []string) error {
	fs := a.flags("doc run", true)
	only := fs.Int("only", 0, "run only the block at `LINE` (any line from its opening to its closing fence)")
	dryRun := fs.Bool("dry-run", false, "show the calls that would be made; run nothing, write nothing")
	check := fs.Bool("check", false, "run nothing; exit 1 if any block's result is missing or stale, or the block is invalid (for CI)")
	concurrency := fs.Int("concurrency", 0, "blocks run at once, `N` from 1 to 64 (default: notebook.concurrency, else 1); results are written in document order")
	path, err := docFile(args, func(x []string) ([]string, error) { return parse(fs, x) }, "run")
	if err != nil {
		return err
	}
	if *only < 0 {
		return usagef("--only %d: give a line number from 1", *only)
	}
	// 0 is the flag's "not given"; given, it must be in range.
	concurrencySet := false
	fs.Visit(func(f *flag.Flag) { concurrencySet = concurrencySet || f.Name == "concurrency" })
	if concurrencySet && (*concurrency < 1 || *concurrency > config.MaxNotebookConcurrency) {
		return usagef("--concurrency %d is out of range; give 1 to %d", *concurrency, config.MaxNotebookConcurrency)
	}
	if *check && *dryRun {
		return usagef("give --check or --dry-run, not both")
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	if *check {
		return a.docCheck(path, cfg)
	}
	if *dryRun {
		return a.docDryRun(ctx, path, cfg, *only)
	}

	// Connect only to the servers the blocks to run use.
	rep, err := notebook.Inspect(path, cfg)
	if err != nil {
		return err
	}
	var servers []string
	for _, b := range rep.Blocks {
		if b.Server == "" || b.Error != nil || (*only > 0 && (*only < b.Line || *only > b.EndLine)) {
			continue
		}
		if !contains(servers, b.Server) {
			servers = append(servers, b.Server)
		}
	}
	var caller notebook.Caller = noCaller{}
	if len(servers) > 0 {
		s, err := a.open(ctx, cfg, servers...)
		if err != nil {
			return err
		}
		defer s.close()
		caller = s.eng
	}
	bar := newProgressBar(a.stderr)
	res, err := notebook.Run(ctx, path, notebook.Options{
		Config:      cfg,
		Caller:      caller,
		Concurrency: *concurrency,
		Only:        *only,
		Identity:    cliIdentity(),
		Logger:      a.logger(),
		Progress: func(done, total int) {
			bar.update(&mcp.ProgressNotificationParams{Progress: float64(done), Total: float64(total), Message: fmt.Sprintf("%d/%d blocks", done, total)})
		},
	})
	bar.clear()
	if err != nil {
		return err
	}
	if a.json {
		if err := a.printJSON(res); err != nil {
			return err
		}
	} else {
		for _, b := range res.Blocks {
			switch {
			case b.Status == string(toolcall.StatusCancelled) && ctx.Err() != nil:
				fmt.Fprintf(a.stderr, "%s:%d: %scancelled; its previous result is kept\n", path, b.Line, blockTarget(b))
			case b.Error != nil:
				fmt.Fprintf(a.stderr, "%s:%d: %s%s\n", path, b.Line, blockTarget(b), blockError(b.Error))
			}
		}
		fmt.Fprintln(a.stdout, docSummary(res))
	}
	if ctx.Err() != nil {
		return fault.Wrap(fault.Cancelled, ctx.Err(), "interrupted; the results that finished were written")
	}
	if res.Failed > 0 {
		return &exitError{ExitFailure}
	}
	return nil
}

// blockError renders a block's error on one line, with its did-you-mean
// suggestion when it has one (unknown server "wether"; did you mean
// "weather"?).
func blockError(e *fault.Error) string {
	msg := oneLine(e)
	for _, s := range e.Suggestions {
		if strings.HasPrefix(s, "did you mean") {
			msg += "; " + s
		}
	}
	return msg
}

// docSummary is the line `doc run` ends with, e.g. "doc.md: 12 blocks
// run, 1 failed; written", with ", N cancelled" after an interrupt. The
// cancelled blocks are not counted as run.
func docSummary(res *notebook.Report) string {
	ran := len(res.Blocks) - res.Cancelled
	noun := "blocks"
	if ran == 1 {
		noun = "block"
	}
	what := "unchanged"
	if res.Written {
		what = "written"
	}
	cancelled := ""
	if res.Cancelled > 0 {
		cancelled = fmt.Sprintf(", %d cancelled", res.Cancelled)
	}
	return fmt.Sprintf("%s: %d %s run, %d failed%s; %s", res.Path, ran, noun, res.Failed, cancelled, what)
}

// blockTarget renders "server/tool: " for a message, when known.
func blockTarget(b notebook.BlockReport) string {
	if b.Server == "" || b.Tool == "" {
		return ""
	}
	return b.Server + "/" + b.Tool + ": "
}

// docCheck reports the blocks whose result is missing or stale.
func (a *app) docCheck(path string, cfg *config.Config) error {
	rep, err := notebook.Inspect(path, cfg)
	if err != nil {
		return err
	}
	if a.json {
		if err := a.printJSON(rep); err != nil {
			return err
		}
	} else {
		for _, b := range rep.Blocks {
			switch b.Status {
			case notebook.StatusMissing:
				fmt.Fprintf(a.stderr, "%s:%d: %sno result; run switchboard doc run %s\n", path, b.Line, blockTarget(b), path)
			case notebook.StatusStale:
				fmt.Fprintf(a.stderr, "%s:%d: %sthe result is stale (the block changed since it ran); run switchboard doc run %s\n", path, b.Line, blockTarget(b), path)
			case notebook.StatusInvalid:
				fmt.Fprintf(a.stderr, "%s:%d: %s\n", path, b.Line, blockError(b.Error))
			}
		}
		if rep.Failed == 0 {
			fmt.Fprintf(a.stdout, "%s: %d blocks, every result up to date\n", path, len(rep.Blocks))
		}
	}
	if rep.Failed > 0 {
		return &exitError{ExitFailure}
	}
	return nil
}

// docDryRun prints the calls a run would make.
func (a *app) docDryRun(ctx context.Context, path string, cfg *config.Config, only int) error {
	rep, err := notebook.Run(ctx, path, notebook.Options{Config: cfg, Only: only, DryRun: true})
	if err != nil {
		return err
	}
	if a.json {
		if err := a.printJSON(rep); err != nil {
			return err
		}
	} else {
		for _, b := range rep.Blocks {
			if b.Error != nil {
				fmt.Fprintf(a.stderr, "%s:%d: %s\n", path, b.Line, blockError(b.Error))
				continue
			}
			args, err := json.Marshal(b.Args)
			if err != nil {
				return fmt.Errorf("encoding the arguments of the block at line %d: %w", b.Line, err)
			}
			fmt.Fprintf(a.stdout, "%s:%d: %s/%s %s (%s)\n", path, b.Line, b.Server, b.Tool, args, b.Why)
		}
	}
	if rep.Failed > 0 {
		return &exitError{ExitFailure}
	}
	return nil
}

// noCaller is the caller of a run in which no block can run.
type noCaller struct{}

func (noCaller) Call(context.Context, toolcall.Request) (*toolcall.Result, error) {
	return nil, fault.New(fault.Internal, "no server was opened for this call")
}
