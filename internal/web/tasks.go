package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// The Tasks page follows the tasks the console's calls started ("Run as a
// task" on a tool's form, MCP 2025-11-25): it lists a server's tasks of
// the signed-in user with their status, and for one of them shows its
// status again (poll), fetches its result (which waits for the task to
// end, and records its outcome in the history) or cancels it. Each
// action is a plain form POST that renders the page again; with script,
// "Fetch result" is a tracked call instead (POST /ui/api/tasks/result):
// what the server asks while the result is awaited (input_required) is
// asked in the page, as during a tool call (asks.js), and the page shows
// the result when it comes (GET /ui/tasks?server=S&call=ID).

// taskRow is one task as the page lists it.
type taskRow struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	PollInterval  *int64 `json:"pollInterval"`
}

// tasksData is the Tasks page's data.
type tasksData struct {
	pageData
	Server string
	Tasks  []taskRow
	// Action is what was asked of Task (get, result, cancel), and its
	// outcome: the task's state, its result or why it failed.
	Action string
	Task   string
	State  *taskRow
	Result *resultView
	Error  *errorView
}

// tasksPage lists a server's tasks (GET), or acts on one (POST: op get,
// result or cancel, and task) and lists them after.
func (c *Console) tasksPage(w http.ResponseWriter, r *http.Request) {
	server := r.URL.Query().Get("server")
	if r.Method == http.MethodPost {
		server = r.PostFormValue("server")
	}
	if server == "" {
		c.renderError(w, r, http.StatusBadRequest, fault.New(fault.Validation, "name a server").
			WithSuggestions("follow the link a call started as a task shows, or open /ui/tasks?server=NAME"))
		return
	}
	tb, ok := c.opts.Backend.(control.Tasker)
	if !ok {
		c.renderError(w, r, http.StatusNotImplemented, fault.New(fault.Internal, "this console's backend cannot reach tasks"))
		return
	}
	identity := c.callerIdentity(sessionOf(r))
	d := &tasksData{pageData: pageData{Title: "Tasks of " + server}, Server: server}
	if id := r.URL.Query().Get("call"); id != "" && r.Method == http.MethodGet {
		// The outcome of a result fetched as a tracked call.
		wc, ok := c.calls.get(id, sessionOf(r).id)
		switch {
		case !ok || wc.taskID == "":
			d.Error = newErrorView(fault.New(fault.NotFound, "no task result %q in this session", id).
				WithSuggestions("results are kept for an hour; the history has every outcome"))
		default:
			wc.mu.Lock()
			d.Action, d.Task = control.TaskResult, wc.taskID
			switch {
			case !wc.done:
				d.Error = newErrorView(fault.New(fault.Validation, "the result of task %s is still awaited", wc.taskID))
			case wc.err != nil:
				d.Error = newErrorView(wc.err)
			default:
				d.Result = newResultView(wc.result, nil)
			}
			wc.mu.Unlock()
		}
	}
	if r.Method == http.MethodPost {
		d.Action, d.Task = r.PostFormValue("op"), r.PostFormValue("task")
		ans, err := tb.Task(r.Context(), control.TaskRequest{Server: server, Method: d.Action, TaskID: d.Task, Identity: identity})
		switch {
		case err != nil:
			d.Error = newErrorView(err)
		case d.Action == control.TaskResult:
			res, err := taskCallResult(ans, d.Task)
			if err != nil {
				d.Error = newErrorView(err)
				break
			}
			d.Result = newResultView(res, nil)
		default:
			var st taskRow
			if err := json.Unmarshal(ans.Result, &st); err != nil {
				d.Error = newErrorView(fault.Wrap(fault.Protocol, err, "decoding task %s", d.Task))
				break
			}
			d.State = &st
		}
	}
	ans, err := tb.Task(r.Context(), control.TaskRequest{Server: server, Method: control.TaskList, Identity: identity})
	if err != nil {
		if d.Error == nil {
			d.Error = newErrorView(err)
		}
	} else {
		var list struct {
			Tasks []taskRow `json:"tasks"`
		}
		if err := json.Unmarshal(ans.Result, &list); err == nil {
			d.Tasks = list.Tasks
		}
		// The page follows what it lists (taskfollow.go).
		for _, t := range d.Tasks {
			c.followers.note(server, t.TaskID, sessionOf(r).id, c.now())
		}
	}
	c.render(w, r, http.StatusOK, "tasks", d)
}

// tasksURL is the Tasks page of server.
func tasksURL(server string) string { return Prefix + "tasks?server=" + url.QueryEscape(server) }

// taskCallResult decodes a task's result as a call's.
func taskCallResult(ans *control.TaskAnswer, id string) (*control.CallResult, error) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(ans.Result, &res); err != nil {
		return nil, fault.Wrap(fault.Protocol, err, "decoding the result of task %s", id)
	}
	status := "success"
	if res.IsError {
		status = "error"
	}
	return &control.CallResult{Status: status, Result: &res}, nil
}

// apiTasker returns the backend's way to tasks, or answers 501 when it
// has none.
func (c *Console) apiTasker(w http.ResponseWriter) (control.Tasker, bool) {
	tb, ok := c.opts.Backend.(control.Tasker)
	if !ok {
		writeFault(w, http.StatusNotImplemented, fault.New(fault.Internal, "this console's backend cannot reach tasks"))
	}
	return tb, ok
}

// taskResultRequest is the body of POST /ui/api/tasks/result.
type taskResultRequest struct {
	Server string `json:"server"`
	Task   string `json:"task"`
}

// apiTaskResult starts waiting for a task's result as a tracked call of
// the session (202 with its state, as POST /ui/api/calls): what the
// server asks meanwhile is asked in the page, and the call's view is the
// Tasks page with the result.
func (c *Console) apiTaskResult(w http.ResponseWriter, r *http.Request) {
	var req taskResultRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxArgsBytes))
	if err != nil || json.Unmarshal(body, &req) != nil || req.Server == "" || req.Task == "" {
		writeFault(w, http.StatusBadRequest, fault.New(fault.Validation, "want a JSON object with server and task (the task's id)"))
		return
	}
	tb, ok := c.apiTasker(w)
	if !ok {
		return
	}
	se := sessionOf(r)
	ctx, cancel := context.WithCancel(c.ctx)
	wc := &webCall{id: randomToken()[:22], session: se.id, server: req.Server, tool: "tasks/result", taskID: req.Task,
		started: c.now(), cancel: cancel}
	if !c.track() {
		cancel()
		writeFault(w, http.StatusServiceUnavailable, fault.New(fault.Cancelled, "the daemon is shutting down"))
		return
	}
	c.calls.add(wc)
	ctx = answer.With(ctx, &webAnswerer{c: c, wc: wc, callCtx: ctx})
	identity := c.callerIdentity(se)
	go func() {
		defer c.wg.Done()
		defer cancel()
		var res *control.CallResult
		ans, err := tb.Task(ctx, control.TaskRequest{Server: req.Server, Method: control.TaskResult, TaskID: req.Task, Identity: identity})
		if err == nil {
			res, err = taskCallResult(ans, req.Task)
		}
		wc.mu.Lock()
		wc.done, wc.finished, wc.result, wc.err = true, c.now(), res, err
		wc.mu.Unlock()
		if err != nil && !errors.Is(err, context.Canceled) {
			c.logger.Info("console task result failed", logKeyServer, req.Server, logKeyErr, err)
		}
		c.publishCall(wc)
	}()
	writeJSON(w, http.StatusAccepted, wc.state(c.now()))
}
