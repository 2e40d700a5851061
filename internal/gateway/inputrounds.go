package gateway

//lint:file-ignore SA1019 sampling, elicitation and roots are deprecated only from protocol 2026-07-28; clients and servers use them today, and the gateway forwards them.

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// A client of protocol 2026-07-28 takes no requests from its server: a
// server asks it for an elicitation, sampling or roots in the result of
// the request it serves (multi round-trip: resultType "input_required",
// inputRequests, requestState), and the client sends that request again
// with its answers (inputResponses) and the request state. An upstream
// asks the gateway with requests, though (any upstream of an older
// protocol; one of 2026-07-28 asks in a result, which the gateway's
// upstream session answers through the same handlers), while the call
// runs.
//
// So for such a client's tools/call (and prompts/get and resources/read)
// the gateway runs the call in rounds: the call (the engine's; for the
// others the upstream request) runs on a context of its own (the gateway
// owns it, not the client's request), and the client's request waits for
// whichever comes first — the call's result, which answers the request,
// or the upstream's first question(s), which the gateway answers the
// request with as an input-required result of its own. The upstream's request
// stays pending meanwhile. When the client sends its request again with
// inputResponses and the requestState the gateway gave, the answers go
// to the pending upstream requests and the client's request waits again,
// as the first did; the call continues as it would have if the client
// had been asked directly.
//
// The request state is a random value of the gateway's (no client state
// is trusted): it names the round in this gateway's memory, holds
// nothing, changes every round, and is good only for the client session
// (stateless: the user) that was given it, for the same request (method
// and name or URI). A client
// that does not come back within gateway.input_timeout leaves the round
// expired: its pending upstream requests get an error saying so (and so
// does any the server asks after), the call ends as the server decides,
// and a later request with that state is refused. A client session has at
// most maxRoundsPerOwner rounds waiting for it at once; a question past
// that is refused. A session that ends, and the gateway's shutdown, end
// their rounds' calls.

// inputStatePrefix begins every request state the gateway gives, so that
// a state a server gave (passed through on a view that is the server)
// can be told from the gateway's own.
const inputStatePrefix = "switchboard-input-"

// maxRoundsPerOwner bounds the calls that wait for one client session's
// (stateless: one user's) answers at once.
const maxRoundsPerOwner = 16

// roundOwner is who may resume a round: the client session (nil in
// stateless mode, where a request has no lasting session) and the user.
type roundOwner struct {
	ss   *mcp.ServerSession
	user string
}

// inputRounds holds the rounds of the calls in progress of clients that
// are asked in results.
type inputRounds struct {
	mu      sync.Mutex
	byState map[string]*inputRound // the state each waiting round gave its client
	live    map[*inputRound]struct{}
	closed  bool
}

// inputRound is one client call run in rounds.
type inputRound struct {
	rounds *inputRounds
	owner  roundOwner
	what   string // the request, as the client sent it: its method and the name (or URI) it asks for
	cancel context.CancelFunc
	// wake is signalled when a question comes or the call ends.
	wake chan struct{}
	// timeout is how long the client may take to come back.
	timeout time.Duration

	mu       sync.Mutex
	pending  []*question          // asked by the upstream, not yet given to the client
	asked    map[string]*question // given to the client in the latest round, by input request key
	state    string               // the request state of the latest round; "" while none waits
	attached bool                 // a request of the client waits on the round
	// notify sends the call's progress to the client under the progress
	// token of the request attached now (nil when none is, or it sent
	// none): progress belongs to a request that has not had its answer.
	notify func(toolcall.Progress)
	// waiter is the request attached now (nil when none is): its
	// session and context, on which what the server logs goes.
	waiter  *roundWaiter
	expired error // set when the client did not come back in time
	timer   *time.Timer
	done    bool
	res     any // the request's result, as run returned it
	err     error
	n       int // input requests given so far, for their keys
	count   int // rounds: input-required results given
}

// question is one request of the upstream's, waiting for the client's
// answer.
type question struct {
	req    mcp.InputRequest
	answer chan questionAnswer // buffered: the answer is never waited for
}

type questionAnswer struct {
	res mcp.InputResponse
	err error
}

