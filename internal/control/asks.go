package control

//lint:file-ignore SA1019 sampling and elicitation are deprecated only from protocol 2026-07-28; servers use them today.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// This file carries what a server asks during a call made over the socket
// (elicitation, sampling) back to the process that made the call: the
// call's stream sends an ask line, and that process posts its answer to
// /v1/answer, so that a person at the terminal of `switchboard call`
// answers even when the daemon runs the call.

// askWire is a request a server sent during a call, on the call's stream.
type askWire struct {
	ID     string                   `json:"id"`
	Server string                   `json:"server"`
	Elicit *mcp.ElicitParams        `json:"elicit,omitempty"`
	Sample *mcp.CreateMessageParams `json:"sample,omitempty"`
	// URLs are the URL-mode elicitations the server requires before it
	// answers the call (-32042): answered by answer.URLCompleter.
	URLs []*mcp.ElicitParams `json:"urls,omitempty"`
	// Withdrawn says the ask of ID is no longer waited for (the server
	// said the URLs are complete, or the call ended): the caller stops
	// asking it.
	Withdrawn bool `json:"withdrawn,omitempty"`
	// Completed says, with Withdrawn, that it was withdrawn because the
	// server said the URLs are complete.
	Completed bool `json:"completed,omitempty"`
}

// UnmarshalJSON decodes an ask, an elicitation's requested schema as
// written (the daemon sends it as the server wrote it): the SDK's type
// would decode it into a map, which loses the order of the form's fields.
func (a *askWire) UnmarshalJSON(b []byte) error {
	type plain askWire
	if err := json.Unmarshal(b, (*plain)(a)); err != nil {
		return err
	}
	if a.Elicit == nil {
		return nil
	}
	var wire struct {
		Elicit struct {
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		} `json:"elicit"`
	}
	if err := json.Unmarshal(b, &wire); err != nil {
		return err
	}
	if s := wire.Elicit.RequestedSchema; len(s) > 0 && string(s) != "null" {
		a.Elicit.RequestedSchema = s
	}
	return nil
}

// answerWire is the caller's answer to an askWire: a result, or an error
// the server is to get.
type answerWire struct {
	ID     string                   `json:"id"`
	Elicit *mcp.ElicitResult        `json:"elicit,omitempty"`
	Sample *mcp.CreateMessageResult `json:"sample,omitempty"`
	// Done answers URLs: true to make the call again.
	Done  *bool           `json:"done,omitempty"`
	Error json.RawMessage `json:"error,omitempty"`
	Cause string          `json:"cause,omitempty"`
}

// waiting holds the asks sent to callers that have not been answered.
type waiting struct {
	mu sync.Mutex
	m  map[string]chan answerWire
}

// add registers an ask and returns its ID, the channel its answer comes
// on, and the function that forgets it.
func (w *waiting) add() (string, chan answerWire, func()) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	ch := make(chan answerWire, 1)
	w.mu.Lock()
	if w.m == nil {
		w.m = map[string]chan answerWire{}
	}
	w.m[id] = ch
	w.mu.Unlock()
	return id, ch, func() {
		w.mu.Lock()
		delete(w.m, id)
		w.mu.Unlock()
	}
}

// answer delivers a; false when no ask of that ID waits.
func (w *waiting) answer(a answerWire) bool {
	w.mu.Lock()
	ch, ok := w.m[a.ID]
	delete(w.m, a.ID)
	w.mu.Unlock()
	if ok {
		ch <- a
	}
	return ok
}

// errCallerGone answers a question whose call ended before its caller
// answered.
var errCallerGone = errors.New("the call that this question belongs to ended before it was answered")

// remoteAnswerer answers a socket call's asks by sending them down the
// call's stream (out) and waiting for the caller's post.
type remoteAnswerer struct {
	w   *waiting
	out chan<- askWire
	// logs takes the server's log messages during the call, for the
	// caller to show; one that finds it full is dropped, as progress is.
	logs chan<- logWire
	// ended is closed when the call's stream is no longer written: a
	// question still waiting then (the call returned first: its
	// timeout) has no one to tell that it is withdrawn.
	ended <-chan struct{}
}

var _ answer.Answerer = (*remoteAnswerer)(nil)

