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
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/hooks"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/vcs"
)

// ExitBlocked is the exit status of `hooks fire` when a hook blocked the
// event (the git pre-push script refuses the push on it).
const ExitBlocked = 3

const hooksUsage = "usage: switchboard hooks list [--connect] | log [--failed] [--limit N] | fire NAME [key=value ...] [--dry-run] | trust [FILE] | install-git [DIR]"

func runHooks(ctx context.Context, a *app, args []string) error {
	sub, rest, ok := subcommand(args)
	if !ok {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintln(a.stdout, hooksUsage)
			return nil
		}
		return usagef("%s", hooksUsage)
	}
	switch sub {
	case "list":
		return a.hooksList(ctx, rest)
	case "log":
		return a.hooksLog(ctx, rest)
	case "fire":
		return a.hooksFire(ctx, rest)
	case "trust":
		return a.hooksTrust(rest)
	case "install-git":
		return a.hooksInstallGit(rest)
	}
	return usagef("unknown hooks command %q; %s", sub, hooksUsage)
}

// hooksList prints every hook with its validity and trust. It exits 1
// when a hook is invalid.
func (a *app) hooksList(ctx context.Context, args []string) error {
	fs := a.flags("hooks list", false)
	connect := fs.Bool("connect", false, "connect to the servers to check mcp mappings against their tool schemas")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("usage: switchboard hooks list [--connect] [--json]")
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	dir, err := a.stateDirectory()
	if err != nil {
		return err
	}
	opts := hooks.Options{Config: cfg, StateDir: dir, Logger: a.logger()}
	if *connect {
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
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tON\tPRIORITY\tSTATE\tACTIONS\tSOURCE")
		for _, h := range list {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", h.Name, h.On, h.Priority, hookState(h), strings.Join(h.Actions, ", "), h.Source)
		}
		tw.Flush()
		for _, h := range list {
			for _, p := range h.Problems {
				fmt.Fprintf(a.stdout, "  %s: %s\n", h.Name, p)
			}
		}
		if list[0].Trust != hooks.Trusted {
			fmt.Fprintf(a.stdout, "these hooks do not run until you trust %s: switchboard hooks trust\n", cfg.Source)
		}
		if !*connect && hasMCPAction(cfg) {
			fmt.Fprintln(a.stdout, "mcp mappings were not checked against the tools' schemas; to check them: switchboard hooks list --connect")
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
func (a *app) hooksLog(ctx context.Context, args []string) error {
	fs := a.flags("hooks log", false)
	var f store.HookRunFilter
	fs.BoolVar(&f.Failed, "failed", false, "only runs that failed, timed out, were rejected or blocked")
	fs.StringVar(&f.Hook, "hook", "", "only runs of this `hook`")
	fs.StringVar(&f.Event, "event", "", "only runs for this `event`")
	fs.IntVar(&f.Limit, "limit", 50, "at most `n` runs, newest first")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || f.Limit <= 0 {
		return usagef("usage: switchboard hooks log [--failed] [--hook NAME] [--event NAME] [--limit N] [--json]")
	}
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
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tEVENT\tHOOK\tACTION\tSTATUS\tDURATION\tERROR")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.StartedAt.Local().Format("2006-01-02 15:04:05"), r.Event, r.Hook,
			orDash(r.Action), r.Status, r.Duration.Round(time.Millisecond), oneLineText(r.Error, 80))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLineText folds s to one line of at most n bytes.
func oneLineText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
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
func (a *app) hooksFire(ctx context.Context, args []string) error {
	fs := a.flags("hooks fire", false)
	dry := fs.Bool("dry-run", false, "print the resolved parameters of every action that would run, without running them")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("usage: switchboard hooks fire NAME [key=value ...] [--dry-run] [--json]")
	}
	name := pos[0]
	if !config.EventNamePattern.MatchString(name) {
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
	ctx = hooks.ContextFromEnv(ctx, os.Getenv)
	var rep hooks.Report
	handled := false
	if !*dry && os.Getenv(hooks.EnvChainID) == "" {
		rep, handled, err = a.fireOnDaemon(ctx, cfg, name, fields)
		if err != nil {
			return err
		}
	}
	if !handled {
		rep, err = a.fireHere(ctx, cfg, name, fields, *dry)
		if err != nil {
			return err
		}
	}
	if a.json {
		if err := a.printJSON(rep); err != nil {
			return err
		}
	} else {
		a.printReport(rep, *dry)
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

// printReport prints a report for a person.
func (a *app) printReport(rep hooks.Report, dry bool) {
	if len(rep.Runs) == 0 {
		fmt.Fprintf(a.stdout, "no hook ran for %s\n", rep.Event)
		return
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	if dry {
		fmt.Fprintln(tw, "HOOK\tACTION\tSTATUS\tPARAMETERS")
		for _, r := range rep.Runs {
			p, _ := json.Marshal(r.Params)
			detail := string(p)
			if r.Error != "" {
				detail = r.Error
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Hook, orDash(r.Action), r.Status, detail)
		}
		tw.Flush()
		return
	}
	fmt.Fprintln(tw, "HOOK\tACTION\tSTATUS\tDURATION\tERROR")
	for _, r := range rep.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Hook, orDash(r.Action), r.Status, r.Duration.Round(time.Millisecond), oneLineText(r.Error, 100))
	}
	tw.Flush()
	if rep.Blocked {
		fmt.Fprintf(a.stderr, "blocked by hook %s: %s\n", rep.BlockedBy, rep.Reason)
	}
}

// hooksTrust records the configuration file's hash so that its hooks run.
func (a *app) hooksTrust(args []string) error {
	fs := a.flags("hooks trust", false)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("usage: switchboard hooks trust [FILE]")
	}
	file := a.configPath
	if len(pos) == 1 {
		file = pos[0]
	}
	if file == "" {
		if file, err = config.Find(); err != nil {
			return err
		}
		if file == "" {
			return usagef("no configuration file found to trust; give its path")
		}
	}
	if _, err := config.Load(file, config.Options{}); err != nil {
		return err
	}
	dir, err := a.stateDirectory()
	if err != nil {
		return err
	}
	rec, err := hooks.Trust(dir, file)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(rec)
	}
	fmt.Fprintf(a.stdout, "trusted %s (sha256 %s); its hooks run until it changes\n", rec.Path, rec.SHA256[:12])
	return nil
}

// hooksInstallGit writes the git hook scripts into a repository.
func (a *app) hooksInstallGit(args []string) error {
	fs := a.flags("hooks install-git", false)
	command := fs.String("command", "", "the switchboard `executable` the hooks run (default: switchboard on PATH)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("usage: switchboard hooks install-git [DIR] [--command PATH]")
	}
	dir := "."
	if len(pos) == 1 {
		dir = pos[0]
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	rep, err := vcs.InstallHooks(dir, vcs.InstallOptions{Command: *command})
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
	a.warnHookCommand(*command)
	return nil
}

// warnHookCommand says so when the git hooks will not find the executable
// they run, which would make every hook print a warning and fire nothing.
func (a *app) warnHookCommand(command string) {
	name := command
	if name == "" {
		name = "switchboard"
	}
	if _, err := exec.LookPath(name); err == nil {
		return
	}
	fmt.Fprintf(a.stderr, "switchboard hooks: note: %s is not on PATH, so the git hooks will only warn until it is\n", name)
	if exe, err := os.Executable(); err == nil && !strings.Contains(exe, string(filepath.Separator)+"go-build") {
		fmt.Fprintf(a.stderr, "  hint: install switchboard on PATH, or run again with --command %s\n", exe)
	} else {
		fmt.Fprintln(a.stderr, "  hint: install switchboard on PATH (go install ./cmd/switchboard), or run again with --command PATH")
	}
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
