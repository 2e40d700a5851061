package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/clients"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// gatewayURLFlag is --url given without a value: the gateway's own URL.
const gatewayURLFlag = "gateway"

// clientFlags are the flags of `client connect|disconnect|list`.
type clientFlags struct {
	name   string
	scope  string
	url    string
	stdio  bool
	dryRun bool
	move   bool
}

// clientArg checks the CLIENT argument of client connect and disconnect:
// one, and a client Switchboard knows (a usage error, exit 2, otherwise,
// with the closest name as a suggestion).
func clientArg(args []string, verb string) error {
	ids := clients.IDs()
	if len(args) != 1 {
		return usagef("usage: switchboard client %s CLIENT (one of %s)", verb, strings.Join(ids, ", "))
	}
	if slices.Contains(ids, args[0]) {
		return nil
	}
	if s := suggest.Closest(args[0], ids, 1); len(s) > 0 {
		return usagef("unknown client %q; did you mean %q? (want one of %s)", args[0], s[0], strings.Join(ids, ", "))
	}
	return usagef("unknown client %q; want one of %s", args[0], strings.Join(ids, ", "))
}

// newClientCmd is `switchboard client`, with connect, disconnect and list.
func newClientCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "client",
		Short: "Connect MCP clients (Claude, Cursor, VS Code, ...) to the gateway",
		Long: `Write the gateway's entry into an MCP client's configuration file, remove it, or list
which clients are installed and connected. Clients: ` + strings.Join(clients.IDs(), ", ") + `.
A client that speaks streamable HTTP gets the gateway's URL; one that only launches
commands (Claude Desktop) gets "switchboard serve --stdio --config FILE" with this
binary's absolute path. Only the entry's bytes change: the client's other settings and
comments stay, and a timestamped backup of the file is kept beside it.`,
		Example: `  switchboard client list
  switchboard client connect cursor
  switchboard client connect vscode --scope project --dry-run
  switchboard client connect claude-desktop
  switchboard client disconnect cursor`,
		RunE: subcommandRequired,
	}
	var f clientFlags
	nameFlag := func(c *cobra.Command) {
		c.Flags().StringVar(&f.name, "name", clients.DefaultName, "the entry's `name` in the client's file")
	}
	scopeFlag := func(c *cobra.Command) {
		c.Flags().StringVar(&f.scope, "scope", "", "`user` (the user's own file, the default) or project (the file in the working directory), where the client has both")
		_ = c.RegisterFlagCompletionFunc("scope", fixedCompletion("user", "project"))
	}
	connect := &cobra.Command{
		Use:   "connect CLIENT",
		Short: "Write the gateway's entry into a client's configuration",
		Long: `Write the gateway's entry into the client's configuration file (the user's own, or the
project's with --scope project): the gateway's URL for a client that speaks streamable
HTTP and when the gateway needs no token, else the command "switchboard serve --stdio
--config FILE" (this binary, by its absolute path). --url or --stdio forces the shape;
--url=URL gives another gateway's URL. A second connect that would change nothing says
so and writes nothing. Before a change the file is copied to
FILE.switchboard-backup-TIMESTAMP; the change keeps the file's mode. --dry-run prints the
change as a diff and writes nothing.

The client's other entries that switchboard serves too (by name: those config import
brought over) would run twice, once by the client and once through the gateway: connect
names them, and --move takes them out of the client's file, so that they run once,
through switchboard. They are kept in the state directory (and in the backup), and
client disconnect puts them back.`,
		Example: `  switchboard client connect cursor
  switchboard client connect claude-desktop --move
  switchboard client connect claude-code --scope project
  switchboard client connect zed --stdio
  switchboard client connect windsurf --dry-run`,
		ValidArgsFunction: onlyFirst(fixedCompletion(clients.IDs()...)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := clientArg(args, "connect"); err != nil {
				return err
			}
			return a.clientConnect(cmd.Context(), args[0], f)
		},
	}
	nameFlag(connect)
	scopeFlag(connect)
	connect.Flags().StringVar(&f.url, "url", "", "write the gateway's URL (or, as --url=`URL`, this one)")
	connect.Flags().Lookup("url").NoOptDefVal = gatewayURLFlag
	connect.Flags().BoolVar(&f.stdio, "stdio", false, "write the command that serves the gateway on stdio, even for a client that speaks HTTP")
	connect.Flags().BoolVar(&f.dryRun, "dry-run", false, "print the change as a diff; write nothing")
	connect.Flags().BoolVar(&f.move, "move", false, "take the client's entries that switchboard serves too out of its file (client disconnect puts them back)")

	disconnect := &cobra.Command{
		Use:   "disconnect CLIENT",
		Short: "Remove the gateway's entry from a client's configuration",
		Long: `Remove the entry called --name (switchboard) from the client's configuration file, and
put back the entries connect --move took out of it (unless the file has one of that name
again); nothing else. A backup of the file is kept as connect keeps one.`,
		Example: `  switchboard client disconnect cursor
  switchboard client disconnect vscode --scope project --dry-run`,
		ValidArgsFunction: onlyFirst(fixedCompletion(clients.IDs()...)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := clientArg(args, "disconnect"); err != nil {
				return err
			}
			return a.clientDisconnect(args[0], f)
		},
	}
	nameFlag(disconnect)
	scopeFlag(disconnect)
	disconnect.Flags().BoolVar(&f.dryRun, "dry-run", false, "print the change as a diff; write nothing")

	list := &cobra.Command{
		Use:   "list",
		Short: "List the MCP clients, whether they are installed, and what they are connected to",
		Long: `List every client Switchboard can connect: whether it is installed (its configuration
folder exists), and for its user file (and the project file in the working directory, when
there is one) whether it has the entry called --name, and what it reaches: the gateway's
URL or the command it launches.`,
		Example: `  switchboard client list
  switchboard client list --json`,
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("client list takes no arguments")
			}
			return a.clientList(f.name)
		},
	}
	nameFlag(list)
	cmd.AddCommand(connect, disconnect, list)
	return cmd
}

