package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/builtin/taskapi"
	"github.com/switchboard-mcp/switchboard/internal/builtin/tasks"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// embeddedDefault is what `switchboard serve` runs with no configuration
// file (internal/cli/embedded.go): the built-in task server, in-process,
// in front of the reference task API on a loopback port with a random
// service token, tasks in SQLite. It returns the configuration and the
// option that dials the task server.
func embeddedDefault(t *testing.T) (*config.Config, func(*Options)) {
	t.Helper()
	st := openStore(t, filepath.Join(t.TempDir(), "tasks.db"))
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	token := hex.EncodeToString(raw[:])
	h, err := taskapi.NewHandler(taskapi.Options{Store: st, ServiceToken: token})
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(h)
	t.Cleanup(api.Close)
	settings := tasks.Settings{ServiceAuthToken: token, BackendURL: api.URL, LogLevel: "WARNING", Port: 3000,
		BackendTimeout: 30 * time.Second, BackendMaxRetries: 2}

	cfg := config.Default()
	cfg.Gateway.Listen = "127.0.0.1:0"
	cfg.Servers = []config.Server{{
		Name: "tasks", Transport: config.TransportBuiltin, Enabled: true,
		LoadTools: true, LoadPrompts: true, LoadResources: true,
		ConnectTimeout: cfg.Defaults.ConnectTimeout, RequestTimeout: cfg.Defaults.RequestTimeout, MaxRetries: cfg.Defaults.MaxRetries,
	}}
	dial := func(o *Options) {
		o.DialOptions = func(server string, do *upstream.DialOptions) {
			if server != "tasks" {
				return
			}
			do.NewTransport = func(ctx context.Context) (mcp.Transport, error) {
				srv, err := tasks.NewServer(settings, tasks.Options{})
				if err != nil {
					return nil, err
				}
				ct, stt := mcp.NewInMemoryTransports()
				if _, err := srv.Connect(context.WithoutCancel(ctx), stt, nil); err != nil {
					return nil, err
				}
				return ct, nil
			}
		}
	}
	return cfg, dial
}

