package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// newHistoryCmd is `switchboard history`, with show.
func newHistoryCmd(a *app) *cobra.Command {
	var f store.CallFilter
	var since sinceValue
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List recorded calls, or show one",
		Long: `List recorded calls, newest first: start time, short id, source, server, tool, status,
duration and the error (kind: message), partial or truncated. Every call from every source
is recorded: the CLI, the gateway, hooks, documents, the agent and the web console. When a
page is full the command for the next one is printed on stderr.

The history keeps each call's argument shape (keys and types), never the values unless
history.record_values is true (then redacted).`,
		Example: `  switchboard history
  switchboard history --status error --since 2h
  switchboard history --server github --tool create_issue --json
  switchboard history --since 2026-01-02 --limit 200
  switchboard history show 3f2a9c1e`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("usage: switchboard history [--server S] [--tool T] [--status error] [--since 1h] | history show ID")
			}
			if !since.at.IsZero() {
				f.Since = since.at
			}
			return a.history(cmd.Context(), f, nextPage(cmd))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Server, "server", "", "only calls to this `server`")
	fl.StringVar(&f.Tool, "tool", "", "only calls of this `tool`")
	fl.StringVar(&f.Status, "status", "", "only calls with this `status`: success, error, timeout, cancelled, output_invalid, task, input_required")
	fl.StringVar(&f.Source, "source", "", "only calls from this `source`: "+strings.Join(historySources, ", "))
	fl.StringVar(&f.Identity, "identity", "", "only calls by this `user`")
	fl.Var(&since, "since", "only calls started within this `duration` (90m, 2h, 7d) or since this date (2026-01-02, or an RFC 3339 time)")
	fl.IntVar(&f.Limit, "limit", 50, "at most `n` calls, newest first")
	fl.StringVar(&f.BeforeID, "before", "", "page: calls older than the call with this `ID`")
	_ = cmd.RegisterFlagCompletionFunc("server", a.completeServer)
	_ = cmd.RegisterFlagCompletionFunc("tool", a.completeToolFlag(&f.Server))
	_ = cmd.RegisterFlagCompletionFunc("status", fixedCompletion("success", "error", "timeout", "cancelled", "output_invalid", "task", "input_required"))
	_ = cmd.RegisterFlagCompletionFunc("source", fixedCompletion(historySources...))
	cmd.AddCommand(&cobra.Command{
		Use:   "show ID",
		Short: "Show one recorded call in full",
		Long: `Show one recorded call in full. ID is the full id, the short one the table shows, or any
start of an id that only one recorded call has.`,
		Example: `  switchboard history show 3f2a9c1e
  switchboard history show 3f2a9c1e --json`,
		ValidArgsFunction: onlyFirst(a.completeCallID),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("usage: switchboard history show ID")
			}
			return a.historyShow(cmd.Context(), args[0])
		},
	})
	return cmd
}

