package daemon

//lint:file-ignore SA1019 elicitation and sampling are deprecated only from protocol 2026-07-28; clients and servers use them today.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestElicitationRefusedAnswerIsInvalidParams: the shared and per_user
// sessions keep the go-sdk's check of an accepted form's content against
// the requested schema, and content the schema refuses reaches the
// server as a JSON-RPC error with code -32602 (invalid params) and the
// reason, as a client that checks it (the go-sdk's) answers directly —
// not as an error with code 0 (or -32603). server-everything's
// trigger-elicitation-request requires "name"; the TypeScript SDK's
// client, which leaves the content to its handler, accepts without it
// (directly, server-everything takes it as given).
// The server's tool result shows the error it got ("MCP error CODE: ").
// On both call paths (fast_path on and off), from a stdio server (the
// upstream side's SDK client answers it) and a streamable-HTTP one (with
// fast_path on, the upstream side's own call path).
func TestElicitationRefusedAnswerIsInvalidParams(t *testing.T) {
	t.Parallel()
	url := sharedEverything(t)
	var servers []config.Server
	var views []config.View
	stdio := everythingPerClient(t)
	stdio.Name, stdio.Session, stdio.NoIdentityMeta = "evs", config.SessionShared, true
	servers = append(servers, stdio)
	for _, mode := range []config.SessionMode{config.SessionShared, config.SessionPerUser} {
		s := httpUpstream("evh-"+string(mode), url)
		s.Session, s.NoIdentityMeta, s.RequestTimeout = mode, true, 30*time.Second
		servers = append(servers, s)
	}
	for _, s := range servers {
		views = append(views, config.View{Name: s.Name, Servers: []string{s.Name}, Prefix: config.PrefixNever})
	}
	lean := testConfig(servers...)
	lean.Gateway.Views = views
	sdkPath := testConfig(servers...)
	sdkPath.Gateway.Views = views
	sdkPath.Gateway.DisableFastPath = true
	type target struct{ name, url string }
	var targets []target
	for _, d := range []struct {
		path string
		cfg  *config.Config
	}{{"lean path", lean}, {"SDK path", sdkPath}} {
		r := start(t, d.cfg)
		waitReady(t, r)
		for _, v := range views {
			targets = append(targets, target{d.path + ", " + v.Name, r.url + "/mcp/" + v.Name})
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	texts := make([]string, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, tg := range targets {
		wg.Go(func() {
			lines, err := testpeer.RunTSClient(t, ctx, testpeer.TSClientInput{
				Target:      testpeer.TSTarget{Transport: "http", URL: tg.url},
				Elicitation: &testpeer.TSElicitation{Action: "accept", Content: map[string]any{"check": true}},
				Steps: []testpeer.TSStep{
					{"op": "list_tools", "want": []string{"trigger-elicitation-request"}},
					{"op": "call", "name": "trigger-elicitation-request"},
				},
			})
			switch {
			case err != nil:
				errs[i] = err
			case len(lines) != 4:
				errs[i] = fmt.Errorf("got %d lines, want 4: %v", len(lines), lines)
			case !lines[2].OK():
				errs[i] = fmt.Errorf("calling trigger-elicitation-request: %v", lines[2].Err())
			default:
				content, _ := lines[2]["content"].([]any)
				for _, c := range content {
					m, _ := c.(map[string]any)
					texts[i] += fmt.Sprint(m["text"])
				}
			}
		})
	}
	wg.Wait()
	for i, tg := range targets {
		if errs[i] != nil {
			t.Errorf("%s: %v", tg.name, errs[i])
			continue
		}
		// The server's words for the error it got: "MCP error CODE: MESSAGE".
		const want = "MCP error -32602: elicitation result content does not match requested schema"
		if !strings.Contains(texts[i], want) || !strings.Contains(texts[i], "name") {
			t.Errorf("%s: the server's result says %q; want the error it got to be %q…, naming the missing field", tg.name, texts[i], want)
		}
	}
}

// errorTeller is a go-sdk server whose tool "ask" sends its client the
// request its argument names (elicit, sample) and answers with the
// JSON-RPC error it got for it: "CODE MESSAGE DATA".
func errorTeller() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "teller", Version: "1"}, nil)
	type args struct {
		What string `json:"what"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		var err error
		switch a.What {
		case "elicit":
			_, err = req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "who?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}}}`)})
		case "sample":
			_, err = req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
		}
		got := "no error"
		if we := (*jsonrpc.Error)(nil); errors.As(err, &we) {
			got = fmt.Sprintf("%d %s %s", we.Code, we.Message, we.Data)
		} else if err != nil {
			got = "not a JSON-RPC error: " + err.Error()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: got}}}, nil, nil
	})
	return s
}

