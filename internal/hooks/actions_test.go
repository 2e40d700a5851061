package hooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/vcs"

	"github.com/switchboard-mcp/switchboard/internal/hooks"
)

// TestCommandAction checks the exit-status convention, stdin and that no
// shell is involved.
func TestCommandAction(t *testing.T) {
	dir := t.TempDir()
	argsFile, stdinFile := filepath.Join(dir, "args"), filepath.Join(dir, "stdin")
	record := script(t, dir, "record.sh", fmt.Sprintf(`printf '%%s\n' "$@" > %q
cat > %q
echo '{"decision":"allow","note":"ok"}'
`, argsFile, stdinFile))
	block := script(t, dir, "block.sh", `echo "frozen until Monday" >&2; exit 2`)
	fail := script(t, dir, "fail.sh", `echo "disk full" >&2; exit 7`)
	noexec := script(t, dir, "noexec.sh", `exit 0`)
	if err := os.Chmod(noexec, 0o644); err != nil {
		t.Fatal(err)
	}
	f := engineOnly(t, fmt.Sprintf(`hooks:
  - name: record
    on: cmd.ok
    actions: [{type: command, command: [%q, "{feature}", "$(touch pwned); echo", "{n}"]}]
  - name: block
    on: cmd.block
    actions: [{type: command, command: [%q]}]
  - name: fail
    on: cmd.fail
    actions: [{type: command, command: [%q]}, {type: command, command: [%q]}]
  - name: missing
    on: cmd.missing
    actions: [{type: command, command: [./no-such-program]}]
  - name: noexec
    on: cmd.noexec
    actions: [{type: command, command: [%q]}]
  - name: notonpath
    on: cmd.notonpath
    actions: [{type: command, command: [no-such-program-on-path]}]
`, record, block, fail, record, noexec), nil)
	ctx := context.Background()

	rep, err := f.eng.Fire(ctx, "cmd.ok", map[string]any{"n": 42})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed || rep.Blocked || rep.Runs[0].Status != hooks.StatusSuccess {
		t.Fatalf("ok: got %+v, want success", rep)
	}
	if out, _ := rep.Runs[0].Output.(map[string]any); out["note"] != "ok" {
		t.Errorf("output: got %v, want the decoded stdout", rep.Runs[0].Output)
	}
	args, _ := os.ReadFile(argsFile)
	if got, want := string(args), "003-user-auth\n$(touch pwned); echo\n42\n"; got != want {
		t.Errorf("arguments: got %q, want %q (passed as is, no shell)", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Errorf("a shell ran the argument")
	}
	var in map[string]any
	data, _ := os.ReadFile(stdinFile)
	if err := json.Unmarshal(data, &in); err != nil || in["event"] != "cmd.ok" || in["branch"] != "003-user-auth" || in["n"] != 42.0 {
		t.Errorf("stdin: got %s (%v), want the event as JSON", data, err)
	}

	rep, err = f.eng.Fire(ctx, "cmd.block", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Blocked || rep.Reason != "frozen until Monday" || rep.BlockedBy != "block" || rep.Runs[0].Status != hooks.StatusBlocked {
		t.Errorf("block: got %+v, want blocked with stderr as the reason", rep)
	}

	rep, err = f.eng.Fire(ctx, "cmd.fail", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Failed || rep.Blocked || len(rep.Runs) != 1 || rep.Runs[0].Error != fail+" exited with status 7: disk full" {
		t.Errorf("fail: got %+v, want one failure (the second action not run), not blocked", rep)
	}

	rep, err = f.eng.Fire(ctx, "cmd.missing", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Failed || !strings.Contains(rep.Runs[0].Error, "program ./no-such-program does not exist") ||
		!strings.Contains(rep.Runs[0].Error, "commands run in the configuration's folder") {
		t.Errorf("missing: got %+v, want a failure saying the program does not exist and where it was looked for", rep)
	}
	f.runs(t, store.HookRunFilter{Failed: true}, 3)

	// hooks list says so before anything fires, at the action's line.
	problems := map[string]string{}
	for _, h := range f.eng.List() {
		problems[h.Name] = strings.Join(h.Problems, "; ")
	}
	for name, want := range map[string]string{
		"missing":   "18:16: program ./no-such-program does not exist",
		"noexec":    "is not executable (" + noexec + "); chmod +x it",
		"notonpath": "program no-such-program-on-path is not on PATH",
		"record":    "",
	} {
		if got := problems[name]; (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("hooks list, %s: got problems %q, want %q", name, got, want)
		}
	}
}

// TestHTTPAction posts events to a local server.
func TestHTTPAction(t *testing.T) {
	var (
		mu    sync.Mutex
		hits  = map[string]int{}
		seen  map[string]any
		hdrOK bool
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		hits[r.URL.Path]++
		switch r.URL.Path {
		case "/ok":
			body, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(body, &seen)
			hdrOK = r.Method == http.MethodPost && r.Header.Get("Content-Type") == "application/json" &&
				r.Header.Get("X-Team") == "platform" && r.Header.Get("X-Switchboard-Event") == "web.ok"
			w.Write([]byte(`{"decision":"allow"}`))
		case "/deny":
			w.Write([]byte(`{"decision":"deny","reason":"release frozen"}`))
		case "/flaky":
			http.Error(w, "try later", http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	f := engineOnly(t, fmt.Sprintf(`hook_settings: {retry_delay: 0s}
hooks:
  - {name: ok, on: web.ok, actions: [{type: http, url: "%[1]s/ok", headers: {X-Team: platform}}]}
  - {name: deny, on: web.deny, actions: [{type: http, url: "%[1]s/deny"}]}
  - {name: flaky, on: web.flaky, actions: [{type: http, url: "%[1]s/flaky"}]}
  - {name: gone, on: web.gone, actions: [{type: http, url: "%[1]s/gone"}]}
`, srv.URL), nil)
	ctx := context.Background()
	tests := []struct {
		event       string
		wantStatus  hooks.Status
		wantBlocked bool
		wantErr     string
		wantHits    int
	}{
		{"web.ok", hooks.StatusSuccess, false, "", 1},
		{"web.deny", hooks.StatusBlocked, true, "", 1},
		{"web.flaky", hooks.StatusFailure, false, "answered 503 Service Unavailable: try later", 2}, // retried once
		{"web.gone", hooks.StatusFailure, false, "answered 404 Not Found", 1},                       // not retried
	}
	for _, tt := range tests {
		t.Run(tt.event, func(t *testing.T) {
			rep, err := f.eng.Fire(ctx, tt.event, map[string]any{"feature": "override"})
			if err != nil {
				t.Fatal(err)
			}
			r := rep.Runs[0]
			if r.Status != tt.wantStatus || rep.Blocked != tt.wantBlocked || !strings.Contains(r.Error, tt.wantErr) {
				t.Errorf("got %s blocked=%v %q, want %s blocked=%v %q", r.Status, rep.Blocked, r.Error, tt.wantStatus, tt.wantBlocked, tt.wantErr)
			}
			mu.Lock()
			defer mu.Unlock()
			if got := hits["/"+strings.TrimPrefix(tt.event, "web.")]; got != tt.wantHits {
				t.Errorf("requests: got %d, want %d", got, tt.wantHits)
			}
		})
	}
	// A URL with a secret in its query: the report and the dry run show
	// it redacted (so do the log and the record, from the same text).
	t.Run("secret in the URL", func(t *testing.T) {
		const secret = "urlhooksecret1"
		g := engineOnly(t, fmt.Sprintf(`hook_settings: {retry_delay: 0s}
hooks:
  - {name: leaky, on: web.leaky, actions: [{type: http, url: "%s/gone?token=%s"}]}
`, srv.URL, secret), nil)
		rep, err := g.eng.Fire(ctx, "web.leaky", nil)
		if err != nil {
			t.Fatal(err)
		}
		if r := rep.Runs[0]; r.Status != hooks.StatusFailure || strings.Contains(r.Error, secret) || !strings.Contains(r.Error, "/gone") {
			t.Errorf("fire: got %s %q, want a failure naming the URL without the token's value", r.Status, r.Error)
		}
		dry, err := g.eng.DryRun(ctx, "web.leaky", nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(dry.Runs[0].Params); strings.Contains(string(b), secret) || !strings.Contains(string(b), "/gone") {
			t.Errorf("dry run: got params %s, want the URL without the token's value", b)
		}
	})

	mu.Lock()
	defer mu.Unlock()
	if !hdrOK || seen["event"] != "web.ok" || seen["feature"] != "override" || seen["user"] != "tester" {
		t.Errorf("request: headers ok=%v body %v, want the event as JSON with the headers", hdrOK, seen)
	}
}

// TestGitHubAction creates an issue and a comment against a local server
// that checks the requests.
func TestGitHubAction(t *testing.T) {
	t.Setenv("HOOKS_TEST_GH_TOKEN", "ghp_testtoken123")
	var (
		mu   sync.Mutex
		reqs []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+strings.TrimSpace(string(body)))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		switch {
		case strings.HasSuffix(r.URL.Path, "/comments"):
			w.Write([]byte(`{"id": 99, "html_url": "https://gh.example/c/99"}`))
		default:
			w.Write([]byte(`{"number": 7, "html_url": "https://gh.example/i/7"}`))
		}
	}))
	defer srv.Close()
	f := engineOnly(t, fmt.Sprintf(`hooks:
  - name: issue
    on: spec.after-tasks
    actions:
      - {type: github, github: issue, base_url: %[1]q, token_env: HOOKS_TEST_GH_TOKEN, title: "Tasks for {feature}", body: "by {user}", labels: [tasks]}
      - {type: github, github: comment, base_url: %[1]q, token_env: HOOKS_TEST_GH_TOKEN, repo: octo/other, number: "{pr}", body: "done"}
  - name: no-token
    on: spec.no-token
    actions:
      - {type: github, github: issue, base_url: %[1]q, token_env: HOOKS_TEST_UNSET, title: x}
`, srv.URL), nil)
	rep, err := f.eng.Fire(context.Background(), "spec.after-tasks", map[string]any{"pr": "#12"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed || len(rep.Runs) != 2 {
		t.Fatalf("got %+v, want two successes", rep)
	}
	want := []string{
		`POST /repos/octo/demo/issues Bearer ghp_testtoken123 {"title":"Tasks for 003-user-auth","body":"by tester","labels":["tasks"]}`,
		`POST /repos/octo/other/issues/12/comments Bearer ghp_testtoken123 {"body":"done"}`,
	}
	mu.Lock()
	got := strings.Join(reqs, "\n")
	mu.Unlock()
	if diff := cmp.Diff(strings.Join(want, "\n"), got); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
	if out := rep.Runs[0].Output.(map[string]any); out["number"] != 7 {
		t.Errorf("issue output: got %v", out)
	}
	rep, err = f.eng.Fire(context.Background(), "spec.no-token", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Failed || rep.Runs[0].Error != "HOOKS_TEST_UNSET is not set: the github action needs a token" {
		t.Errorf("no token: got %+v", rep.Runs)
	}
}

// gitRepo makes a repository with one commit on branch 003-user-auth.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is not on PATH: install git to run this test")
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "003-user-auth")
	run("config", "user.name", "Ada Tester")
	run("config", "user.email", "ada@example.com")
	run("config", "commit.gpgsign", "false")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644)
	run("add", "a.txt")
	run("commit", "-q", "-m", "first")
	return dir
}

// TestGitAction commits staged changes, branches and tags in a temporary
// repository, with the standard context from the real repository.
func TestGitAction(t *testing.T) {
	dir := gitRepo(t)
	f := engineOnly(t, `hooks:
  - name: save
    on: spec.after-implement
    actions:
      - {type: git, git: commit, message: "feat({feature}): {summary} by {user}"}
      - {type: git, git: branch, name: "{feature}-review"}
      - {type: git, git: tag, name: "{feature}-done", message: "done"}
`, func(o *hooks.Options) { o.Dir, o.Describe = dir, nil })
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("two\n"), 0o644)
	cmd := exec.Command("git", "add", "b.txt")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	rep, err := f.eng.Fire(context.Background(), "spec.after-implement", map[string]any{"summary": "login"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed || len(rep.Runs) != 3 {
		t.Fatalf("got %+v, want three successes", rep)
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	if got, want := git("log", "-1", "--format=%s"), "feat(003-user-auth): login by Ada Tester"; got != want {
		t.Errorf("commit subject: got %q, want %q", got, want)
	}
	if sha := git("rev-parse", "HEAD"); rep.Runs[0].Output != sha {
		t.Errorf("commit output: got %v, want %s", rep.Runs[0].Output, sha)
	}
	if got := git("branch", "--list", "003-user-auth-review"); got == "" {
		t.Errorf("branch 003-user-auth-review was not created")
	}
	if got := git("tag", "--list", "003-user-auth-done"); got != "003-user-auth-done" {
		t.Errorf("tag: got %q", got)
	}
	// Nothing staged: the commit action fails and says so.
	rep, _ = f.eng.Fire(context.Background(), "spec.after-implement", map[string]any{"summary": "again"})
	if !rep.Failed || rep.Runs[0].Status != hooks.StatusFailure {
		t.Errorf("empty commit: got %+v, want a failure", rep.Runs)
	}
}

// TestAgentAction runs the agent function, or fails clearly without one.
func TestAgentAction(t *testing.T) {
	const hooksYAML = "hooks:\n  - {name: review, on: pr.opened, actions: [{type: agent, prompt: \"Review PR {number} on {branch}\", tools: [lint]}]}\n"
	f := engineOnly(t, hooksYAML, nil)
	rep, _ := f.eng.Fire(context.Background(), "pr.opened", map[string]any{"number": 5})
	if !rep.Failed || !strings.HasPrefix(rep.Runs[0].Error, "no LLM configured") {
		t.Errorf("without an agent: got %+v", rep.Runs)
	}
	var got hooks.AgentRequest
	f = engineOnly(t, hooksYAML, func(o *hooks.Options) {
		o.Agent = func(_ context.Context, req hooks.AgentRequest) (string, error) {
			got = req
			if strings.Contains(req.Prompt, "99") {
				return "", errors.New("model overloaded")
			}
			return "looks good", nil
		}
	})
	rep, _ = f.eng.Fire(context.Background(), "pr.opened", map[string]any{"number": 5})
	if rep.Failed || rep.Runs[0].Output != "looks good" || got.Prompt != "Review PR 5 on 003-user-auth" || fmt.Sprint(got.Tools) != "[lint]" {
		t.Errorf("with an agent: got %+v, prompt %q tools %v", rep.Runs, got.Prompt, got.Tools)
	}
	// The agent's calls say which hook and event started it.
	if want := "hook review on pr.opened (event " + rep.EventID + ")"; got.Origin != want || got.Identity != "hook:review" {
		t.Errorf("agent request: got origin %q, identity %q; want %q, hook:review", got.Origin, got.Identity, want)
	}
	rep, _ = f.eng.Fire(context.Background(), "pr.opened", map[string]any{"number": 99})
	if !rep.Failed || rep.Runs[0].Error != "agent: model overloaded" {
		t.Errorf("agent error: got %+v", rep.Runs)
	}
}

// TestStandardContextFromGit reads the standard context of a real
// repository.
func TestStandardContextFromGit(t *testing.T) {
	dir := gitRepo(t)
	f := engineOnly(t, "hooks:\n  - {name: x, on: a.b, actions: [{type: event, event: c.d}]}\n", func(o *hooks.Options) { o.Dir, o.Describe = dir, vcs.Describe })
	got := f.eng.StandardContext(context.Background(), "a.b", nil)
	if got["user"] != "Ada Tester" || got["branch"] != "003-user-auth" || got["feature"] != "003-user-auth" || got["timestamp"] == "" {
		t.Errorf("standard context: got %v", got)
	}
}
