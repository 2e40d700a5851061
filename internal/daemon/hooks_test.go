package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/hooks"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/llm/llmtest"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// eventSink is an HTTP server that http hook actions post events to.
type eventSink struct {
	srv    *httptest.Server
	mu     sync.Mutex
	events []map[string]any
}

func newEventSink(t *testing.T) *eventSink {
	s := &eventSink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			t.Errorf("the sink got a body that is not a JSON object: %v", err)
		}
		s.mu.Lock()
		s.events = append(s.events, ev)
		s.mu.Unlock()
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// wait returns the first event the sink got that matches, within 20s.
func (s *eventSink) wait(t *testing.T, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		for _, ev := range s.events {
			if match(ev) {
				s.mu.Unlock()
				return ev
			}
		}
		s.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Fatalf("the sink never got %s; it got %d events: %v", what, len(s.events), s.events)
	return nil
}

func isEvent(name string, kv ...string) func(map[string]any) bool {
	return func(ev map[string]any) bool {
		if ev["event"] != name {
			return false
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if fmt.Sprint(ev[kv[i]]) != kv[i+1] {
				return false
			}
		}
		return true
	}
}

// TestHooksInTheDaemon: the daemon's calls fire tool.before (a guard that
// denies) and tool.after, server state changes fire server.*, and events
// posted to the gateway address and the control socket run their hooks.
func TestHooksInTheDaemon(t *testing.T) {
	t.Parallel()
	sink := newEventSink(t)
	path := filepath.Join(t.TempDir(), "switchboard.yaml")
	writeConfig(t, path, map[string]string{"alpha": "ok"}, fmt.Sprintf(`hooks:
  - name: no-adding
    on: tool.before
    if:
      tool: add
    actions:
      - type: command
        command: [sh, -c, "echo adding is closed today >&2; exit 2"]
  - name: after
    on: tool.after
    actions:
      - {type: http, url: %[1]q}
  - name: servers
    on: server.*
    actions:
      - {type: http, url: %[1]q}
  - name: deploys
    on: deploy.*
    actions:
      - {type: http, url: %[1]q}
`, sink.srv.URL))
	cfg, err := config.Load(path, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg, func(o *Options) {
		if _, err := hooks.Trust(o.StateDir, path); err != nil {
			t.Fatal(err)
		}
	})

	sink.wait(t, "server.available for alpha", isEvent("server.available", "server", "alpha"))

	ctx := context.Background()
	if _, err := r.d.Pool().WaitConnected(ctx, "alpha", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.d.Catalog().Refresh(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	_, err = r.d.Engine().Call(ctx, toolcall.Request{Server: "alpha", Tool: "add", Arguments: map[string]any{"a": 1, "b": 2}})
	if fe := fault.As(err); err == nil || fe.Kind != fault.Authorization || !strings.Contains(fe.Message, "adding is closed today") {
		t.Fatalf("a call the guard denies: got %v, want an authorization error with the guard's reason", err)
	}
	if _, err := r.d.Engine().Call(ctx, toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "hi"}}); err != nil {
		t.Fatal(err)
	}
	sink.wait(t, "tool.after for echo", isEvent("tool.after", "server", "alpha", "tool", "echo"))

	// An event posted to the gateway address is queued (202).
	resp, err := http.Post(r.url+"/hooks/events/deploy.started", "application/json", strings.NewReader(`{"env": "prod"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /hooks/events/deploy.started: got %s, want 202", resp.Status)
	}
	sink.wait(t, "deploy.started", isEvent("deploy.started", "env", "prod"))

	// On the control socket, ?wait=true answers with the report.
	sock := control.SocketPath(r.stateDir)
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	defer hc.CloseIdleConnections()
	resp, err = hc.Post("http://switchboard/hooks/events/deploy.finished?wait=true", "application/json", bytes.NewReader([]byte(`{"env": "staging"}`)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var rep hooks.Report
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &rep) != nil {
		t.Fatalf("the control socket: got %s %s, want 200 with a report", resp.Status, body)
	}
	if rep.Event != "deploy.finished" || len(rep.Runs) != 1 || rep.Runs[0].Status != hooks.StatusSuccess {
		t.Errorf("the report: got %+v, want one successful run of deploys", rep)
	}

	// Killing the server's process makes it unavailable.
	cl, err := r.d.Pool().Client("alpha")
	if err != nil {
		t.Fatal(err)
	}
	cl.Close()
	sink.wait(t, "server.unavailable for alpha", isEvent("server.unavailable", "server", "alpha"))

	// Every run is in the store once the daemon stops.
	r.stop(t)
	runs, err := r.store.HookRuns(ctx, store.HookRunFilter{Hook: "no-adding"})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != string(hooks.StatusBlocked) {
		t.Errorf("the guard's runs: got %+v, want one blocked run", runs)
	}
}

// TestHookAgentAction: an agent action in the daemon runs the agent loop
// against the configured endpoint, with the daemon's tools.
func TestHookAgentAction(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		for _, m := range req.Chat {
			if m.Role == llm.RoleTool {
				return llmtest.Response{Text: "the echo said: " + m.Content}
			}
		}
		return llmtest.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "alpha__echo", Arguments: `{"message": "hi from the hook"}`}}}
	})
	path := filepath.Join(t.TempDir(), "switchboard.yaml")
	writeConfig(t, path, map[string]string{"alpha": "ok"}, fmt.Sprintf(`llm:
  base_url: %q
  model: scripted
  stream: false
hooks:
  - name: ask
    on: ask.*
    actions:
      - {type: agent, prompt: "Echo a greeting for {who}"}
`, model.URL()))
	cfg, err := config.Load(path, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg, func(o *Options) {
		if _, err := hooks.Trust(o.StateDir, path); err != nil {
			t.Fatal(err)
		}
	})
	ctx := context.Background()
	if _, err := r.d.Pool().WaitConnected(ctx, "alpha", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.d.Catalog().Refresh(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	rep, err := r.d.Hooks().Fire(ctx, "ask.greeting", map[string]any{"who": "the team"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Status != hooks.StatusSuccess || !strings.Contains(fmt.Sprint(rep.Runs[0].Output), "hi from the hook") {
		t.Fatalf("the agent action: got %+v, want a success whose output has the echoed text", rep.Runs)
	}
	reqs := model.Requests()
	if len(reqs) == 0 || !strings.Contains(fmt.Sprint(reqs[0].Chat), "Echo a greeting for the team") {
		t.Errorf("the model was not given the templated prompt: %+v", reqs)
	}
	r.stop(t)
	calls, err := r.store.Calls(ctx, store.CallFilter{Source: string(toolcall.SourceAgent)})
	if err != nil || len(calls) != 1 || calls[0].Tool != "echo" {
		t.Errorf("history of the agent's calls: got %+v (%v), want one echo", calls, err)
	}
}
