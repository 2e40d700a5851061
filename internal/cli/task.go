package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// taskFlags are the flags of `switchboard task`.
type taskFlags struct {
	wait bool
	// watch prints every change of a task's status until it has ended.
	watch  bool
	outDir string
	// answers answer what the server asks while task result waits (the
	// task is input_required until it has its answer).
	answers answerFlags
}

// taskInfo is a task as a server describes it (MCP 2025-11-25).
type taskInfo struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt,omitempty"`
	LastUpdatedAt string `json:"lastUpdatedAt,omitempty"`
	TTL           *int64 `json:"ttl,omitempty"`
	PollInterval  *int64 `json:"pollInterval,omitempty"`
}

// terminal reports whether the task has ended.
func (t taskInfo) terminal() bool {
	return t.Status == "completed" || t.Status == "failed" || t.Status == "cancelled"
}

// defaultTaskPoll is how often --wait asks when the server suggests no
// pollInterval.
const defaultTaskPoll = time.Second

// minTaskPoll bounds how often --wait asks, whatever the server suggests.
const minTaskPoll = 50 * time.Millisecond

// newTaskCmd is `switchboard task get|result|cancel|list SERVER [ID]`.
func newTaskCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "task",
		Short: "Follow the tasks tool calls started (get, result, cancel, list)",
		Long: `A tool call started with 'switchboard call SERVER TOOL --task' runs as a task (MCP
2025-11-25): the server answers at once with the task's id, and the call goes on. These
commands ask the server about it: get shows its status, result waits for it to end and
prints the tool's result (as call prints it; the outcome is recorded in the history),
cancel cancels it, list shows the tasks. --wait polls get until the task ends or needs
input (input_required: the server asks on result), as often as its pollInterval says. What
the server asks while result waits is answered as during a call (--elicit, --sampling: on the
terminal, else declined with a note). A task belongs to the session that started it: run the
daemon (switchboard serve) so that tasks outlive one command.`,
		Example: `  # files: a server whose confirm_delete tool runs as a task (the TypeScript SDK's
  # simpleTaskInteractive example); the built-in tasks server has no task support
  switchboard call files confirm_delete filename=a.txt --task
  switchboard task get files 786512e2-9e0d-44bd-8f29-789f320fe840
  switchboard task result files 786512e2-9e0d-44bd-8f29-789f320fe840 --wait
  switchboard task list files --json`,
		RunE: subcommandRequired,
	}
	var f taskFlags
	sub := func(method, use, short, example string) *cobra.Command {
		c := &cobra.Command{
			Use:               use,
			Short:             short,
			Example:           example,
			ValidArgsFunction: onlyFirst(a.completeServer),
			RunE: func(cmd *cobra.Command, args []string) error {
				return a.task(cmd.Context(), method, args, f)
			},
		}
		// A task started by an ad hoc call (call --url/--stdio … --task)
		// is followed on the same ad hoc server.
		a.adhocFlags(c)
		return c
	}
	get := sub(control.TaskGet, "get SERVER ID", "Show a task's status",
		"  switchboard task get files 786512e2-9e0d-44bd-8f29-789f320fe840\n  switchboard task get files 786512e2-9e0d-44bd-8f29-789f320fe840 --wait --json")
	get.Flags().BoolVar(&f.wait, "wait", false, "poll until the task has ended (completed, failed or cancelled) or needs input (input_required: task result asks)")
	get.Flags().BoolVar(&f.watch, "watch", false, "print each change of the task's status until it has ended (with --json, one JSON object a line)")
	result := sub(control.TaskResult, "result SERVER ID", "Wait for a task to end and print the tool's result",
		"  switchboard task result files 786512e2-9e0d-44bd-8f29-789f320fe840 --wait\n  switchboard task result files 786512e2-9e0d-44bd-8f29-789f320fe840 --json")
	result.Flags().BoolVar(&f.wait, "wait", false, "poll the task's status until it has ended or needs input, then fetch the result")
	result.Flags().StringVar(&f.outDir, "out-dir", "", "`directory` for images, audio and binary resources (default: the temp dir)")
	_ = result.RegisterFlagCompletionFunc("out-dir", completeDirs)
	addAnswerFlags(result, &f.answers)
	cancel := sub(control.TaskCancel, "cancel SERVER ID", "Cancel a task",
		"  switchboard task cancel files 786512e2-9e0d-44bd-8f29-789f320fe840")
	list := sub(control.TaskList, "list SERVER", "List the tasks",
		"  switchboard task list files\n  switchboard task list files --json")
	cmd.AddCommand(get, result, cancel, list)
	return cmd
}

