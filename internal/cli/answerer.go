package cli

//lint:file-ignore SA1019 sampling and elicitation are deprecated only from protocol 2026-07-28; servers use them today.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
)

// The values of --elicit: how a server's questions during a call are
// answered.
const (
	// elicitAsk asks the person at the terminal; without one it declines.
	elicitAsk = "ask"
	// elicitDecline declines every question.
	elicitDecline = "decline"
	// elicitDefaults accepts a form when every required field has a
	// default (the defaults are sent), else declines.
	elicitDefaults = "accept-defaults"
)

// The values of --sampling: whether a server's requests for a completion
// during a call go to the configured model.
const (
	// samplingAsk shows the request to the person at the terminal, who
	// approves it; without a terminal it is declined.
	samplingAsk = "ask"
	// samplingApprove sends every request to the model unattended.
	samplingApprove = "approve"
	// samplingDecline declines every request.
	samplingDecline = "decline"
)

// answerFlags are --elicit and --sampling, on the commands that call
// tools.
type answerFlags struct {
	elicit   string
	sampling string
	// answerTimeout bounds each question asked on the terminal; 0 leaves
	// it to the call's timeout.
	answerTimeout time.Duration
}

// errAnswerTimeout ends a question nobody answered within --answer-timeout.
var errAnswerTimeout = errors.New("no answer within --answer-timeout")

// addAnswerFlags registers --elicit and --sampling on cmd.
func addAnswerFlags(cmd *cobra.Command, f *answerFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.elicit, "elicit", elicitAsk, "a server's questions during the call: `ask` on the terminal (declined without one), decline, or accept-defaults")
	fl.StringVar(&f.sampling, "sampling", samplingAsk, "a server's requests for a completion by the llm: model: `ask` for approval on the terminal (declined without one), approve unattended, or decline")
	fl.DurationVar(&f.answerTimeout, "answer-timeout", 0, "how long each question on the terminal waits for an answer before it is declined, e.g. 2m (default: the call's timeout)")
	_ = cmd.RegisterFlagCompletionFunc("elicit", cobra.FixedCompletions([]string{elicitAsk, elicitDecline, elicitDefaults}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("sampling", cobra.FixedCompletions([]string{samplingAsk, samplingApprove, samplingDecline}, cobra.ShellCompDirectiveNoFileComp))
}

// check reports a value of --elicit or --sampling that is none of the
// choices.
func (f answerFlags) check() error {
	switch f.elicit {
	case elicitAsk, elicitDecline, elicitDefaults:
	default:
		return usagef("--elicit %q is not a choice; give ask, decline or accept-defaults", f.elicit)
	}
	switch f.sampling {
	case samplingAsk, samplingApprove, samplingDecline:
	default:
		return usagef("--sampling %q is not a choice; give ask, approve or decline", f.sampling)
	}
	if f.answerTimeout < 0 {
		return usagef("--answer-timeout %s is negative; give a duration such as 2m, or 0 for the call's timeout", f.answerTimeout)
	}
	return nil
}

// cliAnswerer answers what a server asks during a command's calls: on the
// terminal when there is one and the flags say ask, else by the flags'
// policy, with a note on stderr saying what was done and how to answer
// instead.
type cliAnswerer struct {
	flags answerFlags
	// q asks the person at the terminal; nil when there is none.
	q *asker
	// out receives notes (stderr).
	out io.Writer
	// cfg holds the llm: block that sampling requests go to.
	cfg *config.Config
	// openURL opens a URL-mode elicitation's URL (the browser).
	openURL func(ctx context.Context, url string) (<-chan error, error)
	// getenv reads the command's environment (the llm: endpoint's key,
	// the display).
	getenv func(string) string
	// pause, when set, clears what is drawn on the terminal (the progress
	// bar) before a question is asked.
	pause func()
	// mu asks one question at a time: calls may run in parallel.
	mu sync.Mutex
	// logMu guards asking and held: a server's log messages that come
	// while a question is asked wait for it, so as not to break into
	// what the person is typing.
	logMu  sync.Mutex
	asking bool
	held   []string
}

var (
	_ answer.Answerer    = (*cliAnswerer)(nil)
	_ answer.LogReceiver = (*cliAnswerer)(nil)
)

// Log implements answer.LogReceiver: a server's log message during the
// call, as a line on stderr ("log: SERVER [LEVEL] LOGGER: DATA"); held
// while a question is asked.
func (c *cliAnswerer) Log(_ context.Context, server string, p *mcp.LoggingMessageParams) {
	line := logLine(server, p)
	c.logMu.Lock()
	defer c.logMu.Unlock()
	if c.asking {
		c.held = append(c.held, line)
		return
	}
	if c.pause != nil {
		c.pause()
	}
	io.WriteString(c.out, line)
}

// logLine is how a server's log message reads on stderr: its data as it
// is when text, else as JSON.
func logLine(server string, p *mcp.LoggingMessageParams) string {
	var b strings.Builder
	fmt.Fprintf(&b, "log: %s [%s] ", server, p.Level)
	if p.Logger != "" {
		b.WriteString(p.Logger + ": ")
	}
	if s, ok := p.Data.(string); ok {
		b.WriteString(s)
	} else if data, err := json.Marshal(p.Data); err == nil {
		b.Write(data)
	}
	b.WriteByte('\n')
	return b.String()
}

// asks marks a question being asked until the returned function is
// called, which writes the log messages held meanwhile.
func (c *cliAnswerer) asks() (done func()) {
	c.logMu.Lock()
	c.asking = true
	c.logMu.Unlock()
	return func() {
		c.logMu.Lock()
		defer c.logMu.Unlock()
		c.asking = false
		for _, l := range c.held {
			io.WriteString(c.out, l)
		}
		c.held = nil
	}
}

// answerer returns the answerer of a command's calls under f.
func (a *app) answerer(cfg *config.Config, f answerFlags) (*cliAnswerer, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	ca := &cliAnswerer{flags: f, out: a.stderr, cfg: cfg, openURL: oauth.BrowserOpener(a.lookupEnv), getenv: a.getenv}
	if f.elicit == elicitAsk || f.sampling == samplingAsk {
		ca.q = a.terminalAsker()
	}
	return ca, nil
}

// note writes one note about a request on stderr.
func (c *cliAnswerer) note(format string, args ...any) {
	fmt.Fprintf(c.out, "note: "+format+"\n", args...)
}

// Elicit implements answer.Answerer.
func (c *cliAnswerer) Elicit(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.asks()()
	if c.pause != nil {
		c.pause()
	}
	qctx, cancel := c.questionContext(ctx)
	defer cancel()
	var res *mcp.ElicitResult
	var err error
	if p.Mode == "url" || (p.Mode == "" && p.URL != "") {
		res, err = c.elicitURL(qctx, server, p)
	} else {
		res, err = c.elicitForm(qctx, server, p)
	}
	if err != nil && c.expired(ctx, qctx) {
		c.note("no answer within %s (--answer-timeout); %s's question %q declined", c.flags.answerTimeout, server, p.Message)
		return &mcp.ElicitResult{Action: actionDecline}, nil
	}
	if errors.Is(err, errNoAnswer) {
		// Ctrl-D: dismissed without a choice, which the specification
		// answers with cancel (an error went to the server as code 0).
		c.note("the input ended; %s's question %q cancelled", server, p.Message)
		return &mcp.ElicitResult{Action: actionCancel}, nil
	}
	return res, err
}

// questionContext bounds one question by --answer-timeout.
func (c *cliAnswerer) questionContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.flags.answerTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, c.flags.answerTimeout, errAnswerTimeout)
}

