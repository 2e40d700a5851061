package daemon

//lint:file-ignore SA1019 elicitation is deprecated only from protocol 2026-07-28; clients and servers use it today.

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestPrefixNeverPerClientElicitationAsGiven: server-everything's
// trigger-elicitation-request asks for a form whose schema has defaults,
// naming no mode. A client of a prefix: never, session: per_client view
// is asked exactly what the server asks it directly (no mode added), and
// the server gets the client's answer as the client gave it (no defaults
// filled in for the fields the client left out) — on each hop apart:
//
//   - a stdio server (the upstream side's SDK client answers it, through
//     a receiving middleware), through the lean call path over streamable
//     HTTP and over legacy SSE (the session's connection);
//   - a streamable-HTTP server (the upstream side's own call path, which
//     leaves the answer alone) through the SDK's call path (fast_path
//     off), on the SDK's stream of the call.
//
// The TypeScript SDK's client (which fills in no defaults unless it
// declares so) shows both the request — the form's fields in the
// server's order too, on every path — and what the server got (its result echoes the
// raw answer); the go-sdk's client, which fills in
// defaults itself, shows the request's mode. The lean path with a
// streamable-HTTP server is in TestPrefixNeverPerClientTSClientIsTheServer.
func TestPrefixNeverPerClientElicitationAsGiven(t *testing.T) {
	t.Parallel()
	url := sharedEverything(t)
	evs := everythingPerClient(t)
	evs.Name, evs.NoIdentityMeta = "evs", true
	lean := testConfig(evs)
	lean.Gateway.Views = []config.View{{Name: "s", Servers: []string{"evs"}, Prefix: config.PrefixNever}}
	evh := httpUpstream("evh", url)
	evh.Session, evh.NoIdentityMeta, evh.RequestTimeout = config.SessionPerClient, true, 30*time.Second
	sdkPath := testConfig(evh)
	sdkPath.Gateway.DisableFastPath = true
	sdkPath.Gateway.Views = []config.View{{Name: "h", Servers: []string{"evh"}, Prefix: config.PrefixNever}}
	rl, rs := start(t, lean), start(t, sdkPath)
	for _, r := range []*running{rl, rs} {
		waitFor(t, "the daemon ready", func() bool {
			res, err := http.Get(r.url + "/readyz")
			if err != nil {
				return false
			}
			res.Body.Close()
			return res.StatusCode == http.StatusOK
		})
	}

	t.Run("TypeScript client", func(t *testing.T) {
		t.Parallel()
		sides := []struct {
			name   string
			target testpeer.TSTarget
		}{
			{name: "directly", target: testpeer.TSTarget{Transport: "http", URL: url}},
			{name: "stdio server, lean path", target: testpeer.TSTarget{Transport: "http", URL: rl.url + "/mcp/s"}},
			{name: "stdio server, legacy SSE", target: testpeer.TSTarget{Transport: "sse", URL: rl.url + "/sse/s"}},
			{name: "HTTP server, SDK path", target: testpeer.TSTarget{Transport: "http", URL: rs.url + "/mcp/h"}},
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		lines := make([][]testpeer.TSResult, len(sides))
		errs := make([]error, len(sides))
		var wg sync.WaitGroup
		for i, s := range sides {
			wg.Go(func() {
				lines[i], errs[i] = testpeer.RunTSClient(t, ctx, testpeer.TSClientInput{
					Target:      s.target,
					Elicitation: &testpeer.TSElicitation{Action: "accept", Content: map[string]any{"name": "Ada", "check": true}},
					Wire:        s.target.Transport == "http",
					Steps: []testpeer.TSStep{
						{"op": "list_tools", "want": []string{"trigger-elicitation-request"}},
						{"op": "call", "name": "trigger-elicitation-request"},
					},
				})
			})
		}
		wg.Wait()
		// What the client was asked (the summary's elicitation requests)
		// and what the server answered (its result echoes the answer it
		// got); over streamable HTTP also on which stream, and with what
		// else on it.
		seen := func(i int) (asked, call any) {
			t.Helper()
			if errs[i] != nil {
				t.Fatalf("%s: %v", sides[i].name, errs[i])
			}
			l := lines[i]
			if len(l) != 4 {
				t.Fatalf("%s: got %d lines, want 4", sides[i].name, len(l))
			}
			if !l[2].OK() {
				t.Fatalf("%s: calling trigger-elicitation-request: %v", sides[i].name, l[2].Err())
			}
			asked = map[string]any{"params": normalizeValue(l[3]["elicitation_requests"]), "field order": l[3]["elicitation_field_orders"]}
			return asked, normalizeLine(l[2], !l[2].OK() || l[2]["wire"] == nil, i > 0)
		}
		wantAsked, wantCall := seen(0)
		if order, _ := lines[0][3]["elicitation_field_orders"].([]any); len(order) != 1 || slices.IsSortedFunc(order[0].([]any), func(a, b any) int { return strings.Compare(a.(string), b.(string)) }) {
			t.Fatalf("directly the client got the form's fields in the order %v; want server-everything's own, not sorted by name (the test could not tell them apart)", order)
		}
		for i := 1; i < len(sides); i++ {
			asked, call := seen(i)
			if diff := cmp.Diff(wantAsked, asked); diff != "" {
				t.Errorf("%s: the client was asked otherwise than directly (-direct +view):\n%s", sides[i].name, diff)
			}
			want := wantCall
			if lines[i][2]["wire"] == nil {
				want = normalizeLine(lines[0][2], true, false)
			}
			if diff := cmp.Diff(want, call); diff != "" {
				t.Errorf("%s: the call's stream and the server's answer differ from directly (-direct +view):\n%s", sides[i].name, diff)
			}
		}
	})

	t.Run("go-sdk client", func(t *testing.T) {
		t.Parallel()
		sides := []struct{ name, url string }{
			{"directly", url},
			{"stdio server, lean path", rl.url + "/mcp/s"},
			{"HTTP server, SDK path", rs.url + "/mcp/h"},
		}
		type outcome struct {
			Asked  *mcp.ElicitParams
			Answer string
		}
		got := make([]outcome, len(sides))
		var mu sync.Mutex
		for i, s := range sides {
			opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				got[i].Asked = req.Params
				mu.Unlock()
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "check": true}}, nil
			}}
			cs := connectHTTP(t, s.url, opts)
			waitTools(t, cs, "trigger-elicitation-request", has("trigger-elicitation-request"))
			answer := textOf(call(t, cs, "trigger-elicitation-request", map[string]any{}))
			mu.Lock()
			got[i].Answer = answer
			mu.Unlock()
		}
		mu.Lock()
		defer mu.Unlock()
		if got[0].Asked == nil || got[0].Asked.Mode != "" {
			t.Fatalf("directly the client was asked %+v; want a form naming no mode (server-everything's)", got[0].Asked)
		}
		for i := 1; i < len(sides); i++ {
			if diff := cmp.Diff(got[0], got[i]); diff != "" {
				t.Errorf("%s: the client was asked, or the server answered, otherwise than directly (-direct +view):\n%s", sides[i].name, diff)
			}
		}
	})
}

// connectHTTP connects a go-sdk client with opts to the streamable-HTTP
// endpoint url until the test ends.
func connectHTTP(t *testing.T, url string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
