package daemon

//lint:file-ignore SA1019 the client answers sampling and has roots, deprecated only from protocol 2026-07-28; clients use them today.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestShutdownAfterAClientLeftAnAskingRequest: a client that cancels its
// prompts/get, resources/read or completion/complete while the server
// asks it for a sampling completion on that request's stream, and never
// answers, has its request cancelled at the server, as directly (the
// server gets notifications/cancelled: ask://cancelled counts them), also
// a second time on the same daemon; and a daemon stopped at once after
// such a request shuts down promptly, before the client's
// notifications/cancelled may have come, and its server is told all the
// same. Through the shared session and a client's own (per_client,
// per_user), over streamable HTTP and stdio; fast_path off once (the lean
// path takes only tools/call). (Before, a stop at once waited for good
// with the shared session: the client session's close waited for the
// gateway's handler, which waited for the server, which waited for its
// sampling request's answer, and the shared session's close for the
// server. Then, with the request cancelled at the shutdown, the shared
// HTTP session closed as the SDK retired the cancelled request, before
// it sent notifications/cancelled: the server's handler waited for good,
// the session's DELETE for 5 s, the daemon's stop with it, and the
// server's own close forever.)
func TestShutdownAfterAClientLeftAnAskingRequest(t *testing.T) {
	t.Parallel()
	asks := testserver.RequestAsks()
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return asks }, nil))
	t.Cleanup(func() {
		if !t.Failed() {
			// A server whose handler still waits (it was never told of
			// the cancellation) would hold its close for good: the test
			// has said so; the server is left to the process's end.
			hs.Close()
		}
	})
	askURL := hs.URL
	// direct is the test's own session with the HTTP server, on which
	// told reads how many notifications/cancelled the server has
	// received, also once the daemon is down.
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "counts", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: askURL, HTTPClient: &http.Client{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	readCount := func(cs *mcp.ClientSession, uri string) (int, error) {
		got, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return 0, err
		}
		return strconv.Atoi(got.Contents[0].Text)
	}
	type variant struct {
		mode   config.SessionMode
		tr     string
		fast   bool
		method string
		// stopAtOnce: the daemon is stopped as soon as the client's call
		// returned, else once the server got notifications/cancelled.
		stopAtOnce bool
	}
	var variants []variant
	methods := []string{"prompts/get", "resources/read", "completion/complete"}
	i := 0
	for _, mode := range []config.SessionMode{config.SessionShared, config.SessionPerClient, config.SessionPerUser} {
		for _, tr := range []string{"http", "stdio"} {
			variants = append(variants, variant{mode, tr, true, methods[i%len(methods)], false})
			i++
		}
	}
	variants = append(variants, variant{config.SessionPerClient, "http", false, "prompts/get", false})
	for _, v := range variants {
		v.stopAtOnce = true
		variants = append(variants, v)
	}
	for _, v := range variants {
		atOnce := v.stopAtOnce
		name := fmt.Sprintf("%s %s fast_path %v %s (stopped at once: %v)", v.mode, v.tr, v.fast, v.method, atOnce)
		s := httpUpstream("asks", askURL)
		if v.tr == "stdio" {
			s = testserver.Server(t, "asks", "requestasks")
		}
		s.Session, s.NoIdentityMeta, s.RequestTimeout = v.mode, true, time.Minute
		cfg := testConfig(s)
		cfg.Gateway.DisableFastPath = !v.fast
		r := start(t, cfg)
		sampling, leave := make(chan struct{}, 1), make(chan struct{})
		c := mcp.NewClient(&mcp.Implementation{Name: "leaves", Version: "1"}, &mcp.ClientOptions{
			CreateMessageHandler: func(ctx context.Context, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				sampling <- struct{}{}
				select { // never answers
				case <-ctx.Done():
				case <-leave: // the test is done with the daemon
				}
				return nil, errors.New("the client left")
			},
		})
		c.AddRoots(&mcp.Root{URI: "file:///client", Name: "client"})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", HTTPClient: &http.Client{}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var prompt, res, cancelledURI string
		eventually(t, "the prompt and the resources are listed", func() bool {
			for p, err := range cs.Prompts(ctx, nil) {
				if err == nil && strings.HasSuffix(p.Name, "ask") {
					prompt = p.Name
				}
			}
			for r, err := range cs.Resources(ctx, nil) {
				switch {
				case err != nil:
				case strings.HasSuffix(r.URI, "res"):
					res = r.URI
				case strings.HasSuffix(r.URI, "cancelled"):
					cancelledURI = r.URI
				}
			}
			return prompt != "" && res != "" && cancelledURI != ""
		})
		// told says how many notifications/cancelled the variant's server
		// has received.
		told := func() int {
			t.Helper()
			n, err := readCount(direct, "ask://cancelled")
			if v.tr == "stdio" {
				n, err = readCount(cs, cancelledURI)
			}
			if err != nil {
				t.Fatalf("%s: reading how many notifications/cancelled the server received: %v", name, err)
			}
			return n
		}
		// waitTold waits for the server to have received want.
		waitTold := func(want int, when string) {
			t.Helper()
			deadline := time.Now().Add(5 * time.Second)
			for n := told(); n < want; n = told() {
				if time.Now().After(deadline) {
					t.Errorf("%s: the server got %d notifications/cancelled within 5s %s, want %d\n%s", name, n, when, want, goroutines())
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		// leaveRequest makes the variant's request, waits for the
		// server's sampling request to reach the client, and cancels it.
		leaveRequest := func() {
			t.Helper()
			pctx, pcancel := context.WithCancel(ctx)
			defer pcancel()
			errc := make(chan error, 1)
			go func() {
				var err error
				switch v.method {
				case "prompts/get":
					_, err = cs.GetPrompt(pctx, &mcp.GetPromptParams{Name: prompt, Arguments: map[string]string{"key": "P"}})
				case "resources/read":
					_, err = cs.ReadResource(pctx, &mcp.ReadResourceParams{URI: res})
				default:
					_, err = cs.Complete(pctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: prompt},
						Argument: mcp.CompleteParamsArgument{Name: "key", Value: "C"}})
				}
				errc <- err
			}()
			select {
			case <-sampling:
			case <-time.After(20 * time.Second):
				t.Fatalf("%s: the server's sampling request did not reach the client within 20s", name)
			}
			pcancel()
			if err := <-errc; err == nil {
				t.Errorf("%s: the cancelled request succeeded", name)
			}
		}
		// The server gets notifications/cancelled for its request, as
		// when its client cancels directly; and so for a second one on the
		// same daemon.
		before := told()
		leaveRequest()
		waitTold(before+1, "after the first request")
		leaveRequest()
		if !atOnce {
			waitTold(before+2, "after the second request")
		}
		// Else the daemon is stopped before the client's
		// notifications/cancelled (which the go-sdk client sends after its
		// call returned) may have come: it shuts down promptly all the
		// same, and tells the server.
		stopping := time.Now()
		stopWithin(t, r, 5*time.Second, name)
		t.Logf("%s: the daemon shut down in %v", name, time.Since(stopping))
		if v.tr == "http" {
			waitTold(before+2, "after the daemon stopped") // a stdio server has gone with it
		}
		close(leave)
		cs.Close()
		cancel()
	}
}

// stopWithin stops r's daemon; if it is not down within d, the test
// fails with the goroutines' stacks (and the daemon is left to the
// process's end, not waited for again).
func stopWithin(t *testing.T, r *running, d time.Duration, what string) {
	t.Helper()
	r.stopOnce.Do(func() {
		r.cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("%s: Run: %v", what, err)
			}
		case <-time.After(d):
			t.Errorf("%s: the daemon did not shut down within %v\n%s", what, d, goroutines())
		}
	})
}

// goroutines returns the stacks of the process's goroutines.
func goroutines() string {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	return b.String()
}
