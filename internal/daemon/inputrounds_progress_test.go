//lint:file-ignore SA1019 the test's client declares roots and answers sampling and elicitation, deprecated only from protocol 2026-07-28; clients and servers use them today.

package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// This file checks that a client of protocol 2026-07-28, which the
// gateway asks in input-required results (inputrounds.go), gets the
// server's progress for its prompts/get, resources/read,
// completion/complete and tools/call under its own progress token, on
// its request's stream before the answer, as a client gets it directly.

// progressWire records, in the order a client read them, the progress
// notifications and the answers to its prompts/get, resources/read,
// completion/complete and tools/call.
type progressWire struct {
	mu      sync.Mutex
	pending map[string]string // request id -> method
	seen    []string
}

func (w *progressWire) wrote(m jsonrpc.Message) {
	r, ok := m.(*jsonrpc.Request)
	if !ok || !r.IsCall() {
		return
	}
	switch r.Method {
	case "prompts/get", "resources/read", "completion/complete", "tools/call":
		w.mu.Lock()
		if w.pending == nil {
			w.pending = map[string]string{}
		}
		w.pending[fmt.Sprint(r.ID.Raw())] = r.Method
		w.mu.Unlock()
	}
}

func (w *progressWire) read(m jsonrpc.Message) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch r := m.(type) {
	case *jsonrpc.Request:
		if r.Method != "notifications/progress" {
			return
		}
		var p mcp.ProgressNotificationParams
		if err := json.Unmarshal(r.Params, &p); err != nil {
			w.seen = append(w.seen, "progress, undecodable: "+err.Error())
			return
		}
		w.seen = append(w.seen, fmt.Sprintf("progress %v %v/%v %s", p.ProgressToken, p.Progress, p.Total, p.Message))
	case *jsonrpc.Response:
		method, ok := w.pending[fmt.Sprint(r.ID.Raw())]
		if !ok {
			return
		}
		switch {
		case r.Error != nil:
			w.seen = append(w.seen, "error of "+method+": "+r.Error.Error())
		case strings.Contains(string(r.Result), `"input_required"`):
			w.seen = append(w.seen, "input required of "+method)
		default:
			w.seen = append(w.seen, "answer of "+method)
		}
	}
}

// take returns what was read since the last take.
func (w *progressWire) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.seen
	w.seen = nil
	return out
}

// progressRun is what a client read while it made each request: its
// progress notifications and answers in order, by request; and the
// answers' text.
type progressRun struct {
	Version string // the protocol version the client negotiated
	Read    map[string][]string
	Results map[string]string
}

// askForProgress connects a requestAsksClient over tr (on the SDK's
// latest protocol version, 2026-07-28, where the other side speaks it;
// it answers input-required results with its handlers), makes the
// requestasks server's prompts/get, resources/read and
// completion/complete (askRequestAsks), and — when the view has the asking
// server's tool "progress" — a tools/call of it with one: what it read of
// each, and each answer.
func askForProgress(t *testing.T, tr mcp.Transport) progressRun {
	t.Helper()
	var w progressWire
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := requestAsksClient(nil, mcp.ClientOptions{}).Connect(ctx, recordingTransport{Transport: tr, wrote: w.wrote, read: w.read}, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	defer cs.Close()
	run := progressRun{Version: cs.InitializeResult().ProtocolVersion, Read: map[string][]string{}}
	run.Results = askRequestAsks(ctx, t, cs, func(method string) { run.Read[method] = w.take() })
	tool := ""
	for tl, err := range cs.Tools(ctx, nil) {
		if err == nil && strings.HasSuffix(tl.Name, "progress") {
			tool = tl.Name
		}
	}
	if tool == "" {
		return run
	}
	tp := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}
	tp.SetProgressToken("tok-T")
	if res, err := cs.CallTool(ctx, tp); err != nil {
		run.Results["tools/call"] = "error " + err.Error()
	} else {
		run.Results["tools/call"] = textOf(res)
	}
	run.Read["tools/call"] = w.take()
	// The asking server's prompt of the same name, likewise.
	pp := &mcp.GetPromptParams{Name: tool}
	pp.SetProgressToken("tok-Q")
	if res, err := cs.GetPrompt(ctx, pp); err != nil {
		run.Results["prompts/get progress"] = "error " + err.Error()
	} else {
		run.Results["prompts/get progress"] = res.Messages[0].Content.(*mcp.TextContent).Text
	}
	run.Read["prompts/get progress"] = w.take()
	return run
}

