package web

import (
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// The Tasks page follows the tasks the console's calls started ("Run as a
// task" on a tool's form, MCP 2025-11-25): it lists a server's tasks of
// the signed-in user with their status, and for one of them shows its
// status again (poll), fetches its result (which waits for the task to
// end, and records its outcome in the history) or cancels it. Plain
// forms, no script: each action is a POST that renders the page again.

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
	if r.Method == http.MethodPost {
		d.Action, d.Task = r.PostFormValue("op"), r.PostFormValue("task")
		ans, err := tb.Task(r.Context(), control.TaskRequest{Server: server, Method: d.Action, TaskID: d.Task, Identity: identity})
		switch {
		case err != nil:
			d.Error = newErrorView(err)
		case d.Action == control.TaskResult:
			var res mcp.CallToolResult
			if err := json.Unmarshal(ans.Result, &res); err != nil {
				d.Error = newErrorView(fault.Wrap(fault.Protocol, err, "decoding the result of task %s", d.Task))
				break
			}
			status := "success"
			if res.IsError {
				status = "error"
			}
			d.Result = newResultView(&control.CallResult{Status: status, Result: &res}, nil)
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
	}
	c.render(w, r, http.StatusOK, "tasks", d)
}
