package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/clients"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/daemon"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// newServeCmd is `switchboard serve`, the daemon.
func newServeCmd(a *app) *cobra.Command {
	var listen string
	var stdio bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Connect every configured server, keep it healthy and serve the gateway",
		Long: `The daemon. It connects every enabled server and keeps it healthy (pings, reconnects
after 1 s, 5 s and 15 s, auto-disable after the third failed reconnect), and serves on
gateway.listen (default 127.0.0.1:7777): the gateway, every server as one MCP endpoint
(/mcp and /mcp/VIEW streamable HTTP, /sse and /sse/VIEW SSE), the web console, /healthz, /readyz and
/metrics; and the control API on a unix socket in the state directory, which the other
commands use. At start it prints the endpoints and the snippets to paste into Claude
Desktop, Cursor and VS Code.

SIGINT and SIGTERM stop it gracefully; SIGHUP reloads the configuration (with --stdio
too, which has no control socket for switchboard reload). It logs
warnings to stderr (--log-level changes the level).`,
		Example: `  switchboard serve
  switchboard serve --config ~/switchboard.yaml --listen 127.0.0.1:8080
  switchboard serve --stdio   # for MCP clients that launch their servers as a command`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("serve takes no arguments")
			}
			return a.serve(cmd.Context(), listen, stdio)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "gateway `address` host:port (default gateway.listen, 127.0.0.1:7777)")
	cmd.Flags().BoolVar(&stdio, "stdio", false, "serve one MCP client over stdin/stdout instead of listening (for clients that launch servers as a command)")
	return cmd
}

// serve is the daemon: it connects every enabled server and keeps it
// healthy, serves the gateway (/mcp, /sse), /healthz, /readyz and /metrics
// on the listen address and the control API on a unix socket, until
// SIGINT or SIGTERM; SIGHUP reloads the configuration. With stdio it
// serves one MCP client on stdin/stdout instead of listening.
func (a *app) serve(ctx context.Context, listen string, stdio bool) error {
	a.defaultLog = "warn" // the daemon's logs are its outcome
	a.serveStdio = stdio
	// In stdio mode stdin is the MCP stream: nobody can be asked.
	a.noPrompt = a.noPrompt || stdio
	if listen != "" {
		if msg, fix := config.ListenProblem(listen); msg != "" {
			return usagef("--listen: %s; %s", msg, fix)
		}
	}
	if !stdio {
		// Before anything is printed or started: a second serve on the
		// same state directory only says who is already there.
		if err := a.refuseRunningDaemon(ctx); err != nil {
			return err
		}
	}
	cfg, err := a.loadServeConfig(listen)
	if err != nil {
		return err
	}
	// Reloads have no one to ask: a file that needs trust, or an input's
	// value, gets it from the trust records and the secret store.
	a.noPrompt = true
	if err := cfg.Gateway.CheckExposure(); err != nil {
		return err
	}
	stateDir, err := a.stateDirectory()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return fmt.Errorf("creating the state directory: %w", err)
	}
	st, err := a.openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()

	// In stdio mode stdout is the MCP stream: everything human goes to
	// stderr.
	out := a.stdout
	if stdio {
		out = a.stderr
	}
	var load func() (*config.Config, error)
	if cfg.Source != "" {
		override := listen
		// A reload has no one to ask: a file that needs trust or an
		// input's value gets it from the records and the secret store.
		load = func() (*config.Config, error) { return a.loadServeConfig(override) }
	}
	// The console's edits are checked, and a file it creates is loaded,
	// as this command loads files: in its environment and working
	// directory, with the state directory's trust records and secrets.
	cfgOpts := a.configOptions(false)
	cfgOpts.Listen = listen
	d, err := daemon.New(daemon.Options{
		Config:        cfg,
		Load:          load,
		ConfigOptions: cfgOpts,
		Store:         st,
		StateDir:      stateDir,
		Logger:        a.logger(),
		Out:           out,
		DialOptions: func(server string, o *upstream.DialOptions) {
			o.NewTransport = a.emb.transport(server)
		},
		Version:     currentBuild().Version,
		NoControl:   stdio,
		AuditStdout: out, // audit.file "-": never the MCP stream
	})
	if err != nil {
		return err
	}

	src := cfg.Source
	if src == "" {
		src = "the embedded default (no switchboard.yaml found): the built-in task server, its task API on " + a.emb.settings.BackendURL
	}
	fmt.Fprintf(out, "switchboard %s: configuration from %s\n", currentBuild().Version, src)
	if len(cfg.Servers) == 0 {
		fmt.Fprintln(out, "No servers are configured yet, so the gateway's catalog is empty.")
		fmt.Fprintln(out, "Add servers to switchboard.yaml (docs/configuration.md) or import your Claude Desktop / Cursor file:")
		fmt.Fprintln(out, "  switchboard config import ~/.config/Claude/claude_desktop_config.json -o switchboard.yaml")
	}

	daemon.TuneGC()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer daemon.GovernProcs(ctx, a.logger())()
	// SIGHUP reloads serve --stdio too: it has no control socket, so
	// switchboard reload does not reach it.
	defer reloadOnHUP(ctx, d, out)()
	if stdio {
		fmt.Fprintf(out, "serving MCP on stdin/stdout for %d server(s)\n", len(cfg.Servers))
		return d.RunStdio(ctx, &mcp.StdioTransport{})
	}

	if err := d.Listen(); err != nil {
		return err
	}
	exe, args, _ := a.stdioCommand(gateway{source: control.AbsSource(cfg.Source)})
	printEndpoints(out, d.Addr(), cfg, exe, args)
	err = d.Run(ctx)
	fmt.Fprintln(out, "stopped; every server was closed")
	return err
}

