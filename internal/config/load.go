package config

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// FileName is the name of the native configuration file.
const FileName = "switchboard.yaml"

// Options adjust how a configuration is read.
type Options struct {
	// LookupEnv looks up the environment variables that ${VAR} references
	// and env files refer to. Nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Listen, when set, replaces gateway.listen (serve --listen) before
	// the configuration is validated: it is checked as the key is, with
	// the same messages, at the position "--listen", and the file's value
	// is neither checked nor used.
	Listen string
	// StateDir is the state directory, where trust records are kept (see
	// Trust). "" means no file is trusted: every client file is held to
	// the command allowlist.
	StateDir string
	// ConfirmTrust, when set, is asked once whether to trust one of the
	// user's own client files (see UserClientFile) that names commands
	// beyond the allowlist and is not trusted as it is now: the question
	// names the file and the commands. On yes, the trust is recorded in
	// StateDir and the file loads as trusted. Nil (no terminal to ask)
	// means such a file is refused with the command that trusts it.
	ConfirmTrust func(question string) (bool, error)
	// TrustAnswered, when set, is called once ConfirmTrust has been
	// answered: after the trust is recorded on yes (or could not be), and
	// on no, for the audit trail. It is not called when ConfirmTrust
	// failed to get an answer. An error it returns (the answer could not
	// be audited, and must be) fails the load; a trust already recorded
	// stays recorded.
	TrustAnswered func(TrustAnswer) error
	// Inputs resolves VS Code ${input:id} variables; nil reads them from
	// the environment only (see InputEnvName).
	Inputs *InputResolver
	// UserEnv reads the variables that say where the user's own folders
	// are ($HOME, $XDG_CONFIG_HOME, $APPDATA, $CLAUDE_CONFIG_DIR,
	// $CODEX_HOME): the user's configuration folder and client files
	// (trusted at first use), ~ and ${userHome}. It is the environment of
	// the command that loads the file; unlike LookupEnv it never stands in
	// for an unset variable. Nil means the process's.
	UserEnv func(string) (string, bool)
	// WorkDir is the working directory: ${workspaceFolder} of a user-level
	// client file, and the project whose servers a Claude Code
	// ~/.claude.json adds. "" means the process's.
	WorkDir string

	// assumeTrusted reads a client's file as if it were trusted (see
	// TrustPreview).
	assumeTrusted bool
}

// Load reads the configuration file at path, in any supported format (see
// Parse), and returns it resolved and validated. Problems in the file are
// reported together as a *ValidationError; a file that cannot be read is a
// fault.Config error too.
func Load(path string, opts Options) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fault.Wrap(fault.Config, err, "reading configuration file %s", path).
			WithSuggestions("check the path, or run without a configuration file to use the defaults")
	}
	return Parse(path, data, opts)
}

// Parse reads a configuration from data. The format is detected from the
// content: JSON (with // comments allowed) or YAML; an object with
// mcpServers is Claude Desktop / Cursor's format, one with a servers
// mapping VS Code's, one with a tools list seed 004's, and anything else
// the native format. filename is used in messages, and relative env_file
// and cwd paths start at its folder.
func Parse(filename string, data []byte, opts Options) (*Config, error) {
	p := parse(filename, data, opts)
	p.setAside()
	if len(p.ps.errs) > 0 {
		probs := p.ps.errs
		for _, w := range p.ps.warns {
			// Why a switchboard.yaml's keys were read as a client's.
			if _, ok := w.Err.(nativeNameNote); ok {
				probs = append(probs, w)
			}
		}
		return nil, &ValidationError{Problems: sortProblems(probs, filename)}
	}
	return p.cfg, nil
}

// parsed is everything parse learned about a file.
type parsed struct {
	raw *rawConfig
	cfg *Config
	ps  *problems
	// trust is the file's trust, and refused the commands (with their
	// servers) refused only because the file is not trusted.
	trust   fileTrust
	refused []string
	widened []string
	// workspace is the value of ${workspaceFolder}.
	workspace string
	// entries are the spans of ps.errs each server entry raised.
	entries []entrySpan
}

