package testpeer

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestConformanceCommandBuiltOnce checks that a process builds the
// conformance server once (a link costs about 2.5 s of CPU, and the daemon's
// tests ask for it five times): the program outlives the test that asked
// first, a later test gets the same file, not rebuilt, and it serves MCP over
// stdio.
func TestConformanceCommandBuiltOnce(t *testing.T) {
	t.Parallel()
	var first string
	var built os.FileInfo
	t.Run("first", func(t *testing.T) {
		first = ConformanceCommand(t)
		var err error
		if built, err = os.Stat(first); err != nil {
			t.Fatal(err)
		}
	})
	if first == "" {
		t.Fatal("no program")
	}
	second := ConformanceCommand(t)
	if second != first {
		t.Errorf("a second ConformanceCommand: got %s, want the first's %s", second, first)
	}
	fi, err := os.Stat(second)
	if err != nil {
		t.Fatalf("the program is gone once the test that built it ended: %v", err)
	}
	// Another test process's go build may touch it (an up-to-date program
	// keeps its file); a build writes a new one.
	if !os.SameFile(fi, built) {
		t.Errorf("the program was written again, want it built once")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "testpeer", Version: "v0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: exec.Command(second)}, nil)
	if err != nil {
		t.Fatalf("connecting to the conformance server over stdio: %v", err)
	}
	defer cs.Close()
	if name := cs.InitializeResult().ServerInfo.Name; !strings.Contains(name, "conformance") && !strings.Contains(name, "everything") {
		t.Errorf("serverInfo.name: got %q, want the conformance everything-server's", name)
	}
}
