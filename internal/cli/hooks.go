package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/hooks"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/vcs"
)

// ExitBlocked is the exit status of `hooks fire` when a hook blocked the
// event (the git pre-push script refuses the push on it).
const ExitBlocked = 3

// newHooksCmd is `switchboard hooks`, with list, log, fire, trust and
// install-git (docs/hooks.md#cli).
func newHooksCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "List, fire, trust and inspect event hooks",
		Long: `List the hooks with their validity and trust, show the recorded runs, fire an event,
trust a configuration file so that its hooks may run, and write git hook scripts that fire
git.* events. Reference: docs/hooks.md.`,
		Example: `  switchboard hooks list
  switchboard hooks fire spec.after-plan file=plan.md --dry-run
  switchboard hooks log --failed`,
		RunE: subcommandRequired,
	}
	var connect bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the hooks with their validity and trust",
		Long: `List every hook with its event, priority, state (ok, invalid, untrusted, changed,
disabled), actions and source, and the problems of invalid ones. Exits 1 when a hook is
invalid. --connect also checks mcp mappings against the tools' schemas.`,
		Example: `  switchboard hooks list
  switchboard hooks list --connect --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("usage: switchboard hooks list [--connect] [--json]")
			}
			return a.hooksList(cmd.Context(), connect)
		},
	}
	list.Flags().BoolVar(&connect, "connect", false, "connect to the servers to check mcp mappings against their tool schemas")

	var logFilter store.HookRunFilter
	logCmd := &cobra.Command{
		Use:   "log",
		Short: "Show recorded hook runs, newest first",
		Long:  "Show recorded hook runs, newest first: time, event, hook, action, status, duration and error.",
		Example: `  switchboard hooks log
  switchboard hooks log --failed --hook save --limit 10`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if logFilter.Limit <= 0 {
				return usagef("--limit %d is out of range; give 1 or more", logFilter.Limit)
			}
			if len(args) > 0 {
				return usagef("usage: switchboard hooks log [--failed] [--hook NAME] [--event NAME] [--limit N] [--json]")
			}
			return a.hooksLog(cmd.Context(), logFilter)
		},
	}
	lf := logCmd.Flags()
	lf.BoolVar(&logFilter.Failed, "failed", false, "only runs that failed, timed out, were rejected or blocked")
	lf.StringVar(&logFilter.Hook, "hook", "", "only runs of this `hook`")
	lf.StringVar(&logFilter.Event, "event", "", "only runs for this `event`")
	lf.IntVar(&logFilter.Limit, "limit", 50, "at most `n` runs, newest first")
	_ = logCmd.RegisterFlagCompletionFunc("hook", a.completeHooks)
	_ = logCmd.RegisterFlagCompletionFunc("event", a.completeEvents)

	var dry, quiet bool
	fire := &cobra.Command{
		Use:   "fire EVENT [key=value ...]",
		Short: "Fire an event and wait for its hooks",
		Long: `Fire an event and wait for its hooks: on the daemon when one serves this configuration,
else in this process. key=value fields become the event's fields (true/false and JSON
objects and lists keep their type). Exits 1 when a hook failed and 3 when one blocked the
event. --dry-run prints the resolved parameters of every action that would run. --quiet
prints nothing when every action succeeded, else one line on stderr per action that did
not, with its cause and where to see more (the git hook scripts use it).`,
		Example: `  switchboard hooks fire spec.after-plan file=plan.md
  switchboard hooks fire release.published tag=v1.2.0 --dry-run --json`,
		ValidArgsFunction: onlyFirst(a.completeEvents),
		RunE: func(cmd *cobra.Command, args []string) error {
			if quiet && (dry || a.json) {
				return usagef("--quiet prints only what went wrong; it cannot be used with --dry-run or --json")
			}
			return a.hooksFire(cmd.Context(), args, dry, quiet)
		},
	}
	fire.Flags().BoolVar(&dry, "dry-run", false, "print the resolved parameters of every action that would run, without running them")
	fire.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the actions that did not succeed, one line each on stderr")

	var yes bool
	trust := &cobra.Command{
		Use:   "trust [FILE]",
		Short: "Trust a configuration file so that its hooks run",
		Long: `Show what the configuration file would run once trusted — its servers and hooks — ask
