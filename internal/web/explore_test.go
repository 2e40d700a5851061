package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// libraryServer is a go-sdk MCP server on 127.0.0.1 with resources of
// every kind the console shows: Markdown text, a PNG, opaque bytes, a
// template, and a counter that can be subscribed to and changes when the
// bump tool runs. It also has a prompt with a required and an optional
// argument.
func libraryServer(t *testing.T) config.Server {
	t.Helper()
	var counter atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "library", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	text := func(uri, mime, s string) *mcp.ReadResourceResult {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: s}}}
	}
	srv.AddResource(&mcp.Resource{URI: "library://notes.md", Name: "notes", MIMEType: "text/markdown", Description: "Notes in Markdown."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return text(req.Params.URI, "text/markdown", "# Shelf notes\n\n- **bold** entry\n\n<script>window.__pwned=9</script>\n\n[bad](javascript:window.__pwned=10)\n"), nil
		})
	srv.AddResource(&mcp.Resource{URI: "library://logo.png", Name: "logo", MIMEType: "image/png"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: testserver.PNG}}}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "library://data.bin", Name: "data", MIMEType: "application/octet-stream"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 3, 0xff}}}}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "library://counter", Name: "counter", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return text(req.Params.URI, "text/plain", fmt.Sprintf("count %d", counter.Load())), nil
		})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "library://books/{id}", Name: "book", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimPrefix(req.Params.URI, "library://books/")
			return text(req.Params.URI, "text/plain", "Book number "+id), nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "bump", Description: "Adds one to the counter resource."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			n := counter.Add(1)
			_ = srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "library://counter"})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(n)}}}, nil, nil
		})
	srv.AddPrompt(&mcp.Prompt{Name: "recommend", Title: "Recommend a book", Description: "Asks for a recommendation.",
		Arguments: []*mcp.PromptArgument{{Name: "genre", Description: "What kind of book", Required: true}, {Name: "era", Description: "When it was written"}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			msg := "Recommend a " + a["genre"] + " book"
			if a["era"] != "" {
				msg += " from the " + a["era"]
			}
			return &mcp.GetPromptResult{Description: "A recommendation", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: msg}},
				{Role: "assistant", Content: &mcp.TextContent{Text: `{"shelf": "ready"}`}},
			}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return config.Server{
		Name: "library", Transport: config.TransportHTTP, URL: ts.URL, ConnectTimeout: 10 * time.Second,
		RequestTimeout: 10 * time.Second, TerminateOnClose: true, Enabled: true, LoadTools: true, LoadPrompts: true, LoadResources: true,
	}
}

