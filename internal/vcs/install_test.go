package vcs_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-mcp/switchboard/internal/fault"

	"github.com/switchboard-mcp/switchboard/internal/vcs"
)

// fakeSwitchboard writes a `switchboard` that records each invocation's
// arguments, one per line followed by a "--" line, to the returned log,
// prints "fake switchboard ran" to stderr and exits with code. It returns
// the directory to put on PATH.
func fakeSwitchboard(t *testing.T, code int) (bin, log string) {
	t.Helper()
	bin = t.TempDir()
	log = filepath.Join(t.TempDir(), "calls")
	writeFile(t, filepath.Join(bin, "switchboard"), "#!/bin/sh\n"+
		"{ printf '%s\\n' \"$@\"; echo --; } >>"+vcs.ShellQuote(log)+"\n"+
		"echo 'fake switchboard ran' >&2\n"+
		"exit "+string(rune('0'+code))+"\n", 0o755)
	return bin, log
}

// calls returns the invocations recorded by a fake switchboard.
func calls(t *testing.T, log string) [][]string {
	t.Helper()
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	var cur []string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "--" {
			out = append(out, cur)
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	return out
}

// hookEnv is the environment for git commands whose hooks run: PATH holds
// the directories in front (a fake switchboard) and git, sed and sh only.
func hookEnv(front ...string) []string {
	path := append(front, filepath.Dir(gitPath), "/usr/bin", "/bin")
	return []string{"PATH=" + strings.Join(path, ":")}
}

func install(t *testing.T, dir string, opts vcs.InstallOptions) vcs.InstallReport {
	t.Helper()
	report, err := vcs.InstallHooks(dir, opts)
	if err != nil {
		t.Fatalf("InstallHooks: %v", err)
	}
	return report
}

func TestInstallHooksFreshAndIdempotent(t *testing.T) {
	dir := newRepo(t)
	hooksDir := filepath.Join(dir, ".git", "hooks")

	got := install(t, dir, vcs.InstallOptions{})
	want := vcs.InstallReport{Installed: vcs.DefaultHooks, HooksDir: hooksDir}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first install (-want +got):\n%s", diff)
	}
	for _, hook := range vcs.DefaultHooks {
		path := filepath.Join(hooksDir, hook)
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o755 {
			t.Errorf("%s: got mode %v, want 0755", hook, st.Mode().Perm())
		}
		content := readFile(t, path)
		if !strings.HasPrefix(content, "#!/bin/sh\n"+vcs.HookMarker+"v1 "+hook+"\n") {
			t.Errorf("%s: got a script starting %q, want the shebang and marker", hook, content[:min(60, len(content))])
		}
		// Every script must parse with the system's POSIX sh.
		if out, err := exec.Command("/bin/sh", "-n", path).CombinedOutput(); err != nil {
			t.Errorf("%s: sh -n: %v: %s", hook, err, out)
		}
	}
	entries, _ := os.ReadDir(hooksDir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left in the hooks directory", e.Name())
		}
	}

	got = install(t, dir, vcs.InstallOptions{})
	want = vcs.InstallReport{Unchanged: vcs.DefaultHooks, HooksDir: hooksDir}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("second install (-want +got):\n%s", diff)
	}

	// A different command rewrites our scripts; it never chains them.
	got = install(t, dir, vcs.InstallOptions{Command: "/opt/sb's/switchboard", Hooks: []string{"pre-push", "pre-push"}})
	want = vcs.InstallReport{Installed: []string{"pre-push"}, HooksDir: hooksDir}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("install with a new command (-want +got):\n%s", diff)
	}
	if content := readFile(t, filepath.Join(hooksDir, "pre-push")); !strings.Contains(content, `sb='/opt/sb'\''s/switchboard'`) {
		t.Errorf("got pre-push without the quoted command:\n%s", content)
	}
	if _, err := os.Stat(filepath.Join(hooksDir, "pre-push"+vcs.ChainedSuffix)); !os.IsNotExist(err) {
		t.Errorf("got a chained pre-push after re-installing our own script (stat: %v)", err)
	}
}

