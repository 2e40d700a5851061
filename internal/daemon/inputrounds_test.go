//lint:file-ignore SA1019 the test asks for roots, elicitation and sampling, deprecated only from protocol 2026-07-28; clients and servers use them today.

package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// This file checks that a client of protocol 2026-07-28, which takes no
// requests from its server, is asked what an upstream asks during its
// call — elicitation, sampling, roots — on every view and session kind:
// the gateway answers the client's tools/call with an input-required
// result of its own, keeps the upstream's request pending, and when the
// client sends its call again with its answers and the request state,
// answers the upstream and continues the call (inputrounds.go in the
// gateway).

// roundsServers are the upstreams of the tests: server-everything over
// stdio (TypeScript SDK, 2025-11-25: it asks with requests) and two
// go-sdk servers asking for roots, an elicitation and sampling in their
// tool's result (mrtrServer): mrtr stateless, which negotiates 2026-07-28
// with the gateway (whose upstream session answers the input requests
// through the gateway's handlers), mrtrs with sessions (2025-11-25: its
// SDK asks with requests). All are shared, on a prefixed view.
func roundsServers(t *testing.T) (ev, mrtr, mrtrs config.Server) {
	ev = config.Server{Name: "ev", Transport: config.TransportStdio, Enabled: true, LoadTools: true,
		ConnectTimeout: 30 * time.Second, RequestTimeout: 30 * time.Second}
	ev.Command, ev.Args = testpeer.EverythingCommand(t)
	mrtr = httpUpstream("mrtr", serveHTTP(t, mrtrServer(&mrtrSeen{}), &mcp.StreamableHTTPOptions{Stateless: true}))
	mrtrs = httpUpstream("mrtrs", serveHTTP(t, mrtrServer(&mrtrSeen{}), nil))
	return ev, mrtr, mrtrs
}

// roundsClient is a go-sdk client (protocol 2026-07-28 where the other
// side speaks it) that answers elicitation, sampling and roots itself,
// and counts what it was asked.
func roundsClient(asked *askedCount, mrtr *mcp.MultiRoundTripOptions) *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "rounds-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.add("elicitation")
			content := map[string]any{"name": "Ada"}
			if b, _ := json.Marshal(req.Params.RequestedSchema); strings.Contains(string(b), `"check"`) {
				content = map[string]any{"name": "Ada", "check": true} // server-everything's form
			}
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked.add("sampling")
			return &mcp.CreateMessageResult{Role: "assistant", Model: "the-client's-model",
				Content: &mcp.TextContent{Text: "switchboard hums"}}, nil
		},
		MultiRoundTrip: mrtr,
	})
	c.AddRoots(&mcp.Root{URI: "file:///the/client/own", Name: "own"})
	return c
}

type askedCount struct {
	mu sync.Mutex
	m  map[string]int
}

func (a *askedCount) add(what string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[string]int{}
	}
	a.m[what]++
}

func (a *askedCount) get(what string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.m[what]
}

// serveStdio serves the default view of r's gateway over an in-memory
// pipe, as serve --stdio does, until the test ends, and returns the
// client's end.
func serveStdio(t *testing.T, r *running) mcp.Transport {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.d.gw.ServeStdio(ctx, st)
	}()
	t.Cleanup(func() {
		stop()
		<-done
	})
	return ct
}

// startRounds starts cfg's daemon and returns it with a client's
// transport to its default view: serve --stdio's ("stdio"), or streamable
// HTTP to the gateway made stateless (where a client speaks 2026-07-28).
func startRounds(t *testing.T, cfg *config.Config, transport string) (*running, mcp.Transport) {
	t.Helper()
	if transport == "stdio" {
		r := start(t, cfg)
		return r, serveStdio(t, r)
	}
	cfg.Gateway.Stateless = true
	r := start(t, cfg)
	return r, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1}
}

// connectRounds connects c over tr until the test ends, recording what
// it writes and reads in w (unless w is nil), and checks that it
// negotiated version (any, when version is "").
func connectRounds(t *testing.T, ctx context.Context, c *mcp.Client, tr mcp.Transport, w *exchangeWire, version string) *mcp.ClientSession {
	t.Helper()
	if w != nil {
		tr = recordingTransport{Transport: tr, wrote: w.wrote, read: w.read}
	}
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; version != "" && v != version {
		t.Fatalf("the client negotiated %s, want %s (the case this test is about)", v, version)
	}
	return cs
}

