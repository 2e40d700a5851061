package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// callFlags are the flags of `switchboard call`.
type callFlags struct {
	args        string
	timeout     time.Duration
	outDir      string
	maxDuration time.Duration
	maxCost     float64
	answers     answerFlags
	task        bool
	ttl         time.Duration
}

// newCallCmd is `switchboard call SERVER TOOL [key=value ...]`.
func newCallCmd(a *app) *cobra.Command {
	var f callFlags
	cmd := &cobra.Command{
		Use:   "call SERVER TOOL [key=value ...]",
		Short: "Call a tool",
		Long: `Call a tool through the execution engine, as every other caller does: the stop
switch, limits, validation against the tool's input schema, timeout, retries, the size
limit, redaction and the history.

Values are typed by the tool's input schema: string as written; integer and number parsed
(a=2, b=3.5); boolean true or false; array, object and null as JSON (tags='["a","b"]').
key:=JSON always takes raw JSON (count:=5, name:='"007"'). Use -- before arguments that
start with a dash.

Text content goes to stdout; images, audio and binary resources are saved to files whose
paths are printed; structuredContent follows as indented JSON (unless a text block already
holds it). A tool error prints its content to stderr and exits 1; so does a result whose
structuredContent does not match the tool's outputSchema, after a warning naming each
mismatch (the result is shown as the server sent it). Ctrl-C cancels the call upstream and
exits 130.

TOOL may also be given as the gateway lists it, SERVER__TOOL (switchboard call
tasks__list_tasks). With --stdio or --url, give only TOOL.`,
		Example: `  switchboard call tasks create_task title="Buy milk" priority=High
  switchboard call everything get-sum a=2 b=3
  switchboard call github search_issues --args @query.json --json
  echo '{"message": "hi"}' | switchboard call everything echo --args -
  switchboard call --stdio "npx -y @modelcontextprotocol/server-everything" echo message=hi`,
		ValidArgsFunction: a.completeCall,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.call(cmd.Context(), args, f)
		},
	}
	a.adhocFlags(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.args, "args", "", "arguments: a `JSON` object, @file to read one from a file, or - for stdin (key=value pairs win)")
	fl.DurationVar(&f.timeout, "timeout", 0, "request timeout, 1s to 5m (default: the server's request_timeout)")
	fl.StringVar(&f.outDir, "out-dir", "", "`directory` for images, audio and binary resources (default: the temp dir)")
	fl.DurationVar(&f.maxDuration, "max-duration", 0, "budget: end the call after this long and return what it has, marked partial")
	fl.Float64Var(&f.maxCost, "max-cost", 0, "budget: end the call once the cost the tool reports exceeds this, returning what it has")
	addAnswerFlags(cmd, &f.answers)
	fl.BoolVar(&f.task, "task", false, "start the call as a task: print the task's id and status, and follow it with switchboard task (see task --help)")
	fl.DurationVar(&f.ttl, "ttl", 0, "with --task: how long the server keeps the task and its result (default: the server's)")
	_ = cmd.RegisterFlagCompletionFunc("out-dir", completeDirs)
	_ = cmd.RegisterFlagCompletionFunc("args", completeFiles())
	return cmd
}

