package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/switchboard-mcp/switchboard/internal/agent"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/notebook"
)

// agentUsage is the synopsis of `switchboard agent`.
const agentUsage = `usage: switchboard agent [flags] "PROMPT" (or no PROMPT / -i for the interactive mode)`

// agentGetenv reads the environment for the endpoint; tests replace it.
var agentGetenv = os.Getenv

func runAgent(ctx context.Context, a *app, args []string) error {
	fs := a.flags("agent", true)
	interactive := fs.Bool("i", false, "interactive mode: read prompts from stdin, one per line, in one conversation")
	servers := fs.String("servers", "", "offer only these servers' tools (`a,b`)")
	tools := fs.String("tools", "", "offer only tools whose exposed name matches one of these globs (`github__*,fs__read_*`)")
	view := fs.String("view", "", "offer only the tools of this gateway `view`")
	doc := fs.String("doc", "", "with --section: offer only the tools of the server the section of this Markdown `file` is bound to")
	section := fs.String("section", "", "the `heading` of --doc whose binding decides the server, e.g. \"## Weather\"")
	model := fs.String("model", "", "model `name` (overrides llm.model and SWITCHBOARD_LLM_MODEL)")
	baseURL := fs.String("base-url", "", "endpoint `URL` including /v1 (overrides llm.base_url and SWITCHBOARD_LLM_BASE_URL)")
	system := fs.String("system", "", "system prompt `text` (default: agent.system_prompt, else the built-in one)")
	maxSteps := fs.Int("max-steps", 0, fmt.Sprintf("most requests to the model per prompt, 1 to %d (default agent.max_steps, %d)", config.MaxAgentMaxSteps, config.DefaultAgentMaxSteps))
	maxToolCalls := fs.Int("max-tool-calls", 0, "most tool calls per prompt; 0 for no limit (default agent.max_tool_calls, 50)")
	maxTokens := fs.Int("max-tokens", 0, "most prompt+completion tokens per prompt; 0 for no limit (default agent.max_tokens)")
	maxCost := fs.Float64("max-cost", 0, "most cost per prompt in the llm prices' unit, which needs llm.prompt_price or llm.completion_price set; 0 for no limit (default agent.max_cost)")
	timeout := fs.Duration("timeout", 0, fmt.Sprintf("time limit per prompt, at most %s; 0 for no time limit (default agent.timeout, %s)", config.FormatDuration(config.MaxAgentTimeout), config.FormatDuration(config.DefaultAgentTimeout)))
	transcript := fs.String("transcript", "", "append every message, tool call, result and token count to this `file` as JSON lines")
	noStream := fs.Bool("no-stream", false, "ask for whole answers instead of streamed ones")
	vision := fs.Bool("vision", false, "the model accepts images: pass image results to it (default llm.vision)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	prompt := strings.TrimSpace(strings.Join(pos, " "))
	if (*doc == "") != (*section == "") {
		return usagef("--doc and --section go together; %s", agentUsage)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := checkAgentLimitFlags(set, *maxSteps, *maxToolCalls, *maxTokens, *maxCost, *timeout); err != nil {
		return err
	}
	if prompt != "" && *interactive {
		return usagef("give a PROMPT or -i, not both; %s", agentUsage)
	}
	if prompt == "" && !*interactive {
		if !stdinIsTerminal() {
			return usagef("missing PROMPT; %s", agentUsage)
		}
		*interactive = true
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}

	// The endpoint: flags over the environment over the llm: block.
	l := cfg.LLM
	if l == (config.LLM{}) {
		l = config.DefaultLLM()
	}
	if *noStream {
		l.Stream = false
	}
	if *vision {
		l.Vision = true
	}
	if u, err := url.Parse(*baseURL); *baseURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return usagef("--base-url must be an http or https URL such as http://127.0.0.1:11434/v1, got %q", *baseURL)
	}
	cc, err := agent.ClientConfig(l, func(k string) string {
		switch {
		case k == llm.EnvModel && *model != "":
			return *model
		case k == llm.EnvBaseURL && *baseURL != "":
			return *baseURL
		}
		return agentGetenv(k)
	})
	if err != nil {
		return err
	}
	client, err := llm.New(cc)
	if err != nil {
		return err
	}

	lim := agent.LimitsFrom(cfg.Agent)
	if lim == (agent.Limits{}) {
		lim = agent.LimitsFrom(config.DefaultAgent())
	}
	if set["max-steps"] {
		lim.MaxSteps = *maxSteps
	}
	if set["max-tool-calls"] {
		lim.MaxToolCalls = *maxToolCalls
	}
	if set["max-tokens"] {
		lim.MaxTokens = *maxTokens
	}
	if set["max-cost"] {
		lim.MaxCost = *maxCost
	}
	if set["timeout"] {
		lim.Timeout = *timeout
	}

	sel := agent.Selection{Servers: splitList(*servers), Tools: splitList(*tools), View: *view}
	for _, g := range sel.Tools {
		if !validGlob(g) {
			return usagef("--tools: invalid pattern %q; use * and ? as in github__*", g)
		}
	}
	if *doc != "" {
		server, why, err := notebook.SectionServer(cfg, *doc, *section)
		if err != nil {
			return err
		}
		sel.Server = server
		fmt.Fprintf(a.stderr, "section %q of %s uses server %s (%s)\n", *section, *doc, server, why)
	}
	if sel.IsZero() {
		sel = agent.Selection{Servers: cfg.Agent.Servers, Tools: cfg.Agent.Tools}
	}
	only, err := agentServers(cfg, sel)
	if err != nil {
		return err
	}

	var tw io.Writer
	if *transcript != "" {
		f, err := os.OpenFile(*transcript, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fault.Wrap(fault.Validation, err, "opening the transcript %s", *transcript)
		}
		defer f.Close()
		tw = f
	}

	s, err := a.open(ctx, cfg, only...)
	if err != nil {
		return err
	}
	defer s.close()
	for _, e := range s.failures() {
		fmt.Fprintf(a.stderr, "switchboard agent: %s (its tools are not offered)\n", oneLine(e))
	}

	progress := isTerminal(a.stderr) && !a.json
	opts := agent.Options{
		Config: cfg, Engine: s.eng, Catalog: s.cat, Client: client, LLM: l,
		System: *system, Selection: sel, Limits: lim,
		Identity: cliIdentity(), Transcript: tw, Logger: a.logger(),
		OnWarning: func(msg string) { fmt.Fprintf(a.stderr, "switchboard agent: warning: %s\n", msg) },
	}
	if !a.json {
		opts.OnText = func(t string) {
			if t != "" {
				a.agentOpenLine = !strings.HasSuffix(t, "\n")
			}
			fmt.Fprint(a.stdout, t)
		}
	}
	opts.OnEvent = func(ev agent.Event) {
		switch ev.Type {
		case agent.EventRetry:
			why := "failed"
			if ev.Error != nil {
				why = ev.Error.Message
			}
			fmt.Fprintf(a.stderr, "switchboard agent: %s; retrying in %s\n", why, time.Duration(ev.WaitMS)*time.Millisecond)
		case agent.EventToolCall:
			if progress {
				fmt.Fprintf(a.stderr, "→ %s\n", ev.Name)
			}
		case agent.EventToolResult:
			if progress && ev.IsError {
				fmt.Fprintf(a.stderr, "✗ %s: %s\n", ev.Name, firstLine(ev.Content, 200))
			}
		}
	}
	sess, err := agent.NewSession(opts)
	if err != nil {
		return err
	}
	if sess.Tools().Len() == 0 {
		fmt.Fprintln(a.stderr, "switchboard agent: no tools are available; the model answers without them")
	}
	if *interactive {
		return a.agentREPL(ctx, sess)
	}
	out, err := sess.Ask(ctx, prompt)
	return a.agentResult(out, err, sess)
}

// checkAgentLimitFlags applies to the limit flags given (set holds their
// names) the ranges and messages of the agent: keys they override.
func checkAgentLimitFlags(set map[string]bool, maxSteps, maxToolCalls, maxTokens int, maxCost float64, timeout time.Duration) error {
	ints := []struct {
		name      string
		v, lo, hi int
	}{
		{"max-steps", maxSteps, 1, config.MaxAgentMaxSteps},
		{"max-tool-calls", maxToolCalls, 0, math.MaxInt32},
		{"max-tokens", maxTokens, 0, math.MaxInt32},
	}
	for _, f := range ints {
		if set[f.name] && (f.v < f.lo || f.v > f.hi) {
			return usagef("--%s: %d is out of range; use a whole number from %d to %d", f.name, f.v, f.lo, f.hi)
		}
	}
	if set["max-cost"] && (math.IsNaN(maxCost) || math.IsInf(maxCost, 0) || maxCost < 0) {
		return usagef("--max-cost: %g is not a number >= 0; write a number such as 0.15 (0 means no limit)", maxCost)
	}
	if set["timeout"] && (timeout < 0 || timeout > config.MaxAgentTimeout) {
		return usagef("--timeout: %s is out of range; use a value up to %s, or 0 for no time limit (the default is %s)",
			config.FormatDuration(timeout), config.FormatDuration(config.MaxAgentTimeout), config.FormatDuration(config.DefaultAgentTimeout))
	}
	return nil
}

// agentResult prints the end of one prompt's run and maps it to an exit
// error: a limit exits 1 after printing whatever answer exists.
func (a *app) agentResult(out *agent.Outcome, err error, sess *agent.Session) error {
	if terr := sess.TranscriptErr(); terr != nil {
		fmt.Fprintf(a.stderr, "switchboard agent: %v\n", terr)
	}
	if out == nil {
		return err
	}
	if a.json {
		if perr := a.printJSON(out); perr != nil {
			return perr
		}
	} else if a.agentOpenLine {
		fmt.Fprintln(a.stdout) // end the streamed answer's line
		a.agentOpenLine = false
	}
	if err != nil {
		return err
	}
	if out.LimitHit() {
		fmt.Fprintf(a.stderr, "switchboard agent: %s\n", out.Message)
		return &exitError{ExitFailure}
	}
	return nil
}

// agentREPL reads prompts from stdin, one per line, until EOF, "exit" or
// "quit". A limit or endpoint error ends that prompt, not the session.
func (a *app) agentREPL(ctx context.Context, sess *agent.Session) error {
	tty := stdinIsTerminal()
	if tty {
		fmt.Fprintf(a.stderr, "switchboard agent: %d tools; type a prompt, or exit\n", sess.Tools().Len())
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(nil, 1<<20)
	failed := false
	for {
		if tty {
			fmt.Fprint(a.stderr, "> ")
		}
		if !sc.Scan() {
			break
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if line == "exit" || line == "quit" {
			break
		}
		out, err := sess.Ask(ctx, line)
		if err := a.agentResult(out, err, sess); err != nil {
			if ctx.Err() != nil {
				return err
			}
			var ee *exitError
			if !errors.As(err, &ee) {
				fmt.Fprintf(a.stderr, "switchboard agent: %s\n", oneLine(err))
			}
			failed = true
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading prompts: %w", err)
	}
	if failed {
		return &exitError{ExitFailure}
	}
	return nil
}

// agentServers returns the servers to connect for a selection (nil: all),
// checking the names given.
func agentServers(cfg *config.Config, sel agent.Selection) ([]string, error) {
	var only []string
	switch {
	case sel.Server != "":
		only = []string{sel.Server}
	case len(sel.Servers) > 0:
		only = sel.Servers
	case sel.View != "":
		v, ok := cfg.Gateway.View(sel.View)
		if !ok {
			return nil, usagef("--view: no gateway view named %q", sel.View)
		}
		only = v.Servers
	}
	for _, s := range only {
		if _, ok := cfg.Server(s); !ok {
			return nil, usagef("unknown server %q; the configured servers are: %s", s, strings.Join(serverNames(cfg), ", "))
		}
	}
	return slices.Clip(only), nil
}

// serverNames lists the configured servers.
func serverNames(cfg *config.Config) []string {
	var out []string
	for _, s := range cfg.Servers {
		out = append(out, s.Name)
	}
	return out
}

// splitList splits a comma-separated flag value.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// validGlob reports whether g is a valid path.Match pattern.
func validGlob(g string) bool {
	_, err := path.Match(g, "")
	return err == nil
}

// stdinIsTerminal reports whether the prompts come from a person.
func stdinIsTerminal() bool {
	f, ok := stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
