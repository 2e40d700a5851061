package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/audit"
)

// newResumeCmd is `switchboard resume`.
func newResumeCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "resume",
		Short:   "Allow calls again after stop",
		Long:    "Clear the stop switch that 'switchboard stop' set, in the daemon and in every process using the same state directory.",
		Example: "  switchboard resume\n  switchboard resume --json",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("resume takes no arguments")
			}
			return a.resume(cmd.Context())
		},
	}
}

// resume clears the stop switch.
func (a *app) resume(ctx context.Context) error {
	b, done, err := a.stopBackend(ctx)
	if err != nil {
		return err
	}
	defer done()
	was, err := b.Resume(ctx)
	if err != nil {
		return err
	}
	if err := a.auditLocal(b, audit.Resumed, "resumed calls"); err != nil {
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
