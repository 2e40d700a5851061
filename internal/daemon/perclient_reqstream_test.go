//lint:file-ignore SA1019 the test's client declares roots and sets a log level, deprecated only from protocol 2026-07-28; clients and servers use them today.

package daemon

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// This file checks that what a server sends its client while it answers
// a prompts/get, a resources/read or a completion/complete — its roots,
// sampling and elicitation requests, a log message, progress under the
// client's token — reaches a client of any view on that request's own
// stream, before its answer, as directly: prefixed or not, a view of one
// server or of several, for shared, per_client and per_user sessions,
// with fast_path on and off, from a streamable-HTTP server (which sends
// them on the request's stream) and a stdio one (where nothing links them
// to the request), to a streamable-HTTP client that has opened no
// standalone stream (what went there would be lost: the server's request
// would fail, the log message not arrive), and to go-sdk clients over
// serve --stdio and the legacy SSE transport, which have one stream.

// requestStream is what a client saw on one request's own stream: the
// server's requests (as answeringAs notes them), log messages and
// progress, each sorted, and the answer's text.
type requestStream struct {
	Asked    []string
	Logs     []string
	Progress []string
	Result   string
}

// askOnStream posts body (id "q") on s, answering the server's requests
// as the client key (answeringAs), and returns what came on its stream.
func askOnStream(t *testing.T, s *rawSession, body, key string) requestStream {
	t.Helper()
	var got streamOutcome
	var out requestStream
	msgs := s.exchangeID(body, `"q"`, answeringAs(key, &got))
	for _, m := range msgs {
		method, _ := m["method"].(string)
		params, _ := m["params"].(map[string]any)
		switch method {
		case "notifications/message":
			out.Logs = append(out.Logs, fmt.Sprint(params["data"]))
		case "notifications/progress":
			out.Progress = append(out.Progress, fmt.Sprintf("%v %v/%v %v", params["progressToken"], params["progress"], params["total"], params["message"]))
		}
	}
	if res, rpcErr := answerTo(t, msgs, `"q"`); rpcErr != nil {
		out.Result = fmt.Sprintf("error %v", rpcErr)
	} else {
		out.Result = answerText(res)
	}
	out.Asked = got.Asked
	for _, l := range [][]string{out.Asked, out.Logs, out.Progress} {
		slices.Sort(l)
	}
	return out
}

// answerText is the text of a result: a tool result's content, a
// prompt's messages, a resource's contents, a completion's values.
func answerText(res map[string]any) string {
	out := ""
	switch {
	case res["content"] != nil:
		for _, c := range res["content"].([]any) {
			out += fmt.Sprint(c.(map[string]any)["text"])
		}
	case res["messages"] != nil:
		for _, pm := range res["messages"].([]any) {
			c, _ := pm.(map[string]any)["content"].(map[string]any)
			out += fmt.Sprint(c["text"])
		}
	case res["contents"] != nil:
		for _, rc := range res["contents"].([]any) {
			out += fmt.Sprint(rc.(map[string]any)["text"])
		}
	case res["completion"] != nil:
		out = fmt.Sprint(res["completion"].(map[string]any)["values"])
	}
	return out
}

// firstOf returns the value of field of the first entry of list in the
// session's answer to method, waiting until the list has one whose field
// has suffix.
func firstOf(t *testing.T, s *rawSession, method, list, field, suffix string) string {
	t.Helper()
	var found string
	eventually(t, method+" lists "+suffix, func() bool {
		msgs := sseData(t, readAll(t, s.post(`{"jsonrpc":"2.0","id":"l","method":"`+method+`","params":{}}`, nil)))
		for _, m := range msgs {
			res, _ := m["result"].(map[string]any)
			entries, _ := res[list].([]any)
			for _, e := range entries {
				v, _ := e.(map[string]any)[field].(string)
				if strings.HasSuffix(v, suffix) {
					found = v
					return true
				}
			}
		}
		return false
	})
	return found
}

// askAll opens a session of url whose client declares roots, sampling
// and elicitation, sets its log level and opens no standalone stream,
// and sends it a prompts/get, a resources/read and a completion/complete
// of the requestasks server's entries as the view names them, each with
// a progress token: what came on each request's stream, by method.
func askAll(t *testing.T, url string) map[string]requestStream {
	t.Helper()
	s := newCapableSession(t, url, clientCaps)
	if resp := readAll(t, s.post(`{"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"debug"}}`, nil)); !strings.Contains(resp, `"result"`) {
		t.Fatalf("logging/setLevel: %s", resp)
	}
	prompt := firstOf(t, s, "prompts/list", "prompts", "name", "ask")
	uri := firstOf(t, s, "resources/list", "resources", "uri", "res")
	out := map[string]requestStream{}
	out["prompts/get"] = askOnStream(t, s, `{"jsonrpc":"2.0","id":"q","method":"prompts/get","params":{"name":"`+prompt+`","arguments":{"key":"P"},"_meta":{"progressToken":"tok-P"}}}`, "P")
	out["resources/read"] = askOnStream(t, s, `{"jsonrpc":"2.0","id":"q","method":"resources/read","params":{"uri":"`+uri+`","_meta":{"progressToken":7}}}`, "R")
	out["completion/complete"] = askOnStream(t, s, `{"jsonrpc":"2.0","id":"q","method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"`+prompt+`"},"argument":{"name":"key","value":"C"},"_meta":{"progressToken":"tok-C"}}}`, "C")
	return out
}

