package daemon

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// This file checks tasks on prefix: never views of servers whose clients
// have upstream sessions of their own (issue 17), against numberedTasks
// (numberedtasks_test.go), a server that numbers each session's tasks
// from 1 and lists a tool only to a session whose client declared
// sampling with tools. One daemon serves every subtest: a prefix: never
// view of the server as per_client (the default view, /mcp, which serve
// --stdio serves too) and as per_user (/mcp/pu).

// tooledCaps declares sampling with tools, for which numberedTasks lists
// its tool "tooled".
const tooledCaps = `{"roots":{"listChanged":true},"sampling":{"tools":{}},"elicitation":{}}`

// askOn posts a request with id "c" and params on s and returns its
// answer.
func askOn(t *testing.T, s *rawSession, method, params string) (result, rpcErr map[string]any) {
	t.Helper()
	return answerTo(t, s.exchangeID(`{"jsonrpc":"2.0","id":"c","method":"`+method+`","params":`+params+`}`, `"c"`, answerAll), `"c"`)
}

// taskOf returns the id of the task a call made as a task created.
func taskOf(t *testing.T, what string, res, rerr map[string]any) string {
	t.Helper()
	task, _ := res["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if rerr != nil || id == "" {
		t.Fatalf("%s: result %v, error %v; want a task", what, res, rerr)
	}
	return id
}

// createTask sends tools/call with params (a task) on s and returns the
// id of the task it created.
func createTask(t *testing.T, s *rawSession, params string) string {
	t.Helper()
	res, rerr := askOn(t, s, "tools/call", params)
	return taskOf(t, params, res, rerr)
}

// listedIDs sends tasks/list with params on s and returns the ids it
// lists, in its order.
func listedIDs(t *testing.T, s *rawSession, params string) []string {
	t.Helper()
	res, rerr := askOn(t, s, "tasks/list", params)
	if rerr != nil {
		t.Fatalf("tasks/list: error %v", rerr)
	}
	ids := []string{}
	tasks, _ := res["tasks"].([]any)
	for _, task := range tasks {
		m, _ := task.(map[string]any)
		id, _ := m["taskId"].(string)
		ids = append(ids, id)
	}
	return ids
}

// resultText returns the text of a tasks/result result.
func resultText(res map[string]any) string {
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	c, _ := content[0].(map[string]any)
	text, _ := c["text"].(string)
	return text
}

