package testpeer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testbuild"
)

// conformancePackage is the go-sdk's conformance everything-server: a
// server that exercises every feature of the protocol (logging, progress,
// sampling, elicitation, roots, completion, subscriptions), kept by the
// SDK's authors for conformance testing. It comes with the go-sdk module
// this repository already requires, so it needs no download.
const conformancePackage = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// ConformanceCommand returns the go-sdk's conformance everything-server,
// built for this repository's go-sdk; run without arguments, it serves
// over stdio. It is built with the test binary's -race and -tags
// ([testbuild.Flags]), so that it links the packages the test build
// compiled: a plain build compiled net/http, crypto and the go-sdk again,
// without -race, on a cold build cache (33 s of CPU). A race-built server
// sleeps a second at exit unless its environment has
// GORACE=[testbuild.RaceEnv].
// A process builds it once: into the user's cache directory, under a name
// keyed by the repository's directory and the flags, holding a file lock
// so that test binaries run side by side build it once between them
// ([testbuild.Program]): an up-to-date program is not linked again (about
// 0.5 s of CPU to check, where linking it costs 2.5 s) and is replaced
// only when it changed. Where there is no cache directory it is built
// into the test's temporary directory.
func ConformanceCommand(t testing.TB) string {
	t.Helper()
	root := repoRoot(t)
	conformance.mu.Lock()
	defer conformance.mu.Unlock()
	if conformance.path != "" && conformance.root == root {
		return conformance.path
	}
	dir, err := conformanceDir(root)
	if err != nil {
		t.Logf("testpeer: building the conformance server into the test's directory: %v", err)
		return buildConformance(t, root, t.TempDir())
	}
	conformance.root, conformance.path = root, buildConformance(t, root, dir)
	return conformance.path
}

// conformance is the conformance server this process built, and for which
// repository.
var conformance struct {
	mu         sync.Mutex
	root, path string
}

// conformanceDir returns the directory the conformance server of the
// repository at root is kept in, made if need be.
func conformanceDir(root string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	key := sha256.Sum256(fmt.Appendf(nil, "%s\x00%q\x00%s/%s", root, testbuild.Flags(), runtime.GOOS, runtime.GOARCH))
	dir := filepath.Join(cache, "switchboard-testpeer", hex.EncodeToString(key[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("making a directory for the conformance server: %w", err)
	}
	return dir, nil
}

// buildConformance builds the conformance server into dir, under dir's
// lock, and returns the program ([testbuild.Program]).
func buildConformance(t testing.TB, root, dir string) string {
	t.Helper()
	bin, err := testbuild.Program(dir, "conformance-everything-server", "go", root, conformancePackage, nil)
	if err != nil {
		t.Fatalf("testpeer: %v\n(the go-sdk module must be in the module cache: go mod download)", err)
	}
	return bin
}

// StartConformance runs the conformance everything-server over streamable
// HTTP for the rest of the test, stateful (sessions) unless stateless is
// set, and returns its endpoint URL once it accepts connections.
func StartConformance(t testing.TB, stateless bool) string {
	t.Helper()
	bin := ConformanceCommand(t)
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("testpeer: finding a free port for the conformance server: %v", err)
		}
		p, err := spawnCmd(t, exec.Command(bin, "-http", "127.0.0.1:"+strconv.Itoa(port), "-stateless="+strconv.FormatBool(stateless)), []string{"GORACE=" + testbuild.RaceEnv})
		if err != nil {
			t.Fatalf("testpeer: starting the conformance server: %v", err)
		}
		err = p.waitListening(port, time.Now().Add(startTimeout))
		if err == nil {
			return fmt.Sprintf("http://127.0.0.1:%d/", port)
		}
		p.stop()
		if attempt == startAttempts {
			t.Fatalf("testpeer: the conformance server did not start: %v; output:\n%s", err, p.out)
		}
	}
}
