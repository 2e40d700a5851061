package web

//lint:file-ignore SA1019 sampling and elicitation are deprecated only from protocol 2026-07-28; servers use them today.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/agent"
	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// This file answers what a server asks during a call started from the
// console — an elicitation (a form, or a URL to open) or a sampling
// request — in the page of that call. The question travels in the call's
// state (callState.Asks) over the event stream; the person's answer comes
// back with POST /ui/api/calls/{id}/asks/{ask}, bound to the call (of the
// session that started it) and to the question (an unguessable id),
// CSRF-checked like every console POST. A question is answered once; one
// still waiting when its call ends (cancelled, timed out) is withdrawn.

// The kinds of question a page shows.
const (
	// askForm is a form-mode elicitation: fields from its schema.
	askForm = "form"
	// askURL is a URL-mode elicitation: a URL to open.
	askURL = "url"
	// askSampling is a sampling request, to approve before it is sent to
	// the llm: model.
	askSampling = "sampling"
	// askSampled is the model's answer to a sampling request, to approve
	// before it is returned to the server.
	askSampled = "sampled"
	// askURLs are the URL-mode elicitations a server requires before it
	// answers the call (error -32042): pages to open, then "done" to make
	// the call again — unless the server says first that they are done.
	askURLs = "urls"
)

// The actions a page answers with.
const (
	actionAccept  = "accept"
	actionDecline = "decline"
	actionCancel  = "cancel"
	actionApprove = "approve"
	// actionDone says the person has completed the pages of an askURLs
	// question: the call is made again.
	actionDone = "done"
)

// askView is one question as the page shows it.
type askView struct {
	ID     string `json:"id"`
	Server string `json:"server"`
	Kind   string `json:"kind"`
	// Message is the server's message (elicitation).
	Message string `json:"message,omitempty"`
	// Schema is the requested schema of a form.
	Schema any `json:"schema,omitempty"`
	// URL and Host are what a URL-mode elicitation asks to open, and the
	// host it is on, shown plainly.
	URL  string `json:"url,omitempty"`
	Host string `json:"host,omitempty"`
	// Sampling is the request a sampling question would send.
	Sampling *samplingView `json:"sampling,omitempty"`
	// Model is where an approved request goes; NoModel says why there is
	// none (approving is then not offered).
	Model   string `json:"model,omitempty"`
	NoModel string `json:"no_model,omitempty"`
	// Answer is the model's answer (askSampled).
	Answer string `json:"answer,omitempty"`
	// URLs are the pages an askURLs question asks to open.
	URLs []urlView `json:"urls,omitempty"`
}

// urlView is one page a server requires the person to open (askURLs):
// its message, the URL and its host, shown plainly.
type urlView struct {
	Message string `json:"message"`
	URL     string `json:"url"`
	Host    string `json:"host"`
}

// samplingView is a sampling request as the page shows it.
type samplingView struct {
	SystemPrompt   string                `json:"system_prompt,omitempty"`
	MaxTokens      int64                 `json:"max_tokens"`
	Temperature    float64               `json:"temperature,omitempty"`
	IncludeContext string                `json:"include_context,omitempty"`
	Preferences    *mcp.ModelPreferences `json:"model_preferences,omitempty"`
	Messages       []sampledMessage      `json:"messages"`
}

// sampledMessage is one message of a sampling request: text, or an image
// (shown as one) or audio (named).
type sampledMessage struct {
	Role string `json:"role"`
	// Type is text, image, audio or other.
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	MIME string `json:"mime,omitempty"`
	// Data is an image's bytes (base64 in JSON).
	Data []byte `json:"data,omitempty"`
}

// askReply is a person's answer to a question.
type askReply struct {
	Action  string
	Content map[string]any
}

// pendingAsk is a question waiting for its answer.
type pendingAsk struct {
	view  askView
	reply chan askReply
}

// webAnswerer answers the requests a server sends during one console
// call, in that call's page.
type webAnswerer struct {
	c  *Console
	wc *webCall
	// callCtx ends when the call does: a question still waiting is then
	// withdrawn.
	callCtx context.Context
}

