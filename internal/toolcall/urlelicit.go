package toolcall

//lint:file-ignore SA1019 elicitation is deprecated only from protocol 2026-07-28; servers use it today.

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// A server may answer a call with error -32042: the person must first
// complete URL-mode elicitations (open a page, sign in there). When the
// caller's answerer can show them (answer.URLCompleter: the terminal of
// `switchboard call`), the engine has it do so, waits for the server's
// notifications/elicitation/complete (or the person saying they are
// done), and makes the call once more; otherwise the call fails with an
// elicitation_required error whose cause holds the server's answer as it
// was sent (a gateway client gets that answer unchanged).

// urlsRequired returns the elicitations a failed attempt's server
// requires, or nil.
func urlsRequired(err error) *upstream.URLElicitationRequired {
	var need *upstream.URLElicitationRequired
	if fault.KindOf(err) == fault.ElicitationRequired && errors.As(err, &need) {
		return need
	}
	return nil
}

// completeURLs has the caller's answerer show what need requires and
// wait for it: true when the call is to be made again; else the error the
// call fails with (err, the server's answer, or why the wait ended).
// callerCtx is the caller's context, ctx the call's (with its timeout).
func (c *call) completeURLs(callerCtx, ctx context.Context, need *upstream.URLElicitationRequired, err error, timeout time.Duration) (bool, error) {
	a, _ := answer.From(ctx)
	uc, ok := a.(answer.URLCompleter)
	if !ok {
		return false, err
	}
	wctx, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if need.Wait(wctx) == nil {
			cancel(answer.ErrURLsCompleted)
		}
	})
	done, aerr := uc.CompleteURLs(wctx, c.req.Server, need.Elicitations)
	completed := context.Cause(wctx) == answer.ErrURLsCompleted
	cancel(nil)
	wg.Wait()
	switch {
	case completed:
		return true, nil
	case callerCtx.Err() != nil:
		return false, fault.Wrap(fault.Cancelled, callerCtx.Err(), "call to %s/%s was cancelled while waiting for its URL elicitations", c.req.Server, c.req.Tool)
	case ctx.Err() != nil:
		return false, fault.Wrap(fault.ElicitationRequired, err, "%s; it was not completed within the call's timeout (%s)", fault.As(err).Message, timeout).
			WithDetail("server", c.req.Server).
			WithSuggestions("complete it, then run the call again; or pass a longer --timeout")
	case aerr != nil:
		return false, fault.Wrap(fault.ElicitationRequired, errors.Join(err, aerr), "%s; asking the person failed: %s", fault.As(err).Message, fault.As(aerr).Message).
			WithDetail("server", c.req.Server)
	case done:
		return true, nil
	}
	return false, err
}
