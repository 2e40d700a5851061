package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// newAuthCmd is `switchboard auth`: login, status and logout for servers
// that require OAuth 2.1 sign-in.
func newAuthCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Sign in to servers that require OAuth (login, status, logout)",
		Long: `Sign in to the upstream servers that require OAuth 2.1 (most hosted MCP servers), see
whose sign-ins are stored, and sign out. Tokens are kept encrypted in the state directory;
a running daemon picks up a new sign-in within a second. See docs/auth.md.`,
		Example: `  switchboard auth login linear
  switchboard auth status
  switchboard auth logout linear`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			_ = cmd.Help()
			return &exitError{ExitUsage}
		},
	}
	var user string
	var noBrowser bool
	login := &cobra.Command{
		Use:   "login [SERVER | --url URL]",
		Short: "Sign in to a server in the browser",
		Long: `Sign in to a configured server: Switchboard discovers its authorization server, registers
itself there if it must, listens for the redirect on 127.0.0.1, prints the sign-in URL and
opens it in the browser ($BROWSER, else the platform's opener). For a server configured with
oauth.grant: client_credentials it gets a token for itself, without a browser. With auth:
per_user, --user signs that gateway user in.`,
		Example: `  switchboard auth login linear
  switchboard auth login linear --no-browser
  switchboard auth login tools --user alice
  switchboard auth login --url https://mcp.example.com/mcp`,
		ValidArgsFunction: onlyFirst(a.completeNetworkServer),
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.url != "" && len(args) == 0 {
				args = []string{config.AdHocName}
			}
			if len(args) != 1 || (a.url != "" && args[0] != config.AdHocName) {
				return usagef("usage: switchboard auth login SERVER [--user USER] [--no-browser], or switchboard auth login --url URL")
			}
			return a.authLogin(cmd.Context(), args[0], user, noBrowser)
		},
	}
	login.Flags().StringVar(&user, "user", "", "sign in this gateway `user` (for a server with auth: per_user)")
	login.Flags().StringVar(&a.url, "url", "", "sign in to the ad hoc network server at `URL` (as tools --url uses it)")
	login.Flags().BoolVar(&noBrowser, "no-browser", false, "only print the sign-in URL (for a machine without a browser)")

	status := &cobra.Command{
		Use:   "status",
		Short: "List the stored sign-ins: whom, scopes, expiry",
		Long: `List the sign-ins of the configured servers that use OAuth and of every stored sign-in:
its state (signed_in, needs_auth, not_signed_in), whom it is for when the authorization
server said, the scopes, when the access token expires, whether it can be refreshed, and
the command to run when it needs a sign-in. Exits 1 if any needs one.`,
		Example: `  switchboard auth status
  switchboard auth status --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("auth status takes no arguments")
			}
			return a.authStatus()
		},
	}

	var logoutUser string
	logout := &cobra.Command{
		Use:   "logout SERVER",
		Short: "Revoke and forget a server's sign-in",
		Long: `Revoke the stored refresh and access tokens where the authorization server offers
revocation (RFC 7009), and forget them. Without revocation the access token stays valid
until it expires; the command says so.`,
		Example: `  switchboard auth logout linear
  switchboard auth logout tools --user alice`,
		ValidArgsFunction: onlyFirst(a.completeNetworkServer),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("usage: switchboard auth logout SERVER [--user USER]")
			}
			return a.authLogout(cmd.Context(), args[0], logoutUser)
		},
	}
	logout.Flags().StringVar(&logoutUser, "user", "", "sign out this gateway `user` (for a server with auth: per_user)")
	cmd.AddCommand(login, status, logout)
	return cmd
}

// oauthManager returns the manager of the sign-ins in the state directory.
func (a *app) oauthManager() (*oauth.Manager, error) {
	dir, err := a.stateDirectory()
	if err != nil {
		return nil, err
	}
	opts := oauth.Options{StateDir: dir, Logger: a.logger(), OpenBrowser: oauth.BrowserOpener(a.lookupEnv)}
	if a.url != "" {
		u := a.url
		opts.LoginCommand = func(string, string) string { return "switchboard auth login --url " + shellQuote(u) }
	}
	return oauth.New(opts)
}

// authServer returns the configured network server name.
func (a *app) authServer(name, user string) (config.Server, error) {
	cfg, err := a.loadConfig()
	if err != nil {
		return config.Server{}, err
	}
	srv, ok := cfg.Server(name)
	if !ok {
		return config.Server{}, upstream.UnknownServer(cfg, name)
	}
	if srv.Transport == config.TransportStdio || srv.Transport == "" {
		return config.Server{}, fault.New(fault.Validation, "server %s is a stdio server: it runs on this machine and has no sign-in", name).
			WithSuggestions("OAuth sign-in is for network servers (transport http, sse or websocket)")
	}
	if user != "" && srv.Auth != config.AuthPerUser {
		return config.Server{}, fault.New(fault.Validation, "server %s has one shared sign-in, so --user does not apply", name).
			WithSuggestions(fmt.Sprintf("set auth: per_user on %s for each gateway user to sign in, or leave out --user", name))
	}
	return srv, nil
}

func (a *app) authLogin(ctx context.Context, name, user string, noBrowser bool) error {
	srv, err := a.authServer(name, user)
	if err != nil {
		return err
	}
	m, err := a.oauthManager()
	if err != nil {
		return err
	}
	var out io.Writer = a.stdout
	if a.json {
		out = a.stderr
	}
	st, err := m.Login(ctx, upstream.OAuthServer(srv), oauth.LoginOptions{User: user, Out: out, NoBrowser: noBrowser})
	if aerr := a.recordSignIn(audit.SignIn, name, user, err); aerr != nil && err == nil {
		return aerr
	}
	if err != nil {
		if ctx.Err() != nil {
			// Interrupted (Ctrl-C, SIGTERM): the sign-in stopped before
			// any token was stored, so what was stored before still is.
			return fault.Wrap(fault.Cancelled, err, "the sign-in to %s was interrupted: nothing was saved, and any earlier sign-in is unchanged", name).
				WithSuggestions("run it again to sign in: " + m.LoginCommand(name, user))
		}
		return signInFault(err, name, m.LoginCommand(name, user))
	}
	if a.json {
		return a.printJSON(st)
	}
	return nil
}

// signInFault is a failed sign-in as the CLI shows it: what failed, and
// the command that tries again.
func signInFault(err error, server, command string) error {
	if e, ok := oauth.AsNeedsSignIn(err); ok {
		return fault.Wrap(fault.Authentication, err, "%s", e.Error()).WithSuggestions("run: " + e.Command())
	}
	fe := fault.Wrap(fault.Authentication, err, "%s", err.Error()).WithDetail("server", server)
	if !strings.Contains(err.Error(), command) {
		fe.WithSuggestions("fix the cause, then run: " + command)
	}
	return fe
}

func (a *app) authStatus() error {
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	m, err := a.oauthManager()
	if err != nil {
		return err
	}
	stored, storeErr := m.Statuses()
	byServer := map[string][]oauth.Status{}
	for _, st := range stored {
		byServer[st.Server] = append(byServer[st.Server], st)
	}
	var rows []oauth.Status
	seen := map[string]bool{}
	for _, srv := range cfg.Servers {
		if srv.Transport == config.TransportStdio || srv.Transport == "" {
			continue
		}
		recs := byServer[srv.Name]
		if len(recs) == 0 && srv.OAuth == nil && srv.Auth != config.AuthPerUser {
			continue // not known to use OAuth
		}
		seen[srv.Name] = true
		if len(recs) == 0 {
			st, _ := m.Status(upstream.OAuthServer(srv), "")
			rows = append(rows, st)
			continue
		}
		for _, r := range recs {
			// Status again with the configuration: it also checks the URL.
			st, _ := m.Status(upstream.OAuthServer(srv), r.User)
			rows = append(rows, st)
		}
	}
	for _, st := range stored {
		if !seen[st.Server] {
			if st.Problem == "" {
				st.Problem = "the server is no longer configured"
			}
			st.Command = "switchboard auth logout " + st.Server
			if st.User != "" {
				st.Command += " --user " + st.User
			}
			rows = append(rows, st)
		}
	}
	if rows == nil {
		rows = []oauth.Status{}
	}
	if a.json {
		if err := a.printJSON(rows); err != nil {
			return err
		}
	} else if len(rows) == 0 {
		fmt.Fprintln(a.stdout, "No sign-ins are stored, and no configured server has an oauth: block. A server that needs sign-in shows needs_auth in `switchboard servers`; then run `switchboard auth login NAME`.")
	} else {
		t := a.newTable("SERVER", "USER", "STATE", "SIGNED IN AS", "SCOPES", "EXPIRES", "REFRESH", "NOTE").keepWhole(0)
		for _, st := range rows {
			expires := "-"
			if !st.ExpiresAt.IsZero() {
				expires = st.ExpiresAt.Local().Format(time.DateTime)
			}
			refresh := "no"
			if st.Refreshable {
				refresh = "yes"
			}
			note := st.Problem
			// A sign-in that still works needs nothing done, unless its
			// server is gone: then the command forgets it.
			if st.Command != "" && (st.State != oauth.StateSignedIn || !seen[st.Server]) {
				if note != "" {
					note += "; "
				}
				note += "run: " + st.Command
			}
			t.row(st.Server, orDash(st.User), st.State, signedInAs(st), orDash(strings.Join(st.Scopes, " ")), expires, refresh, note)
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	if storeErr != nil {
		fmt.Fprintf(a.stderr, "switchboard: some stored sign-ins could not be read: %v\n", storeErr)
	}
	for _, st := range rows {
		if st.State == oauth.StateNeedsAuth {
			return &exitError{ExitFailure}
		}
	}
	return nil
}

// signedInAs is whom a stored sign-in is for, as auth status shows it:
// "-" without a sign-in, and a note where the authorization server did
// not say whom (it gave no ID token, or one without a name).
func signedInAs(st oauth.Status) string {
	switch {
	case st.Subject != "":
		return st.Subject
	case st.SignedInAt.IsZero():
		return "-"
	}
	return "(not said by the authorization server)"
}

func (a *app) authLogout(ctx context.Context, name, user string) error {
	m, err := a.oauthManager()
	if err != nil {
		return err
	}
	var srv oauth.Server
	if cfg, err := a.loadConfig(); err == nil {
		if s, ok := cfg.Server(name); ok {
			srv = upstream.OAuthServer(s)
		}
	}
	if srv.Name == "" {
		// No longer configured: its stored sign-in can still be revoked.
		srv = oauth.Server{Name: name}
	}
	res, err := m.Logout(ctx, srv, user)
	if aerr := a.recordSignIn(audit.SignOut, name, user, err); aerr != nil && err == nil {
		return aerr
	}
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(res)
	}
	who := name
	if user != "" {
		who += " (user " + user + ")"
	}
	switch {
	case !res.WasSignedIn:
		fmt.Fprintf(a.stdout, "%s was not signed in.\n", who)
	case res.Revoked:
		fmt.Fprintf(a.stdout, "Signed out of %s: the tokens were revoked and forgotten.\n", who)
	default:
		fmt.Fprintf(a.stdout, "Signed out of %s: the tokens were forgotten; %s.\n", who, res.Note)
	}
	return nil
}

// signInAdhoc signs in to an ad hoc --url server that asked for it, when a
// person is at the terminal to do it; it reports whether it did (the
// caller then connects again). Configured servers are left to `auth
// login`, which their needs_auth state names.
func (a *app) signInAdhoc(ctx context.Context, s *session, m *oauth.Manager) bool {
	if a.url == "" || !a.stdinIsTerminal() || !isTerminal(a.stderr) {
		return false
	}
	sup, ok := s.pool.Supervisor(config.AdHocName)
	if !ok || sup.Snapshot().State != upstream.StateNeedsAuth {
		return false
	}
	srv, ok := s.cfg.Server(config.AdHocName)
	if !ok {
		return false
	}
	fmt.Fprintf(a.stderr, "%s asks for sign-in.\n", srv.URL)
	if _, err := m.Login(ctx, upstream.OAuthServer(srv), oauth.LoginOptions{Out: a.stderr}); err != nil {
		fmt.Fprintf(a.stderr, "switchboard: %v\n", err)
		return false
	}
	return true
}

// shellQuote quotes s for a POSIX shell when it needs it, so that a
// suggested command can be pasted as it is.
func shellQuote(s string) string {
	safe := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(":/._-~@+%,=", r))
	}) < 0
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
