//lint:file-ignore SA1019 the test's server asks for roots, sampling and elicitation, deprecated only from protocol 2026-07-28; servers use them today.

package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// completionAsker is a go-sdk server on protocol 2025-11-25 whose prompt
// "ask" has an argument "key" whose completion asks its client for its
// roots, a sampling and an elicitation, each whether or not the one
// before failed, and completes with what each came to: "METHOD: ok", or
// "METHOD: CODE MESSAGE" for a JSON-RPC error.
func completionAsker() *mcp.Server {
	outcome := func(method string, err error) string {
		var we *jsonrpc.Error
		switch {
		case err == nil:
			return method + ": ok"
		case errors.As(err, &we):
			return fmt.Sprintf("%s: %d %s", method, we.Code, we.Message)
		}
		return method + ": not a JSON-RPC error: " + err.Error()
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "completion-asker", Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			ss := req.Session
			_, rerr := ss.ListRoots(ctx, nil)
			_, serr := ss.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "sample"}}}})
			_, eerr := ss.Elicit(ctx, &mcp.ElicitParams{Message: "form",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}}}`)})
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{
				outcome("roots/list", rerr), outcome("sampling/createMessage", serr), outcome("elicitation/create", eerr)}}}, nil
		},
	})
	s.AddPrompt(&mcp.Prompt{Name: "ask", Arguments: []*mcp.PromptArgument{{Name: "key"}}}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "ask"}}}}, nil
	})
	testserver.SpeaksAtMost(s, "2025-11-25")
	return s
}

// completeAsked connects a go-sdk client (on the SDK's newest protocol,
// which declares roots and answers sampling and elicitation) over tr,
// completes the asker's prompt argument, and returns the protocol version
// it negotiated, the completion's values, and what it was asked.
func completeAsked(t *testing.T, tr mcp.Transport) (version string, values, asked []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	c := requestAsksClient(func(what string) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, what)
	}, mcp.ClientOptions{})
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	defer cs.Close()
	var prompt string
	eventually(t, "the prompt is listed", func() bool {
		for p, err := range cs.Prompts(ctx, nil) {
			if err == nil && strings.HasSuffix(p.Name, "ask") {
				prompt = p.Name
			}
		}
		return prompt != ""
	})
	res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: prompt},
		Argument: mcp.CompleteParamsArgument{Name: "key", Value: "C"}})
	if err != nil {
		t.Fatalf("completion/complete of %s: %v", prompt, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return cs.InitializeResult().ProtocolVersion, res.Completion.Values, asked
}

// TestAskedDuringACompletionOfANewClient: what a server on 2025-11-25
// asks (roots, sampling, elicitation) during a completion/complete of a
// client on protocol 2026-07-28 — over serve --stdio on prefixed views of
// a shared, a per_user and a per_client server, and over streamable HTTP
// to a stateless gateway, where such a client keeps that version — cannot
// reach the client: that version has servers ask only in the
// input-required results of tools/call, prompts/get and resources/read,
// and a completion has none. Directly the client negotiates the server's
// version and is asked. Through the gateway the server gets, for each, a
// -32603 error that says why and what to do, and answers the completion
// as it decides; the client is asked nothing.
func TestAskedDuringACompletionOfANewClient(t *testing.T) {
	t.Parallel()
	url := serveHTTP(t, completionAsker(), nil)

	version, values, asked := completeAsked(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1})
	if diff := cmp.Diff([]string{"roots/list: ok", "sampling/createMessage: ok", "elicitation/create: ok"}, values); diff != "" || version != "2025-11-25" || len(asked) != 2 {
		t.Fatalf("directly, the client negotiated %s, was asked %q, and the server's requests came to (-want +got):\n%s", version, asked, diff)
	}

	refused := func(server string) []string {
		var out []string
		for _, m := range []string{"roots/list", "sampling/createMessage", "elicitation/create"} {
			out = append(out, fmt.Sprintf("%s: -32603 server %s sent %s during a completion/complete of a client on protocol 2026-07-28, which cannot be asked then: "+
				"on that version a server asks its client only in the input-required result of a tools/call, prompts/get or resources/read, "+
				"and a completion has none; ask during one of those, or connect the client to a prefix: never view of this one server, "+
				"where it negotiates the server's own version and is asked with requests", m, server, m))
		}
		return out
	}
	check := func(how, server string, tr mcp.Transport) {
		t.Helper()
		version, values, asked := completeAsked(t, tr)
		if version != "2026-07-28" {
			t.Errorf("%s: the client negotiated %s; want 2026-07-28, the case this test is about", how, version)
		}
		if diff := cmp.Diff(refused(server), values); diff != "" {
			t.Errorf("%s: what the server's requests came to (-want +got):\n%s", how, diff)
		}
		if len(asked) != 0 {
			t.Errorf("%s: the client was asked %q; want nothing (its protocol has no requests from a server)", how, asked)
		}
	}

	servers := map[config.SessionMode]string{config.SessionShared: "ask-s", config.SessionPerUser: "ask-u", config.SessionPerClient: "ask-c"}
	for _, mode := range []config.SessionMode{config.SessionShared, config.SessionPerUser, config.SessionPerClient} {
		s := httpUpstream(servers[mode], url)
		s.Session, s.NoIdentityMeta, s.RequestTimeout = mode, true, 30*time.Second
		check(fmt.Sprintf("serve --stdio, %s", mode), s.Name, startStdio(t, testConfig(s)))
	}

	s := httpUpstream("ask-s", url)
	s.NoIdentityMeta, s.RequestTimeout = true, 30*time.Second
	cfg := testConfig(s)
	cfg.Gateway.Stateless = true
	r := start(t, cfg)
	check("stateless streamable HTTP", s.Name, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1})
}
