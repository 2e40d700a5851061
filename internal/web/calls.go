package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// Call registry limits.
const (
	// maxCalls bounds the calls held; finished ones are dropped oldest
	// first, running ones never.
	maxCalls = 500
	// callKeep is how long a finished call's result stays viewable.
	callKeep = time.Hour
	// progressEvery throttles progress events per call.
	progressEvery = 100 * time.Millisecond
	// maxArgsBytes bounds the arguments of one call.
	maxArgsBytes = 1 << 20
)

// webCall is a call started from the console.
type webCall struct {
	id      string
	session string
	server  string
	tool    string
	// taskID, when set, makes this the wait for a task's result
	// (tasks.go), shown on the Tasks page.
	taskID  string
	args    json.RawMessage
	started time.Time
	cancel  context.CancelFunc

	mu           sync.Mutex
	done         bool
	cancelled    bool
	finished     time.Time
	progress     *toolcall.Progress
	lastProgress time.Time
	result       *control.CallResult
	err          error
	// asks are the server's questions waiting for the person's answer
	// (asks.go); answered holds the ids of those answered.
	asks     []*pendingAsk
	answered map[string]bool
	// asksVersion counts the changes of asks, so that a page can tell a
	// stale state (a poll answered late) from a newer one.
	asksVersion uint64
}

// callState is a call's wire form for the page.
type callState struct {
	ID        string             `json:"id"`
	Server    string             `json:"server"`
	Tool      string             `json:"tool"`
	Done      bool               `json:"done"`
	Status    string             `json:"status"`
	ElapsedMS int64              `json:"elapsed_ms"`
	Progress  *toolcall.Progress `json:"progress,omitempty"`
	// View is where the result is shown, once done.
	View string `json:"view"`
	// Asks are the server's questions waiting for an answer in the page.
	Asks []askView `json:"asks,omitempty"`
	// AsksVersion grows with every change of Asks.
	AsksVersion uint64 `json:"asks_version"`
}

func (wc *webCall) state(now time.Time) callState {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	st := callState{ID: wc.id, Server: wc.server, Tool: wc.tool, Done: wc.done, Status: "running", Progress: wc.progress,
		View: toolURL(wc.server, wc.tool) + "&call=" + wc.id}
	if wc.taskID != "" {
		st.View = tasksURL(wc.server) + "&call=" + wc.id
	}
	st.AsksVersion = wc.asksVersion
	for _, p := range wc.asks {
		st.Asks = append(st.Asks, p.view)
	}
	end := now
	if wc.done {
		end = wc.finished
		switch {
		case wc.result != nil:
			st.Status = wc.result.Status
		case wc.err != nil:
			st.Status = "error"
			if k := fault.KindOf(wc.err); k == fault.Cancelled || k == fault.Timeout {
				st.Status = string(k)
			}
		}
	}
	st.ElapsedMS = end.Sub(wc.started).Milliseconds()
	return st
}

// calls holds the console's calls.
type calls struct {
	now   func() time.Time
	mu    sync.Mutex
	byID  map[string]*webCall
	order []string
}

func newCalls(now func() time.Time) *calls { return &calls{now: now, byID: map[string]*webCall{}} }

func (cs *calls) add(wc *webCall) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.byID[wc.id] = wc
	cs.order = append(cs.order, wc.id)
	for i := 0; len(cs.byID) > maxCalls && i < len(cs.order); {
		old := cs.byID[cs.order[i]]
		if old != nil && old.isDone() {
			delete(cs.byID, cs.order[i])
			cs.order = append(cs.order[:i], cs.order[i+1:]...)
			continue
		}
		i++
	}
}

// get returns a call of the given session.
func (cs *calls) get(id, session string) (*webCall, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	wc, ok := cs.byID[id]
	if !ok || wc.session != session {
		return nil, false
	}
	return wc, true
}

// expire drops finished calls older than callKeep.
func (cs *calls) expire() {
	now := cs.now()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	kept := cs.order[:0]
	for _, id := range cs.order {
		wc := cs.byID[id]
		if wc == nil {
			continue
		}
		wc.mu.Lock()
		old := wc.done && now.Sub(wc.finished) > callKeep
		wc.mu.Unlock()
		if old {
			delete(cs.byID, id)
			continue
		}
		kept = append(kept, id)
	}
	cs.order = kept
}

func (wc *webCall) isDone() bool {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return wc.done
}

// startRequest is the body of POST /ui/api/calls.
type startRequest struct {
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// Task starts the call as a task (tasks.go follows it).
	Task bool `json:"task"`
}

