//lint:file-ignore SA1019 sampling and roots are deprecated only from protocol 2026-07-28; clients and servers use them today.

package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// This file checks that what a streamable-HTTP server sends its client on
// the event stream of a request — its roots, sampling and elicitation
// requests during a call, a task's status during a task request — reaches
// a client of a prefix: never view on that request's own stream, as
// directly: with fast_path on (the lean paths read the streams) and off
// (the go-sdk's client reads them, and the upstream side's HTTP layer
// notes which stream each message came on), on per_client and per_user
// sessions, for a client that has opened no standalone stream and for two
// calls of one client in flight at once. What a server sends on its
// standalone stream goes to the client's, as directly.

// askServer is a go-sdk server whose tool "ask" (argument key) waits
// until two calls are in (in), then asks its client for its roots, for a
// sampling completion whose text names the key and for a form whose
// message names it, all on the call's stream, and returns what it got:
// "KEY: roots … sampled … elicited …".
func askServer(in *twoOf) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "asks", Version: "1"}, nil)
	type args struct {
		Key string `json:"key"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		if err := in.wait(ctx); err != nil {
			return nil, nil, err
		}
		roots, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("roots/list: %w", err)
		}
		sampled, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "sample " + a.Key}}}})
		if err != nil {
			return nil, nil, fmt.Errorf("sampling/createMessage: %w", err)
		}
		elicited, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "form " + a.Key,
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}}}`)})
		if err != nil {
			return nil, nil, fmt.Errorf("elicitation/create: %w", err)
		}
		var uris []string
		for _, r := range roots.Roots {
			uris = append(uris, r.URI)
		}
		text := ""
		if tc, ok := sampled.Content.(*mcp.TextContent); ok {
			text = tc.Text
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s: roots %v sampled %q elicited %v", a.Key, uris, text, elicited.Content["who"])}}}, nil, nil
	})
	return s
}

// streamOutcome is what one call's client saw on the call's own stream:
// each request the server sent it there (its method, and a sampling
// request's text), and the call's result as text.
type streamOutcome struct {
	Asked  []string
	Result string
}

// answeringAs answers on a call's stream as that call's client: roots
// file:///KEY, a completion "answer KEY" and a form's who KEY, so that the
// server's result says whose answers reached it; each request it answers
// is noted in out, with the text of a sampling request or the message of
// an elicitation.
func answeringAs(key string, out *streamOutcome) func(string, map[string]any) any {
	return func(method string, params map[string]any) any {
		asked := method
		if msgs, _ := params["messages"].([]any); len(msgs) > 0 {
			m, _ := msgs[0].(map[string]any)
			c, _ := m["content"].(map[string]any)
			asked += fmt.Sprintf(" %v", c["text"])
		}
		if msg, ok := params["message"].(string); ok {
			asked += " " + msg
		}
		out.Asked = append(out.Asked, asked)
		switch method {
		case "roots/list":
			return map[string]any{"roots": []any{map[string]any{"uri": "file:///" + key, "name": key}}}
		case "sampling/createMessage":
			return map[string]any{"role": "assistant", "model": "m", "content": map[string]any{"type": "text", "text": "answer " + key}}
		case "elicitation/create":
			return map[string]any{"action": "accept", "content": map[string]any{"who": key}}
		}
		return answerAll(method, params)
	}
}

// twoCalls calls tool with arguments args(key) for keys A and B at once
// on one session of url whose client declares roots and sampling and
// opens no standalone stream, and returns what each call's client saw on
// its own stream.
func twoCalls(t *testing.T, url, tool string, args func(key string) string) map[string]streamOutcome {
	t.Helper()
	s := newCapableSession(t, url, clientCaps)
	s.waitListed(tool)
	return twoRequests(t, s, func(key string) string {
		return `{"jsonrpc":"2.0","id":"` + key + `","method":"tools/call","params":{"name":"` + tool + `","arguments":` + args(key) + `}}`
	})
}

// twoRequests posts the requests body(key), whose id is key, for keys A
// and B at once on s, and returns what each request's client saw on its
// own stream (answering as answeringAs): the server's requests and the
// answer's text (answerText).
func twoRequests(t *testing.T, s *rawSession, body func(key string) string) map[string]streamOutcome {
	t.Helper()
	keys := []string{"A", "B"}
	got := make([]streamOutcome, len(keys))
	var wg sync.WaitGroup
	for i, key := range keys {
		wg.Go(func() {
			res, rerr := answerTo(t, s.exchangeID(body(key), `"`+key+`"`, answeringAs(key, &got[i])), `"`+key+`"`)
			if rerr != nil {
				got[i].Result = fmt.Sprintf("error %v", rerr)
				return
			}
			got[i].Result = answerText(res)
		})
	}
	wg.Wait()
	out := map[string]streamOutcome{}
	for i, key := range keys {
		slices.Sort(got[i].Asked)
		out[key] = got[i]
	}
	return out
}

