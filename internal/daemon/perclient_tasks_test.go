package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// delayTask is a tools/call of the TypeScript SDK's simpleStreamableHttp
// example's delay tool made as a task (it completes after a second: time
// for the owned upstream session's standalone stream, on which the server
// announces its end, to be open on a loaded machine).
const delayTask = `{"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"name":"delay","arguments":{"duration":1000},"task":{"ttl":60000}}}`

// newTask creates a delay task on s and returns its id.
func newTask(t *testing.T, s *rawSession) string {
	t.Helper()
	res, rerr := answerTo(t, s.exchangeID(delayTask, `"t"`, answerAll), `"t"`)
	task, _ := res["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if rerr != nil || id == "" {
		t.Fatalf("tools/call as a task: result %v, error %v; want a task", res, rerr)
	}
	return id
}

// taskRequest sends a task method for id on s and returns its answer.
func taskRequest(t *testing.T, s *rawSession, method, id string) (result, rpcErr map[string]any) {
	t.Helper()
	params := `{"taskId":"` + id + `"}`
	if id == "" {
		params = `{}`
	}
	return answerTo(t, s.exchangeID(`{"jsonrpc":"2.0","id":"q","method":"`+method+`","params":`+params+`}`, `"q"`, answerAll), `"q"`)
}

// listTasks sends tasks/list on s and returns the ids it lists, in its
// order, and whether it has a nextCursor.
func listTasks(t *testing.T, s *rawSession) ([]string, bool) {
	t.Helper()
	res, rerr := taskRequest(t, s, "tasks/list", "")
	if rerr != nil {
		t.Fatalf("tasks/list: error %v", rerr)
	}
	var ids []string
	tasks, _ := res["tasks"].([]any)
	for _, task := range tasks {
		m, _ := task.(map[string]any)
		id, _ := m["taskId"].(string)
		ids = append(ids, id)
	}
	_, more := res["nextCursor"]
	return ids, more
}

// isNotFound reports whether a task request was answered -32602, task
// not found.
func isNotFound(res, rerr map[string]any) bool {
	msg, _ := rerr["message"].(string)
	return res == nil && rerr != nil && rerr["code"] == float64(-32602) && strings.Contains(strings.ToLower(msg), "not found")
}

