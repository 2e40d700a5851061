package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
)

// app is the state shared by a command's run: the global flags, the
// output streams and what the command started.
type app struct {
	stdout, stderr io.Writer
	// cmd is the running command's path after "switchboard" ("call",
	// "hooks fire"), for messages.
	cmd string
	// serveStdio is set by serve --stdio: one client, on stdin/stdout.
	serveStdio bool

	// global flags
	configPath string
	json       bool
	// askedJSON is set when the command line asks for JSON (or YAML),
	// read before cobra parses it: errors are then JSON even when the
	// parse stopped before the flag.
	askedJSON bool
	output    string
	logLevel  string
	stateDir  string

	// ad hoc server flags, on the commands that take them
	stdio string
	url   string

	// defaultLog is the log level of a command whose logs are its outcome
	// (serve, builtin); other commands log only with --log-level.
	defaultLog string

	// emb is the running embedded default, when no file was found.
	emb *embedded

	// agentOpenLine says the agent's streamed text has not ended its line.
	agentOpenLine bool

	// termWidth returns the width of w when it is a terminal; tests
	// replace it.
	termWidth func(w io.Writer) (int, bool)

	// stdin is where answers to questions are read (when it and stderr
	// are a terminal), and what call --args - and agent -i read.
	stdin io.Reader
	// env reads the command's environment (see lookupEnv).
	env func(name string) (string, bool)
	// dir is the command's working directory, "" for the process's (see
	// workDir).
	dir string
	// noPrompt says nobody is to be asked anything: a shell completion,
	// serve --stdio (stdin is the MCP stream), the daemon's reloads.
	noPrompt bool
	// ask is the run's asker, once made (terminalAsker).
	ask *asker
	// serverLogs is set by call, which shows its server's log messages:
	// a session it opens itself asks its servers for all of them
	// (session.askForLogs).
	serverLogs bool
}

// adhocFlags registers --stdio and --url, which replace the configuration
// with one ad hoc server, on cmd.
func (a *app) adhocFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&a.stdio, "stdio", "", "use one ad hoc stdio server: `\"CMD ARGS\"` (not held to the allowlist)")
	cmd.Flags().StringVar(&a.url, "url", "", "use one ad hoc network server at `URL` (http(s)://… streamable HTTP, …/sse SSE, ws(s):// WebSocket)")
}

// adhoc reports whether --stdio or --url replaces the configuration.
func (a *app) adhoc() bool { return a.stdio != "" || a.url != "" }

// adhocTarget is the --stdio or --url flag that named the ad hoc server,
// quoted for a shell, for a command a person is told to run next.
func (a *app) adhocTarget() string {
	if a.stdio != "" {
		return "--stdio " + shellQuote(a.stdio)
	}
	return "--url " + shellQuote(a.url)
}

// logger returns the stderr logger: at --log-level when given, else at
// the command's default level (serve and builtin log warnings), else a
// logger that discards, so that no log line mixes into a command's output.
func (a *app) logger() *slog.Logger {
	level := a.logLevel
	if level == "" {
		level = a.defaultLog
	}
	if level == "" {
		return slog.New(slog.DiscardHandler)
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		lvl = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: lvl}))
}