// TestServerRequestsOnTheirRequestsStream: what a server sends its
// client while it answers a prompts/get, a resources/read or a
// completion/complete (roots, sampling and elicitation requests, a log
// message, progress) reaches the client on that request's own stream on
// every view — a prefix: never view of a per_client, a per_user or a
// shared server, a prefixed view, a view of several servers; of a
// streamable-HTTP server and of a stdio one — with fast_path on and off,
// as it does directly; the client has no standalone stream open.
func TestServerRequestsOnTheirRequestsStream(t *testing.T) {
	t.Parallel()
	askURL := serveHTTP(t, testserver.RequestAsks(), nil)
	other := mcp.NewServer(&mcp.Implementation{Name: "other", Version: "1"}, nil)
	other.AddTool(&mcp.Tool{Name: "hi", InputSchema: map[string]any{"type": "object"}}, emptyTool)
	otherURL := serveHTTP(t, other, nil)
	views := []config.View{
		{Name: "never-client", Servers: []string{"asks-c"}, Prefix: config.PrefixNever},
		{Name: "never-user", Servers: []string{"asks-u"}, Prefix: config.PrefixNever},
		{Name: "never-shared", Servers: []string{"asks-s"}, Prefix: config.PrefixNever},
		{Name: "prefixed-client", Servers: []string{"asks-c"}},
		{Name: "several", Servers: []string{"asks-u", "other"}},
		{Name: "stdio-client", Servers: []string{"stdio-c"}, Prefix: config.PrefixNever},
		{Name: "stdio-shared", Servers: []string{"stdio-s"}},
	}
	daemon := func(fast bool) *running {
		var servers []config.Server
		for _, up := range []struct {
			name string
			mode config.SessionMode
		}{{"asks-c", config.SessionPerClient}, {"asks-u", config.SessionPerUser}, {"asks-s", config.SessionShared}} {
			s := httpUpstream(up.name, askURL)
			s.Session, s.NoIdentityMeta, s.RequestTimeout = up.mode, true, 30*time.Second
			servers = append(servers, s)
		}
		for _, up := range []struct {
			name string
			mode config.SessionMode
		}{{"stdio-c", config.SessionPerClient}, {"stdio-s", config.SessionShared}} {
			s := testserver.Server(t, up.name, "requestasks")
			s.Session, s.NoIdentityMeta, s.RequestTimeout = up.mode, true, 30*time.Second
			servers = append(servers, s)
		}
		cfg := testConfig(append(servers, httpUpstream("other", otherURL))...)
		cfg.Gateway.DisableFastPath = !fast
		cfg.Gateway.Views = views
		return start(t, cfg)
	}
	direct := askAll(t, askURL)
	want := map[string]string{
		"prompts/get":         `prompt P: roots [file:///P] sampled "answer P" elicited P`,
		"resources/read":      `resource: roots [file:///R] sampled "answer R" elicited R`,
		"completion/complete": `[completion C: roots [file:///C] sampled "answer C" elicited C]`,
	}
	for m, res := range want {
		if d := direct[m]; d.Result != res || len(d.Asked) != 3 || len(d.Logs) != 1 || len(d.Progress) != 1 {
			t.Fatalf("directly, %s's stream carried %+v; want the server's three requests, its log message, its progress and the answer %s", m, d, res)
		}
	}
	// Two prompts/get of one client in flight that each ask: each is
	// asked on its own stream (the server's requests are linked to
	// theirs; the newest would otherwise be asked both).
	pair := func(url string) map[string]streamOutcome {
		s := newCapableSession(t, url, clientCaps)
		name := firstOf(t, s, "prompts/list", "prompts", "name", "pair")
		return twoRequests(t, s, func(key string) string {
			return `{"jsonrpc":"2.0","id":"` + key + `","method":"prompts/get","params":{"name":"` + name + `","arguments":{"key":"` + key + `"}}}`
		})
	}
	directPair := pair(askURL)
	wantPair := map[string]streamOutcome{
		"A": {Asked: []string{"elicitation/create form pair A", "roots/list", "sampling/createMessage sample pair A"}, Result: `pair A: roots [file:///A] sampled "answer A" elicited A`},
		"B": {Asked: []string{"elicitation/create form pair B", "roots/list", "sampling/createMessage sample pair B"}, Result: `pair B: roots [file:///B] sampled "answer B" elicited B`},
	}
	if diff := cmp.Diff(wantPair, directPair); diff != "" {
		t.Fatalf("directly, each prompts/get's requests did not come on its own stream (-want +got):\n%s", diff)
	}
	for _, fast := range []bool{true, false} {
		r := daemon(fast)
		for _, v := range views {
			got := askAll(t, r.url+"/mcp/"+v.Name)
			if diff := cmp.Diff(direct, got); diff != "" {
				t.Errorf("fast_path %v, view %s: what came on each request's stream, directly (-) and through the view (+):\n%s", fast, v.Name, diff)
			}
		}
		for _, v := range []string{"never-shared", "prefixed-client", "several"} {
			if diff := cmp.Diff(directPair, pair(r.url+"/mcp/"+v)); diff != "" {
				t.Errorf("fast_path %v, view %s: two prompts/get in flight, what came on each one's stream, directly (-) and through the view (+):\n%s", fast, v, diff)
			}
		}
	}
}

