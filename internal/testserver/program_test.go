package testserver_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestCommandServesTheModes checks that Command is the small program, not
// this test binary (which does not call Init, so could not serve), and
// that it serves a mode over stdio.
func TestCommandServesTheModes(t *testing.T) {
	t.Parallel()
	exe := testserver.Command(t)
	if self, err := os.Executable(); err != nil || exe == self {
		t.Fatalf("Command: got the test binary %q (%v), want the program built from cmd/testserver", exe, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), testserver.EnvMode+"=ok", "GORACE="+testserver.RaceEnv)
	session, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to %s in mode ok: %v", exe, err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatalf("calling echo: %v", err)
	}
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "hi" {
		t.Errorf("echo: got %+v, want the text hi", res.Content)
	}
}

// TestCommandRefusesABadMode checks that the program names what is wrong
// when it is started without a mode or with one it does not know.
func TestCommandRefusesABadMode(t *testing.T) {
	t.Parallel()
	exe := testserver.Command(t)
	for _, tc := range []struct{ mode, want string }{
		{"", "set SWITCHBOARD_TEST_SERVER to a mode"},
		{"no-such-mode", `unknown test server mode "no-such-mode"`},
	} {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), testserver.EnvMode+"="+tc.mode, "GORACE="+testserver.RaceEnv)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("mode %q: got %v and %q, want a failure saying %q", tc.mode, err, out, tc.want)
		}
	}
}

// TestProgramLinksOnlyTheServers checks that the program does not link
// the configuration package: its JSON Schema compiler's initialisation
// alone made a third of a race-built child's start.
func TestProgramLinksOnlyTheServers(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "github.com/switchboard-mcp/switchboard/internal/testserver/cmd/testserver").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/switchboard-mcp/switchboard/internal/config" || strings.HasPrefix(pkg, "github.com/santhosh-tekuri/jsonschema") {
			t.Errorf("cmd/testserver links %s: keep the servers in package modes free of it", pkg)
		}
	}
}

// TestProgramFromTheEnvironment checks that Command takes the program
// SWITCHBOARD_TESTSERVER_PROGRAM names: one that is not there fails the
// test saying how to fix it. It re-runs this test binary, as the variable
// is read once per process.
func TestProgramFromTheEnvironment(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	missing := t.TempDir() + "/no-testserver"
	cmd := exec.Command(self, "-test.run=^TestCommandServesTheModes$")
	cmd.Env = append(os.Environ(), testserver.EnvProgram+"="+missing, "GORACE="+testserver.RaceEnv)
	out, err := cmd.CombinedOutput()
	want := testserver.EnvProgram + " names a test server program that cannot be run"
	if err == nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), missing) {
		t.Errorf("with %s=%s: got %v and\n%s\nwant a failure saying %q and naming the path", testserver.EnvProgram, missing, err, out, want)
	}
}

// TestProgramIsNotReplacedWhenUnchanged checks that another test process's
// build leaves the program's file alone when the sources did not change:
// go build -o replaces its output (remove, then write), and a package
// tested in parallel may be starting the program at that moment.
func TestProgramIsNotReplacedWhenUnchanged(t *testing.T) {
	t.Parallel()
	exe := testserver.Command(t)
	before, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// This test binary again, which builds in a process of its own (not
	// told of the program, as Command tells the processes tests start).
	cmd := exec.Command(self, "-test.run=^TestCommandRefusesABadMode$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, testserver.EnvProgram+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GORACE="+testserver.RaceEnv)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("a second test process: %v\n%s", err, out)
	}
	after, err := os.Stat(exe)
	if err != nil {
		t.Fatalf("the program after a second build: %v", err)
	}
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("a second build replaced %s (modified %v, then %v): want it left as it was", exe, before.ModTime(), after.ModTime())
	}
}
