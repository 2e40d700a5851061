package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

func runHistory(ctx context.Context, a *app, args []string) error {
	fs := a.flags("history", false)
	var f store.CallFilter
	fs.StringVar(&f.Server, "server", "", "only calls to this `server`")
	fs.StringVar(&f.Tool, "tool", "", "only calls of this `tool`")
	fs.StringVar(&f.Status, "status", "", "only calls with this `status`: success, error, timeout, cancelled")
	fs.StringVar(&f.Source, "source", "", "only calls from this `source`: cli, gateway, hook, document, agent")
	fs.StringVar(&f.Identity, "identity", "", "only calls by this `user`")
	since := fs.Duration("since", 0, "only calls started within this `duration` (e.g. 1h)")
	fs.IntVar(&f.Limit, "limit", 50, "at most `n` calls, newest first")
	fs.StringVar(&f.BeforeID, "before", "", "page: calls older than the call with this `ID`")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 2 && pos[0] == "show":
		return a.historyShow(ctx, pos[1])
	case len(pos) > 0:
		return usagef("usage: switchboard history [--server S] [--tool T] [--status error] [--since 1h] | history show ID")
	}
	switch f.Status {
	case "", "success", "error", "timeout", "cancelled":
	default:
		return usagef("--status %q is not a status; want success, error, timeout or cancelled", f.Status)
	}
	if f.Source != "" && !contains(historySources, f.Source) {
		return usagef("--source %q is not a source; want %s", f.Source, strings.Join(historySources, ", "))
	}
	if f.Limit < 1 {
		return usagef("--limit %d is out of range; give 1 or more", f.Limit)
	}
	if *since < 0 {
		return usagef("--since must be positive")
	}
	if *since > 0 {
		f.Since = time.Now().Add(-*since)
	}
	b, done, err := a.historyBackend(ctx)
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
	calls, err := b.History(ctx, f)
	if err != nil {
		return err
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
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STARTED\tID\tSOURCE\tSERVER\tTOOL\tSTATUS\tDURATION\tNOTE")
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.StartedAt.Local().Format("2006-01-02 15:04:05"), shortID(c.ID),
			c.Source, c.Server, c.Tool, c.Status, c.Duration.Round(time.Millisecond), firstLine(note, 80))
	}
	tw.Flush()
	if len(calls) == f.Limit {
		fmt.Fprintf(a.stderr, "more: switchboard history --before %s\n", calls[len(calls)-1].ID)
	}
	return nil
}

// historySources are the sources --source takes.
var historySources = []string{
	string(toolcall.SourceCLI), string(toolcall.SourceGateway), string(toolcall.SourceHook),
	string(toolcall.SourceDocument), string(toolcall.SourceAgent), string(toolcall.SourceWeb),
}

// historyRecord is one recorded call as `history --json` prints it
// (docs/cli.md#switchboard-history).
type historyRecord struct {
	ID           string          `json:"id"`
	Source       string          `json:"source"`
	Identity     string          `json:"identity"`
	Server       string          `json:"server"`
	Tool         string          `json:"tool"`
	Status       string          `json:"status"`
	ErrorKind    string          `json:"error_kind,omitempty"`
	ErrorMessage string          `json:"error_message,omitempty"`
	StartedAt    time.Time       `json:"started_at"`
	FinishedAt   time.Time       `json:"finished_at"`
	DurationMS   float64         `json:"duration_ms"`
	Retries      int             `json:"retries"`
	ResultBytes  int64           `json:"result_bytes"`
	Truncated    bool            `json:"truncated"`
	Partial      bool            `json:"partial"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
}

func newHistoryRecord(c store.CallRecord) historyRecord {
	return historyRecord{
		ID: c.ID, Source: c.Source, Identity: c.Identity, Server: c.Server, Tool: c.Tool,
		Status: c.Status, ErrorKind: c.ErrorKind, ErrorMessage: c.ErrorMessage,
		StartedAt: c.StartedAt, FinishedAt: c.FinishedAt,
		DurationMS: float64(c.Duration.Microseconds()) / 1000,
		Retries:    c.Retries, ResultBytes: c.ResultBytes, Truncated: c.Truncated, Partial: c.Partial,
		Arguments: c.Args,
	}
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
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("id", c.ID)
	row("source", c.Source)
	row("identity", c.Identity)
	row("server", c.Server)
	row("tool", c.Tool)
	row("status", c.Status)
	if c.ErrorKind != "" {
		row("error", c.ErrorKind+": "+c.ErrorMessage)
	}
	row("started", c.StartedAt.Local().Format(time.RFC3339Nano))
	row("finished", c.FinishedAt.Local().Format(time.RFC3339Nano))
	row("duration", c.Duration.String())
	row("retries", fmt.Sprint(c.Retries))
	row("result bytes", fmt.Sprint(c.ResultBytes))
	row("truncated", fmt.Sprint(c.Truncated))
	row("partial", fmt.Sprint(c.Partial))
	row("arguments", string(c.Args))
	return tw.Flush()
}