var _ answer.Answerer = (*webAnswerer)(nil)

// ask shows v in the call's page and waits for the answer, the end of
// ctx (the request's) or the end of the call.
func (a *webAnswerer) ask(ctx context.Context, v askView) (askReply, error) {
	v.ID = randomToken()[:22]
	p := &pendingAsk{view: v, reply: make(chan askReply, 1)}
	a.wc.mu.Lock()
	a.wc.asks = append(a.wc.asks, p)
	a.wc.asksVersion++
	a.wc.mu.Unlock()
	a.c.publishCall(a.wc)
	defer func() {
		a.wc.mu.Lock()
		a.wc.asks = slices.DeleteFunc(a.wc.asks, func(x *pendingAsk) bool { return x == p })
		a.wc.asksVersion++
		a.wc.mu.Unlock()
		a.c.publishCall(a.wc)
	}()
	select {
	case r := <-p.reply:
		return r, nil
	case <-ctx.Done():
		return askReply{}, ctx.Err()
	case <-a.callCtx.Done():
		return askReply{}, a.callCtx.Err()
	}
}

// Elicit implements answer.Answerer: a form from the requested schema, or
// the URL to open, with accept, decline and cancel.
func (a *webAnswerer) Elicit(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	v := askView{Server: server, Kind: askForm, Message: p.Message}
	if p.Mode == "url" || (p.Mode == "" && p.URL != "") {
		u, err := pageURL(server, p.URL)
		if err != nil {
			return nil, err
		}
		v.Kind, v.URL, v.Host = askURL, u.String(), u.Host
	} else {
		if _, err := compileRequested(p.RequestedSchema); err != nil {
			return nil, fault.Wrap(fault.Protocol, err, "server %s asked a question switchboard cannot show", server)
		}
		v.Schema = p.RequestedSchema
	}
	r, err := a.ask(ctx, v)
	if err != nil {
		return nil, err
	}
	return &mcp.ElicitResult{Action: r.Action, Content: r.Content}, nil
}

// pageURL parses a URL a server asks the person to open: only an
// absolute http(s) URL is shown.
func pageURL(server, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fault.New(fault.Protocol, "server %s asked to open %q, which is not an http(s) URL; switchboard does not show it", server, raw)
	}
	return u, nil
}

var _ answer.URLCompleter = (*webAnswerer)(nil)

// CompleteURLs implements answer.URLCompleter: the server answered the
// call with "URL elicitation required" (-32042). The pages are shown in
// the call's page, each with its host and a link the person follows (a
// new tab; nothing opens by itself), with "done" and "decline". The
// question is withdrawn when the server says every page is complete
// (ctx ends with answer.ErrURLsCompleted: the engine makes the call
// again) or the call ends.
func (a *webAnswerer) CompleteURLs(ctx context.Context, server string, els []*mcp.ElicitParams) (bool, error) {
	v := askView{Server: server, Kind: askURLs}
	for _, el := range els {
		u, err := pageURL(server, el.URL)
		if err != nil {
			return false, err
		}
		v.URLs = append(v.URLs, urlView{Message: el.Message, URL: u.String(), Host: u.Host})
	}
	r, err := a.ask(ctx, v)
	if err != nil {
		return false, err
	}
	return r.Action == actionDone, nil
}

