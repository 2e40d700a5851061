package daemon

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestPerUserNotifiesOnlyViewsOfTheServer: what a user's per_user
// session of a server says reaches her client sessions of views that show
// that server, and not her sessions of views that do not (they neither
// list nor subscribe to anything of it): a resources/updated of a
// resource her client of the server's view subscribed to, and a list
// change of the session, reach that client alone.
func TestPerUserNotifiesOnlyViewsOfTheServer(t *testing.T) {
	t.Parallel()
	var upstreams sessionServers
	pu := httpUpstream("pu", upstreams.serve(t))
	pu.Session = config.SessionPerUser
	other := mcp.NewServer(&mcp.Implementation{Name: "other", Version: "1"}, nil)
	other.AddTool(&mcp.Tool{Name: "hi", InputSchema: map[string]any{"type": "object"}}, emptyTool)
	cfg := testConfig(pu, httpUpstream("other", serveHTTP(t, other, nil)))
	cfg.Gateway.Tokens = []config.Token{{Name: "ada", User: "ada", Secret: "ada-secret"}}
	cfg.Gateway.Views = []config.View{
		{Name: "a", Servers: []string{"pu"}, Prefix: config.PrefixNever},
		{Name: "b", Servers: []string{"other"}, Prefix: config.PrefixNever},
	}
	r := start(t, cfg)
	ada := http.Header{"Authorization": {"Bearer ada-secret"}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r.d.waitFirstAttempts(ctx)
	eventually(t, "the catalog has both servers' tools", func() bool {
		return len(r.d.cat.ServerTools("pu")) > 0 && len(r.d.cat.ServerTools("other")) > 0
	})

	// b: her client of the view without the server, a request made (the
	// gateway knows it as hers) and its tools listed.
	b := newRawSession(t, r.url+"/mcp/b", ada)
	bst := b.openStandalone()
	if got := readAll(t, b.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil)); !strings.Contains(got, `"hi"`) {
		t.Fatalf("b's tools/list: %s", got)
	}
	if got := readAll(t, b.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hi","arguments":{}}}`, nil)); !strings.Contains(got, `"result"`) {
		t.Fatalf("b's call of hi: %s", got)
	}

	// a: her client of the server's view, which opens her session of it
	// and subscribes.
	tools := make(chan struct{}, 8)
	a := r.connect(t, "/mcp/a", ada, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { tools <- struct{}{} },
	})
	if _, err := a.ListResources(ctx, nil); err != nil {
		t.Fatal(err)
	}
	waitTools(t, a, "her session's tools", has("a"))
	waitFor(t, "her own session of pu", func() bool { return upstreams.count() >= 2 })
	own := upstreams.at(1) // 0 is the shared session's

	addTool(own)
	waitSignal(t, tools, "a's tools/list_changed from her session")

	// Then a change of what b lists reaches b on the same stream, after
	// anything sent to it before.
	other.AddTool(&mcp.Tool{Name: "hello", InputSchema: map[string]any{"type": "object"}}, emptyTool)
	if !bst.waitFor("notifications/tools/list_changed", 20*time.Second) {
		t.Fatalf("b was not told of its view's change within 20s:\n%s", bst)
	}
	if s := bst.String(); strings.Contains(s, "resources/updated") || strings.Count(s, "tools/list_changed") != 1 {
		t.Errorf("b, her client of a view that does not show pu, heard what her session of pu said:\n%s", s)
	}
}
