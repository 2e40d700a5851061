package daemon

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/hooks"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// Secrets the audit test configures: none may appear in the trail.
const (
	auditReaderToken = "rdr-0123456789abcdef0123456789abcdef"
	auditAdminToken  = "adm-fedcba9876543210fedcba9876543210"
	auditWrongToken  = "wrong-55555555555555555555555555555"
	auditServerKey   = "srv-key-9a8b7c6d5e4f3a2b1c0d"
)

// auditEvents reads the trail until cond holds of it.
func auditEvents(t *testing.T, path, what string, cond func([]audit.Event) bool) []audit.Event {
	t.Helper()
	var got []audit.Event
	eventually(t, what, func() bool {
		got = got[:0]
		if err := audit.Read(path, audit.Filter{}, func(e audit.Event) error { got = append(got, e); return nil }); err != nil {
			t.Fatalf("reading the trail: %v", err)
		}
		return cond(got)
	})
	return got
}

// find returns the events named event.
func find(es []audit.Event, event string) []audit.Event {
	var out []audit.Event
	for _, e := range es {
		if e.Event == event {
			out = append(out, e)
		}
	}
	return out
}

func hasEvents(events ...string) func([]audit.Event) bool {
	return func(es []audit.Event) bool {
		for _, n := range events {
			if len(find(es, n)) == 0 {
				return false
			}
		}
		return true
	}
}

// TestAuditTrail: each audited action, done for real through a running
// daemon — a refused token and a denied view over HTTP, a call a guard
// hook denies, a disable, an enable, a stop, a resume and a reload over
// the control socket — writes its line, with who, from where and the
// outcome, and no token or secret appears in the file.
func TestAuditTrail(t *testing.T) {
	dir := t.TempDir()
	trail := filepath.Join(dir, "logs", "audit.jsonl")
	path := filepath.Join(dir, "switchboard.yaml")
	t.Setenv("AUDIT_READER_TOKEN", auditReaderToken)
	t.Setenv("AUDIT_ADMIN_TOKEN", auditAdminToken)
	writeConfig(t, path, map[string]string{"alpha": "ok API_KEY=" + auditServerKey}, `hooks:
  - name: no-adding
    on: tool.before
    if:
      tool: add
    actions:
      - type: command
        command: [sh, -c, "echo adding is closed today >&2; exit 2"]
audit:
  file: logs/audit.jsonl
  max_size: 1MiB
`)
	b, _ := os.ReadFile(path)
	src := strings.Replace(string(b), "gateway:\n  listen: 127.0.0.1:0\n", `gateway:
  listen: 127.0.0.1:0
  views:
    - name: admin
      include: ["alpha__*"]
  tokens:
    - name: reader
      user: ana
      token_env: AUDIT_READER_TOKEN
      views: [default]
    - name: admin
      user: root-ops
      token_env: AUDIT_ADMIN_TOKEN
`, 1)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	load := func() (*config.Config, error) { return config.Load(path, config.Options{}) }
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg, func(o *Options) {
		o.Load = load
		if _, err := hooks.Trust(o.StateDir, path); err != nil {
			t.Fatal(err)
		}
	})
	ctx := context.Background()

	// A token that is not configured.
	post := func(path, token string) int {
		resp, _ := send(t, http.MethodPost, r.url+path, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, bearer(token))
		return resp.StatusCode
	}
	if code := post("/mcp", auditWrongToken); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token: got %d, want 401", code)
	}
	// A view the token may not use.
	if code := post("/mcp/admin", auditReaderToken); code != http.StatusForbidden {
		t.Fatalf("the reader on the admin view: got %d, want 403", code)
	}
	// A call the guard denies, made by ana through the gateway.
	cs := r.connect(t, "/mcp", http.Header{"Authorization": {"Bearer " + auditReaderToken}}, nil)
	waitTools(t, cs, "alpha's tools", has("alpha__add"))
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__add", Arguments: map[string]any{"a": 1, "b": 2}})
	if err == nil && (res == nil || !res.IsError) {
		t.Fatal("the guard let the call through")
	}
	// Control actions over the socket.
	c := control.Dial(control.SocketPath(r.stateDir))
	defer c.Close()
	if _, err := c.ServerAction(ctx, "disable", "alpha"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServerAction(ctx, "enable", "alpha"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServerAction(ctx, "enable", "nosuch"); err == nil {
		t.Fatal("enabling an unknown server succeeded")
	}
	if _, err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	// A reload of a broken file fails, and says so.
	if err := os.WriteFile(path, []byte("servers:\n  - name: x\n    transport: carrier-pigeon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Reload(ctx); err == nil {
		t.Fatal("reloading a broken file succeeded")
	}

	all := []string{audit.TokenRefused, audit.ViewDenied, audit.CallDenied, audit.ServerDisabled, audit.ServerEnabled, audit.Stopped, audit.Resumed, audit.ConfigReload}
	events := auditEvents(t, trail, "every event in the trail", func(es []audit.Event) bool {
		return hasEvents(all...)(es) && len(find(es, audit.ConfigReload)) == 2 && len(find(es, audit.ServerEnabled)) == 2
	})
	host, _ := os.Hostname()
	for _, e := range events {
		if time.Since(e.Time) > time.Minute || e.Time.Location() != time.UTC {
			t.Errorf("%s: time %v, want a UTC time of this test", e.Event, e.Time)
		}
		if e.Instance.Host != host || e.Instance.PID != os.Getpid() {
			t.Errorf("%s: instance %+v, want this process", e.Event, e.Instance)
		}
	}
	check := func(name string, got audit.Event, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("%s: got %+v", name, got)
		}
	}
	tr := find(events, audit.TokenRefused)[0]
	check("token refused", tr, tr.Outcome == audit.Denied && tr.Actor.Via == "gateway" && strings.HasPrefix(tr.Actor.Remote, "127.0.0.1:") &&
		tr.Actor.Token == "" && tr.Target.View == "default" && tr.Reason != "")
	vd := find(events, audit.ViewDenied)[0]
	check("view denied", vd, vd.Outcome == audit.Denied && vd.Actor.User == "ana" && vd.Actor.Token == "reader" && vd.Target.View == "admin" &&
		strings.HasPrefix(vd.Actor.Remote, "127.0.0.1:"))
	cd := find(events, audit.CallDenied)[0]
	check("call denied", cd, cd.Outcome == audit.Denied && cd.Actor.User == "ana" && cd.Actor.Via == "gateway" && cd.Actor.Session != "" &&
		cd.Target.Server == "alpha" && cd.Target.Tool == "add" && cd.CallID != "" && strings.Contains(cd.Reason, "adding is closed today"))
	dis := find(events, audit.ServerDisabled)[0]
	check("disable", dis, dis.Outcome == audit.OK && dis.Actor.Via == "control" && dis.Actor.User != "" && dis.Target.Server == "alpha")
	en := find(events, audit.ServerEnabled)
	check("enable", en[0], en[0].Outcome == audit.OK && en[0].Target.Server == "alpha")
	check("enable an unknown server", en[1], en[1].Outcome == audit.Failed && en[1].Target.Server == "nosuch" && strings.Contains(en[1].Reason, "nosuch"))
	st := find(events, audit.Stopped)[0]
	check("stop", st, st.Outcome == audit.OK && st.Actor.Via == "control")
	re := find(events, audit.Resumed)[0]
	check("resume", re, re.Outcome == audit.OK && re.Actor.Via == "control")
	rl := find(events, audit.ConfigReload)
	check("reload", rl[0], rl[0].Outcome == audit.OK && rl[0].Actor.Via == "control" && rl[0].Target.File == path)
	check("failed reload", rl[1], rl[1].Outcome == audit.Failed && strings.Contains(rl[1].Reason, "transport"))

	raw, err := os.ReadFile(trail)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{auditReaderToken, auditAdminToken, auditWrongToken, auditServerKey} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the trail holds a secret %q:\n%s", secret, raw)
		}
	}
	if t.Failed() {
		t.Logf("the trail:\n%s", raw)
	}
}

