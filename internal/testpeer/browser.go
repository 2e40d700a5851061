package testpeer

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// browserEnv switches a test binary into a scripted browser: the script
// BrowserScript writes runs the binary with it set and the authorization
// URL as the last argument, as $BROWSER runs a browser.
const browserEnv = "SWITCHBOARD_TEST_BROWSER"

// RunBrowserIfAsked makes the test binary a scripted browser when a
// BrowserScript ran it, and exits; otherwise it returns at once. Call it
// first in TestMain.
func RunBrowserIfAsked() {
	mode := os.Getenv(browserEnv)
	if mode == "" {
		return
	}
	if err := browse(mode, os.Args[len(os.Args)-1]); err != nil {
		fmt.Fprintln(os.Stderr, "scripted browser:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// browse plays a person's browser on the authorization URL:
//   - allow: follow the authorization server's redirects to the redirect
//     URI, as a browser does after the person clicks "Allow" (the TS
//     example's authorization server approves at once);
//   - deny: go to the redirect URI with error=access_denied, as the
//     server does after "Deny";
//   - wrongstate: go to the redirect URI with a code and another state;
//   - wrongiss, noiss: take the authorization server's redirect (code,
//     state and iss) and go there with another iss (a mix-up, RFC 9207),
//     or with none.
func browse(mode, authURL string) error {
	target := authURL
	switch mode {
	case "wrongiss", "noiss":
		noFollow := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noFollow.Get(authURL)
		if err != nil {
			return err
		}
		resp.Body.Close()
		back, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || back.Query().Get("code") == "" {
			return fmt.Errorf("the authorization server answered %s, Location %q: want a redirect with a code", resp.Status, resp.Header.Get("Location"))
		}
		q := back.Query()
		if mode == "wrongiss" {
			q.Set("iss", "https://evil.example.com")
		} else {
			q.Del("iss")
		}
		back.RawQuery = q.Encode()
		target = back.String()
	case "allow":
	default:
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
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(target)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if mode == "allow" && resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the redirect page answered %s", resp.Status)
	}
	return nil
}

// Browse plays the scripted browser in mode (see BrowserScript for the
// modes) on authURL in this process, for a test whose point is the
// sign-in, not the browser's process (a race-built test binary costs
// 0.15–0.3 s of CPU to start).
func Browse(mode, authURL string) error { return browse(mode, authURL) }

// BrowserScript writes an executable that runs this test binary as the
// scripted browser in mode (allow, deny, wrongstate, wrongiss or noiss),
// for $BROWSER, and
// returns its path. The test's TestMain must call RunBrowserIfAsked.
func BrowserScript(t testing.TB, mode string) string {
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
