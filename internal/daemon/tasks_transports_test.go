package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// This file checks that tasks work on every transport the gateway serves
// (serve --stdio, the legacy SSE endpoint, streamable HTTP), and that a
// task's status notifications reach its owner with no tasks/result open.

// wireClient is a client that speaks raw JSON-RPC, one message at a
// time, over a stream of messages: serve --stdio's connection (the
// go-sdk's transport), or a legacy SSE session.
type wireClient struct {
	t    *testing.T
	send func(msg []byte)
	in   chan map[string]any // what the gateway sends, in order
	// seen collects the notifications and requests read while waiting.
	seen []map[string]any
}

// dialStdio connects a raw client to serve --stdio's end tr.
func dialStdio(t *testing.T, tr mcp.Transport) *wireClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := tr.Connect(ctx)
	if err != nil {
		cancel()
		t.Fatalf("connecting to serve --stdio: %v", err)
	}
	c := &wireClient{t: t, in: make(chan map[string]any, 64)}
	c.send = func(msg []byte) {
		m, err := jsonrpc.DecodeMessage(msg)
		if err != nil {
			t.Fatalf("encoding %s: %v", msg, err)
		}
		if err := conn.Write(ctx, m); err != nil {
			t.Fatalf("writing %s: %v", msg, err)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(c.in)
		for {
			m, err := conn.Read(ctx)
			if err != nil {
				return
			}
			b, err := jsonrpc.EncodeMessage(m)
			if err != nil {
				continue
			}
			var v map[string]any
			if json.Unmarshal(b, &v) == nil {
				c.in <- v
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		conn.Close()
		<-done
	})
	return c
}

// dialSSE opens a legacy SSE session at url and connects a raw client to
// it: messages are posted to the session's endpoint, and what the
// gateway sends comes on the stream.
func dialSSE(t *testing.T, base string) *wireClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	var endpoint string
	for endpoint == "" && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			endpoint = data
		}
	}
	if endpoint == "" {
		cancel()
		t.Fatalf("the SSE stream has no endpoint event (%v)", sc.Err())
	}
	c := &wireClient{t: t, in: make(chan map[string]any, 64)}
	c.send = func(msg []byte) {
		req, err := http.NewRequest(http.MethodPost, base+endpoint, strings.NewReader(string(msg)))
		if err != nil {
			t.Fatalf("posting to the SSE session's endpoint %q: %v", endpoint, err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("posting %s: HTTP %d: %s", msg, resp.StatusCode, body)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(c.in)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			var v map[string]any
			if ok && json.Unmarshal([]byte(data), &v) == nil {
				c.in <- v
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
		<-done
	})
	return c
}

// next returns the next message the gateway sent.
func (c *wireClient) next(what string) map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.in:
		if !ok {
			c.t.Fatalf("the connection ended while waiting for %s; saw %v", what, c.seen)
		}
		return m
	case <-time.After(60 * time.Second):
		c.t.Fatalf("no %s within 60s; saw %v", what, c.seen)
		return nil
	}
}

// notify sends a notification.
func (c *wireClient) notify(method, params string) {
	c.send([]byte(`{"jsonrpc":"2.0","method":"` + method + `","params":` + params + `}`))
}

// call sends a request with id and returns its answer; the gateway's
// requests meanwhile are answered by answer, and they and its
// notifications are kept in seen.
func (c *wireClient) call(id, method, params string, answer func(method string, params map[string]any) any) (result, rpcErr map[string]any) {
	c.t.Helper()
	c.send([]byte(`{"jsonrpc":"2.0","id":"` + id + `","method":"` + method + `","params":` + params + `}`))
	for {
		m := c.next("the answer to " + method)
		if method, ok := m["method"].(string); ok {
			c.seen = append(c.seen, m)
			if rid, isCall := m["id"]; isCall {
				params, _ := m["params"].(map[string]any)
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rid, "result": answer(method, params)})
				c.send(b)
			}
			continue
		}
		if m["id"] != id {
			continue
		}
		result, _ = m["result"].(map[string]any)
		rpcErr, _ = m["error"].(map[string]any)
		return result, rpcErr
	}
}

// waitNotification reads until a notification with method whose params
// ok accepts, and returns its params.
func (c *wireClient) waitNotification(method string, ok func(params map[string]any) bool) map[string]any {
	c.t.Helper()
	for {
		m := c.next(method)
		c.seen = append(c.seen, m)
		params, _ := m["params"].(map[string]any)
		if m["method"] == method && ok(params) {
			return params
		}
	}
}