// reloadOnHUP reloads d on every SIGHUP until ctx is done or the
// returned func, which waits for a reload under way, stops it. A reload
// refused is said on out.
func reloadOnHUP(ctx context.Context, d *daemon.Daemon, out io.Writer) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if _, err := d.Reload(ctx); err != nil {
					fmt.Fprintf(out, "reload refused; the running configuration is unchanged: %s\n", oneLine(err))
				}
			}
		}
	})
	return func() {
		signal.Stop(hup)
		cancel()
		wg.Wait()
	}
}

// refuseRunningDaemon returns an error when a daemon answers on this
// state directory's control socket, naming its pid, what it serves and
// where. (Listen checks again, for two serves started at once.)
func (a *app) refuseRunningDaemon(ctx context.Context) error {
	path, err := a.socketPath()
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	c := control.Dial(path)
	defer c.Close()
	pctx, cancel := context.WithTimeout(ctx, daemonProbe)
	defer cancel()
	st, err := c.Status(pctx)
	if err != nil {
		return nil // a stale socket: Listen replaces it
	}
	what := st.ConfigSource
	if what == "" {
		what = "the embedded default"
	}
	where := ""
	if st.Address != "" {
		base, _ := clientAddr(st.Address)
		where = fmt.Sprintf(", gateway at http://%s/mcp", base)
	}
	dir, _ := a.stateDirectory()
	return fault.New(fault.Config, "a switchboard daemon (pid %d) is already running on the state directory %s, serving %s%s", st.PID, dir, what, where).
		WithSuggestions("use it (every command talks to it), stop it first (kill -INT " + fmt.Sprint(st.PID) + "), or give this one another --state-dir")
}

// loadServeConfig loads the configuration as loadConfig does, with
// listen, when not empty, in place of gateway.listen before the file is
// validated: a file that listens on 0.0.0.0 without tokens serves with
// --listen 127.0.0.1:7777.
func (a *app) loadServeConfig(listen string) (*config.Config, error) {
	path := ""
	if listen != "" && !a.adhoc() {
		p, err := a.configSource()
		if err != nil {
			return nil, err
		}
		path = p
	}
	if path != "" {
		opts := a.configOptions(true)
		opts.Listen = listen
		return config.Load(path, opts)
	}
	cfg, err := a.loadConfig()
	if err != nil && a.serveStdio && !a.adhoc() {
		cfg, err = a.loadWithoutTokens(err)
	}
	if err == nil && listen != "" {
		cfg.Gateway.Listen = listen
	}
	return cfg, err
}

