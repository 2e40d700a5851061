package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// newConfigTrustCmd is `switchboard config trust [FILE]`.
func newConfigTrustCmd(a *app) *cobra.Command {
	var yes, status bool
	cmd := &cobra.Command{
		Use:   "trust [FILE]",
		Short: "Trust a client's configuration file so that it may run the commands it names",
		Long: `Show what a configuration file would run once trusted — its servers, and the commands
beyond the default allowlist (npx, uvx, docker) — ask for confirmation (or take --yes),
and record the file's SHA-256 in the state directory. A trusted client's file (Claude
Desktop, Cursor, VS Code, ...) may then run any command it names, never through a shell;
its hooks run too. Any edit to the file needs trust again.

A native switchboard.yaml allows commands with security.allowed_commands instead; trusting
it only lets its hooks run. --status prints what is known about the file's trust and
changes nothing. Without FILE, the configuration the command would use (--config, else
./switchboard.yaml, else the user config dir).`,
		Example: `  switchboard config trust .cursor/mcp.json
  switchboard config trust ~/.config/Claude/claude_desktop_config.json --yes
  switchboard config trust --status .vscode/mcp.json --json`,
		ValidArgsFunction: onlyFirst(completeFiles("json", "yaml", "yml", "toml")),
		RunE: func(cmd *cobra.Command, args []string) error {
			if status && yes {
				return usagef("give --status or --yes, not both")
			}
			file, err := a.trustTarget(args)
			if err != nil {
				return err
			}
			if status {
				return a.trustStatus(file)
			}
			return a.configTrust(cmd.Context(), file, yes)
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "trust without asking (after reviewing the file yourself)")
	cmd.Flags().BoolVar(&status, "status", false, "print the file's trust (state, when, SHA-256, whose file it is) and change nothing")
	return cmd
}

// trustTarget is the file `config trust` is about: FILE, else the
// configuration the command would use.
func (a *app) trustTarget(args []string) (string, error) {
	if len(args) > 1 {
		return "", usagef("usage: switchboard config trust [FILE] [--yes | --status]")
	}
	if len(args) == 1 {
		return args[0], nil
	}
	file, err := a.configSource()
	if err != nil {
		return "", err
	}
	if file == "" {
		return "", usagef("no configuration file found to trust; give its path: switchboard config trust FILE")
	}
	return file, nil
}

// trustJSON is the file's trust as --json prints it.
type trustJSON struct {
	Path      string     `json:"path"`
	State     string     `json:"state"`
	TrustedAt *time.Time `json:"trusted_at"`
	SHA256    string     `json:"sha256,omitempty"`
	// Client names the client whose user file it is ("" for any other
	// file): such a file may be trusted at first use.
	Client string `json:"client"`
	// Native is true for a switchboard.yaml, whose commands are governed
	// by security.allowed_commands (trust lets its hooks run).
	Native bool `json:"native"`
}

func trustJSONOf(st config.TrustStatus) trustJSON {
	out := trustJSON{Path: st.Path, State: string(st.State), Client: st.Client, Native: st.Native}
	if st.Record != nil {
		at := st.Record.TrustedAt
		out.TrustedAt = &at
		out.SHA256 = st.Record.SHA256
	}
	return out
}

// trustStatus prints what is known about the trust of file.
func (a *app) trustStatus(file string) error {
	dir, err := a.stateDirectory()
	if err != nil {
		return err
	}
	st, err := config.FileTrustStatus(dir, file, a.lookupEnv)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(trustJSONOf(st))
	}
	fmt.Fprintf(a.stdout, "%s: %s", st.Path, st.State)
	if st.Record != nil {
		fmt.Fprintf(a.stdout, " (trusted %s, sha256 %s)", st.Record.TrustedAt.Local().Format("2006-01-02 15:04"), st.Record.SHA256[:12])
	}
	fmt.Fprintln(a.stdout)
	switch {
	case st.Native:
		fmt.Fprintln(a.stdout, "a native switchboard.yaml: its commands are allowed by security.allowed_commands; trust lets its hooks run")
	case st.Client != "":
		fmt.Fprintf(a.stdout, "your %s configuration: a command on a terminal asks once before running what it names\n", st.Client)
	}
	if st.State != config.Trusted {
		fmt.Fprintf(a.stdout, "to trust it: %s\n", a.trustCommand(st.Path))
	}
	return nil
}