// taskOwners decodes list_tasks' answer into the owners of the tasks
// titled title.
func taskOwners(t *testing.T, text, title string) []string {
	t.Helper()
	var out struct {
		Tasks []struct {
			Title  string `json:"title"`
			UserID string `json:"user_id"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("list_tasks answered %q: %v", text, err)
	}
	var owners []string
	for _, tk := range out.Tasks {
		if tk.Title == title {
			owners = append(owners, tk.UserID)
		}
	}
	return owners
}

// TestEmbeddedDefaultFromTheTypeScriptClient: with no configuration, an MCP
// client that names no user — the TypeScript SDK over /mcp — creates and
// lists tasks as gateway.default_user, the OS user, as the CLI does.
func TestEmbeddedDefaultFromTheTypeScriptClient(t *testing.T) {
	t.Parallel()
	osUser := config.OSUser()
	if osUser == "" {
		t.Fatal("no OS user to act as: set $USER")
	}
	cfg, dial := embeddedDefault(t)
	r := start(t, cfg, dial)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	lines, err := testpeer.RunTSClient(t, ctx, testpeer.TSClientInput{
		Target: testpeer.TSTarget{Transport: "http", URL: r.url + "/mcp"},
		Steps: []testpeer.TSStep{
			{"op": "list_tools", "want": []string{"tasks__create_task", "tasks__list_tasks"}},
			{"op": "call", "name": "tasks__create_task", "arguments": map[string]any{"title": "Buy milk", "priority": "High"}},
			{"op": "call", "name": "tasks__list_tasks", "arguments": map[string]any{}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	create, list := lines[2], lines[3]
	for _, l := range []testpeer.TSResult{create, list} {
		var res mcp.CallToolResult
		if !l.OK() || l.Decode(&res) != nil || res.IsError {
			t.Fatalf("%s: got %v, want a successful call (no 'Missing user context')", l["op"], l)
		}
	}
	if owners := taskOwners(t, list.Text(), "Buy milk"); len(owners) != 1 || owners[0] != osUser {
		t.Errorf("the task's owner: got %v, want the OS user %q", owners, osUser)
	}
	recs := r.waitRecords(t, store.CallFilter{Source: "gateway"}, func(rs []store.CallRecord) bool { return len(rs) == 2 })
	for _, rec := range recs {
		if rec.Identity != osUser || rec.Status != "success" {
			t.Errorf("history: got %s by %q (%s), want a success by %q", rec.Tool, rec.Identity, rec.Status, osUser)
		}
	}
}

// TestDefaultUserAndClaims: gateway.default_user is the identity of a
// client that names none; a client's own _meta.user_id wins while the
// gateway has no tokens; with tokens, the token decides and default_user
// does not apply to HTTP callers.
func TestDefaultUserAndClaims(t *testing.T) {
	t.Parallel()
	whoami := func(t *testing.T, cs *mcp.ClientSession, meta mcp.Meta) map[string]any {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__whoami", Arguments: map[string]any{}, Meta: meta})
		if err != nil || res.IsError {
			t.Fatalf("whoami: %v %v", err, res)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(textOf(res)), &got); err != nil {
			t.Fatalf("whoami answered %q: %v", textOf(res), err)
		}
		return got
	}

	for _, fast := range []bool{true, false} {
		t.Run(map[bool]string{true: "no tokens, fast path", false: "no tokens, SDK path"}[fast], func(t *testing.T) {
			cfg := testConfig(okHTTPServer(t, "alpha"))
			cfg.Gateway.DefaultUser = "ada"
			cfg.Gateway.DisableFastPath = !fast
			r := start(t, cfg)
			cs := r.connect(t, "/mcp", nil, nil)
			waitTools(t, cs, "alpha's tools", has("alpha__whoami"))
			if got := whoami(t, cs, nil)["user_id"]; got != "ada" {
				t.Errorf("no claim: the server saw user_id %v, want default_user ada", got)
			}
			if got := whoami(t, cs, mcp.Meta{"user_id": "grace"})["user_id"]; got != "grace" {
				t.Errorf("a claim: the server saw user_id %v, want the client's own grace", got)
			}
		})
	}

	t.Run("tokens", func(t *testing.T) {
		cfg := testConfig(okHTTPServer(t, "alpha"))
		cfg.Gateway.DefaultUser = "ada"
		cfg.Gateway.Tokens = []config.Token{{Name: "ci", User: "ci-bot", Secret: "ci-secret"}}
		r := start(t, cfg)
		cs := r.connect(t, "/mcp", http.Header{"Authorization": {"Bearer ci-secret"}}, nil)
		waitTools(t, cs, "alpha's tools", has("alpha__whoami"))
		if got := whoami(t, cs, mcp.Meta{"user_id": "grace"})["user_id"]; got != "ci-bot" {
			t.Errorf("with a token: the server saw user_id %v, want the token's ci-bot", got)
		}
		if _, err := r.tryConnect("/mcp", nil, nil); err == nil {
			t.Error("a client without a token connected, want 401 (default_user must not apply to remote callers)")
		}
	})
}

// TestStdioActsAsDefaultUser: serve --stdio on the embedded default, from
// the go-sdk client: its calls act as default_user, even with tokens
// configured (the client is a process the user started).
func TestStdioActsAsDefaultUser(t *testing.T) {
	t.Parallel()
	cfg, dial := embeddedDefault(t)
	cfg.Gateway.DefaultUser = "stdio-user"
	cfg.Gateway.Tokens = []config.Token{{Name: "remote", User: "someone-else", Secret: "remote-secret"}}
	clientT := startStdio(t, cfg, dial)
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-client", Version: "1"}, nil)
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	cs, err := c.Connect(cctx, clientT, nil)
	if err != nil {
		t.Fatalf("connecting over stdio: %v", err)
	}
	defer cs.Close()
	if res := call(t, cs, "tasks__create_task", map[string]any{"title": "Water the plants"}); res.IsError {
		t.Fatalf("create_task over stdio: got %s, want a success", textOf(res))
	}
	res := call(t, cs, "tasks__list_tasks", map[string]any{})
	if res.IsError {
		t.Fatalf("list_tasks over stdio: %s", textOf(res))
	}
	if owners := taskOwners(t, textOf(res), "Water the plants"); len(owners) != 1 || owners[0] != "stdio-user" {
		t.Errorf("the task's owner: got %v, want default_user stdio-user", owners)
	}
}

// TestConsoleTryItActsAsDefaultUser: the console's "Try it" without tokens
// (so on loopback) calls as gateway.default_user: the task server's
// create_task works from it.
func TestConsoleTryItActsAsDefaultUser(t *testing.T) {
	t.Parallel()
	cfg, dial := embeddedDefault(t)
	cfg.Gateway.DefaultUser = "console-user"
	r := start(t, cfg, dial)
	if _, err := r.d.Pool().WaitConnected(context.Background(), "tasks", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := r.d.Catalog().Refresh(context.Background(), "tasks"); err != nil {
		t.Fatal(err)
	}
	b := newBrowserish(t, r.url)
	page := b.csrf("/")
	resp, body := b.do("POST", web.Prefix+"api/calls", "application/json", `{"server":"tasks","tool":"create_task","arguments":{"title":"Call mum"}}`, web.CSRFHeader, page)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("starting a call from the console: got %d %s", resp.StatusCode, body)
	}
	recs := r.waitRecords(t, store.CallFilter{Source: "web"}, func(rs []store.CallRecord) bool { return len(rs) == 1 })
	if rec := recs[0]; rec.Identity != "console-user" || rec.Status != "success" {
		t.Errorf("history: got %s by %q (%s: %s), want a success by console-user", rec.Tool, rec.Identity, rec.Status, rec.ErrorMessage)
	}
	if strings.Contains(recs[0].ErrorMessage, "Missing user context") {
		t.Errorf("the console's call had no user: %s", recs[0].ErrorMessage)
	}
}