// clientTarget resolves CLIENT and --scope to a file: the user's, in the
// command's environment, or the project's, in its working directory.
func (a *app) clientTarget(id, scope string) (clients.Target, error) {
	c, err := clients.Lookup(id)
	if err != nil {
		return clients.Target{}, err
	}
	s := clients.Scope(scope)
	if scope != "" && s != clients.ScopeUser && s != clients.ScopeProject {
		return clients.Target{}, invalidChoice("--scope", scope, []string{"user", "project"})
	}
	wd, err := a.workDir()
	if err != nil {
		return clients.Target{}, err
	}
	return c.Target(s, wd, a.lookupEnv)
}

// connectJSON is what `client connect|disconnect --json` prints.
type connectJSON struct {
	Client   string         `json:"client"`
	Scope    string         `json:"scope"`
	Path     string         `json:"path"`
	Name     string         `json:"name"`
	Shape    string         `json:"shape,omitempty"`
	Entry    map[string]any `json:"entry"`
	Changed  bool           `json:"changed"`
	Created  bool           `json:"created"`
	Replaced bool           `json:"replaced"`
	Backup   string         `json:"backup,omitempty"`
	DryRun   bool           `json:"dry_run"`
	Diff     string         `json:"diff,omitempty"`
	// Duplicates are the client's entries switchboard serves too
	// (connect); Moved those taken out of the file (--move); Restored
	// those put back (disconnect).
	Duplicates []string `json:"duplicates,omitempty"`
	Moved      []string `json:"moved,omitempty"`
	Restored   []string `json:"restored,omitempty"`
}

