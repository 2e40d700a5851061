package daemon

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestShutdownAfterAClientLeftARound: a client of protocol 2026-07-28,
// asked in an input-required result while its prompts/get waits upstream
// (the server asks it for roots, then sampling), that never comes back
// with its answers, does not hold the daemon's shutdown, and the server's
// request ends with it: the server's session closes at once (its DELETE
// waits for no handler). Through the shared session and a client's own
// (per_client, per_user), over streamable HTTP and stdio, to a client
// over serve --stdio and over stateless streamable HTTP.
func TestShutdownAfterAClientLeftARound(t *testing.T) {
	t.Parallel()
	type variant struct {
		mode   config.SessionMode
		tr     string // the server's transport
		client string // the client's: "stdio" or (stateless) "http"
	}
	var variants []variant
	for _, mode := range []config.SessionMode{config.SessionShared, config.SessionPerClient, config.SessionPerUser} {
		for _, tr := range []string{"http", "stdio"} {
			variants = append(variants, variant{mode, tr, "stdio"})
		}
	}
	variants = append(variants, variant{config.SessionShared, "http", "http"}, variant{config.SessionPerUser, "stdio", "http"})
	for _, v := range variants {
		name := fmt.Sprintf("%s %s server, %s client", v.mode, v.tr, v.client)
		var hs *httptest.Server
		s := testserver.Server(t, "asks", "requestasks")
		if v.tr == "http" {
			asks := testserver.RequestAsks()
			hs = httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return asks }, nil))
			s = httpUpstream("asks", hs.URL)
		}
		s.Session, s.NoIdentityMeta, s.RequestTimeout = v.mode, true, time.Minute
		r, tr := startRounds(t, testConfig(s), v.client)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cs := connectRounds(t, ctx, roundsClient(&askedCount{}, &mcp.MultiRoundTripOptions{Disabled: true}), tr, nil, "2026-07-28")
		prompt := listedPrompt(t, ctx, cs, "ask")
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt, Arguments: map[string]string{"key": "P"}})
		if err != nil || !res.NeedsInput() {
			t.Fatalf("%s: prompts/get: %v %+v, want an input-required result", name, err, res)
		}
		// The client leaves the round unanswered.
		stopping := time.Now()
		stopWithin(t, r, 5*time.Second, name)
		t.Logf("%s: the daemon shut down in %v", name, time.Since(stopping))
		if hs != nil {
			closed := make(chan struct{})
			go func() {
				hs.Close()
				close(closed)
			}()
			select {
			case <-closed:
			case <-time.After(5 * time.Second):
				// Its handler still waits: left to the process's end.
				t.Errorf("%s: the server did not close within 5s: its request still waits\n%s", name, goroutines())
			}
		}
		cancel()
	}
}

// TestShutdownWhileARequestWaits: a client's prompts/get that waits
// upstream when the daemon stops (the server neither asks nor answers) is
// cancelled at the server, which is told before its session closes, and
// does not hold the shutdown. Through the shared session and a client's
// own (per_client), for a client of protocol 2025-11-25 over streamable
// HTTP and one of 2026-07-28 over serve --stdio (run in rounds). (Before,
// the shared session's close began as the request was cancelled, and
// the SDK dropped the cancellation: the server's handler waited for good
// and its session's DELETE for 5 s; in rounds the client session's close
// waited for the request, which waited for the server.)
func TestShutdownWhileARequestWaits(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.SessionMode{config.SessionShared, config.SessionPerClient} {
		for _, rounds := range []bool{false, true} {
			name := fmt.Sprintf("%s, in rounds %v", mode, rounds)
			got, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
			srv := mcp.NewServer(&mcp.Implementation{Name: "busy", Version: "1"}, nil)
			srv.AddPrompt(&mcp.Prompt{Name: "wait"}, func(ctx context.Context, _ *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				got <- struct{}{}
				<-ctx.Done() // until it is cancelled
				cancelled <- struct{}{}
				return nil, ctx.Err()
			})
			hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
			s := httpUpstream("busy", hs.URL)
			s.Session, s.NoIdentityMeta, s.RequestTimeout = mode, true, time.Minute
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			var r *running
			var cs *mcp.ClientSession
			if rounds {
				var tr mcp.Transport
				r, tr = startRounds(t, testConfig(s), "stdio")
				cs = connectRounds(t, ctx, roundsClient(&askedCount{}, &mcp.MultiRoundTripOptions{Disabled: true}), tr, nil, "2026-07-28")
			} else {
				r = start(t, testConfig(s))
				var err error
				cs, err = mcp.NewClient(&mcp.Implementation{Name: "waits", Version: "1"}, nil).Connect(ctx,
					&mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", HTTPClient: &http.Client{}}, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
			}
			prompt := listedPrompt(t, ctx, cs, "wait")
			go func() { _, _ = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt}) }()
			select {
			case <-got:
			case <-time.After(20 * time.Second):
				t.Fatalf("%s: the prompts/get did not reach the server within 20s", name)
			}
			stopping := time.Now()
			stopWithin(t, r, 5*time.Second, name)
			t.Logf("%s: the daemon shut down in %v", name, time.Since(stopping))
			select {
			case <-cancelled:
				hs.Close()
			case <-time.After(5 * time.Second):
				// Its handler still waits: left to the process's end.
				t.Errorf("%s: the server's prompts/get was not cancelled within 5s of the stop\n%s", name, goroutines())
			}
			cancel()
		}
	}
}

// listedPrompt returns the name of the prompt cs is listed whose name
// ends with suffix (the view's prefix before it), once it is listed.
func listedPrompt(t *testing.T, ctx context.Context, cs *mcp.ClientSession, suffix string) string {
	t.Helper()
	prompt := ""
	eventually(t, "the prompt is listed", func() bool {
		for p, err := range cs.Prompts(ctx, nil) {
			if err == nil && strings.HasSuffix(p.Name, suffix) {
				prompt = p.Name
			}
		}
		return prompt != ""
	})
	return prompt
}
