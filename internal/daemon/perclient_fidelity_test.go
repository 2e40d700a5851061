package daemon

//lint:file-ignore SA1019 sampling, elicitation and roots are deprecated only from protocol 2026-07-28; clients use them today.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// listing is what a client is listed: every page of each list, in order.
type listing struct {
	Tools, Prompts, Resources, Templates []string
}

// listAll lists everything cs is offered, following every page.
func listAll(t *testing.T, cs *mcp.ClientSession) listing {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var l listing
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		l.Tools = append(l.Tools, tl.Name)
	}
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatalf("prompts/list: %v", err)
		}
		l.Prompts = append(l.Prompts, p.Name)
	}
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		l.Resources = append(l.Resources, r.URI)
	}
	for r, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/templates/list: %v", err)
		}
		l.Templates = append(l.Templates, r.URITemplate)
	}
	return l
}

// TestPrefixNeverPerClientListsAsTheServer: a client of a prefix: never
// view of server-everything (TypeScript SDK) with session: per_client is
// listed what the server lists it directly — the same tools, prompts,
// resources and templates in the server's order, and only the tools the
// server offers a client with the capabilities this one declared (it
// adds some for clients that sample, elicit or give roots).
func TestPrefixNeverPerClientListsAsTheServer(t *testing.T) {
	t.Parallel()
	srv := everythingPerClient(t)
	cfg := testConfig(srv)
	cfg.Gateway.Views = []config.View{{Name: "ev", Servers: []string{"ev"}, Prefix: config.PrefixNever}}
	r := start(t, cfg)
	for _, c := range []struct {
		name string
		opts func() *mcp.ClientOptions
	}{
		{"a client that declares nothing", func() *mcp.ClientOptions { return &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}} }},
		{"a client that declares sampling, elicitation and roots", func() *mcp.ClientOptions {
			return &mcp.ClientOptions{CreateMessageHandler: sampleX, ElicitationHandler: declineElicitation}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(srv.Command, srv.Args...)
			cmd.Env = os.Environ()
			directChanged := make(chan struct{}, 16)
			o := c.opts()
			o.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
				select {
				case directChanged <- struct{}{}:
				default:
				}
			}
			direct := connectStdio(t, &mcp.CommandTransport{Command: cmd}, o)
			through := r.connectListening(t, "/mcp/ev", c.opts())
			// server-everything adds its capability tools just after
			// initialize (and says so): while the two differ, one of them
			// is yet to change, and is told so.
			var want, got listing
			for {
				want, got = listAll(t, direct), listAll(t, through.cs)
				if cmp.Equal(want, got) {
					break
				}
				select {
				case <-directChanged:
				case <-through.changed:
				case <-time.After(20 * time.Second):
					t.Fatalf("through the gateway the client is listed otherwise than directly, and neither was told its tools changed within 20s (-direct +gateway):\n%s", cmp.Diff(want, got))
				}
			}
			if slices.IsSorted(want.Tools) {
				t.Errorf("server-everything lists its tools sorted by name (%v): the test cannot tell its order from the SDK's", want.Tools)
			}
		})
	}
}

// tokenServer is a go-sdk server whose tool "token" reports progress
// once and answers with the progress token it was sent.
func tokenServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "tokens", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "token", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			if tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%T %v", tok, tok)}}}, nil
		})
	return s
}

// TestPrefixNeverPerClientProgressToken: on its own upstream session
// (per_client) a client's progress token reaches the server as the client
// sent it — a string, or a number — and the server's progress comes back
// under it, as directly.
func TestPrefixNeverPerClientProgressToken(t *testing.T) {
	t.Parallel()
	url := serveHTTP(t, tokenServer(), nil)
	srv := httpUpstream("tk", url)
	srv.Session = config.SessionPerClient
	cfg := testConfig(srv)
	cfg.Gateway.Views = []config.View{{Name: "tk", Servers: []string{"tk"}, Prefix: config.PrefixNever}}
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast_path %v", fast), func(t *testing.T) {
			cfg := *cfg
			cfg.Gateway.DisableFastPath = !fast
			r := start(t, &cfg)
			progress := make(chan any, 8)
			opts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				progress <- req.Params.ProgressToken
			}}
			direct := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, opts)
			dcs, err := direct.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { dcs.Close() })
			through := r.connectListening(t, "/mcp/tk", opts)
			waitTools(t, through.cs, "tk's tools", has("token"))
			for _, tok := range []any{"client-7", 7} {
				answer := func(cs *mcp.ClientSession) (string, any) {
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "token", Arguments: map[string]any{}, Meta: mcp.Meta{"progressToken": tok}})
					if err != nil {
						t.Fatalf("calling token: %v", err)
					}
					select {
					case got := <-progress:
						return textOf(res), got
					case <-time.After(20 * time.Second):
						t.Fatal("no progress")
					}
					return "", nil
				}
				wantText, wantTok := answer(dcs)
				gotText, gotTok := answer(through.cs)
				if gotText != wantText || fmt.Sprint(gotTok) != fmt.Sprint(wantTok) {
					t.Errorf("token %v: the server saw %q and the client got progress for %v through the gateway; directly %q and %v", tok, gotText, gotTok, wantText, wantTok)
				}
			}
		})
	}
}