// clientConnect writes the gateway's entry into a client's file.
func (a *app) clientConnect(ctx context.Context, id string, f clientFlags) error {
	if f.url != "" && f.stdio {
		return usagef("give --url or --stdio, not both")
	}
	t, err := a.clientTarget(id, f.scope)
	if err != nil {
		return err
	}
	gw, err := a.gatewayInfo(ctx)
	if err != nil {
		return err
	}
	e := clients.Entry{Name: f.name}
	switch {
	case f.stdio:
		e.Shape = clients.ShapeStdio
	case f.url != "":
		e.Shape = clients.ShapeURL
	case t.Client.HTTP && !gw.tokens:
		e.Shape = clients.ShapeURL
	default:
		e.Shape = clients.ShapeStdio
	}
	var notes []string
	if e.Shape == clients.ShapeURL {
		e.URL = gw.url
		if f.url != "" && f.url != gatewayURLFlag {
			e.URL = f.url
		} else if gw.tokens {
			return fault.New(fault.Validation, "the gateway needs a bearer token (gateway.tokens), which %s's entry would have to carry", t.Client.Name).
				WithSuggestions("connect it with --stdio: a client that launches switchboard serve --stdio needs no token")
		}
		if !gw.running && e.URL == gw.url {
			notes = append(notes, "the gateway is not running: start it with 'switchboard serve' (or connect with --stdio, which the client starts itself)")
		}
	} else {
		e.Command, e.Args, notes = a.stdioCommand(gw)
	}
	if f.move && gw.source == absPath(t.Path) {
		return fault.New(fault.Validation, "switchboard serves %s itself (--config): moving its entries out would take them from switchboard too", t.Path).
			WithSuggestions(fmt.Sprintf("import it first: switchboard config import %s > ~/.config/switchboard/switchboard.yaml, then connect with --config pointing at that file", shellQuote(t.Path)))
	}
	served := func(name string) bool { return contains(gw.servers, name) }
	if gw.source == absPath(t.Path) {
		// The client's file is switchboard's configuration: each of its
		// servers runs twice, and moving them out would take them from
		// switchboard too.
		served = nil
		if len(gw.servers) > 0 {
			notes = append(notes, fmt.Sprintf("switchboard serves %s itself (--config), so %s runs its servers (%s) and, through switchboard, runs them again. To run them once: switchboard config import %s > ~/.config/switchboard/switchboard.yaml, then switchboard client connect %s --config ~/.config/switchboard/switchboard.yaml --move",
				t.Path, t.Client.Name, strings.Join(gw.servers, ", "), shellQuote(t.Path), t.Client.ID))
		}
	}
	installed := t.Client.Installed(a.lookupEnv)
	wasTrusted := a.trustedNow(t.Path)
	ch, err := clients.Connect(t, e, clients.Options{DryRun: f.dryRun, Served: served, Move: f.move})
	if err != nil {
		return err
	}
	if len(ch.Moved) > 0 && !f.dryRun {
		if err := a.recordMoved(absPath(t.Path), ch.Moved); err != nil {
			return fmt.Errorf("the entries were moved out of %s (the backup %s has them), and keeping them for client disconnect failed: %w", t.Path, ch.Backup, err)
		}
	}
	notes = append(notes, a.keepTrust(ch, wasTrusted)...)
	if len(ch.Duplicates) > 0 && !f.move {
		notes = append(notes, duplicateNote(t, ch.Duplicates, "switchboard client connect "+t.Client.ID+scopeArg(t, f)))
	}
	if a.json {
		out := changeJSON(ch, f.name, e.Shape, t.Client.Fields(e), f.dryRun)
		out.Duplicates = ch.Duplicates
		for _, m := range ch.Moved {
			out.Moved = append(out.Moved, m.Name)
		}
		if err := a.printJSON(out); err != nil {
			return err
		}
		for _, n := range notes {
			fmt.Fprintf(a.stderr, "note: %s\n", n)
		}
		return nil
	}
	where := fmt.Sprintf("%s (%s: %s)", t.Client.Name, t.Scope, t.Path)
	to := e.URL
	if e.Shape == clients.ShapeStdio {
		to = "switchboard serve --stdio, as " + e.Command
	}
	switch {
	case !ch.Changed:
		fmt.Fprintf(a.stdout, "%s is already connected as %q to %s; nothing changed\n", where, f.name, to)
	case f.dryRun:
		fmt.Fprint(a.stdout, ch.Diff())
		fmt.Fprintln(a.stderr, "dry run: nothing was written")
	default:
		verb := "connected"
		if ch.Replaced {
			verb = "reconnected (the previous entry was replaced)"
		}
		fmt.Fprintf(a.stdout, "%s %s as %q to %s\n", verb, where, f.name, to)
		if len(ch.Moved) > 0 {
			names := make([]string, len(ch.Moved))
			for i, m := range ch.Moved {
				names[i] = m.Name
			}
			fmt.Fprintf(a.stdout, "moved out of the file, as switchboard serves them: %s (they now run once, through switchboard)\n", strings.Join(names, ", "))
		}
		if ch.Backup != "" {
			fmt.Fprintf(a.stdout, "backup of the file as it was: %s\n", ch.Backup)
		}
		undo := ""
		if len(ch.Moved) > 0 {
			undo = ", which also puts the moved entries back"
		}
		fmt.Fprintf(a.stdout, "restart %s (or reload its MCP servers) to use it; undo with: switchboard client disconnect %s%s%s\n", t.Client.Name, t.Client.ID, scopeArg(t, f), undo)
	}
	if !installed && t.Scope == clients.ScopeUser {
		notes = append(notes, fmt.Sprintf("%s does not seem to be installed (%s)", t.Client.Name, notFound(t.Client.InstallSigns(a.lookupEnv))))
	}
	for _, n := range notes {
		fmt.Fprintf(a.stderr, "note: %s\n", n)
	}
	return nil
}