// oneStreamSeen is what a go-sdk client's handlers got while it made
// the requestasks server's three requests: the server's requests, log
// messages and progress (sorted), and each request's answer.
type oneStreamSeen struct {
	mu       sync.Mutex
	Asked    []string
	Logs     []string
	Progress []string
	Results  map[string]string
}

func (s *oneStreamSeen) add(to *[]string, what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*to = append(*to, what)
}

// askWithClient connects a go-sdk client through tr on protocol
// 2025-11-25 (which the gateway asks with requests, not in results),
// declaring roots, sampling and elicitation, sets its log level and
// makes the prompts/get, resources/read and completion/complete of the
// requestasks server's entries as the view names them, each with a
// progress token (askRequestAsks); it returns what the client's handlers
// got (name says which client it is), once the three log messages and
// progress notifications are in.
func askWithClient(t *testing.T, name string, tr mcp.Transport) *oneStreamSeen {
	t.Helper()
	seen := &oneStreamSeen{Results: map[string]string{}}
	c := requestAsksClient(func(what string) { seen.add(&seen.Asked, what) }, mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			seen.add(&seen.Logs, fmt.Sprint(req.Params.Data))
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			p := req.Params
			seen.add(&seen.Progress, fmt.Sprintf("%v %v/%v %v", p.ProgressToken, p.Progress, p.Total, p.Message))
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}
	seen.Results = askRequestAsks(ctx, t, cs, nil)
	waitFor(t, name+": the log messages and progress", func() bool {
		seen.mu.Lock()
		defer seen.mu.Unlock()
		return len(seen.Logs) >= 3 && len(seen.Progress) >= 3
	})
	seen.mu.Lock()
	defer seen.mu.Unlock()
	for _, l := range [][]string{seen.Asked, seen.Logs, seen.Progress} {
		slices.Sort(l)
	}
	return seen
}

// requestAsksClient is a go-sdk client, with opts' handlers, that
// declares the root file:///client and answers sampling ("answer" and
// the request's text) and elicitation (accepted, "who" the request's
// message) itself, telling asked (unless nil) what it was asked.
func requestAsksClient(asked func(string), opts mcp.ClientOptions) *mcp.Client {
	if asked == nil {
		asked = func(string) {}
	}
	opts.CreateMessageHandler = func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		text := fmt.Sprint(req.Params.Messages[0].Content.(*mcp.TextContent).Text)
		asked("sampling/createMessage " + text)
		return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "answer " + text}}, nil
	}
	opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked("elicitation/create " + req.Params.Message)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": req.Params.Message}}, nil
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "one-stream", Version: "1"}, &opts)
	c.AddRoots(&mcp.Root{URI: "file:///client", Name: "client"})
	return c
}