// TestTasksOnViewsThatAreTheirServer (not parallel within: its subtests
// share one daemon and one server, whose session numbering they read).
func TestTasksOnViewsThatAreTheirServer(t *testing.T) {
	t.Parallel()
	var srv numberedTasks
	url := srv.serve(t)
	pc := httpUpstream("pc", url)
	pc.Session, pc.NoIdentityMeta = config.SessionPerClient, true
	pu := httpUpstream("pu", url)
	pu.Session, pu.NoIdentityMeta = config.SessionPerUser, true
	cfg := testConfig(pc, pu)
	cfg.Gateway.Views = []config.View{
		{Name: config.DefaultViewName, Servers: []string{"pc"}, Prefix: config.PrefixNever}, // also serve --stdio's
		{Name: "pu", Servers: []string{"pu"}, Prefix: config.PrefixNever},
	}
	r := start(t, cfg)

	// A call made as a task is checked as a plain call is on such a
	// view: a tool only the client's own session lists can be called as
	// a task, and what the server checks itself — an unknown tool,
	// arguments that fail its schema, none at all — gets the server's own
	// answer, as directly.
	t.Run("a task call is a plain call of the server", func(t *testing.T) {
		direct := newCapableSession(t, url, tooledCaps)
		view := newCapableSession(t, r.url+"/mcp", tooledCaps)
		view.waitListed("tooled") // the client's own session lists it; the catalog does not
		for _, c := range []struct{ what, params string }{
			{"a tool only the client's own session lists", `{"name":"tooled","arguments":{"text":"x"},"task":{"ttl":60000}}`},
			{"an unknown tool", `{"name":"nope","arguments":{"text":"x"},"task":{"ttl":60000}}`},
			{"arguments that fail the schema", `{"name":"work","arguments":{"text":5},"task":{"ttl":60000}}`},
			{"no arguments", `{"name":"work","task":{"ttl":60000}}`},
		} {
			wantRes, wantErr := askOn(t, direct, "tools/call", c.params)
			gotRes, gotErr := askOn(t, view, "tools/call", c.params)
			if wantRes == nil && wantErr == nil {
				t.Fatalf("%s: directly, no answer", c.what)
			}
			if diff := cmp.Diff(map[string]any{"result": wantRes, "error": wantErr}, map[string]any{"result": gotRes, "error": gotErr}); diff != "" {
				t.Errorf("%s as a task: the answer directly (-) and through the view (+):\n%s", c.what, diff)
			}
		}
	})

	// Two clients' own sessions number their tasks alike; each client
	// reaches its own task, lists it, and hears of its status.
	t.Run("the same task id on two clients' sessions", func(t *testing.T) {
		a := newCapableSession(t, r.url+"/mcp", clientCaps)
		b := newCapableSession(t, r.url+"/mcp", clientCaps)
		aEvents, bEvents := standalone(t, a), standalone(t, b)
		idA := createTask(t, a, `{"name":"work","arguments":{"text":"of a"},"task":{"ttl":60000}}`)
		idB := createTask(t, b, `{"name":"work","arguments":{"text":"of b"},"task":{"ttl":60000}}`)
		if idA != idB {
			t.Fatalf("the server gave the two sessions' first tasks ids %q and %q; the test wants them alike", idA, idB)
		}
		// The server announces the status of a's task, on a's session,
		// as it answers a's tasks/get: it reaches a (whose tasks/get
		// stream has ended by then: on its standalone stream), not b.
		if res, rerr := askOn(t, a, "tasks/get", `{"taskId":"`+idA+`"}`); rerr != nil || res["taskId"] != idA {
			t.Fatalf("a's tasks/get: result %v, error %v", res, rerr)
		}
		// Other notifications may come first on either stream (a list
		// change of the view, as its catalog settles): they are passed
		// over.
		isStatus := func(m map[string]any) bool { return m["method"] == "notifications/tasks/status" }
		timeout := time.After(30 * time.Second)
		for got := false; !got; {
			select {
			case m, ok := <-aEvents:
				if !ok {
					t.Fatal("a's standalone stream ended before its task's status")
				}
				got = isStatus(m)
			case m, ok := <-bEvents:
				if !ok {
					bEvents = nil // ended: nothing more to pass over
				} else if isStatus(m) {
					t.Fatalf("b's standalone stream got %v, a's task's status", m)
				}
			case <-timeout:
				t.Fatal("no status of a's task on a's standalone stream within 30s")
			}
		}
		for drained := false; !drained; {
			select {
			case m, ok := <-bEvents:
				if isStatus(m) {
					t.Errorf("b's standalone stream got %v, a's task's status", m)
				}
				drained = !ok
			default:
				drained = true
			}
		}
		for _, c := range []struct {
			s    *rawSession
			text string
		}{{a, "ran work(of a)"}, {b, "ran work(of b)"}} {
			if got := listedIDs(t, c.s, `{}`); !slices.Equal(got, []string{idA}) {
				t.Errorf("the client whose task %s: tasks/list = %v, want [%s]", c.text, got, idA)
			}
			res, rerr := askOn(t, c.s, "tasks/result", `{"taskId":"`+idA+`"}`)
			if got := resultText(res); rerr != nil || !strings.HasSuffix(got, c.text) {
				t.Errorf("tasks/result: %q (error %v), want the client's own task's result, which %s", got, rerr, c.text)
			}
		}
	})

	// On a per_user server tasks/list is the server's answer on the
	// user's session, in the server's order, keeping the tasks of the
	// client that asks (those it may tasks/get); another user's session
	// numbers its tasks alike.
	t.Run("per_user tasks/list", func(t *testing.T) {
		as := func(user string) string { return `"_meta":{"user_id":"` + user + `"}` }
		task := func(s *rawSession, user, text string) string {
			return createTask(t, s, `{"name":"work","arguments":{"text":"`+text+`"},"task":{"ttl":60000},`+as(user)+`}`)
		}
		a1 := newCapableSession(t, r.url+"/mcp/pu", clientCaps)
		a2 := newCapableSession(t, r.url+"/mcp/pu", clientCaps)
		b := newCapableSession(t, r.url+"/mcp/pu", clientCaps)
		first, second := task(a1, "ann", "a1 first"), task(a1, "ann", "a1 second")
		other := task(a2, "ann", "a2")
		bobs := task(b, "bob", "b")
		if bobs != first {
			t.Fatalf("bob's first task is %q and ann's %q: the test wants them alike", bobs, first)
		}
		for _, c := range []struct {
			what string
			s    *rawSession
			user string
			want []string
		}{
			{"ann's first client", a1, "ann", []string{first, second}},
			{"ann's second client", a2, "ann", []string{other}},
			{"bob's client", b, "bob", []string{bobs}},
		} {
			if got := listedIDs(t, c.s, `{`+as(c.user)+`}`); !slices.Equal(got, c.want) {
				t.Errorf("%s: tasks/list = %v, want %v: its own tasks on the user's session, in the server's order", c.what, got, c.want)
			}
		}
		res, rerr := askOn(t, b, "tasks/result", `{"taskId":"`+bobs+`",`+as("bob")+`}`)
		if got := resultText(res); rerr != nil || !strings.HasSuffix(got, "ran work(b)") {
			t.Errorf("bob's tasks/result: %q (error %v), want his own task's result", got, rerr)
		}
	})

	// On protocol 2026-07-28 every result names its server in _meta; the
	// results of task requests, which the gateway answers beside the SDK,
	// name the view's server as the SDK's results do (and as a server on
	// that protocol names itself in each of its results).
	t.Run("serverInfo on 2026-07-28", func(t *testing.T) {
		c := dialStdio(t, serveStdio(t, r))
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
		infoOf := func(what string, res, rerr map[string]any) string {
			t.Helper()
			if rerr != nil {
				t.Fatalf("%s: error %v", what, rerr)
			}
			m, _ := res["_meta"].(map[string]any)
			b, _ := json.Marshal(m["io.modelcontextprotocol/serverInfo"])
			return string(b)
		}
		ask := func(id, method, params string) string {
			t.Helper()
			res, rerr := c.call(id, method, params, answerAll)
			return infoOf(method, res, rerr)
		}
		var want map[string]any
		_ = json.Unmarshal([]byte(numberedInfo), &want)
		wantInfo := mustJSON(want)
		if got := ask("l", "tools/list", `{`+meta+`}`); got != wantInfo {
			t.Fatalf("tools/list's serverInfo = %s, want the server's %s (the SDK's results on this view)", got, wantInfo)
		}
		res, rerr := c.call("t", "tools/call", `{"name":"work","arguments":{"text":"x"},"task":{"ttl":60000},`+meta+`}`, answerAll)
		got := map[string]string{"tools/call as a task": infoOf("tools/call as a task", res, rerr)}
		id := taskOf(t, "tools/call as a task", res, rerr)
		for _, m := range []string{"tasks/get", "tasks/result"} {
			got[m] = ask("q-"+m, m, `{"taskId":"`+id+`",`+meta+`}`)
		}
		got["tasks/list"] = ask("q-list", "tasks/list", `{`+meta+`}`)
		for m, info := range got {
			if info != wantInfo {
				t.Errorf("%s's serverInfo = %s, want the server's %s, as on every result of 2026-07-28", m, info, wantInfo)
			}
		}
		// A tasks/result result is a tool's result: on 2026-07-28 it says
		// it is complete, as every complete CallToolResult of that
		// version does (the SDK's, a server's); a client of an older
		// version gets none.
		res, rerr = c.call("r", "tasks/result", `{"taskId":"`+id+`",`+meta+`}`, answerAll)
		if rerr != nil || res["resultType"] != "complete" {
			t.Errorf("tasks/result on 2026-07-28: %v (error %v); want resultType \"complete\"", res, rerr)
		}
		if res, rerr := c.call("r-old", "tasks/result", `{"taskId":"`+id+`"}`, answerAll); rerr != nil || res["resultType"] != nil {
			t.Errorf("tasks/result without 2026-07-28's _meta: %v (error %v); want no resultType", res, rerr)
		}
	})
}

