package oauth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// browserEnv switches the test binary into a scripted browser: it is run
// as $BROWSER (through the script scriptedBrowser writes) with the
// authorization URL as its last argument.
const browserEnv = "OAUTH_TEST_BROWSER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(browserEnv); mode != "" {
		if err := browse(mode, os.Args[len(os.Args)-1]); err != nil {
			fmt.Fprintln(os.Stderr, "scripted browser:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// browse plays a person's browser on the authorization URL:
//   - allow: follow the authorization server's redirects, as a browser does
//     after the person clicks "Allow" (the demo servers approve at once);
//   - deny: go to the redirect URI with error=access_denied, as the server
//     does after "Deny";
//   - wrongstate: go to the redirect URI with a code and another state.
func browse(mode, authURL string) error {
	c := &http.Client{Timeout: 30 * time.Second}
	target := authURL
	if mode != "allow" {
		u, err := url.Parse(authURL)
		if err != nil {
			return err
		}
		q := u.Query()
		redirect := q.Get("redirect_uri")
		switch mode {
		case "deny":
			target = redirect + "?" + url.Values{"error": {"access_denied"}, "error_description": {"the user said no"}, "state": {q.Get("state")}}.Encode()
		case "wrongstate":
			target = redirect + "?" + url.Values{"code": {"stolen"}, "state": {"not-" + q.Get("state")}}.Encode()
		default:
			return fmt.Errorf("unknown mode %q", mode)
		}
	}
	resp, err := c.Get(target)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// browserScript writes the $BROWSER script that runs this test binary as
// the scripted browser in mode, and returns its path.
func browserScript(t testing.TB, mode string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "browser")
	script := fmt.Sprintf("#!/bin/sh\nexec env %s=%s %q \"$@\"\n", browserEnv, mode, exe)
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

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