// loadWithoutTokens loads the configuration for serve --stdio when the
// only problem was gateway tokens whose token_env is not set (err):
// the client that started serve --stdio is served without a token (as
// client connect says), and a client's environment rarely has the
// daemon's token variables. The tokens are dropped, never given a value.
func (a *app) loadWithoutTokens(err error) (*config.Config, error) {
	var ve *config.ValidationError
	if !errors.As(err, &ve) {
		return nil, err
	}
	tokenVars := map[string]bool{}
	for _, p := range ve.Problems {
		var unset *config.UnresolvedVariableError
		if !errors.As(p.Err, &unset) || !strings.HasPrefix(unset.Field, "gateway.tokens[") {
			return nil, err
		}
		tokenVars[unset.Variable] = true
	}
	path, ferr := a.configSource()
	if ferr != nil || path == "" {
		return nil, err
	}
	opts := a.configOptions(true)
	opts.LookupEnv = func(name string) (string, bool) {
		if v, ok := a.lookupEnv(name); ok {
			return v, true
		}
		if tokenVars[name] {
			// Unique per variable (two tokens with one value are refused);
			// dropped below, never accepted.
			return "unset-for-serve-stdio-" + name, true
		}
		return "", false
	}
	cfg, lerr := config.Load(path, opts)
	if lerr != nil {
		return nil, err
	}
	cfg.Gateway.Tokens = nil
	return cfg, nil
}

// clientAddr returns the address a client on this machine uses to reach
// a listener on addr, and whether addr is a wildcard (every interface),
// which other machines reach through this host's name or IP address
// instead. A wildcard host (0.0.0.0, ::, none) cannot be dialled
// portably, so it is shown as 127.0.0.1, which the gateway's Host check
// always accepts.
func clientAddr(addr string) (string, bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, false
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return addr, false
	}
	return net.JoinHostPort("127.0.0.1", port), true
}

// printEndpoints says what the daemon serves and how to connect a client:
// the gateway's URL, and for clients that only launch commands, exe with
// args (this binary, serving this configuration on stdio).
func printEndpoints(w interface{ Write([]byte) (int, error) }, addr string, cfg *config.Config, exe string, args []string) {
	addr, wildcard := clientAddr(addr)
	base := "http://" + addr
	fmt.Fprintf(w, "gateway: %s/mcp (streamable HTTP), %s/sse (SSE)\n", base, base)
	// Each view is served over both transports too: SSE-only clients
	// need its /sse/VIEW.
	for _, v := range cfg.Gateway.Views {
		fmt.Fprintf(w, "view %s: %s/mcp/%s (streamable HTTP), %s/sse/%s (SSE)\n", v.Name, base, v.Name, base, v.Name)
	}
	fmt.Fprintf(w, "web console: %s/\n", base)
	fmt.Fprintf(w, "health: %s/healthz, %s/readyz; metrics: %s/metrics\n", base, base, base)
	if wildcard {
		fmt.Fprintf(w, "listening on every interface (%s): these addresses are for clients on this machine; other machines use this host's name or IP address instead of 127.0.0.1 (one of gateway.allowed_hosts, when that is set)\n", cfg.Gateway.Listen)
	}
	auth := ""
	if len(cfg.Gateway.Tokens) > 0 {
		auth = ` (add "headers": {"Authorization": "Bearer <token>"})`
	}
	if o := cfg.Gateway.OAuth; o != nil {
		fmt.Fprintf(w, "sign-in: OAuth access tokens from %s for %s; clients that support MCP authorization sign in on their own (metadata: %s/.well-known/oauth-protected-resource/mcp)\n",
			o.Issuer, o.Resource, strings.TrimSuffix(o.Resource, "/"))
		if len(cfg.Gateway.Tokens) == 0 {
			auth = " (the client signs in with OAuth; one that cannot needs a token from gateway.tokens)"
		}
	}
	snippet, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"switchboard": map[string]any{"type": "http", "url": base + "/mcp"}}})
	// Claude Desktop only launches commands (client connect writes it the
	// command below): its snippet is that one, not the URL.
	fmt.Fprintf(w, "Cursor / Claude Code (mcpServers)%s:\n  %s\n", auth, snippet)
	vs, _ := json.Marshal(map[string]any{"servers": map[string]any{"switchboard": map[string]any{"type": "http", "url": base + "/mcp"}}})
	fmt.Fprintf(w, "VS Code (.vscode/mcp.json):\n  %s\n", vs)
	type launch struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	cmd, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"switchboard": launch{exe, args}}})
	fmt.Fprintf(w, "Claude Desktop and other clients that only launch commands:\n  %s\n", cmd)
	fmt.Fprintf(w, "or let switchboard write a client's entry: switchboard client connect CLIENT (%s)\n", strings.Join(clients.IDs(), ", "))
	fmt.Fprintf(w, "supervising %d server(s); press Ctrl-C to stop\n", len(cfg.Servers))
}