// setAside moves the problems that concern one server alone, and only
// whether it may start (see startProblem), from the file's problems into
// that server's CannotStart: the file then loads, and the server shows
// them instead of starting. A server with any other problem keeps all of
// its own, and when any problem remains the whole file is refused with
// every problem listed, as before.
func (p *parsed) setAside() {
	if len(p.ps.errs) == 0 {
		return
	}
	client := p.cfg.Format != FormatNative && p.cfg.Format != FormatToolsV1
	n := 0
	for _, e := range p.entries {
		if slices.ContainsFunc(p.ps.errs[e.from:e.to], func(pr Problem) bool { return !startProblem(pr, client) }) {
			return // this server's other problems refuse the file
		}
		n += e.to - e.from
	}
	if n < len(p.ps.errs) {
		return // problems of the file, not of one server
	}
	for _, e := range p.entries {
		p.cfg.Servers[e.server].CannotStart = sortProblems(p.ps.errs[e.from:e.to], p.cfg.Source)
	}
	p.ps.errs = nil
}

// startProblem reports whether a problem of a server entry says only
// that the server may not start as things stand, not that the file is
// wrong: its env file or working directory does not exist yet (a Cursor
// ${workspaceFolder}/.env in a folder without one), or, in a client's
// file (client), the command allowlist or the launch policy refuses its
// command — for want of trust, or a construct the policy refuses — or a
// ${VAR} it uses is not set, or a VS Code ${input:id} has no value (serve
// run as a service, or by a client, has no terminal to ask). The entry
// means something whole; creating the path, trusting the file or
// allowing the construct, storing the input's value, and reloading (or,
// for a variable, restarting serve with it set), starts the server. A
// client's file is one the user did not write for Switchboard, whose
// client starts the servers it can; switchboard.yaml is written for
// Switchboard, with the allowlist beside the servers and ${VAR:-default}
// for a variable that may be unset, and a reload refuses an edit that
// breaks it, keeping the running configuration, so it stays whole there.
func startProblem(p Problem, client bool) bool {
	if missingPath(p) != nil {
		return true
	}
	var na *CommandNotAllowedError
	var ua *UnsafeArgumentError
	var ue *UnsafeEnvError
	var uv *UnresolvedVariableError
	var ui *InputUnsetError
	return client && (errors.As(p.Err, &na) || errors.As(p.Err, &ua) || errors.As(p.Err, &ue) ||
		errors.As(p.Err, &uv) || errors.As(p.Err, &ui))
}

// StartHint says what starts a server whose CannotStart lists ps, once
// they are fixed, in the serve that runs it. stdioPID is that serve's
// process id when it has no control socket (serve --stdio, launched by an
// MCP client): neither switchboard reload nor config trust reaches it,
// while a restart of its client, or SIGHUP, does. 0 means a serve that
// has its control socket.
func StartHint(ps []Problem, stdioPID int) string {
	unset := slices.ContainsFunc(ps, UnsetVariable)
	if stdioPID != 0 {
		if unset {
			return "then restart the MCP client that runs switchboard serve --stdio, with the variable set in the env of its entry for switchboard: serve reads its environment only when it starts"
		}
		return fmt.Sprintf("then restart the MCP client that runs switchboard serve --stdio, or send that serve SIGHUP (kill -HUP %d): it has no control socket, so neither switchboard reload nor config trust reaches it", stdioPID)
	}
	if unset {
		return "then restart serve with it set: a running serve reads its environment only when it starts, so switchboard reload does not see a variable set since"
	}
	for _, p := range ps {
		var na *CommandNotAllowedError
		if !errors.As(p.Err, &na) || na.File == "" {
			return "then run: switchboard reload (a running serve starts the server without a restart)"
		}
	}
	return "config trust reloads a running serve, which then starts the server"
}

// UnsetVariable reports whether p is about a ${VAR} that is not set in
// the environment the file was read in (an *UnresolvedVariableError).
func UnsetVariable(p Problem) bool {
	var uv *UnresolvedVariableError
	return errors.As(p.Err, &uv)
}