// loadConfig loads the configuration: the ad hoc server, the --config
// file, the file found in the usual places, or the embedded default (the
// built-in servers, started for the length of the command).
func (a *app) loadConfig() (*config.Config, error) {
	if a.stdio != "" && a.url != "" {
		return nil, usagef("give --stdio or --url, not both")
	}
	if a.adhoc() {
		cfg := config.Default()
		srv, err := config.AdHoc(a.stdio, a.url, cfg.Defaults)
		if err != nil {
			return nil, &usageError{err.Error()}
		}
		cfg.Servers = []config.Server{srv}
		return cfg, nil
	}
	path := a.configPath
	if path == "" {
		p, err := a.findConfig()
		if err != nil {
			return nil, err
		}
		path = a.daemonConfigInstead(p)
	}
	if path == "" {
		if a.emb == nil {
			e, err := a.startEmbedded(context.Background())
			if err != nil {
				return nil, err
			}
			a.emb = e
		}
		return a.emb.cfg, nil
	}
	cfg, err := config.Load(path, a.configOptions(true))
	var unset *config.UnresolvedVariableError
	if (err != nil && errors.As(err, &unset) || err == nil && unsetInServers(cfg)) && a.cmd != "serve" {
		// A daemon that serves this file has the variables it refers to
		// (token_env, ${VAR}) in its own environment, and the command will
		// ask the daemon: the caller's shell need not have them. The file
		// is read again with a stand-in for each unset variable, only to
		// know its servers and views; nothing runs on the stand-ins. (In
		// a client's file an unset variable does not refuse the file but
		// keeps its server from starting: here too, the daemon has it.)
		// Never for serve: the daemon itself (whose reload would find
		// itself serving the file) and serve --stdio run what they load,
		// and a stand-in token would be a token anyone can guess.
		if c, _ := a.daemonFor(context.Background(), path, false); c != nil {
			c.Close()
			opts := a.configOptions(false)
			opts.LookupEnv = a.envOrStandIn
			if cfg2, err2 := config.Load(path, opts); err2 == nil {
				return cfg2, nil
			}
		}
	}
	return cfg, err
}

// unsetInServers reports whether a server of cfg cannot start because
// a variable it uses is not set (config.UnsetVariable).
func unsetInServers(cfg *config.Config) bool {
	return slices.ContainsFunc(cfg.Servers, func(s config.Server) bool {
		return slices.ContainsFunc(s.CannotStart, config.UnsetVariable)
	})
}

// daemonConfigInstead returns the configuration a command without
// --config uses: the one the running daemon serves, when a daemon runs on
// this state directory (so that the command answers from it, as it says
// on stderr when that is not the file it would have found), else found.
// serve itself never follows a daemon, nor does config validate, which
// checks the file found (the one an edit, serve or reload is about).
func (a *app) daemonConfigInstead(found string) string {
	if a.cmd == "serve" || a.cmd == "config validate" {
		return found
	}
	c, st := a.daemonFor(context.Background(), "", true)
	if c == nil {
		return found
	}
	c.Close()
	if st.ConfigSource == control.AbsSource(found) {
		return found
	}
	if !a.noPrompt {
		what := st.ConfigSource
		if what == "" {
			what = "the embedded default"
		}
		instead := "the embedded default"
		if found != "" {
			instead = control.AbsSource(found)
		}
		fmt.Fprintf(a.stderr, "note: using the running daemon (pid %d), which serves %s, rather than %s; give --config to choose\n", st.PID, what, instead)
	}
	return st.ConfigSource
}

// unsetStandIn stands for a variable the caller's shell does not set while
// the daemon that serves the file does (see loadConfig).
const unsetStandIn = "set-in-the-daemon-environment"

// envOrStandIn looks name up in the environment, and stands in for it
// when it is not set there: with a value of its own per variable, since
// two token_env variables with one stand-in would be the same token,
// which the configuration refuses. A VS Code input's variable
// (SWITCHBOARD_INPUT_*) gets none: the input's value is then taken from
// the secret store, which the daemon reads too.
func (a *app) envOrStandIn(name string) (string, bool) {
	if v, ok := a.lookupEnv(name); ok {
		return v, true
	}
	if strings.HasPrefix(name, config.InputEnvPrefix) {
		return "", false
	}
	return unsetStandIn + "-" + name, true
}

// stateDirectory returns where Switchboard keeps state between runs.
func (a *app) stateDirectory() (string, error) {
	dir, err := a.stateDirectoryPath()
	if err != nil {
		return "", err
	}
	if err := a.checkStateDir(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// stateDirectoryPath is where the state directory is, by flag, variable
// or default.
func (a *app) stateDirectoryPath() (string, error) {
	if a.stateDir != "" {
		return a.stateDir, nil
	}
	if d := a.getenv("SWITCHBOARD_STATE_DIR"); d != "" {
		return d, nil
	}
	if d := a.getenv("XDG_STATE_HOME"); d != "" {
		return d + "/switchboard", nil
	}
	home, err := a.homeDir()
	if err != nil {
		return "", fmt.Errorf("finding the state directory: %w; set SWITCHBOARD_STATE_DIR", err)
	}
	return home + "/.local/state/switchboard", nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
