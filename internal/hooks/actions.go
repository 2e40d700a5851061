package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/github"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/vcs"
)

// actionResult is how one action ended.
type actionResult struct {
	status Status
	err    error
	output any
	// reason is the denial's reason (status blocked).
	reason string
	// args are the arguments a rewrite sets.
	args map[string]any
	// transient failures are retried.
	transient bool
	// callID is the id of the tool call an mcp action made.
	callID string
}

// plan is an action's resolved parameters.
type plan struct {
	typ    string
	args   map[string]any // mcp arguments, event fields
	argv   []string       // command
	url    string         // http
	name   string         // git branch or tag, event name
	text   string         // git message, agent prompt, github body
	repo   string         // github
	title  string         // github
	number int            // github comment
	labels []string
}

// display renders the plan for a dry run. Header values are not shown.
func (p plan) display() map[string]any {
	out := map[string]any{}
	set := func(k string, v any, ok bool) {
		if ok {
			out[k] = v
		}
	}
	set("arguments", p.args, p.args != nil && p.typ == config.HookActionMCP)
	set("fields", p.args, p.args != nil && p.typ == config.HookActionEvent)
	set("command", p.argv, p.argv != nil)
	set("url", p.url, p.url != "")
	set("name", p.name, p.name != "")
	set("text", p.text, p.text != "")
	set("repo", p.repo, p.repo != "")
	set("title", p.title, p.title != "")
	set("number", p.number, p.number != 0)
	set("labels", p.labels, p.labels != nil)
	return out
}

// resolve expands an action's templates and mappings against ev.
func (e *Engine) resolve(set *hookSet, a *action, ev *event) (plan, error) {
	p := plan{typ: a.cfg.Type}
	var err error
	expand := func(t template) string {
		if err != nil || t.src == "" {
			return ""
		}
		var s string
		s, err = t.expand(ev.ctx)
		return s
	}
	switch a.cfg.Type {
	case config.HookActionMCP, config.HookActionEvent:
		p.args = make(map[string]any, len(a.params))
		for _, m := range a.params {
			var v any
			switch m.cfg.Source {
			case config.MappingLiteral:
				v = m.cfg.Literal
			default:
				v, err = m.tmpl.value(ev.ctx)
			}
			if err != nil {
				return p, fmt.Errorf("%s %s: %w", mappingWord(a), m.cfg.Param, err)
			}
			if a.cfg.Type == config.HookActionMCP && m.cfg.Source != config.MappingLiteral {
				v = e.typed(a, m.cfg.Param, v)
			}
			p.args[m.cfg.Param] = v
		}
		p.name = a.cfg.Event
	case config.HookActionCommand:
		for _, t := range a.command {
			p.argv = append(p.argv, expand(t))
		}
	case config.HookActionHTTP:
		p.url = a.cfg.URL
	case config.HookActionGit:
		p.name, p.text = expand(a.name), expand(a.message)
	case config.HookActionGitHub:
		p.repo, p.title, p.text = expand(a.repo), expand(a.title), expand(a.body)
		p.labels = a.cfg.Labels
		if n := expand(a.number); err == nil && n != "" {
			p.number, err = strconv.Atoi(strings.TrimPrefix(n, "#"))
			if err != nil || p.number <= 0 {
				err = fmt.Errorf("number %q is not an issue number", n)
			}
		}
	case config.HookActionAgent:
		p.text = expand(a.prompt)
	}
	return p, err
}

func mappingWord(a *action) string {
	if a.cfg.Type == config.HookActionEvent {
		return "field"
	}
	return "parameter"
}

// runAction runs one action under its timeout, retrying a transient
// failure (hook_settings.retries, after retry_delay).
func (e *Engine) runAction(ctx context.Context, set *hookSet, h *hook, a *action, ev *event) actionResult {
	p, err := e.resolve(set, a, ev)
	if err != nil {
		return actionResult{status: StatusFailure, err: err}
	}
	timeout := a.cfg.Timeout
	if timeout <= 0 {
		timeout = set.settings.Timeout
	}
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
		res := e.do(actx, set, h, a, ev, p, timeout)
		timedOut := errors.Is(context.Cause(actx), errTimeout) && ctx.Err() == nil
		cancel()
		if timedOut && res.status != StatusSuccess && res.status != StatusSkipped {
			return actionResult{status: StatusTimeout, err: fmt.Errorf("timed out after %s", timeout), callID: res.callID}
		}
		if res.status == StatusFailure && ctx.Err() != nil {
			return actionResult{status: StatusCancelled, err: fmt.Errorf("cancelled: %w", ctx.Err()), callID: res.callID}
		}
		if !res.transient || attempt >= set.settings.Retries {
			return res
		}
		t := time.NewTimer(set.settings.RetryDelay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return res
		}
	}
}

