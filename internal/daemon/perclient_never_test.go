//lint:file-ignore SA1019 the test forwards sampling with tools, deprecated only from protocol 2026-07-28; clients and servers use it today.

package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// This file checks, scenario by scenario, that a client of a prefix:
// never view with session: per_client and identity_meta: false sees what
// it sees talking to the server directly (issue 17): the same scenario
// runs on a direct connection and through the view, and what each side
// sees is compared. One daemon and one in-process go-sdk server serve
// every scenario.

// twinServer is a go-sdk server that pages its lists by two and whose
// tools report what they were sent.
func twinServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "twin", Version: "1"}, &mcp.ServerOptions{PageSize: 2})
	s.AddTool(&mcp.Tool{Name: "meta", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, _ := json.Marshal(req.Params.Meta)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "version", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			v := "none"
			if ip := req.Session.InitializeParams(); ip != nil {
				v = ip.ProtocolVersion
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: v}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "sample", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var declared any
			if ip := req.Session.InitializeParams(); ip != nil && ip.Capabilities != nil {
				declared = ip.Capabilities.Sampling
			}
			res, err := req.Session.CreateMessageWithTools(ctx, &mcp.CreateMessageWithToolsParams{
				MaxTokens: 10, IncludeContext: "thisServer",
				Messages:   []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "weather?"}}}},
				Tools:      []*mcp.Tool{{Name: "forecast", InputSchema: map[string]any{"type": "object"}}},
				ToolChoice: &mcp.ToolChoice{Mode: "required"},
			})
			b, _ := json.Marshal(map[string]any{"declared": declared, "result": res, "error": fmt.Sprint(err)})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	for _, n := range []string{"t1", "t2", "t3"} {
		s.AddTool(&mcp.Tool{Name: n, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: n}}}, nil
			})
	}
	for i := range 5 {
		uri := fmt.Sprintf("twin://r%d", i)
		s.AddResource(&mcp.Resource{URI: uri, Name: fmt.Sprintf("r%d", i)},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: uri}}}, nil
			})
	}
	for i := range 3 {
		s.AddPrompt(&mcp.Prompt{Name: fmt.Sprintf("p%d", i)},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{}, nil
			})
	}
	for i := range 3 {
		s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: fmt.Sprintf("twin://t%d/{x}", i), Name: fmt.Sprintf("t%d", i)},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{}, nil
			})
	}
	return s
}

// twin is a daemon serving twinServer as the prefix: never, per_client
// view "tw" (identity_meta off), and the server's own address.
type twin struct {
	r   *running
	url string
}

// startTwin starts the daemon and the server of this file's tests.
func startTwin(t *testing.T) *twin {
	t.Helper()
	return startTwinOf(t, twinServer(), nil)
}

// startTwinOf starts a daemon serving s as the view "tw" of startTwin;
// change, when set, adjusts the daemon's configuration first.
func startTwinOf(t *testing.T, s *mcp.Server, change func(cfg *config.Config, url string)) *twin {
	t.Helper()
	url := serveHTTP(t, s, nil)
	srv := httpUpstream("tw", url)
	srv.Session = config.SessionPerClient
	srv.NoIdentityMeta = true
	cfg := testConfig(srv)
	cfg.Gateway.Views = []config.View{{Name: "tw", Servers: []string{"tw"}, Prefix: config.PrefixNever}}
	if change != nil {
		change(cfg, url)
	}
	return &twin{r: start(t, cfg), url: url}
}

// pair connects a client with opts to the server directly and through
// the view.
func (tw *twin) pair(t *testing.T, opts func() *mcp.ClientOptions) (direct, through *mcp.ClientSession) {
	t.Helper()
	return tw.pairOffering(t, "", opts)
}

// pairOffering is pair with a client that offers protocol version
// ("" the SDK's newest).
func (tw *twin) pairOffering(t *testing.T, version string, opts func() *mcp.ClientOptions) (direct, through *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var sopts *mcp.ClientSessionOptions
	if version != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	connect := func(url string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "list-client", Version: "1"}, opts())
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, HTTPClient: &http.Client{}}, sopts)
		if err != nil {
			t.Fatalf("connecting to %s: %v", url, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	direct, through = connect(tw.url), connect(tw.r.url+"/mcp/tw")
	// Every page, as the client would read them before calling.
	waitFor(t, "tw's tools through the view", func() bool {
		var names []string
		for tl, err := range through.Tools(ctx, nil) {
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			names = append(names, tl.Name)
		}
		return has("meta", "version")(names)
	})
	return direct, through
}

// pages is every page of each list, as the client reads them: the
// entries of each page and the cursor it gives of the next.
type pages struct {
	Tools, Prompts, Resources, Templates []string
}

// readPages reads every list of cs page by page.
func readPages(t *testing.T, cs *mcp.ClientSession) pages {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var p pages
	follow := func(what string, out *[]string, get func(cursor string) ([]string, string, error)) {
		cursor := ""
		for range 100 {
			names, next, err := get(cursor)
			if err != nil {
				t.Fatalf("%s with cursor %q: %v", what, cursor, err)
			}
			*out = append(*out, fmt.Sprintf("%v next=%q", names, next))
			if next == "" {
				return
			}
			cursor = next
		}
		t.Fatalf("%s: more than 100 pages", what)
	}
	follow("tools/list", &p.Tools, func(c string) ([]string, string, error) {
		r, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: c})
		if err != nil {
			return nil, "", err
		}
		var n []string
		for _, x := range r.Tools {
			n = append(n, x.Name)
		}
		return n, r.NextCursor, nil
	})
	follow("prompts/list", &p.Prompts, func(c string) ([]string, string, error) {
		r, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: c})
		if err != nil {
			return nil, "", err
		}
		var n []string
		for _, x := range r.Prompts {
			n = append(n, x.Name)
		}
		return n, r.NextCursor, nil
	})
	follow("resources/list", &p.Resources, func(c string) ([]string, string, error) {
		r, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: c})
		if err != nil {
			return nil, "", err
		}
		var n []string
		for _, x := range r.Resources {
			n = append(n, x.URI)
		}
		return n, r.NextCursor, nil
	})
	follow("resources/templates/list", &p.Templates, func(c string) ([]string, string, error) {
		r, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: c})
		if err != nil {
			return nil, "", err
		}
		var n []string
		for _, x := range r.ResourceTemplates {
			n = append(n, x.URITemplate)
		}
		return n, r.NextCursor, nil
	})
	return p
}