// roundKey is the context key of the *inputRound a call runs in.
type roundKey struct{}

// asksInResults reports whether ss, the session of a client's tools/call,
// is to be asked in results: its client speaks protocol 2026-07-28.
func asksInResults(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= protocolPerRequest
}

// asHandledRead returns res, the result of a resources/read the gateway
// answers beside the SDK's resource handlers (readSole), as the SDK's
// handler gives one: with the protocol's cache default
// (protocolCacheDefault) where it has none. Its resultType is
// resultTypeMiddleware's.
func asHandledRead(res *mcp.ReadResourceResult) *mcp.ReadResourceResult {
	if res != nil && res.CacheScope == "" {
		res.CacheScope = protocolCacheDefault.CacheScope
	}
	return res
}

// resultTypeMiddleware gives the tools/call, prompts/get and
// resources/read results of a client of protocol 2026-07-28 their
// resultType — "input_required" when they ask for input (the gateway's
// round, or the server's own result passed on), "complete" otherwise —
// as the SDK's own handlers do (its handleMultiRoundTripResult), also
// when the gateway answered beside those handlers: from a client's own
// lists (ownListsMiddleware), for an unlisted name, as a view that is its
// server. (Before, such a result asked for input without saying so, and
// the client took it for complete.)
func resultTypeMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil {
			return res, err
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if !sdkStampsResultType(ss) {
			return res, nil
		}
		switch r := res.(type) {
		case *mcp.CallToolResult:
			if r != nil {
				return stampResultType(r, r.InputRequests != nil, r.NeedsInput()), nil
			}
		case *mcp.GetPromptResult:
			if r != nil {
				return stampResultType(r, r.InputRequests != nil, r.NeedsInput()), nil
			}
		case *mcp.ReadResourceResult:
			if r != nil {
				return stampResultType(r, r.InputRequests != nil, r.NeedsInput()), nil
			}
		}
		return res, nil
	}
}

// sdkStampsResultType reports whether the SDK's handlers give a result
// for client session ss a resultType: as its clientSupportsMultiRoundTrip,
// a session of protocol 2026-07-28 or later, or one with no initialize
// (the SDK takes it to speak the newest version).
func sdkStampsResultType(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip == nil || ip.ProtocolVersion >= protocolPerRequest
}

// stampResultType returns res with resultType "input_required" (inputs)
// or "complete". The SDK keeps the field unexported and sets it only as it
// reads JSON, so a value read from {"resultType": ...} takes res's
// exported fields: a copy, for a result may be shared. A result that
// already says it needs input is returned as it is.
func stampResultType[T any](res *T, inputs, marked bool) *T {
	if inputs && marked {
		return res
	}
	rt := `{"resultType":"complete"}`
	if inputs {
		rt = `{"resultType":"input_required"}`
	}
	out := new(T)
	if json.Unmarshal([]byte(rt), out) != nil {
		return res
	}
	src, dst := reflect.ValueOf(res).Elem(), reflect.ValueOf(out).Elem()
	for i := range src.NumField() {
		if src.Type().Field(i).IsExported() {
			dst.Field(i).Set(src.Field(i))
		}
	}
	return out
}

// start begins a round for what (`tools/call "x"`, say), a request of
// owner's: it returns the round and the request's context, which carries
// ctx's values but not its end, until the request has its result
// upstream or the round is ended.
func (rs *inputRounds) start(ctx context.Context, owner roundOwner, what string, timeout time.Duration) (*inputRound, context.Context, error) {
	callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r := &inputRound{rounds: rs, owner: owner, what: what, cancel: cancel, wake: make(chan struct{}, 1), timeout: timeout}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.closed {
		cancel()
		return nil, nil, fault.New(fault.Connection, "the gateway is shutting down")
	}
	if rs.live == nil {
		rs.live = map[*inputRound]struct{}{}
		rs.byState = map[string]*inputRound{}
	}
	rs.live[r] = struct{}{}
	return r, context.WithValue(callCtx, roundKey{}, r), nil
}

// waitingLocked returns how many rounds of owner wait for its answers;
// rs.mu is held.
func (rs *inputRounds) waitingLocked(owner roundOwner) int {
	n := 0
	for _, r := range rs.byState {
		if r.owner == owner {
			n++
		}
	}
	return n
}

