package web_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// TestBrowserTasks starts a tool call of the TypeScript SDK's
// simpleTaskInteractive example as a task from the tool's form (the
// tool runs only as a task: the box is ticked and fixed), follows the
// link to the Tasks page, polls the task and fetches its result: the
// example asks its question only while the result is fetched (on the
// session's standalone stream); fetching it is a tracked call, so the
// question is asked in the page, as during a tool call, and answered
// there; the task completes with the answer, and the history has the
// task's creation and its outcome.
func TestBrowserTasks(t *testing.T) {
	t.Parallel()
	r := startDaemon(t, testConfig(httpPeer("tasks", testpeer.StartTaskExample(t))))
	// The tool's page shows the form of a connected server's tool.
	if _, err := r.d.Pool().WaitConnected(context.Background(), "tasks", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t, 1280, 900)

	do(t, ctx, "opening confirm_delete", chromedp.Navigate(r.url+web.Prefix+"tool?server=tasks&name=confirm_delete"))
	waitJS(t, ctx, "the form", `document.querySelector('.field[data-path="filename"] input')`)
	if !eval[bool](t, ctx, `document.getElementById("as-task").checked && document.getElementById("as-task").disabled`) {
		t.Error(`"Run as a task" is not ticked and fixed for a tool that runs only as a task`)
	}
	do(t, ctx, "calling as a task", chromedp.SendKeys(chromedp.CSS(`.field[data-path="filename"] input`), "a.txt"),
		click(chromedp.ID("call-button")))
	waitJS(t, ctx, "the task started", resultPage("task")+` && document.querySelector("#task-started code")`)
	id := eval[string](t, ctx, `document.querySelector("#task-started code").textContent`)
	if status := eval[string](t, ctx, `document.getElementById("result-status").textContent`); status != "task" || id == "" {
		t.Fatalf("the call's status %q, task %q; want a task", status, id)
	}
	shot(t, ctx, "task-started")

	do(t, ctx, "following the task", click(chromedp.CSS(`#task-started a`)))
	waitJS(t, ctx, "the task listed", `document.querySelector('#tasks tr[data-task=`+jsString(id)+`]')`)
	do(t, ctx, "refreshing it", click(chromedp.CSS(`tr[data-task=`+jsString(id)+`] button[data-op="get"]`)))
	waitJS(t, ctx, "its state", `document.getElementById("task-state") && document.getElementById("task-state").textContent.includes(`+jsString(id)+`)`)
	do(t, ctx, "fetching its result", click(chromedp.CSS(`tr[data-task=`+jsString(id)+`] button[data-op="result"]`)))
	waitJS(t, ctx, "the example's question in the page", `document.querySelector('.ask[data-kind="form"] input[type="checkbox"]')`)
	shot(t, ctx, "task-question")
	do(t, ctx, "answering it", click(chromedp.CSS(`.ask[data-kind="form"] input[type="checkbox"]`)),
		click(chromedp.CSS(`.ask[data-kind="form"] .buttons button.primary`)))
	waitJS(t, ctx, "the result", resultPage(""))
	text := eval[string](t, ctx, `document.getElementById("result").innerText`)
	if status := eval[string](t, ctx, `document.getElementById("result-status").textContent`); status != "success" || !strings.Contains(text, "Deleted 'a.txt'") {
		t.Errorf("the task's result: %s %q, want the deletion the answer confirmed", status, text)
	}
	if s := eval[string](t, ctx, `document.querySelector('tr[data-task=`+jsString(id)+`] [data-field="status"]').textContent`); s != "completed" {
		t.Errorf("the listed status after the result: %q, want completed", s)
	}
	shot(t, ctx, "task-result")

	deadline := time.Now().Add(20 * time.Second)
	for {
		recs, err := r.store.Calls(context.Background(), store.CallFilter{Tool: "confirm_delete"})
		if err != nil {
			t.Fatal(err)
		}
		var statuses []string
		for _, rec := range recs {
			statuses = append(statuses, rec.Status)
		}
		slices.Sort(statuses)
		if slices.Equal(statuses, []string{"success", "task"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history statuses %v, want the task's creation and its outcome", statuses)
		}
		time.Sleep(50 * time.Millisecond) // polling the history: nothing to wait on
	}
}