// do runs the action once.
func (e *Engine) do(ctx context.Context, set *hookSet, h *hook, a *action, ev *event, p plan, timeout time.Duration) actionResult {
	switch a.cfg.Type {
	case config.HookActionMCP:
		return e.runMCP(ctx, h, a, ev, p, timeout)
	case config.HookActionCommand:
		return e.runCommand(ctx, set, a, p, ev)
	case config.HookActionHTTP:
		return e.runHTTP(ctx, a, ev)
	case config.HookActionGit:
		return e.runGit(ctx, a, p)
	case config.HookActionGitHub:
		return e.runGitHub(ctx, a, p)
	case config.HookActionAgent:
		return e.runAgent(ctx, h, a, ev, p)
	case config.HookActionEvent:
		return e.runEvent(ctx, p)
	}
	return actionResult{status: StatusFailure, err: fmt.Errorf("unknown action type %q", a.cfg.Type)}
}

// runMCP calls the tool through the execution engine. An unavailable
// server skips the action (seed 000): the hook does not fail.
func (e *Engine) runMCP(ctx context.Context, h *hook, a *action, ev *event, p plan, timeout time.Duration) actionResult {
	if e.calls == nil {
		return actionResult{status: StatusFailure, err: errors.New("no execution engine: mcp actions cannot run here")}
	}
	if err := e.checkSchema(a); err != nil {
		return actionResult{status: StatusFailure, err: err}
	}
	// Named here, so that the run points to the call's record whatever
	// the call's outcome (hooks log, history show).
	id := toolcall.NewID()
	res, err := e.calls.Call(ctx, toolcall.Request{
		ID:        id,
		Server:    a.cfg.Server,
		Tool:      a.cfg.Tool,
		Arguments: p.args,
		Source:    toolcall.SourceHook,
		Identity:  hookIdentity(h),
		Origin:    hookOrigin(h, ev),
		Timeout:   timeout,
	})
	if err != nil {
		switch fault.KindOf(err) {
		case fault.Connection:
			return actionResult{status: StatusSkipped, err: fmt.Errorf("server %s is unavailable: %w", a.cfg.Server, err), callID: id}
		case fault.Timeout:
			return actionResult{status: StatusTimeout, err: err, callID: id}
		case fault.LimitExceeded, fault.RateLimited:
			return actionResult{status: StatusFailure, err: err, transient: true, callID: id}
		}
		return actionResult{status: StatusFailure, err: err, callID: id}
	}
	out := toolOutput(res.CallToolResult)
	if res.IsError {
		return actionResult{status: StatusFailure, err: fmt.Errorf("the tool reported an error: %s", clip(stringify(out), 500)), output: out, callID: id}
	}
	r := actionResult{status: StatusSuccess, output: out, callID: id}
	applyDecision(&r, out)
	return r
}

// toolOutput is a result's structured content, else its text (decoded
// when it is a JSON object).
func toolOutput(res *mcp.CallToolResult) any {
	if res == nil {
		return nil
	}
	if res.StructuredContent != nil {
		return res.StructuredContent
	}
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return jsonOrText(b.String())
}

// jsonOrText decodes s when it holds a JSON object, else returns it.
func jsonOrText(s string) any {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") {
		var v map[string]any
		if json.Unmarshal([]byte(t), &v) == nil {
			return v
		}
	}
	return s
}

// applyDecision reads a decision from an action's output: an object with
// "decision" (allow, deny or block) and "reason", and/or "arguments" (a
// rewrite).
func applyDecision(r *actionResult, out any) {
	m, ok := out.(map[string]any)
	if !ok {
		return
	}
	reason, _ := m["reason"].(string)
	switch d, _ := m["decision"].(string); strings.ToLower(d) {
	case "deny", "block":
		r.status, r.reason = StatusBlocked, reason
		if r.reason == "" {
			r.reason = "no reason given"
		}
		return
	}
	if args, ok := m["arguments"].(map[string]any); ok {
		r.args = maps.Clone(args)
	}
}