// completeCallID completes the short id of one of the latest calls, each
// described by its server, tool, status and start.
func (a *app) completeCallID(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cfg := a.completionConfig()
	if cfg == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmp.Or(cmd.Context(), context.Background()), completionTimeout)
	defer cancel()
	b, done, err := a.backend(ctx, cfg, scope{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer done()
	calls, err := b.History(ctx, store.CallFilter{Limit: 20})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, c := range calls {
		out = append(out, cobra.CompletionWithDesc(shortID(c.ID), fmt.Sprintf("%s/%s %s %s", c.Server, c.Tool, c.Status, c.StartedAt.Local().Format("2006-01-02 15:04:05"))))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// sinceValue is the value of history --since: a duration back from now,
// or a date or time.
type sinceValue struct {
	text string
	at   time.Time
}

func (v *sinceValue) String() string { return v.text }
func (v *sinceValue) Type() string   { return "since" }
func (v *sinceValue) want() string {
	return "a duration like 90m, 2h or 7d, or a date like 2026-01-02"
}

// flagReason is why a flag's value was refused, said before the form the
// flag wants (see flagError).
type flagReason string

func (r flagReason) Error() string { return string(r) }

// Set parses a positive duration back from now (Go's units, and d for
// days: 7d, 1d12h), a date (its local midnight) or an RFC 3339 time.
func (v *sinceValue) Set(s string) error {
	if d, err := parseDays(s); err == nil {
		if d <= 0 {
			return flagReason("the duration must be more than 0: it counts back from now")
		}
		v.text, v.at = s, time.Now().Add(-d)
		return nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, time.Local); err == nil {
		v.text, v.at = s, t
		return nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		v.text, v.at = s, t
		return nil
	}
	return fmt.Errorf("not a duration or a date")
}

// parseDays is time.ParseDuration that also takes whole days first: 7d,
// 1d12h.
func parseDays(s string) (time.Duration, error) {
	days, rest, ok := strings.Cut(s, "d")
	if !ok {
		return time.ParseDuration(s)
	}
	n, err := strconv.Atoi(days)
	if err != nil || days == "" || days[0] == '+' || n > 100000 {
		return 0, fmt.Errorf("not a number of days: %q", days)
	}
	d := time.Duration(n) * 24 * time.Hour
	if rest == "" {
		return d, nil
	}
	more, err := time.ParseDuration(rest)
	if err != nil || strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "+") {
		return 0, fmt.Errorf("not a duration: %q", rest)
	}
	return d + more, nil
}

// nextPage returns the command that lists the page after the call with
// id: this one's with the same filters and files (--since as the time it
// stood for, so that the window does not move) and --before id.
func nextPage(cmd *cobra.Command) func(id string) string {
	return func(id string) string {
		words := []string{"switchboard", "history"}
		cmd.Flags().Visit(func(fl *pflag.Flag) {
			switch fl.Name {
			case "before", "json", "output", "log-level":
				return
			case "since":
				if v, ok := fl.Value.(*sinceValue); ok {
					words = append(words, "--since", v.at.UTC().Format(time.RFC3339))
					return
				}
			}
			words = append(words, "--"+fl.Name, shellQuote(fl.Value.String()))
		})
		return strings.Join(append(words, "--before", id), " ")
	}
}

// history lists recorded calls; next is the command for the page after
// the call with an id.
func (a *app) history(ctx context.Context, f store.CallFilter, next func(id string) string) error {
	switch f.Status {
	case "", "success", "error", "timeout", "cancelled", "output_invalid", "task", "input_required":
	default:
		return usagef("--status %q is not a status; want success, error, timeout, cancelled, output_invalid, task or input_required", f.Status)
	}
	if f.Source != "" && !contains(historySources, f.Source) {
		return usagef("--source %q is not a source; want %s", f.Source, strings.Join(historySources, ", "))
	}
	if f.Limit < 1 {
		return usagef("--limit %d is out of range; give 1 or more", f.Limit)
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	b, done, err := a.backend(ctx, cfg, scope{})
	if err != nil {
		return err
	}
	defer done()
	if f.BeforeID != "" {
		// The short id the table shows, or any unique start of one.
		c, err := b.HistoryCall(ctx, f.BeforeID)
		if err != nil {
			return err
		}
		f.BeforeID = c.ID
	}
	// One more than the page, to know whether there is a next page.
	page := f
	page.Limit++
	calls, err := b.History(ctx, page)
	if err != nil {
		return err
	}
	more := len(calls) > f.Limit
	calls = calls[:min(len(calls), f.Limit)]
	if _, ok := cfg.Server(f.Server); len(calls) == 0 && f.Server != "" && !ok {
		// The history keeps the calls of servers removed since, so a name
		// the configuration lacks is not an error; but with nothing found,
		// a mistyped name would read as "no calls".
		a.noteUnknownServer(cfg, f.Server)
	}
	if a.json {
		out := make([]historyRecord, 0, len(calls))
		for _, c := range calls {
			out = append(out, newHistoryRecord(c))
		}
		return a.printJSON(out)
	}
	if len(calls) == 0 {
		fmt.Fprintln(a.stdout, "No calls recorded (that match).")
		return nil
	}
	t := a.newTable("STARTED", "ID", "SOURCE", "SERVER", "TOOL", "STATUS", "DURATION", "NOTE").keepWhole(0, 1, 3, 4)
	for _, c := range calls {
		note := c.ErrorMessage
		if c.ErrorKind != "" && !c.Partial {
			note = c.ErrorKind + ": " + note
		}
		switch {
		case c.Partial:
			note = "partial: " + note
		case c.Truncated:
			note = strings.TrimSpace("truncated " + note)
		}
		if c.URLElicitations > 0 {
			note = strings.TrimSpace("after URL elicitation; " + note)
			note = strings.TrimSuffix(note, ";")
		}
		if c.InputRounds > 0 {
			note = strings.TrimSpace(fmt.Sprintf("after %d input round(s); ", c.InputRounds) + note)
			note = strings.TrimSuffix(note, ";")
		}
		t.row(c.StartedAt.Local().Format("2006-01-02 15:04:05"), shortID(c.ID), c.Source, c.Server, c.Tool, c.Status,
			c.Duration.Round(time.Millisecond).String(), firstLine(note, 80))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if more {
		fmt.Fprintf(a.stderr, "more: %s\n", next(calls[len(calls)-1].ID))
	}
	return nil
}

// noteUnknownServer says on stderr that no server named name is
// configured, with the closest names.
func (a *app) noteUnknownServer(cfg *config.Config, name string) {
	fe := fault.As(upstream.UnknownServer(cfg, name))
	fmt.Fprintf(a.stderr, "note: %s\n", fe.Message)
	for _, s := range fe.Suggestions {
		if !strings.Contains(fe.Message, fmt.Sprintf("%q", s)) {
			fmt.Fprintf(a.stderr, "  hint: %s\n", s)
		}
	}
}

// historySources are the sources --source takes.
var historySources = []string{
	string(toolcall.SourceCLI), string(toolcall.SourceGateway), string(toolcall.SourceHook),
	string(toolcall.SourceDocument), string(toolcall.SourceAgent), string(toolcall.SourceWeb),
}

// historyRecord is one recorded call as `history --json` prints it
// (docs/cli.md#switchboard-history).
type historyRecord struct {
	ID       string `json:"id"`
	Source   string `json:"source"`
	Identity string `json:"identity"`
	// Origin is what in its source made the call: a hook and its event,
	// a document's block, an agent's step.
	Origin       string    `json:"origin,omitempty"`
	Server       string    `json:"server"`
	Tool         string    `json:"tool"`
	Status       string    `json:"status"`
	ErrorKind    string    `json:"error_kind,omitempty"`
	ErrorMessage string    `json:"error_message,omitempty"`
	StartedAt    time.Time `json:"started_at"`
	// FinishedAt is null for a call that never finished (it was running
	// when its process was killed).
	FinishedAt  *time.Time `json:"finished_at"`
	DurationMS  float64    `json:"duration_ms"`
	Retries     int        `json:"retries"`
	ResultBytes int64      `json:"result_bytes"`
	Truncated   bool       `json:"truncated"`
	Partial     bool       `json:"partial"`
	// URLElicitations counts the URL elicitations the server required
	// (-32042) and the person completed before the call was made again.
	URLElicitations int `json:"url_elicitations,omitempty"`
	// InputRounds counts the input-required results the gateway gave
	// its client (protocol 2026-07-28) during the call.
	InputRounds int             `json:"input_rounds,omitempty"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
}

func newHistoryRecord(c store.CallRecord) historyRecord {
	return historyRecord{
		ID: c.ID, Source: c.Source, Identity: c.Identity, Origin: c.Origin, Server: c.Server, Tool: c.Tool,
		Status: c.Status, ErrorKind: c.ErrorKind, ErrorMessage: c.ErrorMessage,
		StartedAt: c.StartedAt, FinishedAt: finishedAt(c.FinishedAt),
		DurationMS: float64(c.Duration.Microseconds()) / 1000,
		Retries:    c.Retries, ResultBytes: c.ResultBytes, Truncated: c.Truncated, Partial: c.Partial,
		URLElicitations: c.URLElicitations, InputRounds: c.InputRounds, Arguments: c.Args,
	}
}

// finishedAt is t, or nil for a call that never finished.
func finishedAt(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// historyBackend returns the backend history reads from: the daemon's,
// else the history store of the configuration.
func (a *app) historyBackend(ctx context.Context) (control.Backend, func(), error) {
	cfg, err := a.loadConfig()
	if err != nil {
		return nil, nil, err
	}
	return a.backend(ctx, cfg, scope{})
}

func (a *app) historyShow(ctx context.Context, id string) error {
	b, done, err := a.historyBackend(ctx)
	if err != nil {
		return err
	}
	defer done()
	c, err := b.HistoryCall(ctx, id)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(newHistoryRecord(c))
	}
	t := a.newTable().keepWhole(0)
	row := func(k, v string) { t.row(k, v) }
	row("id", c.ID)
	row("source", c.Source)
	row("identity", c.Identity)
	if c.Origin != "" {
		row("origin", c.Origin)
	}
	row("server", c.Server)
	row("tool", c.Tool)
	row("status", c.Status)
	if c.ErrorKind != "" {
		row("error", c.ErrorKind+": "+c.ErrorMessage)
	}
	row("started", c.StartedAt.Local().Format(time.RFC3339Nano))
	if c.FinishedAt.IsZero() {
		row("finished", "- (never: its process stopped while it ran)")
	} else {
		row("finished", c.FinishedAt.Local().Format(time.RFC3339Nano))
	}
	row("duration", c.Duration.String())
	row("retries", fmt.Sprint(c.Retries))
	if c.URLElicitations > 0 {
		row("url elicitations", fmt.Sprintf("%d completed, then the call was made again", c.URLElicitations))
	}
	if c.InputRounds > 0 {
		row("input rounds", fmt.Sprintf("%d: the client was asked in input-required results, then the call went on", c.InputRounds))
	}
	row("result bytes", fmt.Sprint(c.ResultBytes))
	row("truncated", fmt.Sprint(c.Truncated))
	row("partial", fmt.Sprint(c.Partial))
	row("arguments", string(c.Args))
	return t.flush()
}
