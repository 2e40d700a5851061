package daemon

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
)

// numberedTasks is a streamable-HTTP MCP server with tasks (MCP
// 2025-11-25) written for these tests, for no peer does what they need:
// it numbers each session's tasks from "1" (so two sessions hand out the
// same ids), keeps them per session (another session is told a task does
// not exist), and lists one tool, "tooled", only to a session whose
// client declared sampling with tools (capabilities.sampling.tools),
// which the gateway's shared session does not declare — so only a
// client's own upstream session (session: per_client) lists it. Its
// tools take {"text": string}; a call names in its result the session
// that ran it. It speaks JSON-RPC by hand (the go-sdk v1.8.0 has no
// tasks): every answer is one JSON response but tasks/get's, an event
// stream that announces the task's status (notifications/tasks/status)
// before the answer; it opens no standalone stream (GET is 405), and it answers server/discover (protocol
// 2026-07-28) "method not found", so that a client falls back to
// initialize on 2025-11-25.
type numberedTasks struct {
	mu       sync.Mutex
	sessions map[string]*numberedSession
	opened   int
}

// numberedSession is one session of numberedTasks.
type numberedSession struct {
	name   string // "session-N", in the order they opened
	tooled bool   // its client declared sampling.tools
	tasks  []numberedTask
}

// numberedTask is a task, done as soon as it is created.
type numberedTask struct {
	id, text string
}

// numberedInfo is the server's serverInfo.
const numberedInfo = `{"name":"numbered-tasks","title":"Numbered tasks","version":"1.2.3"}`

// serve starts the server for the rest of the test and returns its
// endpoint.
func (s *numberedTasks) serve(t *testing.T) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// rpcMessage is a JSON-RPC message as the server reads it.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (s *numberedTasks) handle(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Allow", "POST, DELETE")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	case http.MethodDelete:
		s.mu.Lock()
		delete(s.sessions, r.Header.Get("Mcp-Session-Id"))
		s.mu.Unlock()
		return
	}
	var m rpcMessage
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, "not JSON-RPC", http.StatusBadRequest)
		return
	}
	if len(m.ID) == 0 || m.Method == "" {
		w.WriteHeader(http.StatusAccepted) // a notification or a response
		return
	}
	answer := func(result any, code int, msg string) {
		out := map[string]any{"jsonrpc": "2.0", "id": m.ID}
		if msg != "" {
			out["error"] = map[string]any{"code": code, "message": msg}
		} else {
			out["result"] = result
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch m.Method {
	case "server/discover":
		answer(nil, -32601, "Method not found")
		return
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
			Capabilities    struct {
				Sampling struct {
					Tools json.RawMessage `json:"tools"`
				} `json:"sampling"`
			} `json:"capabilities"`
		}
		_ = json.Unmarshal(m.Params, &p)
		version := "2025-11-25"
		if p.ProtocolVersion == "2025-06-18" || p.ProtocolVersion == "2025-03-26" {
			version = p.ProtocolVersion
		}
		if s.sessions == nil {
			s.sessions = map[string]*numberedSession{}
		}
		s.opened++
		sess := &numberedSession{name: "session-" + strconv.Itoa(s.opened), tooled: len(p.Capabilities.Sampling.Tools) > 0}
		s.sessions[sess.name] = sess
		w.Header().Set("Mcp-Session-Id", sess.name)
		answer(map[string]any{
			"protocolVersion": version,
			"capabilities":    map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}},
			"serverInfo":      json.RawMessage(numberedInfo),
		}, 0, "")
		return
	}
	sess := s.sessions[r.Header.Get("Mcp-Session-Id")]
	if sess == nil {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Task      json.RawMessage `json:"task"`
		TaskID    string          `json:"taskId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	find := func() *numberedTask {
		for i := range sess.tasks {
			if sess.tasks[i].id == p.TaskID {
				return &sess.tasks[i]
			}
		}
		answer(nil, -32602, fmt.Sprintf("Task not found: %s", p.TaskID))
		return nil
	}
	taskObject := func(id string) map[string]any {
		return map[string]any{"taskId": id, "status": "completed", "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": 60000}
	}
	switch m.Method {
	case "ping":
		answer(map[string]any{}, 0, "")
	case "tools/list":
		schema := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}}
		tools := []map[string]any{{"name": "work", "inputSchema": schema, "execution": map[string]any{"taskSupport": "optional"}}}
		if sess.tooled {
			tools = append(tools, map[string]any{"name": "tooled", "inputSchema": schema, "execution": map[string]any{"taskSupport": "optional"}})
		}
		answer(map[string]any{"tools": tools}, 0, "")
	case "tools/call":
		if p.Name != "work" && (p.Name != "tooled" || !sess.tooled) {
			answer(nil, -32602, fmt.Sprintf("unknown tool %q", p.Name))
			return
		}
		var args struct {
			Text *string `json:"text"`
		}
		if json.Unmarshal(p.Arguments, &args) != nil || args.Text == nil {
			answer(map[string]any{"isError": true, "content": []map[string]any{{"type": "text", "text": `validating "arguments": text: a string is required`}}}, 0, "")
			return
		}
		text := fmt.Sprintf("%s ran %s(%s)", sess.name, p.Name, *args.Text)
		if len(p.Task) == 0 {
			answer(map[string]any{"content": []map[string]any{{"type": "text", "text": text}}}, 0, "")
			return
		}
		id := strconv.Itoa(len(sess.tasks) + 1)
		sess.tasks = append(sess.tasks, numberedTask{id: id, text: text})
		answer(map[string]any{"task": taskObject(id)}, 0, "")
	case "tasks/get":
		if task := find(); task != nil {
			// Its status, announced on the request's stream before the
			// answer, as a server may announce it on any of its streams.
			status, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": taskObject(task.id)})
			result, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": taskObject(task.id)})
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: %s\n\nevent: message\ndata: %s\n\n", status, result)
		}
	case "tasks/result":
		if task := find(); task != nil {
			answer(map[string]any{"content": []map[string]any{{"type": "text", "text": task.text}},
				"_meta": map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": task.id}}}, 0, "")
		}
	case "tasks/cancel":
		if task := find(); task != nil {
			answer(nil, -32602, fmt.Sprintf("Cannot cancel task %s: it is already completed", task.id))
		}
	case "tasks/list":
		tasks := []map[string]any{}
		for _, task := range sess.tasks {
			tasks = append(tasks, taskObject(task.id))
		}
		answer(map[string]any{"tasks": tasks}, 0, "")
	default:
		answer(nil, -32601, "Method not found: "+m.Method)
	}
}