// TestServerRequestsOnTheirCallsStream: a server's roots, sampling and
// elicitation requests during a call reach the client that made the call
// on that call's own stream — not the standalone stream, which this
// client has not opened, nor the stream of the client's newest call —
// when the client has two calls in flight that each ask, as directly: from a
// go-sdk server (which asks once both calls are in) and from
// server-everything (sampling), through a prefix: never view of a
// per_client server and of a per_user one, with fast_path on and off.
func TestServerRequestsOnTheirCallsStream(t *testing.T) {
	t.Parallel()
	var in twoOf
	askURL := serveHTTP(t, askServer(&in), nil)
	evURL := testpeer.StartEverything(t, "streamableHttp")
	daemon := func(fast bool) *running {
		var servers []config.Server
		var views []config.View
		for _, up := range []struct {
			name, url string
			mode      config.SessionMode
		}{{"asks", askURL, config.SessionPerClient}, {"asks-user", askURL, config.SessionPerUser}, {"ev", evURL, config.SessionPerClient}} {
			s := httpUpstream(up.name, up.url)
			s.Session, s.NoIdentityMeta, s.RequestTimeout = up.mode, true, 30*time.Second
			servers = append(servers, s)
			views = append(views, config.View{Name: up.name, Servers: []string{up.name}, Prefix: config.PrefixNever})
		}
		cfg := testConfig(servers...)
		cfg.Gateway.DisableFastPath = !fast
		cfg.Gateway.Views = views
		return start(t, cfg)
	}
	on, off := daemon(true), daemon(false)
	sides := []struct{ name, base string }{{"directly", ""}, {"fast_path on", on.url}, {"fast_path off", off.url}}

	t.Run("go-sdk server", func(t *testing.T) {
		key := func(k string) string { return `{"key":"` + k + `"}` }
		in.reset()
		direct := twoCalls(t, askURL, "ask", key)
		want := map[string]streamOutcome{
			"A": {Asked: []string{"elicitation/create form A", "roots/list", "sampling/createMessage sample A"}, Result: `A: roots [file:///A] sampled "answer A" elicited A`},
			"B": {Asked: []string{"elicitation/create form B", "roots/list", "sampling/createMessage sample B"}, Result: `B: roots [file:///B] sampled "answer B" elicited B`},
		}
		if diff := cmp.Diff(want, direct); diff != "" {
			t.Fatalf("directly, each call's requests did not come on its own stream (-want +got):\n%s", diff)
		}
		for _, side := range sides[1:] {
			for _, view := range []string{"asks", "asks-user"} {
				in.reset()
				got := twoCalls(t, side.base+"/mcp/"+view, "ask", key)
				if diff := cmp.Diff(direct, got); diff != "" {
					t.Errorf("%s, view %s: what each call's client saw on its stream, directly (-) and through the view (+):\n%s", side.name, view, diff)
				}
			}
		}
	})

	t.Run("server-everything", func(t *testing.T) {
		prompt := func(k string) string { return `{"prompt":"` + k + `","maxTokens":5}` }
		direct := twoCalls(t, evURL, "trigger-sampling-request", prompt)
		for _, k := range []string{"A", "B"} {
			o := direct[k]
			if len(o.Asked) != 1 || !strings.HasSuffix(o.Asked[0], "context: "+k) || !strings.Contains(o.Result, `"text": "answer `+k+`"`) {
				t.Fatalf("directly, call %s saw %+v; want its own sampling request on its stream, and its own answer in its result", k, o)
			}
		}
		for _, side := range sides[1:] {
			got := twoCalls(t, side.base+"/mcp/ev", "trigger-sampling-request", prompt)
			if diff := cmp.Diff(direct, got); diff != "" {
				t.Errorf("%s: what each call's client saw on its stream, directly (-) and through the view (+):\n%s", side.name, diff)
			}
		}
	})
}