// rounds returns the methods whose requests read had an input-required
// result (the client was asked in rounds), and read without those
// results, which a client of an older version does not read: it is asked
// with requests.
func rounds(read map[string][]string) ([]string, map[string][]string) {
	var asked []string
	out := map[string][]string{}
	for m, seen := range read {
		for _, s := range seen {
			if strings.HasPrefix(s, "input required of ") {
				if !slices.Contains(asked, m) {
					asked = append(asked, m)
				}
				continue
			}
			out[m] = append(out[m], s)
		}
	}
	slices.Sort(asked)
	return asked, out
}

// askedInCompletion is the error a server's request during a
// completion/complete of a client of 2026-07-28 comes to: that version
// has no input-required result for a completion, so the gateway refuses
// the request, saying why (TestAskedDuringACompletionOfANewClient), and
// the requestasks server fails the completion with it.
const askedInCompletion = `sent roots/list during a completion/complete of a client on protocol 2026-07-28, which cannot be asked then`

// TestInputRoundsProgressOfRequests: a go-sdk client of protocol
// 2026-07-28 — over serve --stdio and over streamable HTTP to a stateless
// gateway — that the gateway asks in input-required results gets the
// server's progress for its prompts/get and resources/read (the
// requestasks server, over streamable HTTP and stdio, reports progress
// before it asks, and is asked in rounds after), its completion/complete
// and a tools/call (a go-sdk server reporting progress after a round)
// under its own token, on the request's stream before the answer, as a
// client gets it directly: on prefixed views of shared servers and of a
// per_client one (whose request upstream carries the client's token), and
// on prefix: never views of a per_user, a shared (stdio) and a per_client
// server (over serve --stdio those negotiate the server's version with
// the client, and ask with requests, as directly).
func TestInputRoundsProgressOfRequests(t *testing.T) {
	t.Parallel()
	askURL := serveHTTP(t, testserver.RequestAsks(), nil)
	asking, _ := askingHTTP(t)
	servers := func() map[string]config.Server {
		out := map[string]config.Server{}
		for _, up := range []struct {
			name string
			mode config.SessionMode
		}{{"asks-s", config.SessionShared}, {"asks-u", config.SessionPerUser}, {"asks-c", config.SessionPerClient}} {
			s := httpUpstream(up.name, askURL)
			s.Session, s.NoIdentityMeta, s.RequestTimeout = up.mode, true, 30*time.Second
			out[up.name] = s
		}
		s := testserver.Server(t, "stdio-s", "requestasks")
		s.NoIdentityMeta, s.RequestTimeout = true, 30*time.Second
		out["stdio-s"] = s
		out["asking"] = asking
		return out
	}
	views := []config.View{
		{Name: "prefixed", Servers: []string{"asks-s", "asking"}},
		{Name: "prefixed-client", Servers: []string{"asks-c"}},
		{Name: "never-user", Servers: []string{"asks-u"}, Prefix: config.PrefixNever},
		{Name: "never-stdio", Servers: []string{"stdio-s"}, Prefix: config.PrefixNever},
		{Name: "never-client", Servers: []string{"asks-c"}, Prefix: config.PrefixNever},
	}

	// Directly, the client negotiates the server's 2025-11-25, is asked
	// with requests, and reads each progress notification before the
	// answer.
	direct := askForProgress(t, &mcp.StreamableClientTransport{Endpoint: askURL, MaxRetries: -1})
	want := progressRun{
		Version: "2025-11-25",
		Read: map[string][]string{
			"prompts/get":         {"progress tok-P 1/2 progress prompt P", "answer of prompts/get"},
			"resources/read":      {"progress 7 1/2 progress resource", "answer of resources/read"},
			"completion/complete": {"progress tok-C 1/2 progress completion C", "answer of completion/complete"},
		},
		Results: map[string]string{
			"prompts/get":         `prompt P: roots [file:///client] sampled "answer sample prompt P" elicited form prompt P`,
			"resources/read":      `resource: roots [file:///client] sampled "answer sample resource" elicited form resource`,
			"completion/complete": `[completion C: roots [file:///client] sampled "answer sample completion C" elicited form completion C]`,
		},
	}
	if diff := cmp.Diff(want, direct); diff != "" {
		t.Fatalf("directly, what the client read and got (-want +got):\n%s", diff)
	}
	compare := func(how string, v config.View, got progressRun) {
		t.Helper()
		want := progressRun{Version: got.Version, Read: maps.Clone(direct.Read), Results: maps.Clone(direct.Results)}
		wantRounds := []string(nil)
		if got.Version == "2026-07-28" {
			wantRounds = []string{"prompts/get", "resources/read"}
			// What the server asks during a completion cannot reach the
			// client (see askedInCompletion); its progress does.
			want.Read["completion/complete"] = []string{"progress tok-C 1/2 progress completion C", "error of completion/complete"}
			if strings.Contains(got.Results["completion/complete"], askedInCompletion) {
				want.Results["completion/complete"] = got.Results["completion/complete"]
			}
			if seen := got.Read["completion/complete"]; len(seen) == 2 && strings.HasPrefix(seen[1], "error of completion/complete: ") && strings.Contains(seen[1], askedInCompletion) {
				got.Read["completion/complete"] = []string{seen[0], "error of completion/complete"}
			}
		} else if strings.HasPrefix(v.Name, "prefixed") || how != "serve --stdio" {
			t.Errorf("%s, view %s: the client negotiated %s; want 2026-07-28, the case this test is about", how, v.Name, got.Version)
		}
		if v.Name == "prefixed" {
			// The asking server's tool and prompt report progress after a
			// round: it goes to the request sent again.
			wantRounds = append(wantRounds, "prompts/get progress", "tools/call")
			slices.Sort(wantRounds)
			want.Read["tools/call"] = []string{"progress tok-T 1/0 after accept", "answer of tools/call"}
			want.Results["tools/call"] = "done"
			want.Read["prompts/get progress"] = []string{"progress tok-Q 1/0 after accept", "answer of prompts/get"}
			want.Results["prompts/get progress"] = "done"
		}
		asked, read := rounds(got.Read)
		if diff := cmp.Diff(wantRounds, asked); diff != "" {
			t.Errorf("%s, view %s: the requests the client was asked in rounds for (-want +got):\n%s", how, v.Name, diff)
		}
		if diff := cmp.Diff(want, progressRun{Version: got.Version, Read: read, Results: got.Results}); diff != "" {
			t.Errorf("%s, view %s: what the client read and got, directly (-) and through the gateway (+):\n%s", how, v.Name, diff)
		}
	}

	for _, v := range views {
		cfg := testConfig()
		all := servers()
		for _, name := range v.Servers {
			cfg.Servers = append(cfg.Servers, all[name])
		}
		dv := v
		dv.Name = config.DefaultViewName
		cfg.Gateway.Views = []config.View{dv}
		compare("serve --stdio", v, askForProgress(t, startStdio(t, cfg)))
	}

	cfg := testConfig()
	for _, s := range servers() {
		cfg.Servers = append(cfg.Servers, s)
	}
	cfg.Gateway.Views = views
	cfg.Gateway.Stateless = true
	r := start(t, cfg)
	for _, v := range views {
		compare("stateless streamable HTTP", v, askForProgress(t, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp/" + v.Name, MaxRetries: -1}))
	}
}
