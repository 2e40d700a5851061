package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// httpPeer is the upstream name on streamable HTTP at url, with room for
// a loaded machine.
func httpPeer(name, url string) config.Server {
	return config.Server{Name: name, Transport: config.TransportHTTP, URL: url,
		ConnectTimeout: 30 * time.Second, RequestTimeout: 30 * time.Second, Enabled: true, LoadTools: true, TerminateOnClose: true}
}

// TestBrowserTasksLive starts the TypeScript SDK's simpleStreamableHttp
// example's delay tool as a task from its form and opens the Tasks page
// while the task is working: with no click, the page shows it completed,
// both from the server's notifications/tasks/status passed on over the
// event stream (the status endpoint blocked in the browser) and by
// polling tasks/get (the event stream blocked). One daemon and one
// example serve both.
func TestBrowserTasksLive(t *testing.T) {
	t.Parallel()
	r := startDaemon(t, testConfig(httpPeer("ex", testpeer.StartStreamableExample(t))))

	t.Run("refusals", func(t *testing.T) {
		t.Parallel()
		cl := newClient(t, r.url)
		resp, body := cl.do("GET", web.Prefix+"api/tasks/status?server=ex", "", "")
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `task=ID`) {
			t.Errorf("no task: HTTP %d %s, want 400 saying how to name it", resp.StatusCode, body)
		}
		// Until ex is connected, the answer says so: ask again until it
		// is the server's.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			resp, body = cl.do("GET", web.Prefix+"api/tasks/status?server=ex&task=no-such-task", "", "")
			if !strings.Contains(body, "not connected yet") || time.Now().After(deadline) {
				break
			}
		}
		if resp.StatusCode < 400 || !strings.Contains(body, "no-such-task") {
			t.Errorf("an unknown task: HTTP %d %s, want an error naming it", resp.StatusCode, body)
		}
	})

	for _, tc := range []struct {
		name, blocked, via string
	}{
		{"notification", "*://*:*/ui/api/tasks/status?*", "the server's notification"},
		{"polling", "*://*:*/ui/events", "polling"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := browser(t, 1280, 900)
			block := chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
				_, err := cdp.Call(ctx, tg, network.SetBlockedURLs, network.SetBlockedURLsParams{
					URLPatterns: []*network.BlockPattern{{URLPattern: tc.blocked, Block: true}}})
				return chromedp.Void{}, err
			})
			do(t, ctx, "blocking "+tc.blocked, block)

			// Long enough for the Tasks page to show the task working
			// on a loaded machine; short enough not to wait long.
			do(t, ctx, "opening delay", chromedp.Navigate(r.url+web.Prefix+"tool?server=ex&name=delay"))
			waitJS(t, ctx, "the form", `document.querySelector('.field[data-path="duration"] input') && document.getElementById("as-task")`)
			if !eval[bool](t, ctx, `document.getElementById("as-task").checked`) {
				do(t, ctx, "ticking Run as a task", click(chromedp.ID("as-task")))
			}
			do(t, ctx, "calling it as a task",
				chromedp.SetValue(chromedp.CSS(`.field[data-path="duration"] input`), "8000"),
				click(chromedp.ID("call-button")))
			waitJS(t, ctx, "the task started", resultPage("task")+` && document.querySelector("#task-started a")`)
			id := eval[string](t, ctx, `document.querySelector("#task-started code").textContent`)

			do(t, ctx, "following the task", click(chromedp.CSS(`#task-started a`)))
			row := `document.querySelector('#tasks tr[data-task=` + jsString(id) + `] [data-field="status"]')`
			waitJS(t, ctx, "the task listed", row)
			if s := eval[string](t, ctx, row+`.textContent`); s != "working" {
				t.Fatalf("the task listed as %q, want working (it ended before the page showed it: the test proves nothing)", s)
			}
			shot(t, ctx, "task-live-working-"+tc.name)
			waitJS(t, ctx, "the task completed by "+tc.via+", with no click", row+`.textContent === "completed"`)
			if cls := eval[string](t, ctx, row+`.className`); !strings.Contains(cls, "status-completed") {
				t.Errorf("the badge's class %q, want status-completed", cls)
			}
			shot(t, ctx, "task-live-completed-"+tc.name)
		})
	}
}
