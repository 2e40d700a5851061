package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/redact"
)

// auditPoll is how often audit --follow looks at the file.
const auditPoll = 250 * time.Millisecond

// newAuditCmd is `switchboard audit`.
func newAuditCmd(a *app) *cobra.Command {
	var (
		file     string
		since    sinceValue
		f        audit.Filter
		outcomes []string
		follow   bool
	)
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read the audit trail",
		Long: `Read the audit trail that serve writes when audit.file is set (docs/audit.md): sign-ins,
refused tokens, denied views, calls a guard hook denied, reloads, trusted files, servers enabled
or disabled, and the stop switch, each with who, from where and how it ended. The rotated
backups (compressed or not) are read too, oldest first. A table by default; --json prints the
events as they are stored, in one array. --follow keeps printing new events, across rotations,
until interrupted (with --json, one JSON object a line; with --output yaml, one YAML document each).`,
		Example: `  switchboard audit
  switchboard audit --since 1h --outcome denied
  switchboard audit --event auth.token_refused --event gateway.view_denied
  switchboard audit --event 'auth.*' --user ana --json
  switchboard audit --file /var/log/switchboard/audit.jsonl --follow`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("usage: switchboard audit [--file PATH] [--since D] [--event E] [--user U] [--outcome O] [--json] [--follow]")
			}
			f.Since = since.at
			for _, o := range outcomes {
				f.Outcomes = append(f.Outcomes, audit.Outcome(o))
			}
			if err := audit.CheckFilter(f); err != nil {
				return &usageError{err.Error()}
			}
			return a.audit(cmd.Context(), file, f, follow)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&file, "file", "", "the audit `file` (default: audit.file of the configuration)")
	fl.Var(&since, "since", "only events within this `duration` (90m, 2h, 7d) or since this date (2026-01-02, or an RFC 3339 time)")
	fl.StringArrayVar(&f.Events, "event", nil, "only this `event` (repeat for more; auth.* for a family): "+strings.Join(audit.Events, ", "))
	fl.StringArrayVar(&f.Users, "user", nil, "only events of this `user` (repeat for more)")
	fl.StringArrayVar(&outcomes, "outcome", nil, "only this `outcome`: allowed, denied, ok, failed (repeat for more)")
	fl.BoolVarP(&follow, "follow", "f", false, "keep printing new events until interrupted")
	_ = cmd.RegisterFlagCompletionFunc("event", fixedCompletion(audit.Events...))
	_ = cmd.RegisterFlagCompletionFunc("outcome", fixedCompletion("allowed", "denied", "ok", "failed"))
	_ = cmd.RegisterFlagCompletionFunc("file", completeFiles("jsonl", "log", "gz"))
	return cmd
}

// audit prints the events of the trail that f selects.
func (a *app) audit(ctx context.Context, file string, f audit.Filter, follow bool) error {
	if file == "" {
		var err error
		if file, err = a.auditFile(); err != nil {
			return err
		}
	}
	if a.json {
		if follow {
			return audit.Follow(ctx, file, f, auditPoll, func(e audit.Event) error { return a.printStreamed(e) })
		}
		events := []audit.Event{}
		if err := audit.Read(file, f, func(e audit.Event) error { events = append(events, e); return nil }); err != nil {
			return err
		}
		return a.printJSON(events)
	}
	if follow {
		fmt.Fprintln(a.stdout, auditLine("TIME", "EVENT", "OUTCOME", "USER", "VIA", "FROM", "TARGET", "REASON"))
		return audit.Follow(ctx, file, f, auditPoll, func(e audit.Event) error {
			_, err := fmt.Fprintln(a.stdout, auditLine(auditCells(e)...))
			return err
		})
	}
	t := a.newTable("TIME", "EVENT", "OUTCOME", "USER", "VIA", "FROM", "TARGET", "REASON").keepWhole(0, 1)
	n := 0
	if err := audit.Read(file, f, func(e audit.Event) error { t.row(auditCells(e)...); n++; return nil }); err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintf(a.stderr, "no audit events in %s match\n", file)
		return nil
	}
	return t.flush()
}

