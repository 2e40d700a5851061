package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeHooksConfig writes a switchboard.yaml holding hooks (and no
// servers) into dir, isolates the state directory, and returns the path.
func writeHooksConfig(t *testing.T, dir, hooks string) string {
	t.Helper()
	path := filepath.Join(dir, "switchboard.yaml")
	if err := os.WriteFile(path, []byte("servers: []\n"+hooks), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHooksCommands(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	setenv(t, envNoDaemon, "1")
	dir := t.TempDir()
	out := filepath.Join(dir, "event.json")
	block := writeScript(t, dir, "block.sh", `echo "main is frozen" >&2; exit 2`)
	fail := writeScript(t, dir, "fail.sh", `exit 5`)
	cfg := writeHooksConfig(t, dir, fmt.Sprintf(`hooks:
  - {name: save, on: spec.after-plan, actions: [{type: command, command: [tee, %q]}]}
  - {name: guard, on: git.pre-push, if: {branch: main}, actions: [{type: command, command: [%q]}]}
  - {name: broken, on: ci.done, actions: [{type: command, command: [%q]}]}
`, out, block, fail))

	// Untrusted: listed as such, and nothing runs.
	r := runCLI(t, "hooks", "list", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "hooks list", r.stdout, "save", "untrusted", "switchboard hooks trust")
	r = runCLI(t, "hooks", "fire", "--config", cfg, "spec.after-plan", "feature=003-x")
	wantCode(t, r, ExitOK)
	wantContains(t, "untrusted fire", r.stdout, "no hook ran for spec.after-plan")

	r = runCLI(t, "hooks", "trust", "--config", cfg, "--yes")
	wantCode(t, r, ExitOK)
	wantContains(t, "hooks trust", r.stdout, "trusted "+cfg)
	r = runCLI(t, "hooks", "list", "--config", cfg, "--json")
	wantCode(t, r, ExitOK)
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 3 || list[0]["trust"] != "trusted" || list[0]["valid"] != true {
		t.Fatalf("hooks list --json: got %s (%v)", r.stdout, err)
	}

	// Fired: the event reaches the command as JSON; key=value types.
	r = runCLI(t, "hooks", "fire", "--config", cfg, "spec.after-plan", "feature=003-x", "count=3", "draft=true", `tags=["a","b"]`)
	wantCode(t, r, ExitOK)
	var ev map[string]any
	data, _ := os.ReadFile(out)
	if err := json.Unmarshal(data, &ev); err != nil || ev["feature"] != "003-x" || ev["count"] != "3" || ev["draft"] != true || fmt.Sprint(ev["tags"]) != "[a b]" {
		t.Errorf("event: got %s (%v)", data, err)
	}

	// Dry run: parameters, nothing run.
	os.Remove(out)
	r = runCLI(t, "hooks", "fire", "--config", cfg, "--dry-run", "spec.after-plan")
	wantCode(t, r, ExitOK)
	wantContains(t, "dry run", r.stdout, "planned", `"command":["tee","`+out+`"]`)
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the dry run ran the command")
	}

	// Blocked: exit 3 with the reason; failed: exit 1.
	r = runCLI(t, "hooks", "fire", "--config", cfg, "git.pre-push", "branch=main")
	wantCode(t, r, ExitBlocked)
	wantContains(t, "blocked", r.stderr, "blocked by hook guard: main is frozen")
	r = runCLI(t, "hooks", "fire", "--config", cfg, "git.pre-push", "branch=feature")
	wantCode(t, r, ExitOK)
	r = runCLI(t, "hooks", "fire", "--config", cfg, "--quiet", "spec.after-plan")
	wantCode(t, r, ExitOK)
	if r.stdout != "" || r.stderr != "" {
		t.Errorf("fire --quiet, all well: got stdout %q, stderr %q; want nothing", r.stdout, r.stderr)
	}
	r = runCLI(t, "hooks", "fire", "--config", cfg, "--json", "ci.done")
	wantCode(t, r, ExitFailure)
	var rep map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep["failed"] != true {
		t.Errorf("fire --json: got %s (%v)", r.stdout, err)
	}

	// The log.
	r = runCLI(t, "hooks", "log", "--config", cfg, "--failed", "--json")
	wantCode(t, r, ExitOK)
	var runs []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil || len(runs) != 2 || runs[0]["hook"] != "broken" || runs[1]["status"] != "blocked" {
		t.Errorf("hooks log --failed: got %s (%v), want broken then guard", r.stdout, err)
	}
	r = runCLI(t, "hooks", "log", "--config", cfg, "--limit", "10")
	wantCode(t, r, ExitOK)
	wantContains(t, "hooks log", r.stdout, "spec.after-plan", "save", "success", "failure", "exited with status 5")

	// --quiet: only what did not succeed, on stderr.
	r = runCLI(t, "hooks", "fire", "--config", cfg, "--quiet", "git.pre-push", "branch=main")
	wantCode(t, r, ExitBlocked)
	if want := fmt.Sprintf("switchboard: git.pre-push: hook guard, command %s: blocked: main is frozen (more: switchboard hooks log --hook guard --event git.pre-push)\n", block); r.stdout != "" || r.stderr != want {
		t.Errorf("fire --quiet, blocked: got stdout %q, stderr %q; want nothing and %q", r.stdout, r.stderr, want)
	}

	// A changed file is untrusted again.
	if err := os.WriteFile(cfg, append(must(os.ReadFile(cfg)), "# edit\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "hooks", "list", "--config", cfg)
	wantContains(t, "changed", r.stdout, "changed")
	// and an event its hooks match says they did not run, and why — also
	// with --quiet, as the git hooks fire: they stopped running silently.
	r = runCLI(t, "hooks", "fire", "--config", cfg, "--quiet", "git.pre-push", "branch=main")
	wantCode(t, r, ExitOK)
	if want := fmt.Sprintf("switchboard: git.pre-push: hook guard did not run: %s changed since it was trusted; review it, then run: switchboard hooks trust %s --yes\n", cfg, cfg); r.stderr != want {
		t.Errorf("fire --quiet, changed file: got stderr %q, want %q", r.stderr, want)
	}
	r = runCLI(t, "hooks", "fire", "--config", cfg, "--json", "spec.after-plan")
	var nt struct {
		NotTrusted struct {
			State string   `json:"state"`
			Hooks []string `json:"hooks"`
		} `json:"not_trusted"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &nt); err != nil || nt.NotTrusted.State != "changed" || fmt.Sprint(nt.NotTrusted.Hooks) != "[save]" {
		t.Errorf("fire --json, changed file: got %s (%v), want not_trusted naming save", r.stdout, err)
	}

	// Usage errors.
	for _, args := range [][]string{{"hooks"}, {"hooks", "nope"}, {"hooks", "fire"}, {"hooks", "fire", "bad name"}, {"hooks", "fire", "a.b", "novalue"}, {"hooks", "log", "--limit", "0"}, {"hooks", "fire", "--quiet", "--dry-run", "a.b"}} {
		wantCode(t, runCLI(t, args...), ExitUsage)
	}
}

func TestHooksListInvalid(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	cfgPath := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	data := must(os.ReadFile(cfgPath))
	data = append(data, "hooks:\n  - {name: bad, on: x.y, actions: [{type: mcp, server: alpha, tool: echo, params: [{param: mesage, value: hi}]}]}\n"...)
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	wantCode(t, runCLI(t, "hooks", "trust", cfgPath, "--yes"), ExitOK)
	// Without --connect the schemas are unknown, and the list says so.
	r := runCLI(t, "hooks", "list", "--config", cfgPath)
	wantCode(t, r, ExitOK)
	wantContains(t, "hooks list", r.stdout, "not checked against the tools' schemas", "switchboard hooks list --connect")
	r = runCLI(t, "hooks", "list", "--config", cfgPath, "--connect")
	wantCode(t, r, ExitFailure)
	wantContains(t, "hooks list --connect", r.stdout, "invalid", `has no parameter "mesage"`, `required parameter "message"`)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestHooksInstallGitEndToEnd installs the git hooks in a temporary
// repository with a freshly built switchboard on PATH, and checks that a
// real `git commit` fires git.post-commit. git, and the hooks it runs, get
// the test's environment (environOf), not the process's.
func TestHooksInstallGitEndToEnd(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not on PATH: install git to run this test")
	}
	// The hooks run "switchboard" from PATH: this test binary, acting as
	// it (building the real one compiled the whole product once more, the
	// most of this test's time on a fresh clone).
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	writeScript(t, bin, "switchboard", fmt.Sprintf("%s=1 exec %q \"$@\"\n", envRunMain, exe))
	// The git hooks' switchboard is a process of its own, with the
	// environment git gives it: the test's.
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	setenv(t, "PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	setenv(t, "GIT_CONFIG_GLOBAL", os.DevNull)
	setenv(t, "GIT_CONFIG_SYSTEM", os.DevNull)

	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = environOf(t)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q", "-b", "004-login")
	git("config", "user.name", "Ada Tester")
	git("config", "user.email", "ada@example.com")
	git("config", "commit.gpgsign", "false")
	// A user's own hook, which must keep running.
	userHook := filepath.Join(repo, ".git", "hooks", "post-commit")
	if err := os.WriteFile(userHook, []byte("#!/bin/sh\necho mine > user-hook-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "post-commit.json")
	cfg := writeHooksConfig(t, repo, fmt.Sprintf("hooks:\n  - {name: record, on: git.post-commit, actions: [{type: command, command: [tee, %q]}]}\n", out))

	r := runCLI(t, "hooks", "install-git", repo)
	wantCode(t, r, ExitOK)
	wantContains(t, "install-git", r.stdout, "post-commit", "pre-push", "your hook was kept")
	wantCode(t, runCLI(t, "hooks", "trust", cfg, "--yes"), ExitOK)

	// hooks list in the repository names scripts an earlier switchboard
	// installed (one that printed the results table: no --quiet), and
	// none once install-git has rewritten them.
	chdir(t, repo)
	prePush := filepath.Join(repo, ".git", "hooks", "pre-push")
	current, err := os.ReadFile(prePush)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prePush, []byte(strings.ReplaceAll(string(current), "hooks fire --quiet", "hooks fire")), 0o755); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "hooks", "list", "--config", cfg)
	wantContains(t, "hooks list with an earlier pre-push", r.stdout, "git hooks (pre-push) were installed by an earlier switchboard", "switchboard hooks install-git")
	wantCode(t, runCLI(t, "hooks", "install-git", repo), ExitOK)
	if r = runCLI(t, "hooks", "list", "--config", cfg); strings.Contains(r.stdout, "earlier switchboard") {
		t.Errorf("hooks list after install-git: got %q, want no outdated hooks", r.stdout)
	}

	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644)
	git("add", "a.txt", "switchboard.yaml")
	if said := git("commit", "-q", "-m", "add login"); said != "" {
		t.Errorf("git commit printed %q; want nothing from Switchboard when every hook succeeded", said)
	}
	sha := strings.TrimSpace(git("rev-parse", "HEAD"))

	var ev map[string]any
	deadline := time.Now().Add(60 * time.Second)
	for {
		data, err := os.ReadFile(out)
		if err == nil && json.Unmarshal(data, &ev) == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("git.post-commit did not fire: %s missing", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ev["event"] != "git.post-commit" || ev["sha"] != sha || ev["subject"] != "add login" || ev["branch"] != "004-login" || ev["feature"] != "004-login" || ev["user"] != "Ada Tester" {
		t.Errorf("event: got %v", ev)
	}
	if _, err := os.Stat(filepath.Join(repo, "user-hook-ran")); err != nil {
		t.Errorf("the user's own post-commit hook did not run: %v", err)
	}
	r = runCLI(t, "hooks", "log", "--config", cfg, "--json")
	wantContains(t, "hooks log", r.stdout, `"event": "git.post-commit"`, `"status": "success"`)

	// A failing action: one line with the cause and where to see more;
	// the commit is made.
	fail := writeScript(t, t.TempDir(), "fail.sh", "echo lint found 3 problems >&2; exit 5\n")
	cfg = writeHooksConfig(t, repo, fmt.Sprintf("hooks:\n  - {name: lint, on: git.post-commit, actions: [{type: command, command: [%q]}]}\n", fail))
	wantCode(t, runCLI(t, "hooks", "trust", cfg, "--yes"), ExitOK)
	git("add", "switchboard.yaml")
	said := git("commit", "-q", "-m", "lint me")
	want := fmt.Sprintf("switchboard: git.post-commit: hook lint, command %s: failure: %s exited with status 5: lint found 3 problems (more: switchboard hooks log --hook lint --event git.post-commit)\n", fail, fail)
	if said != want {
		t.Errorf("git commit with a failing hook printed %q; want only %q", said, want)
	}
	if got := strings.TrimSpace(git("log", "-1", "--format=%s")); got != "lint me" {
		t.Errorf("got last commit %q, want the commit made", got)
	}
}

// TestHooksAroundCommandCalls: a command's own calls run the hooks — a
// tool.before guard denies, and a tool.after hook has run (not been
// cancelled) by the time `switchboard call` exits.
func TestHooksAroundCommandCalls(t *testing.T) {
	t.Parallel()
	setenv(t, envNoDaemon, "1")
	path := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	dir := t.TempDir()
	out := filepath.Join(dir, "after.json")
	slow := writeScript(t, dir, "slow.sh", fmt.Sprintf("sleep 0.3; cat > %q\n", out))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, `hooks:
  - {name: no-add, on: tool.before, if: {tool: add}, actions: [{type: command, command: [sh, -c, "echo not today >&2; exit 2"]}]}
  - {name: save, on: tool.after, actions: [{type: command, command: [%q]}]}
`, slow)
	f.Close()
	wantCode(t, runCLI(t, "hooks", "trust", "--config", path, "--yes"), ExitOK)

	r := runCLI(t, "call", "--config", path, "alpha", "add", "a=1", "b=2")
	wantCode(t, r, ExitFailure)
	wantContains(t, "denied call", r.stderr, "denied by hook no-add", "not today")

	r = runCLI(t, "call", "--config", path, "alpha", "echo", "message=hello")
	wantCode(t, r, ExitOK)
	data, err := os.ReadFile(out)
	var ev map[string]any
	if err != nil || json.Unmarshal(data, &ev) != nil || ev["event"] != "tool.after" || ev["tool"] != "echo" {
		t.Fatalf("the tool.after hook's output when call exited: got %q (%v), want the event as JSON", data, err)
	}

	r = runCLI(t, "hooks", "log", "--config", path, "--json")
	wantCode(t, r, ExitOK)
	wantContains(t, "hooks log", r.stdout, `"hook": "no-add"`, `"status": "blocked"`, `"hook": "save"`, `"status": "success"`)
}

// TestInstallGitWarnsWithoutSwitchboard: install-git says so when the
// hooks it writes will not find switchboard on the command's $PATH.
func TestInstallGitWarnsWithoutSwitchboard(t *testing.T) {
	t.Parallel()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is needed: apt-get install git")
	}
	repo := t.TempDir()
	if out, err := exec.Command(gitPath, "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	setenv(t, "PATH", filepath.Dir(gitPath))
	r := runCLI(t, "hooks", "install-git", repo)
	wantCode(t, r, ExitOK)
	wantContains(t, "install-git stderr", r.stderr, "switchboard is not on PATH", "--command")
	r = runCLI(t, "hooks", "install-git", repo, "--command", gitPath)
	wantCode(t, r, ExitOK)
	if strings.Contains(r.stderr, "not on PATH") {
		t.Errorf("with --command naming an executable: got the warning %q", r.stderr)
	}
	// On the command's $PATH (not the process's): no warning.
	bin := t.TempDir()
	writeScript(t, bin, "switchboard", "exit 0\n")
	setenv(t, "PATH", bin+string(os.PathListSeparator)+filepath.Dir(gitPath))
	r = runCLI(t, "hooks", "install-git", repo)
	wantCode(t, r, ExitOK)
	if strings.Contains(r.stderr, "not on PATH") {
		t.Errorf("with switchboard on the command's PATH: got the warning %q", r.stderr)
	}
}

// TestREADMEHookExample runs the README's hook example as written: every
// failed call appends its event to failures.jsonl, one JSON object per
// line.
func TestREADMEHookExample(t *testing.T) {
	t.Parallel()
	setenv(t, envNoDaemon, "1")
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(readme), "```yaml\nhooks:\n")
	if i < 0 {
		t.Fatal("README has no hooks example")
	}
	example := string(readme[i+len("```yaml\n"):])
	example = example[:strings.Index(example, "```")]
	if !strings.Contains(example, "on: tool.failed") || !strings.Contains(example, "failures.jsonl") {
		t.Fatalf("the README's hook example changed:\n%s", example)
	}
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	if err := appendFile(cfg, example); err != nil {
		t.Fatal(err)
	}
	wantCode(t, runCLI(t, "hooks", "trust", "--config", cfg, "--yes"), ExitOK)
	for range 2 {
		wantCode(t, runCLI(t, "call", "--config", cfg, "alpha", "fail"), ExitFailure)
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(cfg), "failures.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 || !strings.HasSuffix(string(data), "\n") {
		t.Fatalf("failures.jsonl: want 2 lines, got %q", data)
	}
	for _, l := range lines {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev["event"] != "tool.failed" {
			t.Errorf("line %q: %v, %v", l, ev, err)
		}
	}
}
