// Package answer routes what a server asks its client during a call —
// elicitation (a question for the person) and sampling (a completion from
// a model) — to whoever made the call: the person at the terminal that
// ran `switchboard call`, the console page the call was started from, the
// agent's policy. A caller puts its [Answerer] in the call's context with
// [With]; the execution engine tracks every call it runs in [Calls]; the
// upstream connection asks [Calls.Requests], which finds the call a
// request belongs to and hands it to that call's answerer, or to the next
// handler (the gateway's, which forwards it to the calling MCP client).
package answer

//lint:file-ignore SA1019 sampling and elicitation are deprecated only from protocol 2026-07-28; servers use them today.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// Answerer answers the requests a server sends during a call made for it.
// Declining is an answer (an ElicitResult with action "decline"); an error
// is returned to the server as the request's error.
type Answerer interface {
	// Elicit answers an elicitation/create request of server.
	Elicit(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// CreateMessage answers a sampling/createMessage request of server.
	CreateMessage(ctx context.Context, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
}

type answererKey struct{}

// With returns a context whose tool calls are answered by a.
func With(ctx context.Context, a Answerer) context.Context {
	return context.WithValue(ctx, answererKey{}, a)
}

// From returns the answerer set by With, if any.
func From(ctx context.Context) (Answerer, bool) {
	a, ok := ctx.Value(answererKey{}).(Answerer)
	return a, ok && a != nil
}

// call is one tracked call: its answerer, nil for a call made for
// someone who answers elsewhere (a gateway client).
type call struct{ a Answerer }

type callKey struct{}

// Calls holds the calls in progress per server, newest last, so that a
// request a server sends can be given to the call that caused it. The
// zero value is ready to use; it is safe for concurrent use.
type Calls struct {
	mu sync.Mutex
	m  map[string][]*call
}

// Track records a call to server made with ctx until end is called. The
// returned context links what the server sends on the call's own stream
// to this call.
func (c *Calls) Track(ctx context.Context, server string) (out context.Context, end func()) {
	a, _ := From(ctx)
	tc := &call{a: a}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string][]*call{}
	}
	c.m[server] = append(c.m[server], tc)
	c.mu.Unlock()
	return context.WithValue(ctx, callKey{}, tc), func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.m[server] = slices.DeleteFunc(c.m[server], func(x *call) bool { return x == tc })
		if len(c.m[server]) == 0 {
			delete(c.m, server)
		}
	}
}

// For returns the answerer of the call a request of server belongs to:
// the call ctx is linked to (the request came on that call's stream),
// else the newest call to server. ok is false when no call to server is
// in progress; a is nil when the call has no answerer of its own.
func (c *Calls) For(ctx context.Context, server string) (a Answerer, ok bool) {
	if tc, linked := ctx.Value(callKey{}).(*call); linked {
		return tc.a, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	calls := c.m[server]
	if len(calls) == 0 {
		return nil, false
	}
	return calls[len(calls)-1].a, true
}

// Requests returns the handlers of server's sampling and elicitation
// requests: the answerer of the call they belong to, else next's (nil:
// the request is refused, saying no call can answer it). Roots are
// next's. Elicitation is declared in form and URL mode. An answerer gets
// a form's requested schema as the server wrote it, its fields in the
// server's order (upstream.ClientRequests.ElicitInOrder); next gets the
// params as the SDK decoded them.
func (c *Calls) Requests(server string, next upstream.ClientRequests) upstream.ClientRequests {
	r := next
	r.ElicitURL = true
	r.ElicitInOrder = true
	r.Elicit = func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		a, inCall := c.For(ctx, server)
		if a != nil {
			if schema := upstream.RequestedSchemaAsSent(ctx); schema != nil && p != nil {
				cp := *p
				cp.RequestedSchema = schema
				p = &cp
			}
			return a.Elicit(ctx, server, p)
		}
		if next.Elicit != nil {
			return next.Elicit(ctx, p)
		}
		return nil, noAnswerer(server, "elicitation", inCall)
	}
	r.CreateMessage = func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		a, inCall := c.For(ctx, server)
		if a != nil {
			return a.CreateMessage(ctx, server, p)
		}
		if next.CreateMessage != nil {
			return next.CreateMessage(ctx, p)
		}
		return nil, noAnswerer(server, "sampling", inCall)
	}
	return r
}

// LogReceiver is an Answerer that also shows the log messages
// (notifications/message) a server sends during the calls made for it:
// the terminal of `switchboard call`. Log runs on the upstream's reader:
// it must not block.
type LogReceiver interface {
	Log(ctx context.Context, server string, p *mcp.LoggingMessageParams)
}

// Log gives a log message of server to the call it belongs to, found as
// For finds a request's, when that call's answerer is a LogReceiver. It
// reports false when it is not, or no call to server is in progress: the
// message is then for someone else (a gateway client) or no one.
func (c *Calls) Log(ctx context.Context, server string, p *mcp.LoggingMessageParams) bool {
	a, _ := c.For(ctx, server)
	lr, ok := a.(LogReceiver)
	if !ok {
		return false
	}
	lr.Log(ctx, server, p)
	return true
}

// noAnswerer says why a request has no one to answer it.
func noAnswerer(server, what string, inCall bool) error {
	if inCall {
		return fmt.Errorf("server %s asked for %s during a call whose caller cannot answer it", server, what)
	}
	return fmt.Errorf("server %s asked for %s outside any call that can answer it (only a call from the CLI, the console or the agent is answered)", server, what)
}

// URLCompleter is an Answerer that can have the person complete the
// URL-mode elicitations a server requires before it serves a call (MCP
// error -32042, URL elicitation required). The execution engine asks it,
// then makes the call once more.
type URLCompleter interface {
	// CompleteURLs shows the person the elicitations server requires
	// and returns when they are done there (true: make the call again)
	// or decline (false). ctx ends when the server says every one is
	// complete (its cause is then ErrURLsCompleted), or when the call's
	// time is up.
	CompleteURLs(ctx context.Context, server string, els []*mcp.ElicitParams) (bool, error)
}

// ErrURLsCompleted is the cause of a CompleteURLs context that ended
// because the server said every elicitation is complete
// (notifications/elicitation/complete).
var ErrURLsCompleted = errors.New("the server said every elicitation is complete")