// TestAuditRequiredFailsClosed: with audit.required, an event the trail
// cannot write (here /dev/full, a real device on which every write fails
// with ENOSPC) sets the stop switch, so that no call runs unaudited, and
// is counted in the metric; without it, calls go on and it is counted.
func TestAuditRequiredFailsClosed(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("needs /dev/full (Linux) to make the audit file fail on demand")
	}
	for _, required := range []bool{true, false} {
		t.Run(fmt.Sprint("required=", required), func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(okHTTPServer(t, "alpha"))
			cfg.Audit = config.Audit{File: "/dev/full", Required: required}
			cfg.Gateway.Tokens = []config.Token{{Name: "t", User: "ana", Secret: auditReaderToken}}
			r := start(t, cfg)
			send(t, http.MethodPost, r.url+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, bearer(auditWrongToken))
			eventually(t, "the lost event counted", func() bool {
				return strings.Contains(scrape(t, r.url, auditReaderToken), `switchboard_audit_write_failures_total{event="auth.token_refused"} 1`)
			})
			if got := r.d.Engine().Stopped(); got != required {
				t.Errorf("calls stopped: got %v, want %v", got, required)
			}
			_, err := os.Stat(control.StopFlagPath(r.stateDir))
			if got := err == nil; got != required {
				t.Errorf("the stop flag is set: got %v, want %v", got, required)
			}
		})
	}
}

// scrape returns the daemon's /metrics.
func scrape(t *testing.T, base, token string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body) // all of it: send reads only the first 8 KiB
	return string(b)
}

