package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
)

// This file wires the audit trail (package audit, the audit: block) into
// the daemon: the writer is opened in New, so that a bad path stops serve
// before it starts, handed to the gateway, the hooks, the control backend
// and the console, run for as long as the daemon serves, and closed last,
// after everything that records into it has stopped.

// newAuditor opens the audit trail cfg asks for (nil when it asks for
// none). The redactor is the engine's, read when an event is recorded, so
// that it knows the secrets of the configuration in force.
func (d *Daemon) newAuditor(cfg *config.Config) (*audit.Auditor, error) {
	a := cfg.Audit
	if !a.Enabled() {
		return nil, nil
	}
	au, err := audit.New(audit.Options{
		File: a.File, MaxSize: a.MaxSize, MaxBackups: a.MaxBackups, MaxAge: a.MaxAge, Compress: a.Compress,
		Stdout:    d.opts.AuditStdout,
		Redact:    func(s string) string { return d.eng.Redactor().String(s) },
		Logger:    d.logger,
		OnFailure: d.auditFailed,
	})
	if err != nil {
		return nil, fmt.Errorf("%w (audit.file in %s)", err, cfg.Source)
	}
	d.logger.Info("writing the audit trail", "file", a.File, "required", a.Required)
	return au, nil
}

// auditFailed counts an event the trail lost and, with audit.required,
// sets the stop switch: no call runs unaudited until the file can be
// written again and someone resumes.
func (d *Daemon) auditFailed(e audit.Event, err error) {
	d.metrics.AuditFailed(e.Event)
	if !d.config().Audit.Required || d.eng.Stopped() {
		return
	}
	if flag := control.StopFlagPath(d.opts.StateDir); d.opts.StateDir != "" {
		if werr := os.WriteFile(flag, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o600); werr != nil {
			d.logger.Error("setting the stop switch failed", "err", werr)
		}
	}
	n := d.eng.Stop()
	d.logger.Error("audit.required: the audit trail cannot be written, so calls are stopped; fix the audit file, then run switchboard resume",
		"file", d.config().Audit.File, "cancelled", n, "err", err)
}

// runAuditor runs the audit writer until ctx is done (a nil one returns
// at once).
func (d *Daemon) runAuditor(ctx context.Context) { _ = d.audit.Run(ctx) }

// closeAuditor closes the audit file of a daemon that will not run.
func (d *Daemon) closeAuditor() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = d.audit.Run(ctx) // writes nothing queued, closes the file
}

// auditReload records a reload and its outcome.
func (d *Daemon) auditReload(ctx context.Context, err error) {
	e := audit.Event{Event: audit.ConfigReload, Outcome: audit.OK, Actor: audit.ActorFrom(ctx, audit.Actor{Via: audit.ViaDaemon})}
	if src := d.config().Source; src != "" {
		e.Target.File = src
		if abs, err := filepath.Abs(src); err == nil {
			e.Target.File = abs
		}
	}
	if err != nil {
		e.Outcome, e.Reason = audit.Failed, err.Error()
	}
	d.audit.Record(e)
}

// auditSignIn records the end of a sign-in the console started.
func (d *Daemon) auditSignIn(actor audit.Actor, server string, err error) {
	e := audit.Event{Event: audit.SignIn, Outcome: audit.OK, Actor: actor, Target: audit.Target{Server: server}}
	if err != nil {
		e.Outcome, e.Reason = audit.Failed, err.Error()
	}
	d.audit.Record(e)
}
