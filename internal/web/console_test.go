package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/daemon"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// consoleYAML is a configuration file with comments that the console
// edits; %s are the test server program (the alpha server and the allowlist) and
// alpha's mode variables.
const consoleYAML = `# Switchboard for the console test.
# Every comment here must survive the console's edits.
security:
  allowed_commands: [%[1]q]

defaults:
  request_timeout: 30s # generous for CI
  health:
    ping_interval: 1h
    backoff: [200ms, 200ms, 200ms]
    max_failures: 3

gateway:
  listen: 127.0.0.1:0

servers:
  # The test binary as an MCP server.
  - name: alpha
    command: %[1]q
    env:
      %[2]s: ok
      GORACE: %[3]q
      SECRET_KEY: hunter2-literal-secret # must never reach a page
`

// startDaemonFile runs a daemon on a configuration file, reloading from
// it, until the test ends.
func startDaemonFile(t *testing.T, path string) *running {
	t.Helper()
	load := func() (*config.Config, error) { return config.Load(path, config.Options{}) }
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	return startDaemonWith(t, daemon.Options{Config: cfg, Load: load})
}

// TestBrowserConsole drives the overview, a server's page, adding,
// editing and removing servers in the configuration file, dark mode, and
// an accessibility audit of every page, in Chromium.
func TestBrowserConsole(t *testing.T) {
	t.Parallel() // the browser tests wait more than they compute
	exe := testserver.Command(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "switchboard.yaml")
	if err := os.WriteFile(path, fmt.Appendf(nil, consoleYAML, exe, testserver.EnvMode, testserver.RaceEnv), 0o600); err != nil {
		t.Fatal(err)
	}
	lib := libraryServer(t)
	r := startDaemonFile(t, path)
	if _, err := r.d.Pool().WaitConnected(context.Background(), "alpha", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t, 1280, 900)
	cl := newClient(t, r.url)
	for _, body := range []string{`{"message":"one"}`, `{"message":"two"}`} {
		cl.json("POST", web.Prefix+"api/calls", `{"server":"alpha","tool":"echo","arguments":`+body+`}`, 202, nil)
	}
	cl.json("POST", web.Prefix+"api/calls", `{"server":"alpha","tool":"fail","arguments":{}}`, 202, nil)

	t.Run("overview charts, updated live", func(t *testing.T) {
		waitRecorded(t, r, store.CallFilter{Server: "alpha"}, 3) // the recorder writes the history in batches
		do(t, ctx, "opening the overview", chromedp.Navigate(r.url+web.Prefix+"overview"))
		waitJS(t, ctx, "the three calls", `document.getElementById("total-calls").textContent === "3"`)
		waitJS(t, ctx, "the three charts", `document.querySelectorAll("#stats svg.chart-svg").length === 3`)
		if n := eval[int](t, ctx, `document.querySelectorAll('[data-chart="calls"] rect.bar').length`); n == 0 {
			t.Error("the calls chart has no bar")
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('[data-chart="errors"] rect.bar').length`); n == 0 {
			t.Error("the error chart has no bar for the failed call")
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('[data-chart="latency"] polyline').length`); n != 2 {
			t.Errorf("latency lines: got %d, want p50 and p95", n)
		}
		row := eval[string](t, ctx, `document.querySelector("#stats-servers tbody tr").innerText`)
		if !strings.Contains(row, "alpha") || !strings.Contains(row, "33.3 %") {
			t.Errorf("per-server row: got %q, want alpha with 3 calls, 1 error (33.3 %%)", row)
		}
		tools := eval[string](t, ctx, `document.getElementById("stats-tools").innerText`)
		if !strings.Contains(tools, "echo") || !strings.Contains(tools, "fail") {
			t.Errorf("per-tool table: got %q, want echo and fail", tools)
		}
		audit(t, ctx, "overview")
		shot(t, ctx, "overview")
		cl.json("POST", web.Prefix+"api/calls", `{"server":"alpha","tool":"echo","arguments":{"message":"three"}}`, 202, nil)
		waitJS(t, ctx, "the new call, without a reload", `document.getElementById("total-calls").textContent === "4"`)
		do(t, ctx, "the last day", chromedp.Navigate(r.url+web.Prefix+"overview?window=24h"))
		waitJS(t, ctx, "the day's charts", `document.querySelectorAll("#stats svg.chart-svg").length === 3 && document.getElementById("total-calls").textContent === "4"`)
	})

	t.Run("a server's page", func(t *testing.T) {
		do(t, ctx, "opening the servers page", chromedp.Navigate(r.url+"/"))
		do(t, ctx, "opening alpha", click(chromedp.CSS(`#servers tr[data-server="alpha"] th a`)))
		// The click navigates, and nothing waits for that page to load: a
		// page still being parsed has its heading but not what follows.
		waitJS(t, ctx, "alpha's page", `document.readyState === "complete" &&
			document.getElementById("server-name") && document.getElementById("server-name").textContent === "alpha"`)
		conf := eval[string](t, ctx, `document.getElementById("server-config").textContent`)
		if !strings.Contains(conf, "SECRET_KEY") || strings.Contains(conf, "hunter2") {
			t.Errorf("configuration shown: %q; want SECRET_KEY with its value hidden", conf)
		}
		if strings.Contains(eval[string](t, ctx, `document.documentElement.outerHTML`), "hunter2") {
			t.Error("the secret is somewhere in the page")
		}
		waitJS(t, ctx, "tools, calls and charts", `document.querySelector('#server-tools a[href*="name=echo"]') &&
			document.querySelectorAll("#server-calls tbody tr").length >= 3 && document.querySelectorAll("#stats svg.chart-svg").length === 3`)
		if h := eval[string](t, ctx, `document.getElementById("state-history").innerText`); !strings.Contains(h, "connected") {
			t.Errorf("state history: got %q, want the connection", h)
		}
		audit(t, ctx, "server")
		shot(t, ctx, "server")
		do(t, ctx, "disabling alpha", click(chromedp.CSS(`#server-actions button[data-action="disable"]`)))
		waitJS(t, ctx, "disabled, live", `document.querySelector('#server-state [data-field="label"]').textContent === "disabled" &&
			document.getElementById("state-history").innerText.includes("disabled")`)
		do(t, ctx, "enabling alpha", click(chromedp.CSS(`#server-actions button[data-action="enable"]`)))
		waitJS(t, ctx, "connected again", `document.querySelector('#server-state [data-field="label"]').textContent === "connected"`)
	})

	t.Run("add, edit and remove a server in the file", func(t *testing.T) {
		do(t, ctx, "opening the servers page", chromedp.Navigate(r.url+"/"))
		do(t, ctx, "add a server", click(chromedp.ID("add-server")))
		waitJS(t, ctx, "the form", `document.readyState === "complete" && document.getElementById("server-form") && document.getElementById("config-path").textContent === `+jsString(path))
		audit(t, ctx, "add a server")
		do(t, ctx, "an http server without a URL",
			chromedp.SendKeys(chromedp.ID("f-name"), "gamma"),
			chromedp.SetValue(chromedp.ID("f-transport"), "http"),
			click(chromedp.ID("save-button")))
		waitJS(t, ctx, "the refusal at the URL field", `document.querySelector('[data-field-name="url"] .field-error') &&
			document.querySelector('[data-field-name="url"]').classList.contains("invalid")`)
		if v := eval[string](t, ctx, `document.getElementById("f-name").value`); v != "gamma" {
			t.Errorf("the form after a refusal: name is %q, want gamma kept", v)
		}
		if data, _ := os.ReadFile(path); strings.Contains(string(data), "gamma") {
			t.Error("a refused server was written to the file")
		}
		shot(t, ctx, "server-add-refused")
		do(t, ctx, "adding the URL", chromedp.SendKeys(chromedp.ID("f-url"), lib.URL), click(chromedp.ID("save-button")))
		waitJS(t, ctx, "gamma's page", `document.getElementById("saved-banner") && document.getElementById("server-name").textContent === "gamma"`)
		waitJS(t, ctx, "gamma connected", `document.querySelector('#server-state [data-field="label"]').textContent === "connected"`)
		data, _ := os.ReadFile(path)
		for _, keep := range []string{"# Every comment here must survive", "# generous for CI", "# The test binary", "# must never reach a page", "name: gamma", lib.URL} {
			if !strings.Contains(string(data), keep) {
				t.Errorf("the file after adding gamma lacks %q:\n%s", keep, data)
			}
		}
		do(t, ctx, "editing alpha", chromedp.Navigate(r.url+web.Prefix+"servers/edit?name=alpha"))
		waitJS(t, ctx, "the form", `document.getElementById("f-env")`)
		env := eval[string](t, ctx, `document.getElementById("f-env").value`)
		if strings.Contains(env, "hunter2") || !strings.Contains(env, "SECRET_KEY=********") {
			t.Errorf("the edit form's env: %q; want SECRET_KEY hidden", env)
		}
		do(t, ctx, "a description", chromedp.SendKeys(chromedp.ID("f-description"), "The test binary"), click(chromedp.ID("save-button")))
		waitJS(t, ctx, "alpha saved", `document.getElementById("saved-banner") && document.getElementById("server-name").textContent === "alpha"`)
		data, _ = os.ReadFile(path)
		if !strings.Contains(string(data), "description: The test binary") || !strings.Contains(string(data), "SECRET_KEY: hunter2-literal-secret # must never reach a page") {
			t.Errorf("the file after editing alpha:\n%s", data)
		}
		do(t, ctx, "editing gamma", chromedp.Navigate(r.url+web.Prefix+"servers/edit?name=gamma"))
		waitJS(t, ctx, "the remove form", `document.getElementById("remove-form")`)
		shot(t, ctx, "server-edit")
		do(t, ctx, "removing gamma", click(chromedp.ID("f-confirm")), click(chromedp.ID("remove-button")))
		waitJS(t, ctx, "the servers page without gamma", `document.getElementById("removed-banner") && !document.querySelector('#servers tr[data-server="gamma"]')`)
		data, _ = os.ReadFile(path)
		if strings.Contains(string(data), "gamma") || !strings.Contains(string(data), "# The test binary") {
			t.Errorf("the file after removing gamma:\n%s", data)
		}
		for _, sn := range r.d.Pool().Snapshots() {
			if sn.Server == "gamma" {
				t.Error("gamma still runs after its removal")
			}
		}
	})

	t.Run("dark mode", func(t *testing.T) {
		do(t, ctx, "preferring dark", colorScheme("dark"), chromedp.Navigate(r.url+web.Prefix+"overview"))
		waitJS(t, ctx, "the charts", `document.querySelectorAll("#stats svg.chart-svg").length === 3`)
		bg := eval[string](t, ctx, `getComputedStyle(document.documentElement).backgroundColor`)
		if bg != "rgb(18, 22, 27)" {
			t.Errorf("the background in dark mode: got %s, want rgb(18, 22, 27)", bg)
		}
		shot(t, ctx, "overview-dark")
		do(t, ctx, "back to light", colorScheme("light"))
	})

	t.Run("accessibility of every page", func(t *testing.T) {
		for _, p := range []struct{ name, path, ready string }{
			{"servers", "/", `document.getElementById("servers")`},
			{"tools", web.Prefix + "tools", `document.getElementById("tools")`},
			{"tool", web.Prefix + "tool?server=alpha&name=echo", `document.querySelector('.field[data-path="message"] input')`},
			{"prompt", web.Prefix + "prompt?server=alpha&name=greet", `document.getElementById("prompt-form")`},
			{"resource", web.Prefix + "resource?server=alpha&uri=test%3A%2F%2Freadme", `document.getElementById("result")`},
			{"history", web.Prefix + "history", `document.getElementById("history")`},
			{"hooks", web.Prefix + "hooks", `document.querySelector("main h1")`},
			{"protocol", web.Prefix + "protocol", `document.getElementById("protocol-log")`},
		} {
			do(t, ctx, "opening "+p.name, chromedp.Navigate(r.url+p.path))
			waitJS(t, ctx, p.name, p.ready)
			audit(t, ctx, p.name)
		}
		// The new pages at phone width: nothing scrolls sideways.
		for _, p := range []struct{ name, path string }{
			{"overview", web.Prefix + "overview"},
			{"server", web.Prefix + "server?name=alpha"},
			{"server form", web.Prefix + "servers/edit?name=alpha"},
			{"protocol", web.Prefix + "protocol"},
			{"prompt", web.Prefix + "prompt?server=alpha&name=greet"},
		} {
			do(t, ctx, "opening "+p.name+" at phone width", chromedp.EmulateViewport(390, 844), chromedp.Navigate(r.url+p.path))
			waitJS(t, ctx, p.name, `document.readyState === "complete" && document.querySelector("main h1")`)
			if overflow := eval[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth + 1`); overflow {
				t.Errorf("%s at 390 px scrolls sideways (scrollWidth %d)", p.name, eval[int](t, ctx, `document.documentElement.scrollWidth`))
			}
		}
		do(t, ctx, "back to desktop", chromedp.EmulateViewport(1280, 900))
		// Keyboard: the skip link is the first stop and moves to main.
		do(t, ctx, "opening the servers page", chromedp.Navigate(r.url+"/"))
		do(t, ctx, "tabbing", chromedp.KeyEvent("\t"))
		if got := eval[string](t, ctx, `document.activeElement.className`); got != "skip" {
			t.Errorf("first Tab stop: got %q, want the skip link", got)
		}
	})
}

// colorScheme makes the page see prefers-color-scheme as scheme.
func colorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return chromedp.Void{}, err
	})
}

// TestBrowserConsoleCreatesTheFile: with the embedded default (no file),
// adding a server says where the file would be created — switchboard.yaml
// in the daemon's working directory, not the process's — and creates it
// only once confirmed.
func TestBrowserConsoleCreatesTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig()
	lib := libraryServer(t) // before the daemon: it closes after the daemon stops
	// The daemon's environment is not the process's: the new server's URL
	// is a variable only the daemon has, so the edit is checked, and the
	// new file loaded, with the daemon's configuration options.
	env := func(k string) (string, bool) {
		if k == "LIBRARY_URL" {
			return lib.URL, true
		}
		return os.LookupEnv(k)
	}
	r := startDaemonWith(t, daemon.Options{Config: cfg, ConfigOptions: config.Options{WorkDir: dir, LookupEnv: env}})
	ctx := browser(t, 1280, 900)
	path := filepath.Join(dir, config.FileName)
	do(t, ctx, "opening the form", chromedp.Navigate(r.url+web.Prefix+"servers/edit"))
	waitJS(t, ctx, "the notice", `document.getElementById("no-file") && document.getElementById("config-path").textContent === `+jsString(path))
	do(t, ctx, "saving without confirming",
		chromedp.SendKeys(chromedp.ID("f-name"), "library"),
		chromedp.SetValue(chromedp.ID("f-transport"), "http"),
		chromedp.SendKeys(chromedp.ID("f-url"), "${LIBRARY_URL}"),
		click(chromedp.ID("save-button")))
	waitJS(t, ctx, "the request to confirm", `document.querySelector("#f-create-error") && document.querySelector("#f-create-error").textContent.includes("confirm")`)
	if _, err := os.Stat(path); err == nil {
		t.Fatal("the file was created without confirmation")
	}
	shot(t, ctx, "server-add-no-file")
	do(t, ctx, "confirming", click(chromedp.ID("f-create")), click(chromedp.ID("save-button")))
	waitJS(t, ctx, "the new server's page", `document.getElementById("saved-banner") && document.getElementById("server-name").textContent === "library"`)
	if _, err := config.Load(path, config.Options{LookupEnv: env}); err != nil {
		t.Errorf("the created file does not load: %v", err)
	}
	if _, err := r.d.Pool().WaitConnected(context.Background(), "library", 20*time.Second); err != nil {
		t.Errorf("the added server did not connect: %v", err)
	}
}