// TestBrowserExplore drives prompts, resources, subscriptions, the
// protocol log and the copy buttons in Chromium.
func TestBrowserExplore(t *testing.T) {
	t.Parallel() // the browser tests wait more than they compute
	r := startDaemon(t, testConfig(libraryServer(t)))
	if _, err := r.d.Pool().WaitConnected(context.Background(), "library", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t, 1280, 900)

	t.Run("prompt form and messages", func(t *testing.T) {
		do(t, ctx, "opening the prompts", chromedp.Navigate(r.url+web.Prefix+"tools?kind=prompts&server=library"))
		do(t, ctx, "opening recommend", click(chromedp.CSS(`#prompts a[href*="name=recommend"]`)))
		waitJS(t, ctx, "the form", `document.querySelector('#prompt-form input[name="arg.genre"]')`)
		if n := eval[int](t, ctx, `document.querySelectorAll('#prompt-form .field .req').length`); n != 1 {
			t.Errorf("required markers: got %d, want 1 (genre)", n)
		}
		if req := eval[string](t, ctx, `document.querySelector('input[name="arg.genre"]').getAttribute("aria-required")`); req != "true" {
			t.Errorf("genre aria-required: got %q, want true", req)
		}
		do(t, ctx, "getting it without the required argument", click(chromedp.ID("get-button")))
		waitJS(t, ctx, "the error at genre", `document.querySelector('.field[data-arg="genre"] .field-error') &&
			document.querySelector('.field[data-arg="genre"] .field-error').textContent.includes("genre")`)
		shot(t, ctx, "prompt-missing")
		do(t, ctx, "filling both and getting it",
			chromedp.SendKeys(chromedp.CSS(`input[name="arg.genre"]`), "mystery"),
			chromedp.SendKeys(chromedp.CSS(`input[name="arg.era"]`), "1920s"),
			click(chromedp.ID("get-button")))
		waitJS(t, ctx, "the messages", `document.querySelectorAll('#result .message').length === 2`)
		if got := eval[string](t, ctx, `document.querySelector('#result .message.role-user').innerText`); !strings.Contains(got, "Recommend a mystery book from the 1920s") {
			t.Errorf("user message: got %q", got)
		}
		if v := eval[string](t, ctx, `document.querySelector('input[name="arg.genre"]').value`); v != "mystery" {
			t.Errorf("the form after getting: genre is %q, want it kept", v)
		}
		if cli := eval[string](t, ctx, `document.getElementById("cli-command").textContent`); cli != "switchboard prompt library recommend era=1920s genre=mystery" {
			t.Errorf("CLI command: got %q", cli)
		}
		shot(t, ctx, "prompt")
	})

	t.Run("resources: Markdown, image, download, template", func(t *testing.T) {
		do(t, ctx, "opening the resources", chromedp.Navigate(r.url+web.Prefix+"tools?kind=resources&server=library"))
		do(t, ctx, "opening notes", click(chromedp.CSS(`#resources a[href*="notes.md"]`)))
		waitJS(t, ctx, "the rendered Markdown", `document.querySelector('#result .markdown h1') && document.querySelector('#result .markdown strong')`)
		if n := eval[int](t, ctx, `document.querySelectorAll('main script, #result a[href^="javascript"]').length`); n != 0 {
			t.Errorf("the resource page has %d injected elements, want 0", n)
		}
		shot(t, ctx, "resource-markdown")
		do(t, ctx, "opening logo", chromedp.Navigate(r.url+web.Prefix+"resource?server=library&uri="+jsURL("library://logo.png")))
		waitJS(t, ctx, "the image", `document.querySelector('#result img[src^="data:image/png"]') && document.querySelector('#result img').naturalWidth > 0`)
		do(t, ctx, "opening data", chromedp.Navigate(r.url+web.Prefix+"resource?server=library&uri="+jsURL("library://data.bin")))
		waitJS(t, ctx, "the download link", `document.querySelector('#result a.download')`)
		href := eval[string](t, ctx, `document.querySelector('#result a.download').href`)
		// Fetch it as the page would, with the session's cookie.
		type download struct {
			Body        []int  `json:"body"`
			Disposition string `json:"disposition"`
			Type        string `json:"type"`
		}
		got := eval[download](t, ctx, `(function(){ const x = new XMLHttpRequest(); x.open("GET", `+jsString(href)+`, false);
			x.overrideMimeType("text/plain; charset=x-user-defined"); x.send();
			return {body: Array.from(x.responseText).map(c => c.charCodeAt(0) & 0xff),
				disposition: x.getResponseHeader("Content-Disposition"), type: x.getResponseHeader("Content-Type")}; })()`)
		if fmt.Sprint(got.Body) != "[0 1 2 3 255]" || got.Disposition != `attachment; filename=data.bin` || got.Type != "application/octet-stream" {
			t.Errorf("download: got %v, %q, %q; want the 5 bytes as an attachment data.bin of application/octet-stream", got.Body, got.Disposition, got.Type)
		}
		shot(t, ctx, "resource-binary")
		do(t, ctx, "opening the resources", chromedp.Navigate(r.url+web.Prefix+"tools?kind=resources&server=library"))
		tpl := eval[string](t, ctx, `document.querySelector('#resources a[href*="template="]').href`)
		do(t, ctx, "opening the book template", chromedp.Navigate(tpl))
		waitJS(t, ctx, "the template form", `document.readyState === "complete" && document.querySelector('#template-form input[name="var.id"]')`)
		do(t, ctx, "reading book 42", chromedp.SendKeys(chromedp.CSS(`input[name="var.id"]`), "42"), click(chromedp.ID("read-button")))
		waitJS(t, ctx, "book 42", `document.getElementById("result") && document.getElementById("result").innerText.includes("Book number 42")`)
		shot(t, ctx, "resource-template")
	})

	t.Run("subscribe and see updates live; the protocol log", func(t *testing.T) {
		do(t, ctx, "opening counter", chromedp.Navigate(r.url+web.Prefix+"resource?server=library&uri="+jsURL("library://counter")))
		waitJS(t, ctx, "the subscribe button", `document.getElementById("subscribe-button")`)
		do(t, ctx, "subscribing", click(chromedp.ID("subscribe-button")))
		waitJS(t, ctx, "subscribed", `!document.getElementById("unsubscribe-button").hidden`)
		// Bump the counter from outside the page: a call through the API.
		for i := 1; i <= 2; i++ {
			eval[chromedp.Void](t, ctx, `window.sb.api("POST", "/ui/api/calls", {server: "library", tool: "bump", arguments: {}}); 1`)
			waitJS(t, ctx, fmt.Sprintf("update %d on the page", i), fmt.Sprintf(`document.querySelector("#updates li") && document.querySelector("#updates li").innerText.includes("count %d")`, i))
		}
		shot(t, ctx, "resource-updates")
		do(t, ctx, "opening the protocol log", chromedp.Navigate(r.url+web.Prefix+"protocol"))
		waitJS(t, ctx, "the messages", `document.querySelectorAll("#protocol-log > li").length > 0`)
		methods := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#protocol-log > li")).map(li => li.className.split(" ")[1] + " " + li.querySelector(".method").textContent)`)
		for _, want := range []string{"dir-out server/discover", "dir-out subscriptions/listen", "dir-in notifications/resources/updated", "dir-out resources/read"} {
			found := false
			for _, m := range methods {
				found = found || m == want
			}
			if !found {
				t.Errorf("protocol log: no %q in %q", want, methods)
			}
		}
		before := eval[int](t, ctx, `document.querySelectorAll("#protocol-log > li").length`)
		do(t, ctx, "pinging", click(chromedp.ID("ping-button")))
		waitJS(t, ctx, "the ping and its answer, live", fmt.Sprintf(`document.querySelectorAll("#protocol-log > li").length >= %d &&
			Array.from(document.querySelectorAll("#protocol-log > li .method")).some(m => m.textContent === "ping")`, before+2))
		do(t, ctx, "unfolding the last message", click(chromedp.CSS(`#protocol-log > li:last-child summary`)))
		shot(t, ctx, "protocol-log")
	})

	t.Run("copy buttons", func(t *testing.T) {
		do(t, ctx, "opening bump", chromedp.Navigate(r.url+web.Prefix+"tool?server=library&name=bump"))
		waitJS(t, ctx, "the copy buttons", `document.getElementById("copy-cli") && document.getElementById("copy-curl")`)
		// Catch what is copied.
		eval[chromedp.Void](t, ctx, `window.__copied = []; navigator.clipboard.writeText = t => { window.__copied.push(t); return Promise.resolve(); }`)
		do(t, ctx, "copying the CLI command", click(chromedp.ID("copy-cli")))
		waitJS(t, ctx, "the copy", `window.__copied.length === 1`)
		if got := eval[string](t, ctx, `window.__copied[0]`); got != "switchboard call library bump" {
			t.Errorf("copied CLI command: got %q", got)
		}
		do(t, ctx, "calling bump", click(chromedp.ID("call-button")))
		waitJS(t, ctx, "the result and its copy button", resultPage("success")+` && document.querySelector("#result button.copy")`)
		eval[chromedp.Void](t, ctx, `window.__copied = []; navigator.clipboard.writeText = t => { window.__copied.push(t); return Promise.resolve(); }`)
		// Clicked in the page in one step: the result pane may be drawn
		// again by the call's last event, which detaches a node chromedp
		// found a moment before ("Could not find node with given id").
		eval[chromedp.Void](t, ctx, `document.querySelector("#result button.copy").click()`)
		waitJS(t, ctx, "the copy", `window.__copied.length === 1`)
		if got, want := eval[string](t, ctx, `window.__copied[0]`), eval[string](t, ctx, `document.querySelector("#result pre").textContent`); got != want || got == "" {
			t.Errorf("copied result: got %q, want the result's text %q", got, want)
		}
		do(t, ctx, "copying the CLI command of the call", click(chromedp.ID("copy-cli")))
		waitJS(t, ctx, "the copy", `window.__copied.length === 2`)
		if got := eval[string](t, ctx, `window.__copied[1]`); got != "switchboard call library bump" {
			t.Errorf("copied CLI command after the call: got %q", got)
		}
		do(t, ctx, "copying the curl command", click(chromedp.ID("copy-curl")))
		waitJS(t, ctx, "the copy", `window.__copied.length === 3`)
		if got := eval[string](t, ctx, `window.__copied[2]`); !strings.Contains(got, `"method":"tools/call"`) || !strings.Contains(got, "library__bump") {
			t.Errorf("copied curl command: got %q", got)
		}
	})
}

// jsURL escapes a URI for a query string.
func jsURL(s string) string { return strings.NewReplacer(":", "%3A", "/", "%2F").Replace(s) }
