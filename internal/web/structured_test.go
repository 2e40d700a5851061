package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// TestBrowserStructuredOutput: the console shows a result's
// structuredContent as foldable JSON after its content, and a result
// whose structuredContent fails the tool's outputSchema as output_invalid
// with the path of the mismatch, the result still shown as it came; the
// history keeps the status and the mismatch.
func TestBrowserStructuredOutput(t *testing.T) {
	t.Parallel()
	r := startDaemon(t, testConfig(sharedEverything(t, "everything"), config.Server{Name: "wx", Transport: config.TransportHTTP, URL: testserver.Weather(t),
		ConnectTimeout: 10 * time.Second, RequestTimeout: 10 * time.Second, TerminateOnClose: true, Enabled: true, LoadTools: true}))
	// The tool pages need their servers connected (server-everything can
	// take seconds to start on a loaded machine; its page said "connecting").
	for _, name := range []string{"everything", "wx"} {
		if _, err := r.d.Pool().WaitConnected(context.Background(), name, 60*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	ctx := browser(t, 1280, 900)

	callRaw := func(server, tool, args string) {
		t.Helper()
		do(t, ctx, "opening "+tool, chromedp.Navigate(r.url+web.Prefix+"tool?server="+server+"&name="+tool))
		waitJS(t, ctx, "the form of "+tool, `document.getElementById("raw-toggle") !== null && document.getElementById("call-button") !== null`)
		do(t, ctx, "calling "+tool+" with "+args, click(chromedp.ID("raw-toggle")),
			chromedp.SetValue(chromedp.ID("raw-json"), args), click(chromedp.ID("call-button")))
	}

	// server-everything's tool declares an output schema and keeps to it.
	callRaw("everything", "get-structured-content", `{"location": "Chicago"}`)
	// The finished call loads its result page: the status badge is parsed
	// before the structured content below it, so the page must be complete
	// before that is read (the badge alone was not enough under load).
	waitJS(t, ctx, "the structured result", resultPage("success"))
	structured := eval[string](t, ctx, `(() => { const h = [...document.querySelectorAll("#result h3")].find(h => h.textContent === "Structured content");
		const pre = h && h.nextElementSibling && h.nextElementSibling.querySelector("pre.json[data-fold]"); return pre ? pre.innerText : ""; })()`)
	if !strings.Contains(structured, `"conditions": "Light rain / drizzle"`) {
		t.Errorf("the structured content after the content: got %q, want Chicago's weather as indented JSON in the folding viewer", structured)
	}
	if eval[bool](t, ctx, `document.getElementById("output-invalid") !== null`) {
		t.Error("a result that matches its output schema is flagged")
	}
	shot(t, ctx, "structured-content")

	// A result that does not match: flagged, and shown as it came.
	callRaw("wx", "weather", `{"mode": "wrong_type"}`)
	waitJS(t, ctx, "the mismatching result", resultPage("output_invalid"))
	banner := eval[string](t, ctx, `document.getElementById("output-invalid") ? document.getElementById("output-invalid").innerText : ""`)
	if !strings.Contains(banner, "does not match the tool's output schema") || !strings.Contains(banner, "temp: got string, want number") {
		t.Errorf("the mismatch banner: got %q, want the path and the problem", banner)
	}
	if text := eval[string](t, ctx, `document.getElementById("result").innerText`); !strings.Contains(text, "mode wrong_type") || !strings.Contains(text, `"temp": "warm"`) {
		t.Errorf("the result: got %q, want its content and structured content as the server sent them", text)
	}
	shot(t, ctx, "output-invalid")

	// The history keeps the status and the mismatch.
	do(t, ctx, "opening the call in the history", click(chromedp.CSS(`#result a[href^="/ui/history/"]`)))
	waitJS(t, ctx, "the history entry", `document.body.innerText.includes("output_invalid") && document.body.innerText.includes("temp: got string, want number")`)
}