// apiStartCall validates a call's arguments against the tool's schema (the
// engine's own check, so that the page can mark fields at once), then runs
// it in the background and answers 202 with its id.
func (c *Console) apiStartCall(w http.ResponseWriter, r *http.Request) {
	var req startRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxArgsBytes))
	if err != nil {
		writeFault(w, http.StatusRequestEntityTooLarge, fault.Wrap(fault.Validation, err, "the arguments are larger than %d bytes", maxArgsBytes))
		return
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Server == "" || req.Tool == "" {
		writeFault(w, http.StatusBadRequest, fault.New(fault.Validation, "want a JSON object with server, tool and arguments"))
		return
	}
	if len(bytes.TrimSpace(req.Arguments)) == 0 || bytes.Equal(bytes.TrimSpace(req.Arguments), []byte("null")) {
		req.Arguments = json.RawMessage("{}")
	}
	args, err := decodeArgs(req.Arguments)
	if err != nil {
		writeFault(w, http.StatusUnprocessableEntity, err)
		return
	}
	// Backend.Tool waits briefly for a tool the server has just announced.
	if _, err := c.opts.Backend.Tool(r.Context(), req.Server, req.Tool); err != nil {
		writeFault(w, statusOf(err), err)
		return
	}
	tool, err := c.opts.Catalog.Tool(req.Server, req.Tool)
	if err != nil {
		writeFault(w, statusOf(err), err)
		return
	}
	if err := tool.ValidateArgs(args); err != nil {
		writeFault(w, http.StatusUnprocessableEntity, err)
		return
	}
	se := sessionOf(r)
	ctx, cancel := context.WithCancel(c.ctx)
	wc := &webCall{id: randomToken()[:22], session: se.id, server: req.Server, tool: req.Tool,
		args: req.Arguments, started: c.now(), cancel: cancel}
	if !c.track() {
		cancel()
		writeFault(w, http.StatusServiceUnavailable, fault.New(fault.Cancelled, "the daemon is shutting down"))
		return
	}
	c.calls.add(wc)
	// A server's questions during the call are asked in its page.
	ctx = answer.With(ctx, &webAnswerer{c: c, wc: wc, callCtx: ctx})
	go func() {
		defer c.wg.Done()
		defer cancel()
		creq := control.CallRequest{
			Server: req.Server, Tool: req.Tool, Arguments: req.Arguments,
			Source: string(Source), Identity: c.callerIdentity(se),
			OnProgress: func(p toolcall.Progress) { c.callProgress(wc, p) },
		}
		if req.Task {
			creq.Task = json.RawMessage(`{}`) // the server's own ttl
		}
		res, err := c.opts.Backend.Call(ctx, creq)
		wc.mu.Lock()
		wc.done, wc.finished, wc.result, wc.err = true, c.now(), res, err
		wc.mu.Unlock()
		if err != nil && !errors.Is(err, context.Canceled) {
			c.logger.Info("console call failed", logKeyServer, req.Server, logKeyTool, req.Tool, logKeyErr, err)
		}
		c.publishCall(wc)
	}()
	writeJSON(w, http.StatusAccepted, wc.state(c.now()))
}

// callerIdentity is who the console's calls are made for: the user of the
// gateway token the session logged in with, else — no tokens are
// configured, so the console is on loopback and its user is the local
// user — gateway.default_user.
func (c *Console) callerIdentity(se session) string {
	if se.authed {
		return se.user
	}
	return c.opts.Config().Gateway.TrustedUser("", false)
}

// decodeArgs decodes a call's arguments as the engine does (numbers as
// json.Number); they must be a JSON object.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return nil, fault.Wrap(fault.Validation, err, "the arguments must be a JSON object")
	}
	if dec.More() {
		return nil, fault.New(fault.Validation, "the arguments hold more than one JSON value")
	}
	return args, nil
}

// callProgress notes a call's progress and publishes it, at most every
// progressEvery.
func (c *Console) callProgress(wc *webCall, p toolcall.Progress) {
	now := c.now()
	wc.mu.Lock()
	wc.progress = &p
	publish := now.Sub(wc.lastProgress) >= progressEvery
	if publish {
		wc.lastProgress = now
	}
	wc.mu.Unlock()
	if publish {
		c.hub.publish(event{name: "call", session: wc.session, data: mustJSON(wc.state(now))})
	}
}

// apiCall returns a call's state.
func (c *Console) apiCall(w http.ResponseWriter, r *http.Request) {
	wc, ok := c.calls.get(r.PathValue("id"), sessionOf(r).id)
	if !ok {
		writeFault(w, http.StatusNotFound, fault.New(fault.NotFound, "no call %q in this session", r.PathValue("id")).
			WithSuggestions("results are kept for an hour; the history has every call"))
		return
	}
	writeJSON(w, http.StatusOK, wc.state(c.now()))
}

// apiCancelCall cancels a running call.
func (c *Console) apiCancelCall(w http.ResponseWriter, r *http.Request) {
	wc, ok := c.calls.get(r.PathValue("id"), sessionOf(r).id)
	if !ok {
		writeFault(w, http.StatusNotFound, fault.New(fault.NotFound, "no call %q in this session", r.PathValue("id")))
		return
	}
	wc.mu.Lock()
	wc.cancelled = !wc.done
	wc.mu.Unlock()
	wc.cancel()
	c.logger.Info("console call cancelled", logKeyServer, wc.server, logKeyTool, wc.tool)
	writeJSON(w, http.StatusOK, wc.state(c.now()))
}
