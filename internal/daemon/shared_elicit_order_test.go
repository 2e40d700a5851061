package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestSharedSessionElicitationKeepsTheServersOrder: server-everything's
// trigger-elicitation-request asks for a form whose fields it writes in
// an order of its own, not by name. A client of a shared or per_user
// session — which the gateway asks with the go-sdk's Elicit, keeping its
// checks of the answer — gets the form's fields in that order, as
// directly: the TypeScript SDK's client over streamable HTTP (a stdio
// server on the lean call path, a streamable-HTTP server on the SDK's
// call path) and over legacy SSE, and a go-sdk client on protocol
// 2026-07-28 over serve --stdio, asked in the gateway's input-required
// result.
func TestSharedSessionElicitationKeepsTheServersOrder(t *testing.T) {
	t.Parallel()
	url := sharedEverything(t)
	evs := everythingPerClient(t)
	evs.Name, evs.Session, evs.NoIdentityMeta = "evs", config.SessionShared, true
	lean := testConfig(evs)
	lean.Gateway.Views = []config.View{{Name: "s", Servers: []string{"evs"}, Prefix: config.PrefixNever}}
	evh := httpUpstream("evh", url)
	evh.Session, evh.NoIdentityMeta, evh.RequestTimeout = config.SessionPerUser, true, 30*time.Second
	sdkPath := testConfig(evh)
	sdkPath.Gateway.DisableFastPath = true
	sdkPath.Gateway.Views = []config.View{{Name: "h", Servers: []string{"evh"}, Prefix: config.PrefixNever}}
	rl, rs := start(t, lean), start(t, sdkPath)

	sides := []struct {
		name   string
		target testpeer.TSTarget
	}{
		{"directly", testpeer.TSTarget{Transport: "http", URL: url}},
		{"shared stdio server, lean path", testpeer.TSTarget{Transport: "http", URL: rl.url + "/mcp/s"}},
		{"shared stdio server, legacy SSE", testpeer.TSTarget{Transport: "sse", URL: rl.url + "/sse/s"}},
		{"per_user HTTP server, SDK path", testpeer.TSTarget{Transport: "http", URL: rs.url + "/mcp/h"}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// One side at a time: over stdio nothing links a server's request to
	// the call that caused it, and the newest call to the server whose
	// client can answer is asked (the lean path's and legacy SSE's clients
	// share one server).
	orders := make([]any, len(sides))
	errs := make([]error, len(sides))
	for i, s := range sides {
		lines, err := testpeer.RunTSClient(t, ctx, testpeer.TSClientInput{
			Target:      s.target,
			Elicitation: &testpeer.TSElicitation{Action: "decline"},
			Steps: []testpeer.TSStep{
				{"op": "list_tools", "want": []string{"trigger-elicitation-request"}},
				{"op": "call", "name": "trigger-elicitation-request"},
			},
		})
		switch {
		case err != nil:
			errs[i] = err
		case len(lines) != 4:
			errs[i] = fmt.Errorf("got %d lines, want 4", len(lines))
		case !lines[2].OK():
			errs[i] = fmt.Errorf("calling trigger-elicitation-request: %v", lines[2].Err())
		default:
			orders[i] = lines[3]["elicitation_field_orders"]
		}
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", sides[i].name, err)
		}
	}
	direct, _ := orders[0].([]any)
	if len(direct) != 1 || slices.IsSortedFunc(direct[0].([]any), func(a, b any) int { return strings.Compare(a.(string), b.(string)) }) {
		t.Fatalf("directly the client got the form's fields in the order %v; want server-everything's own, not sorted by name (the test could not tell them apart)", direct)
	}
	for i := 1; i < len(sides); i++ {
		if diff := cmp.Diff(orders[0], orders[i]); diff != "" {
			t.Errorf("%s: the form's fields, directly (-) and through the gateway (+):\n%s", sides[i].name, diff)
		}
	}

	// A client on 2026-07-28 is asked in the gateway's input-required
	// result: its requested schema, in the same order.
	stdio := testConfig(evs)
	var (
		mu    sync.Mutex
		asked [][]string
	)
	read := func(m jsonrpc.Message) {
		r, ok := m.(*jsonrpc.Response)
		if !ok || r.Error != nil || !bytes.Contains(r.Result, []byte(`"input_required"`)) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, requestedFieldOrder(t, r.Result)...)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "rounds", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: declineElicitation})
	cs, err := c.Connect(ctx, recordingTransport{Transport: startStdio(t, stdio), read: read}, nil)
	if err != nil {
		t.Fatalf("connecting over serve --stdio: %v", err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("over serve --stdio the client negotiated %s; want 2026-07-28, the case this part is about", v)
	}
	waitTools(t, cs, "evs__trigger-elicitation-request", has("evs__trigger-elicitation-request"))
	call(t, cs, "evs__trigger-elicitation-request", map[string]any{})
	mu.Lock()
	defer mu.Unlock()
	want := direct[0].([]any)
	if len(asked) != 1 {
		t.Fatalf("in input-required results the client was asked %d forms (%v); want 1", len(asked), asked)
	}
	var got []any
	for _, f := range asked[0] {
		got = append(got, f)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("in an input-required result, the form's fields, directly (-) and through the gateway (+):\n%s", diff)
	}
}

// requestedFieldOrder returns the field names of each form an
// input-required result asks for, in the order the result writes them.
func requestedFieldOrder(t *testing.T, result json.RawMessage) [][]string {
	t.Helper()
	var res struct {
		InputRequests map[string]struct {
			Method string `json:"method"`
			Params struct {
				RequestedSchema struct {
					Properties json.RawMessage `json:"properties"`
				} `json:"requestedSchema"`
			} `json:"params"`
		} `json:"inputRequests"`
	}
	if err := json.Unmarshal(result, &res); err != nil {
		t.Errorf("decoding an input-required result: %v", err)
		return nil
	}
	var out [][]string
	for _, r := range res.InputRequests {
		if r.Method != "elicitation/create" {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(r.Params.RequestedSchema.Properties))
		var names []string
		depth := 0
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			switch tok {
			case json.Delim('{'), json.Delim('['):
				depth++
			case json.Delim('}'), json.Delim(']'):
				depth--
			default:
				if s, ok := tok.(string); ok && depth == 1 {
					names = append(names, s)
					// Skip the property's schema: a whole value.
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						t.Errorf("decoding the schema of %s: %v", s, err)
					}
				}
			}
		}
		out = append(out, names)
	}
	return out
}
