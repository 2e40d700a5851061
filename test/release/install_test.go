package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// modulePath is the module `go install …@vX` fetches.
const modulePath = "github.com/switchboard-mcp/switchboard"

// versionJSON is what `switchboard version --json` prints.
type versionJSON struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

// repoFile is one file of the work tree, as golang.org/x/mod/zip reads it.
type repoFile struct{ root, rel string }

func (f repoFile) Path() string { return f.rel }
func (f repoFile) Lstat() (fs.FileInfo, error) {
	return os.Lstat(filepath.Join(f.root, filepath.FromSlash(f.rel)))
}
func (f repoFile) Open() (io.ReadCloser, error) {
	return os.Open(filepath.Join(f.root, filepath.FromSlash(f.rel)))
}

// gitOutput runs git in the repository and returns its output.
func gitOutput(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// writeModuleProxy lays out the work tree's files (those git tracks or
// would track) as version v of the module in a GOPROXY directory, as a
// module proxy serves it: @v/list, v.info, v.mod and v.zip.
func writeModuleProxy(t *testing.T, dir, v string) {
	t.Helper()
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	var files []modzip.File
	for _, rel := range strings.Split(gitOutput(t, "ls-files", "-z", "--cached", "--others", "--exclude-standard"), "\x00") {
		if rel == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(abs, filepath.FromSlash(rel))); os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		files = append(files, repoFile{root: abs, rel: rel})
	}
	at := filepath.Join(dir, modulePath, "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	if err := modzip.Create(&zipped, module.Version{Path: modulePath, Version: v}, files); err != nil {
		t.Fatalf("making the module zip: %v", err)
	}
	gomod, err := os.ReadFile(filepath.Join(abs, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]any{"Version": v, "Time": time.Now().UTC().Format(time.RFC3339)})
	for name, data := range map[string][]byte{
		"list":      []byte(v + "\n"),
		v + ".info": info,
		v + ".mod":  gomod,
		v + ".zip":  zipped.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// goEnv is the environment for the go command: this process's, with
// GOFLAGS (this machine sets -buildvcs=false) replaced by flags, and
// extra added.
func goEnv(flags string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOFLAGS=") {
			env = append(env, kv)
		}
	}
	return append(append(env, "GOFLAGS="+flags), extra...)
}

// runVersion runs bin's `version` and `version --json`.
func runVersion(t *testing.T, bin string) (string, versionJSON) {
	t.Helper()
	text, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("%s version --json: %v", bin, err)
	}
	var v versionJSON
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("version --json printed %q: %v", out, err)
	}
	return strings.TrimSpace(string(text)), v
}

// TestGoInstallAtVersionReportsIt installs cmd/switchboard with
// `go install …@vX` from a module proxy (a file:// GOPROXY holding this
// work tree as version vX, the real proxy behind it for dependencies)
// and checks that the installed binary's `version` and `version --json`
// report vX, and nothing says "dev".
//
// It builds with -race when the test does, so that the dependencies'
// packages come from the build cache the race-built test run filled;
// only this module's own packages compile.
func TestGoInstallAtVersionReportsIt(t *testing.T) {
	t.Parallel()
	requireInstallCheck(t)
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	gobin := filepath.Join(tmp, "bin")
	// A version no other run uses: the module cache is shared, and keeps
	// what it extracted under the version's name.
	v := fmt.Sprintf("v0.99.0-installcheck.%d", time.Now().UnixNano())
	writeModuleProxy(t, proxy, v)
	modcache := strings.TrimSpace(string(must(exec.Command("go", "env", "GOMODCACHE").Output())))
	t.Cleanup(func() { removeModuleVersion(t, modcache, v) })

	args := []string{"install"}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, modulePath+"/cmd/switchboard@"+v)
	cmd := exec.Command("go", args...)
	cmd.Dir = tmp // outside the repository's module, as a user would run it
	upstreamProxy := os.Getenv("GOPROXY")
	if upstreamProxy == "" || upstreamProxy == "off" {
		upstreamProxy = "https://proxy.golang.org,direct"
	}
	cmd.Env = goEnv("-buildvcs=false", // what this machine sets, and what go install @vX ignores
		"GOPROXY=file://"+filepath.ToSlash(proxy)+","+upstreamProxy,
		"GONOSUMDB="+modulePath, "GONOSUMCHECK=1", "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	text, got := runVersion(t, filepath.Join(gobin, "switchboard"))
	if got.Version != v {
		t.Errorf("version --json: got version %q, want %q", got.Version, v)
	}
	if want := "switchboard " + v + " ("; !strings.HasPrefix(text, want) {
		t.Errorf("version: got %q, want it to start %q", text, want)
	}
	if strings.Contains(text, "dev") || strings.Contains(got.Version, "dev") {
		t.Errorf("version says dev: %q, %+v", text, got)
	}
	if got.Go == "" {
		t.Errorf("version --json: no Go version: %+v", got)
	}
}

