package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// HookSource is what the Hooks page needs from the hooks engine. The
// daemon passes one when hooks are configured; with none the page says so.
// Its types mirror internal/hooks (HookInfo, Report, Run) and the store's
// hook runs, so that the adapter only copies fields.
type HookSource interface {
	// Hooks lists the configured hooks in run order, with their validity
	// and trust.
	Hooks(ctx context.Context) ([]HookInfo, error)
	// Runs returns recorded hook runs that match f, newest first.
	Runs(ctx context.Context, f HookRunFilter) ([]HookRun, error)
	// Fire fires a test event with the given context fields. With dryRun
	// set nothing runs: the report says which hooks would run, with their
	// resolved parameters.
	Fire(ctx context.Context, event string, fields map[string]any, dryRun bool) (FireReport, error)
}

// HookInfo is one configured hook.
type HookInfo struct {
	Name string
	// On is the event name or glob the hook listens to.
	On        string
	Priority  int
	Enabled   bool
	OnFailure string
	// Source is where the hook is defined (file:line:col).
	Source string
	// Actions label the hook's actions ("mcp github/create_issue").
	Actions []string
	// Trust is the trust state of the hook's file: "trusted",
	// "untrusted" or "changed"; only trusted hooks run.
	Trust string
	// Valid is false when a problem keeps the hook from running
	// correctly; Problems say what.
	Valid    bool
	Problems []string
}

// HookRunFilter selects hook runs. Empty fields match anything.
type HookRunFilter struct {
	Event  string
	Hook   string
	Status string
	// Failed keeps only runs that did not succeed.
	Failed bool
	// Limit caps the runs returned; 0 means the source's default.
	Limit int
}

// HookRun is one recorded run of a hook's action.
type HookRun struct {
	ID        string
	EventID   string
	ChainID   string
	Depth     int
	Event     string
	Hook      string
	Action    string
	Status    string // success, failure, skipped, timeout, rejected, blocked, cancelled
	Error     string
	StartedAt time.Time
	Duration  time.Duration
	// CallID is the tool call an mcp action made ("" for others): the
	// log links to its page in the history.
	CallID string
	// Output is what the action returned, as JSON ("" unless recorded:
	// history.record_values).
	Output string
}

// FireReport is the outcome of a test event.
type FireReport struct {
	EventID string
	Event   string
	DryRun  bool
	// Blocked says a hook denied the event; Reason and BlockedBy say why
	// and which.
	Blocked   bool
	Reason    string
	BlockedBy string
	Failed    bool
	// Runs are the hooks' action runs (planned ones, for a dry run).
	Runs []FiredRun
}

// FiredRun is one action run of a test event.
type FiredRun struct {
	Hook     string
	Action   string
	Status   string
	Error    string
	Duration time.Duration
	// Output is what the action returned; Params the resolved parameters
	// (dry run).
	Output any
	Params map[string]any
	// CallID is the tool call an mcp action made ("" for others).
	CallID string
}

// hooksData is the Hooks page's data.
type hooksData struct {
	pageData
	Configured bool
	Hooks      []HookInfo
	Runs       []HookRun
	Filter     HookRunFilter
	Error      *errorView
	Report     *FireReport
	RunText    map[int]firedText
	Event      string
	Fields     string
	DryRun     bool
}

// firedText is a fired run's parameters and output, as indented JSON.
type firedText struct{ Params, Output string }

// hooksPage lists the hooks and their run log.
func (c *Console) hooksPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := &hooksData{Filter: HookRunFilter{Hook: q.Get("hook"), Event: q.Get("event"), Status: q.Get("status"),
		Failed: q.Get("failed") != "", Limit: 100}, DryRun: true}
	c.fillHooks(r.Context(), d)
	c.render(w, r, http.StatusOK, "hooks", d)
}

func (c *Console) fillHooks(ctx context.Context, d *hooksData) {
	hs := c.opts.Hooks
	if hs == nil {
		return
	}
	d.Configured = true
	var err error
	if d.Hooks, err = hs.Hooks(ctx); err != nil {
		d.Error = newErrorView(err)
		return
	}
	if d.Runs, err = hs.Runs(ctx, d.Filter); err != nil {
		d.Error = newErrorView(err)
	}
}

// hooksFire fires a test event from the page's form (dry run unless the
// box is cleared) and shows the report with the page.
func (c *Console) hooksFire(w http.ResponseWriter, r *http.Request) {
	d := &hooksData{Filter: HookRunFilter{Limit: 100}}
	d.Event = strings.TrimSpace(r.PostFormValue("event"))
	d.Fields = r.PostFormValue("fields")
	d.DryRun = r.PostFormValue("dry_run") != ""
	status := http.StatusOK
	switch {
	case c.opts.Hooks == nil:
		d.Error = newErrorView(fault.New(fault.Config, "no hooks are configured"))
		status = http.StatusConflict
	case d.Event == "":
		d.Error = newErrorView(fault.New(fault.Validation, "name the event to fire").WithSuggestions("for example tool.after or spec.plan.after"))
		status = http.StatusUnprocessableEntity
	default:
		fields, err := parseFields(d.Fields)
		if err == nil {
			var rep FireReport
			rep, err = c.opts.Hooks.Fire(r.Context(), d.Event, fields, d.DryRun)
			if err == nil {
				d.Report = &rep
				d.RunText = map[int]firedText{}
				for i, run := range rep.Runs {
					var ft firedText
					if len(run.Params) > 0 {
						ft.Params = prettyJSON(mustJSON(run.Params))
					}
					if run.Output != nil {
						ft.Output = prettyJSON(mustJSON(run.Output))
					}
					d.RunText[i] = ft
				}
			}
		}
		if err != nil {
			d.Error = newErrorView(err)
			status = statusOf(err)
		}
	}
	c.fillHooks(r.Context(), d)
	c.render(w, r, status, "hooks", d)
}

// parseFields reads "key=value" lines; a value that is JSON (a number,
// true, an object, a quoted string) is taken as that value.
func parseFields(s string) (map[string]any, error) {
	out := map[string]any{}
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fault.New(fault.Validation, "line %d of the fields is not key=value: %q", i+1, line)
		}
		v = strings.TrimSpace(v)
		var jv any
		if err := json.Unmarshal([]byte(v), &jv); err == nil {
			out[strings.TrimSpace(k)] = jv
		} else {
			out[strings.TrimSpace(k)] = v
		}
	}
	return out, nil
}