func TestInstallHooksErrors(t *testing.T) {
	t.Run("unknown hook", func(t *testing.T) {
		_, err := vcs.InstallHooks(newRepo(t), vcs.InstallOptions{Hooks: []string{"pre-commit"}})
		wantKind(t, err, fault.Validation, `"pre-commit"`)
	})
	t.Run("not a repository", func(t *testing.T) {
		_, err := vcs.InstallHooks(t.TempDir(), vcs.InstallOptions{})
		wantKind(t, err, fault.Validation, "is not in a git repository")
	})
	t.Run("user hook and chained hook both present", func(t *testing.T) {
		dir := newRepo(t)
		hooks := filepath.Join(dir, ".git", "hooks")
		writeFile(t, filepath.Join(hooks, "post-merge"), "#!/bin/sh\necho mine\n", 0o755)
		writeFile(t, filepath.Join(hooks, "post-merge"+vcs.ChainedSuffix), "#!/bin/sh\necho older\n", 0o755)
		_, err := vcs.InstallHooks(dir, vcs.InstallOptions{Hooks: []string{"post-merge"}})
		wantKind(t, err, fault.Validation, "merge them by hand")
		if got := readFile(t, filepath.Join(hooks, "post-merge")); got != "#!/bin/sh\necho mine\n" {
			t.Errorf("got the user's hook changed to %q", got)
		}
	})
}

func TestInstallHooksCoreHooksPath(t *testing.T) {
	dir := newRepo(t)
	git(t, dir, "config", "core.hooksPath", ".githooks")
	writeFile(t, filepath.Join(dir, "sub", "x"), "", 0o644)
	got := install(t, filepath.Join(dir, "sub"), vcs.InstallOptions{Hooks: []string{"post-commit"}})
	if want := filepath.Join(dir, ".githooks"); got.HooksDir != want {
		t.Errorf("got HooksDir %s, want %s", got.HooksDir, want)
	}
	if _, err := os.Stat(filepath.Join(dir, ".githooks", "post-commit")); err != nil {
		t.Errorf("post-commit not installed in core.hooksPath: %v", err)
	}

	bin, log := fakeSwitchboard(t, 0)
	writeFile(t, filepath.Join(dir, "a.txt"), "a", 0o644)
	git(t, dir, "add", "a.txt")
	if res := runGit(t, dir, hookEnv(bin), "", "commit", "-q", "-m", "via hooksPath"); res.code != 0 {
		t.Fatalf("git commit: exit %d: %s", res.code, res.stderr)
	}
	if n := len(calls(t, log)); n != 1 {
		t.Errorf("got %d switchboard calls, want 1", n)
	}
}

func TestInstallHooksWorktree(t *testing.T) {
	dir := newRepo(t)
	commitFile(t, dir, "a.txt", "a", "first")
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, dir, "worktree", "add", "--quiet", "-b", "005-wt", wt)
	got := install(t, wt, vcs.InstallOptions{Hooks: []string{"post-commit"}})
	if want := filepath.Join(dir, ".git", "hooks"); got.HooksDir != want {
		t.Errorf("got HooksDir %s, want the common %s", got.HooksDir, want)
	}
}

