package oauth_test

import (
	"context"
	"os"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestMain plays the scripted browser when this binary is run as one, and
// stops the peers the tests share (testpeer.SharedOAuthExample) after
// them.
func TestMain(m *testing.M) {
	testpeer.RunBrowserIfAsked()
	code := m.Run()
	testpeer.StopShared()
	os.Exit(code)
}

// browserScript writes the $BROWSER script that runs this test binary as
// the scripted browser in mode (see testpeer.BrowserScript).
func browserScript(t testing.TB, mode string) string { return testpeer.BrowserScript(t, mode) }

// scriptedBrowser returns an Options.OpenBrowser that plays the scripted
// browser in mode (testpeer.Browse) in this process, for tests that run
// in parallel (and so cannot set $BROWSER). Their point is the sign-in,
// not the browser's process: TestTSExampleEndToEnd and
// TestBrowserOpenerReadsItsEnvironment run the real $BROWSER script, as
// OpenBrowser runs it. One process per sign-in cost the package ~60
// starts of this race-built binary.
func scriptedBrowser(t testing.TB, mode string) func(context.Context, string) (<-chan error, error) {
	t.Helper()
	return func(_ context.Context, u string) (<-chan error, error) {
		done := make(chan error, 1)
		go func() { done <- testpeer.Browse(mode, u) }()
		return done, nil
	}
}
