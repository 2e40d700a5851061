package web

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

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
// and task id, and each task's last status the server announced: a page's
// event stream opens a moment after the page was rendered, and gets on
// opening what was announced since (missed).
type taskFollowers struct {
	mu    sync.Mutex
	m     map[string]*followedTask
	order []string // keys, oldest first
}

// followedTask is one task's followers and last announced status.
type followedTask struct {
	shown  map[string]time.Time // session -> when it was last shown the task
	last   []byte               // the last "task" event, nil before any
	lastAt time.Time
}

func taskKey(server, id string) string { return server + "\x00" + id }

// note records that session was shown server's task id at now.
func (f *taskFollowers) note(server, id, session string, now time.Time) {
	if id == "" || session == "" {
		return
	}
	key := taskKey(server, id)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]*followedTask{}
	}
	ft := f.m[key]
	if ft == nil {
		ft = &followedTask{shown: map[string]time.Time{}}
		f.m[key] = ft
		f.order = append(f.order, key)
		for len(f.order) > maxFollowedTasks {
			delete(f.m, f.order[0])
			f.order = f.order[1:]
		}
	}
	if _, ok := ft.shown[session]; !ok && len(ft.shown) >= maxTaskFollowers {
		// The session shown it longest ago makes room.
		var oldest string
		for s, at := range ft.shown {
			if oldest == "" || at.Before(ft.shown[oldest]) {
				oldest = s
			}
		}
		delete(ft.shown, oldest)
	}
	ft.shown[session] = now
}

// announced keeps server's task id's new status (data, a "task" event)
// and returns the sessions that were shown the task.
func (f *taskFollowers) announced(server, id string, data []byte, now time.Time) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ft := f.m[taskKey(server, id)]
	if ft == nil {
		return nil
	}
	ft.last, ft.lastAt = data, now
	out := make([]string, 0, len(ft.shown))
	for s := range ft.shown {
		out = append(out, s)
	}
	return out
}

// missed returns the last status of every task session was shown that
// the server announced since it was shown it.
func (f *taskFollowers) missed(session string) [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][]byte
	for _, key := range f.order {
		ft := f.m[key]
		if at, ok := ft.shown[session]; ok && ft.last != nil && !ft.lastAt.Before(at) {
			out = append(out, ft.last)
		}
	}
	return out
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
	for _, s := range c.followers.announced(server, t.TaskID, data, c.now()) {
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
	tb, ok := c.apiTasker(w)
	if !ok {
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
	c.followers.note(server, id, se.id, c.now())
	writeJSON(w, http.StatusOK, taskStatusEvent{Server: server, taskRow: t})
}