func TestHookPostCommit(t *testing.T) {
	dir := newRepo(t)
	commitFile(t, dir, "a.txt", "a", "first")
	git(t, dir, "switch", "--quiet", "-c", "003-user-auth")
	hooks := filepath.Join(dir, ".git", "hooks")
	userLog := filepath.Join(t.TempDir(), "user-hook")
	writeFile(t, filepath.Join(hooks, "post-commit"), "#!/bin/sh\necho \"user hook $#\" >>"+vcs.ShellQuote(userLog)+"\necho 'user hook output'\n", 0o755)
	got := install(t, dir, vcs.InstallOptions{})
	if want := []string{"post-commit"}; !slices.Equal(got.Chained, want) {
		t.Errorf("got Chained %v, want %v", got.Chained, want)
	}
	if got := readFile(t, filepath.Join(hooks, "post-commit"+vcs.ChainedSuffix)); !strings.Contains(got, "user hook") {
		t.Errorf("got chained hook %q, want the user's hook", got)
	}

	bin, log := fakeSwitchboard(t, 0)
	writeFile(t, filepath.Join(dir, "b.txt"), "b", 0o644)
	git(t, dir, "add", "b.txt")
	res := runGit(t, dir, hookEnv(bin), "", "commit", "-q", "-m", "Add b: with \"quotes\" and $HOME\n\nbody")
	if res.code != 0 {
		t.Fatalf("git commit: exit %d: %s", res.code, res.stderr)
	}
	sha := git(t, dir, "rev-parse", "HEAD")
	want := [][]string{{"hooks", "fire", "--quiet", "git.post-commit", "sha=" + sha, `subject=Add b: with "quotes" and $HOME`,
		"author=Test User <test@example.com>", "branch=003-user-auth"}}
	if diff := cmp.Diff(want, calls(t, log)); diff != "" {
		t.Errorf("switchboard calls (-want +got):\n%s", diff)
	}
	if got := readFile(t, userLog); got != "user hook 0\n" {
		t.Errorf("got user hook log %q, want one run with no arguments", got)
	}
	if !strings.Contains(res.stdout+res.stderr, "user hook output") {
		t.Errorf("got git output %q, want the user hook's output", res.stdout+res.stderr)
	}

	t.Run("through Commit", func(t *testing.T) {
		t.Setenv("PATH", hookEnv(bin)[0][len("PATH="):])
		writeFile(t, filepath.Join(dir, "c.txt"), "c", 0o644)
		git(t, dir, "add", "c.txt")
		sha, err := vcs.Commit(vcs.WithEnv(context.Background(), "SWITCHBOARD_TEST_MARK=1"), dir, "Add c")
		if err != nil {
			t.Fatal(err)
		}
		all := calls(t, log)
		if got := all[len(all)-1]; len(got) < 5 || got[4] != "sha="+sha {
			t.Errorf("got last call %q, want git.post-commit for %s", got, sha)
		}
	})

	t.Run("disabled", func(t *testing.T) {
		before := len(calls(t, log))
		writeFile(t, filepath.Join(dir, "d.txt"), "d", 0o644)
		git(t, dir, "add", "d.txt")
		res := runGit(t, dir, append(hookEnv(bin), vcs.EnvDisableHooks+"=0"), "", "commit", "-q", "-m", "d")
		if res.code != 0 {
			t.Fatalf("git commit: exit %d: %s", res.code, res.stderr)
		}
		if got := len(calls(t, log)); got != before {
			t.Errorf("got %d switchboard calls with %s=0, want %d", got, vcs.EnvDisableHooks, before)
		}
		if got := strings.Count(readFile(t, userLog), "\n"); got != 3 {
			t.Errorf("got %d user hook runs, want 3 (the chained hook still runs)", got)
		}
	})
}

func TestHookPostCommitWithoutSwitchboard(t *testing.T) {
	for _, tt := range []struct {
		name    string
		front   func(t *testing.T) []string
		message string
	}{
		{"missing", func(t *testing.T) []string { return nil }, "switchboard not found on PATH, so git.post-commit was not fired"},
		{"failing", func(t *testing.T) []string {
			bin, _ := fakeSwitchboard(t, 2)
			return []string{bin}
		}, "'switchboard hooks fire git.post-commit' failed with exit status 2; git is not affected"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := newRepo(t)
			install(t, dir, vcs.InstallOptions{})
			writeFile(t, filepath.Join(dir, "a.txt"), "a", 0o644)
			git(t, dir, "add", "a.txt")
			res := runGit(t, dir, hookEnv(tt.front(t)...), "", "commit", "-q", "-m", "first")
			if res.code != 0 {
				t.Fatalf("git commit: exit %d: %s", res.code, res.stderr)
			}
			if want := "switchboard: git post-commit hook: " + tt.message; !strings.Contains(res.stderr, want) {
				t.Errorf("got stderr %q, want it to contain %q", res.stderr, want)
			}
			if got := git(t, dir, "log", "-1", "--format=%s"); got != "first" {
				t.Errorf("got last commit %q, want first", got)
			}
		})
	}
}

