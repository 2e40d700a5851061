package upstream

//lint:file-ignore SA1019 elicitation is deprecated only from protocol 2026-07-28; servers use it today.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server may answer a request with error -32042 (URL elicitation
// required, MCP 2025-11-25): the person must first complete the URL-mode
// elicitations in the error's data (sign in somewhere, say), then the
// request can be made again. The server tells its client when each is
// done with notifications/elicitation/complete. Client.classify turns
// such an answer into a *URLElicitationRequired cause, which can wait for
// those notifications on the session that answered.

// URLElicitationRequired is the cause of a request's failure when its
// server answered -32042: the URL-mode elicitations to complete before
// the request is made again. It wraps the server's answer (a
// *jsonrpc.Error with the code, message and data as sent).
type URLElicitationRequired struct {
	// Server is the server's name.
	Server string
	// Elicitations are the URL-mode elicitations the server requires, as
	// it sent them.
	Elicitations []*mcp.ElicitParams
	// Err is the server's answer.
	Err error
	// done is the session's record of completed elicitations.
	done *completions
}

// Error says what the server requires.
func (e *URLElicitationRequired) Error() string {
	return fmt.Sprintf("%s requires %s", e.Server, describeElicitations(e.Elicitations))
}

// Unwrap returns the server's answer.
func (e *URLElicitationRequired) Unwrap() error { return e.Err }

// IDs returns the elicitation ids the server will say are complete (those
// it gave; an elicitation without one cannot be waited for).
func (e *URLElicitationRequired) IDs() []string {
	var ids []string
	for _, el := range e.Elicitations {
		if el.ElicitationID != "" {
			ids = append(ids, el.ElicitationID)
		}
	}
	return ids
}

// Wait returns when the server has said that every elicitation with an id
// is complete (notifications/elicitation/complete on the session that
// answered), or with ctx's error when ctx ends first. With no id to wait
// for, it waits for ctx.
func (e *URLElicitationRequired) Wait(ctx context.Context) error {
	ids := e.IDs()
	if len(ids) == 0 || e.done == nil {
		<-ctx.Done()
		return ctx.Err()
	}
	for _, id := range ids {
		select {
		case <-e.done.of(id):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// describeElicitations says what a list of URL elicitations asks, with
// each URL's host (never the whole URL, which may carry a token): for
// messages and the history.
func describeElicitations(els []*mcp.ElicitParams) string {
	parts := make([]string, 0, len(els))
	for _, el := range els {
		parts = append(parts, fmt.Sprintf("%q at %s", el.Message, URLHost(el.URL)))
	}
	what := "a URL elicitation"
	if len(els) != 1 {
		what = fmt.Sprintf("%d URL elicitations", len(els))
	}
	return fmt.Sprintf("%s to be completed first (%s)", what, strings.Join(parts, "; "))
}

// URLHost returns the host of a URL as a person should check it before
// opening the URL: its host name (and port when one is given), or the
// whole string quoted when it does not parse as an absolute URL.
func URLHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Sprintf("%q (not a valid URL)", raw)
	}
	return u.Host
}

// urlElicitationRequired returns the cause of a -32042 answer, or nil when
// rpcErr is not one. A -32042 whose data holds no URL-mode elicitation
// with a URL is a protocol error the caller reports as such.
func (c *Client) urlElicitationRequired(rpcErr *jsonrpc.Error, err error) (*URLElicitationRequired, error) {
	if rpcErr == nil || rpcErr.Code != mcp.CodeURLElicitationRequired {
		return nil, nil
	}
	var data struct {
		Elicitations []*mcp.ElicitParams `json:"elicitations"`
	}
	if len(rpcErr.Data) == 0 {
		return nil, errors.New("the server's URL-elicitation-required error (-32042) has no data.elicitations")
	}
	if jerr := json.Unmarshal(rpcErr.Data, &data); jerr != nil {
		return nil, fmt.Errorf("the server's URL-elicitation-required error (-32042) has data that does not parse: %w", jerr)
	}
	if len(data.Elicitations) == 0 {
		return nil, errors.New("the server's URL-elicitation-required error (-32042) lists no elicitations")
	}
	for i, el := range data.Elicitations {
		if el == nil || el.Mode != "url" || el.URL == "" {
			return nil, fmt.Errorf("elicitation %d of the server's URL-elicitation-required error (-32042) is not a URL-mode elicitation with a url", i)
		}
		if u, perr := url.Parse(el.URL); perr != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("elicitation %d of the server's URL-elicitation-required error (-32042) has url %q, which is not an http(s) URL", i, el.URL)
		}
	}
	out := &URLElicitationRequired{Server: c.server.Name, Elicitations: data.Elicitations, Err: err, done: &c.completed}
	// Start waiting now: a completion that arrives before anyone waits is
	// kept.
	for _, id := range out.IDs() {
		c.completed.of(id)
	}
	return out, nil
}

// maxCompletions bounds the elicitation ids a session remembers.
const maxCompletions = 256

// completions are the URL elicitations of one session that are awaited or
// complete: a channel per id, closed when the server says it is complete.
// It remembers the newest maxCompletions ids.
type completions struct {
	mu    sync.Mutex
	m     map[string]chan struct{}
	order []string
}

// of returns the channel of id, closed once the elicitation is complete.
func (c *completions) of(id string) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entryLocked(id)
}

func (c *completions) entryLocked(id string) chan struct{} {
	if c.m == nil {
		c.m = map[string]chan struct{}{}
	}
	ch, ok := c.m[id]
	if !ok {
		ch = make(chan struct{})
		c.m[id] = ch
		c.order = append(c.order, id)
		if len(c.order) > maxCompletions {
			delete(c.m, c.order[0])
			c.order = c.order[1:]
		}
	}
	return ch
}

// complete marks id complete.
func (c *completions) complete(id string) {
	if id == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.entryLocked(id)
	select {
	case <-ch:
	default:
		close(ch)
	}
}