// TestTaskCallBeforeInitializedIsATask: the SDK takes a client's requests
// once initialize is answered, and handles notifications/initialized only
// after answering its POST, so a client's next request may come first.
// A tools/call made as a task then is still a task (and tools/list still
// says which tools may be called as one), not a plain call with its task
// dropped. This client sends no notifications/initialized, so its
// requests always come first.
func TestTaskCallBeforeInitializedIsATask(t *testing.T) {
	t.Parallel()
	var srv numberedTasks
	cfg := testConfig(httpUpstream("nt", srv.serve(t)))
	cfg.Gateway.Views = []config.View{{Name: config.DefaultViewName, Servers: []string{"nt"}, Prefix: config.PrefixNever}}
	r := start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r.d.waitFirstAttempts(ctx)

	s := &rawSession{t: t, url: r.url + "/mcp"}
	resp := s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":`+clientCaps+`,"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	readAll(t, resp)
	if s.id = resp.Header.Get("Mcp-Session-Id"); s.id == "" {
		t.Fatalf("initialize: no session id (status %d)", resp.StatusCode)
	}
	res, rerr := askOn(t, s, "tools/list", `{}`)
	tools, _ := res["tools"].([]any)
	var execution any
	for _, tool := range tools {
		if m, _ := tool.(map[string]any); m["name"] == "work" {
			execution = m["execution"]
		}
	}
	if want := map[string]any{"taskSupport": "optional"}; !cmp.Equal(execution, any(want)) {
		t.Errorf("tools/list: work's execution is %v (result %v, error %v), want %v as the server lists it", execution, res, rerr, want)
	}
	id := createTask(t, s, `{"name":"work","arguments":{"text":"x"},"task":{"ttl":60000}}`)
	if res, rerr := askOn(t, s, "tasks/get", `{"taskId":"`+id+`"}`); rerr != nil || res["taskId"] != id {
		t.Errorf("tasks/get of the task the call created: result %v, error %v", res, rerr)
	}
}
