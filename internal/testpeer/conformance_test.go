package testpeer

import (
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testbuild"
)

// TestConformanceCommandBuiltOnce checks that a process builds the
// conformance server once (a link costs about 2.5 s of CPU, and the daemon's
// tests ask for it five times): the program outlives the test that asked
// first, a later test gets the same file, not rebuilt, it is built as this
// test binary was (-race: a plain build compiles its dependencies again), and
// it serves MCP over stdio.
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
	info, err := buildinfo.ReadFile(second)
	if err != nil {
		t.Fatalf("reading the program's build information: %v", err)
	}
	var flags []string
	for _, s := range info.Settings {
		if (s.Key == "-race" && s.Value == "true") || s.Key == "-tags" {
			flags = append(flags, strings.TrimSuffix(s.Key+"="+s.Value, "=true"))
		}
	}
	if want := testbuild.Flags(); !slices.Equal(flags, want) {
		t.Errorf("the program was built with %q, want this test binary's %q", flags, want)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(second)
	cmd.Env = append(os.Environ(), "GORACE="+testbuild.RaceEnv)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "testpeer", Version: "v0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to the conformance server over stdio: %v", err)
	}
	defer cs.Close()
	if name := cs.InitializeResult().ServerInfo.Name; !strings.Contains(name, "conformance") && !strings.Contains(name, "everything") {
		t.Errorf("serverInfo.name: got %q, want the conformance everything-server's", name)
	}
}
