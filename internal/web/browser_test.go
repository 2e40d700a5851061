package web_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// hostileText is what a malicious MCP server puts in names, descriptions
// and results: each part would set window.__pwned if it ran.
const hostileText = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> Adds nothing.`

// hostileServer is an MCP server on 127.0.0.1 (streamable HTTP) whose tool
// description, parameter description and Markdown result carry script.
func hostileServer(t *testing.T) config.Server {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1"}, nil)
	type evilArgs struct {
		Note string `json:"note,omitempty" jsonschema:"<img src=x onerror=window.__pwned=3> a note"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "evil", Title: `<b onmouseover="window.__pwned=7">Evil</b>`, Description: hostileText},
		func(ctx context.Context, req *mcp.CallToolRequest, args evilArgs) (*mcp.CallToolResult, any, error) {
			md := "# Report\n\n<script>window.__pwned=4</script>\n\n<img src=x onerror=\"window.__pwned=5\">\n\n" +
				"[click me](javascript:window.__pwned=6)\n\n- kept: **bold**\n"
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: md}}}, nil, nil
		})
	// ask echoes its arguments; its schema has a string-or-object field
	// and a free-form object, which the form edits as text.
	srv.AddTool(&mcp.Tool{Name: "ask", Description: "Echoes its arguments.", InputSchema: json.RawMessage(`{
		"type": "object", "required": ["query"],
		"properties": {
			"query": {"oneOf": [{"type": "string", "minLength": 1}, {"type": "object", "properties": {"keywords": {"type": "array", "items": {"type": "string"}}}}]},
			"context": {"type": "object", "description": "Anything else"}
		}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return config.Server{
		Name: "hostile", Transport: config.TransportHTTP, URL: ts.URL, ConnectTimeout: 10 * time.Second,
		RequestTimeout: 10 * time.Second, TerminateOnClose: true, Enabled: true, LoadTools: true, LoadPrompts: true, LoadResources: true,
	}
}

func randomHex(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// processesWithEnv lists the processes whose environment holds kv.
func processesWithEnv(kv string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, v := range strings.Split(string(env), "\x00") {
			if v == kv {
				var pid int
				fmt.Sscan(e.Name(), &pid)
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// TestBrowser drives the console in Chromium against a real daemon with
// server-everything (twice: the shared one and a stdio child), a server that fails at start, and a hostile
// server behind it. The subtests share the daemon and the browser and run
// in order.
func TestBrowser(t *testing.T) {
	t.Parallel() // the browser tests wait more than they compute
	flag := filepath.Join(t.TempDir(), "broken")
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	victimMark := "SB_WEB_VICTIM=" + randomHex(t)
	victim := everything(t, "victim")
	k, v, _ := strings.Cut(victimMark, "=")
	victim.Env = map[string]string{k: v}
	flaky := testserver.Server(t, "flaky", "flaky", testserver.EnvFlag+"="+flag)
	// everything is the shared one over HTTP; victim, whose process the test
	// kills, is a stdio child of the daemon's own.
	r := startDaemon(t, testConfig(sharedEverything(t, "everything"), victim, flaky, hostileServer(t)))
	ctx := browser(t, 1280, 900)

	t.Run("servers update live when a server is killed", func(t *testing.T) {
		do(t, ctx, "opening the servers page", chromedp.Navigate(r.url+"/"))
		waitJS(t, ctx, "everything and victim connected",
			rowLabel("everything")+` === "connected" && `+rowLabel("victim")+` === "connected"`)
		shot(t, ctx, "servers")
		// Record every change of victim's state label, on this very page.
		eval[chromedp.Void](t, ctx, `window.__page = "same"; window.__labels = [];
			for (const tr of document.querySelectorAll('#servers tbody tr')) if (tr.dataset.server === "victim") {
				const el = tr.querySelector('[data-field="label"]');
				new MutationObserver(() => window.__labels.push(el.textContent)).observe(el, {childList: true, characterData: true, subtree: true});
			}`)
		pids := processesWithEnv(victimMark)
		if len(pids) == 0 {
			t.Fatal("found no server-everything process for victim")
		}
		for _, pid := range pids {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatalf("killing victim (pid %d): %v", pid, err)
			}
		}
		waitJS(t, ctx, "the page showing victim's loss", `window.__labels.some(l => l !== "connected")`)
		waitJS(t, ctx, "victim reconnected on the same page", rowLabel("victim")+` === "connected" && window.__page === "same"`)
		labels := eval[[]string](t, ctx, `window.__labels`)
		t.Logf("victim's states as the page showed them: %v", labels)
		shot(t, ctx, "servers-after-kill")
	})

	t.Run("auto-disabled server is re-enabled from the page", func(t *testing.T) {
		do(t, ctx, "opening the servers page", chromedp.Navigate(r.url+"/"))
		waitJS(t, ctx, "flaky auto-disabled", rowLabel("flaky")+` === "auto-disabled"`)
		waitJS(t, ctx, "the auto-disabled banner naming flaky",
			`!document.getElementById("autodisabled").hidden && document.getElementById("autodisabled-list").textContent.includes("flaky")`)
		reason := eval[string](t, ctx, `document.querySelector('tr[data-server="flaky"] [data-field="disabled_reason"]').textContent`)
		if reason == "" {
			t.Error("the auto-disabled row shows no reason")
		}
		// The last error says what happened, and the hint what to try.
		lastErr := eval[string](t, ctx, `document.querySelector('tr[data-server="flaky"] [data-field="last_error"]').textContent`)
		if want := "flaky: refusing to start (exited with code 4 before answering initialize)"; !strings.Contains(lastErr, want) {
			t.Errorf("flaky's last error: got %q, want it to contain %q", lastErr, want)
		}
		hint := eval[string](t, ctx, `(() => { const h = document.querySelector('tr[data-server="flaky"] [data-field="hint"]'); return h.hidden ? "" : h.textContent; })()`)
		if !strings.Contains(hint, "Try: run the command by hand to see what it does: ") {
			t.Errorf("flaky's hint: got %q, want the suggestion to run the command by hand", hint)
		}
		button := eval[string](t, ctx, `document.querySelector('tr[data-server="flaky"] button[data-action="enable"]').textContent`)
		if button != "Re-enable" {
			t.Errorf("enable button: got %q, want Re-enable", button)
		}
		shot(t, ctx, "auto-disabled")
		if err := os.Remove(flag); err != nil {
			t.Fatal(err)
		}
		do(t, ctx, "clicking Re-enable", click(chromedp.CSS(`tr[data-server="flaky"] button[data-action="enable"]`)))
		waitJS(t, ctx, "flaky connected, banner and hint gone",
			rowLabel("flaky")+` === "connected" && document.getElementById("autodisabled").hidden && document.querySelector('tr[data-server="flaky"] [data-field="hint"]').hidden`)
		shot(t, ctx, "re-enabled")
	})

	t.Run("generated form calls get-sum", func(t *testing.T) {
		do(t, ctx, "opening get-sum", chromedp.Navigate(r.url+web.Prefix+"tool?server=everything&name=get-sum"))
		waitJS(t, ctx, "the form", `document.querySelector('.field[data-path="a"] input') && document.querySelector('.field[data-path="b"] input')`)
		if n := eval[int](t, ctx, `document.querySelectorAll('#form-fields .req').length`); n != 2 {
			t.Errorf("required markers: got %d, want 2 (a and b)", n)
		}
		if typ := eval[string](t, ctx, `document.querySelector('.field[data-path="a"] input').type`); typ != "number" {
			t.Errorf("input for a number: got type %q, want number", typ)
		}
		// Client-side validation: b missing.
		do(t, ctx, "filling a", chromedp.SendKeys(chromedp.CSS(`.field[data-path="a"] input`), "2"),
			click(chromedp.ID("call-button")))
		waitJS(t, ctx, "the missing-field error at b",
			`!document.getElementById("form-errors").hidden && document.querySelector('.field[data-path="b"] .field-error').textContent.includes("required")`)
		shot(t, ctx, "get-sum-invalid")
		do(t, ctx, "filling b and calling", chromedp.SendKeys(chromedp.CSS(`.field[data-path="b"] input`), "3"),
			click(chromedp.ID("call-button")))
		waitJS(t, ctx, "the sum", resultPage("success"))
		text := eval[string](t, ctx, `document.getElementById("result").innerText`)
		if !strings.Contains(text, "5") {
			t.Errorf("result: got %q, want the sum 5", text)
		}
		// The form keeps the arguments of the call. The result is a new
		// page, whose form the script builds after the result shows.
		waitJS(t, ctx, "the form on the result page", `document.querySelector('.field[data-path="a"] input') !== null`)
		if a := eval[string](t, ctx, `document.querySelector('.field[data-path="a"] input').value`); a != "2" {
			t.Errorf("a after the call: got %q, want 2", a)
		}
		shot(t, ctx, "get-sum")
	})

	t.Run("raw JSON mode", func(t *testing.T) {
		do(t, ctx, "switching to JSON", click(chromedp.ID("raw-toggle")))
		raw := eval[string](t, ctx, `document.getElementById("raw-json").value`)
		var args map[string]any
		if err := json.Unmarshal([]byte(raw), &args); err != nil || args["a"] != 2.0 || args["b"] != 3.0 {
			t.Errorf("raw JSON from the form: got %q, want a=2 and b=3", raw)
		}
		do(t, ctx, "calling with a wrong type",
			chromedp.SetValue(chromedp.ID("raw-json"), `{"a": "two", "b": 3}`),
			click(chromedp.ID("call-button")))
		waitJS(t, ctx, "the type error", `!document.getElementById("form-errors").hidden && document.getElementById("form-errors").textContent.includes("a: got string, want number")`)
		shot(t, ctx, "raw-json-invalid")
		do(t, ctx, "calling with good JSON",
			chromedp.SetValue(chromedp.ID("raw-json"), `{"a": 40, "b": 2}`),
			click(chromedp.ID("call-button")))
		waitJS(t, ctx, "the sum 42", `document.getElementById("result-status") && document.getElementById("result").innerText.includes("42")`)
	})

	t.Run("free-form fields take text and JSON", func(t *testing.T) {
		do(t, ctx, "opening ask", chromedp.Navigate(r.url+web.Prefix+"tool?server=hostile&name=ask"))
		waitJS(t, ctx, "the form", `document.querySelector('.field[data-path="query"] textarea') && document.querySelector('.field[data-path="context"] textarea')`)
		if first := eval[string](t, ctx, `document.querySelector('#form-fields [data-path]:not([data-path=""])').dataset.path`); first != "query" {
			t.Errorf("first field: got %q, want the required query before context", first)
		}
		do(t, ctx, "typing a plain question and a JSON object",
			chromedp.SendKeys(chromedp.CSS(`.field[data-path="query"] textarea`), "where is the config loaded?"),
			chromedp.SendKeys(chromedp.CSS(`.field[data-path="context"] textarea`), `{"team": "core"}`),
			click(chromedp.ID("call-button")))
		waitJS(t, ctx, "the echo", resultPage("success"))
		var got map[string]any
		text := eval[string](t, ctx, `document.querySelector("#result pre").innerText`)
		if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &got); err != nil || got["query"] != "where is the config loaded?" || fmt.Sprint(got["context"]) != "map[team:core]" {
			t.Errorf("arguments the tool got: %q (%v), want the question as a string and the context as an object", text, err)
		}
		do(t, ctx, "a context that is not JSON",
			chromedp.SetValue(chromedp.CSS(`.field[data-path="context"] textarea`), "team core"),
			click(chromedp.ID("call-button")))
		waitJS(t, ctx, "the JSON error at context", `document.querySelector('.field[data-path="context"] .field-error').textContent.includes("not valid JSON")`)
		shot(t, ctx, "free-form")
	})

	t.Run("images render inline", func(t *testing.T) {
		do(t, ctx, "opening get-tiny-image", chromedp.Navigate(r.url+web.Prefix+"tool?server=everything&name=get-tiny-image"))
		waitJS(t, ctx, "the form", `document.getElementById("call-button")`)
		do(t, ctx, "calling", click(chromedp.ID("call-button")))
		waitJS(t, ctx, "the image, loaded under the CSP",
			`document.querySelector('#result img[src^="data:image/png;base64,"]') && document.querySelector('#result img').complete && document.querySelector('#result img').naturalWidth > 0`)
		shot(t, ctx, "image")
	})

	t.Run("stop switch and resume", func(t *testing.T) {
		do(t, ctx, "opening get-sum", chromedp.Navigate(r.url+web.Prefix+"tool?server=everything&name=get-sum"))
		waitJS(t, ctx, "the stop button", `!document.getElementById("stop-button").hidden && document.getElementById("stopped-banner").hidden`)
		do(t, ctx, "stopping", click(chromedp.ID("stop-button")))
		waitJS(t, ctx, "the stopped banner", `!document.getElementById("stopped-banner").hidden && document.getElementById("stop-button").hidden`)
		if !r.d.Engine().Stopped() {
			t.Error("the engine is not stopped")
		}
		do(t, ctx, "calling while stopped",
			chromedp.SendKeys(chromedp.CSS(`.field[data-path="a"] input`), "1"),
			chromedp.SendKeys(chromedp.CSS(`.field[data-path="b"] input`), "1"),
			click(chromedp.ID("call-button")))
		waitJS(t, ctx, "the refusal", `(document.getElementById("result") && document.getElementById("result").innerText.toLowerCase().includes("stop")) ||
			(!document.getElementById("form-errors").hidden && document.getElementById("form-errors").textContent.toLowerCase().includes("stop"))`)
		waitJS(t, ctx, "the banner after a reload", `!document.getElementById("stopped-banner").hidden`)
		shot(t, ctx, "stopped")
		do(t, ctx, "resuming", click(chromedp.ID("resume-button")))
		waitJS(t, ctx, "the banner gone", `document.getElementById("stopped-banner").hidden && !document.getElementById("stop-button").hidden`)
		if r.d.Engine().Stopped() {
			t.Error("the engine is still stopped after Resume")
		}
	})

	t.Run("browse and search", func(t *testing.T) {
		do(t, ctx, "searching tools", chromedp.Navigate(r.url+web.Prefix+"tools"),
			chromedp.SendKeys(chromedp.ID("f-q"), "sum\n"))
		waitJS(t, ctx, "the search result", `location.search.includes("q=sum") && document.querySelectorAll("#tools tbody tr").length > 0`)
		names := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#tools tbody tr")).map(tr => tr.dataset.tool)`)
		for _, n := range names {
			if n != "get-sum" {
				t.Errorf("searching for sum lists %q", n)
			}
		}
		if len(names) != 2 { // everything and victim
			t.Errorf("searching for sum: got %v, want get-sum of both server-everything instances", names)
		}
		shot(t, ctx, "tools-search")
		do(t, ctx, "prompts", chromedp.Navigate(r.url+web.Prefix+"tools?kind=prompts&server=everything"))
		waitJS(t, ctx, "the prompts", `document.querySelector("#prompts") && document.querySelector("#prompts").innerText.includes("args-prompt")`)
		do(t, ctx, "resources", chromedp.Navigate(r.url+web.Prefix+"tools?kind=resources&server=everything"))
		waitJS(t, ctx, "the resources", `document.querySelector("#resources") && document.querySelector("#resources").innerText.includes("demo://resource")`)
		shot(t, ctx, "resources")
	})

	t.Run("subscribed to a server-everything resource, its updates arrive", func(t *testing.T) {
		do(t, ctx, "resources", chromedp.Navigate(r.url+web.Prefix+"tools?kind=resources&server=everything"))
		href := eval[string](t, ctx, `document.querySelector('#resources a[href*="uri=demo"]').href`)
		do(t, ctx, "opening a static resource", chromedp.Navigate(href))
		waitJS(t, ctx, "its contents and the subscribe button", `document.getElementById("result") && document.getElementById("subscribe-button")`)
		do(t, ctx, "subscribing", click(chromedp.ID("subscribe-button")))
		waitJS(t, ctx, "subscribed", `!document.getElementById("unsubscribe-button").hidden`)
		// server-everything sends updates for subscribed resources once
		// this tool turns them on (one at once, then every 5 s).
		eval[chromedp.Void](t, ctx, `window.sb.api("POST", "/ui/api/calls", {server: "everything", tool: "toggle-subscriber-updates", arguments: {}}); 1`)
		waitJS(t, ctx, "an update on the page", `document.querySelectorAll("#updates li").length >= 1`)
		shot(t, ctx, "everything-subscription")
		do(t, ctx, "unsubscribing", click(chromedp.ID("unsubscribe-button")))
		waitJS(t, ctx, "unsubscribed", `!document.getElementById("subscribe-button").hidden`)
	})

	t.Run("long-running tool shows progress and is cancelled", func(t *testing.T) {
		do(t, ctx, "opening the long-running operation",
			chromedp.Navigate(r.url+web.Prefix+"tool?server=everything&name=trigger-long-running-operation"))
		waitJS(t, ctx, "the form", `document.querySelector('.field[data-path="duration"] input')`)
		do(t, ctx, "starting a 30 s operation",
			chromedp.SetValue(chromedp.CSS(`.field[data-path="duration"] input`), "30"),
			chromedp.SetValue(chromedp.CSS(`.field[data-path="steps"] input`), "30"),
			click(chromedp.ID("call-button")))
		waitJS(t, ctx, "progress", `!document.getElementById("progress-panel").hidden && document.getElementById("call-progress").value >= 1 &&
			document.getElementById("progress-text").textContent.includes("of 30")`)
		shot(t, ctx, "long-running-progress")
		do(t, ctx, "cancelling", click(chromedp.ID("cancel-button")))
		waitJS(t, ctx, "the cancelled result", resultPage("cancelled"))
		shot(t, ctx, "long-running-cancelled")
	})

	t.Run("history shows the calls", func(t *testing.T) {
		// The recorder writes in the background: once the store has both
		// calls, the page must list them.
		waitRecorded(t, r, store.CallFilter{Source: "web", Tool: "get-sum"}, 1, "success")
		waitRecorded(t, r, store.CallFilter{Source: "web", Tool: "trigger-long-running-operation"}, 1, "cancelled")
		do(t, ctx, "opening the history", chromedp.Navigate(r.url+web.Prefix+"history?source=web"))
		if !eval[bool](t, ctx, `(function(){ const rows = Array.from(document.querySelectorAll('#history tbody tr')).map(tr => tr.innerText);
			return rows.some(r => r.includes("get-sum") && r.includes("success") && r.includes("web")) &&
				rows.some(r => r.includes("trigger-long-running-operation") && r.includes("cancelled")) })()`) {
			fail(t, ctx, "the history does not list both calls the store holds", fmt.Errorf("missing rows"))
		}
		shot(t, ctx, "history")
		do(t, ctx, "filtering by tool", chromedp.Navigate(r.url+web.Prefix+"history?tool=get-sum"))
		rows := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#history tbody tr')).map(tr => tr.children[2].textContent)`)
		if len(rows) == 0 {
			t.Fatal("filtering by get-sum shows no calls")
		}
		for _, tool := range rows {
			if tool != "get-sum" {
				t.Errorf("filtered by get-sum, a row shows %q", tool)
			}
		}
		do(t, ctx, "opening a call", click(chromedp.CSS(`#history tbody tr a`)))
		waitJS(t, ctx, "the call's details", `document.querySelector("dl.details") && document.querySelector("dl.details").innerText.includes("get-sum")`)
		shot(t, ctx, "history-detail")
	})

	t.Run("hostile descriptions and results render as text", func(t *testing.T) {
		do(t, ctx, "opening hostile's tools", chromedp.Navigate(r.url+web.Prefix+"tools?server=hostile"))
		waitJS(t, ctx, "the evil tool listed", `document.querySelector('#tools tr[data-tool="evil"]')`)
		desc := eval[string](t, ctx, `document.querySelector('#tools tr[data-tool="evil"] td.description').textContent`)
		if !strings.Contains(desc, "<script>") || !strings.Contains(desc, "<img src=x onerror=") {
			t.Errorf("description: got %q, want the markup shown as text", desc)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('main script, main img, main b').length`); n != 0 {
			t.Errorf("the tools page has %d script/img/b elements from the server, want 0", n)
		}
		shot(t, ctx, "hostile-tools")

		do(t, ctx, "opening evil", chromedp.Navigate(r.url+web.Prefix+"tool?server=hostile&name=evil"))
		waitJS(t, ctx, "the form", `document.querySelector('.field[data-path="note"] input')`)
		help := eval[string](t, ctx, `document.querySelector('.field[data-path="note"] .help').textContent`)
		if !strings.Contains(help, "<img src=x onerror=") {
			t.Errorf("parameter help: got %q, want the markup as text", help)
		}
		do(t, ctx, "calling evil", click(chromedp.ID("call-button")))
		waitJS(t, ctx, "the result", resultPage("success"))
		if got := eval[string](t, ctx, `document.querySelector("#result .markdown h1") ? document.querySelector("#result .markdown h1").textContent : ""`); got != "Report" {
			t.Errorf("Markdown heading: got %q, want Report", got)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('main script, main img, main b, #result a[href^="javascript"]').length`); n != 0 {
			t.Errorf("the tool page has %d elements injected by the server, want 0", n)
		}
		if p := eval[string](t, ctx, `String(window.__pwned)`); p != "undefined" {
			t.Errorf("window.__pwned = %s: script from the MCP server ran", p)
		}
		shot(t, ctx, "hostile-tool")
	})

	t.Run("page validation agrees with the engine", func(t *testing.T) {
		do(t, ctx, "opening a tool page", chromedp.Navigate(r.url+web.Prefix+"tool?server=everything&name=get-sum"))
		waitJS(t, ctx, "the validator", `typeof window.sbValidate === "function"`)
		checkValidation(t, ctx)
		shot(t, ctx, "validation")
	})

	t.Run("hooks page", func(t *testing.T) {
		do(t, ctx, "opening the hooks page", chromedp.Navigate(r.url+web.Prefix+"hooks"))
		waitJS(t, ctx, "the hooks, the fire form and the run log",
			`document.querySelector("#hooks") && document.querySelector("#fire-event") && document.querySelector("#hook-runs")`)
		do(t, ctx, "a dry run of an event no hook matches",
			chromedp.SendKeys(chromedp.ID("fire-event"), "spec.plan.after"),
			chromedp.SendKeys(chromedp.ID("fire-fields"), "feature=001-x"),
			click(chromedp.CSS(`form.stack button[type="submit"]`)))
		waitJS(t, ctx, "the report", `document.querySelector("main").innerText.includes("Dry run of spec.plan.after") && document.querySelector("main").innerText.includes("No hook matched")`)
		shot(t, ctx, "hooks")
	})

	t.Run("phone width", func(t *testing.T) {
		for _, p := range []struct{ name, path string }{
			{"servers", "/"},
			{"tool", web.Prefix + "tool?server=everything&name=get-sum"},
			{"history", web.Prefix + "history"},
		} {
			do(t, ctx, "opening "+p.name+" at phone width", chromedp.EmulateViewport(390, 844), chromedp.Navigate(r.url+p.path))
			waitJS(t, ctx, "the page", `document.readyState === "complete" && document.querySelector("main h1")`)
			if overflow := eval[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth + 1`); overflow {
				t.Errorf("%s at 390 px scrolls sideways (scrollWidth %d)", p.name, eval[int](t, ctx, `document.documentElement.scrollWidth`))
			}
			shot(t, ctx, "phone-"+p.name)
		}
		do(t, ctx, "back to desktop", chromedp.EmulateViewport(1280, 900))
	})
}

// validationCases are schemas and argument objects that the page's
// validator and the engine's (catalog.Tool.ValidateArgs) must judge alike:
// valid or not, and which fields are wrong.
var validationCases = []struct {
	schema string
	args   []string
}{
	{`{"type":"object","required":["a"],"properties":{"a":{"type":"string","minLength":2,"maxLength":4,"pattern":"^[a-z]+$"}}}`,
		[]string{`{}`, `{"a":"x"}`, `{"a":"abcde"}`, `{"a":"AB"}`, `{"a":"abc"}`, `{"a":"ééé"}`, `{"a":3}`}},
	{`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":10}}}`,
		[]string{`{"n":0}`, `{"n":11}`, `{"n":2.5}`, `{"n":5}`, `{"n":"5"}`, `{}`}},
	{`{"type":"object","properties":{"x":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1,"multipleOf":0.25}}}`,
		[]string{`{"x":0}`, `{"x":1}`, `{"x":0.5}`, `{"x":0.3}`}},
	{`{"type":"object","properties":{"c":{"type":"string","enum":["red","green"]}}}`,
		[]string{`{"c":"blue"}`, `{"c":"red"}`, `{"c":null}`}},
	{`{"type":"object","properties":{"o":{"type":"object","required":["x"],"properties":{"x":{"type":"boolean"}}}}}`,
		[]string{`{"o":{}}`, `{"o":{"x":"yes"}}`, `{"o":{"x":true}}`, `{"o":[]}`}},
	{`{"type":"object","properties":{"l":{"type":"array","minItems":1,"maxItems":2,"uniqueItems":true,"items":{"type":"number","exclusiveMinimum":0}}}}`,
		[]string{`{"l":[]}`, `{"l":[1,2,3]}`, `{"l":[1,-1]}`, `{"l":[1]}`, `{"l":[2,2]}`}},
	{`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}}`,
		[]string{`{"a":"x"}`, `{"a":"x","b":1}`}},
	{`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"integer"}]},"w":{"oneOf":[{"type":"number"},{"type":"integer"}]}}}`,
		[]string{`{"v":true}`, `{"v":"s"}`, `{"w":1}`, `{"w":1.5}`}},
	{`{"type":"object","properties":{"z":{"type":["string","null"]},"k":{"const":"fixed"}}}`,
		[]string{`{"z":null}`, `{"z":1}`, `{"k":"fixed"}`, `{"k":"other"}`}},
	{`{"type":"object","$defs":{"pos":{"type":"integer","minimum":0}},"properties":{"p":{"$ref":"#/$defs/pos"}}}`,
		[]string{`{"p":-1}`, `{"p":3}`}},
}

// engineFields validates args the engine's way and returns the fields it
// reports, sorted and unique.
func engineFields(t *testing.T, schema, args string) []string {
	t.Helper()
	var s any
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	compiled, err := catalog.CompileSchema(s)
	if err != nil {
		t.Fatalf("compiling %s: %v", schema, err)
	}
	tool := catalog.Tool{Server: "s", Def: &mcp.Tool{Name: "t"}, Schema: compiled}
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	err = tool.ValidateArgs(m)
	if err == nil {
		return []string{}
	}
	var fe *fault.Error
	if !errors.As(err, &fe) {
		t.Fatalf("ValidateArgs: %v", err)
	}
	var fields []string
	for _, f := range fe.Fields {
		fields = append(fields, f.Field)
	}
	slices.Sort(fields)
	return slices.Compact(fields)
}

// checkValidation runs every validation case in the page and compares it
// with the engine.
func checkValidation(t *testing.T, ctx context.Context) {
	for _, c := range validationCases {
		for _, args := range c.args {
			want := engineFields(t, c.schema, args)
			got := eval[[]string](t, ctx, `(function(){ const e = window.sbValidate(`+c.schema+`, `+args+`);
				return Array.from(new Set(e.map(x => x.path === "" ? "(arguments)" : x.path))).sort(); })()`)
			if got == nil {
				got = []string{}
			}
			if !slices.Equal(got, want) {
				t.Errorf("schema %s, arguments %s: the page reports %q, the engine %q", c.schema, args, got, want)
			}
		}
	}
}

// TestBrowserLogin logs in through the form in Chromium when gateway
// tokens are configured, and logs out again.
func TestBrowserLogin(t *testing.T) {
	t.Parallel()
	const secret = "browser-login-token"
	cfg := testConfig(testserver.Server(t, "alpha", "ok"))
	cfg.Gateway.Tokens = []config.Token{{Name: "ci", User: "alice", Secret: secret}}
	r := startDaemon(t, cfg)
	ctx := browser(t, 1280, 900)

	do(t, ctx, "opening the history", chromedp.Navigate(r.url+web.Prefix+"history"))
	waitJS(t, ctx, "the login form", `location.pathname === "/ui/login" && document.getElementById("token")`)
	shot(t, ctx, "login")
	do(t, ctx, "a wrong token", chromedp.SendKeys(chromedp.ID("token"), "wrong\n"))
	waitJS(t, ctx, "the refusal", `document.querySelector(".login .fault") && document.querySelector(".login .fault").textContent.includes("not valid")`)
	if cookie := eval[string](t, ctx, `document.cookie`); cookie != "" {
		t.Errorf("the page can read cookies: %q (the session cookie must be HttpOnly)", cookie)
	}
	// The refusal is a new document: set the field and submit through the
	// page itself rather than a node the driver may have looked up in the
	// document before ("Could not find node with given id").
	if !eval[bool](t, ctx, `(function(){ const f = document.getElementById("token"); f.value = "`+secret+`"; f.form.requestSubmit(); return true; })()`) {
		t.Fatal("could not submit the right token")
	}
	waitJS(t, ctx, "the history, logged in", `location.pathname === "/ui/history" && document.querySelector("header").innerText.includes("Log out alice")`)
	shot(t, ctx, "logged-in")
	do(t, ctx, "logging out", click(chromedp.CSS(`form[action="/ui/logout"] button`)))
	waitJS(t, ctx, "the login form again", `location.pathname === "/ui/login" && document.getElementById("token")`)
	do(t, ctx, "the servers page after logging out", chromedp.Navigate(r.url+"/"))
	waitJS(t, ctx, "a redirect to the login", `location.pathname === "/ui/login"`)
}