// inputRequired returns the input-required results among seen (what an
// exchangeWire recorded).
func inputRequired(seen []string) []string {
	var out []string
	for _, s := range seen {
		if strings.Contains(s, `"resultType":"input_required"`) {
			out = append(out, s)
		}
	}
	return out
}

// within returns what ch gives within d, or ends the test saying never.
func within(t *testing.T, ch <-chan string, d time.Duration, never string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(d):
		t.Fatal(never)
		return ""
	}
}

// acceptAll answers each of reqs with an accepted elicitation of content.
func acceptAll(reqs mcp.InputRequestMap, content map[string]any) mcp.InputResponseMap {
	out := mcp.InputResponseMap{}
	for k := range reqs {
		out[k] = &mcp.ElicitResult{Action: "accept", Content: content}
	}
	return out
}

// invalidParams reports whether err is a -32602 error saying want.
func invalidParams(err error, want string) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeInvalidParams && strings.Contains(rpc.Message, want)
}

// refused reports whether err is an error saying want.
func refused(err error, want string) bool { return err != nil && strings.Contains(err.Error(), want) }

// neverView is the configuration of a daemon whose default view shows
// srv alone, under its own names (prefix: never).
func neverView(srv config.Server) *config.Config {
	cfg := testConfig(srv)
	cfg.Gateway.Views = []config.View{{Name: config.DefaultViewName, Servers: []string{srv.Name}, Prefix: config.PrefixNever}}
	return cfg
}

// roundsCalls makes the calls of the tests with cs and checks their
// answers: each must carry what the client answered.
func roundsCalls(t *testing.T, cs *mcp.ClientSession, asked *askedCount) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitTools(t, cs, "server-everything's triggers", has("ev__trigger-elicitation-request", "ev__trigger-sampling-request", "mrtr__ask", "mrtrs__ask"))
	for _, c := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"ev__trigger-elicitation-request", map[string]any{}, []string{"User provided the requested information", "Ada"}},
		{"ev__trigger-sampling-request", map[string]any{"prompt": "say hi", "maxTokens": 20}, []string{"switchboard hums", "the-client's-model"}},
		// Asked in a result of the upstream's, answered by the gateway's
		// upstream session through the gateway: roots from its own
		// (empty) root set, the rest from the client.
		{"mrtr__ask", map[string]any{}, []string{`state "tool-round-1"`, `"name":"Ada"`, "switchboard hums", `"roots":[]`}},
		// Asked with requests by the server's SDK: roots too reach the
		// client.
		{"mrtrs__ask", map[string]any{}, []string{`"name":"Ada"`, "switchboard hums", "file:///the/client/own"}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Errorf("calling %s: %v", c.tool, err)
			continue
		}
		for _, w := range c.want {
			if res.IsError || !strings.Contains(textOf(res), w) {
				t.Errorf("%s: got %q, want a result with %q", c.tool, textOf(res), w)
			}
		}
	}

	// prompts/get and resources/read, which a server may ask during too.
	resources, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatalf("listing resources: %v", err)
	}
	if !slices.ContainsFunc(resources.Resources, func(r *mcp.Resource) bool { return r.URI == "mrtr://ask" }) {
		t.Fatalf("resources: %+v, want mrtr's mrtr://ask", resources.Resources)
	}
	for _, server := range []string{"mrtr", "mrtrs"} {
		want := []string{`"name":"Ada"`, "switchboard hums"}
		pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: server + "__ask"})
		if err != nil || len(pr.Messages) != 1 {
			t.Errorf("getting prompt %s__ask: %v %+v", server, err, pr)
		} else if text, _ := pr.Messages[0].Content.(*mcp.TextContent); text == nil || !strings.Contains(text.Text, want[0]) || !strings.Contains(text.Text, want[1]) {
			t.Errorf("prompt %s__ask: got %+v, want the client's answers %q", server, pr.Messages[0].Content, want)
		}
		if server == "mrtrs" {
			// The go-sdk's server (v1.8.0) fails a resources/read whose
			// handler asks for input to a client before 2026-07-28 ("read
			// handler returned nil information") before it can ask with
			// requests: directly too.
			continue
		}
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mrtr://ask"})
		if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, want[0]) || !strings.Contains(rr.Contents[0].Text, want[1]) {
			t.Errorf("reading mrtr://ask: %v %+v, want the client's answers %q", err, rr, want)
		}
	}
	if asked.get("elicitation") < 6 || asked.get("sampling") < 6 {
		t.Errorf("the client was asked for %d elicitations and %d samplings, want 6 of each", asked.get("elicitation"), asked.get("sampling"))
	}
}

