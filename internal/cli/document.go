package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/notebook"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// docUsage is the synopsis of `switchboard doc`.
const docUsage = "usage: switchboard doc run [--only LINE] [--dry-run] [--check] [--concurrency N] FILE.md | doc list FILE.md"

// docRunFlags are the flags of `switchboard doc run`.
type docRunFlags struct {
	only        int
	dryRun      bool
	check       bool
	concurrency int
	answers     answerFlags
}

// newDocCmd is `switchboard doc`, with run and list (docs/documents.md).
func newDocCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "doc",
		Short: "Run the tool calls written in a Markdown document",
		Long: `Run the tool calls written as fenced blocks in a Markdown document and write each
result after its block, or list the blocks with the server each uses and why.
Reference: docs/documents.md.`,
		Example: `  switchboard doc list runbook.md
  switchboard doc run runbook.md
  switchboard doc run --check runbook.md`,
		RunE: subcommandRequired,
	}
	var f docRunFlags
	run := &cobra.Command{
		Use:   "run FILE.md",
		Short: "Run a document's tool-call blocks and write their results",
		Long: `Run the document's tool-call blocks and write each result after its block. Blocks run
one at a time unless --concurrency (or notebook.concurrency) says more; results are
written in document order. Exits 1 when a block failed; Ctrl-C keeps the results that
finished.`,
		Example: `  switchboard doc run runbook.md
  switchboard doc run --only 42 runbook.md
  switchboard doc run --dry-run runbook.md
  switchboard doc run --check docs/*.md   # in CI: exit 1 when a result is missing or stale`,
		ValidArgsFunction: onlyFirst(completeFiles("md", "markdown")),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("doc run takes one FILE.md; %s", docUsage)
			}
			return a.docRun(cmd, args[0], f)
		},
	}
	a.adhocFlags(run)
	rf := run.Flags()
	rf.IntVar(&f.only, "only", 0, "run only the block at `LINE` (any line from its opening to its closing fence)")
	rf.BoolVar(&f.dryRun, "dry-run", false, "show the calls that would be made; run nothing, write nothing")
	rf.BoolVar(&f.check, "check", false, "run nothing; exit 1 if any block's result is missing, stale or a failed call, or the block is invalid (for CI)")
	addAnswerFlags(run, &f.answers)
	rf.IntVar(&f.concurrency, "concurrency", 0, "blocks run at once, `N` from 1 to 64 (default: notebook.concurrency, else 1); results are written in document order")

	list := &cobra.Command{
		Use:   "list FILE.md",
		Short: "List a document's tool-call blocks",
		Long: `List a document's tool-call blocks: line, id, server, tool, status (success, error,
missing, stale, invalid) and why the block uses that server. Problems with a block are
printed on stderr as FILE:LINE: message. Exits 1 when a block is invalid.`,
		Example: `  switchboard doc list runbook.md
  switchboard doc list runbook.md --json`,
		ValidArgsFunction: onlyFirst(completeFiles("md", "markdown")),
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("doc list takes one FILE.md; %s", docUsage)
			}
			return a.docList(args[0])
		},
	}
	a.adhocFlags(list)
	cmd.AddCommand(run, list)
	return cmd
}