// TestBuildInACheckoutReportsTheCommit builds cmd/switchboard with a
// plain `go build` in a git clone of this repository's HEAD (VCS stamping
// on, as Go's default is) and checks that `version` reports the commit,
// an unmodified tree, and the pseudo-version Go stamps rather than "dev".
//
// It builds in a fresh clone, not in place: Go stamps nothing in a linked
// git worktree, whose .git is a file (golang/go#58218), and the engineers
// of this repository work in such worktrees.
func TestBuildInACheckoutReportsTheCommit(t *testing.T) {
	t.Parallel()
	requireInstallCheck(t)
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "clone")
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	gitOutput(t, "clone", "--quiet", "--shared", abs, clone)
	bin := filepath.Join(tmp, "switchboard")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "./cmd/switchboard")
	cmd := exec.Command("go", args...)
	cmd.Dir = clone
	cmd.Env = goEnv("-buildvcs=auto") // Go's default; this machine sets -buildvcs=false
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	head := strings.TrimSpace(gitOutput(t, "rev-parse", "HEAD"))
	text, got := runVersion(t, bin)
	if got.Commit != head {
		t.Errorf("version --json: got commit %q, want HEAD %q", got.Commit, head)
	}
	if got.Modified {
		t.Errorf("version --json: got modified true for a fresh clone, want false")
	}
	if !strings.Contains(text, "commit "+head[:12]) {
		t.Errorf("version: got %q, want it to name commit %s", text, head[:12])
	}
	if got.Version == "" || got.Version == "dev" || !strings.HasPrefix(got.Version, "v") {
		t.Errorf("version --json: got version %q, want the pseudo-version Go stamps from the checkout", got.Version)
	}
}

// installCheckEnv turns on the tests that build the binary as a user
// would; make release-check sets it.
const installCheckEnv = "SWITCHBOARD_INSTALL_CHECK"

// requireInstallCheck skips t unless installCheckEnv is set: each such
// test compiles this module's packages afresh (measured: about 140 s of
// CPU for both under -race), too much for make test's budget, so they
// run in make release-check.
func requireInstallCheck(t *testing.T) {
	t.Helper()
	if os.Getenv(installCheckEnv) == "" {
		t.Skipf("builds the binary as a user would (minutes of CPU); run it with make release-check, or %s=1 go test -run %s ./test/release", installCheckEnv, t.Name())
	}
}

// removeModuleVersion removes version v of the module from the shared
// module cache (the extracted tree is read-only, as Go leaves it).
func removeModuleVersion(t *testing.T, modcache, v string) {
	dir := filepath.Join(modcache, modulePath+"@"+v)
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		t.Errorf("removing %s: %v", dir, err)
	}
	dl, _ := filepath.Glob(filepath.Join(modcache, "cache", "download", modulePath, "@v", v+".*"))
	for _, f := range dl {
		if err := os.Remove(f); err != nil {
			t.Errorf("removing %s: %v", f, err)
		}
	}
}

// must returns v, or panics with err (for setup that cannot fail here).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
