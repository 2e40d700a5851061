package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// outputServer is a go-sdk server (streamable HTTP) whose tool "weather"
// declares an output schema, and answers with structuredContent that
// matches it ({"mode":"valid"}) or not ({"mode":"wrong_type"}).
func outputServer(t *testing.T) config.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "wx", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "weather", InputSchema: json.RawMessage(`{"type":"object","properties":{"mode":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"temp":{"type":"number"},"city":{"type":"string"}},"required":["temp","city"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Mode string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "mode " + args.Mode}},
				StructuredContent: map[string]any{"temp": 21.5, "city": "Oslo"}}
			if args.Mode == "wrong_type" {
				res.StructuredContent = map[string]any{"temp": "warm", "city": "Oslo"}
			}
			return res, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return config.Server{Name: "wx", Transport: config.TransportHTTP, URL: ts.URL, ConnectTimeout: 10 * time.Second,
		RequestTimeout: 10 * time.Second, TerminateOnClose: true, Enabled: true, LoadTools: true}
}

// TestBrowserStructuredOutput: the console shows a result's
// structuredContent as foldable JSON after its content, and a result
// whose structuredContent fails the tool's outputSchema as output_invalid
// with the path of the mismatch, the result still shown as it came; the
// history keeps the status and the mismatch.
func TestBrowserStructuredOutput(t *testing.T) {
	t.Parallel()
	r := startDaemon(t, testConfig(everything(t, "everything"), outputServer(t)))
	ctx := browser(t, 1280, 900)

	callRaw := func(server, tool, args string) {
		t.Helper()
		do(t, ctx, "opening "+tool, chromedp.Navigate(r.url+web.Prefix+"tool?server="+server+"&name="+tool))
		waitJS(t, ctx, "the form of "+tool, `document.getElementById("raw-toggle") !== null && document.getElementById("call-button") !== null`)
		do(t, ctx, "calling "+tool+" with "+args, chromedp.Click(chromedp.ID("raw-toggle")),
			chromedp.SetValue(chromedp.ID("raw-json"), args), chromedp.Click(chromedp.ID("call-button")))
	}

	// server-everything's tool declares an output schema and keeps to it.
	callRaw("everything", "get-structured-content", `{"location": "Chicago"}`)
	waitJS(t, ctx, "the structured result", `document.getElementById("result-status") && document.getElementById("result-status").textContent === "success"`)
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
	waitJS(t, ctx, "the mismatching result", `document.getElementById("result-status") && document.getElementById("result-status").textContent === "output_invalid"`)
	banner := eval[string](t, ctx, `document.getElementById("output-invalid") ? document.getElementById("output-invalid").innerText : ""`)
	if !strings.Contains(banner, "does not match the tool's output schema") || !strings.Contains(banner, "temp: got string, want number") {
		t.Errorf("the mismatch banner: got %q, want the path and the problem", banner)
	}
	if text := eval[string](t, ctx, `document.getElementById("result").innerText`); !strings.Contains(text, "mode wrong_type") || !strings.Contains(text, `"temp": "warm"`) {
		t.Errorf("the result: got %q, want its content and structured content as the server sent them", text)
	}
	shot(t, ctx, "output-invalid")

	// The history keeps the status and the mismatch.
	do(t, ctx, "opening the call in the history", chromedp.Click(chromedp.CSS(`#result a[href^="/ui/history/"]`)))
	waitJS(t, ctx, "the history entry", `document.body.innerText.includes("output_invalid") && document.body.innerText.includes("temp: got string, want number")`)
}