func parse(filename string, data []byte, opts Options) *parsed {
	inputs := map[string]inputResult{}
	p := parseOnce(filename, data, opts, inputs)
	q := p.trustQuestion()
	if q == "" || opts.ConfirmTrust == nil || opts.StateDir == "" {
		return p
	}
	yes, err := opts.ConfirmTrust(q)
	if err != nil {
		p.ps.errs = append(p.ps.errs, Problem{Pos: Pos{File: filename}, Message: "asking whether to trust the file: " + err.Error(),
			Fix: "run: " + TrustCommand(filename), Err: fmt.Errorf("asking whether to trust %s: %w", filename, err)})
		return p
	}
	answer := TrustAnswer{Path: p.trust.abs, SHA256: contentHash(data), Yes: yes}
	if !yes {
		answered(p, filename, opts, answer)
		return p
	}
	if _, err := trustData(opts.StateDir, p.trust.abs, data); err != nil {
		answer.Err = err
		answered(p, filename, opts, answer)
		p.ps.errs = append(p.ps.errs, Problem{Pos: Pos{File: filename}, Message: "recording the trust: " + err.Error(), Err: err})
		return p
	}
	if !answered(p, filename, opts, answer) {
		return p
	}
	return parseOnce(filename, data, opts, inputs)
}

// TrustAnswer is what the person answered when Load asked whether to
// trust a file (Options.ConfirmTrust), and what came of it.
type TrustAnswer struct {
	// Path is the file's absolute path.
	Path string
	// SHA256 is the hex SHA-256 of the contents the question was about:
	// the hash recorded on yes.
	SHA256 string
	// Yes is the answer: true when the person trusted the file.
	Yes bool
	// Err is why a yes could not be recorded in the state directory (the
	// file then loads untrusted); nil otherwise.
	Err error
}

// answered hands a to Options.TrustAnswered, when set, and reports
// false, with the problem added to p, when that failed.
func answered(p *parsed, filename string, opts Options, a TrustAnswer) bool {
	if opts.TrustAnswered == nil {
		return true
	}
	if err := opts.TrustAnswered(a); err != nil {
		p.ps.errs = append(p.ps.errs, Problem{Pos: Pos{File: filename}, Message: err.Error(), Err: err})
		return false
	}
	return true
}

// parseOnce reads a file once. inputs keeps the VS Code inputs resolved so
// far, so that a second pass asks for none again.
func parseOnce(filename string, data []byte, opts Options, inputs map[string]inputResult) *parsed {
	ps := &problems{}
	root := parseTree(filename, data, ps)
	workDir := opts.WorkDir
	if workDir == "" {
		workDir, _ = os.Getwd()
	}
	var rc *rawConfig
	if len(ps.errs) == 0 {
		rc = decodeRaw(root, decodeContext{file: filename, workDir: workDir}, ps)
	} else {
		rc = &rawConfig{format: FormatNative}
	}
	lookup := lookupOrEnv(opts.LookupEnv)
	ws := workspaceFolderFor(filename, workDir, opts.UserEnv)
	x := &expander{lookup: lookup, workspace: ws, home: userHome(opts.UserEnv), dir: filepath.Dir(filename), syntax: rc.syntax}
	if rc.inputs != nil {
		x.input = inputExpander(rc.inputs, filename, opts.Inputs, lookup, ps, inputs)
	}
	if rc.format == FormatContinue {
		x.secret = continueSecrets(lookup, ws, x.home)
	}
	ft := fileTrustOf(filename, data, rc.format, opts)
	// Relative paths start at the file's folder; in a client's file kept
	// in a project's client folder (.vscode/mcp.json, .gemini/...), at
	// the project's folder, where the client starts its servers.
	dir, base := filepath.Dir(filename), "the configuration file's folder"
	if rc.format != FormatNative && rc.format != FormatToolsV1 {
		dir = ws
		if _, ok := UserClientFile(filename, opts.UserEnv); ok && workDir != "" {
			base = "the folder Switchboard runs in, " + ws + ", as in the client, which starts its servers in the folder it has open"
		} else if fd, _ := filepath.Abs(filepath.Dir(filename)); ws != fd {
			base = "the project's folder, " + ws
		}
	}
	r := &resolver{
		ps:      ps,
		x:       x,
		lookup:  lookup,
		file:    filename,
		dir:     dir,
		dirBase: base,
		listen:  opts.Listen,
		trust:   ft,
		canAsk:  opts.ConfirmTrust != nil && opts.StateDir != "",
		workDir: workDir,
		inputs:  rc.inputs,
	}
	cfg := r.resolve(rc)
	cfg.Warnings = sortProblems(ps.warns, filename)
	return &parsed{raw: rc, cfg: cfg, ps: ps, trust: ft, refused: r.refused, widened: r.widened, workspace: ws, entries: r.entries}
}