// TestTaskStatusOnTheStreamItCameOn: server-everything announces a task's
// status (its stages, its end) on its standalone stream, outside any
// request, also while its client waits on tasks/result; so the client
// reads it there, and its tasks/result stream carries only the result.
// Through a prefix: never view of a per_client server it is the same,
// with fast_path on and off: the status goes with the stream it came on,
// not with the task's open tasks/result.
func TestTaskStatusOnTheStreamItCameOn(t *testing.T) {
	t.Parallel()
	evURL := testpeer.StartEverything(t, "streamableHttp")
	daemon := func(fast bool) *running {
		ev := httpUpstream("ev", evURL)
		ev.Session, ev.NoIdentityMeta, ev.RequestTimeout = config.SessionPerClient, true, 30*time.Second
		cfg := testConfig(ev)
		cfg.Gateway.DisableFastPath = !fast
		cfg.Gateway.Views = []config.View{{Name: "ev", Servers: []string{"ev"}, Prefix: config.PrefixNever}}
		return start(t, cfg)
	}
	on, off := daemon(true), daemon(false)
	type outcome struct {
		OnResult   []string // the tasks/status seen on the tasks/result stream
		Standalone bool     // the task's end was announced on the standalone stream
		Result     bool     // tasks/result gave the report
	}
	run := func(url string) outcome {
		// No roots: server-everything would ask for them at initialize,
		// on the standalone stream, which this client reads but does not
		// answer on.
		s := newCapableSession(t, url, `{"sampling":{},"elicitation":{}}`)
		s.waitListed("simulate-research-query")
		events := standalone(t, s)
		res, rerr := answerTo(t, s.exchangeID(`{"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"name":"simulate-research-query","arguments":{"topic":"streams"},"task":{"ttl":60000}}}`, `"t"`, answerAll), `"t"`)
		task, _ := res["task"].(map[string]any)
		id, _ := task["taskId"].(string)
		if rerr != nil || id == "" {
			t.Fatalf("%s: tools/call as a task: result %v, error %v; want a task", url, res, rerr)
		}
		var o outcome
		msgs := s.exchangeID(`{"jsonrpc":"2.0","id":"r","method":"tasks/result","params":{"taskId":"`+id+`"}}`, `"r"`, answerAll)
		for _, m := range msgs {
			if p, _ := m["params"].(map[string]any); m["method"] == "notifications/tasks/status" {
				o.OnResult = append(o.OnResult, fmt.Sprint(p["status"]))
			}
		}
		if res, rerr := answerTo(t, msgs, `"r"`); rerr == nil {
			b, _ := json.Marshal(res)
			o.Result = strings.Contains(string(b), "Research Report")
		}
		deadline := time.After(20 * time.Second)
		for !o.Standalone {
			select {
			case m, ok := <-events:
				if !ok {
					t.Fatalf("%s: the standalone stream ended before the task's end was announced", url)
				}
				if p, _ := m["params"].(map[string]any); m["method"] == "notifications/tasks/status" && p["taskId"] == id && p["status"] == "completed" {
					o.Standalone = true
				}
			case <-deadline:
				t.Fatalf("%s: the task's end was not announced on the standalone stream within 20s", url)
			}
		}
		return o
	}
	direct := run(evURL)
	if want := (outcome{Standalone: true, Result: true}); !cmp.Equal(direct, want) {
		t.Fatalf("directly: %+v; want the statuses on the standalone stream alone, and the report", direct)
	}
	for _, side := range []struct{ name, base string }{{"fast_path on", on.url}, {"fast_path off", off.url}} {
		if got := run(side.base + "/mcp/ev"); !cmp.Equal(direct, got) {
			t.Errorf("%s: %+v; want as directly, %+v", side.name, got, direct)
		}
	}
}

// TestShutdownWhileAClientOwesAnAnswer: a client that has its standalone
// stream open but never answers what it is asked there (server-everything
// asks its client's roots right after initialize, on its standalone
// stream: through a per_client view, on the client's) does not hold the
// daemon's shutdown: the request it owes ends with the gateway.
func TestShutdownWhileAClientOwesAnAnswer(t *testing.T) {
	t.Parallel()
	ev := httpUpstream("ev", testpeer.StartEverything(t, "streamableHttp"))
	ev.Session, ev.NoIdentityMeta = config.SessionPerClient, true
	cfg := testConfig(ev)
	cfg.Gateway.Views = []config.View{{Name: "ev", Servers: []string{"ev"}, Prefix: config.PrefixNever}}
	r := start(t, cfg)
	s := newCapableSession(t, r.url+"/mcp/ev", clientCaps)
	events := standalone(t, s)
	s.waitListed("echo") // opens the client's own upstream session
	deadline := time.After(20 * time.Second)
	for asked := false; !asked; {
		select {
		case m, ok := <-events:
			if !ok {
				t.Fatal("the standalone stream ended before the server asked for roots")
			}
			asked = m["method"] == "roots/list"
		case <-deadline:
			t.Fatal("the server's roots request did not reach the client's standalone stream within 20s")
		}
	}
	began := time.Now()
	r.stop(t) // fails the test if the daemon is not down within 30s
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the daemon took %v to shut down with a request its client had not answered", took)
	}
}

