package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
)

// newStopCmd is `switchboard stop`.
func newStopCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "stop",
		Short: "Stop all calls: new ones fail, those in flight are cancelled",
		Long: `Set the stop switch: every new call, from any source, fails with a clear error, and
the calls in flight in every switchboard process using the same state directory are
cancelled upstream (in the daemon at once, in other processes within a quarter of a
second). It stays set, across restarts, until 'switchboard resume'.`,
		Example: `  switchboard stop
  switchboard stop --state-dir /var/lib/switchboard`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("stop takes no arguments")
			}
			return a.stop(cmd.Context())
		},
	}
}

// auditLocal records event when b is this process's own backend (no
// daemon runs): a daemon records what it is asked to do itself.
func (a *app) auditLocal(b control.Backend, event, done string) error {
	return a.auditLocalEvent(b, audit.Event{Event: event, Outcome: audit.OK}, done)
}

// auditLocalEvent is auditLocal for an event with more fields.
func (a *app) auditLocalEvent(b control.Backend, e audit.Event, done string) error {
	if _, daemon := b.(*control.Client); daemon {
		return nil
	}
	return a.recordAudit(config.Audit{}, e, done)
}

// stop sets the stop switch: every new call fails with a clear error and
// the calls in flight in every switchboard process are cancelled (the
// daemon at once, other processes within a poll of the switch file).
func (a *app) stop(ctx context.Context) error {
	b, done, err := a.stopBackend(ctx)
	if err != nil {
		return err
	}
	defer done()
	if _, err := b.Stop(ctx); err != nil {
		return err
	}
	if err := a.auditLocal(b, audit.Stopped, "stopped calls"); err != nil {
		return err
	}
	if a.json {
		return a.printJSON(map[string]bool{"stopped": true})
	}
	fmt.Fprintln(a.stdout, "stopped: new calls fail and calls in flight are cancelled; run 'switchboard resume' to allow calls again")
	return nil
}
