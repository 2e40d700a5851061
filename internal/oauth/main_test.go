package oauth_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

func TestMain(m *testing.M) {
	testpeer.RunBrowserIfAsked()
	os.Exit(m.Run())
}

// browserScript writes the $BROWSER script that runs this test binary as
// the scripted browser in mode (see testpeer.BrowserScript).
func browserScript(t testing.TB, mode string) string { return testpeer.BrowserScript(t, mode) }

// scriptedBrowser returns an Options.OpenBrowser that runs the browser
// script in mode as a real process, as OpenBrowser runs $BROWSER, for tests
// that run in parallel (and so cannot set $BROWSER).
func scriptedBrowser(t testing.TB, mode string) func(context.Context, string) (<-chan error, error) {
	script := browserScript(t, mode)
	return func(_ context.Context, u string) (<-chan error, error) {
		cmd := exec.Command(script, u)
		out := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		done := make(chan error, 1)
		go func() {
			err := cmd.Wait()
			if err != nil {
				err = fmt.Errorf("%w: %s", err, out.String())
			}
			done <- err
		}()
		return done, nil
	}
}
