package daemon

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// lockedBuffer is a bytes.Buffer safe for a writer and a reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRunStdioWaitsForTheServers checks that serve --stdio answers the
// client's initialize only once the servers have had their first attempt:
// a server slow to start is in the instructions and the first tools/list,
// and one that never answers delays the client by its connect timeout
// only.
func TestRunStdioWaitsForTheServers(t *testing.T) {
	t.Parallel()
	const startDelay = 700 * time.Millisecond
	slow := okServer(t, "slow")
	hang := testserver.Server(t, "hang", "hang")
	hang.ConnectTimeout = time.Second
	cfg := testConfig(slow, hang)

	var out lockedBuffer
	began := time.Now()
	clientT := startStdio(t, cfg, func(o *Options) {
		o.Out = &out
		o.DialOptions = func(server string, o *upstream.DialOptions) {
			if server != "slow" {
				return
			}
			// An in-process server that takes a while to start.
			o.NewTransport = func(ctx context.Context) (mcp.Transport, error) {
				select {
				case <-time.After(startDelay):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				srv := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, &mcp.ServerOptions{Instructions: "Ask slow first."})
				mcp.AddTool(srv, &mcp.Tool{Name: "hello", Description: "Says hello."},
					func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
						return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil, nil
					})
				ct, stt := mcp.NewInMemoryTransports()
				if _, err := srv.Connect(context.WithoutCancel(ctx), stt, nil); err != nil {
					return nil, err
				}
				return ct, nil
			}
		}
	})

	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer ccancel()
	cs, err := c.Connect(cctx, clientT, nil)
	if err != nil {
		t.Fatalf("connecting over stdio: %v", err)
	}
	defer cs.Close()
	waited := time.Since(began)

	if got := cs.InitializeResult().Instructions; !strings.Contains(got, "Ask slow first.") {
		t.Errorf("instructions at initialize: got %q, want them to contain the slow server's %q", got, "Ask slow first.")
	}
	if names := toolNames(t, cs); !slices.Contains(names, "slow__hello") {
		t.Errorf("first tools/list: got %v, want it to contain slow__hello", names)
	}
	if waited < startDelay {
		t.Errorf("initialize answered after %s, before the slow server could start (%s)", waited, startDelay)
	}
	// The hanging server fails its first attempt at its connect timeout
	// (1s); the wait's own bound is that plus firstAttemptGrace.
	if limit := hang.ConnectTimeout + firstAttemptGrace + 3*time.Second; waited > limit {
		t.Errorf("initialize answered after %s, want within %s: a dead server must not hold the client", waited, limit)
	}
	wantContains(t, "serve --stdio output", out.String(), "waiting up to ", "for 2 server(s) to connect", "1 server(s) connected after")
}

// TestFirstAttemptBound checks the wait's bound: the longest connect
// timeout of an enabled server plus the grace, and no wait without one.
func TestFirstAttemptBound(t *testing.T) {
	t.Parallel()
	a := testserver.Server(t, "a", "ok")
	a.ConnectTimeout = 3 * time.Second
	b := testserver.Server(t, "b", "ok")
	b.ConnectTimeout = 7 * time.Second
	off := testserver.Server(t, "off", "ok")
	off.ConnectTimeout = time.Minute
	off.Enabled = false
	tests := []struct {
		name        string
		cfg         func() *Daemon
		wantBound   time.Duration
		wantEnabled int
	}{
		{"longest enabled", func() *Daemon { return &Daemon{cfg: testConfig(a, b, off)} }, 7*time.Second + firstAttemptGrace, 2},
		{"none enabled", func() *Daemon { return &Daemon{cfg: testConfig(off)} }, firstAttemptGrace, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bound, enabled := tt.cfg().firstAttemptBound()
			if bound != tt.wantBound || enabled != tt.wantEnabled {
				t.Errorf("got %s for %d server(s), want %s for %d", bound, enabled, tt.wantBound, tt.wantEnabled)
			}
		})
	}
}

func wantContains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, got)
		}
	}
}
