package web_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestBrowserServerSignIn: a server behind OAuth (the TypeScript SDK's
// example, strict about the resource indicator) waits in needs_auth with
// a Sign in button on the servers page; clicking it in Chromium opens the
// authorization server's page in a new tab, which approves at once and
// comes back to the daemon's loopback listener, and the page shows the
// server connected, live, with the button gone.
func TestBrowserServerSignIn(t *testing.T) {
	t.Parallel()
	ex := testpeer.StartOAuthExample(t, true)
	demo := config.Server{Name: "demo", Transport: config.TransportHTTP, URL: ex.URL, Enabled: true, TerminateOnClose: true,
		ConnectTimeout: 30 * time.Second, RequestTimeout: 30 * time.Second, LoadTools: true}
	r := startDaemon(t, testConfig(testserver.Server(t, "alpha", "ok"), demo))
	ctx := browser(t, 1280, 900)

	button := `document.querySelector('#servers tr[data-server="demo"] button[data-action="signin"]')`
	do(t, ctx, "opening the servers page", chromedp.Navigate(r.url+"/"))
	waitJS(t, ctx, "demo waiting for a sign-in, with its button", button+` && !`+button+`.hidden && `+rowLabel("demo")+` !== "connected"`)
	label := eval[string](t, ctx, rowLabel("demo"))
	shot(t, ctx, "server-needs-sign-in")
	eval[chromedp.Void](t, ctx, `window.__page = "same"`)
	do(t, ctx, "clicking Sign in", click(chromedp.CSS(`#servers tr[data-server="demo"] button[data-action="signin"]`)))
	// A popup blocker would leave a link to the sign-in page instead.
	waitJS(t, ctx, "demo connected on the same page, its button hidden", rowLabel("demo")+` === "connected" && `+button+`.hidden && window.__page === "same"`)
	t.Logf("demo went from %q to connected", label)
	shot(t, ctx, "server-signed-in")
	if n := eval[int](t, ctx, `document.querySelectorAll('#servers tr[data-server="demo"] .row-error a').length`); n != 0 {
		t.Error("the page showed a link to the sign-in page: the new tab was not opened")
	}
}