// runEvent fires another event, continuing the chain.
func (e *Engine) runEvent(ctx context.Context, p plan) actionResult {
	ev := e.newEvent(ctx, p.name, p.args)
	e.emitEvent(e.set.Load(), ev)
	return actionResult{status: StatusSuccess, output: map[string]any{"event_id": ev.id}}
}

// hookIdentity is the identity of the tool calls h's actions make.
func hookIdentity(h *hook) string { return "hook:" + h.cfg.Name }

// hookOrigin is the origin recorded with the tool calls h's actions make
// for ev: the hook, the event and the event's id (hooks log --json).
func hookOrigin(h *hook, ev *event) string {
	return fmt.Sprintf("hook %s on %s (event %s)", h.cfg.Name, ev.name, ev.id)
}

// runAgent runs the agent loop. Its tool calls are the hook's (identity
// hook:NAME), and their origin names the hook and the event before the
// agent's step.
func (e *Engine) runAgent(ctx context.Context, h *hook, a *action, ev *event, p plan) actionResult {
	if e.agent == nil {
		return actionResult{status: StatusFailure, err: errors.New("no LLM configured: agent actions need the llm: block (see docs/llm.md)")}
	}
	out, err := e.agent(ctx, AgentRequest{Prompt: p.text, Servers: a.cfg.Servers, Tools: a.cfg.Tools,
		Identity: hookIdentity(h), Origin: hookOrigin(h, ev)})
	if err != nil {
		return actionResult{status: StatusFailure, err: fmt.Errorf("agent: %w", err)}
	}
	return actionResult{status: StatusSuccess, output: out}
}

// runGit runs a git operation in the engine's directory. The chain goes
// along in the environment, so the git hooks it fires continue it.
func (e *Engine) runGit(ctx context.Context, a *action, p plan) actionResult {
	ctx = vcs.WithEnv(ctx, chainFrom(ctx).env()...)
	var (
		out any
		err error
	)
	switch a.cfg.Git {
	case "branch":
		err = vcs.CreateBranch(ctx, e.dir, p.name)
		out = p.name
	case "commit":
		var sha string
		sha, err = vcs.Commit(ctx, e.dir, p.text)
		out = sha
	case "tag":
		err = vcs.Tag(ctx, e.dir, p.name, p.text)
		out = p.name
	default:
		err = fmt.Errorf("unknown git operation %q", a.cfg.Git)
	}
	if err != nil {
		return actionResult{status: StatusFailure, err: err}
	}
	e.git.invalidate()
	return actionResult{status: StatusSuccess, output: out}
}

// runGitHub creates an issue or a comment.
func (e *Engine) runGitHub(ctx context.Context, a *action, p plan) actionResult {
	token := getenv(a.cfg.TokenEnv)
	if token == "" {
		return actionResult{status: StatusFailure, err: fmt.Errorf("%s is not set: the github action needs a token", a.cfg.TokenEnv)}
	}
	c := github.New(a.cfg.BaseURL, token, e.hc)
	var (
		out any
		err error
	)
	switch a.cfg.GitHub {
	case "issue":
		var is github.Issue
		is, err = c.CreateIssue(ctx, p.repo, github.IssueRequest{Title: p.title, Body: p.text, Labels: slices.Clone(p.labels)})
		out = map[string]any{"number": is.Number, "url": is.HTMLURL}
	case "comment":
		var cm github.Comment
		cm, err = c.CreateComment(ctx, p.repo, p.number, p.text)
		out = map[string]any{"id": cm.ID, "url": cm.HTMLURL}
	default:
		err = fmt.Errorf("unknown github operation %q", a.cfg.GitHub)
	}
	if err != nil {
		k := fault.KindOf(err)
		return actionResult{status: StatusFailure, err: err, transient: k == fault.Connection || k == fault.LimitExceeded || k == fault.Backend}
	}
	return actionResult{status: StatusSuccess, output: out}
}

// clip shortens s to n bytes for a message.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