func TestHookPostCheckoutAndMerge(t *testing.T) {
	dir := newRepo(t)
	first := commitFile(t, dir, "a.txt", "a", "first")
	bin, log := fakeSwitchboard(t, 0)
	install(t, dir, vcs.InstallOptions{Hooks: []string{"post-checkout", "post-merge"}})
	env := hookEnv(bin)

	if res := runGit(t, dir, env, "", "switch", "-q", "-c", "topic"); res.code != 0 {
		t.Fatalf("git switch: %s", res.stderr)
	}
	commitFile(t, dir, "b.txt", "b", "second") // no post-commit hook installed
	topic := git(t, dir, "rev-parse", "HEAD")
	if res := runGit(t, dir, env, "", "switch", "-q", "main"); res.code != 0 {
		t.Fatalf("git switch: %s", res.stderr)
	}
	if res := runGit(t, dir, env, "", "checkout", "-q", "topic", "--", "b.txt"); res.code != 0 {
		t.Fatalf("git checkout file: %s", res.stderr)
	}
	git(t, dir, "reset", "-q", "--hard")
	if res := runGit(t, dir, env, "", "merge", "-q", "--ff-only", "topic"); res.code != 0 {
		t.Fatalf("git merge: %s", res.stderr)
	}
	want := [][]string{
		{"hooks", "fire", "--quiet", "git.post-checkout", "previous=" + first, "new=" + first, "branch_checkout=true", "branch=topic"},
		{"hooks", "fire", "--quiet", "git.post-checkout", "previous=" + topic, "new=" + first, "branch_checkout=true", "branch=main"},
		{"hooks", "fire", "--quiet", "git.post-checkout", "previous=" + first, "new=" + first, "branch_checkout=false", "branch=main"},
		{"hooks", "fire", "--quiet", "git.post-merge", "squash=false", "sha=" + topic, "branch=main"},
	}
	if diff := cmp.Diff(want, calls(t, log)); diff != "" {
		t.Errorf("switchboard calls (-want +got):\n%s", diff)
	}

	t.Run("chained exit status is kept", func(t *testing.T) {
		hooks := filepath.Join(dir, ".git", "hooks")
		os.Remove(filepath.Join(hooks, "post-checkout"))
		writeFile(t, filepath.Join(hooks, "post-checkout"), "#!/bin/sh\nexit 7\n", 0o755)
		install(t, dir, vcs.InstallOptions{Hooks: []string{"post-checkout"}})
		res := runGit(t, dir, env, "", "switch", "-q", "topic")
		if res.code == 0 {
			t.Errorf("got git switch exit 0, want the chained hook's failure (stderr %q)", res.stderr)
		}
		cmd := exec.Command(filepath.Join(hooks, "post-checkout"), first, first, "1")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
			t.Errorf("got post-checkout run directly: %v, want exit status 7", err)
		}
		all := calls(t, log)
		if got := all[len(all)-1]; got[3] != "git.post-checkout" || got[len(got)-1] != "branch=topic" {
			t.Errorf("got last call %q, want git.post-checkout on topic after the failing chained hook", got)
		}
	})
}

// pushLine is one line of pre-push input.
type pushRef struct {
	LocalRef  string `json:"local_ref"`
	LocalSHA  string `json:"local_sha"`
	RemoteRef string `json:"remote_ref"`
	RemoteSHA string `json:"remote_sha"`
}

// args turns one recorded call into a map of its key=value arguments.
func args(t *testing.T, call []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	if len(call) < 4 || call[2] != "--quiet" {
		t.Fatalf("got call %q, want hooks fire --quiet EVENT key=value...", call)
	}
	for _, a := range call[4:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			t.Fatalf("got argument %q, want key=value", a)
		}
		m[k] = v
	}
	return m
}