// forget drops r: its call has ended and its client has been told, or it
// was ended.
func (rs *inputRounds) forget(r *inputRound) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.live, r)
	for s, x := range rs.byState {
		if x == r {
			delete(rs.byState, s)
		}
	}
}

// resume returns the round that gave state to a client, if owner may
// resume it with what, its request sent again; else an error saying why
// not, for the client.
func (rs *inputRounds) resume(state string, owner roundOwner, what string) (*inputRound, error) {
	rs.mu.Lock()
	r := rs.byState[state]
	rs.mu.Unlock()
	if r == nil || r.owner != owner {
		// Another session's state is refused as an unknown one: its
		// existence is not the business of this client.
		return nil, fault.New(fault.Validation, "requestState %q is not one this gateway gave this client session, or it was already used or has expired (gateway.input_timeout)", clip(state)).
			WithDetail("field", "requestState").
			WithSuggestions("send the request again without inputResponses and requestState")
	}
	if r.what != what {
		return nil, fault.New(fault.Validation, "requestState %q was given for %s, not %s", clip(state), r.what, what).
			WithDetail("field", "requestState").
			WithSuggestions(fmt.Sprintf("send the request again as it was (%s) with the inputResponses, or send %s without requestState", r.what, what))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != state {
		return nil, fault.New(fault.Validation, "requestState %q was already used", clip(state)).
			WithDetail("field", "requestState").
			WithSuggestions("use the requestState of the latest input-required result")
	}
	if r.attached {
		return nil, fault.New(fault.Validation, "the call of requestState %q is being resumed by another request", clip(state)).
			WithDetail("field", "requestState")
	}
	r.attached = true // the caller's request now waits on r (next)
	return r, nil
}

// clip shortens a client's value for an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// closeAll ends every round (the gateway shuts down).
func (rs *inputRounds) closeAll() {
	rs.mu.Lock()
	rs.closed = true
	all := make([]*inputRound, 0, len(rs.live))
	for r := range rs.live {
		all = append(all, r)
	}
	rs.mu.Unlock()
	for _, r := range all {
		r.end(errors.New("the gateway is shutting down"))
	}
}

// sessionEnded ends the rounds of client session ss.
func (rs *inputRounds) sessionEnded(ss *mcp.ServerSession) {
	rs.mu.Lock()
	var mine []*inputRound
	for r := range rs.live {
		if r.owner.ss == ss {
			mine = append(mine, r)
		}
	}
	rs.mu.Unlock()
	for _, r := range mine {
		r.end(errors.New("the client session ended"))
	}
}

// end ends r's call: its pending questions get why, and the call's
// context is cancelled.
func (r *inputRound) end(why error) {
	r.mu.Lock()
	if r.expired == nil {
		r.expired = why
	}
	qs := r.takeQuestionsLocked()
	if r.timer != nil {
		r.timer.Stop()
	}
	r.mu.Unlock()
	for _, q := range qs {
		q.answer <- questionAnswer{err: why}
	}
	r.cancel()
	r.rounds.forget(r)
}

// takeQuestionsLocked empties r's pending and asked questions and returns
// them; r.mu is held.
func (r *inputRound) takeQuestionsLocked() []*question {
	qs := r.pending
	for _, q := range r.asked {
		qs = append(qs, q)
	}
	r.pending, r.asked = nil, nil
	return qs
}

func (r *inputRound) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// finished records the outcome of r's request upstream.
func (r *inputRound) finished(res any, err error) {
	r.mu.Lock()
	r.done, r.res, r.err = true, res, err
	qs := r.takeQuestionsLocked()
	// No client will come for the result once it is too late; until then
	// the client's state stays good, and expire forgets r.
	gone := r.expired != nil
	r.mu.Unlock()
	for _, q := range qs {
		q.answer <- questionAnswer{err: errors.New("the call has ended")}
	}
	if gone {
		r.rounds.forget(r)
	}
	r.signal()
}

// progress sends p, the call's progress, to the client's request waiting
// on r now, if it asked for progress; else it is dropped.
func (r *inputRound) progress(p toolcall.Progress) {
	r.mu.Lock()
	notify := r.notify
	r.mu.Unlock()
	if notify != nil {
		notify(p)
	}
}

// roundWaiter is a client's request waiting on a round: its session and
// its handler's context.
type roundWaiter struct {
	ss  *mcp.ServerSession
	ctx context.Context
}

// logTo returns where a log message of r's call goes now: the request of
// the client's that waits on r, if one does (over stateless HTTP the
// session of the call's first request ended with it).
func (r *inputRound) logTo() (*roundWaiter, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiter, r.waiter != nil
}

// roundCount reports how many input-required results r gave its client.
func (r *inputRound) roundCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// ask puts req, a request the upstream sent during r's call, to r's
// client, and returns its answer: it waits until the client answers in
// a request of its own, or the round ends.
func (r *inputRound) ask(ctx context.Context, req mcp.InputRequest) (mcp.InputResponse, error) {
	q := &question{req: req, answer: make(chan questionAnswer, 1)}
	r.mu.Lock()
	switch {
	case r.expired != nil:
		err := r.expired
		r.mu.Unlock()
		return nil, err
	case r.done:
		r.mu.Unlock()
		return nil, errors.New("the call has ended")
	}
	r.pending = append(r.pending, q)
	r.mu.Unlock()
	r.signal()
	select {
	case a := <-q.answer:
		return a.res, a.err
	case <-ctx.Done():
		r.mu.Lock()
		r.pending = slices.DeleteFunc(r.pending, func(x *question) bool { return x == q })
		r.mu.Unlock()
		return nil, ctx.Err()
	}
}

// answer gives the client's responses to the questions of r's latest
// round, sent by w, the client's request attached now (resume), which
// from then on gets the call's progress (notify) and log messages. Every
// question must be answered, with a response of its kind; otherwise
// nothing is given and the error says what is wrong.
//
// w takes the call over in the same step as the answers are given: the
// upstream may report progress as soon as it has them, before this
// request would otherwise have been set to receive it, and that progress
// belongs to this request, before its answer.
func (r *inputRound) answer(responses mcp.InputResponseMap, w *roundWaiter, notify func(toolcall.Progress)) (err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer func() {
		if err != nil {
			r.attached = false // the client may send it again, answered right
		}
	}()
	var missing []string
	for key, q := range r.asked {
		res, ok := responses[key]
		if !ok {
			missing = append(missing, key)
			continue
		}
		if want := responseKind(q.req); want != responseKindOf(res) {
			return fault.New(fault.Validation, "inputResponses[%q] is %s; the input request %q asked for %s", key, responseKindOf(res), key, want).
				WithDetail("field", "inputResponses."+key)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fault.New(fault.Validation, "inputResponses lacks %s, which the input-required result asked for", strings.Join(quoteAll(missing), ", ")).
			WithDetail("field", "inputResponses").
			WithSuggestions("answer every input request of the latest input-required result, under its key")
	}
	r.waiter, r.notify = w, notify
	for key, q := range r.asked {
		q.answer <- questionAnswer{res: responses[key]}
	}
	r.asked = nil
	if r.timer != nil {
		r.timer.Stop()
	}
	r.rounds.mu.Lock()
	delete(r.rounds.byState, r.state)
	r.rounds.mu.Unlock()
	r.state = ""
	return nil
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}

// responseKind is what answers req: "an elicitation result", say.
func responseKind(req mcp.InputRequest) string {
	switch req.(type) {
	case *mcp.ElicitParams:
		return "an elicitation result"
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		return "a sampling result"
	case *mcp.ListRootsParams:
		return "a roots list"
	}
	return fmt.Sprintf("%T", req)
}

// responseKindOf is what res is, in responseKind's words.
func responseKindOf(res mcp.InputResponse) string {
	switch res.(type) {
	case *mcp.ElicitResult:
		return "an elicitation result"
	case *mcp.CreateMessageResult, *mcp.CreateMessageWithToolsResult:
		return "a sampling result"
	case *mcp.ListRootsResult:
		return "a roots list"
	}
	return fmt.Sprintf("%T", res)
}

// next waits, for a request of r's client (ctx), attached to r (see
// inputRounds.resume and callInRounds), until r's call ends —
// its result answers the request, and r is forgotten — or the upstream
// asks — the request is answered with an input-required result of the
// gateway's. If ctx ends first (the client cancelled its request, or went
// away), the call is ended.
func (r *inputRound) next(ctx context.Context) roundOutcome {
	defer func() {
		r.mu.Lock()
		r.attached, r.notify, r.waiter = false, nil, nil
		r.mu.Unlock()
	}()
	for {
		r.mu.Lock()
		if r.done {
			res, err := r.res, r.err
			r.mu.Unlock()
			r.rounds.forget(r)
			return roundOutcome{res: res, err: err}
		}
		if len(r.pending) > 0 {
			if err := r.roomLocked(); err != nil {
				qs := r.pending
				r.pending = nil
				r.mu.Unlock()
				for _, q := range qs {
					q.answer <- questionAnswer{err: err}
				}
				continue
			}
			reqs, state := r.inputRequiredLocked()
			r.mu.Unlock()
			return roundOutcome{requests: reqs, state: state}
		}
		r.mu.Unlock()
		select {
		case <-r.wake:
		case <-ctx.Done():
			r.end(fmt.Errorf("the client's request ended before it was answered: %w", context.Cause(ctx)))
			return roundOutcome{err: ctx.Err()}
		}
	}
}

// roundOutcome is what a client's request waiting on a round is answered
// with: the input requests to ask it, under state, or else the result of
// the request upstream (res, err).
type roundOutcome struct {
	requests mcp.InputRequestMap
	state    string
	res      any
	err      error
}

// roomLocked says why r may not wait for its client, when its owner has
// too many rounds waiting already; r.mu is held.
func (r *inputRound) roomLocked() error {
	r.rounds.mu.Lock()
	defer r.rounds.mu.Unlock()
	if n := r.rounds.waitingLocked(r.owner); n >= maxRoundsPerOwner {
		return fmt.Errorf("the client has %d calls waiting for its answers already, the most the gateway keeps: it answers those first", n)
	}
	return nil
}

// inputRequiredLocked gives the client r's pending questions: it returns
// them as input requests, under a new request state, and starts the time
// the client has to come back; r.mu is held.
func (r *inputRound) inputRequiredLocked() (mcp.InputRequestMap, string) {
	reqs := make(mcp.InputRequestMap, len(r.pending))
	r.asked = make(map[string]*question, len(r.pending))
	for _, q := range r.pending {
		r.n++
		key := fmt.Sprintf("%s-%d", inputKeyPrefix(q.req), r.n)
		reqs[key] = q.req
		r.asked[key] = q
	}
	r.pending = nil
	r.count++
	r.state = inputStatePrefix + rand.Text()
	r.rounds.mu.Lock()
	r.rounds.byState[r.state] = r
	r.rounds.mu.Unlock()
	state, timeout := r.state, r.timeout
	r.timer = time.AfterFunc(timeout, func() { r.expire(state) })
	return reqs, state
}

// inputKeyPrefix names an input request's key by its kind.
func inputKeyPrefix(req mcp.InputRequest) string {
	switch req.(type) {
	case *mcp.ElicitParams:
		return "elicitation"
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		return "sampling"
	case *mcp.ListRootsParams:
		return "roots"
	}
	return "input"
}

// expire ends the wait of the round that gave state, if its client has
// not come back: the pending upstream requests get an error, and so does
// any the upstream asks after; the call goes on as the server decides.
func (r *inputRound) expire(state string) {
	r.mu.Lock()
	if r.state != state || r.attached {
		r.mu.Unlock()
		return
	}
	why := fmt.Errorf("the client did not answer within %s (gateway.input_timeout)", r.timeout)
	r.expired = why
	qs := r.takeQuestionsLocked()
	r.state = ""
	done := r.done
	r.mu.Unlock()
	r.rounds.mu.Lock()
	delete(r.rounds.byState, state)
	r.rounds.mu.Unlock()
	for _, q := range qs {
		q.answer <- questionAnswer{err: why}
	}
	if done {
		r.rounds.forget(r) // no client will come for the result
	}
}

// inRound returns the round the call of ctx runs in, if any.
func inRound(ctx context.Context) *inputRound {
	r, _ := ctx.Value(roundKey{}).(*inputRound)
	return r
}

// callInRounds runs cc, a call of e by a client that is asked in results
// (asksInResults), or resumes the call whose round gave the client its
// request state: see the top of this file. run makes the call (on the
// context it is given). notify, when set, sends progress under this
// request's token: the call's progress goes to the request that waits on
// it at the time.
func (vs *viewServer) callInRounds(ctx context.Context, cc *clientCall, e toolEntry, p *mcp.CallToolParamsRaw, user string, notify func(toolcall.Progress), run func(context.Context) (*toolcall.Result, error)) (*toolcall.Result, error) {
	return inRounds(ctx, vs, cc, e.server, user, fmt.Sprintf("tools/call %q", p.Name), p.InputResponses, p.RequestState, notify, run,
		func(reqs mcp.InputRequestMap, state string) *toolcall.Result {
			return &toolcall.Result{Status: toolcall.StatusInputRequired, CallToolResult: &mcp.CallToolResult{InputRequests: reqs, RequestState: state}}
		})
}

// askingInRounds runs a prompts/get or resources/read (what says which,
// and of what) of client session ss (asksInResults) with user, to
// server, or resumes the one whose round gave the client state: get makes
// the request upstream, and inputRequired makes the result that asks the
// client reqs under a state. While the request waits upstream it counts as
// a call of the client's (a clientCall marked asking), so that what the
// server asks its client meanwhile comes to its round. When this request
// of the client's carries a progress token (meta), the server's progress
// reaches it under that token while it waits, as a call's does
// (inputRound.progress): the request upstream asks for progress on the
// first request's behalf (with per_client, under its token), and each
// request that waits on the round after gets it under its own.
func askingInRounds[T any](ctx context.Context, vs *viewServer, server string, ss *mcp.ServerSession, meta mcp.Meta, user, what string,
	responses mcp.InputResponseMap, state string, get func(context.Context) (T, error), inputRequired func(reqs mcp.InputRequestMap, state string) T) (T, error) {
	cc := &clientCall{vs: vs, server: server, ss: ss, level: vs.g.callerLevel(vs.g.config().Gateway, meta, ss), asking: true}
	tok := meta["progressToken"]
	notify := progressTo(ctx, ss, tok)
	return inRounds(ctx, vs, cc, server, user, what, responses, state, notify, func(ctx context.Context) (T, error) {
		if notify != nil {
			ctx = upstream.WithProgress(ctx, func(p *mcp.ProgressNotificationParams) {
				cc.round.progress(toolcall.Progress{Processed: p.Progress, Total: p.Total, Message: p.Message})
			})
			if vs.g.perClient(server) {
				// Its own session: the server sees the client's token.
				ctx = upstream.WithProgressToken(ctx, tok)
			}
		}
		ctx = context.WithValue(ctx, callerKey{}, cc)
		// Also ended when the gateway shuts down, as a request not in
		// rounds (asking, StopRequests): a request of the client's that
		// waits on the round would else hold its session's close, and a
		// round the client left its server's request.
		ctx, unhook := vs.g.outsideCalls(ctx)
		defer unhook()
		cc.ctx = ctx
		done := vs.g.calls.add(cc)
		defer done()
		defer vs.g.asking.add()()
		return get(ctx)
	}, inputRequired)
}

// progressTo returns what sends client session ss, with ctx (its
// request's, on whose stream it goes), the progress of the request it
// made with progress token tok; nil when the request carries none, or
// has no session to reach (a stateless request the gateway answers
// itself).
func progressTo(ctx context.Context, ss *mcp.ServerSession, tok any) func(toolcall.Progress) {
	if tok == nil || ss == nil {
		return nil
	}
	return func(p toolcall.Progress) {
		_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: p.Processed, Total: p.Total, Message: p.Message})
	}
}