// TestAuditOAuthRefusals: OAuth access tokens the gateway refuses are in
// the trail with the reason (expired, another audience) and never the
// token; a view the token's groups do not grant is a view denied.
func TestAuditOAuthRefusals(t *testing.T) {
	t.Parallel()
	is := oauthtest.New(t)
	cfg := oauthConfig(t, is.URL)
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg.Audit = config.Audit{File: trail}
	r := start(t, cfg)
	claims := func(aud string, extra map[string]any) map[string]any {
		c := is.Claims("alice", oauthResource+aud, map[string]any{"scope": "mcp:tools", "groups": []string{"staff"}})
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	expired := is.Token(t, claims("/mcp", map[string]any{"exp": time.Now().Add(-time.Hour).Unix(), "iat": time.Now().Add(-2 * time.Hour).Unix()}))
	otherAud := is.Token(t, claims("", map[string]any{"aud": "https://other.example.com/mcp"}))
	noView := is.Token(t, claims("/mcp/eng", map[string]any{"scope": "mcp:tools eng:write"}))
	for _, c := range []struct {
		path, token string
		status      int
	}{{"/mcp", expired, 401}, {"/mcp", otherAud, 401}, {"/mcp/eng", noView, 403}} {
		if resp, body := postAnswer(t, r.url+c.path, bearer(c.token)); resp.StatusCode != c.status {
			t.Fatalf("%s: got %d %s, want %d", c.path, resp.StatusCode, body, c.status)
		}
	}
	events := auditEvents(t, trail, "the three refusals", func(es []audit.Event) bool {
		return len(find(es, audit.TokenRefused)) == 2 && len(find(es, audit.ViewDenied)) == 1
	})
	tr := find(events, audit.TokenRefused)
	if !strings.Contains(tr[0].Reason, "expired") || !strings.Contains(tr[1].Reason, "issued for") {
		t.Errorf("the reasons: got %q and %q, want expired and another audience", tr[0].Reason, tr[1].Reason)
	}
	for _, e := range append(tr, find(events, audit.ViewDenied)...) {
		if e.Actor.Via != "gateway" || e.Actor.Token != "oauth" || !strings.HasPrefix(e.Actor.Remote, "127.0.0.1:") {
			t.Errorf("%s: actor %+v, want the gateway's OAuth caller with its address", e.Event, e.Actor)
		}
	}
	if vd := find(events, audit.ViewDenied)[0]; vd.Target.View != "eng" {
		t.Errorf("view denied: target %+v, want the view eng", vd.Target)
	}
	raw, _ := os.ReadFile(trail)
	for _, tok := range []string{expired, otherAud, noView} {
		for _, part := range strings.Split(tok, ".") {
			if len(part) > 8 && strings.Contains(string(raw), part) {
				t.Errorf("the trail holds a part of a token:\n%s", raw)
			}
		}
	}
}

// TestAuditConsoleLogin: a failed and a successful login to the console
// are audited with the address they came from; a disable from the
// console carries the logged-in user.
func TestAuditConsoleLogin(t *testing.T) {
	t.Parallel()
	cfg := testConfig(okHTTPServer(t, "alpha"))
	cfg.Gateway.Tokens = []config.Token{{Name: "ci", User: "alice", Secret: auditAdminToken}}
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg.Audit = config.Audit{File: trail}
	r := start(t, cfg)
	b := newBrowserish(t, r.url)
	const formType = "application/x-www-form-urlencoded"
	token := b.csrf(web.Prefix + "login")
	if resp, _ := b.do("POST", web.Prefix+"login", formType, url.Values{"csrf": {token}, "token": {auditWrongToken}}.Encode()); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a wrong token: got %d, want 401", resp.StatusCode)
	}
	if resp, _ := b.do("POST", web.Prefix+"login", formType, url.Values{"csrf": {token}, "token": {auditAdminToken}}.Encode()); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: got %d, want 303", resp.StatusCode)
	}
	page := b.csrf("/")
	if resp, body := b.do("POST", web.Prefix+"api/servers/alpha/disable", "", "", web.CSRFHeader, page); resp.StatusCode != http.StatusOK {
		t.Fatalf("disable from the console: got %d %s", resp.StatusCode, body)
	}
	events := auditEvents(t, trail, "two logins and a disable", func(es []audit.Event) bool {
		return len(find(es, audit.ConsoleLogin)) == 2 && len(find(es, audit.ServerDisabled)) == 1
	})
	logins := find(events, audit.ConsoleLogin)
	if l := logins[0]; l.Outcome != audit.Failed || l.Actor.Via != "console" || !strings.HasPrefix(l.Actor.Remote, "127.0.0.1:") || l.Reason == "" {
		t.Errorf("failed login: got %+v", l)
	}
	if l := logins[1]; l.Outcome != audit.OK || l.Actor.User != "alice" || l.Actor.Token != "ci" || !strings.HasPrefix(l.Actor.Remote, "127.0.0.1:") {
		t.Errorf("login: got %+v", l)
	}
	if d := find(events, audit.ServerDisabled)[0]; d.Actor.User != "alice" || d.Actor.Via != "console" || d.Target.Server != "alpha" {
		t.Errorf("disable: got %+v, want alice's from the console", d)
	}
	raw, _ := os.ReadFile(trail)
	if strings.Contains(string(raw), auditAdminToken) || strings.Contains(string(raw), auditWrongToken) {
		t.Errorf("the trail holds a token:\n%s", raw)
	}
}