// task runs one task method.
func (a *app) task(ctx context.Context, method string, args []string, f taskFlags) error {
	target := "SERVER"
	if a.adhoc() {
		target = a.adhocTarget()
	}
	usage := "task " + method + " " + target + " ID"
	if method == control.TaskList {
		usage = "task list " + target
	}
	cfg, server, rest, err := a.serverCommand(args, usage)
	if err != nil {
		return err
	}
	var id string
	switch {
	case method == control.TaskList && len(rest) != 0:
		return usagef("usage: switchboard %s", usage)
	case method != control.TaskList && len(rest) != 1:
		return usagef("usage: switchboard %s (the id that 'switchboard call %s TOOL --task' printed)", usage, target)
	case method != control.TaskList:
		id = rest[0]
	}
	if method == control.TaskResult {
		// A task whose server needs input asks while its result is
		// awaited: answered as a call's questions are.
		ans, err := a.answerer(cfg, f.answers)
		if err != nil {
			return err
		}
		ctx = answer.With(ctx, ans)
	}
	b, done, err := a.backend(ctx, cfg, scope{connect: true, only: []string{server}})
	if err != nil {
		return err
	}
	defer done()
	tb, ok := b.(control.Tasker)
	if !ok {
		return fault.New(fault.Internal, "this backend cannot reach tasks")
	}
	req := control.TaskRequest{Server: server, Method: method, TaskID: id, Identity: cliIdentity(cfg)}
	if f.watch && method == control.TaskGet {
		return a.watchTask(ctx, tb, req)
	}
	if f.wait && method != control.TaskList {
		if err := a.waitTask(ctx, tb, req); err != nil {
			return err
		}
	}
	ans, err := tb.Task(ctx, req)
	if err != nil {
		return err
	}
	switch method {
	case control.TaskResult:
		var res mcp.CallToolResult
		if err := json.Unmarshal(ans.Result, &res); err != nil {
			return fault.Wrap(fault.Protocol, err, "decoding the result of task %s of %s", id, server)
		}
		return a.printToolResult(&res, f.outDir, server)
	case control.TaskList:
		var list struct {
			Tasks []taskInfo `json:"tasks"`
		}
		if err := json.Unmarshal(ans.Result, &list); err != nil {
			return fault.Wrap(fault.Protocol, err, "decoding the task list of %s", server)
		}
		if a.json {
			// A bare array, as every command that lists things prints.
			if list.Tasks == nil {
				list.Tasks = []taskInfo{}
			}
			return a.printJSON(list.Tasks)
		}
		return a.printTasks(list.Tasks, server)
	default:
		var t taskInfo
		if err := json.Unmarshal(ans.Result, &t); err != nil {
			return fault.Wrap(fault.Protocol, err, "decoding task %s of %s", id, server)
		}
		if a.json {
			return a.printJSON(json.RawMessage(ans.Result))
		}
		a.printTask(a.stdout, t)
		return nil
	}
}

// waitTask polls the task's status until it has ended or needs input
// (which the server asks for on tasks/result), as often as its
// pollInterval says; on a terminal each change of status is shown.
func (a *app) waitTask(ctx context.Context, tb control.Tasker, req control.TaskRequest) error {
	get := req
	get.Method = control.TaskGet
	last := ""
	for {
		ans, err := tb.Task(ctx, get)
		if err != nil {
			return err
		}
		var t taskInfo
		if err := json.Unmarshal(ans.Result, &t); err != nil {
			return fault.Wrap(fault.Protocol, err, "decoding task %s of %s", req.TaskID, req.Server)
		}
		if t.Status != last && isTerminal(a.stderr) {
			fmt.Fprintf(a.stderr, "task %s: %s\n", t.TaskID, statusLine(t))
		}
		last = t.Status
		if t.terminal() || t.Status == "input_required" {
			// input_required: the server asks its questions on tasks/result.
			return nil
		}
		if err := pollWait(ctx, t); err != nil {
			return err
		}
	}
}

