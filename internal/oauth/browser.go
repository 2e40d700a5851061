package oauth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// OpenBrowser opens url the standard way: each command of $BROWSER in turn
// (a colon-separated list; "%s" in a command stands for the URL, otherwise
// the URL is its last argument; run without a shell), then the platform's
// opener (xdg-open, open, or rundll32 on Windows). It returns once a
// command has started, and the function that waits for it to end. The
// caller always prints the URL too, for a machine without a browser.
//
// The command is not tied to ctx: a browser started directly from $BROWSER
// must outlive the sign-in. done receives its exit once it ends.
func OpenBrowser(ctx context.Context, url string) (done <-chan error, err error) {
	return openBrowser(ctx, url, os.Getenv("BROWSER"))
}

// BrowserOpener returns OpenBrowser reading $BROWSER through lookupEnv,
// for a command that runs in an environment of its own (nil means the
// process's: OpenBrowser itself).
func BrowserOpener(lookupEnv func(string) (string, bool)) func(ctx context.Context, url string) (done <-chan error, err error) {
	if lookupEnv == nil {
		return OpenBrowser
	}
	return func(ctx context.Context, url string) (<-chan error, error) {
		b, _ := lookupEnv("BROWSER")
		return openBrowser(ctx, url, b)
	}
}

// openBrowser is OpenBrowser with browser for $BROWSER.
func openBrowser(ctx context.Context, url, browser string) (done <-chan error, err error) {
	var cmds [][]string
	if b := browser; b != "" {
		for _, entry := range strings.Split(b, string(os.PathListSeparator)) {
			fields := strings.Fields(entry)
			if len(fields) == 0 {
				continue
			}
			replaced := false
			for i, f := range fields {
				if strings.Contains(f, "%s") {
					fields[i] = strings.ReplaceAll(f, "%s", url)
					replaced = true
				}
			}
			if !replaced {
				fields = append(fields, url)
			}
			cmds = append(cmds, fields)
		}
	}
	switch runtime.GOOS {
	case "darwin":
		cmds = append(cmds, []string{"open", url})
	case "windows":
		cmds = append(cmds, []string{"rundll32", "url.dll,FileProtocolHandler", url})
	default:
		cmds = append(cmds, []string{"xdg-open", url})
	}
	var errs []error
	for _, c := range cmds {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		cmd := exec.Command(c[0], c[1:]...)
		if err := cmd.Start(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c[0], err))
			continue
		}
		ch := make(chan error, 1)
		go func() { ch <- cmd.Wait() }() // ends when the command does
		return ch, nil
	}
	return nil, fmt.Errorf("opening a browser: %w", errors.Join(errs...))
}