// notFound says that none of paths existed: "X did not exist", or
// "neither X nor Y existed".
func notFound(paths []string) string {
	switch len(paths) {
	case 1:
		return paths[0] + " did not exist"
	case 2:
		return "neither " + paths[0] + " nor " + paths[1] + " existed"
	}
	return "none of " + strings.Join(paths, ", ") + " existed"
}

// trustedNow reports whether the file at path is trusted as it is now.
func (a *app) trustedNow(path string) bool {
	dir, err := a.stateDirectory()
	if err != nil {
		return false
	}
	st, err := config.CheckTrust(dir, path)
	return err == nil && st == config.Trusted
}

// keepTrust records the trust of a file that was trusted before the
// change connect or disconnect made to it: the change is only
// Switchboard's own entry, which Switchboard skips when it reads the file,
// so it must not make the user trust the file again.
func (a *app) keepTrust(ch clients.Change, wasTrusted bool) []string {
	if !wasTrusted || !ch.Changed || ch.Backup == "" {
		return nil
	}
	dir, err := a.stateDirectory()
	if err != nil {
		return nil
	}
	rec, err := config.Trust(dir, ch.Target.Path)
	if err != nil {
		return []string{fmt.Sprintf("the file was trusted, and recording its new contents failed: %s; run: %s", oneLine(err), a.trustCommand(ch.Target.Path))}
	}
	return []string{fmt.Sprintf("the file was trusted; its trust now covers the change (sha256 %s)", rec.SHA256[:12])}
}

// scopeArg is the --scope to repeat in a hint, when not the default.
func scopeArg(t clients.Target, f clientFlags) string {
	out := ""
	if t.Scope != t.Client.Scopes[0] {
		out += " --scope " + string(t.Scope)
	}
	if f.name != clients.DefaultName {
		out += " --name " + f.name
	}
	return out
}