func TestHookPrePush(t *testing.T) {
	const zero = "0000000000000000000000000000000000000000"
	setup := func(t *testing.T, code int) (dir, remote, sha, log string, env []string) {
		dir = newRepo(t)
		sha = commitFile(t, dir, "a.txt", "a", "first")
		remote = filepath.Join(t.TempDir(), "remote.git")
		git(t, dir, "init", "--quiet", "--bare", remote)
		git(t, dir, "remote", "add", "origin", remote)
		install(t, dir, vcs.InstallOptions{Hooks: []string{"pre-push"}})
		bin, log := fakeSwitchboard(t, code)
		return dir, remote, sha, log, hookEnv(bin)
	}

	t.Run("fields", func(t *testing.T) {
		dir, remote, sha, log, env := setup(t, 0)
		if res := runGit(t, dir, env, "", "push", "-q", "origin", "main", "main:refs/heads/003-x"); res.code != 0 {
			t.Fatalf("git push: exit %d: %s", res.code, res.stderr)
		}
		all := calls(t, log)
		if len(all) != 1 || all[0][3] != "git.pre-push" {
			t.Fatalf("got calls %q, want one git.pre-push", all)
		}
		got := args(t, all[0])
		var refs []pushRef
		if err := json.Unmarshal([]byte(got["refs"]), &refs); err != nil {
			t.Fatalf("refs=%s: %v", got["refs"], err)
		}
		wantRefs := []pushRef{
			{"refs/heads/main", sha, "refs/heads/main", zero},
			{"refs/heads/main", sha, "refs/heads/003-x", zero},
		}
		if diff := cmp.Diff(wantRefs, refs); diff != "" {
			t.Errorf("refs (-want +got):\n%s", diff)
		}
		delete(got, "refs")
		want := map[string]string{"remote": "origin", "url": remote, "remote_refs": "refs/heads/main refs/heads/003-x", "branch": "main"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("fields (-want +got):\n%s", diff)
		}
	})

	t.Run("blocked", func(t *testing.T) {
		dir, remote, _, _, env := setup(t, 3)
		res := runGit(t, dir, env, "", "push", "-q", "origin", "main")
		if res.code == 0 {
			t.Fatal("got git push exit 0, want the push refused")
		}
		if want := "switchboard: git pre-push hook: push refused by a Switchboard git.pre-push hook"; !strings.Contains(res.stderr, want) {
			t.Errorf("got stderr %q, want %q", res.stderr, want)
		}
		if res := runGit(t, remote, nil, "", "rev-parse", "--verify", "--quiet", "refs/heads/main"); res.code == 0 {
			t.Error("got refs/heads/main on the remote, want the push refused")
		}
	})

	for _, tt := range []struct {
		name string
		code int
		want string
	}{
		{"failing switchboard allows", 2, "'switchboard hooks fire git.pre-push' failed with exit status 2; the push goes ahead"},
		{"missing switchboard allows", -1, "switchboard not found on PATH, so git.pre-push was not fired"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code := max(tt.code, 0)
			dir, remote, sha, _, env := setup(t, code)
			if tt.code < 0 {
				env = hookEnv()
			}
			res := runGit(t, dir, env, "", "push", "-q", "origin", "main")
			if res.code != 0 {
				t.Fatalf("git push: exit %d: %s", res.code, res.stderr)
			}
			if !strings.Contains(res.stderr, tt.want) {
				t.Errorf("got stderr %q, want %q", res.stderr, tt.want)
			}
			if got := git(t, remote, "rev-parse", "refs/heads/main"); got != sha {
				t.Errorf("got remote main %s, want %s", got, sha)
			}
		})
	}

	t.Run("chained hook gets the same input", func(t *testing.T) {
		dir, _, _, log, env := setup(t, 0)
		hooks := filepath.Join(dir, ".git", "hooks")
		os.Remove(filepath.Join(hooks, "pre-push"))
		seen := filepath.Join(t.TempDir(), "seen")
		writeFile(t, filepath.Join(hooks, "pre-push"), "#!/bin/sh\necho \"$1 $2\" >"+vcs.ShellQuote(seen)+"\ncat >>"+vcs.ShellQuote(seen)+"\n", 0o755)
		if got := install(t, dir, vcs.InstallOptions{Hooks: []string{"pre-push"}}); !slices.Equal(got.Chained, []string{"pre-push"}) {
			t.Fatalf("got report %+v, want pre-push chained", got)
		}
		input := "refs/heads/a\"b " + strings.Repeat("1", 40) + " refs/heads/a\"b " + zero + "\n" +
			"(delete) " + zero + " refs/heads/old " + strings.Repeat("2", 40) + "\n"
		cmd := exec.Command(filepath.Join(hooks, "pre-push"), "origin", "https://user:s3cret@example.com/o/r.git")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = strings.NewReader(input)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pre-push: %v: %s", err, out)
		}
		if got, want := readFile(t, seen), "origin https://user:s3cret@example.com/o/r.git\n"+input; got != want {
			t.Errorf("chained hook got %q, want %q", got, want)
		}
		all := calls(t, log)
		if len(all) != 1 {
			t.Fatalf("got %d calls, want 1", len(all))
		}
		got := args(t, all[0])
		if got["url"] != "https://example.com/o/r.git" {
			t.Errorf("got url=%s, want the credentials stripped", got["url"])
		}
		var refs []pushRef
		if err := json.Unmarshal([]byte(got["refs"]), &refs); err != nil {
			t.Fatalf("refs=%s: %v", got["refs"], err)
		}
		wantRefs := []pushRef{
			{`refs/heads/a"b`, strings.Repeat("1", 40), `refs/heads/a"b`, zero},
			{"(delete)", zero, "refs/heads/old", strings.Repeat("2", 40)},
		}
		if diff := cmp.Diff(wantRefs, refs); diff != "" {
			t.Errorf("refs (-want +got):\n%s", diff)
		}
	})

	t.Run("chained hook refusing stops the push", func(t *testing.T) {
		dir, _, _, log, env := setup(t, 0)
		hooks := filepath.Join(dir, ".git", "hooks")
		os.Remove(filepath.Join(hooks, "pre-push"))
		writeFile(t, filepath.Join(hooks, "pre-push"), "#!/bin/sh\necho 'tests fail' >&2\nexit 5\n", 0o755)
		install(t, dir, vcs.InstallOptions{Hooks: []string{"pre-push"}})
		res := runGit(t, dir, env, "", "push", "-q", "origin", "main")
		if res.code == 0 || !strings.Contains(res.stderr, "tests fail") {
			t.Errorf("got git push exit %d, stderr %q; want refused by the chained hook", res.code, res.stderr)
		}
		if n := len(calls(t, log)); n != 0 {
			t.Errorf("got %d switchboard calls, want 0 after the chained hook refused", n)
		}
	})
}