// TestInputRoundsAskTheClient: a go-sdk client of protocol 2026-07-28,
// over serve --stdio and over streamable HTTP (a stateless gateway, which
// answers that version there), is asked what shared upstreams on a
// prefixed view ask during its calls — server-everything's elicitation
// and sampling, a go-sdk server's roots, elicitation and sampling — in
// input-required results of the gateway's; its answers reach the
// upstreams, and the history counts the rounds of each call.
func TestInputRoundsAskTheClient(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "streamable HTTP"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			ev, mrtr, mrtrs := roundsServers(t)
			r, tr := startRounds(t, testConfig(ev, mrtr, mrtrs), transport)
			var w exchangeWire
			var asked askedCount
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cs := connectRounds(t, ctx, roundsClient(&asked, nil), tr, &w, "2026-07-28")
			roundsCalls(t, cs, &asked)

			// The client read input-required results of the gateway's.
			rounds := inputRequired(w.get())
			for _, s := range rounds {
				if !strings.Contains(s, `"requestState":"switchboard-input-`) {
					t.Errorf("an input-required result without the gateway's request state: %s", s)
				}
			}
			if len(rounds) < 4 {
				t.Errorf("the client read %d input-required results of tools/call, want one per call at least (4): %q", len(rounds), w.get())
			}
			for _, tool := range []string{"trigger-elicitation-request", "trigger-sampling-request", "ask"} {
				recs := r.waitRecords(t, store.CallFilter{Tool: tool}, func(rs []store.CallRecord) bool { return len(rs) > 0 })
				for _, rec := range recs {
					if rec.Status != "success" || rec.InputRounds < 1 {
						t.Errorf("history of %s/%s: status %q, %d input rounds; want success after 1 or more", rec.Server, rec.Tool, rec.Status, rec.InputRounds)
					}
				}
			}
		})
	}
}

// TestInputRoundsPerClientView: a prefix: never view of one per_client
// server that speaks 2025-11-25 (server-everything) negotiates that
// version with a client that asks 2026-07-28, as the server would, and
// the client is then asked with the server's own requests, as directly —
// not in input-required results of the gateway's.
func TestInputRoundsPerClientView(t *testing.T) {
	t.Parallel()
	r := start(t, neverView(everythingPerClient(t)))
	var asked askedCount
	var w exchangeWire
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := connectRounds(t, ctx, roundsClient(&asked, nil), serveStdio(t, r), &w, "2025-11-25")
	waitTools(t, cs, "server-everything's triggers", has("trigger-elicitation-request"))
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "trigger-elicitation-request", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(textOf(res), "Ada") {
		t.Fatalf("trigger-elicitation-request: %v %+v, want the client's answer", err, res)
	}
	if asked.get("elicitation") != 1 {
		t.Errorf("the client was asked %d times, want once", asked.get("elicitation"))
	}
	for _, s := range inputRequired(w.get()) {
		t.Errorf("the client read an input-required result: %s", s)
	}
	requests := 0
	for _, s := range w.get() {
		if strings.HasPrefix(s, "request elicitation/create") {
			requests++
		}
	}
	if requests != 1 {
		t.Errorf("the client read %d elicitation/create requests, want the server's one: %q", requests, w.get())
	}
}

// askingServer is a go-sdk server (protocol 2025-11-25 with sessions:
// it asks with requests) whose tool "elicit" asks its client for a name
// and tells got what the request came to: the answer, or the error. Its
// tool and prompt "progress" ask the client whether to go on, then
// report progress ("after" the answer's action) under the request's
// token.
func askingServer(got chan<- string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "asking", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "elicit", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Who are you?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"},
			}})
			if err != nil {
				got <- "error: " + err.Error()
				return nil, err
			}
			got <- fmt.Sprintf("%s %v", res.Action, res.Content)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("hello %v", res.Content["name"])}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "progress", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Go on?", RequestedSchema: map[string]any{"type": "object"}})
			if err != nil {
				return nil, err
			}
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Message: "after " + res.Action}); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "elicit"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Who are you?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}},
		}})
		if err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf("hello %v", res.Content["name"])}}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "progress"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Go on?", RequestedSchema: map[string]any{"type": "object"}})
		if err != nil {
			return nil, err
		}
		if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Message: "after " + res.Action}); err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "done"}}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "other", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "other"}}}, nil
		})
	return s
}