// CreateMessage implements answer.Answerer: the request is shown for
// approval, sent to the llm: model once approved, and the model's answer
// shown for a second approval before it is returned.
func (a *webAnswerer) CreateMessage(ctx context.Context, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if _, err := answer.ChatMessages(p); err != nil {
		return nil, fmt.Errorf("%s asked for a completion switchboard cannot send: %w", server, err)
	}
	v := askView{Server: server, Kind: askSampling, Sampling: newSamplingView(p)}
	cfg := a.c.opts.Config().LLM
	var sampler *answer.Sampler
	cc, err := agent.ClientConfig(cfg, os.Getenv)
	if err == nil {
		sampler, err = answer.NewSampler(cc, cfg.MaxRetries)
	}
	if err != nil {
		v.NoModel = err.Error()
	} else {
		v.Model = sampler.Model()
	}
	r, err := a.ask(ctx, v)
	if err != nil {
		return nil, err
	}
	if r.Action != actionApprove {
		return nil, answer.Declined(server, "the person declined it in the console")
	}
	if sampler == nil {
		return nil, answer.Declined(server, "no model is configured ("+v.NoModel+")")
	}
	// The model's answer is not awaited past the end of the call.
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(a.callCtx, stop)()
	res, _, err := sampler.Sample(sctx, server, p)
	if err != nil {
		return nil, err
	}
	r, err = a.ask(ctx, askView{Server: server, Kind: askSampled, Model: res.Model, Answer: answer.ContentText(res.Content)})
	if err != nil {
		return nil, err
	}
	if r.Action != actionApprove {
		return nil, answer.Declined(server, "the person declined the model's answer in the console")
	}
	return res, nil
}

// newSamplingView is what the page shows of a sampling request.
func newSamplingView(p *mcp.CreateMessageParams) *samplingView {
	sv := &samplingView{SystemPrompt: p.SystemPrompt, MaxTokens: p.MaxTokens, Temperature: p.Temperature,
		IncludeContext: p.IncludeContext, Preferences: p.ModelPreferences, Messages: []sampledMessage{}}
	for _, m := range p.Messages {
		if m == nil {
			continue
		}
		sm := sampledMessage{Role: string(m.Role), Type: "other", Text: answer.ContentText(m.Content)}
		switch c := m.Content.(type) {
		case *mcp.TextContent:
			sm.Type = "text"
		case *mcp.ImageContent:
			if strings.HasPrefix(c.MIMEType, "image/") {
				sm.Type, sm.MIME, sm.Data = "image", c.MIMEType, c.Data
			}
		case *mcp.AudioContent:
			sm.Type, sm.MIME = "audio", c.MIMEType
		}
		sv.Messages = append(sv.Messages, sm)
	}
	return sv
}

// compileRequested compiles an elicitation's requested schema.
func compileRequested(schema any) (catalog.Tool, error) {
	if schema == nil {
		schema = map[string]any{"type": "object"}
	}
	compiled, err := catalog.CompileSchema(schema)
	if err != nil {
		return catalog.Tool{}, err
	}
	return catalog.Tool{Server: "elicitation", Def: &mcp.Tool{Name: "answer"}, Schema: compiled}, nil
}

// answerRequest is the body of POST /ui/api/calls/{id}/asks/{ask}.
type answerRequest struct {
	// Action is accept, decline or cancel (an elicitation), approve or
	// decline (a sampling request, or the model's answer), or done or
	// decline (the pages a server requires before it answers the call).
	Action string `json:"action"`
	// Content is an accepted form's answer.
	Content json.RawMessage `json:"content"`
}

