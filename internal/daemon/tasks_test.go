package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// sharedTaskExample returns the endpoint of the TypeScript SDK's task
// example that the package's tests share (testpeer.Shared): each test's
// daemon opens its own session on it, and the gateway keeps each client's
// tasks to that client whatever the example's shared task store holds, so
// what the tests check is the gateway's, not the example's process.
func sharedTaskExample(t *testing.T) string {
	t.Helper()
	return testpeer.Shared(t, "task example", testpeer.StartTaskExample)
}

// answerTo returns the answer to id among msgs: its result and error.
func answerTo(t *testing.T, msgs []map[string]any, id string) (result, rpcErr map[string]any) {
	t.Helper()
	for _, m := range msgs {
		b, _ := json.Marshal(m["id"])
		if _, isCall := m["method"]; isCall || string(b) != id {
			continue
		}
		result, _ = m["result"].(map[string]any)
		rpcErr, _ = m["error"].(map[string]any)
		return result, rpcErr
	}
	t.Fatalf("no answer to %s among %v", id, msgs)
	return nil, nil
}

// TestGatewayForwardsTasks runs a task of the TypeScript SDK's
// simpleTaskInteractive example through the gateway, from a raw client
// that opens no standalone stream: the call made as a task goes through
// the engine (recorded as a task), the example's elicitation (which it
// sends on its standalone stream while tasks/result waits) reaches the
// client on its tasks/result stream, the result is recorded as the
// call's outcome; another client's session cannot see the task at all.
func TestGatewayForwardsTasks(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(httpUpstream("tasks", sharedTaskExample(t))))
	a := newCapableSession(t, r.url+"/mcp", clientCaps)
	b := newCapableSession(t, r.url+"/mcp", clientCaps)
	a.waitListed("tasks__confirm_delete")

	// What the SDK's server cannot say: the server's tasks capability and
	// each tool's taskSupport.
	init := readAll(t, (&rawSession{t: t, url: r.url + "/mcp"}).post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil))
	if !strings.Contains(init, `"tasks":{"requests":{"tools":{"call":{}}}}`) {
		t.Errorf("initialize = %s, want the example's tasks capability", init)
	}
	list, _ := answerTo(t, a.exchangeID(`{"jsonrpc":"2.0","id":"tl","method":"tools/list","params":{}}`, `"tl"`, answerAll), `"tl"`)
	if c, _ := json.Marshal(list); !strings.Contains(string(c), `"execution":{"taskSupport":"required"}`) {
		t.Errorf("tools/list = %s, want the tools' taskSupport", c)
	}

	msgs := a.exchangeID(`{"jsonrpc":"2.0","id":"t-1","method":"tools/call","params":{"name":"tasks__confirm_delete","arguments":{"filename":"a.txt"},"task":{"ttl":60000}}}`, `"t-1"`, answerAll)
	res, rerr := answerTo(t, msgs, `"t-1"`)
	task, _ := res["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if rerr != nil || id == "" {
		t.Fatalf("tools/call as a task: result %v, error %v; want a task", res, rerr)
	}
	if st := task["status"]; st != "working" && st != "input_required" {
		t.Errorf("the new task's status is %v, want working or input_required", st)
	}

	get := `{"jsonrpc":"2.0","id":"g-1","method":"tasks/get","params":{"taskId":"` + id + `"}}`
	if res, rerr := answerTo(t, a.exchangeID(get, `"g-1"`, answerAll), `"g-1"`); rerr != nil || res["taskId"] != id {
		t.Fatalf("tasks/get by its owner: result %v, error %v", res, rerr)
	}
	for _, body := range []string{get, strings.Replace(get, "tasks/get", "tasks/result", 1), strings.Replace(get, "tasks/get", "tasks/cancel", 1)} {
		res, rerr := answerTo(t, b.exchangeID(body, `"g-1"`, answerAll), `"g-1"`)
		if res != nil || rerr == nil || rerr["code"] != float64(-32602) || !strings.Contains(rerr["message"].(string), "not found") {
			t.Fatalf("another session's %.40s: result %v, error %v; want -32602 task not found", body, res, rerr)
		}
	}
	if res, _ := answerTo(t, b.exchangeID(`{"jsonrpc":"2.0","id":"l-1","method":"tasks/list"}`, `"l-1"`, answerAll), `"l-1"`); len(res["tasks"].([]any)) != 0 {
		t.Fatalf("another session's tasks/list: %v, want no tasks", res)
	}

	var asked []string
	msgs = a.exchangeID(`{"jsonrpc":"2.0","id":"r-1","method":"tasks/result","params":{"taskId":"`+id+`"}}`, `"r-1"`, func(method string, params map[string]any) any {
		asked = append(asked, method)
		if method == "elicitation/create" {
			return map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
		}
		return answerAll(method, params)
	})
	res, rerr = answerTo(t, msgs, `"r-1"`)
	if rerr != nil {
		t.Fatalf("tasks/result: %v", rerr)
	}
	if !slices.Contains(asked, "elicitation/create") {
		t.Errorf("the client was asked %v, want the example's elicitation on its tasks/result stream", asked)
	}
	c, _ := json.Marshal(res)
	if !strings.Contains(string(c), `Deleted 'a.txt'`) || !strings.Contains(string(c), `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
		t.Errorf("tasks/result = %s, want the deletion confirmed, related to the task", c)
	}
	res, _ = answerTo(t, a.exchangeID(`{"jsonrpc":"2.0","id":"l-2","method":"tasks/list","params":{}}`, `"l-2"`, answerAll), `"l-2"`)
	if c, _ := json.Marshal(res); !strings.Contains(string(c), `"taskId":"`+id+`"`) || !strings.Contains(string(c), `"status":"completed"`) {
		t.Errorf("the owner's tasks/list = %s, want its task, completed", c)
	}

	recs := r.waitRecords(t, store.CallFilter{Tool: "confirm_delete"}, func(recs []store.CallRecord) bool { return len(recs) == 2 })
	var statuses []string
	for _, rec := range recs {
		statuses = append(statuses, rec.Status)
		if rec.Source != "gateway" || rec.Server != "tasks" {
			t.Errorf("record %+v, want source gateway, server tasks", rec)
		}
	}
	slices.Sort(statuses)
	if !slices.Equal(statuses, []string{"success", "task"}) {
		t.Errorf("the history has statuses %v, want the task's creation and its result", statuses)
	}
}

// TestGatewayTasksFromTheTypeScriptClient runs the example's task through
// the gateway with the TypeScript SDK's own task client (callToolStream),
// which checks the gateway's tasks capability before it sends a task and
// validates every answer against its schemas; it answers the example's
// elicitation, which reaches it on its tasks/result stream.
func TestGatewayTasksFromTheTypeScriptClient(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(httpUpstream("tasks", sharedTaskExample(t))))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	lines, err := testpeer.RunTSClient(t, ctx, testpeer.TSClientInput{
		Target:      testpeer.TSTarget{Transport: "http", URL: r.url + "/mcp"},
		Elicitation: &testpeer.TSElicitation{Action: "accept", Content: map[string]any{"confirm": true}},
		Steps: []testpeer.TSStep{
			{"op": "list_tools", "want": []string{"tasks__confirm_delete"}},
			{"op": "call_task", "name": "tasks__confirm_delete", "arguments": map[string]any{"filename": "b.txt"}},
			{"op": "list_tasks"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	run, list := lines[2], lines[3]
	if !run.OK() {
		t.Fatalf("call_task: %v", run)
	}
	if c, _ := json.Marshal(run["result"]); !strings.Contains(string(c), "Deleted 'b.txt'") {
		t.Errorf("call_task: %v, want the deletion confirmed", run)
	}
	if types, _ := json.Marshal(run["types"]); !strings.HasPrefix(string(types), `["taskCreated","taskStatus"`) || !strings.HasSuffix(string(types), `"result"]`) {
		t.Errorf("call_task's messages: %s, want taskCreated, taskStatus…, result", types)
	}
	if c, _ := json.Marshal(list); !list.OK() || !strings.Contains(string(c), run["taskId"].(string)) {
		t.Errorf("list_tasks: %s, want the task", c)
	}
	if c, _ := json.Marshal(lines[len(lines)-1]["elicitation_requests"]); !strings.Contains(string(c), "b.txt") {
		t.Errorf("the client was asked %s, want the example's question", c)
	}
}

// TestGatewayTasksStateless: without sessions a task is its creator's
// token user's: another user's token cannot see it, the creator's can.
func TestGatewayTasksStateless(t *testing.T) {
	t.Parallel()
	cfg := testConfig(httpUpstream("tasks", sharedTaskExample(t)))
	cfg.Gateway.Stateless = true
	cfg.Gateway.Tokens = []config.Token{{Name: "a", User: "alice", Secret: "alice-secret-0123456789"}, {Name: "b", User: "bob", Secret: "bob-secret-0123456789"}}
	r := start(t, cfg)
	as := func(secret string) *rawSession {
		return &rawSession{t: t, url: r.url + "/mcp", header: http.Header{"Authorization": {"Bearer " + secret}}}
	}
	alice, bob := as("alice-secret-0123456789"), as("bob-secret-0123456789")
	alice.waitListed("tasks__confirm_delete")
	res, rerr := answerTo(t, alice.exchangeID(`{"jsonrpc":"2.0","id":"t-1","method":"tools/call","params":{"name":"tasks__confirm_delete","arguments":{"filename":"s.txt"},"task":{"ttl":60000}}}`, `"t-1"`, answerAll), `"t-1"`)
	task, _ := res["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if rerr != nil || id == "" {
		t.Fatalf("tools/call as a task: result %v, error %v; want a task", res, rerr)
	}
	get := `{"jsonrpc":"2.0","id":"g-1","method":"tasks/get","params":{"taskId":"` + id + `"}}`
	if _, rerr := answerTo(t, bob.exchangeID(get, `"g-1"`, answerAll), `"g-1"`); rerr == nil || rerr["code"] != float64(-32602) {
		t.Errorf("bob's tasks/get of alice's task: error %v, want -32602 not found", rerr)
	}
	if res, rerr := answerTo(t, alice.exchangeID(get, `"g-1"`, answerAll), `"g-1"`); rerr != nil || res["taskId"] != id {
		t.Errorf("alice's tasks/get: %v, %v; want her task", res, rerr)
	}
}