// auditFile is audit.file of the configuration, or an error saying how
// to name the file.
func (a *app) auditFile() (string, error) {
	path, ac, err := a.auditConfig()
	if err != nil {
		return "", err
	}
	fix := "set audit.file in switchboard.yaml (docs/audit.md) and restart serve, or pass --file PATH"
	switch {
	case path == "":
		return "", fault.New(fault.Config, "there is no configuration file, so no audit trail").WithSuggestions(fix)
	case ac.File == "":
		return "", fault.New(fault.Config, "%s configures no audit trail (audit.file is not set)", path).WithSuggestions(fix)
	case ac.File == audit.Stdout:
		return "", fault.New(fault.Config, "%s sends the audit trail to serve's standard output, not to a file", path).
			WithSuggestions("read it where serve's output goes, or set audit.file to a path")
	}
	return ac.File, nil
}

// auditConfig reads the audit: block of the configuration file the
// command would use (path "" when there is none).
func (a *app) auditConfig() (path string, ac config.Audit, err error) {
	path = a.configPath
	if path == "" {
		p, err := a.findConfig()
		if err != nil {
			return "", ac, err
		}
		path = a.daemonConfigInstead(p)
	}
	if path == "" {
		return "", ac, nil
	}
	ac, err = a.auditConfigAt(path)
	return path, ac, err
}

// auditConfigAt reads the audit: block of the configuration file at
// path. Variables unset here (the daemon has them) do not stop it: only
// the block is wanted.
func (a *app) auditConfigAt(path string) (config.Audit, error) {
	opts := a.configOptions(false)
	opts.LookupEnv = a.envOrStandIn
	cfg, err := config.Load(path, opts)
	if err != nil {
		return config.Audit{}, fmt.Errorf("reading the audit: block of %s: %w", path, err)
	}
	return cfg.Audit, nil
}

// recordTrust writes a config.trust event to the audit trail of the
// trusted file, or else of the configuration in use.
func (a *app) recordTrust(trusted *config.Config, rec config.TrustRecord) error {
	return a.recordAudit(trusted.Audit, audit.Event{Event: audit.ConfigTrust, Outcome: audit.OK,
		Target: audit.Target{File: rec.Path, Hash: rec.SHA256}}, rec.Path+" is trusted")
}

// recordTrustRefused writes a config.trust_refused event for the file at
// path (abs), which the person declined to trust at config trust's
// question, to the trail recordTrust would use. The hash is of the file
// as it is now, what was shown.
func (a *app) recordTrustRefused(trusted *config.Config, path string) error {
	e := audit.Event{Event: audit.ConfigTrustRefused, Outcome: audit.Denied, Target: audit.Target{File: path}}
	if data, err := os.ReadFile(path); err == nil {
		sum := sha256.Sum256(data)
		e.Target.Hash = hex.EncodeToString(sum[:])
	}
	return a.recordAudit(trusted.Audit, e, path+" was not trusted")
}

// recordTrustAnswer writes what the person answered when a
// configuration being loaded asked whether to trust it
// (config.Options.TrustAnswered): a config.trust event on yes (failed
// when the trust could not be recorded), config.trust_refused on no; the
// actor is the OS user, via prompt.
func (a *app) recordTrustAnswer(ans config.TrustAnswer) error {
	e := audit.Event{Event: audit.ConfigTrust, Outcome: audit.OK, Actor: audit.Actor{Via: audit.ViaPrompt},
		Target: audit.Target{File: ans.Path, Hash: ans.SHA256}}
	done := ans.Path + " is trusted"
	switch {
	case !ans.Yes:
		e.Event, e.Outcome = audit.ConfigTrustRefused, audit.Denied
		done = ans.Path + " was not trusted"
	case ans.Err != nil:
		e.Outcome, e.Reason = audit.Failed, ans.Err.Error()
		done = "trusting " + ans.Path + " failed"
	}
	return a.appendAudit(a.fileTrail(ans.Path), e, done)
}

// recordInput writes a config.input_stored or config.input_deleted
// event (event) for the input id of file (abs), by the CLI, to the trail
// of fileTrail. The value is never in it.
func (a *app) recordInput(event, file, id string) error {
	done := fmt.Sprintf("input %q of %s was stored", id, file)
	if event == audit.ConfigInputDeleted {
		done = fmt.Sprintf("the value of input %q of %s was deleted", id, file)
	}
	return a.appendAudit(a.fileTrail(file), audit.Event{Event: event, Outcome: audit.OK, Actor: audit.Actor{Via: audit.ViaCLI},
		Target: audit.Target{File: file, Input: id}}, done)
}

