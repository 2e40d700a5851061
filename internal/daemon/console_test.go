package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// startOnStore runs a daemon for cfg on the SQLite database at db (shared
// with other daemons of the test, as replicas share one database).
func startOnStore(t *testing.T, cfg *config.Config, db string) *running {
	t.Helper()
	st := openStore(t, db) // closed after the daemon stops: cleanups run last first
	c := *cfg
	r := start(t, &c, func(o *Options) { o.Store, o.NoControl = st, true })
	r.store = st
	return r
}

// TestConsoleSessionsInTheStore logs in on one daemon and uses the
// session on a second daemon over the same database (a replica) and on a
// third started after the first stopped (a restart).
func TestConsoleSessionsInTheStore(t *testing.T) {
	t.Parallel()
	const secret = "replica-token-secret"
	cfg := testConfig()
	cfg.Gateway.Tokens = []config.Token{{Name: "ci", User: "alice", Secret: secret}}
	db := filepath.Join(t.TempDir(), "shared.db")
	a := startOnStore(t, cfg, db)
	b := startOnStore(t, cfg, db)

	ba := newBrowserish(t, a.url)
	token := ba.csrf(web.Prefix + "login")
	resp, _ := ba.do("POST", web.Prefix+"login", "application/x-www-form-urlencoded",
		url.Values{"csrf": {token}, "token": {secret}}.Encode())
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: got %d, want 303", resp.StatusCode)
	}
	ck := ba.cookie()
	page := ba.csrf("/")

	// The same cookie on the replica: logged in, with the same CSRF token.
	bb := newBrowserish(t, b.url)
	u, _ := url.Parse(b.url)
	bb.c.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: ck.Value, Path: "/"}})
	if got := bb.csrf("/"); got != page {
		t.Errorf("the replica's CSRF token: got %q, want the session's %q", got, page)
	}
	if resp, body := bb.do("POST", web.Prefix+"api/resume", "", "", web.CSRFHeader, page); resp.StatusCode != http.StatusOK {
		t.Errorf("a change on the replica with the session's CSRF token: got %d %s, want 200", resp.StatusCode, body)
	}

	// A restart: a new daemon on the same database knows the session.
	a.stop(t)
	c := startOnStore(t, cfg, db)
	bc := newBrowserish(t, c.url)
	u, _ = url.Parse(c.url)
	bc.c.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: ck.Value, Path: "/"}})
	if resp, body := bc.do("GET", "/", "", ""); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Log out alice") {
		t.Errorf("after a restart: got %d, want the page, logged in as alice", resp.StatusCode)
	}

	// Logging out on one replica ends the session on the others.
	if resp, _ := bc.do("POST", web.Prefix+"logout", "application/x-www-form-urlencoded", url.Values{"csrf": {page}}.Encode()); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: got %d, want 303", resp.StatusCode)
	}
	bb2 := newBrowserish(t, b.url)
	u, _ = url.Parse(b.url)
	bb2.c.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: ck.Value, Path: "/"}})
	// b still holds the session in memory for up to touchEvery; a new
	// request on b after the logout must not be let in once b reads the
	// store again. The store no longer has it:
	if _, err := c.store.(store.SessionStore).ConsoleSession(context.Background(), ck.Value); err == nil {
		t.Error("the store still has the session after logging out")
	}
}

