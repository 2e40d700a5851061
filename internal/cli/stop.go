package cli

import (
	"context"
	"fmt"
)

// runStop sets the stop switch: every new call fails with a clear error and
// the calls in flight in every switchboard process are cancelled (the
// daemon at once, other processes within a poll of the switch file). It
// stays set until resume.
func runStop(ctx context.Context, a *app, args []string) error {
	fs := a.flags("stop", false)
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("stop takes no arguments")
	}
	b, done, err := a.stopBackend(ctx)
	if err != nil {
		return err
	}
	defer done()
	if _, err := b.Stop(ctx); err != nil {
		return err
	}
	if a.json {
		return a.printJSON(map[string]bool{"stopped": true})
	}
	fmt.Fprintln(a.stdout, "stopped: new calls fail and calls in flight are cancelled; run 'switchboard resume' to allow calls again")
	return nil
}

func runResume(ctx context.Context, a *app, args []string) error {
	fs := a.flags("resume", false)
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("resume takes no arguments")
	}
	b, done, err := a.stopBackend(ctx)
	if err != nil {
		return err
	}
	defer done()
	was, err := b.Resume(ctx)
	if err != nil {
		return err
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
