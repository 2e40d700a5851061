//lint:file-ignore SA1019 the test asks for roots, sampling and elicitation and logs, deprecated only from protocol 2026-07-28; clients and servers use them today.

package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// This file checks that what a streamable-HTTP server sends its client
// while it answers a prompts/get, a resources/read or a
// completion/complete — its roots, sampling and elicitation requests, a
// log message, progress under the client's token — reaches a client of
// any view on that request's own stream, before its answer, as directly:
// prefixed or not, a view of one server or of several, for shared,
// per_client and per_user sessions, with fast_path on and off, from a
// client that has opened no standalone stream (what went there would be
// lost: the server's request would fail, the log message not arrive).

// askingRequests is a go-sdk server whose prompt "ask" (argument key),
// resource ask://res and completion of the prompt's argument each, while
// they work, log "log WHAT", report progress "progress WHAT" when the
// request has a token, and ask their client for its roots, a sampling
// completion naming WHAT and a form naming WHAT; their answer says what
// they got ("WHAT: roots … sampled … elicited …"). WHAT names the request
// and its key.
func askingRequests() *mcp.Server {
	ask := func(ctx context.Context, ss *mcp.ServerSession, token any, what string) (string, error) {
		if err := ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "asks", Data: "log " + what}); err != nil {
			return "", fmt.Errorf("log: %w", err)
		}
		if token != nil {
			if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1, Total: 2, Message: "progress " + what}); err != nil {
				return "", fmt.Errorf("progress: %w", err)
			}
		}
		roots, err := ss.ListRoots(ctx, nil)
		if err != nil {
			return "", fmt.Errorf("roots/list: %w", err)
		}
		sampled, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "sample " + what}}}})
		if err != nil {
			return "", fmt.Errorf("sampling/createMessage: %w", err)
		}
		elicited, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: "form " + what,
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}}}`)})
		if err != nil {
			return "", fmt.Errorf("elicitation/create: %w", err)
		}
		var uris []string
		for _, r := range roots.Roots {
			uris = append(uris, r.URI)
		}
		text := ""
		if tc, ok := sampled.Content.(*mcp.TextContent); ok {
			text = tc.Text
		}
		return fmt.Sprintf("%s: roots %v sampled %q elicited %v", what, uris, text, elicited.Content["who"]), nil
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "asks", Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			got, err := ask(ctx, req.Session, req.Params.Meta["progressToken"], "completion "+req.Params.Argument.Value)
			if err != nil {
				return nil, err
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{got}}}, nil
		},
	})
	s.AddPrompt(&mcp.Prompt{Name: "ask", Arguments: []*mcp.PromptArgument{{Name: "key"}}}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		got, err := ask(ctx, req.Session, req.Params.GetProgressToken(), "prompt "+req.Params.Arguments["key"])
		if err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: got}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "ask://res", Name: "res"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		got, err := ask(ctx, req.Session, req.Params.GetProgressToken(), "resource")
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "ask://res", Text: got}}}, nil
	})
	return s
}

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
	res, rpcErr := answerTo(t, msgs, `"q"`)
	switch {
	case rpcErr != nil:
		out.Result = fmt.Sprintf("error %v", rpcErr)
	case res["messages"] != nil:
		for _, pm := range res["messages"].([]any) {
			c, _ := pm.(map[string]any)["content"].(map[string]any)
			out.Result += fmt.Sprint(c["text"])
		}
	case res["contents"] != nil:
		for _, rc := range res["contents"].([]any) {
			out.Result += fmt.Sprint(rc.(map[string]any)["text"])
		}
	case res["completion"] != nil:
		out.Result = fmt.Sprint(res["completion"].(map[string]any)["values"])
	}
	out.Asked = got.Asked
	for _, l := range [][]string{out.Asked, out.Logs, out.Progress} {
		slices.Sort(l)
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
// of askingRequests' entries as the view names them, each with a
// progress token: what came on each request's stream, by method.
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
// shared server, a prefixed view, a view of several servers — with
// fast_path on and off, as it does directly; the client has no
// standalone stream open.
func TestServerRequestsOnTheirRequestsStream(t *testing.T) {
	t.Parallel()
	askURL := serveHTTP(t, askingRequests(), nil)
	other := mcp.NewServer(&mcp.Implementation{Name: "other", Version: "1"}, nil)
	other.AddTool(&mcp.Tool{Name: "hi", InputSchema: map[string]any{"type": "object"}}, emptyTool)
	otherURL := serveHTTP(t, other, nil)
	views := []config.View{
		{Name: "never-client", Servers: []string{"asks-c"}, Prefix: config.PrefixNever},
		{Name: "never-user", Servers: []string{"asks-u"}, Prefix: config.PrefixNever},
		{Name: "never-shared", Servers: []string{"asks-s"}, Prefix: config.PrefixNever},
		{Name: "prefixed-client", Servers: []string{"asks-c"}},
		{Name: "several", Servers: []string{"asks-u", "other"}},
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
	for _, fast := range []bool{true, false} {
		r := daemon(fast)
		for _, v := range views {
			got := askAll(t, r.url+"/mcp/"+v.Name)
			if diff := cmp.Diff(direct, got); diff != "" {
				t.Errorf("fast_path %v, view %s: what came on each request's stream, directly (-) and through the view (+):\n%s", fast, v.Name, diff)
			}
		}
	}
}
