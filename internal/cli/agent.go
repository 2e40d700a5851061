package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/switchboard-mcp/switchboard/internal/agent"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/config/schema"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/notebook"
)

// agentUsage is the synopsis of `switchboard agent`.
const agentUsage = `usage: switchboard agent [flags] "PROMPT" (or no PROMPT / -i for the interactive mode)`

// agentFlags are the flags of `switchboard agent`.
type agentFlags struct {
	interactive            bool
	servers, tools, view   string
	doc, section           string
	model, baseURL, system string
	maxSteps, maxToolCalls int
	maxTokens              int
	maxCost                float64
	timeout                time.Duration
	transcript             string
	noStream, vision       bool
}

// newAgentCmd is `switchboard agent [PROMPT]` (docs/agent.md).
func newAgentCmd(a *app) *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "agent [PROMPT]",
		Short: "Let an LLM use the tools, within limits",
		Long: `Let an OpenAI-compatible model use the tools, within step, tool call, token, cost and
time limits. Without a PROMPT on a terminal (or with -i) it is a conversation, one prompt a
line. --servers, --tools, --view and --doc FILE --section HEADING narrow the tools.
Exits 0 when the model answered, 1 when a limit ended the run or the endpoint failed.
Reference: docs/agent.md.`,
		Example: `  switchboard agent "What is on my task list?"
  switchboard agent -i --servers tasks
  switchboard agent --model llama3.1 --base-url http://127.0.0.1:11434/v1 "Summarise the open issues"
  switchboard agent --doc runbook.md --section "## Weather" "Will it rain tomorrow?"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.agent(cmd, args, &f)
		},
	}
	a.adhocFlags(cmd)
	fl := cmd.Flags()
	fl.BoolVarP(&f.interactive, "interactive", "i", false, "interactive mode: read prompts from stdin, one per line, in one conversation")
	fl.StringVar(&f.servers, "servers", "", "offer only these servers' tools (`a,b`)")
	fl.StringVar(&f.tools, "tools", "", "offer only tools whose exposed name matches one of these globs (`github__*,fs__read_*`)")
	fl.StringVar(&f.view, "view", "", "offer only the tools of this gateway `view`")
	fl.StringVar(&f.doc, "doc", "", "with --section: offer only the tools of the server the section of this Markdown `file` is bound to")
	fl.StringVar(&f.section, "section", "", "the `heading` of --doc whose binding decides the server, e.g. \"## Weather\"")
	fl.StringVar(&f.model, "model", "", "model `name` (overrides llm.model and SWITCHBOARD_LLM_MODEL)")
	fl.StringVar(&f.baseURL, "base-url", "", "endpoint `URL` including /v1 (overrides llm.base_url and SWITCHBOARD_LLM_BASE_URL)")
	fl.StringVar(&f.system, "system", "", "system prompt `text` (default: agent.system_prompt, else the built-in one)")
	fl.IntVar(&f.maxSteps, "max-steps", 0, fmt.Sprintf("most requests to the model per prompt, 1 to %d (default agent.max_steps, %d)", config.MaxAgentMaxSteps, config.DefaultAgentMaxSteps))
	fl.IntVar(&f.maxToolCalls, "max-tool-calls", 0, "most tool calls per prompt; 0 for no limit (default agent.max_tool_calls, 50)")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "most prompt+completion tokens per prompt; 0 for no limit (default agent.max_tokens)")
	fl.Float64Var(&f.maxCost, "max-cost", 0, "most cost per prompt in the llm prices' unit, which needs llm.prompt_price or llm.completion_price set; 0 for no limit (default agent.max_cost)")
	fl.DurationVar(&f.timeout, "timeout", 0, fmt.Sprintf("time limit per prompt, at most %s; 0 for no time limit (default agent.timeout, %s)", config.FormatDuration(config.MaxAgentTimeout), config.FormatDuration(config.DefaultAgentTimeout)))
	fl.StringVar(&f.transcript, "transcript", "", "append every message, tool call, result and token count to this `file` as JSON lines")
	fl.BoolVar(&f.noStream, "no-stream", false, "ask for whole answers instead of streamed ones")
	fl.BoolVar(&f.vision, "vision", false, "the model accepts images: pass image results to it (default llm.vision)")
	// Go's flag package took -i as --i; keep that spelling working.
	fl.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "i" {
			name = "interactive"
		}
		return pflag.NormalizedName(name)
	})
	_ = cmd.RegisterFlagCompletionFunc("servers", a.completeServerList)
	_ = cmd.RegisterFlagCompletionFunc("view", a.completeViews)
	_ = cmd.RegisterFlagCompletionFunc("doc", completeFiles("md", "markdown"))
	_ = cmd.RegisterFlagCompletionFunc("transcript", completeFiles())
	return cmd
}

// agent runs the agent on one prompt, or a conversation.
func (a *app) agent(cmd *cobra.Command, pos []string, f *agentFlags) error {
	ctx := cmd.Context()
	prompt := strings.TrimSpace(strings.Join(pos, " "))
	if (f.doc == "") != (f.section == "") {
		return usagef("--doc and --section go together; %s", agentUsage)
	}
	set := map[string]bool{}
	cmd.Flags().Visit(func(fl *pflag.Flag) { set[fl.Name] = true })
	if err := checkAgentLimitFlags(set, f.maxSteps, f.maxToolCalls, f.maxTokens, f.maxCost, f.timeout); err != nil {
		return err
	}
	if prompt != "" && f.interactive {
		return usagef("give a PROMPT or -i, not both; %s", agentUsage)
	}
	if prompt == "" && !f.interactive {
		if !a.stdinIsTerminal() {
			return usagef("missing PROMPT; %s", agentUsage)
		}
		f.interactive = true
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
	if f.noStream {
		l.Stream = false
	}
	if f.vision {
		l.Vision = true
	}
	if u, err := url.Parse(f.baseURL); f.baseURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return usagef("--base-url must be an http or https URL such as http://127.0.0.1:11434/v1, got %q", f.baseURL)
	}
	cc, err := agent.ClientConfig(l, func(k string) string {
		switch {
		case k == llm.EnvModel && f.model != "":
			return f.model
		case k == llm.EnvBaseURL && f.baseURL != "":
			return f.baseURL
		}
		return a.getenv(k)
	})
	if fe := fault.As(err); fe != nil && l.Model == "" && f.model == "" && a.getenv(llm.EnvModel) == "" {
		fe.WithSuggestions("or pass --model and --base-url") // flags of this command alone
	}
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
		lim.MaxSteps = f.maxSteps
	}
	if set["max-tool-calls"] {
		lim.MaxToolCalls = f.maxToolCalls
	}
	if set["max-tokens"] {
		lim.MaxTokens = f.maxTokens
	}
	if set["max-cost"] {
		lim.MaxCost = f.maxCost
	}
	if set["timeout"] {
		lim.Timeout = f.timeout
	}

	sel := agent.Selection{Servers: splitList(f.servers), Tools: splitList(f.tools), View: f.view}
	for _, g := range sel.Tools {
		if !validGlob(g) {
			return usagef("--tools: invalid pattern %q; use * and ? as in github__*", g)
		}
	}
	if f.doc != "" {
		server, why, err := notebook.SectionServer(cfg, f.doc, f.section)
		if err != nil {
			return err
		}
		sel.Server = server
		fmt.Fprintf(a.stderr, "section %q of %s uses server %s (%s)\n", f.section, f.doc, server, why)
	}
	if sel.IsZero() {
		sel = agent.Selection{Servers: cfg.Agent.Servers, Tools: cfg.Agent.Tools}
	}
	only, err := agentServers(cfg, sel)
	if err != nil {
		return err
	}

	var tw io.Writer
	if f.transcript != "" {
		file, err := os.OpenFile(f.transcript, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fault.Wrap(fault.Validation, err, "opening the transcript %s", f.transcript)
		}
		defer file.Close()
		tw = file
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
		System: f.system, Selection: sel, Limits: lim,
		Identity: cliIdentity(cfg), Transcript: tw, Logger: a.logger(),
		OnWarning: func(msg string) { fmt.Fprintf(a.stderr, "switchboard agent: warning: %s\n", msg) },
	}
	// A person at the terminal completes the URL elicitations a server
	// requires (-32042) as for switchboard call; without one the model is
	// told which URLs to pass on.
	if ca, err := a.answerer(cfg, answerFlags{elicit: elicitAsk, sampling: samplingDecline}); err == nil && ca.q != nil {
		opts.URLCompleter = ca
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
	if f.interactive {
		return a.agentREPL(ctx, sess)
	}
	out, err := sess.Ask(ctx, prompt)
	return a.agentResult(out, err, sess)
}

// checkAgentLimitFlags applies to the limit flags given (set holds their
// names) the rules and messages of the agent: keys they override.
func checkAgentLimitFlags(set map[string]bool, maxSteps, maxToolCalls, maxTokens int, maxCost float64, timeout time.Duration) error {
	for _, f := range []struct {
		name string
		v    any
	}{
		{"max-steps", json.Number(strconv.Itoa(maxSteps))},
		{"max-tool-calls", json.Number(strconv.Itoa(maxToolCalls))},
		{"max-tokens", json.Number(strconv.Itoa(maxTokens))},
		{"max-cost", json.Number(strconv.FormatFloat(maxCost, 'g', -1, 64))},
		{"timeout", config.FormatDuration(timeout)},
	} {
		if !set[f.name] {
			continue
		}
		if f.name == "max-cost" && (math.IsNaN(maxCost) || math.IsInf(maxCost, 0)) {
			return usagef("--max-cost: %g is not a usable number; write a number such as 0.15 (0 means free or no limit)", maxCost)
		}
		if msg := schema.CheckKey("agent."+strings.ReplaceAll(f.name, "-", "_"), f.v); msg != "" {
			return usagef("--%s: %s", f.name, msg)
		}
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
	tty := a.stdinIsTerminal()
	if tty {
		fmt.Fprintf(a.stderr, "switchboard agent: %d tools; type a prompt, or exit\n", sess.Tools().Len())
	}
	sc := bufio.NewScanner(a.stdin)
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
func (a *app) stdinIsTerminal() bool {
	f, ok := a.stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