// inRounds runs a request of cc's client (what: its method and name) to
// server for user in rounds, or resumes the request whose round gave the
// client state with the client's responses (see the top of this file).
// run makes the request upstream, on a context of the gateway's; its
// result answers the client's request, or inputRequired's, which asks the
// client what the server asked meanwhile. notify, when set, sends the
// progress of the request upstream to this request of the client's while
// it waits (inputRound.progress).
func inRounds[T any](ctx context.Context, vs *viewServer, cc *clientCall, server, user, what string, responses mcp.InputResponseMap, state string,
	notify func(toolcall.Progress), run func(context.Context) (T, error), inputRequired func(mcp.InputRequestMap, string) T) (T, error) {
	var zero T
	owner := roundOwner{ss: cc.ss, user: user}
	if vs.g.config().Gateway.Stateless {
		owner.ss = nil
	}
	rs := &vs.g.rounds
	var r *inputRound
	switch {
	case strings.HasPrefix(state, inputStatePrefix):
		var err error
		r, err = rs.resume(state, owner, what)
		if err == nil {
			err = r.answer(responses, &roundWaiter{cc.ss, ctx}, notify)
		}
		if err != nil {
			return zero, &roundRefused{err: err}
		}
	case (state != "" || responses != nil) && !vs.isTheServer(server, cc.ss):
		// Not a state of the gateway's, and no server's either: the
		// gateway's upstream sessions answer their servers themselves.
		given := "inputResponses without a requestState"
		if state != "" {
			given = fmt.Sprintf("requestState %q", clip(state))
		}
		return zero, &roundRefused{err: fault.New(fault.Validation, "%s is not one this gateway gave", given).
			WithDetail("field", "requestState").
			WithSuggestions("send the request again without inputResponses and requestState")}
	default:
		var callCtx context.Context
		var err error
		r, callCtx, err = rs.start(ctx, owner, what, vs.g.config().Gateway.InputTimeout)
		if err != nil {
			return zero, err
		}
		r.attached, r.notify, r.waiter = true, notify, &roundWaiter{cc.ss, ctx} // no one else knows r yet
		cc.round = r
		vs.g.sessions.Add(1)
		go func() {
			defer vs.g.sessions.Done()
			res, err := run(callCtx)
			r.finished(res, err)
		}()
	}
	o := r.next(ctx)
	if o.requests != nil {
		return inputRequired(o.requests, o.state), nil
	}
	res, _ := o.res.(T)
	return res, o.err
}