// pollWait waits as long as the task's pollInterval asks (defaultTaskPoll
// without one, never less than minTaskPoll), or until ctx ends.
func pollWait(ctx context.Context, t taskInfo) error {
	wait := defaultTaskPoll
	if t.PollInterval != nil {
		wait = max(time.Duration(*t.PollInterval)*time.Millisecond, minTaskPoll)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// watchTask prints the task's status, then each change of it (status or
// message), polling as often as its pollInterval says, until the task has
// ended; --json prints each as one JSON object a line, as the server
// answered it.
func (a *app) watchTask(ctx context.Context, tb control.Tasker, req control.TaskRequest) error {
	last := ""
	for {
		ans, err := tb.Task(ctx, req)
		if err != nil {
			return err
		}
		var t taskInfo
		if err := json.Unmarshal(ans.Result, &t); err != nil {
			return fault.Wrap(fault.Protocol, err, "decoding task %s of %s", req.TaskID, req.Server)
		}
		if now := statusLine(t); now != last {
			last = now
			if a.json {
				if err := a.printStreamed(json.RawMessage(ans.Result)); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(a.stdout, "%s task %s: %s\n", time.Now().Format("15:04:05"), t.TaskID, now)
			}
		}
		if t.terminal() {
			return nil
		}
		if err := pollWait(ctx, t); err != nil {
			return err
		}
	}
}

// statusLine is a task's status and message.
func statusLine(t taskInfo) string {
	if t.StatusMessage != "" {
		return t.Status + " (" + t.StatusMessage + ")"
	}
	return t.Status
}

// printTask prints one task for a person.
func (a *app) printTask(w io.Writer, t taskInfo) {
	fmt.Fprintf(w, "task %s: %s\n", t.TaskID, statusLine(t))
	if t.CreatedAt != "" {
		fmt.Fprintf(w, "  created  %s\n", t.CreatedAt)
	}
	if t.LastUpdatedAt != "" {
		fmt.Fprintf(w, "  updated  %s\n", t.LastUpdatedAt)
	}
	if t.TTL != nil {
		fmt.Fprintf(w, "  kept     %s after it was created\n", time.Duration(*t.TTL)*time.Millisecond)
	}
	if t.PollInterval != nil {
		fmt.Fprintf(w, "  poll     every %s\n", time.Duration(*t.PollInterval)*time.Millisecond)
	}
}

// printTasks prints a task list as a table.
func (a *app) printTasks(tasks []taskInfo, server string) error {
	if len(tasks) == 0 {
		fmt.Fprintf(a.stdout, "no tasks on %s\n", server)
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tUPDATED\tMESSAGE")
	for _, t := range tasks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.TaskID, t.Status, t.LastUpdatedAt, t.StatusMessage)
	}
	return tw.Flush()
}

// printToolResult prints a tool's result as call does: --json as JSON,
// else its content (to stderr when it is an error, which exits 1).
func (a *app) printToolResult(res *mcp.CallToolResult, outDir, prefix string) error {
	if a.json {
		if err := a.printJSON(res); err != nil {
			return err
		}
		if res.IsError {
			return &exitError{ExitFailure}
		}
		return nil
	}
	out := a.stdout
	if res.IsError {
		out = a.stderr
	}
	r := &renderer{out: out, outDir: outDir, prefix: prefix}
	for _, block := range res.Content {
		if err := r.content(block); err != nil {
			return err
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		if err := a.printJSONTo(out, res.StructuredContent); err != nil {
			return err
		}
	}
	if res.IsError {
		return &exitError{ExitFailure}
	}
	return nil
}

// taskParams are the params.task of a call started as a task.
func taskParams(ttl time.Duration) json.RawMessage {
	if ttl <= 0 {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(fmt.Sprintf(`{"ttl":%d}`, ttl.Milliseconds()))
}

// checkTaskSupport says when a call's --task (or its absence) does not fit
// the tool's execution.taskSupport, as its server listed it.
func checkTaskSupport(server, tool string, info control.ToolInfo, asTask bool) error {
	switch {
	case asTask && info.TaskSupport == "":
		return fault.New(fault.Validation, "%s/%s cannot run as a task: its server declares no task support for it (execution.taskSupport is forbidden or absent)", server, tool).
			WithDetail("server", server).WithDetail("tool", tool).
			WithSuggestions("call it without --task")
	case !asTask && info.TaskSupport == "required":
		return fault.New(fault.Validation, "%s/%s runs only as a task (execution.taskSupport: required)", server, tool).
			WithDetail("server", server).WithDetail("tool", tool).
			WithSuggestions(fmt.Sprintf("add --task, then follow it with switchboard task get|result %s ID", server))
	}
	return nil
}

// printStartedTask prints the task a call started.
func (a *app) printStartedTask(res *control.CallResult, server string) error {
	if a.json {
		return a.printJSON(map[string]json.RawMessage{"task": res.Task})
	}
	var t taskInfo
	if err := json.Unmarshal(res.Task, &t); err != nil {
		return fault.Wrap(fault.Protocol, err, "decoding the task %s started", server)
	}
	a.printTask(a.stdout, t)
	target := server
	if a.adhoc() {
		target = a.adhocTarget()
	}
	fmt.Fprintf(a.stderr, "follow it with: switchboard task get %s %s (or task result %s %s --wait)\n", target, t.TaskID, target, t.TaskID)
	return nil
}

// callAsTask starts a call as a task and prints the task.
func (a *app) callAsTask(ctx context.Context, b control.Backend, req control.CallRequest) error {
	res, err := b.Call(ctx, req)
	if err != nil {
		return err
	}
	if res.Task == nil {
		// The server ran it at once: its result.
		fmt.Fprintf(a.stderr, "note: %s ran the call at once rather than as a task\n", req.Server)
		return a.printToolResult(res.Result, "", req.Tool)
	}
	return a.printStartedTask(res, req.Server)
}