// askingHTTP serves askingServer over streamable HTTP until the test
// ends, and returns it as the server "asking" with the channel it tells
// what its requests came to.
func askingHTTP(t *testing.T) (config.Server, chan string) {
	got := make(chan string, 4)
	return httpUpstream("asking", serveHTTP(t, askingServer(got), nil)), got
}

// firstRound calls tool through cs (a client that answers nothing itself)
// and returns the gateway's input-required result.
func firstRound(t *testing.T, cs *mcp.ClientSession, tool string) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("calling %s: %v", tool, err)
	}
	if !res.NeedsInput() || len(res.InputRequests) != 1 || !strings.HasPrefix(res.RequestState, "switchboard-input-") {
		b, _ := json.Marshal(res)
		t.Fatalf("calling %s: got %s, want an input-required result of the gateway's with one input request", tool, b)
	}
	return res
}

// TestInputRoundsRefusals: a request state the gateway did not give, one
// given for another tool or to another client session, one already used,
// and answers that leave a
// question out or answer it with the wrong kind are refused with -32602
// saying what is wrong (and recorded); the round stays, and the right
// answer completes the call. A client that never comes back leaves the
// upstream's request with an error after gateway.input_timeout, and its
// state refused; one whose session ends leaves it with an error at once.
func TestInputRoundsRefusals(t *testing.T) {
	t.Parallel()
	srv, got := askingHTTP(t)
	cfg := testConfig(srv)
	cfg.Gateway.InputTimeout = 2 * time.Second
	r := start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var asked askedCount
	cs := connectRounds(t, ctx, roundsClient(&asked, &mcp.MultiRoundTripOptions{Disabled: true}), serveStdio(t, r), nil, "")
	waitTools(t, cs, "asking__elicit", has("asking__elicit", "asking__other"))

	first := firstRound(t, cs, "asking__elicit")
	var key string
	for k, req := range first.InputRequests {
		key = k
		if p, ok := req.(*mcp.ElicitParams); !ok || p.Message != "Who are you?" {
			t.Fatalf("input request %q: %#v, want the server's elicitation", k, req)
		}
	}
	accept := mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}}
	for _, c := range []struct {
		name, tool, state string
		responses         mcp.InputResponseMap
		want              string
	}{
		{"forged state", "asking__elicit", "switchboard-input-FORGED", accept, "is not one this gateway gave this client session"},
		{"a state not of the gateway's", "asking__elicit", "opaque", accept, `requestState "opaque" is not one this gateway gave`},
		{"answers without a state", "asking__elicit", "", accept, "inputResponses without a requestState is not one this gateway gave"},
		{"another tool", "asking__other", first.RequestState, accept, `was given for tools/call "asking__elicit", not tools/call "asking__other"`},
		{"a question left out", "asking__elicit", first.RequestState, mcp.InputResponseMap{}, fmt.Sprintf("inputResponses lacks %q", key)},
		{"the wrong kind", "asking__elicit", first.RequestState, mcp.InputResponseMap{key: &mcp.ListRootsResult{Roots: []*mcp.Root{}}},
			fmt.Sprintf("inputResponses[%q] is a roots list; the input request %q asked for an elicitation result", key, key)},
	} {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{}, InputResponses: c.responses, RequestState: c.state})
		if !invalidParams(err, c.want) {
			t.Errorf("%s: got %v, want a -32602 error saying %q", c.name, err, c.want)
		}
	}
	// Another client session (a second serve --stdio client of the same
	// gateway) may not resume this one's call.
	other := connectRounds(t, ctx, roundsClient(&askedCount{}, &mcp.MultiRoundTripOptions{Disabled: true}), serveStdio(t, r), nil, "")
	_, err := other.CallTool(ctx, &mcp.CallToolParams{Name: "asking__elicit", Arguments: map[string]any{}, InputResponses: accept, RequestState: first.RequestState})
	if !refused(err, "is not one this gateway gave this client session") {
		t.Errorf("another session resuming the call: %v, want it refused", err)
	}
	other.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "asking__elicit", Arguments: map[string]any{}, InputResponses: accept, RequestState: first.RequestState})
	if err != nil || res.IsError || textOf(res) != "hello Ada" {
		t.Fatalf("the right answer: %v %+v, want hello Ada", err, res)
	}
	if s := <-got; s != "accept map[name:Ada]" {
		t.Errorf("the server's elicitation came to %q, want the client's answer", s)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "asking__elicit", Arguments: map[string]any{}, InputResponses: accept, RequestState: first.RequestState})
	if !refused(err, "is not one this gateway gave this client session, or it was already used") {
		t.Errorf("the state once more: %v, want it refused", err)
	}
	// Every refused resume of elicit is recorded (seven, another
	// session's and the state used once more among them), and the call.
	r.waitRecords(t, store.CallFilter{Tool: "elicit"}, func(rs []store.CallRecord) bool {
		refused, ok := 0, 0
		for _, rec := range rs {
			switch {
			case rec.Status == "error" && rec.ErrorKind == "validation":
				refused++
			case rec.Status == "success" && rec.InputRounds == 1:
				ok++
			}
		}
		return refused == 7 && ok == 1
	})

	// A client that never comes back.
	first = firstRound(t, cs, "asking__elicit")
	if s := within(t, got, 20*time.Second, "the server's elicitation was still pending 20s after the client was asked"); !strings.Contains(s, "did not answer within 2s (gateway.input_timeout)") {
		t.Errorf("the server's elicitation came to %q, want an error naming the time-out", s)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "asking__elicit", Arguments: map[string]any{}, InputResponses: accept, RequestState: first.RequestState})
	if !refused(err, "has expired (gateway.input_timeout)") {
		t.Errorf("an expired state: %v, want it refused", err)
	}
	if n := asked.get("elicitation"); n != 0 {
		t.Errorf("the client's own handler was asked %d times; with multi round-trip off it answers nothing itself", n)
	}

	// A client session that ends while the server waits for its answer:
	// the call is cancelled (as when a client goes away mid-call), and the
	// server's request gets the gateway's error or the cancellation,
	// whichever reaches it first.
	firstRound(t, cs, "asking__elicit")
	cs.Close()
	if s := within(t, got, 20*time.Second, "the server's elicitation was still pending 20s after its client's session ended"); !strings.Contains(s, "the client session ended") && !strings.Contains(s, "context canceled") {
		t.Errorf("the server's elicitation came to %q, want an error saying the client session ended, or the call's cancellation", s)
	}
}