// roundRefused is a resumed call the gateway refused: a request state it
// did not give (or not to this client, or no longer valid), or answers
// that do not match its questions. The client gets a -32602 error.
type roundRefused struct{ err error }

func (e *roundRefused) Error() string { return e.err.Error() }
func (e *roundRefused) Unwrap() error { return e.err }

// rpc is the error the client gets.
func (e *roundRefused) rpc() *jsonrpc.Error {
	out, _ := protocolError(e.err).(*jsonrpc.Error)
	return out
}

// askInRound asks req of r's client (inputRound.ask) and returns its
// answer, a T (inputRound.answer has checked its kind).
func askInRound[T mcp.InputResponse](ctx context.Context, r *inputRound, req mcp.InputRequest) (T, error) {
	var zero T
	res, err := r.ask(ctx, req)
	if err != nil {
		return zero, err
	}
	out, ok := res.(T)
	if !ok {
		return zero, fmt.Errorf("the client answered %s with %T", responseKind(req), res)
	}
	return out, nil
}

// askSampling asks p of r's client and returns its answer as the one
// content block CreateMessage gives (the client's answer decodes as a
// CreateMessageWithToolsResult, which may hold several).
func askSampling(ctx context.Context, r *inputRound, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	res, err := r.ask(ctx, p)
	if err != nil {
		return nil, err
	}
	switch res := res.(type) {
	case *mcp.CreateMessageResult:
		return res, nil
	case *mcp.CreateMessageWithToolsResult:
		if len(res.Content) != 1 {
			return nil, fmt.Errorf("the client's sampling result has %d content blocks; the server asked for one", len(res.Content))
		}
		return &mcp.CreateMessageResult{Meta: res.Meta, Content: res.Content[0], Model: res.Model, Role: res.Role, StopReason: res.StopReason}, nil
	}
	return nil, fmt.Errorf("the client answered a sampling request with %T", res)
}