// clientDisconnect removes the gateway's entry from a client's file.
func (a *app) clientDisconnect(id string, f clientFlags) error {
	t, err := a.clientTarget(id, f.scope)
	if err != nil {
		return err
	}
	wasTrusted := a.trustedNow(t.Path)
	recs, _, err := a.readMoved()
	if err != nil {
		return err
	}
	ch, err := clients.Disconnect(t, f.name, clients.Options{DryRun: f.dryRun, Restore: recs[absPath(t.Path)]})
	if err != nil {
		return err
	}
	if !f.dryRun && (len(ch.Restored) > 0 || len(ch.Kept) > 0) {
		if err := a.forgetMoved(absPath(t.Path)); err != nil {
			return err
		}
	}
	for _, n := range a.keepTrust(ch, wasTrusted) {
		defer fmt.Fprintf(a.stderr, "note: %s\n", n)
	}
	if len(ch.Kept) > 0 {
		defer fmt.Fprintf(a.stderr, "note: not put back, as the file has an entry of that name again: %s\n", strings.Join(ch.Kept, ", "))
	}
	if a.json {
		out := changeJSON(ch, f.name, "", ch.Previous, f.dryRun)
		out.Restored = ch.Restored
		return a.printJSON(out)
	}
	where := fmt.Sprintf("%s (%s: %s)", t.Client.Name, t.Scope, t.Path)
	switch {
	case !ch.Changed:
		fmt.Fprintf(a.stdout, "%s has no entry %q; nothing changed\n", where, f.name)
	case f.dryRun:
		fmt.Fprint(a.stdout, ch.Diff())
		fmt.Fprintln(a.stderr, "dry run: nothing was written")
	default:
		if ch.Previous != nil {
			fmt.Fprintf(a.stdout, "disconnected %s: removed the entry %q\n", where, f.name)
		}
		if len(ch.Restored) > 0 {
			fmt.Fprintf(a.stdout, "put back the entries connect --move took out: %s\n", strings.Join(ch.Restored, ", "))
		}
		fmt.Fprintf(a.stdout, "backup of the file as it was: %s\n", ch.Backup)
	}
	return nil
}

func changeJSON(ch clients.Change, name string, shape clients.Shape, entry map[string]any, dry bool) connectJSON {
	out := connectJSON{
		Client: ch.Target.Client.ID, Scope: string(ch.Target.Scope), Path: ch.Target.Path, Name: name,
		Shape: string(shape), Entry: entry, Changed: ch.Changed, Created: ch.Created, Replaced: ch.Replaced,
		Backup: ch.Backup, DryRun: dry,
	}
	if dry && ch.Changed {
		out.Diff = ch.Diff()
	}
	return out
}

// clientListJSON is one row of `client list --json`.
type clientListJSON struct {
	Client    string `json:"client"`
	Name      string `json:"name"`
	Installed bool   `json:"installed"`
	Scope     string `json:"scope"`
	Path      string `json:"path"`
	Exists    bool   `json:"exists"`
	Connected bool   `json:"connected"`
	Entry     string `json:"entry"`
	Shape     string `json:"shape,omitempty"`
	To        string `json:"to,omitempty"`
	Error     string `json:"error,omitempty"`
}

// clientList shows which clients are installed and connected, and to what.
func (a *app) clientList(name string) error {
	wd, err := a.workDir()
	if err != nil {
		return err
	}
	rows := []clientListJSON{}
	for _, c := range clients.All() {
		installed := c.Installed(a.lookupEnv)
		for _, s := range c.Scopes {
			t, err := c.Target(s, wd, a.lookupEnv)
			if err != nil {
				continue
			}
			st, err := clients.Read(t, name)
			if s == clients.ScopeProject && (!st.Exists || t.Path == a.userPath(c)) {
				continue // only the project files there are, and not the user's file again
			}
			r := clientListJSON{Client: c.ID, Name: c.Name, Installed: installed, Scope: string(s), Path: t.Path,
				Exists: st.Exists, Connected: st.Connected(), Entry: name}
			if err != nil {
				r.Error = oneLine(err)
			}
			if st.Connected() {
				shape, to := st.Describe()
				r.Shape, r.To = string(shape), to
			}
			rows = append(rows, r)
		}
	}
	if a.json {
		return a.printJSON(rows)
	}
	t := a.newTable("CLIENT", "SCOPE", "INSTALLED", "CONNECTED", "TO", "FILE").keepWhole(0)
	for _, r := range rows {
		inst, conn, to := yesNo(r.Installed), yesNo(r.Connected), dash(r.To)
		if r.Error != "" {
			conn, to = "?", r.Error
		}
		file := r.Path
		if !r.Exists {
			file += " (none yet)"
		}
		t.row(r.Client, r.Scope, inst, conn, to, file)
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, "connect one with: switchboard client connect CLIENT")
	return nil
}