// TestInputRoundsProgress: progress the server reports after a round
// reaches the client under the token of its request that waits then (the
// one sent again with the answers), not the first, which has its answer.
func TestInputRoundsProgress(t *testing.T) {
	t.Parallel()
	srv, _ := askingHTTP(t)
	r := start(t, testConfig(srv))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	progress := make(chan string, 4)
	c := mcp.NewClient(&mcp.Implementation{Name: "progress-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- fmt.Sprintf("%v: %s", req.Params.ProgressToken, req.Params.Message)
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	cs := connectRounds(t, ctx, c, serveStdio(t, r), nil, "")
	waitTools(t, cs, "asking__progress", has("asking__progress"))
	p := &mcp.CallToolParams{Name: "asking__progress", Arguments: map[string]any{}}
	p.SetProgressToken("first")
	first, err := cs.CallTool(ctx, p)
	if err != nil || !first.NeedsInput() || len(first.InputRequests) != 1 {
		t.Fatalf("calling asking__progress: %v %+v, want an input-required result", err, first)
	}
	again := &mcp.CallToolParams{Name: "asking__progress", Arguments: map[string]any{}, InputResponses: acceptAll(first.InputRequests, map[string]any{}), RequestState: first.RequestState}
	again.SetProgressToken("again")
	res, err := cs.CallTool(ctx, again)
	if err != nil || textOf(res) != "done" {
		t.Fatalf("sending asking__progress again: %v %+v, want done", err, res)
	}
	if got := within(t, progress, 10*time.Second, "the server's progress never reached the client"); got != "again: after accept" {
		t.Errorf("progress: got %q, want the server's, under the token of the request sent again", got)
	}
}

// TestInputRoundsStatelessOwner: on a stateless gateway, where a request
// has no lasting session, only the user (the token's) who was given a
// request state may resume the call (or the prompts/get) with it.
func TestInputRoundsStatelessOwner(t *testing.T) {
	t.Parallel()
	srv, got := askingHTTP(t)
	cfg := testConfig(srv)
	cfg.Gateway.Stateless = true
	cfg.Gateway.Tokens = []config.Token{{Name: "a", User: "alice", Secret: "alice-secret"}, {Name: "b", User: "bob", Secret: "bob-secret"}}
	r := start(t, cfg)
	client := func(secret string) *mcp.ClientSession {
		return r.connectClient(t, roundsClient(&askedCount{}, &mcp.MultiRoundTripOptions{Disabled: true}), "/mcp",
			http.Header{"Authorization": {"Bearer " + secret}})
	}
	alice, bob := client("alice-secret"), client("bob-secret")
	if v := alice.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the client negotiated %s, want 2026-07-28", v)
	}
	waitTools(t, alice, "asking__elicit", has("asking__elicit"))
	first := firstRound(t, alice, "asking__elicit")
	responses := acceptAll(first.InputRequests, map[string]any{"name": "Ada"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	again := &mcp.CallToolParams{Name: "asking__elicit", Arguments: map[string]any{}, InputResponses: responses, RequestState: first.RequestState}
	if _, err := bob.CallTool(ctx, again); !refused(err, "is not one this gateway gave this client session") {
		t.Errorf("bob resuming alice's call: %v, want it refused", err)
	}
	res, err := alice.CallTool(ctx, again)
	if err != nil || textOf(res) != "hello Ada" {
		t.Fatalf("alice resuming her call: %v %+v, want hello Ada", err, res)
	}
	if s := <-got; s != "accept map[name:Ada]" {
		t.Errorf("the server's elicitation came to %q, want alice's answer", s)
	}

	// A prompts/get likewise; a forged state is refused there too.
	pr, err := alice.GetPrompt(ctx, &mcp.GetPromptParams{Name: "asking__elicit"})
	if err != nil || !pr.NeedsInput() || len(pr.InputRequests) != 1 || !strings.HasPrefix(pr.RequestState, "switchboard-input-") {
		t.Fatalf("getting prompt asking__elicit: %v %+v, want an input-required result of the gateway's", err, pr)
	}
	promptResponses := acceptAll(pr.InputRequests, map[string]any{"name": "Bo"})
	for _, c := range []struct {
		who   *mcp.ClientSession
		state string
		want  string
	}{
		{bob, pr.RequestState, "is not one this gateway gave this client session"},
		{alice, "switchboard-input-FORGED", "is not one this gateway gave this client session"},
		{alice, first.RequestState, "is not one this gateway gave this client session"}, // used
	} {
		_, err := c.who.GetPrompt(ctx, &mcp.GetPromptParams{Name: "asking__elicit", InputResponses: promptResponses, RequestState: c.state})
		if !invalidParams(err, c.want) {
			t.Errorf("prompts/get with state %q: got %v, want a -32602 error saying %q", c.state, err, c.want)
		}
	}
	pr, err = alice.GetPrompt(ctx, &mcp.GetPromptParams{Name: "asking__elicit", InputResponses: promptResponses, RequestState: pr.RequestState})
	if err != nil || len(pr.Messages) != 1 {
		t.Fatalf("alice resuming her prompt: %v %+v", err, pr)
	}
	if text, _ := pr.Messages[0].Content.(*mcp.TextContent); text == nil || text.Text != "hello Bo" {
		t.Errorf("alice's prompt: got %+v, want hello Bo", pr.Messages[0].Content)
	}
}

// TestInputRoundsLogs: a log message the server sends after a round (a
// stateless go-sdk server on 2026-07-28, which asks in its result and logs
// when asked again) reaches the client, at the level its request asked
// for: over serve --stdio and over stateless streamable HTTP, where it
// goes on the request that waits on the call then.
func TestInputRoundsLogs(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "streamable HTTP"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			s := mcp.NewServer(&mcp.Implementation{Name: "logging", Version: "1"}, nil)
			s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
				func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					if req.Params.InputResponses == nil {
						return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"go": &mcp.ElicitParams{Message: "Go on?", RequestedSchema: map[string]any{"type": "object"}}}, RequestState: "s1"}, nil
					}
					if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "after the round"}); err != nil {
						return nil, err
					}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
				})
			_, tr := startRounds(t, testConfig(httpUpstream("logging", serveHTTP(t, s, &mcp.StreamableHTTPOptions{Stateless: true}))), transport)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			logs := make(chan string, 4)
			c := mcp.NewClient(&mcp.Implementation{Name: "logs-client", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
				},
				LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
					logs <- fmt.Sprint(req.Params.Data)
				},
			})
			cs := connectRounds(t, ctx, c, tr, nil, "")
			waitTools(t, cs, "logging__ask", has("logging__ask"))
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "logging__ask", Arguments: map[string]any{}, Meta: mcp.Meta{mcp.MetaKeyLogLevel: "info"}})
			if err != nil || textOf(res) != "done" {
				t.Fatalf("calling logging__ask: %v %+v, want done", err, res)
			}
			if got := within(t, logs, 10*time.Second, "the server's log message never reached the client"); got != "after the round" {
				t.Errorf("log message: got %q, want the server's", got)
			}
		})
	}
}

