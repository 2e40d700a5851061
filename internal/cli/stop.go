package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// runStop sets the stop switch: every new call fails with a clear error and
// the calls in flight in every switchboard process are cancelled (each
// watches the switch). It stays set until resume.
func runStop(_ context.Context, a *app, args []string) error {
	fs := a.flags("stop", false)
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("stop takes no arguments")
	}
	flag, err := a.stopFlag()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(flag), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(flag, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o600); err != nil {
		return fmt.Errorf("setting the stop switch: %w", err)
	}
	if a.json {
		return a.printJSON(map[string]bool{"stopped": true})
	}
	fmt.Fprintln(a.stdout, "stopped: new calls fail and calls in flight are cancelled; run 'switchboard resume' to allow calls again")
	return nil
}

func runResume(_ context.Context, a *app, args []string) error {
	fs := a.flags("resume", false)
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("resume takes no arguments")
	}
	flag, err := a.stopFlag()
	if err != nil {
		return err
	}
	err = os.Remove(flag)
	was := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("lifting the stop switch: %w", err)
	}
	if a.json {
		return a.printJSON(map[string]bool{"stopped": false})
	}
	if was {
		fmt.Fprintln(a.stdout, "resumed: calls are allowed again")
	} else {
		fmt.Fprintln(a.stdout, "calls were not stopped")
	}
	return nil
}