// otherAsker is a go-sdk server whose tool "poke" asks every other
// session the server has — through a gateway, its shared session — for
// its roots and a sampling completion, outside any request (as
// server-everything asks for roots at a session's initialize), while the
// call waits, and returns what each session gave: "roots [URI…] sampled
// TEXT", "refused" for an error.
func otherAsker() *mcp.Server {
	var mu sync.Mutex
	var sessions []*mcp.ServerSession
	s := mcp.NewServer(&mcp.Implementation{Name: "pokes", Version: "1"}, &mcp.ServerOptions{
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			mu.Lock()
			defer mu.Unlock()
			sessions = append(sessions, req.Session)
		},
	})
	mcp.AddTool(s, &mcp.Tool{Name: "poke"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		others := slices.DeleteFunc(slices.Clone(sessions), func(ss *mcp.ServerSession) bool { return ss == req.Session })
		mu.Unlock()
		// Not with the call's context, whose values would tie the
		// request to the call: this session's, not the other's.
		octx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()
		var out []string
		for _, o := range others {
			roots, sampled := "refused", "refused"
			if r, err := o.ListRoots(octx, nil); err == nil {
				var uris []string
				for _, root := range r.Roots {
					uris = append(uris, root.URI)
				}
				roots = fmt.Sprint(uris)
			}
			if m, err := o.CreateMessage(octx, &mcp.CreateMessageParams{MaxTokens: 5,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "sample outside"}}}}); err == nil {
				if tc, ok := m.Content.(*mcp.TextContent); ok {
					sampled = fmt.Sprintf("%q", tc.Text)
				}
			}
			out = append(out, "roots "+roots+" sampled "+sampled)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(out, "; ")}}}, nil, nil
	})
	return s
}

// TestSharedSessionRequestsStayOffOwnedCalls: what a server asks its
// client outside any request on the gateway's shared session (its roots
// at initialize, say) does not reach a client whose call runs on that
// client's own upstream session (per_client, per_user) — that session's
// server never saw the client there; directly, what a server asks
// another of its sessions never comes on this client's streams. The
// shared session belongs to no one client, so with no call made on it
// the gateway answers itself, as outside any call: an empty root list,
// and no sampling. Over streamable HTTP (the request came on the shared
// session's standalone stream), with fast_path on and off.
// (server-everything asks the shared session for its roots 350 ms after
// its initialize; a per_client client's call running then got it, and
// TestServerRequestsOnTheirCallsStream failed now and then.)
func TestSharedSessionRequestsStayOffOwnedCalls(t *testing.T) {
	t.Parallel()
	for _, fast := range []bool{true, false} {
		var servers []config.Server
		var views []config.View
		for _, mode := range []config.SessionMode{config.SessionPerClient, config.SessionPerUser} {
			name := "pokes-" + string(mode)
			s := httpUpstream(name, serveHTTP(t, otherAsker(), nil))
			s.Session, s.NoIdentityMeta, s.RequestTimeout = mode, true, 30*time.Second
			servers = append(servers, s)
			views = append(views, config.View{Name: name, Servers: []string{name}, Prefix: config.PrefixNever})
		}
		cfg := testConfig(servers...)
		cfg.Gateway.DisableFastPath = !fast
		cfg.Gateway.Views = views
		r := start(t, cfg)
		for _, view := range views {
			s := newCapableSession(t, r.url+"/mcp/"+view.Name, clientCaps)
			s.waitListed("poke")
			var got streamOutcome
			res, rerr := answerTo(t, s.exchangeID(`{"jsonrpc":"2.0","id":"A","method":"tools/call","params":{"name":"poke","arguments":{}}}`, `"A"`, answeringAs("A", &got)), `"A"`)
			if rerr != nil {
				t.Fatalf("fast_path %v, view %s: tools/call poke: error %v", fast, view.Name, rerr)
			}
			content, _ := res["content"].([]any)
			for _, c := range content {
				m, _ := c.(map[string]any)
				got.Result += fmt.Sprint(m["text"])
			}
			want := streamOutcome{Result: "roots [] sampled refused"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fast_path %v, view %s: what the calling client saw on its call's stream, and what the shared session was given (-want +got):\n%s", fast, view.Name, diff)
			}
		}
	}
}