// hiddenServer is a go-sdk server with a resource it does not list,
// hidden://ask, whose read asks its client for a name in its result
// (protocol 2026-07-28, with the request state "hidden-round-1") and,
// asked again, answers with the name and the state it was given.
func hiddenServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "hidden", Version: "1"}, nil)
	s.AddResource(&mcp.Resource{URI: "hidden://ask", Name: "ask"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if req.Params.InputResponses == nil {
			return &mcp.ReadResourceResult{RequestState: "hidden-round-1", InputRequests: mcp.InputRequestMap{"form": &mcp.ElicitParams{
				Message: "Who are you?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
			}}}, nil
		}
		var name any
		if res, ok := req.Params.InputResponses["form"].(*mcp.ElicitResult); ok {
			name = res.Content["name"]
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "hidden://ask",
			Text: fmt.Sprintf("hello %v (state %q)", name, req.Params.RequestState)}}}, nil
	})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListResourcesResult); ok && method == "resources/list" {
				out := *lr
				out.Resources = slices.DeleteFunc(slices.Clone(lr.Resources), func(r *mcp.Resource) bool { return r.URI == "hidden://ask" })
				return &out, err
			}
			return res, err
		}
	})
	return s
}

// TestInputRoundsUnlistedResource: a read of a URI a prefix: never view
// does not list goes to its server (readSole), and what the server asks
// during it reaches a client of 2026-07-28 as for a listed resource: in
// the gateway's input-required results with a shared or per_user session
// (whose upstream session answers the server), in the server's own,
// passed through, with per_client.
func TestInputRoundsUnlistedResource(t *testing.T) {
	t.Parallel()
	url := serveHTTP(t, hiddenServer(), &mcp.StreamableHTTPOptions{Stateless: true})
	for _, c := range []struct {
		session config.SessionMode
		state   string // the request state the client is given
	}{
		{config.SessionShared, "switchboard-input-"},
		{config.SessionPerUser, "switchboard-input-"},
		{config.SessionPerClient, "hidden-round-1"},
	} {
		t.Run(string(c.session), func(t *testing.T) {
			t.Parallel()
			srv := httpUpstream("hidden", url)
			srv.Session = c.session
			r := start(t, neverView(srv))
			var asked askedCount
			var w exchangeWire
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs := connectRounds(t, ctx, roundsClient(&asked, nil), serveStdio(t, r), &w, "2026-07-28")
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "hidden://ask"})
			if want := `hello Ada (state "hidden-round-1")`; err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != want {
				t.Fatalf("reading hidden://ask: %v %+v, want %q", err, rr, want)
			}
			if n := asked.get("elicitation"); n != 1 {
				t.Errorf("the client was asked %d times, want once", n)
			}
			rounds := inputRequired(w.get())
			for _, s := range rounds {
				if !strings.HasPrefix(s, "result of resources/read") || !strings.Contains(s, `"requestState":"`+c.state) {
					t.Errorf("an input-required result not of resources/read, or without the request state %q…: %s", c.state, s)
				}
			}
			if len(rounds) != 1 {
				t.Errorf("the client read %d input-required results, want 1: %q", len(rounds), w.get())
			}
		})
	}
}
