package daemon

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// This file checks that the results a prefix: never view with session:
// per_client gives a client of protocol 2026-07-28 name its server in
// their _meta (io.modelcontextprotocol/serverInfo), as the server's own
// do (issue 17): a go-sdk client talks to a go-sdk server directly and,
// through serve --stdio, to the view, and the serverInfo of each result
// it reads is compared.

// metaRecorder records the _meta serverInfo of each response its
// client reads, in order ("none" for a response without one).
type metaRecorder struct {
	mcp.Transport
	mu   sync.Mutex
	seen []string
}

func (r *metaRecorder) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return metaConn{c, r}, nil
}

func (r *metaRecorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

type metaConn struct {
	mcp.Connection
	r *metaRecorder
}

func (c metaConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if resp, ok := m.(*jsonrpc.Response); ok && resp.Error == nil {
		var res struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		_ = json.Unmarshal(resp.Result, &res)
		info := "none"
		if b, ok := res.Meta[mcp.MetaKeyServerInfo]; ok {
			var v any
			_ = json.Unmarshal(b, &v)
			canon, _ := json.Marshal(v)
			info = string(canon)
		}
		c.r.mu.Lock()
		c.r.seen = append(c.r.seen, info)
		c.r.mu.Unlock()
	}
	return m, err
}

// TestPrefixNeverResultsNameTheServer: every result a client on
// 2026-07-28 gets through a prefix: never view (server/discover, lists,
// a call, a read) carries the server's serverInfo in _meta, as the
// server's own results do, not the gateway's.
func TestPrefixNeverResultsNameTheServer(t *testing.T) {
	t.Parallel()
	var upstreams sessionServers
	srv, dial := inMemoryUpstream(t, upstreams.next)
	srv.Session = config.SessionPerClient
	srv.NoIdentityMeta = true
	cfg := testConfig(srv)
	cfg.Gateway.Views = []config.View{{Name: config.DefaultViewName, Servers: []string{"lis"}, Prefix: config.PrefixNever}}
	r := start(t, cfg, dial)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r.d.waitFirstAttempts(ctx) // as serve --stdio does before its client's first message

	run := func(name string, tr mcp.Transport) []string {
		rec := &metaRecorder{Transport: tr}
		c := mcp.NewClient(&mcp.Implementation{Name: "meta-client", Version: "1"}, nil)
		cs, err := c.Connect(ctx, rec, nil)
		if err != nil {
			t.Fatalf("%s: connecting: %v", name, err)
		}
		defer cs.Close()
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("%s negotiated %s, want 2026-07-28 (the case this test is about)", name, v)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("%s: tools/list: %v", name, err)
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a"}); err != nil {
			t.Fatalf("%s: tools/call: %v", name, err)
		}
		if _, err := cs.ListResources(ctx, nil); err != nil {
			t.Fatalf("%s: resources/list: %v", name, err)
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "lis://r"}); err != nil {
			t.Fatalf("%s: resources/read: %v", name, err)
		}
		return rec.get()
	}

	ct, st := mcp.NewInMemoryTransports()
	ss, err := listenServer(nil).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	direct := run("directly", ct)

	ct, st = mcp.NewInMemoryTransports()
	stdioCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.d.gw.ServeStdio(stdioCtx, st)
	}()
	defer func() {
		stop()
		<-done
	}()
	through := run("through the view", ct)

	if len(direct) < 5 {
		t.Fatalf("directly the client read %d results, want server/discover's and four more: %q", len(direct), direct)
	}
	if diff := cmp.Diff(direct, through); diff != "" {
		t.Errorf("the serverInfo in each result's _meta directly (-) and through the view (+):\n%s", diff)
	}
}