// fileTrail is the audit: block of the trail an event about a client's
// file (a trust answered while loading it, an input's value stored for
// it) is written to: that of the configuration in use (--config, else the
// one found, else the daemon's), unless that is file itself — a client's
// file, which has no audit: block — then that of the switchboard.yaml
// found without --config.
func (a *app) fileTrail(file string) config.Audit {
	if a.configPath == "" || control.AbsSource(a.configPath) != file {
		if _, ac, err := a.auditConfig(); err == nil && ac.Enabled() {
			return ac
		}
	}
	p, err := a.findConfig()
	if err != nil || p == "" || control.AbsSource(p) == file {
		return config.Audit{}
	}
	ac, _ := a.auditConfigAt(p)
	return ac
}

// recordSignIn writes an auth.sign_in or auth.sign_out event for server
// (user: the per-user identity signed in, "" for the OS user), failed
// when err is set.
func (a *app) recordSignIn(event, server, user string, err error) error {
	e := audit.Event{Event: event, Outcome: audit.OK, Target: audit.Target{Server: server}}
	if user != "" {
		e.Actor.User = user
	}
	done := "signed in to " + server
	if event == audit.SignOut {
		done = "signed out of " + server
	}
	if err != nil {
		e.Outcome, e.Reason = audit.Failed, err.Error()
		done = strings.Replace(done, "signed", "the attempt to sign", 1) + " failed"
	}
	return a.recordAudit(config.Audit{}, e, done)
}

// recordAudit writes one event done by the CLI (actor: the OS user, via
// cli) to the trail that ac names, or else the configuration in use. What
// the event records is done already: a trail that cannot be written is
// reported on stderr, and makes the command fail with audit.required.
func (a *app) recordAudit(ac config.Audit, e audit.Event, done string) error {
	if !ac.Enabled() {
		if _, main, err := a.auditConfig(); err == nil {
			ac = main
		}
	}
	e.Actor.Via = audit.ViaCLI
	return a.appendAudit(ac, e, done)
}

// appendAudit writes one event done in this process to the trail that ac
// names (nothing when it names none, or standard output: serve's, not
// this command's), as the OS user unless e names another. What the event
// records is done already: a trail that cannot be written is reported on
// stderr, and makes the command fail with audit.required.
func (a *app) appendAudit(ac config.Audit, e audit.Event, done string) error {
	if !ac.Enabled() || ac.File == audit.Stdout {
		return nil
	}
	if u, err := user.Current(); err == nil && e.Actor.User == "" {
		e.Actor.User = u.Username
	}
	err := audit.Append(audit.Options{File: ac.File, MaxSize: ac.MaxSize, MaxBackups: ac.MaxBackups, MaxAge: ac.MaxAge,
		Compress: ac.Compress, Logger: a.logger(), Redact: redact.New(nil).String}, e)
	if err == nil {
		return nil
	}
	if ac.Required {
		return fault.Wrap(fault.Internal, err, "%s, but the audit trail could not record it (audit.required)", done).
			WithSuggestions("make " + ac.File + " writable")
	}
	fmt.Fprintf(a.stderr, "warning: %s, but the audit trail could not record it: %v\n", done, err)
	return nil
}

// auditCells are an event's table cells.
func auditCells(e audit.Event) []string {
	from := e.Actor.Remote
	if e.Actor.Token != "" {
		from = strings.TrimSpace("token " + e.Actor.Token + " " + from)
	}
	var target []string
	for _, kv := range [][2]string{{"server", e.Target.Server}, {"tool", e.Target.Tool}, {"view", e.Target.View}, {"file", e.Target.File}, {"input", e.Target.Input}} {
		if kv[1] != "" {
			target = append(target, kv[0]+"="+kv[1])
		}
	}
	return []string{e.Time.Local().Format("2006-01-02 15:04:05.000"), e.Event, string(e.Outcome), e.Actor.User, e.Actor.Via, from, strings.Join(target, " "), e.Reason}
}

// auditLine lays out one row of audit --follow, which cannot size its
// columns ahead.
func auditLine(c ...string) string {
	return strings.TrimRight(fmt.Sprintf("%-23s  %-20s  %-7s  %-10s  %-8s  %-22s  %-24s  %s", c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]), " ")
}