// trustCommand is the command that trusts the file at path, as this
// command's reader can run it: config trust asks on a terminal, and
// without one it refuses unless given --yes.
func (a *app) trustCommand(path string) string {
	if a.terminalAsker() == nil {
		return config.TrustCommand(path) + " --yes"
	}
	return config.TrustCommand(path)
}

// configTrust shows what file would run once trusted, asks, and records
// the trust.
func (a *app) configTrust(ctx context.Context, file string, yes bool) error {
	dir, err := a.stateDirectory()
	if err != nil {
		return err
	}
	st, err := config.FileTrustStatus(dir, file, a.lookupEnv)
	if err != nil {
		return err
	}
	cfg, unset, err := a.trustPreview(file)
	if err != nil {
		return err
	}
	beyond := commandsBeyondAllowlist(cfg)
	if st.State == config.Trusted {
		if a.json {
			return a.printJSON(trustJSONOf(st))
		}
		fmt.Fprintf(a.stdout, "%s is already trusted as it is now (since %s, sha256 %s)\n", st.Path, st.Record.TrustedAt.Local().Format("2006-01-02 15:04"), st.Record.SHA256)
		return nil
	}
	// What the person is about to trust, on stderr with --json so that
	// stdout stays one JSON value.
	w := a.stdout
	if a.json {
		w = a.stderr
	}
	what := fmt.Sprintf("%s format", cfg.Format)
	if st.Client != "" {
		what += "; your " + st.Client + " configuration"
	}
	if st.State == config.Changed {
		what += fmt.Sprintf("; changed since you trusted it on %s", st.Record.TrustedAt.Local().Format("2006-01-02 15:04"))
	}
	fmt.Fprintf(w, "%s (%s)\n", st.Path, what)
	if len(cfg.Servers) == 0 {
		fmt.Fprintln(w, "servers: none")
	} else {
		fmt.Fprintln(w, "servers:")
		t := a.newTableTo(w, "  NAME", "TRANSPORT", "RUNS").keepWhole(0)
		// Redacted: an argument or URL may carry a secret.
		for _, s := range cfg.Redacted().Servers {
			t.row("  "+s.Name, string(s.Transport), serverTarget(s))
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	if n := len(cfg.Hooks.List); n > 0 {
		fmt.Fprintf(w, "hooks: %d, on %s\n", n, strings.Join(hookEvents(cfg.Hooks.List), ", "))
	}
	if len(unset) > 0 {
		fmt.Fprintf(w, "(not set here, shown as ${NAME}: %s; set them where the servers run)\n", strings.Join(unset, ", "))
	}
	switch {
	case st.Native:
		fmt.Fprintln(w, "This is a native switchboard.yaml: its commands are allowed by security.allowed_commands, not by trust. Trusting it lets its hooks run.")
	case len(beyond) == 0:
		fmt.Fprintln(w, "It runs nothing beyond the default allowlist (npx, uvx, docker); trusting it lets its hooks run.")
	default:
		fmt.Fprintf(w, "Once trusted it also runs, beyond the default allowlist (npx, uvx, docker): %s\n", strings.Join(beyond, ", "))
	}
	if !yes {
		q := a.terminalAsker()
		if q == nil {
			return fault.New(fault.Validation, "%s was not trusted: there is no terminal to confirm on", st.Path).
				WithSuggestions("review the servers above, then run: " + config.TrustCommand(st.Path) + " --yes")
		}
		ok, err := q.confirm(fmt.Sprintf("Trust %s? Its SHA-256 is recorded; any change needs trust again.", st.Path))
		if err != nil {
			return fmt.Errorf("asking whether to trust %s: %w", st.Path, err)
		}
		if !ok {
			fmt.Fprintln(a.stderr, "not trusted; nothing was recorded")
			if err := a.recordTrustRefused(cfg, st.Path); err != nil {
				return err
			}
			return &exitError{ExitFailure}
		}
	}
	rec, err := config.Trust(dir, file)
	if err != nil {
		return err
	}
	if err := a.recordTrust(cfg, rec); err != nil {
		return err
	}
	if a.json {
		st.State, st.Record = config.Trusted, &rec
		if err := a.printJSON(trustJSONOf(st)); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(a.stdout, "trusted %s\n  sha256 %s\n", rec.Path, rec.SHA256)
		if st.Native {
			fmt.Fprintln(a.stdout, "its hooks run until it changes")
		} else {
			fmt.Fprintln(a.stdout, "it may run the commands it names, and its hooks run, until it changes")
		}
	}
	a.reloadAfterTrust(ctx, rec.Path)
	return nil
}

// reloadAfterTrust makes a daemon that serves the file just trusted
// reload it, so that its hooks (and, for a client's file, its commands)
// run there at once: the daemon weighs trust when it loads the file, and
// until then went on treating it as untrusted while hooks list said ok.
// What happened is said on stderr; a failed reload says how to retry.
func (a *app) reloadAfterTrust(ctx context.Context, file string) {
	c, _ := a.daemonFor(ctx, file, false)
	if c == nil {
		return
	}
	defer c.Close()
	st, err := c.Status(ctx)
	if err != nil {
		st.PID = 0
	}
	if _, err := c.Reload(ctx); err != nil {
		fmt.Fprintf(a.stderr, "switchboard: the running daemon (pid %d) did not reload %s: %v; run switchboard reload once it is fixed\n", st.PID, file, err)
		return
	}
	fmt.Fprintf(a.stderr, "the running daemon (pid %d) reloaded %s: it uses the trust now\n", st.PID, file)
}

// trustPreview loads file as it would load once trusted. Variables the
// file uses that are not set here (the daemon or the client that runs the
// servers may have them) do not stop it: they are read as "${NAME}" and
// listed in unset.
func (a *app) trustPreview(file string) (*config.Config, []string, error) {
	cfg, err := config.TrustPreview(file, a.configOptions(true))
	var uv *config.UnresolvedVariableError
	if err == nil || !errors.As(err, &uv) {
		return cfg, nil, err
	}
	var unset []string
	opts := a.configOptions(false)
	opts.LookupEnv = func(name string) (string, bool) {
		if v, ok := a.lookupEnv(name); ok {
			return v, true
		}
		if !slices.Contains(unset, name) {
			unset = append(unset, name)
		}
		return "${" + name + "}", true
	}
	cfg2, err2 := config.TrustPreview(file, opts)
	if err2 != nil {
		return nil, nil, err
	}
	slices.Sort(unset)
	return cfg2, unset, nil
}

// commandsBeyondAllowlist lists the commands of cfg's servers that the
// default allowlist would refuse, as "python (server notes)".
func commandsBeyondAllowlist(cfg *config.Config) []string {
	var out []string
	for _, s := range cfg.Servers {
		if s.Command == "" {
			continue
		}
		if config.CheckCommand(s.Command, s.Args, config.DefaultAllowedCommands) != nil {
			out = append(out, fmt.Sprintf("%s (server %s)", s.Command, s.Name))
		}
	}
	return out
}

// serverTarget is what a server runs or reaches, for a person.
func serverTarget(s config.Server) string {
	if s.Command != "" {
		return strings.Join(append([]string{s.Command}, s.Args...), " ")
	}
	return s.URL
}

// hookEvents lists the events (or event patterns) hooks run on, each once,
// in file order.
func hookEvents(hs []config.Hook) []string {
	var out []string
	for _, h := range hs {
		if !slices.Contains(out, h.On) {
			out = append(out, h.On)
		}
	}
	return out
}