// TestHookFailuresSaidOnce: hooks fire --quiet exits 1 after it printed a
// line per action that failed; the scripts add nothing of their own then,
// and git goes ahead (a commit, a push).
func TestHookFailuresSaidOnce(t *testing.T) {
	dir := newRepo(t)
	install(t, dir, vcs.InstallOptions{})
	bin, _ := fakeSwitchboard(t, 1)
	env := hookEnv(bin)
	writeFile(t, filepath.Join(dir, "a.txt"), "a", 0o644)
	git(t, dir, "add", "a.txt")
	res := runGit(t, dir, env, "", "commit", "-q", "-m", "first")
	if res.code != 0 {
		t.Fatalf("git commit: exit %d: %s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "fake switchboard ran") || strings.Contains(res.stderr, "switchboard: git post-commit hook:") {
		t.Errorf("commit: got stderr %q, want switchboard's own lines and none of the script's", res.stderr)
	}
	remote := filepath.Join(t.TempDir(), "remote.git")
	git(t, dir, "init", "--quiet", "--bare", remote)
	git(t, dir, "remote", "add", "origin", remote)
	res = runGit(t, dir, env, "", "push", "-q", "origin", "main")
	if res.code != 0 {
		t.Fatalf("git push: exit %d: %s, want the push to go ahead", res.code, res.stderr)
	}
	if strings.Contains(res.stderr, "switchboard: git pre-push hook:") {
		t.Errorf("push: got stderr %q, want none of the script's lines", res.stderr)
	}
}