// trustQuestion is what to ask before trusting the file at first use, or
// "" when there is nothing to ask: the file is not one of the user's own
// client files, or trust would allow nothing more.
func (p *parsed) trustQuestion() string {
	if p.trust.client == "" || p.trust.state == Trusted || len(p.refused)+len(p.widened) == 0 {
		return ""
	}
	what := "is your " + p.trust.client + " configuration"
	if p.trust.state == Changed {
		what += ", changed since you trusted it"
	}
	var needs []string
	if len(p.refused) > 0 {
		needs = append(needs, "runs "+strings.Join(p.refused, ", "))
	}
	if len(p.widened) > 0 {
		needs = append(needs, "allows beyond the launch rules "+strings.Join(p.widened, ", "))
	}
	return fmt.Sprintf("%s %s. Switchboard runs only npx, uvx and docker from a file you have not trusted; this one also %s. Trust it to run the commands it names? (Its SHA-256 is recorded; any change asks again.)",
		p.trust.abs, what, strings.Join(needs, " and "))
}

// sortProblems orders problems by position: the configuration file's
// first, then those in other files (env files), each by line and column.
func sortProblems(ps []Problem, file string) []Problem {
	out := slices.Clone(ps)
	slices.SortStableFunc(out, func(a, b Problem) int {
		if a.Pos.File != b.Pos.File {
			if a.Pos.File == file {
				return -1
			}
			if b.Pos.File == file {
				return 1
			}
			return cmp.Compare(a.Pos.File, b.Pos.File)
		}
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	return out
}

// Find returns the configuration file to use: switchboard.yaml in the
// working directory dir ("" is the process's, and the file is then
// returned as the relative ./switchboard.yaml) if it exists, else
// switchboard/switchboard.yaml in the user's configuration folder
// (os.UserConfigDir, as lookupEnv finds it: nil reads the process's
// environment) if it exists, else "" and no error.
func Find(dir string, lookupEnv func(string) (string, bool)) (string, error) {
	candidates := []string{filepath.Join(dir, FileName)}
	if dir := userConfigDir(lookupEnv); dir != "" {
		candidates = append(candidates, filepath.Join(dir, "switchboard", FileName))
	}
	for _, c := range candidates {
		fi, err := os.Stat(c)
		switch {
		case err == nil && !fi.IsDir():
			return c, nil
		case err == nil, errors.Is(err, fs.ErrNotExist):
		default:
			return "", fault.Wrap(fault.Config, err, "looking for %s", c)
		}
	}
	return "", nil
}

// Default returns the configuration used when there is no file: no
// servers and every default applied.
func Default() *Config {
	return &Config{
		Defaults:        defaultDefaults(),
		Limits:          defaultLimits(),
		History:         defaultHistory(),
		Gateway:         DefaultGateway(),
		Hooks:           Hooks{Settings: DefaultHookSettings()},
		LLM:             DefaultLLM(),
		Agent:           DefaultAgent(),
		AllowedCommands: slices.Clone(DefaultAllowedCommands),
		Format:          FormatNative,
	}
}