// TestServerRequestErrorsKeepTheirCode: what a server gets for its
// elicitation, sampling or roots request that a client of a shared or
// per_user session did not answer with a result is a JSON-RPC error with
// a code, on both call paths (fast_path on: the upstream side's own call
// path; off: its SDK client): the client's own error as directly — its
// code, message and data, not the SDK's "calling …" wrapping of it —,
// and -32602 for an elicitation whose client declared none (as the
// go-sdk's client answers), where the go-sdk's server got code 0.
func TestServerRequestErrorsKeepTheirCode(t *testing.T) {
	t.Parallel()
	url := serveHTTP(t, errorTeller(), nil)
	refusing := &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, &jsonrpc.Error{Code: -32042, Message: "no form today", Data: json.RawMessage(`{"why":"elicit"}`)}
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, &jsonrpc.Error{Code: -1, Message: "no model today", Data: json.RawMessage(`{"why":"sample"}`)}
		},
	}
	asked := func(t *testing.T, url string, opts *mcp.ClientOptions, what string) string {
		t.Helper()
		cs := connectHTTP(t, url, opts)
		waitTools(t, cs, "ask", has("ask"))
		return textOf(call(t, cs, "ask", map[string]any{"what": what}))
	}
	want := map[string]string{
		"elicit": asked(t, url, refusing, "elicit"),
		"sample": asked(t, url, refusing, "sample"),
	}
	for what, w := range map[string]string{"elicit": `-32042 no form today {"why":"elicit"}`, "sample": `-1 no model today {"why":"sample"}`} {
		if want[what] != w {
			t.Fatalf("directly, the server got %q for %s; want %q (the test cannot tell)", want[what], what, w)
		}
	}
	for _, fast := range []bool{true, false} {
		var servers []config.Server
		var views []config.View
		for _, mode := range []config.SessionMode{config.SessionShared, config.SessionPerUser} {
			s := httpUpstream("teller-"+string(mode), url)
			s.Session, s.NoIdentityMeta, s.RequestTimeout = mode, true, 30*time.Second
			servers = append(servers, s)
			views = append(views, config.View{Name: s.Name, Servers: []string{s.Name}, Prefix: config.PrefixNever})
		}
		cfg := testConfig(servers...)
		cfg.Gateway.DisableFastPath = !fast
		cfg.Gateway.Views = views
		r := start(t, cfg)
		for _, v := range views {
			at := fmt.Sprintf("fast_path %v, view %s", fast, v.Name)
			for what, w := range want {
				if got := asked(t, r.url+"/mcp/"+v.Name, refusing, what); got != w {
					t.Errorf("%s: the server got %q for %s; want %q, as directly", at, got, what, w)
				}
			}
			const undeclared = "-32602 server " // and noClientFor's words
			if got := asked(t, r.url+"/mcp/"+v.Name, &mcp.ClientOptions{}, "elicit"); !strings.HasPrefix(got, undeclared) || !strings.Contains(got, "did not declare") {
				t.Errorf("%s: for an elicitation of a client that declared none the server got %q; want %q… saying the client did not declare it", at, got, undeclared)
			}
		}
	}
}