// ask sends one ask and waits for its answer.
func (r *remoteAnswerer) ask(ctx context.Context, a askWire) (answerWire, error) {
	id, ch, forget := r.w.add()
	defer forget()
	a.ID = id
	select {
	case r.out <- a:
	case <-ctx.Done():
		return answerWire{}, ctx.Err()
	case <-r.ended:
		return answerWire{}, errCallerGone
	}
	select {
	case <-r.ended:
		// The call returned (its timeout) with the question unanswered:
		// no one is left to answer it.
		return answerWire{}, errCallerGone
	case ans := <-ch:
		if len(ans.Error) > 0 {
			return ans, decodeError(ans.Error, ans.Cause)
		}
		return ans, nil
	case <-ctx.Done():
		// The caller stops asking (the call's stream is read until the
		// call returns, which waits for this).
		select {
		case r.out <- askWire{ID: id, Withdrawn: true, Completed: errors.Is(context.Cause(ctx), answer.ErrURLsCompleted)}:
		case <-r.ended:
		}
		return answerWire{}, ctx.Err()
	}
}

var _ answer.URLCompleter = (*remoteAnswerer)(nil)

var _ answer.LogReceiver = (*remoteAnswerer)(nil)

// Log implements answer.LogReceiver: the message goes down the call's
// stream, never waiting for it (it runs on the upstream's reader).
func (r *remoteAnswerer) Log(_ context.Context, server string, p *mcp.LoggingMessageParams) {
	select {
	case r.logs <- logWire{Server: server, Params: p}:
	default:
	}
}

// CompleteURLs implements answer.URLCompleter: the caller shows the URLs;
// when the server says they are complete first, the ask is withdrawn.
func (r *remoteAnswerer) CompleteURLs(ctx context.Context, server string, els []*mcp.ElicitParams) (bool, error) {
	ans, err := r.ask(ctx, askWire{Server: server, URLs: els})
	if err != nil {
		return false, err
	}
	if ans.Done == nil {
		return false, fault.New(fault.Protocol, "the caller answered %s's URL elicitations with no result", server)
	}
	return *ans.Done, nil
}

// Elicit implements answer.Answerer.
func (r *remoteAnswerer) Elicit(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	ans, err := r.ask(ctx, askWire{Server: server, Elicit: p})
	if err != nil {
		return nil, err
	}
	if ans.Elicit == nil {
		return nil, fault.New(fault.Protocol, "the caller answered %s's question with no result", server)
	}
	return ans.Elicit, nil
}

// CreateMessage implements answer.Answerer.
func (r *remoteAnswerer) CreateMessage(ctx context.Context, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	ans, err := r.ask(ctx, askWire{Server: server, Sample: p})
	if err != nil {
		return nil, err
	}
	if ans.Sample == nil {
		return nil, fault.New(fault.Protocol, "the caller answered %s's request for a completion with no result", server)
	}
	return ans.Sample, nil
}

// postAnswer takes a caller's answer to an ask.
func (h *handler) postAnswer(w http.ResponseWriter, r *http.Request) {
	var a answerWire
	if !h.decode(w, r, &a) {
		return
	}
	if !h.asks.answer(a) {
		h.fail(w, r, fault.New(fault.NotFound, "no question %q is waiting for an answer (it was answered, or its call ended)", a.ID))
		return
	}
	h.reply(w, r, struct{}{}, nil)
}

// answerAsk answers one ask line with the answerer of the call's context
// and posts the answer.
func (c *Client) answerAsk(ctx context.Context, a answer.Answerer, ask *askWire) error {
	out := answerWire{ID: ask.ID}
	var err error
	switch {
	case ask.Elicit != nil:
		out.Elicit, err = a.Elicit(ctx, ask.Server, ask.Elicit)
	case ask.Sample != nil:
		out.Sample, err = a.CreateMessage(ctx, ask.Server, ask.Sample)
	case len(ask.URLs) > 0:
		uc, ok := a.(answer.URLCompleter)
		if !ok {
			done := false
			out.Done = &done
			break
		}
		var done bool
		done, err = uc.CompleteURLs(ctx, ask.Server, ask.URLs)
		if ctx.Err() != nil {
			return nil // withdrawn: the daemon no longer waits for it
		}
		out.Done = &done
	default:
		err = fault.New(fault.Protocol, "the switchboard daemon sent a question of no known kind")
	}
	if err != nil {
		out.Error, out.Cause = encodeError(err)
	}
	return c.do(ctx, http.MethodPost, "/v1/answer", out, &struct{}{})
}