// apiAnswer takes the person's answer to a question of one of their
// calls: checked (an accepted form against its requested schema) before
// the answer goes to the server.
func (c *Console) apiAnswer(w http.ResponseWriter, r *http.Request) {
	wc, ok := c.calls.get(r.PathValue("id"), sessionOf(r).id)
	if !ok {
		writeFault(w, http.StatusNotFound, fault.New(fault.NotFound, "no call %q in this session", r.PathValue("id")).
			WithSuggestions("only the session that started a call answers its questions"))
		return
	}
	id := r.PathValue("ask")
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxArgsBytes))
	if err != nil {
		writeFault(w, http.StatusRequestEntityTooLarge, fault.Wrap(fault.Validation, err, "the answer is larger than %d bytes", maxArgsBytes))
		return
	}
	var req answerRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeFault(w, http.StatusBadRequest, fault.Wrap(fault.Validation, err, "want a JSON object with action (and content, to accept a form)"))
		return
	}
	wc.mu.Lock()
	var p *pendingAsk
	for _, x := range wc.asks {
		if x.view.ID == id {
			p = x
		}
	}
	answered := wc.answered[id]
	wc.mu.Unlock()
	switch {
	case answered:
		writeFault(w, http.StatusConflict, fault.New(fault.Validation, "question %q of call %s was already answered", id, wc.id).
			WithSuggestions("a question is answered once"))
		return
	case p == nil:
		writeFault(w, http.StatusNotFound, fault.New(fault.NotFound, "call %s has no question %q waiting for an answer", wc.id, id).
			WithSuggestions("the question was withdrawn when its call ended; start the call again"))
		return
	}
	reply, err := checkAnswer(p.view, req)
	if err != nil {
		writeFault(w, http.StatusBadRequest, err)
		return
	}
	wc.mu.Lock()
	if wc.answered[id] || !slices.Contains(wc.asks, p) {
		wc.mu.Unlock()
		writeFault(w, http.StatusConflict, fault.New(fault.Validation, "question %q of call %s was already answered, or withdrawn", id, wc.id))
		return
	}
	if wc.answered == nil {
		wc.answered = map[string]bool{}
	}
	wc.answered[id] = true
	wc.mu.Unlock()
	p.reply <- reply
	c.logger.Info("console question answered", logKeyServer, p.view.Server, logKeyTool, wc.tool, logKeyKind, p.view.Kind, logKeyAction, reply.Action)
	writeJSON(w, http.StatusOK, struct {
		Answered bool   `json:"answered"`
		Action   string `json:"action"`
	}{true, reply.Action})
}

// checkAnswer checks an answer against its question: an action the
// question has, and an accepted form's content against the requested
// schema.
func checkAnswer(v askView, req answerRequest) (askReply, error) {
	var actions []string
	switch v.Kind {
	case askForm, askURL:
		actions = []string{actionAccept, actionDecline, actionCancel}
	case askSampling, askSampled:
		actions = []string{actionApprove, actionDecline}
	case askURLs:
		actions = []string{actionDone, actionDecline}
	}
	if !slices.Contains(actions, req.Action) {
		return askReply{}, fault.New(fault.Validation, "action %q is not an answer to this question; give %s", req.Action, strings.Join(actions, ", ")).
			WithDetail("field", "action")
	}
	if v.Kind == askSampling && req.Action == actionApprove && v.NoModel != "" {
		return askReply{}, fault.New(fault.Validation, "no model is configured to send this request to (%s); decline it", v.NoModel).
			WithSuggestions("set llm.base_url and llm.model in the configuration (docs/agent.md)")
	}
	hasContent := len(bytes.TrimSpace(req.Content)) > 0 && string(bytes.TrimSpace(req.Content)) != "null"
	if v.Kind != askForm || req.Action != actionAccept {
		if hasContent {
			return askReply{}, fault.New(fault.Validation, "content goes only with accepting a form; %s carries none", req.Action).WithDetail("field", "content")
		}
		return askReply{Action: req.Action}, nil
	}
	content := map[string]any{}
	if hasContent {
		var err error
		if content, err = decodeArgs(req.Content); err != nil {
			return askReply{}, fault.Wrap(fault.Validation, err, "the content must be a JSON object of the form's fields").WithDetail("field", "content")
		}
	}
	tool, err := compileRequested(v.Schema)
	if err != nil {
		return askReply{}, fault.Wrap(fault.Protocol, err, "the requested schema does not compile")
	}
	if err := tool.ValidateArgs(content); err != nil {
		fe := fault.New(fault.Validation, "the answer to %s's question does not fit its form", v.Server)
		if ve := fault.As(err); ve != nil {
			fe.Fields = ve.Fields
		}
		return askReply{}, fe
	}
	return askReply{Action: actionAccept, Content: plainNumbers(content).(map[string]any)}, nil
}

// plainNumbers turns the json.Numbers of a decoded value into the int64
// or float64 a result is sent with.
func plainNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = plainNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = plainNumbers(e)
		}
		return x
	}
	return v
}

// publishCall sends a call's state to its session's pages.
func (c *Console) publishCall(wc *webCall) {
	c.hub.publish(event{name: "call", session: wc.session, data: mustJSON(wc.state(c.now()))})
}