// standalone opens the standalone event stream (GET) of s and returns
// the messages that arrive on it; it is closed when the test ends.
func standalone(t *testing.T, s *rawSession) <-chan map[string]any {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("the standalone stream: HTTP %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	if !sc.Scan() { // the SDK's ": ok" comment: the stream is open
		t.Fatalf("the standalone stream ended at once: %v", sc.Err())
	}
	out := make(chan map[string]any, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer resp.Body.Close()
		defer close(out)
		for sc.Scan() {
			var m map[string]any
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && json.Unmarshal([]byte(data), &m) == nil {
				select {
				case out <- m:
				default: // nobody reads: the test has what it wanted
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return out
}

// TestTasksGoOnTheClientsOwnSession: a task a client creates through a
// prefix: never view of a per_client (and of a per_user) server is created
// on the client's (the user's) own upstream session, as an ordinary call
// is, and its tasks/get, tasks/result, tasks/list and tasks/cancel go to
// that session too; another client cannot see or cancel it. The server
// is the TypeScript SDK's simpleStreamableHttp example, whose task store
// binds a task to the session that created it (directly, another session
// is told it does not exist), so the task is not on the gateway's shared
// session. Through the per_client view, tasks/list is the server's own
// answer on the client's session: the client's tasks in the server's
// order, as directly; its status notification reaches the client's
// standalone stream from its own session.
func TestTasksGoOnTheClientsOwnSession(t *testing.T) {
	t.Parallel()
	url := sharedStreamableExample(t)
	pc := httpUpstream("pc", url)
	pc.Session, pc.NoIdentityMeta = config.SessionPerClient, true
	pu := httpUpstream("pu", url)
	pu.Session = config.SessionPerUser
	cfg := testConfig(pc, pu)
	cfg.Gateway.Views = []config.View{
		{Name: "pc", Servers: []string{"pc"}, Prefix: config.PrefixNever},
		{Name: "pu", Servers: []string{"pu"}, Prefix: config.PrefixNever},
	}
	r := start(t, cfg)

	// Directly: a session's tasks are its own.
	d1, d2 := newCapableSession(t, url, clientCaps), newCapableSession(t, url, clientCaps)
	direct := []string{newTask(t, d1), newTask(t, d1)}
	wantIDs, wantMore := listTasks(t, d1)
	if !slices.Equal(wantIDs, direct) {
		t.Fatalf("directly, tasks/list = %v, want the session's tasks %v in their order", wantIDs, direct)
	}
	if !isNotFound(taskRequest(t, d2, "tasks/get", direct[0])) {
		t.Fatalf("directly, another session's tasks/get of a task: want -32602 not found")
	}

	for _, server := range []string{"pc", "pu"} {
		t.Run(server, func(t *testing.T) {
			a := newCapableSession(t, r.url+"/mcp/"+server, clientCaps)
			b := newCapableSession(t, r.url+"/mcp/"+server, clientCaps)
			a.waitListed("delay")
			events := standalone(t, a)
			ids := []string{newTask(t, a), newTask(t, a)}

			// Not on the shared session, which the server binds no task
			// of a's to.
			shared, err := r.d.Pool().Client(server)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if raw, err := shared.Request(ctx, "tasks/get", map[string]any{"taskId": ids[0]}); err == nil {
				t.Fatalf("the shared upstream session has the client's task (%s): it was created there, not on the client's own session", raw)
			}

			if res, rerr := taskRequest(t, a, "tasks/get", ids[0]); rerr != nil || res["taskId"] != ids[0] {
				t.Fatalf("tasks/get by its creator: result %v, error %v", res, rerr)
			}
			for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
				if res, rerr := taskRequest(t, b, m, ids[0]); !isNotFound(res, rerr) {
					t.Errorf("another client's %s: result %v, error %v; want -32602 task not found", m, res, rerr)
				}
			}
			if got, _ := listTasks(t, b); len(got) != 0 {
				t.Errorf("another client's tasks/list = %v, want none", got)
			}

			got, more := listTasks(t, a)
			if server == "pc" {
				if !slices.Equal(got, ids) || more != wantMore {
					t.Errorf("tasks/list = %v (nextCursor %v), want the server's answer on the client's session, as directly: its tasks %v in their order (nextCursor %v)", got, more, ids, wantMore)
				}
			} else if len(got) != 2 || !slices.Contains(got, ids[0]) || !slices.Contains(got, ids[1]) {
				t.Errorf("tasks/list = %v, want the client's tasks %v", got, ids)
			}

			res, rerr := taskRequest(t, a, "tasks/result", ids[1])
			if c, _ := json.Marshal(res); rerr != nil || !strings.Contains(string(c), "Completed 1000ms delay") {
				t.Errorf("tasks/result: result %s, error %v; want the delay's result", c, rerr)
			}

			// The server announces each task's end on the standalone
			// stream of the session it is on, the client's own; the
			// gateway passes each on on the client's standalone stream,
			// as directly (the second's too, while its tasks/result
			// waited: perclient_callstream_test.go).
			deadline := time.After(30 * time.Second)
			for seen := map[string]bool{}; !seen[ids[0]]; {
				select {
				case m, ok := <-events:
					if !ok {
						t.Fatalf("the standalone stream ended before the task's status (saw %v)", seen)
					}
					if p, _ := m["params"].(map[string]any); m["method"] == "notifications/tasks/status" && p["status"] == "completed" {
						id, _ := p["taskId"].(string)
						seen[id] = true
					}
				case <-deadline:
					t.Fatalf("no notifications/tasks/status of the task's end on the client's standalone stream within 30s (saw %v)", seen)
				}
			}
			// Cancelling the ended task is the server's business: it
			// answers, on the task's session, that it has ended.
			if res, rerr := taskRequest(t, a, "tasks/cancel", ids[0]); rerr == nil && res["taskId"] != ids[0] {
				t.Errorf("tasks/cancel by its creator: result %v", res)
			} else if rerr != nil && isNotFound(res, rerr) {
				t.Errorf("tasks/cancel by its creator: %v, want the server's answer on the session the task is on", rerr)
			}
		})
	}
}
