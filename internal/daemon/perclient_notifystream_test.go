package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// This file checks that what a streamable-HTTP server tells its client on
// the event stream of a request — a list change, a resource update, an
// elicitation's completion — reaches a client of a prefix: never view on
// that request's own stream, as directly, not on its standalone stream:
// during a tools/call, a prompts/get, a resources/read and a
// completion/complete, per_client and per_user, fast_path on and off. What the server
// tells it on its standalone stream still goes to the client's.
// Neither server-everything nor the TypeScript SDK's examples send any of
// these on a request's stream (they send them with no related request),
// so the server here is a go-sdk one.

// notifyAsKey is the context key of the notification a progress
// notification of notifyingServer's is sent as.
type notifyAsKey struct{}

// notifyingServer is a go-sdk server whose tool "notify" (argument key),
// prompt "notify" (argument key), resource note://notify (key "R") and
// completion (key: the argument's value) each tell the client, on the request's own stream (with the request's
// context), that its tools changed, that note://KEY was updated and
// that elicitation KEY is complete; and then, on the standalone stream
// (with no request's context), that elicitation standalone-KEY is
// complete. The go-sdk's ServerSession sends list changes and resource
// updates only to every session at once, on the standalone stream, so
// the handlers send a progress notification that a sending middleware
// turns into the one they name: what the SDK then writes goes where a
// notification sent with that context goes.
func notifyingServer() *mcp.Server {
	var notify func(ctx context.Context, ss *mcp.ServerSession, key string) error
	s := mcp.NewServer(&mcp.Implementation{Name: "notifies", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true},
			Prompts: &mcp.PromptCapabilities{}, Resources: &mcp.ResourceCapabilities{Subscribe: true}, Completions: &mcp.CompletionCapabilities{}},
		CompletionHandler: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			key := req.Params.Argument.Value
			if err := notify(ctx, req.Session, key); err != nil {
				return nil, err
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"notified " + key}}}, nil
		},
	})
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if n, ok := ctx.Value(notifyAsKey{}).(struct {
				method string
				params mcp.Params
			}); ok && method == "notifications/progress" {
				return next(ctx, n.method, &mcp.ServerRequest[mcp.Params]{Session: req.GetSession().(*mcp.ServerSession), Params: n.params})
			}
			return next(ctx, method, req)
		}
	})
	notify = func(ctx context.Context, ss *mcp.ServerSession, key string) error {
		as := func(method string, params mcp.Params) error {
			return ss.NotifyProgress(context.WithValue(ctx, notifyAsKey{}, struct {
				method string
				params mcp.Params
			}{method, params}), &mcp.ProgressNotificationParams{})
		}
		if err := as("notifications/tools/list_changed", &mcp.ToolListChangedParams{}); err != nil {
			return err
		}
		if err := as("notifications/resources/updated", &mcp.ResourceUpdatedNotificationParams{URI: "note://" + key}); err != nil {
			return err
		}
		if err := ss.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: key}); err != nil {
			return err
		}
		// Outside the request: on the standalone stream (lost, and an
		// error, when the client has none open).
		_ = ss.NotifyElicitationComplete(context.Background(), &mcp.ElicitationCompleteParams{ElicitationID: "standalone-" + key})
		return nil
	}
	type args struct {
		Key string `json:"key"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "notify"}, func(ctx context.Context, req *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		if err := notify(ctx, req.Session, a.Key); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "notified " + a.Key}}}, nil, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "notify", Arguments: []*mcp.PromptArgument{{Name: "key"}}}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		key := req.Params.Arguments["key"]
		if err := notify(ctx, req.Session, key); err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "notified " + key}}}}, nil
	})
	s.AddResource(&mcp.Resource{Name: "notify", URI: "note://notify"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if err := notify(ctx, req.Session, "R"); err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "notified R"}}}, nil
	})
	return s
}

// notifyMethods are the methods of notifyRequests, by key.
var notifyMethods = map[string]string{"A": "tools/call", "P": "prompts/get", "R": "resources/read", "C": "completion/complete"}

// notifyRequests are the requests of notifyingServer that notify, by
// the key each notifies with.
var notifyRequests = map[string]string{
	"A": `{"jsonrpc":"2.0","id":"n-A","method":"tools/call","params":{"name":"notify","arguments":{"key":"A"}}}`,
	"P": `{"jsonrpc":"2.0","id":"n-P","method":"prompts/get","params":{"name":"notify","arguments":{"key":"P"}}}`,
	"R": `{"jsonrpc":"2.0","id":"n-R","method":"resources/read","params":{"uri":"note://notify"}}`,
	"C": `{"jsonrpc":"2.0","id":"n-C","method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"notify"},"argument":{"name":"key","value":"C"}}}`,
}

// onRequestStream posts the request of key on s and returns the
// notifications read on its own stream before its answer ("method
// params", "-" for none), and the answer's text (or error).
func onRequestStream(t *testing.T, s *rawSession, key string) (notes []string, answer string) {
	t.Helper()
	msgs := s.exchangeID(notifyRequests[key], `"n-`+key+`"`, answerAll)
	for _, m := range msgs {
		method, _ := m["method"].(string)
		if _, call := m["id"]; call || method == "" {
			continue
		}
		params := "-"
		if p, ok := m["params"]; ok {
			params = fmt.Sprint(p)
		}
		notes = append(notes, method+" "+params)
	}
	res, rerr := answerTo(t, msgs, `"n-`+key+`"`)
	b, _ := json.Marshal(res)
	if rerr != nil || !strings.Contains(string(b), `"notified `+key+`"`) || strings.Contains(string(b), `"isError":true`) {
		return notes, fmt.Sprintf("result %s, error %v", b, rerr)
	}
	return notes, "notified " + key
}

// TestNotificationsOnTheirRequestsStream: a list change, a resource
// update and an elicitation's completion that a server sends on the
// stream of a client's tools/call, prompts/get, resources/read or
// completion/complete reach the client on that request's stream, before
// its answer, through a prefix: never view of a per_client server, as
// directly — for a client
// that has no standalone stream open (which would lose them if they went
// there) and one that has (which gets there only what the server sent
// there) — with fast_path on and off; and through one of a per_user
// server. Through one of a shared server, the request's client gets on
// the request's stream the elicitation's completion, which is its alone.
func TestNotificationsOnTheirRequestsStream(t *testing.T) {
	t.Parallel()
	url := serveHTTP(t, notifyingServer(), nil)
	servers := []neverServer{{"notes", "notes", url}, {"notes-user", "notes-user", url}, {"notes-shared", "notes-shared", url}}
	modes := map[string]config.SessionMode{"notes-user": config.SessionPerUser, "notes-shared": config.SessionShared}
	on, off := startNeverViewsAs(t, true, modes, servers...), startNeverViewsAs(t, false, modes, servers...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	waitServersUp(ctx, t, servers, on, off)

	type outcome struct {
		Notes  []string
		Answer string
	}
	run := func(t *testing.T, url, key string, withGET bool) outcome {
		t.Helper()
		s := newCapableSession(t, url, clientCaps)
		var events <-chan map[string]any
		if withGET {
			events = standalone(t, s)
		}
		s.waitListed("notify") // opens the client's own upstream session
		readAll(t, s.post(`{"jsonrpc":"2.0","id":"lp","method":"prompts/list","params":{}}`, nil))
		readAll(t, s.post(`{"jsonrpc":"2.0","id":"lr","method":"resources/list","params":{}}`, nil))
		notes, answer := onRequestStream(t, s, key)
		if !withGET {
			return outcome{notes, answer}
		}
		// What came on the standalone stream up to what the server sent
		// there: nothing of what it sent on the request's.
		deadline := time.After(20 * time.Second)
		for {
			select {
			case m, ok := <-events:
				if !ok {
					t.Fatalf("%s: the standalone stream ended before the server's word on it", url)
				}
				p, _ := m["params"].(map[string]any)
				if m["method"] == "notifications/elicitation/complete" && p["elicitationId"] == "standalone-"+key {
					return outcome{notes, answer}
				}
				if method, _ := m["method"].(string); method != "roots/list" && method != "notifications/message" {
					notes = append(notes, "GET "+method+" "+fmt.Sprint(p))
				}
			case <-deadline:
				t.Fatalf("%s: the server's word on its standalone stream did not reach the client's within 20s (saw %v)", url, notes)
			}
		}
	}
	for _, withGET := range []bool{false, true} {
		for _, key := range []string{"A", "P", "R", "C"} {
			t.Run(fmt.Sprintf("%s, standalone stream open %v", notifyMethods[key], withGET), func(t *testing.T) {
				direct := run(t, url, key, withGET)
				want := outcome{Notes: []string{"notifications/tools/list_changed map[]",
					"notifications/resources/updated map[uri:note://" + key + "]",
					"notifications/elicitation/complete map[elicitationId:" + key + "]"}, Answer: "notified " + key}
				if diff := cmp.Diff(want, direct); diff != "" {
					t.Fatalf("directly, the request's stream did not carry what the server sent on it (-want +got):\n%s", diff)
				}
				views := []string{"notes", "notes-user"}
				for _, side := range []struct {
					name string
					r    *running
				}{{"fast_path on", on}, {"fast_path off", off}} {
					for _, view := range views {
						got := run(t, side.r.url+"/mcp/"+view, key, withGET)
						if diff := cmp.Diff(direct, got); diff != "" {
							t.Errorf("%s, view %s: what the client read, directly (-) and through the view (+):\n%s", side.name, view, diff)
						}
					}
				}
			})
		}
	}

	// A shared session's list change reloads the catalog, whose own
	// change (if the view's lists changed: here they did not) every
	// client hears on its standalone stream, and its resource update goes
	// to the clients subscribed to the resource there; but an
	// elicitation's completion that no refused call waits for, which the
	// server sent on a request's stream, belongs to that request's client
	// and reaches it there.
	for _, key := range []string{"A", "P", "R", "C"} {
		for _, side := range []struct {
			name string
			r    *running
		}{{"fast_path on", on}, {"fast_path off", off}} {
			got := run(t, side.r.url+"/mcp/notes-shared", key, false)
			want := outcome{Notes: []string{"notifications/elicitation/complete map[elicitationId:" + key + "]"}, Answer: "notified " + key}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s, a shared session, %s: what the client read on the request's stream (-want +got):\n%s", side.name, notifyMethods[key], diff)
			}
		}
	}
}

// TestStatelessCompletionOnItsCallsStream: in stateless mode a client has
// no session and no standalone stream; an elicitation's completion the
// server sends on the stream of the client's call reaches it there, as
// directly, on the lean path as through the SDK.
func TestStatelessCompletionOnItsCallsStream(t *testing.T) {
	t.Parallel()
	url := serveHTTP(t, notifyingServer(), nil)
	for _, fast := range []bool{true, false} {
		cfg := testConfig(httpUpstream("notes", url))
		cfg.Gateway.Stateless, cfg.Gateway.DisableFastPath = true, !fast
		cfg.Gateway.Views = []config.View{{Name: "notes", Servers: []string{"notes"}, Prefix: config.PrefixNever}}
		r := start(t, cfg)
		s := &rawSession{t: t, url: r.url + "/mcp/notes"}
		s.waitListed("notify")
		notes, answer := onRequestStream(t, s, "A")
		if want := []string{"notifications/elicitation/complete map[elicitationId:A]"}; !cmp.Equal(notes, want) || answer != "notified A" {
			t.Errorf("fast_path %v: the call's stream carried %q and the answer %q; want %q and %q", fast, notes, answer, want, "notified A")
		}
	}
}
