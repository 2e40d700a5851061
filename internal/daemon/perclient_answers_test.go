//lint:file-ignore SA1019 the test forwards sampling with tools, deprecated only from protocol 2026-07-28; clients and servers use it today.

package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// This file checks that a prefix: never, per_client view answers a call
// the server would refuse — an unknown tool, arguments that fail the
// tool's schema — with the server's own answer, byte for byte, on both
// call paths (fast_path on and off), while other views keep the
// gateway's structured errors; and that sampling with tools is forwarded
// in full on the SDK's call path too (the fast path's is checked in
// perclient_never_test.go).

// answersServer is twinServer with a tool whose handler is typed, so
// that the go-sdk checks its arguments against its schema, one that
// answers every call with a JSON-RPC error, and one that says what
// arguments it was sent.
func answersServer() *mcp.Server {
	s := twinServer()
	type in struct {
		Name string `json:"name" jsonschema:"who to greet"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + a.Name}}}, nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "args", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("arguments: %q", req.Params.Arguments)}}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "refuse"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "refused <here>", Data: json.RawMessage(`{"why":"a test"}`)}
	})
	return s
}

// startAnswersTwin starts a daemon (fast_path as fast) serving
// answersServer as startTwin's view "tw", and the same server as "tws",
// with a shared session, in the ordinary prefix: never view "tws"; the
// default view shows both, prefixed.
func startAnswersTwin(t *testing.T, fast bool) *twin {
	t.Helper()
	return startTwinOf(t, answersServer(), func(cfg *config.Config, url string) {
		cfg.Gateway.DisableFastPath = !fast
		shared := httpUpstream("tws", url)
		shared.NoIdentityMeta = true
		cfg.Servers = append(cfg.Servers, shared)
		cfg.Gateway.Views = append(cfg.Gateway.Views, config.View{Name: "tws", Servers: []string{"tws"}, Prefix: config.PrefixNever})
	})
}

// answerOf returns the JSON-RPC response resp carries, as sent: the body
// of a JSON answer, or the data of the event stream's message that has
// an id and no method.
func answerOf(t *testing.T, resp *http.Response) json.RawMessage {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("HTTP %d %s", resp.StatusCode, b)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("reading the answer: %v", err)
		}
		return bytes.TrimSpace(b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(data), &m) == nil && len(m.ID) > 0 && m.Method == "" {
			return json.RawMessage(data)
		}
	}
	t.Fatalf("the event stream ended without an answer (%v)", sc.Err())
	return nil
}

// rawAnswer posts body in session s and returns the answer, as sent.
func rawAnswer(t *testing.T, s *rawSession, body string) json.RawMessage {
	t.Helper()
	return answerOf(t, s.post(body, nil))
}

// callBody is a tools/call of name with the raw JSON arguments args.
func callBody(name, args string) string {
	if args == "" {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `"}}`
	}
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}

// TestPrefixNeverPerClientAnswersAsTheServer sends the calls a server
// refuses itself directly and through the view, on both call paths, and
// compares the answers byte for byte; through other views the gateway's
// structured errors stay. With fast_path off, sampling with tools is
// forwarded in full too.
func TestPrefixNeverPerClientAnswersAsTheServer(t *testing.T) {
	t.Parallel()
	for _, fast := range []bool{true, false} {
		name := "fast_path"
		if !fast {
			name = "sdk_path"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tw := startAnswersTwin(t, fast)
			direct, through := newRawSession(t, tw.url, nil), newRawSession(t, tw.r.url+"/mcp/tw", nil)
			through.waitListed("greet") // the server is connected, as a client would find it

			// The calls the server refuses itself: an unknown tool is a
			// JSON-RPC error; arguments that fail the schema (or are not
			// an object) an isError result saying why.
			const invalid, rpcError = `validating \"arguments\"`, `"error":{"code":-32602`
			for _, c := range []struct {
				what, tool, args, sign string
				fastOnly               bool
			}{
				{what: "unknown tool", tool: "nope", args: `{}`, sign: rpcError},
				{what: "arguments that fail the schema", tool: "greet", args: `{"name":5}`, sign: invalid},
				{what: "arguments that are not an object", tool: "greet", args: `[1]`, sign: invalid},
				{what: "no arguments for a tool that needs some", tool: "greet", sign: invalid},
				// The go-sdk's client sends {} for no arguments: on the SDK's
				// path the server sees {} (docs/gateway.md says so).
				{what: "no arguments, as the server sees them", tool: "args", sign: `arguments: \"\"`, fastOnly: true},
				{what: "a tool's JSON-RPC error", tool: "refuse", args: `{}`, sign: rpcError},
			} {
				if c.fastOnly && !fast {
					continue
				}
				want := rawAnswer(t, direct, callBody(c.tool, c.args))
				got := rawAnswer(t, through, callBody(c.tool, c.args))
				if !strings.Contains(string(want), c.sign) {
					t.Fatalf("%s: directly the server answered %s, want %s in it (the case this test is about)", c.what, want, c.sign)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s: through the view\n%s\ndirectly\n%s", c.what, got, want)
				}
			}

			// Such calls are in the history, with the server's answer.
			tw.r.waitRecords(t, store.CallFilter{Server: "tw", Tool: "nope"}, func(recs []store.CallRecord) bool {
				return len(recs) == 1 && recs[0].Status == "error" && strings.Contains(recs[0].ErrorMessage, `unknown tool "nope"`)
			})
			tw.r.waitRecords(t, store.CallFilter{Server: "tw", Tool: "greet"}, func(recs []store.CallRecord) bool {
				for _, r := range recs {
					if r.ErrorKind != "tool_error" || !strings.Contains(r.ErrorMessage, `validating "arguments"`) {
						return false
					}
				}
				return len(recs) == 3 // the calls of greet above
			})

			// Views that are not the server — a shared session, prefixed
			// names — answer with the gateway's structured errors.
			for _, v := range []struct{ view, prefix string }{{"/mcp/tws", ""}, {"/mcp", "tw__"}} {
				cs := newRawSession(t, tw.r.url+v.view, nil)
				cs.waitListed(v.prefix + "greet")
				got := rawAnswer(t, cs, callBody(v.prefix+"nope", `{}`))
				var unknown struct {
					Error struct {
						Code int64 `json:"code"`
						Data struct {
							Type string `json:"error_type"`
						} `json:"data"`
					} `json:"error"`
				}
				if json.Unmarshal(got, &unknown) != nil || unknown.Error.Code != -32602 || unknown.Error.Data.Type != "not_found_error" {
					t.Errorf("%s: an unknown tool got %s, want -32602 with the structured not_found_error in data", v.view, got)
				}
				got = rawAnswer(t, cs, callBody(v.prefix+"greet", `{"name":5}`))
				var invalid struct {
					Result mcp.CallToolResult `json:"result"`
				}
				if json.Unmarshal(got, &invalid) != nil || !invalid.Result.IsError || !strings.Contains(textOf(&invalid.Result), `"error_type":"validation_error"`) {
					t.Errorf("%s: arguments that fail the schema got %s, want an isError result with the structured validation_error", v.view, got)
				}
			}

			if !fast {
				t.Run("sampling with tools", func(t *testing.T) { samplingWithTools(t, tw) })
			}
		})
	}
}
