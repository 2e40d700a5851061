package testpeer

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// conformancePackage is the go-sdk's conformance everything-server: a
// server that exercises every feature of the protocol (logging, progress,
// sampling, elicitation, roots, completion, subscriptions), kept by the
// SDK's authors for conformance testing. It comes with the go-sdk module
// this repository already requires, so it needs no download.
const conformancePackage = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// ConformanceCommand builds the go-sdk's conformance everything-server into
// the test's temporary directory and returns the binary; run without
// arguments, it serves over stdio. The go build cache makes every build
// after the first a link.
func ConformanceCommand(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "conformance-everything-server")
	cmd := exec.Command("go", "build", "-o", bin, conformancePackage)
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testpeer: building %s: %v\n%s(the go-sdk module must be in the module cache: go mod download)", conformancePackage, err, out)
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
		p, err := spawnCmd(t, exec.Command(bin, "-http", "127.0.0.1:"+strconv.Itoa(port), "-stateless="+strconv.FormatBool(stateless)), nil)
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