// TestPrefixNeverPerClientIsTheServer runs each scenario directly and
// through a prefix: never, per_client view and compares what the client
// and the server see.
func TestPrefixNeverPerClientIsTheServer(t *testing.T) {
	tw := startTwin(t)
	plain := func() *mcp.ClientOptions { return &mcp.ClientOptions{} }

	// The server pages its lists by two; through the view the client
	// reads the same pages, with the server's cursors.
	t.Run("pagination", func(t *testing.T) {
		direct, through := tw.pair(t, plain)
		want, got := readPages(t, direct), readPages(t, through)
		if len(want.Resources) < 3 {
			t.Fatalf("the server gave its resources in %d pages, want 3 (the case this test is about)", len(want.Resources))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("through the view the client reads other pages than directly (-direct +view):\n%s", diff)
		}
	})

	// identity_meta: false: the server sees the _meta the client sent,
	// nothing of the gateway's.
	t.Run("_meta", func(t *testing.T) {
		direct, through := tw.pair(t, plain)
		seen := func(cs *mcp.ClientSession) string {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "meta", Arguments: map[string]any{}, Meta: mcp.Meta{"trace": "t-1"}})
			if err != nil {
				t.Fatalf("calling meta: %v", err)
			}
			return textOf(res)
		}
		if want, got := seen(direct), seen(through); got != want {
			t.Errorf("the server saw _meta %s through the view, %s directly", got, want)
		}
	})

	// The server negotiates the protocol version the client offers: on
	// its own session the gateway offers the client's.
	t.Run("protocol version", func(t *testing.T) {
		for _, v := range []string{"2025-06-18", "2025-11-25"} {
			direct, through := tw.pairOffering(t, v, plain)
			want, got := textOf(call(t, direct, "version", map[string]any{})), textOf(call(t, through, "version", map[string]any{}))
			if want != v {
				t.Fatalf("offered %s, the server negotiated %s directly (the case this test is about)", v, want)
			}
			if got != want {
				t.Errorf("offered %s: the server's session negotiated %s through the view, %s directly", v, got, want)
			}
		}
	})

	// A client that declared sampling with tools and context is asked
	// with the server's tools, toolChoice and includeContext, and its
	// tool_use answer reaches the server as it gave it.
	t.Run("sampling with tools", func(t *testing.T) { samplingWithTools(t, tw) })
}

// samplingWithTools checks, through tw's view and directly, that a
// client that declared sampling with tools and context is asked with the
// server's tools, toolChoice and includeContext, and that its tool_use
// answer reaches the server as it gave it.
func samplingWithTools(t *testing.T, tw *twin) {
	t.Helper()
	opts := func() *mcp.ClientOptions {
		return &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{
				Tools: &mcp.SamplingToolsCapabilities{}, Context: &mcp.SamplingContextCapabilities{}}},
			CreateMessageWithToolsHandler: func(_ context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
				p := req.Params
				var tools []string
				for _, tl := range p.Tools {
					tools = append(tools, tl.Name)
				}
				choice := ""
				if p.ToolChoice != nil {
					choice = p.ToolChoice.Mode
				}
				return &mcp.CreateMessageWithToolsResult{Model: "m", Role: "assistant", StopReason: "toolUse", Content: []mcp.Content{
					&mcp.TextContent{Text: "asked with " + p.IncludeContext},
					&mcp.ToolUseContent{ID: "u1", Name: "forecast", Input: map[string]any{"tools": tools, "choice": choice}},
				}}, nil
			},
		}
	}
	direct, through := tw.pairOffering(t, "2025-11-25", opts)
	want, got := textOf(call(t, direct, "sample", map[string]any{})), textOf(call(t, through, "sample", map[string]any{}))
	if !strings.Contains(want, `"type":"tool_use"`) {
		t.Fatalf("directly the server saw %s, want the client's tool_use (the case this test is about)", want)
	}
	if got != want {
		t.Errorf("the server saw\n%s\nthrough the view, and directly\n%s", got, want)
	}
}
