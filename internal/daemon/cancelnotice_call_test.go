package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// waitingServer is a go-sdk server whose tool "wait" returns when its
// call is cancelled (or after a minute), counting in told the calls whose
// cancellation it was told of; started gets a value as each call begins.
func waitingServer(told *atomic.Int32, started chan<- struct{}) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "waiting", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "wait", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				told.Add(1)
			case <-time.After(time.Minute):
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "waited"}}}, nil
		})
	return s
}

// TestCancelledCallsServerIsToldBeforeItsSessionCloses: a tools/call
// through the go-sdk's client (fast_path: false) to a streamable-HTTP
// server that is cancelled as its session closes has its server told
// (notifications/cancelled), as a directly cancelled call does: one
// still running when the shutdown's deadline cancels it, and one whose
// client cancels it while a reload that removes its server is closing
// the session. (Before, the go-sdk's client retired the call before it
// posted the notification, and a session closing meanwhile dropped it:
// the server's handler ran on, and the session's DELETE waited the SDK's
// 5 s for it.)
func TestCancelledCallsServerIsToldBeforeItsSessionCloses(t *testing.T) {
	t.Parallel()
	var told atomic.Int32
	started := make(chan struct{}, 1)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return waitingServer(&told, started) }, nil))
	t.Cleanup(func() {
		if !t.Failed() {
			hs.Close() // else a handler never told would hold it for a minute
		}
	})
	waitTold := func(what string, want int32) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for told.Load() < want {
			if time.Now().After(deadline) {
				t.Errorf("%s: the server was told of %d cancelled calls within 5s, want %d", what, told.Load(), want)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// begin starts a daemon with the server (its calls through the SDK)
	// and a call of its tool, and returns once the server runs the call.
	begin := func(what string, opts ...func(*Options)) (*running, context.CancelFunc, <-chan error) {
		t.Helper()
		s := httpUpstream("waiting", hs.URL)
		s.NoIdentityMeta, s.RequestTimeout = true, time.Minute
		cfg := testConfig(s)
		cfg.Gateway.DisableFastPath = true
		cfg.Gateway.ShutdownTimeout = 50 * time.Millisecond
		r := start(t, cfg, opts...)
		cs := r.connect(t, "/mcp", nil, nil)
		waitTools(t, cs, what, has("waiting__wait"))
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "waiting__wait", Arguments: map[string]any{}})
			errc <- err
		}()
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the call did not reach the server within 20s", what)
		}
		return r, cancel, errc
	}

	// A call still running at the shutdown's deadline.
	r, cancel, _ := begin("stop")
	stopping := time.Now()
	stopWithin(t, r, 10*time.Second, "stop")
	if d := time.Since(stopping); d > 3*time.Second {
		t.Errorf("stop: the daemon took %v to stop, want under 3s", d)
	}
	waitTold("stop", 1)
	cancel()

	// A call its client cancels while a reload closes its session.
	var next atomic.Pointer[config.Config]
	r, cancel, errc := begin("reload", func(o *Options) { o.Load = func() (*config.Config, error) { return next.Load(), nil } })
	next.Store(testConfig()) // the server removed
	sup, ok := r.d.Pool().Supervisor("waiting")
	if !ok {
		t.Fatal("reload: the pool has no supervisor for the server")
	}
	reloaded := make(chan time.Duration, 1)
	go func() {
		begun := time.Now()
		if _, err := r.d.Reload(context.Background()); err != nil {
			t.Errorf("reload: %v", err)
		}
		reloaded <- time.Since(begun)
	}()
	// The supervisor gives up the session right before it closes it
	// (which waits for the call in flight); then the client cancels.
	eventually(t, "the reload closes the session", func() bool { _, err := sup.Client(); return err != nil })
	cancel()
	if err := <-errc; err == nil {
		t.Error("reload: the cancelled call succeeded")
	}
	select {
	case d := <-reloaded:
		if d > 3*time.Second {
			t.Errorf("reload: it took %v, want under 3s", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("reload: it did not return within 20s of the call's cancellation")
	}
	waitTold("reload", 2)
}