// expired reports whether the question asked under qctx (made by
// questionContext from ctx) ran out of --answer-timeout while the call
// went on.
func (c *cliAnswerer) expired(ctx, qctx context.Context) bool {
	return ctx.Err() == nil && errors.Is(context.Cause(qctx), errAnswerTimeout)
}

// CreateMessage implements answer.Answerer.
func (c *cliAnswerer) CreateMessage(ctx context.Context, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.asks()()
	if c.pause != nil {
		c.pause()
	}
	qctx, cancel := c.questionContext(ctx)
	defer cancel()
	res, err := c.sample(qctx, server, p)
	if err != nil && c.expired(ctx, qctx) {
		c.note("no answer within %s (--answer-timeout); %s's request for a completion declined", c.flags.answerTimeout, server)
		return nil, declined(server, fmt.Sprintf("no answer within %s (--answer-timeout)", c.flags.answerTimeout))
	}
	return res, err
}

// lineResult is one line read from the terminal.
type lineResult struct {
	s   string
	err error
}

// lineCtx reads one answer, giving up when ctx ends. On a terminal
// nothing is left behind: what was typed and not yet sent is discarded,
// and the terminal's state is restored, so that neither the next question
// nor the shell gets it. Other input (a pipe) is read by a read that,
// given up on, stays pending: its line is the next answer read.
func (q *asker) lineCtx(ctx context.Context) (string, error) {
	if q.tty != nil {
		if s, err, ok := q.ttyLine(ctx); ok {
			return s, err
		}
	}
	if q.pending == nil {
		ch := make(chan lineResult, 1)
		q.pending = ch
		go func() {
			s, err := q.line()
			ch <- lineResult{s, err}
		}()
	}
	select {
	case r := <-q.pending:
		q.pending = nil
		return r.s, r.err
	case <-ctx.Done():
		fmt.Fprintln(q.out)
		return "", ctx.Err()
	}
}

// ttyLine reads one answer from the terminal, giving up when ctx ends;
// ok is false where a terminal cannot be waited on (no poll(2)).
func (q *asker) ttyLine(ctx context.Context) (s string, err error, ok bool) {
	if !ttyWaitable {
		return "", nil, false
	}
	state, serr := term.GetState(q.tty.fd)
	q.tty.ctx = ctx
	s, err = q.line()
	q.tty.ctx = nil
	if err != nil && ctx.Err() != nil {
		_ = flushInput(q.tty.fd)
		q.in.Reset(q.tty) // and what was read ahead
		if serr == nil {
			_ = term.Restore(q.tty.fd, state)
		}
		fmt.Fprintln(q.out)
		return "", ctx.Err(), true
	}
	return s, err, true
}