for confirmation (or take --yes), and record the file's hash so that its hooks run, until
the file changes. Without a terminal and without --yes it refuses and records nothing.
This is the same trust as config trust's. Without FILE it trusts the --config file, else
the one found in the usual places.`,
		Example: `  switchboard hooks trust
  switchboard hooks trust ./switchboard.yaml --yes`,
		ValidArgsFunction: onlyFirst(completeFiles("yaml", "yml", "json")),
		RunE: func(c *cobra.Command, args []string) error {
			return a.hooksTrust(c.Context(), args, yes)
		},
	}
	trust.Flags().BoolVar(&yes, "yes", false, "trust without asking (after reviewing the file yourself)")

	var command string
	install := &cobra.Command{
		Use:   "install-git [DIR]",
		Short: "Write git hook scripts that fire git.* events",
		Long: `Write git hook scripts into the repository at DIR (default: the current directory) that
fire git.* events, chaining the hooks the repository already has. Reference:
docs/git-hooks.md.`,
		Example: `  switchboard hooks install-git
  switchboard hooks install-git ../other-repo --command /usr/local/bin/switchboard`,
		ValidArgsFunction: onlyFirst(completeDirs),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.hooksInstallGit(args, command)
		},
	}
	install.Flags().StringVar(&command, "command", "", "the switchboard `executable` the hooks run (default: switchboard on PATH)")
	_ = install.RegisterFlagCompletionFunc("command", completeFiles())

	cmd.AddCommand(list, logCmd, fire, trust, install)
	return cmd
}

// hooksList prints every hook with its validity and trust. It exits 1
// when a hook is invalid.
func (a *app) hooksList(ctx context.Context, connect bool) error {
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	dir, err := a.stateDirectory()
	if err != nil {
		return err
	}
	opts := hooks.Options{Config: cfg, StateDir: dir, Logger: a.logger()}
	if connect {
		s, err := a.open(ctx, cfg)
		if err != nil {
			return err
		}
		defer s.close()
		opts.Catalog, opts.Calls = s.cat, s.eng
	}
	eng, err := hooks.New(opts)
	if err != nil {
		return err
	}
	list := eng.List()
	invalid := 0
	for _, h := range list {
		if !h.Valid {
			invalid++
		}
	}
	if a.json {
		if err := a.printJSON(list); err != nil {
			return err
		}
	} else if len(list) == 0 {
		fmt.Fprintln(a.stdout, "no hooks configured")
	} else {
		t := a.newTable("NAME", "ON", "PRIORITY", "STATE", "ACTIONS", "SOURCE").keepWhole(0)
		for _, h := range list {
			t.row(h.Name, h.On, fmt.Sprint(h.Priority), hookState(h), strings.Join(h.Actions, ", "), h.Source)
		}
		if err := t.flush(); err != nil {
			return err
		}
		for _, h := range list {
			for _, p := range h.Problems {
				fmt.Fprintf(a.stdout, "  %s: %s\n", h.Name, p)
			}
		}
		if list[0].Trust != hooks.Trusted {
			// The file by name (the one found elsewhere may be another)
			// and, without a terminal to ask on, --yes.
			cmd := strings.Replace(a.trustCommand(cfg.Source), "config trust", "hooks trust", 1)
			fmt.Fprintf(a.stdout, "these hooks do not run until you trust %s: %s\n", cfg.Source, cmd)
		}
		if !connect && hasMCPAction(cfg) {
			fmt.Fprintln(a.stdout, "mcp mappings were not checked against the tools' schemas; to check them: switchboard hooks list --connect")
		}
		if dir, err := a.workDir(); err == nil {
			if old, _ := vcs.OutdatedHooks(dir); len(old) > 0 {
				fmt.Fprintf(a.stdout, "this repository's git hooks (%s) were installed by an earlier switchboard and work as it did; to update them: switchboard hooks install-git\n", strings.Join(old, ", "))
			}
		}
	}
	if invalid > 0 {
		return &exitError{code: ExitFailure}
	}
	return nil
}

// hookState is a hook's state in one word.
func hookState(h hooks.HookInfo) string {
	switch {
	case !h.Valid:
		return "invalid"
	case h.Trust != hooks.Trusted:
		return string(h.Trust)
	case !h.Enabled:
		return "disabled"
	}
	return "ok"
}

// hooksLog prints recorded hook runs, newest first.
func (a *app) hooksLog(ctx context.Context, f store.HookRunFilter) error {
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	st, err := a.openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	runs, err := st.HookRuns(ctx, f)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(runs)
	}
	if len(runs) == 0 {
		fmt.Fprintln(a.stdout, "no hook runs recorded")
		return nil
	}
	// CALL is the short id of the call an mcp action made, which
	// history show takes.
	t := a.newTable("TIME", "EVENT", "HOOK", "ACTION", "STATUS", "DURATION", "CALL", "ERROR").keepWhole(0, 1, 2, 6)
	for _, r := range runs {
		t.row(r.StartedAt.Local().Format("2006-01-02 15:04:05"), r.Event, r.Hook,
			orDash(r.Action), r.Status, r.Duration.Round(time.Millisecond).String(), orDash(shortID(r.CallID)), oneLineText(r.Error))
	}
	return t.flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLineText folds s to one line. It is not cut: on a terminal the
// table cuts its last column to fit; piped, nothing is cut.
func oneLineText(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// parseFields reads key=value arguments. A value that is a JSON object or
// list, true or false keeps that type; anything else is a string.
func parseFields(args []string) (map[string]any, error) {
	fields := map[string]any{}
	for _, kv := range args {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef("%q is not key=value", kv)
		}
		switch {
		case v == "true" || v == "false":
			fields[k] = v == "true"
		case strings.HasPrefix(v, "{") || strings.HasPrefix(v, "["):
			var x any
			dec := json.NewDecoder(strings.NewReader(v))
			dec.UseNumber()
			if dec.Decode(&x) == nil && !dec.More() {
				fields[k] = x
			} else {
				fields[k] = v
			}
		default:
			fields[k] = v
		}
	}
	return fields, nil
}

// hooksFire fires an event and waits for its hooks: on the daemon when one
// serves this configuration, else in-process. It exits 1 when a hook
// failed and ExitBlocked when one blocked the event.
func (a *app) hooksFire(ctx context.Context, pos []string, dry, quiet bool) error {
	if len(pos) == 0 {
		return usagef("usage: switchboard hooks fire NAME [key=value ...] [--dry-run] [--json]")
	}
	name := pos[0]
	if !config.ValidEventName(name) {
		return usagef("%q is not an event name: use dotted words, e.g. spec.after-plan", name)
	}
	fields, err := parseFields(pos[1:])
	if err != nil {
		return err
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	ctx = hooks.ContextFromEnv(ctx, a.getenv)
	var rep hooks.Report
	handled := false
	if !dry && a.getenv(hooks.EnvChainID) == "" {
		rep, handled, err = a.fireOnDaemon(ctx, cfg, name, fields)
		if err != nil {
			return err
		}
	}
	if !handled {
		rep, err = a.fireHere(ctx, cfg, name, fields, dry)
		if err != nil {
			return err
		}
	}
	switch {
	case a.json:
		if err := a.printJSON(rep); err != nil {
			return err
		}
	case quiet:
		a.printQuietReport(rep)
	default:
		if err := a.printReport(rep, dry); err != nil {
			return err
		}
	}
	switch {
	case rep.Blocked:
		return &exitError{code: ExitBlocked}
	case rep.Failed:
		return &exitError{code: ExitFailure}
	}
	return nil
}

// fireHere runs the event's hooks in this process. Servers are connected
// only when a hook that could match has an mcp or agent action.
func (a *app) fireHere(ctx context.Context, cfg *config.Config, name string, fields map[string]any, dry bool) (hooks.Report, error) {
	dir, err := a.stateDirectory()
	if err != nil {
		return hooks.Report{}, err
	}
	opts := hooks.Options{Config: cfg, StateDir: dir, Logger: a.logger()}
	var sess *session
	if needsServers(cfg, name) {
		if sess, err = a.open(ctx, cfg); err != nil {
			return hooks.Report{}, err
		}
		defer sess.close()
		opts.Calls, opts.Catalog, opts.Store = sess.eng, sess.cat, sess.store
	} else if !dry {
		st, err := a.openStore(ctx, cfg)
		if err != nil {
			return hooks.Report{}, err
		}
		defer st.Close()
		opts.Store = st
	}
	if sess != nil && sess.hooks != nil {
		// The session runs the hooks around its calls already.
		if dry {
			return sess.hooks.DryRun(ctx, name, fields)
		}
		return sess.hooks.Fire(ctx, name, fields)
	}
	eng, err := hooks.New(opts)
	if err != nil {
		return hooks.Report{}, err
	}
	if dry {
		return eng.DryRun(ctx, name, fields)
	}
	if sess != nil {
		sess.eng.SetInterceptor(eng)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = eng.Run(runCtx) }()
	rep, err := eng.Fire(ctx, name, fields)
	cancel()
	wg.Wait() // writes the records
	return rep, err
}

// needsServers reports whether a hook whose on: could match name has an
// action that calls tools.
func needsServers(cfg *config.Config, name string) bool {
	for _, h := range cfg.Hooks.List {
		if ok, _ := path.Match(h.On, name); !ok {
			continue
		}
		for _, act := range h.Actions {
			if act.Type == config.HookActionMCP || act.Type == config.HookActionAgent {
				return true
			}
		}
	}
	return false
}

// fireOnDaemon posts the event to the daemon serving this configuration
// (POST /hooks/events/NAME?wait=true on its control socket). handled is
// false when no daemon serves it or it does not serve hooks.
func (a *app) fireOnDaemon(ctx context.Context, cfg *config.Config, name string, fields map[string]any) (hooks.Report, bool, error) {
	c, _ := a.daemon(ctx, cfg, false)
	if c == nil {
		return hooks.Report{}, false, nil
	}
	c.Close()
	sock, err := a.socketPath()
	if err != nil {
		return hooks.Report{}, false, nil
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	defer hc.CloseIdleConnections()
	body, err := json.Marshal(fields)
	if err != nil {
		return hooks.Report{}, false, fmt.Errorf("encoding the event fields: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://switchboard/hooks/events/"+url.PathEscape(name)+"?wait=true", bytes.NewReader(body))
	if err != nil {
		return hooks.Report{}, false, fmt.Errorf("building the event request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		a.logger().Debug("the daemon did not take the event; firing in-process", "err", err)
		return hooks.Report{}, false, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	switch resp.StatusCode {
	case http.StatusOK:
		var rep hooks.Report
		if err := json.Unmarshal(data, &rep); err != nil {
			return hooks.Report{}, false, fault.Wrap(fault.Protocol, err, "decoding the daemon's hook report")
		}
		return rep, true, nil
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		a.logger().Debug("the daemon does not serve hook events; firing in-process")
		return hooks.Report{}, false, nil
	}
	var eb struct {
		Error *fault.Error `json:"error"`
	}
	if json.Unmarshal(data, &eb) == nil && eb.Error != nil {
		return hooks.Report{}, false, eb.Error
	}
	return hooks.Report{}, false, fault.New(fault.Protocol, "the daemon answered the event with %s", resp.Status)
}

// printNotTrusted says, on stderr, which hooks the event would have run
// had their file been trusted, and how to trust it.
func (a *app) printNotTrusted(rep hooks.Report) {
	nt := rep.NotTrusted
	if nt == nil {
		return
	}
	why := "is not trusted"
	if nt.State == hooks.Changed {
		why = "changed since it was trusted"
	}
	word := "hook"
	if len(nt.Hooks) > 1 {
		word = "hooks"
	}
	fmt.Fprintf(a.stderr, "switchboard: %s: %s %s did not run: %s %s; review it, then run: %s\n",
		rep.Event, word, strings.Join(nt.Hooks, ", "), nt.File, why, nt.Fix)
}

// printReport prints a report for a person.
func (a *app) printReport(rep hooks.Report, dry bool) error {
	a.printNotTrusted(rep)
	if len(rep.Runs) == 0 {
		fmt.Fprintf(a.stdout, "no hook ran for %s\n", rep.Event)
		return nil
	}
	if dry {
		t := a.newTable("HOOK", "ACTION", "STATUS", "PARAMETERS").keepWhole(0)
		for _, r := range rep.Runs {
			p, _ := json.Marshal(r.Params)
			detail := string(p)
			if r.Error != "" {
				detail = r.Error
			}
			t.row(r.Hook, orDash(r.Action), string(r.Status), detail)
		}
		return t.flush()
	}
	t := a.newTable("HOOK", "ACTION", "STATUS", "DURATION", "CALL", "ERROR").keepWhole(0, 4)
	for _, r := range rep.Runs {
		t.row(r.Hook, orDash(r.Action), string(r.Status), r.Duration.Round(time.Millisecond).String(), orDash(shortID(r.CallID)), oneLineText(r.Error))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if rep.Blocked {
		fmt.Fprintf(a.stderr, "blocked by hook %s: %s\n", rep.BlockedBy, rep.Reason)
	}
	return nil
}

// printQuietReport prints, on stderr, one line for each run that did not
// succeed — its hook, action, status and cause, and the command that
// shows more: the call's record for an mcp action that made one, else
// the hook's runs — and the block, if any. All well, it prints nothing.
func (a *app) printQuietReport(rep hooks.Report) {
	a.printNotTrusted(rep)
	blockLine := rep.Blocked
	for _, r := range rep.Runs {
		if r.Status == hooks.StatusSuccess {
			continue
		}
		if r.Status == hooks.StatusBlocked {
			blockLine = false // this line says it
		}
		what := "hook " + r.Hook
		if r.Action != "" {
			what += ", " + r.Action
		}
		line := fmt.Sprintf("switchboard: %s: %s: %s", rep.Event, what, r.Status)
		if r.Error != "" {
			line += ": " + oneLineText(r.Error)
		}
		more := fmt.Sprintf("switchboard hooks log --hook %s --event %s", r.Hook, rep.Event)
		if r.CallID != "" {
			more = "switchboard history show " + r.CallID
		}
		fmt.Fprintf(a.stderr, "%s (more: %s)\n", line, more)
	}
	if blockLine {
		fmt.Fprintf(a.stderr, "blocked by hook %s: %s\n", rep.BlockedBy, rep.Reason)
	}
}

// hooksTrust shows what the configuration file would run, asks (unless
// yes), and records its hash so that its hooks run: config trust's
// trust, reached from the hooks.
func (a *app) hooksTrust(ctx context.Context, pos []string, yes bool) error {
	if len(pos) > 1 {
		return usagef("usage: switchboard hooks trust [FILE] [--yes]")
	}
	file := a.configPath
	if len(pos) == 1 {
		file = a.inWorkDir(pos[0])
	}
	if file == "" {
		var err error
		if file, err = a.findConfig(); err != nil {
			return err
		}
		if file == "" {
			return usagef("no configuration file found to trust; give its path")
		}
	}
	return a.configTrust(ctx, file, yes)
}

// hooksInstallGit writes the git hook scripts into a repository.
func (a *app) hooksInstallGit(pos []string, command string) error {
	if len(pos) > 1 {
		return usagef("usage: switchboard hooks install-git [DIR] [--command PATH]")
	}
	dir, err := a.workDir()
	if err != nil {
		return err
	}
	if len(pos) == 1 {
		dir = a.inWorkDir(pos[0])
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if strings.ContainsRune(command, '/') {
		command = a.inWorkDir(command) // a path, relative to the working directory
	}
	rep, err := vcs.InstallHooks(dir, vcs.InstallOptions{Command: command})
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(rep)
	}
	for _, h := range rep.Installed {
		fmt.Fprintf(a.stdout, "installed %s\n", filepath.Join(rep.HooksDir, h))
	}
	for _, h := range rep.Chained {
		fmt.Fprintf(a.stdout, "installed %s (your hook was kept as %s%s and runs first)\n", filepath.Join(rep.HooksDir, h), h, vcs.ChainedSuffix)
	}
	for _, h := range rep.Unchanged {
		fmt.Fprintf(a.stdout, "unchanged %s\n", filepath.Join(rep.HooksDir, h))
	}
	a.warnHookCommand(command)
	return nil
}

// warnHookCommand says so when the git hooks will not find the executable
// they run, which would make every hook print a warning and fire nothing.
func (a *app) warnHookCommand(command string) {
	name := command
	if name == "" {
		name = "switchboard"
	}
	if a.onPath(name) {
		return
	}
	fmt.Fprintf(a.stderr, "switchboard hooks: note: %s is not on PATH, so the git hooks will only warn until it is\n", name)
	if exe, err := os.Executable(); err == nil && !strings.Contains(exe, string(filepath.Separator)+"go-build") {
		fmt.Fprintf(a.stderr, "  hint: install switchboard on PATH, or run again with --command %s\n", exe)
	} else {
		fmt.Fprintln(a.stderr, "  hint: install switchboard on PATH (go install ./cmd/switchboard), or run again with --command PATH")
	}
}

// onPath reports whether the shell of a git hook run in the command's
// environment finds the executable name: on the command's $PATH, or,
// when name has a slash, the file itself (relative to the working
// directory).
func (a *app) onPath(name string) bool {
	executable := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular() && (runtime.GOOS == "windows" || fi.Mode()&0o111 != 0)
	}
	if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
		return executable(a.inWorkDir(name))
	}
	for _, dir := range filepath.SplitList(a.getenv("PATH")) {
		if !filepath.IsAbs(dir) {
			continue // as exec.LookPath, no relative entry (".")
		}
		if executable(filepath.Join(dir, name)) || runtime.GOOS == "windows" && executable(filepath.Join(dir, name+".exe")) {
			return true
		}
	}
	return false
}

// hasMCPAction reports whether a hook of cfg calls a tool.
func hasMCPAction(cfg *config.Config) bool {
	for _, h := range cfg.Hooks.List {
		for _, a := range h.Actions {
			if a.Type == config.HookActionMCP {
				return true
			}
		}
	}
	return false
}