// askRequestAsks makes, with cs, the prompts/get (key P, progress token
// "tok-P"), resources/read (token 7) and completion/complete (value C,
// token "tok-C") of the requestasks server's entries as the view names
// them, once listed, and returns each answer's text (or error) by
// method; after, unless nil, runs after each request, with its method.
func askRequestAsks(ctx context.Context, t *testing.T, cs *mcp.ClientSession, after func(method string)) map[string]string {
	t.Helper()
	if after == nil {
		after = func(string) {}
	}
	var prompt, uri string
	eventually(t, "the prompt and the resource are listed", func() bool {
		for p, err := range cs.Prompts(ctx, nil) {
			if err == nil && strings.HasSuffix(p.Name, "ask") {
				prompt = p.Name
			}
		}
		for r, err := range cs.Resources(ctx, nil) {
			if err == nil && strings.HasSuffix(r.URI, "res") {
				uri = r.URI
			}
		}
		return prompt != "" && uri != ""
	})
	out := map[string]string{}
	pp := &mcp.GetPromptParams{Name: prompt, Arguments: map[string]string{"key": "P"}}
	pp.SetProgressToken("tok-P")
	if res, err := cs.GetPrompt(ctx, pp); err != nil {
		out["prompts/get"] = "error " + err.Error()
	} else {
		out["prompts/get"] = res.Messages[0].Content.(*mcp.TextContent).Text
	}
	after("prompts/get")
	rp := &mcp.ReadResourceParams{URI: uri}
	rp.SetProgressToken(7)
	if res, err := cs.ReadResource(ctx, rp); err != nil {
		out["resources/read"] = "error " + err.Error()
	} else {
		out["resources/read"] = res.Contents[0].Text
	}
	after("resources/read")
	cp := &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: prompt}, Argument: mcp.CompleteParamsArgument{Name: "key", Value: "C"},
		Meta: mcp.Meta{"progressToken": "tok-C"}}
	if res, err := cs.Complete(ctx, cp); err != nil {
		out["completion/complete"] = "error " + err.Error()
	} else {
		out["completion/complete"] = fmt.Sprint(res.Completion.Values)
	}
	after("completion/complete")
	return out
}

// TestServerRequestsReachOneStreamClients: over serve --stdio and the
// legacy SSE transport, whose client has one stream, what a server sends
// its client while it answers a prompts/get, a resources/read or a
// completion/complete (roots, sampling and elicitation requests, a log
// message, progress under the client's token) reaches that client as
// directly — also from a shared session, which asked no client before,
// and from a client's own (per_client, per_user) upstream session, which
// an SSE client's logging/setLevel now reaches: its server sent no log
// messages before.
func TestServerRequestsReachOneStreamClients(t *testing.T) {
	t.Parallel()
	askURL := serveHTTP(t, testserver.RequestAsks(), nil)
	servers := func() []config.Server {
		var out []config.Server
		for _, s := range []config.Server{httpUpstream("asks-s", askURL), httpUpstream("asks-u", askURL), testserver.Server(t, "stdio-c", "requestasks")} {
			s.NoIdentityMeta, s.RequestTimeout = true, 30*time.Second
			switch s.Name {
			case "asks-u":
				s.Session = config.SessionPerUser
			case "stdio-c":
				s.Session = config.SessionPerClient
			}
			out = append(out, s)
		}
		return out
	}
	direct := askWithClient(t, "directly", &mcp.StreamableClientTransport{Endpoint: askURL, MaxRetries: -1})
	want := map[string]string{
		"prompts/get":         `prompt P: roots [file:///client] sampled "answer sample prompt P" elicited form prompt P`,
		"resources/read":      `resource: roots [file:///client] sampled "answer sample resource" elicited form resource`,
		"completion/complete": `[completion C: roots [file:///client] sampled "answer sample completion C" elicited form completion C]`,
	}
	if diff := cmp.Diff(want, direct.Results); diff != "" || len(direct.Asked) != 6 {
		t.Fatalf("directly: asked %q, answers (-want +got):\n%s", direct.Asked, diff)
	}
	compare := func(name string, got *oneStreamSeen) {
		t.Helper()
		if diff := cmp.Diff(direct, got, cmpopts.IgnoreFields(oneStreamSeen{}, "mu")); diff != "" {
			t.Errorf("%s: what the client got, directly (-) and through the gateway (+):\n%s", name, diff)
		}
	}

	views := []config.View{
		{Name: "never-shared", Servers: []string{"asks-s"}, Prefix: config.PrefixNever},
		{Name: "several", Servers: []string{"asks-u", "stdio-c"}},
		{Name: "stdio-client", Servers: []string{"stdio-c"}, Prefix: config.PrefixNever},
		{Name: "never-user", Servers: []string{"asks-u"}, Prefix: config.PrefixNever},
	}
	cfg := testConfig(servers()...)
	cfg.Gateway.Views = views
	r := start(t, cfg)
	for _, v := range views {
		compare("SSE, view "+v.Name, askWithClient(t, "SSE, view "+v.Name, &mcp.SSEClientTransport{Endpoint: r.url + "/sse/" + v.Name}))
	}
	for _, v := range []config.View{views[0], views[2]} {
		cfg := testConfig(servers()...)
		v.Name = "default"
		cfg.Gateway.Views = []config.View{v}
		compare("serve --stdio, a view of "+v.Servers[0], askWithClient(t, "serve --stdio, a view of "+v.Servers[0], startStdio(t, cfg)))
	}
}