// TestConsoleAPIBearer uses the console's API with a gateway token in the
// Authorization header, as a script does: no cookie, no CSRF token.
func TestConsoleAPIBearer(t *testing.T) {
	t.Parallel()
	const secret = "script-bearer-secret"
	cfg := testConfig()
	cfg.Gateway.Tokens = []config.Token{{Name: "ops", User: "robot", Secret: secret}}
	r := start(t, cfg)
	b := newBrowserish(t, r.url)

	resp, body := b.do("GET", web.Prefix+"api/servers", "", "", "Authorization", "Bearer "+secret)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"servers"`) {
		t.Errorf("GET servers with a bearer token: got %d %s, want 200", resp.StatusCode, body)
	}
	resp, body = b.do("POST", web.Prefix+"api/stop", "", "", "Authorization", "Bearer "+secret)
	if resp.StatusCode != http.StatusOK || !r.d.Engine().Stopped() {
		t.Errorf("POST stop with a bearer token and no CSRF token: got %d %s, want 200 and the engine stopped", resp.StatusCode, body)
	}
	resp, body = b.do("POST", web.Prefix+"api/resume", "", "", "Authorization", "Bearer wrong")
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "authentication_error") || !r.d.Engine().Stopped() {
		t.Errorf("a wrong bearer token: got %d %s, want 401 and nothing changed", resp.StatusCode, body)
	}
	if b.cookie() != nil {
		t.Error("a bearer request was given a session cookie")
	}
	// Pages are for browsers: a bearer token does not open them.
	if resp, _ := b.do("GET", web.Prefix+"history", "", "", "Authorization", "Bearer "+secret); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("a page with a bearer token: got %d, want 303 to the login", resp.StatusCode)
	}
}

// TestConsoleEditKeepsTrust: a file the person trusted stays trusted
// through the console's edit (its hooks keep running); an untrusted file
// is not trusted by it.
func TestConsoleEditKeepsTrust(t *testing.T) {
	t.Parallel()
	for _, trusted := range []bool{true, false} {
		t.Run(fmt.Sprintf("trusted=%v", trusted), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "switchboard.yaml")
			if err := os.WriteFile(path, []byte("# mine\ngateway:\n  listen: 127.0.0.1:0\nservers: []\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			load := func() (*config.Config, error) { return config.Load(path, config.Options{}) }
			cfg, err := load()
			if err != nil {
				t.Fatal(err)
			}
			r := start(t, cfg, func(o *Options) { o.Load = load })
			if trusted {
				if _, err := config.Trust(r.stateDir, path); err != nil {
					t.Fatal(err)
				}
			}
			ed := &fileEditor{d: r.d}
			if _, err := ed.Save(context.Background(), "", web.ServerEntry{Name: "alpha", Command: "npx", Args: []string{"-y", "x"}, Disabled: true}); err != nil {
				t.Fatal(err)
			}
			st, err := config.CheckTrust(r.stateDir, path)
			want := config.Untrusted
			if trusted {
				want = config.Trusted
			}
			if err != nil || st != want {
				t.Errorf("trust after the edit: got %s, %v; want %s", st, err, want)
			}
			// A refused edit puts the file back, trusted as before.
			before, _ := os.ReadFile(path)
			if _, err := ed.Save(context.Background(), "", web.ServerEntry{Name: "bad name!", Command: "npx"}); err == nil {
				t.Fatal("an invalid server name was saved")
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Errorf("a refused edit changed the file:\n%s", after)
			}
			if st, _ := config.CheckTrust(r.stateDir, path); st != want {
				t.Errorf("trust after a refused edit: got %s, want %s", st, want)
			}
		})
	}
}

// TestConsoleEditPutsTheFileBack: when the reload refuses the written
// file, the old file comes back and the running configuration stays.
func TestConsoleEditPutsTheFileBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "switchboard.yaml")
	orig := "# mine\ngateway:\n  listen: 127.0.0.1:0\nservers: []\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	refusal := fault.New(fault.Config, "the reload refuses this on purpose")
	r := start(t, cfg, func(o *Options) { o.Load = func() (*config.Config, error) { return nil, refusal } })
	_, err = (&fileEditor{d: r.d}).Save(context.Background(), "", web.ServerEntry{Name: "alpha", Command: "npx", Disabled: true})
	if !errors.Is(err, refusal) {
		t.Fatalf("Save: got %v, want the reload's refusal", err)
	}
	if got, _ := os.ReadFile(path); string(got) != orig {
		t.Errorf("the file after a refused reload:\n%s\nwant it as it was", got)
	}
	if len(r.d.config().Servers) != 0 {
		t.Error("the running configuration changed")
	}
}

// TestConsoleAPIOAuthBearer: with gateway.oauth, a script may call the
// console's API with an OAuth access token, checked by the gateway's own
// validator (a JWT signed by the test issuer's key): it acts as the
// token's user; a token for another audience is refused with a 401 JSON
// error and the challenge, and the refusal is audited (never the token).
func TestConsoleAPIOAuthBearer(t *testing.T) {
	t.Parallel()
	is := oauthtest.New(t)
	cfg := oauthConfig(t, is.URL)
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg.Audit = config.Audit{File: trail}
	r := start(t, cfg)
	b := newBrowserish(t, r.url)
	good := is.Token(t, is.Claims("alice", oauthResource, map[string]any{"scope": "mcp:tools", "groups": []string{"admins"}}))
	// A user whose groups grant only some views may not: the console
	// reaches every server's tools and the configuration.
	narrow := is.Token(t, is.Claims("bob", oauthResource, map[string]any{"scope": "mcp:tools", "groups": []string{"engineers"}}))
	if resp, body := b.do("POST", web.Prefix+"api/stop", "", "", "Authorization", "Bearer "+narrow); resp.StatusCode != http.StatusForbidden ||
		!strings.Contains(body, `user \"bob\" may use only the views default, eng`) || r.d.Engine().Stopped() {
		t.Fatalf("POST stop with the access token of a user of some views: got %d %s, want 403 saying which views and nothing stopped", resp.StatusCode, body)
	}
	resp, body := b.do("GET", web.Prefix+"api/servers", "", "", "Authorization", "Bearer "+good)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"servers"`) {
		t.Fatalf("GET servers with an OAuth access token: got %d %s, want 200", resp.StatusCode, body)
	}
	resp, body = b.do("POST", web.Prefix+"api/stop", "", "", "Authorization", "Bearer "+good)
	if resp.StatusCode != http.StatusOK || !r.d.Engine().Stopped() {
		t.Fatalf("POST stop with an OAuth access token: got %d %s, want 200 and the engine stopped", resp.StatusCode, body)
	}
	wrongAud := is.Token(t, is.Claims("alice", "https://other.example.com", map[string]any{"scope": "mcp:tools"}))
	resp, body = b.do("POST", web.Prefix+"api/resume", "", "", "Authorization", "Bearer "+wrongAud)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `"authentication_error"`) ||
		!strings.Contains(resp.Header.Get("WWW-Authenticate"), "invalid_token") || !r.d.Engine().Stopped() {
		t.Errorf("another audience: got %d %q %s, want 401 JSON with the challenge and nothing changed", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	if b.cookie() != nil {
		t.Error("a bearer request was given a session cookie")
	}
	events := auditEvents(t, trail, "the stop and the two refusals", func(es []audit.Event) bool {
		return len(find(es, audit.Stopped)) > 0 && len(find(es, audit.TokenRefused)) == 2
	})
	st := find(events, audit.Stopped)[0]
	if st.Actor.User != "alice" || st.Actor.Via != "console" || st.Actor.Token != "oauth" || !strings.HasPrefix(st.Actor.Remote, "127.0.0.1:") {
		t.Errorf("stop: actor %+v, want alice through the console with an OAuth token", st.Actor)
	}
	refused := find(events, audit.TokenRefused)
	if tr := refused[0]; tr.Actor.Via != "console" || tr.Actor.User != "bob" || !strings.Contains(tr.Reason, "may use only the views default, eng") {
		t.Errorf("refusal of the user of some views: got %+v, want the console's refusal naming bob and his views", tr)
	}
	if tr := refused[1]; tr.Actor.Via != "console" || !strings.Contains(tr.Reason, "issued for") {
		t.Errorf("refusal: got %+v, want the console's refusal naming the audience", tr)
	}
	raw, _ := os.ReadFile(trail)
	for _, tok := range []string{good, narrow, wrongAud} {
		if strings.Contains(string(raw), strings.Split(tok, ".")[2]) {
			t.Error("the trail holds a token")
		}
	}
}
