// Package testserver runs real MCP servers over stdio for tests —
// well-behaved ones and ones that fail on demand — as child processes.
//
// [Server] returns the config.Server that launches a mode; its command is
// [Command]: a small program (testserver/cmd/testserver) that serves the
// modes, built on first use with the test binary's flags. Where it cannot
// be built, the command is the test binary itself, re-run as the server
// (as the go-sdk's own cmd_test.go does): so a test package calls [Init]
// at the top of TestMain, and when the binary is started with
// SWITCHBOARD_TEST_SERVER=<mode> it becomes that server and never
// returns. Modes that need a test package's own code (a TestMain that
// serves something else) keep using os.Executable.
//
// The modes ("ok", "exit", "hang", "stateful", …) are described in package
// [modes], which holds their servers.
package testserver

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testbuild"
	"github.com/switchboard-mcp/switchboard/internal/testserver/modes"
)

// Environment variables that select and tune a mode.
const (
	EnvMode  = modes.EnvMode
	EnvDelay = modes.EnvDelay
	EnvFlag  = modes.EnvFlag
	// EnvProtocol pins the "asks" mode to one protocol version.
	EnvProtocol = modes.EnvProtocol
	// EnvFlood tunes the "stderr-flood" mode (see package modes).
	EnvFlood = modes.EnvFlood
)

// Values the modes' servers answer with, for tests to compare against.
const (
	// NPMNotFound is what the "npm-404" mode writes: what npm 10 (npx)
	// writes to stderr for a package the registry does not have.
	NPMNotFound = modes.NPMNotFound
	// AskSchema is the form the "asks" server's "ask" tool requests.
	AskSchema = modes.AskSchema
	// URLElicitationID is the elicitation id the "urlelicit" server requires.
	URLElicitationID = modes.URLElicitationID
	// FloodCause is the "stderr-flood" mode's last line before it exits.
	FloodCause = modes.FloodCause
)

// FloodLine is the nth line the "stderr-flood" mode writes, width bytes long.
func FloodLine(n, width int) string { return modes.FloodLine(n, width) }

// PNG is the 1×1 image the "ok" server's "image" tool returns.
var PNG = modes.PNG

// RaceEnv is the race detector's setting for test children: without it every
// race-built child sleeps a second at exit (GORACE's atexit_sleep_ms), which
// made most of the suite's time. The product filters a stdio child's
// environment, so tests pass it in the server's env, as [Server] and
// [EnvYAML] do; [Init] sets it for children that inherit the environment.
const RaceEnv = testbuild.RaceEnv

// EnvYAML returns a YAML flow mapping for a server's env key that makes the
// test binary run as the given mode, e.g. `{SWITCHBOARD_TEST_SERVER: ok, GORACE: "atexit_sleep_ms=0"}`,
// with extra variables given as "KEY=value".
func EnvYAML(mode string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{%s: %s, GORACE: %q", EnvMode, mode, RaceEnv)
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, ", %s: %q", k, v)
	}
	b.WriteString("}")
	return b.String()
}

// Init runs the server when the binary was started as one; otherwise it
// returns at once. Call it first in TestMain: it also notes what
// [Command] needs from the process before a test can change it.
func Init() {
	if _, ok := os.LookupEnv("GORACE"); !ok {
		os.Setenv("GORACE", RaceEnv)
	}
	mode := os.Getenv(EnvMode)
	if mode == "" {
		capture()
		return
	}
	modes.Run(mode)
	os.Exit(0)
}

// Server returns a stdio server named name that runs [Command] in the
// given mode. Timeouts are short; callers adjust fields as they need.
func Server(t testing.TB, name, mode string, env ...string) config.Server {
	t.Helper()
	exe := Command(t)
	e := map[string]string{EnvMode: mode, "GORACE": RaceEnv}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		e[k] = v
	}
	return config.Server{
		Name:             name,
		Transport:        config.TransportStdio,
		Command:          exe,
		Env:              e,
		ConnectTimeout:   10 * time.Second,
		RequestTimeout:   10 * time.Second,
		TerminateOnClose: true,
		Enabled:          true,
		LoadTools:        true,
		LoadPrompts:      true,
		LoadResources:    true,
	}
}

// Stateful returns the "stateful" mode's server for one in-process session,
// for a test that needs what the server sees from its client but not a
// process (a race-built child costs about 0.35 s CPU to start). The
// goroutines it starts are waited for when the test ends; close the
// session first.
func Stateful(t testing.TB) *mcp.Server {
	s, wait := modes.NewStateful()
	t.Cleanup(wait)
	return s
}

// RequestAsks returns the "requestasks" mode's server, for a test that
// serves it itself (over streamable HTTP, say).
func RequestAsks() *mcp.Server { return modes.NewRequestAsks() }

// SpeaksAtMost has s, a server a test builds, negotiate protocol version
// at most, as a server of that version would (it does not know
// server/discover, from which a client falls back to initialize).
func SpeaksAtMost(s *mcp.Server, version string) { modes.SpeaksAtMost(s, version) }
