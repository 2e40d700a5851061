package web

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// The Tasks page follows its tasks live (tasks.js): while a listed task
// has not ended, the page asks its status again as often as the server's
// pollInterval says (GET /ui/api/tasks/status, never more than once a
// second), and the daemon passes on the server's own
// notifications/tasks/status as "task" events (Console.TaskStatus) to
// the sessions that were shown the task, so that a change shows at once
// when the server announces it. A task's status goes only to sessions
// that were shown it: the backend checked there that it was theirs.

// taskStatusEvent is a "task" event: a task's new state, as the server
// sent it.
type taskStatusEvent struct {
	Server string `json:"server"`
	taskRow
}

// maxFollowedTasks bounds the tasks whose status the console passes on;
// the oldest is forgotten first (its page still polls).
const maxFollowedTasks = 4096

// maxTaskFollowers bounds the sessions one task's status goes to.
const maxTaskFollowers = 16

// taskFollowers remembers which sessions were shown which task, by server
// and task id.
type taskFollowers struct {
	mu    sync.Mutex
	m     map[string][]string // key -> session ids
	order []string            // keys, oldest first
}

func taskKey(server, id string) string { return server + "\x00" + id }

// note records that session was shown server's task id.
func (f *taskFollowers) note(server, id, session string) {
	if id == "" || session == "" {
		return
	}
	key := taskKey(server, id)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string][]string{}
	}
	ss, known := f.m[key]
	for _, s := range ss {
		if s == session {
			return
		}
	}
	if len(ss) >= maxTaskFollowers {
		ss = ss[1:]
	}
	f.m[key] = append(ss, session)
	if known {
		return
	}
	f.order = append(f.order, key)
	for len(f.order) > maxFollowedTasks {
		delete(f.m, f.order[0])
		f.order = f.order[1:]
	}
}

// sessions returns the sessions that were shown server's task id.
func (f *taskFollowers) sessions(server, id string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.m[taskKey(server, id)]...)
}

// TaskStatus passes a server's notifications/tasks/status (its params:
// the task) to the open Tasks pages of the sessions that were shown the
// task. The daemon calls it from the upstream connection's events; it
// never blocks.
func (c *Console) TaskStatus(server string, params json.RawMessage) {
	var t taskRow
	if json.Unmarshal(params, &t) != nil || t.TaskID == "" || t.Status == "" {
		return
	}
	data := mustJSON(taskStatusEvent{Server: server, taskRow: t})
	for _, s := range c.followers.sessions(server, t.TaskID) {
		c.hub.publish(event{name: "task", data: data, session: s})
	}
}

// apiTaskStatus answers a task's status (tasks/get) as the Tasks page
// lists it: GET /ui/api/tasks/status?server=S&task=ID. The page polls it
// while the task has not ended.
func (c *Console) apiTaskStatus(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	server, id := q.Get("server"), q.Get("task")
	if server == "" || id == "" {
		writeFault(w, http.StatusBadRequest, fault.New(fault.Validation, "name the server and the task: ?server=NAME&task=ID"))
		return
	}
	tb, ok := c.opts.Backend.(control.Tasker)
	if !ok {
		writeFault(w, http.StatusNotImplemented, fault.New(fault.Internal, "this console's backend cannot reach tasks"))
		return
	}
	se := sessionOf(r)
	ans, err := tb.Task(r.Context(), control.TaskRequest{Server: server, Method: control.TaskGet, TaskID: id, Identity: c.callerIdentity(se)})
	if err != nil {
		// The page shows the message beside the task: it names the task,
		// and keeps the cause's words, details and suggestions.
		in := fault.As(err)
		out := fault.Wrap(in.Kind, err, "task %s of %s: %s", id, server, in.Message)
		out.Details, out.Fields, out.Suggestions = in.Details, in.Fields, in.Suggestions
		writeFault(w, statusOf(err), out)
		return
	}
	var t taskRow
	if err := json.Unmarshal(ans.Result, &t); err != nil {
		err = fault.Wrap(fault.Protocol, err, "decoding the status of task %s of %s", id, server)
		writeFault(w, http.StatusBadGateway, err)
		return
	}
	c.followers.note(server, id, se.id)
	writeJSON(w, http.StatusOK, taskStatusEvent{Server: server, taskRow: t})
}