// docList lists the blocks of the document at path.
func (a *app) docList(path string) error {
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	rep, err := notebook.Inspect(path, cfg)
	if err != nil {
		return err
	}
	invalid := 0
	for _, b := range rep.Blocks {
		if b.Error != nil {
			invalid++
		}
	}
	// Like hooks list, a listing with something that cannot run exits 1
	// (the blocks are listed all the same).
	fail := func() error {
		if invalid == 0 {
			return nil
		}
		return &exitError{code: ExitFailure}
	}
	if a.json {
		if err := a.printJSON(rep.Blocks); err != nil {
			return err
		}
		return fail()
	}
	if len(rep.Blocks) == 0 {
		fmt.Fprintf(a.stdout, "%s has no tool-call blocks\n", path)
		return nil
	}
	t := a.newTable("LINE", "ID", "SERVER", "TOOL", "STATUS", "WHY").keepWhole(0, 1, 2, 3)
	for _, b := range rep.Blocks {
		id, server, tool := dash(b.ID), dash(b.Server), dash(b.Tool)
		if b.ID != "" {
			id = "^" + b.ID
		}
		t.row(fmt.Sprint(b.Line), id, server, tool, b.Status, dash(b.Why))
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, b := range rep.Blocks {
		if b.Error != nil {
			fmt.Fprintf(a.stderr, "%s:%d: %s\n", path, b.At(), strings.TrimPrefix(blockError(b.Error), fmt.Sprintf("line %d: ", b.Line)))
		}
	}
	if invalid > 0 {
		// "1 of 3 blocks is invalid ...; fix it", "2 of 3 blocks are ...; fix them"
		noun, verb, them := "blocks", "are", "them"
		if len(rep.Blocks) == 1 {
			noun = "block"
		}
		if invalid == 1 {
			verb, them = "is", "it"
		}
		fmt.Fprintf(a.stderr, "%s: %d of %d %s %s invalid and cannot run; fix %s (doc run --check %s also reports missing and stale results)\n", path, invalid, len(rep.Blocks), noun, verb, them, path)
	}
	return fail()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// docRun runs (or checks, or dry-runs) the document at path.
func (a *app) docRun(cmd *cobra.Command, path string, f docRunFlags) error {
	ctx := cmd.Context()
	if f.only < 0 {
		return usagef("--only %d: give a line number from 1", f.only)
	}
	// 0 is the flag's "not given"; given, it must be in range.
	if cmd.Flags().Changed("concurrency") && (f.concurrency < 1 || f.concurrency > config.MaxNotebookConcurrency) {
		return usagef("--concurrency %d is out of range; give 1 to %d", f.concurrency, config.MaxNotebookConcurrency)
	}
	if f.check && f.dryRun {
		return usagef("give --check or --dry-run, not both")
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	if f.check {
		return a.docCheck(path, cfg)
	}
	if f.dryRun {
		return a.docDryRun(ctx, path, cfg, f.only)
	}

	// What a server asks during a block's call is answered here.
	ans, err := a.answerer(cfg, f.answers)
	if err != nil {
		return err
	}
	ctx = answer.With(ctx, ans)

	// Connect only to the servers the blocks to run use.
	rep, err := notebook.Inspect(path, cfg)
	if err != nil {
		return err
	}
	var servers []string
	for _, b := range rep.Blocks {
		if b.Server == "" || b.Error != nil || (f.only > 0 && (f.only < b.Line || f.only > b.EndLine)) {
			continue
		}
		if !contains(servers, b.Server) {
			servers = append(servers, b.Server)
		}
	}
	var caller notebook.Caller = noCaller{}
	if len(servers) > 0 {
		// The daemon's connections, limits and history when one serves
		// this configuration, as every other command; else our own.
		if c, st := a.daemon(ctx, cfg, false); c != nil {
			defer c.Close()
			caller = backendCaller{c}
			if !a.json {
				fmt.Fprintf(a.stderr, "running the calls in the daemon (pid %d)\n", st.PID)
			}
		} else {
			s, err := a.open(ctx, cfg, servers...)
			if err != nil {
				return err
			}
			defer s.close()
			caller = s.eng
		}
	}
	bar := newProgressBar(a.stderr)
	res, err := notebook.Run(ctx, path, notebook.Options{
		Config:      cfg,
		Caller:      caller,
		Concurrency: f.concurrency,
		Only:        f.only,
		Identity:    cliIdentity(cfg),
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
				fmt.Fprintf(a.stderr, "%s:%d: %s%s\n", path, b.At(), blockTarget(b), blockError(b.Error))
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

// docCheck reports the blocks whose result is missing, stale or a failed
// call, and those that cannot run.
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
				fmt.Fprintf(a.stderr, "%s:%d: %s\n", path, b.At(), blockError(b.Error))
			case string(toolcall.StatusError), string(toolcall.StatusTimeout), string(toolcall.StatusCancelled):
				fmt.Fprintf(a.stderr, "%s:%d: %sthe recorded result is a failed call (status %s); fix its cause, then run switchboard doc run %s\n", path, b.Line, blockTarget(b), b.Status, path)
			}
		}
		if rep.Failed == 0 {
			fmt.Fprintf(a.stdout, "%s: %s, every result up to date\n", path, plural(len(rep.Blocks), "block", "blocks"))
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
				fmt.Fprintf(a.stderr, "%s:%d: %s\n", path, b.At(), blockError(b.Error))
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

// backendCaller runs a document's calls through a control backend: the
// daemon's, so that they use its connections, limits, hooks and history.
type backendCaller struct{ b control.Backend }

// Call implements notebook.Caller.
func (c backendCaller) Call(ctx context.Context, req toolcall.Request) (*toolcall.Result, error) {
	raw := req.RawArguments
	if req.Arguments != nil {
		var err error
		if raw, err = json.Marshal(req.Arguments); err != nil {
			return nil, fmt.Errorf("encoding the arguments of %s/%s: %w", req.Server, req.Tool, err)
		}
	}
	res, err := c.b.Call(ctx, control.CallRequest{
		Server: req.Server, Tool: req.Tool, Arguments: raw,
		Source: string(req.Source), Identity: req.Identity, Origin: req.Origin, Timeout: req.Timeout,
		Budget:     control.Budget{MaxDuration: req.Budget.MaxDuration, MaxCost: req.Budget.MaxCost},
		OnProgress: req.OnProgress,
	})
	if err != nil {
		return nil, err
	}
	return &toolcall.Result{
		ID: res.ID, Status: toolcall.Status(res.Status), CallToolResult: res.Result,
		ContentType: toolcall.ContentType(res.ContentType), Display: toolcall.Display(res.Display),
		Duration: res.Duration, Retries: res.Retries, Bytes: res.Bytes, Truncated: res.Truncated,
		Partial: res.Partial, BudgetExceeded: res.BudgetExceeded, Missing: res.Missing,
		Cost: res.Cost, Progress: res.Progress,
	}, nil
}

// noCaller is the caller of a run in which no block can run.
type noCaller struct{}

func (noCaller) Call(context.Context, toolcall.Request) (*toolcall.Result, error) {
	return nil, fault.New(fault.Internal, "no server was opened for this call")
}
