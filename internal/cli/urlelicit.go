package cli

//lint:file-ignore SA1019 elicitation is deprecated only from protocol 2026-07-28; servers use it today.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

var _ answer.URLCompleter = (*cliAnswerer)(nil)

// CompleteURLs implements answer.URLCompleter: a server answered the call
// with "URL elicitation required" (-32042). On a terminal, each URL is
// shown with its host, the browser is opened only if the person says so
// (where there is a display), and the person presses Enter when done —
// or the server says so first (ctx ends). Without a terminal, or under
// --elicit decline / accept-defaults, the URLs are printed with how to
// complete them and run the call again, and the call fails.
func (c *cliAnswerer) CompleteURLs(ctx context.Context, server string, els []*mcp.ElicitParams) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.asks()()
	if c.pause != nil {
		c.pause()
	}
	if c.flags.elicit != elicitAsk || c.q == nil {
		why := "there is no terminal to ask on"
		if c.flags.elicit != elicitAsk {
			why = fmt.Sprintf("--elicit %s: a URL cannot be completed unattended", c.flags.elicit)
		}
		c.note("%s requires you to complete %s before it answers the call (%s):", server, plural(len(els), "step", "steps"), why)
		for _, el := range els {
			fmt.Fprintf(c.out, "  %s\n    host: %s\n    open: %s\n", el.Message, upstream.URLHost(el.URL), el.URL)
		}
		fmt.Fprintf(c.out, "  Open each URL in a browser and finish there, then run the command again.\n")
		return false, nil
	}
	ctx, cancel := c.questionContext(ctx)
	defer cancel()
	out := c.q.out
	fmt.Fprintf(out, "\n%s requires you to complete %s before it answers the call:\n", server, plural(len(els), "step", "steps"))
	for i, el := range els {
		fmt.Fprintf(out, "\n  %d. %s\n     host: %s\n     open: %s\n", i+1, el.Message, upstream.URLHost(el.URL), el.URL)
	}
	fmt.Fprintln(out)
	if c.openURL != nil && hasDisplay(c.getenv) {
		for _, el := range els {
			fmt.Fprintf(out, "Open %s in your browser? [y/N] ", upstream.URLHost(el.URL))
			ans, err := c.q.lineCtx(ctx)
			if err != nil {
				return c.urlWaitEnded(ctx, server, err)
			}
			switch strings.ToLower(strings.TrimSpace(ans)) {
			case "y", "yes":
				if _, err := c.openURL(ctx, el.URL); err != nil {
					fmt.Fprintf(out, "  (the browser could not be opened: %s; open the URL yourself)\n", oneLine(err))
				}
			}
		}
	}
	for {
		fmt.Fprint(out, "Waiting for the server to say it is done. Press Enter when you have finished there, or type d to decline: ")
		ans, err := c.q.lineCtx(ctx)
		if err != nil {
			return c.urlWaitEnded(ctx, server, err)
		}
		switch strings.ToLower(strings.TrimSpace(strings.TrimPrefix(ans, ":"))) {
		case "", "y", "yes", "done":
			fmt.Fprintf(out, "  calling %s again\n", server)
			return true, nil
		case "d", "decline", "n", "no", "c", "cancel":
			c.note("%s's URL %s declined; the call is not made again", server, plural(len(els), "step", "steps"))
			return false, nil
		}
		fmt.Fprintln(out, "  Please press Enter, or type d.")
	}
}

// urlWaitEnded says why waiting for URL elicitations ended without an
// answer: the server said they are complete, the question's deadline
// passed, or the call ended.
func (c *cliAnswerer) urlWaitEnded(ctx context.Context, server string, err error) (bool, error) {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, answer.ErrURLsCompleted):
		fmt.Fprintf(c.q.out, "  %s says it is done; calling it again\n", server)
		return true, nil
	case errors.Is(cause, errAnswerTimeout):
		c.note("no answer within %s (--answer-timeout); the URL steps of %s were not completed", c.flags.answerTimeout, server)
		return false, nil
	}
	return false, err
}

// hasDisplay reports whether a browser can be opened here: a desktop
// system, or a graphical session ($DISPLAY, $WAYLAND_DISPLAY), or a
// $BROWSER the person chose, in the environment getenv reads.
func hasDisplay(getenv func(string) string) bool {
	switch runtime.GOOS {
	case "darwin", "windows":
		return true
	}
	return getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != "" || getenv("BROWSER") != ""
}

// plural returns "1 step" or "n steps".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
