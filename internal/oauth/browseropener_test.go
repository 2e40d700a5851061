package oauth_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/oauth"
)

// TestBrowserOpenerReadsItsEnvironment: the opener of a command that runs
// in an environment of its own starts that environment's $BROWSER, not
// the process's, with the URL as its last argument.
func TestBrowserOpenerReadsItsEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opened := filepath.Join(dir, "opened")
	browser := filepath.Join(dir, "browser")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\nprintf '%s|' \"$@\" > "+opened+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := func(name string) (string, bool) {
		if name == "BROWSER" {
			return browser + " --new-window", true
		}
		return "", false
	}
	const url = "https://auth.example.com/authorize?state=x"
	done, err := oauth.BrowserOpener(env)(context.Background(), url)
	if err != nil {
		t.Fatalf("opening the browser: %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the browser failed: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the browser did not end")
	}
	if b, err := os.ReadFile(opened); err != nil || string(b) != "--new-window|"+url+"|" {
		t.Errorf("the browser's arguments: got %q (%v), want its own (--new-window) and the URL", b, err)
	}
}