// userPath is the client's user file, or "".
func (a *app) userPath(c *clients.Client) string {
	t, err := c.Target(clients.ScopeUser, "", a.lookupEnv)
	if err != nil {
		return ""
	}
	return t.Path
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// gateway is what a client entry needs to know about the gateway.
type gateway struct {
	url     string // http://ADDR/mcp, as a client on this machine reaches it
	source  string // the configuration file, absolute; "" for the embedded default
	tokens  bool   // the gateway requires bearer tokens
	running bool   // a daemon serves this configuration now
	// servers are the names of the servers the configuration has.
	servers []string
}

// gatewayInfo finds the gateway of the configuration the command would use:
// the running daemon's address when one serves it, else gateway.listen.
func (a *app) gatewayInfo(ctx context.Context) (gateway, error) {
	src, err := a.configSource()
	if err != nil {
		return gateway{}, err
	}
	if a.configPath == "" {
		src = a.daemonConfigInstead(src) // as every command without --config
	}
	var gw gateway
	cfg := config.Default()
	if src != "" {
		gw.source = absPath(a.inWorkDir(src))
		loaded, _, err := a.previewConfig(src)
		if err != nil {
			return gateway{}, err
		}
		cfg = loaded
	}
	gw.tokens = len(cfg.Gateway.Tokens) > 0
	for _, srv := range cfg.Servers {
		gw.servers = append(gw.servers, srv.Name)
	}
	addr := cfg.Gateway.Listen
	if c, st := a.daemonFor(ctx, src, false); c != nil {
		c.Close()
		gw.running = true
		if st.Address != "" {
			addr = st.Address
		}
	}
	addr, _ = clientAddr(addr)
	gw.url = "http://" + addr + "/mcp"
	return gw, nil
}

// previewConfig loads src for what it says about Switchboard itself (the
// gateway), as trustPreview does: variables not set here do not stop it.
func (a *app) previewConfig(src string) (*config.Config, []string, error) {
	cfg, err := config.Load(src, a.configOptions(true))
	var uv *config.UnresolvedVariableError
	if err == nil || !errors.As(err, &uv) {
		return cfg, nil, err
	}
	return a.trustPreview(src)
}

// stdioCommand is the command a client launches to reach the gateway over
// stdio: this binary, by its absolute path, serving the configuration this
// command uses (and the state directory, when it is not the default).
func (a *app) stdioCommand(gw gateway) (string, []string, []string) {
	var notes []string
	exe, err := os.Executable()
	if err != nil {
		exe = "switchboard"
		notes = append(notes, fmt.Sprintf("cannot tell where this switchboard binary is (%v): the entry runs switchboard from PATH", err))
	} else if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		notes = append(notes, exe+" is a temporary build (go run): build switchboard (go build -o bin/switchboard ./cmd/switchboard) and connect again with that binary")
	}
	args := []string{"serve", "--stdio"}
	if gw.source != "" {
		args = append(args, "--config", gw.source)
	}
	if a.stateDir != "" || a.getenv("SWITCHBOARD_STATE_DIR") != "" {
		if dir, err := a.stateDirectory(); err == nil {
			args = append(args, "--state-dir", absPath(a.inWorkDir(dir)))
		}
	}
	return exe, args, notes
}
