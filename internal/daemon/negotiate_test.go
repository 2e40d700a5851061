//lint:file-ignore SA1019 the test answers elicitation, deprecated only from protocol 2026-07-28; clients and servers use it today.

package daemon

import (
	"context"
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

// This file checks that a prefix: never view of one per_client server
// negotiates the protocol version its server would (issue 17): a go-sdk
// client asks the newest version it knows (2026-07-28) of a go-sdk server
// that speaks 2025-06-18 alone, 2025-11-25 alone, or every version,
// directly and through the view, over serve --stdio and over streamable
// HTTP (a gateway with sessions), and calls a tool that asks it for a
// form: it must negotiate the same version both ways, and be asked the
// same way — with an elicitation/create request on a version before
// 2026-07-28, in the server's input-required result on 2026-07-28.

// negotiated is what a client found of a server: the protocol version it
// negotiated, how it was asked during its call ("request", "result" or
// both), and the call's answer.
type negotiated struct {
	Version string
	Asked   string
	Answer  string
}

// negotiate connects a go-sdk client to tr, calls the asks server's
// "ask" tool, and reports what it found.
func negotiate(t *testing.T, ctx context.Context, tr mcp.Transport) negotiated {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	note := func(how string) {
		mu.Lock()
		defer mu.Unlock()
		if !strings.Contains(strings.Join(asked, " "), how) {
			asked = append(asked, how)
		}
	}
	read := func(m jsonrpc.Message) {
		switch m := m.(type) {
		case *jsonrpc.Request:
			if m.Method == "elicitation/create" {
				note("request")
			}
		case *jsonrpc.Response:
			if strings.Contains(string(m.Result), `"resultType":"input_required"`) {
				note("result")
			}
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "negotiating-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"login": "ada", "seats": 2}}, nil
		},
	})
	cs, err := c.Connect(ctx, recordingTransport{Transport: tr, read: read}, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("calling ask: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return negotiated{Version: cs.InitializeResult().ProtocolVersion, Asked: strings.Join(asked, "+"), Answer: textOf(res)}
}

// TestNeverViewNegotiatesAsTheServer: see the top of the file.
func TestNeverViewNegotiatesAsTheServer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		protocol string // the one the server speaks; "" for every version
		stdio    negotiated
		http     negotiated
	}{
		{"2025-06-18", negotiated{Version: "2025-06-18", Asked: "request"}, negotiated{Version: "2025-06-18", Asked: "request"}},
		{"2025-11-25", negotiated{Version: "2025-11-25", Asked: "request"}, negotiated{Version: "2025-11-25", Asked: "request"}},
		// On 2026-07-28 (serve --stdio) nothing changes; streamable HTTP
		// with sessions has no 2026-07-28.
		{"", negotiated{Version: "2026-07-28", Asked: "result"}, negotiated{Version: "2025-11-25", Asked: "request"}},
	} {
		name := c.protocol
		if name == "" {
			name = "every version"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := testserver.Server(t, "asks", "asks", testserver.EnvProtocol+"="+c.protocol)
			srv.Session = config.SessionPerClient
			srv.NoIdentityMeta = true
			cfg := testConfig(srv)
			cfg.Gateway.Views = []config.View{{Name: config.DefaultViewName, Servers: []string{"asks"}, Prefix: config.PrefixNever}}
			r := start(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r.d.waitFirstAttempts(ctx) // as serve --stdio does before its client's first message

			for _, tr := range []struct {
				name            string
				direct, through mcp.Transport
				want            negotiated
			}{
				{"serve --stdio", asksInMemory(t, ctx, c.protocol), serveStdio(t, r), c.stdio},
				{"streamable HTTP", &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, testserver.Asks(c.protocol), nil), MaxRetries: -1},
					&mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1}, c.http},
			} {
				direct := negotiate(t, ctx, tr.direct)
				through := negotiate(t, ctx, tr.through)
				if diff := cmp.Diff(direct, through); diff != "" {
					t.Errorf("%s: what the client found directly (-) and through the view (+):\n%s", tr.name, diff)
				}
				want := tr.want
				want.Answer = direct.Answer
				if diff := cmp.Diff(want, direct); diff != "" || !strings.Contains(direct.Answer, `"login":"ada"`) {
					t.Errorf("%s: directly (the case this test is about): %s, answer %q", tr.name, diff, direct.Answer)
				}
			}
		})
	}
}

// asksInMemory connects the asks server (speaking protocol alone, or
// every version) to an in-memory transport, as it would be over stdio,
// until the test ends, and returns the client's end.
func asksInMemory(t *testing.T, ctx context.Context, protocol string) mcp.Transport {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := testserver.Asks(protocol).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return ct
}

// TestNeverViewStatelessKeepsTheNewVersion: a stateless gateway, which
// cannot send its clients requests, leaves a client of a prefix: never
// view on 2026-07-28 whatever its server speaks, and asks it what the
// server asks in input-required results of its own.
func TestNeverViewStatelessKeepsTheNewVersion(t *testing.T) {
	t.Parallel()
	cfg := neverView(testserver.Server(t, "asks", "asks", testserver.EnvProtocol+"=2025-11-25"))
	cfg.Gateway.Stateless = true
	r := start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r.d.waitFirstAttempts(ctx)
	got := negotiate(t, ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1})
	if got.Version != "2026-07-28" || got.Asked != "result" || !strings.Contains(got.Answer, `"login":"ada"`) {
		t.Errorf("through a stateless gateway: %+v, want 2026-07-28, asked in a result, and the client's answer", got)
	}
}