// call calls a tool and prints its result.
func (a *app) call(ctx context.Context, args []string, f callFlags) error {
	cfg, server, rest, err := a.serverItemCommand(args, "call SERVER TOOL [key=value ...]")
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usagef("missing TOOL; usage: switchboard call SERVER TOOL [key=value ...]")
	}
	toolName, pairs := rest[0], rest[1:]
	if f.timeout != 0 && (f.timeout < config.MinRequestTimeout || f.timeout > config.MaxRequestTimeout) {
		return usagef("--timeout %s is out of range; give 1s to 5m", config.FormatDuration(f.timeout))
	}
	ans, err := a.answerer(cfg, f.answers)
	if err != nil {
		return err
	}
	ctx = answer.With(ctx, ans)
	a.serverLogs = true // the answerer shows them, at serverLogLevel

	b, done, err := a.backend(ctx, cfg, scope{connect: true, only: []string{server}})
	if err != nil {
		return err
	}
	defer done()
	// The tool's schema types the key=value pairs. A tool that is not
	// found still goes to the engine, which reports and records it.
	// So does a call to a server that is not connected or disabled: the
	// engine records every attempt in the history and says why it failed.
	var schema any
	tool, err := b.Tool(ctx, server, toolName)
	switch {
	case err == nil:
		schema = tool.InputSchema
		if err := checkTaskSupport(server, toolName, tool, f.task); err != nil {
			return err
		}
	case ctx.Err() != nil:
		return err
	}
	arguments, err := buildArgs(f.args, a.stdin, pairs, schema)
	if err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) && fe.Kind == fault.Validation {
			if len(fe.Fields) > 0 {
				fe.Message = fmt.Sprintf("arguments for %s/%s are invalid", server, toolName)
			}
			fe.WithDetail("server", server).WithDetail("tool", toolName)
		}
		return err
	}
	a.noteUnknownParams(toolName, arguments, schema)
	var raw json.RawMessage
	if arguments != nil {
		if raw, err = json.Marshal(arguments); err != nil {
			return fmt.Errorf("encoding the arguments: %w", err)
		}
	}

	if f.task {
		return a.callAsTask(ctx, b, control.CallRequest{Server: server, Tool: toolName, Arguments: raw,
			Source: string(toolcall.SourceCLI), Identity: cliIdentity(cfg), Timeout: f.timeout, Task: taskParams(f.ttl)})
	}
	bar := newProgressBar(a.stderr)
	ans.pause = bar.clear
	start := time.Now()
	res, err := b.Call(ctx, control.CallRequest{
		Server:    server,
		Tool:      toolName,
		Arguments: raw,
		Source:    string(toolcall.SourceCLI),
		Identity:  cliIdentity(cfg),
		Timeout:   f.timeout,
		Budget:    control.Budget{MaxDuration: f.maxDuration, MaxCost: f.maxCost},
		LogLevel:  serverLogLevel,
		OnProgress: func(p toolcall.Progress) {
			bar.update(&mcp.ProgressNotificationParams{Progress: p.Processed, Total: p.Total, Message: p.Message})
		},
	})
	bar.clear()
	if err != nil && ctx.Err() != nil {
		// Ctrl-C: in-process the engine cancels the call upstream; through
		// the daemon, the daemon does when the request is dropped. Either
		// way the person reads the same line.
		return fault.Wrap(fault.Cancelled, err, "call to %s/%s was cancelled", server, toolName)
	}
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	if res.Truncated {
		fmt.Fprintf(a.stderr, "note: the result was %d bytes and was truncated to limits.max_output\n", res.Bytes)
	}
	if res.Partial {
		fmt.Fprintf(a.stderr, "note: partial result (budget exceeded): %s\n", res.Missing)
	}
	a.warnOutputInvalid(res.OutputError)
	if a.json {
		if err := a.printJSON(res.Result); err != nil {
			return err
		}
		if res.Result.IsError || res.OutputError != nil {
			return &exitError{ExitFailure}
		}
		return nil
	}
	out := a.stdout
	if res.Result.IsError {
		out = a.stderr
	}
	r := &renderer{out: out, outDir: f.outDir, prefix: toolName}
	for _, block := range res.Result.Content {
		if err := r.content(block); err != nil {
			return err
		}
	}
	if err := a.printStructured(out, res.Result); err != nil {
		return err
	}
	a.logger().Debug("call finished", "request_id", res.ID, "server", server, "tool", toolName, "duration", elapsed)
	if res.Result.IsError || res.OutputError != nil {
		return &exitError{ExitFailure}
	}
	return nil
}

// noteUnknownParams says on stderr which arguments the tool's input schema
// does not name, when it lets them through (no additionalProperties:
// false, which buildArgs refuses): a misspelt optional parameter would
// otherwise be sent and ignored without a word, and a misspelt required
// one reported only as missing.
func (a *app) noteUnknownParams(tool string, arguments map[string]any, schema any) {
	props, additional := catalog.SchemaProps(schema)
	if len(props) == 0 || !additional {
		return
	}
	names := sortedKeys(props)
	for _, k := range sortedKeys(arguments) {
		if _, ok := props[k]; ok {
			continue
		}
		hint := "its parameters are: " + strings.Join(names, ", ")
		if s := suggest.Closest(k, names, 1); len(s) > 0 && suggest.Distance(k, s[0]) < len([]rune(k)) {
			hint = fmt.Sprintf("did you mean %q?", s[0])
		}
		fmt.Fprintf(a.stderr, "note: %s has no parameter %q in its input schema; it is sent as given (%s)\n", tool, k, hint)
	}
}

// cliIdentity is the identity of a CLI caller: the configuration's
// gateway.default_user (the OS user unless the file names another), so
// that the CLI and a local MCP client on the same configuration act as
// the same user.
func cliIdentity(cfg *config.Config) string {
	if cfg != nil && cfg.Gateway.DefaultUser != "" {
		return cfg.Gateway.DefaultUser
	}
	return config.OSUser()
}

// completeCall completes `call SERVER TOOL key=`: a server, one of its
// tools, then the tool's parameters not given yet.
func (a *app) completeCall(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	n := 2 // SERVER TOOL
	if a.adhoc() {
		n = 1
	}
	if len(args) < n {
		return a.completeServerThenTool(cmd, args, toComplete)
	}
	cfg, server, rest, err := a.serverCommand(args, "")
	if err != nil || len(rest) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	a.withCompletionBackend(cmd.Context(), cfg, server, func(ctx context.Context, b control.Backend) {
		tool, err := b.Tool(ctx, server, rest[0])
		if err != nil {
			return
		}
		props, _ := catalog.SchemaProps(tool.InputSchema)
		given := map[string]bool{}
		for _, p := range rest[1:] {
			k, _, _ := strings.Cut(p, "=")
			given[strings.TrimSuffix(k, ":")] = true
		}
		for _, k := range sortedKeys(props) {
			if !given[k] {
				desc, _ := props[k]["description"].(string)
				out = append(out, withDesc(k+"=", desc))
			}
		}
	})
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}
