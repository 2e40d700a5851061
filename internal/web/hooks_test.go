package web

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHooksPageWithoutHooks(t *testing.T) {
	ts, c := consoleServer(t, nil)
	code, body := get(t, c, ts.URL+Prefix+"hooks")
	if code != http.StatusOK || !strings.Contains(body, "Hooks are not configured") {
		t.Errorf("got %d, want the not-configured notice:\n%s", code, body)
	}
}

func TestHooksPage(t *testing.T) {
	var fired struct {
		event  string
		fields map[string]any
		dry    bool
	}
	var filter HookRunFilter
	hs := &fakeHooks{
		hooks: func() ([]HookInfo, error) {
			return []HookInfo{
				{Name: "lint", On: "tool.after", Actions: []string{"mcp alpha/echo"}, Valid: true, Trust: "trusted", Enabled: true, Source: "switchboard.yaml:10:3"},
				{Name: "<b>bad</b>", On: "git.*", Actions: []string{"command"}, Valid: false, Problems: []string{"unknown field {{.nope}}"}, Trust: "changed", Enabled: true},
			}, nil
		},
		runs: func(f HookRunFilter) ([]HookRun, error) {
			filter = f
			return []HookRun{{ID: "r1", Event: "tool.after", Hook: "lint", Action: "mcp", Status: "success", StartedAt: time.Unix(0, 0), Duration: time.Second,
				CallID: "5f0c2a1e-8d3b-4c7a-9e21-0b6d4f3a2c10", Output: `"Triage: <b>the input</b>"`}}, nil
		},
		fire: func(e string, fields map[string]any, dry bool) (FireReport, error) {
			fired.event, fired.fields, fired.dry = e, fields, dry
			return FireReport{Event: e, DryRun: dry, Runs: []FiredRun{{Hook: "lint", Action: "mcp alpha/echo", Params: map[string]any{"message": "hi"},
				CallID: "77c1d0aa-1b2c-4d3e-8f40-5a6b7c8d9e0f"}}}, nil
		},
	}
	ts, c := consoleServer(t, hs)
	code, body := get(t, c, ts.URL+Prefix+"hooks?hook=lint")
	if code != http.StatusOK {
		t.Fatalf("got %d", code)
	}
	for _, want := range []string{"lint", "valid", "changed", "switchboard hooks trust", "unknown field {{.nope}}", "&lt;b&gt;bad&lt;/b&gt;", "switchboard.yaml:10:3", "tool.after", "mcp alpha/echo",
		// The run log links each mcp action's run to its call.
		`<a href="/ui/history/5f0c2a1e-8d3b-4c7a-9e21-0b6d4f3a2c10" aria-label="Details of call 5f0c2a1e">5f0c2a1e</a>`,
		// and shows what an action returned, when recorded, escaped.
		`<summary>Output</summary><pre class="json">&#34;Triage: &lt;b&gt;the input&lt;/b&gt;&#34;</pre>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the hooks page lacks %q", want)
		}
	}
	if filter.Hook != "lint" {
		t.Errorf("run filter: got %+v, want hook lint", filter)
	}
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no CSRF token in the page")
	}
	form := url.Values{"event": {"tool.after"}, "fields": {"server=alpha\ntool=echo\nattempt=2"}, "dry_run": {"1"}}
	resp, err := c.PostForm(ts.URL+Prefix+"hooks/fire", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || fired.event != "" {
		t.Errorf("fire without CSRF: got %d (fired %q), want 403 and nothing fired", resp.StatusCode, fired.event)
	}
	form.Set("csrf", m[1])
	resp, err = c.PostForm(ts.URL+Prefix+"hooks/fire", form)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "Dry run of") || !strings.Contains(string(b), "&#34;message&#34;: &#34;hi&#34;") ||
		!strings.Contains(string(b), `href="/ui/history/77c1d0aa-1b2c-4d3e-8f40-5a6b7c8d9e0f"`) {
		t.Errorf("fire: got %d\n%s", resp.StatusCode, b)
	}
	if fired.event != "tool.after" || !fired.dry || fired.fields["server"] != "alpha" || fired.fields["tool"] != "echo" || fired.fields["attempt"] != 2.0 {
		t.Errorf("fired: got %+v", fired)
	}
}