// handshake initializes the session, declaring elicitation, and waits
// until the gateway lists tool; it returns the answers to initialize and
// that tools/list.
func (c *wireClient) handshake(protocol, tool string) (init, list string) {
	c.t.Helper()
	res, rerr := c.call("init", "initialize", `{"protocolVersion":"`+protocol+`","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}`, answerAll)
	if rerr != nil {
		c.t.Fatalf("initialize: %v", rerr)
	}
	b, _ := json.Marshal(res)
	c.notify("notifications/initialized", `{}`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, rerr := c.call("list", "tools/list", `{}`, answerAll)
		l, _ := json.Marshal(res)
		if rerr == nil && strings.Contains(string(l), `"name":"`+tool+`"`) {
			return string(b), string(l)
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("tools/list never listed %s: %s %v", tool, l, rerr)
		}
		time.Sleep(50 * time.Millisecond) // polling the gateway's catalog: nothing to wait on
	}
}

// runExampleTask runs a task of the TypeScript SDK's
// simpleTaskInteractive example (upstream "tasks") from c, as the HTTP
// test does: the capability and taskSupport are declared, the call made
// as a task creates one, tasks/get and tasks/list show it, an unknown id
// is not found, and tasks/result brings the example's elicitation to c
// and then the result.
func runExampleTask(t *testing.T, c *wireClient, protocol string) {
	t.Helper()
	init, list := c.handshake(protocol, "tasks__confirm_delete")
	if !strings.Contains(init, `"tasks":{"requests":{"tools":{"call":{}}}}`) {
		t.Errorf("initialize = %s, want the example's tasks capability", init)
	}
	if !strings.Contains(list, `"execution":{"taskSupport":"required"}`) {
		t.Errorf("tools/list = %s, want the tools' taskSupport", list)
	}
	res, rerr := c.call("t-1", "tools/call", `{"name":"tasks__confirm_delete","arguments":{"filename":"a.txt"},"task":{"ttl":60000}}`, answerAll)
	task, _ := res["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if rerr != nil || id == "" {
		t.Fatalf("tools/call as a task: result %v, error %v; want a task", res, rerr)
	}
	if res, rerr := c.call("g-1", "tasks/get", `{"taskId":"`+id+`"}`, answerAll); rerr != nil || res["taskId"] != id {
		t.Fatalf("tasks/get: result %v, error %v", res, rerr)
	}
	if res, rerr := c.call("g-2", "tasks/get", `{"taskId":"no-such-task"}`, answerAll); res != nil || rerr == nil || rerr["code"] != float64(-32602) {
		t.Errorf("tasks/get of an unknown task: result %v, error %v; want -32602", res, rerr)
	}
	if res, rerr := c.call("l-1", "tasks/list", `{}`, answerAll); rerr != nil || !strings.Contains(mustJSON(res), `"taskId":"`+id+`"`) {
		t.Errorf("tasks/list: result %v, error %v; want the task", res, rerr)
	}
	var asked []string
	res, rerr = c.call("r-1", "tasks/result", `{"taskId":"`+id+`"}`, func(method string, params map[string]any) any {
		asked = append(asked, method)
		if method == "elicitation/create" {
			return map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
		}
		return answerAll(method, params)
	})
	if rerr != nil {
		t.Fatalf("tasks/result: %v", rerr)
	}
	if len(asked) == 0 || asked[0] != "elicitation/create" {
		t.Errorf("the client was asked %v, want the example's elicitation", asked)
	}
	if got := mustJSON(res); !strings.Contains(got, `Deleted 'a.txt'`) || !strings.Contains(got, `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
		t.Errorf("tasks/result = %s, want the deletion confirmed, related to the task", got)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestGatewayTasksOverStdio: serve --stdio takes tasks as streamable
// HTTP does, from a client speaking raw JSON-RPC over the go-sdk's
// transport (the go-sdk's client has no task methods to send).
func TestGatewayTasksOverStdio(t *testing.T) {
	t.Parallel()
	clientT := startStdio(t, testConfig(httpUpstream("tasks", sharedTaskExample(t))))
	c := dialStdio(t, clientT)
	// Before initialize, as the SDK answers any request.
	if res, rerr := c.call("early", "tasks/list", `{}`, answerAll); res != nil || rerr == nil || rerr["code"] != float64(-32600) {
		t.Errorf("tasks/list before initialize: result %v, error %v; want -32600", res, rerr)
	}
	runExampleTask(t, c, "2025-11-25")
}

// TestGatewayTasksOverSSE: the legacy SSE endpoint takes tasks as
// streamable HTTP does (the task methods are posted to the session and
// answered on its stream).
func TestGatewayTasksOverSSE(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(httpUpstream("tasks", sharedTaskExample(t))))
	// The server's capabilities are known once it has connected.
	newCapableSession(t, r.url+"/mcp", clientCaps).waitListed("tasks__confirm_delete")
	runExampleTask(t, dialSSE(t, r.url), "2024-11-05")
}

// TestGatewayTasksOverSSEFromTheTypeScriptClient runs the example's task
// through the legacy SSE endpoint with the TypeScript SDK's task client,
// which checks the gateway's tasks capability before it sends a task.
func TestGatewayTasksOverSSEFromTheTypeScriptClient(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(httpUpstream("tasks", sharedTaskExample(t))))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	lines, err := testpeer.RunTSClient(t, ctx, testpeer.TSClientInput{
		Target:      testpeer.TSTarget{Transport: "sse", URL: r.url + "/sse"},
		Elicitation: &testpeer.TSElicitation{Action: "accept", Content: map[string]any{"confirm": true}},
		Steps: []testpeer.TSStep{
			{"op": "list_tools", "want": []string{"tasks__confirm_delete"}},
			{"op": "call_task", "name": "tasks__confirm_delete", "arguments": map[string]any{"filename": "c.txt"}},
			{"op": "list_tasks"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	run, list := lines[2], lines[3]
	if !run.OK() || !strings.Contains(mustJSON(run["result"]), "Deleted 'c.txt'") {
		t.Fatalf("call_task: %v, want the deletion confirmed", run)
	}
	if !list.OK() || !strings.Contains(mustJSON(list), run["taskId"].(string)) {
		t.Errorf("list_tasks: %v, want the task", list)
	}
}

// isCompleted accepts the status notification of task id's end.
func isCompleted(id string) func(map[string]any) bool {
	return func(p map[string]any) bool { return p["taskId"] == id && p["status"] == "completed" }
}

// TestGatewayTaskStatusWithoutTasksResult: the TypeScript SDK's
// simpleStreamableHttp example announces its delay task's end with
// notifications/tasks/status on its standalone stream. Through the
// gateway it reaches the client that owns the task though no tasks/result
// is open: on a streamable-HTTP session's standalone stream (GET), on
// serve --stdio's connection, and on a legacy SSE session's stream.
func TestGatewayTaskStatusWithoutTasksResult(t *testing.T) {
	t.Parallel()
	cfg := testConfig(httpUpstream("ex", sharedStreamableExample(t)))
	const call = `{"name":"ex__delay","arguments":{"duration":300},"task":{"ttl":60000}}`
	taskOf := func(t *testing.T, res, rerr map[string]any) string {
		t.Helper()
		task, _ := res["task"].(map[string]any)
		id, _ := task["taskId"].(string)
		if rerr != nil || id == "" {
			t.Fatalf("tools/call as a task: result %v, error %v; want a task", res, rerr)
		}
		return id
	}

	t.Run("streamable HTTP", func(t *testing.T) {
		r := start(t, cfg)
		s := newCapableSession(t, r.url+"/mcp", clientCaps)
		s.waitListed("ex__delay")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.url+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the standalone stream: HTTP %d", resp.StatusCode)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		if !sc.Scan() { // the SDK's ": ok" comment: the stream is open
			t.Fatalf("the standalone stream ended at once: %v", sc.Err())
		}
		res, rerr := answerTo(t, s.exchangeID(`{"jsonrpc":"2.0","id":"t-1","method":"tools/call","params":`+call+`}`, `"t-1"`, answerAll), `"t-1"`)
		id := taskOf(t, res, rerr)
		got := make(chan map[string]any, 1)
		go func() {
			defer close(got)
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data: ")
				var m map[string]any
				if ok && json.Unmarshal([]byte(data), &m) == nil && m["method"] == "notifications/tasks/status" {
					if p, _ := m["params"].(map[string]any); isCompleted(id)(p) {
						got <- p
						return
					}
				}
			}
		}()
		select {
		case p, ok := <-got:
			if !ok {
				t.Fatalf("the standalone stream ended without the task's status (%v)", sc.Err())
			}
			if p["taskId"] != id {
				t.Errorf("status %v, want task %s's", p, id)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("no notifications/tasks/status on the standalone stream within 60s")
		}
		cancel()
	})

	t.Run("stdio", func(t *testing.T) {
		c := dialStdio(t, startStdio(t, cfg))
		c.handshake("2025-11-25", "ex__delay")
		res, rerr := c.call("t-1", "tools/call", call, answerAll)
		id := taskOf(t, res, rerr)
		c.waitNotification("notifications/tasks/status", isCompleted(id))
	})

	t.Run("SSE", func(t *testing.T) {
		r := start(t, cfg)
		newCapableSession(t, r.url+"/mcp", clientCaps).waitListed("ex__delay")
		c := dialSSE(t, r.url)
		c.handshake("2024-11-05", "ex__delay")
		res, rerr := c.call("t-1", "tools/call", call, answerAll)
		id := taskOf(t, res, rerr)
		c.waitNotification("notifications/tasks/status", isCompleted(id))
	})
}
