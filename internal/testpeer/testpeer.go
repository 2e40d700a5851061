package testpeer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// modulePath identifies this repository's go.mod while walking up to it.
const modulePath = "github.com/switchboard-mcp/switchboard"

// installHint is the fix for missing or stale peers, quoted in every failure.
const installHint = "run `make peers` (or `npm ci --prefix test/peers --no-audit --no-fund`) in the repository root"

// minNodeMajor is the oldest Node.js the pinned peers are known to run on.
const minNodeMajor = 20

// Dir returns the absolute path of test/peers/node_modules, found by walking
// up from the working directory to this module's go.mod. It fails the test if
// the peers are not installed or were installed from an older lock file.
func Dir(t testing.TB) string {
	t.Helper()
	root := repoRoot(t)
	peers := filepath.Join(root, "test", "peers")
	dir := filepath.Join(peers, "node_modules")
	// npm writes node_modules/.package-lock.json at the end of every install.
	installed, err := os.Stat(filepath.Join(dir, ".package-lock.json"))
	if err != nil {
		t.Fatalf("testpeer: the npm peers are not installed in %s: %s", dir, installHint)
	}
	lock, err := os.Stat(filepath.Join(peers, "package-lock.json"))
	if err != nil {
		t.Fatalf("testpeer: reading the peers' lock file: %v", err)
	}
	if lock.ModTime().After(installed.ModTime()) {
		t.Fatalf("testpeer: the npm peers in %s are older than test/peers/package-lock.json: %s", dir, installHint)
	}
	return dir
}

// repoRoot returns the directory holding this module's go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("testpeer: finding the repository root: %v", err)
	}
	for dir := wd; ; {
		if mod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && declaresModule(mod, modulePath) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("testpeer: no go.mod of %s above %s", modulePath, wd)
		}
		dir = parent
	}
}

// declaresModule reports whether the go.mod text mod declares module path.
func declaresModule(mod []byte, path string) bool {
	sc := bufio.NewScanner(bytes.NewReader(mod))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == path
		}
	}
	return false
}

// nodeOnce caches the look-up of node: it runs a process, and every test wants it.
var nodeOnce = sync.OnceValues(findNode)

// Node returns the path of the node binary. It fails the test if node is not
// on PATH or is older than Node.js 20.
func Node(t testing.TB) string {
	t.Helper()
	path, err := nodeOnce()
	if err != nil {
		t.Fatalf("testpeer: %v: install Node.js 20+ (with npm), then %s", err, installHint)
	}
	return path
}

func findNode() (string, error) {
	path, err := exec.LookPath("node")
	if err != nil {
		return "", errors.New("node not found on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("running %s --version: %w", path, err)
	}
	version := strings.TrimSpace(string(out))
	major, _, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	if n, err := strconv.Atoi(major); err != nil || n < minNodeMajor {
		return "", fmt.Errorf("%s is Node.js %s", path, version)
	}
	return path, nil
}

// EverythingCommand returns the command that runs server-everything over
// stdio: node and its arguments, to be run directly, without a shell.
func EverythingCommand(t testing.TB) (bin string, args []string) {
	t.Helper()
	return Node(t), []string{entry(t, "server-everything"), "stdio"}
}

// MemoryCommand returns the command that runs server-memory over stdio. Its
// knowledge graph lives in a file in the test's temporary directory, so tests
// start empty and do not share state (unless MEMORY_FILE_PATH is set in the
// environment the command runs in, which wins).
func MemoryCommand(t testing.TB) (bin string, args []string) {
	t.Helper()
	node, script := Node(t), entry(t, "server-memory")
	dir := t.TempDir()
	env := filepath.Join(dir, "memory.env")
	line := "MEMORY_FILE_PATH=" + filepath.Join(dir, "memory.jsonl") + "\n"
	if err := os.WriteFile(env, []byte(line), 0o600); err != nil {
		t.Fatalf("testpeer: writing %s: %v", env, err)
	}
	return node, []string{"--env-file=" + env, script}
}

// FilesystemCommand returns the command that runs server-filesystem over
// stdio with the given allowed directories. With none, the server waits for
// the client's roots.
func FilesystemCommand(t testing.TB, roots ...string) (bin string, args []string) {
	t.Helper()
	return Node(t), append([]string{entry(t, "server-filesystem")}, roots...)
}

// entry returns the absolute path of the script an installed
// @modelcontextprotocol package names as its bin.
func entry(t testing.TB, name string) string {
	t.Helper()
	pkg := filepath.Join(Dir(t), "@modelcontextprotocol", name)
	data, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil {
		t.Fatalf("testpeer: @modelcontextprotocol/%s is not installed (%v): %s", name, err, installHint)
	}
	var manifest struct {
		Bin map[string]string `json:"bin"`
	}
	if err := json.Unmarshal(data, &manifest); err != nil || len(manifest.Bin) != 1 {
		t.Fatalf("testpeer: @modelcontextprotocol/%s/package.json: want one bin entry, got %v (err %v)", name, manifest.Bin, err)
	}
	for _, script := range manifest.Bin {
		path := filepath.Join(pkg, filepath.FromSlash(script))
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("testpeer: @modelcontextprotocol/%s is incomplete (%v): %s", name, err, installHint)
		}
		return path
	}
	panic("unreachable")
}
