package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// complete asks for the completions of a command line the way a shell's
// completion script does, through cobra's __complete command, and returns
// the candidates (without descriptions) and the directive.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	r := runCLI(t, append([]string{cobra.ShellCompRequestCmd}, args...)...)
	wantCode(t, r, ExitOK)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], ":") {
		t.Fatalf("__complete %v: got %q, want candidates and a :directive line", args, r.stdout)
	}
	var out []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		out = append(out, name)
	}
	return out, lines[len(lines)-1]
}

func wantCandidates(t *testing.T, what string, got []string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !contains(got, w) {
			t.Errorf("%s: got %v, want %q among them", what, got, w)
		}
	}
}

// TestCompletion checks dynamic completion: server, tool, view, hook and
// event names from the configuration, tools from the servers, fixed
// values and file names.
func TestCompletion(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha", "beta"))
	if err := appendFile(cfg, `gateway:
  views:
    - {name: team, servers: [alpha]}
hooks:
  - {name: announce, on: spec.after-plan, actions: [{type: command, command: ["true"]}]}
  - {name: every-tool, on: "tool.*", actions: [{type: command, command: ["true"]}]}
`); err != nil {
		t.Fatal(err)
	}

	got, dir := complete(t, "call", "--config", cfg, "")
	if dir != ":4" { // ShellCompDirectiveNoFileComp
		t.Errorf("call SERVER: directive %s, want :4 (no file names)", dir)
	}
	wantCandidates(t, "call SERVER", got, "alpha", "beta")

	got, _ = complete(t, "call", "--config", cfg, "alpha", "")
	wantCandidates(t, "call alpha TOOL (connecting alpha)", got, "echo", "add", "fail")
	if contains(got, "alpha") {
		t.Errorf("call alpha TOOL: got %v, want tools, not servers", got)
	}
	got, _ = complete(t, "call", "--config", cfg, "alpha", "add", "a=1", "")
	if !contains(got, "b=") || contains(got, "a=") {
		t.Errorf("call alpha add a=1 …: got %v, want the parameter not given yet, b=", got)
	}
	got, _ = complete(t, "prompt", "--config", cfg, "alpha", "")
	wantCandidates(t, "prompt alpha PROMPT", got, "greet")
	got, dir = complete(t, "prompt", "--config", cfg, "alpha", "greet", "")
	if strings.Join(got, ",") != "name=" || dir != ":6" { // NoFileComp | NoSpace
		t.Errorf("prompt alpha greet …: got %v %s, want its argument, name=, with :6", got, dir)
	}
	if got, _ = complete(t, "prompt", "--config", cfg, "alpha", "greet", "name=Ann", ""); len(got) != 0 {
		t.Errorf("prompt alpha greet name=Ann …: got %v, want nothing (every argument given)", got)
	}
	// auth login offers the servers that can sign in: not a stdio one.
	stdioCfg := writeConfigWith(t, map[string]string{"local": "ok"}, httpServersYAML(t, "remote"))
	if got, _ = complete(t, "auth", "login", "--config", stdioCfg, ""); strings.Join(got, ",") != "remote" {
		t.Errorf("auth login SERVER: got %v, want only the network server, remote", got)
	}
	got, _ = complete(t, "tools", "--config", cfg, "")
	wantCandidates(t, "tools SERVER", got, "alpha", "beta")
	got, _ = complete(t, "servers", "disable", "--config", cfg, "")
	wantCandidates(t, "servers disable NAME", got, "alpha", "beta")
	got, _ = complete(t, "history", "--config", cfg, "--server", "")
	wantCandidates(t, "history --server", got, "alpha", "beta")
	got, _ = complete(t, "history", "--status", "")
	wantCandidates(t, "history --status", got, "success", "error", "timeout", "cancelled", "output_invalid")
	got, _ = complete(t, "agent", "--config", cfg, "--view", "")
	wantCandidates(t, "agent --view", got, "team")
	got, _ = complete(t, "agent", "--config", cfg, "--servers", "alpha,")
	wantCandidates(t, "agent --servers alpha,", got, "alpha,beta")
	got, _ = complete(t, "hooks", "log", "--config", cfg, "--hook", "")
	wantCandidates(t, "hooks log --hook", got, "announce", "every-tool")
	got, _ = complete(t, "hooks", "fire", "--config", cfg, "")
	if strings.Join(got, ",") != "spec.after-plan" {
		t.Errorf("hooks fire EVENT: got %v, want the one event a hook names (not the tool.* pattern)", got)
	}
	got, _ = complete(t, "completion", "")
	wantCandidates(t, "completion SHELL", got, "bash", "zsh", "fish", "powershell")
	got, _ = complete(t, "hel")
	wantCandidates(t, "commands", got, "help")

	// File names: the shell lists them, filtered by extension or to
	// directories.
	got, dir = complete(t, "--config", "")
	if dir != ":8" || strings.Join(got, ",") != "yaml,yml,json" { // ShellCompDirectiveFilterFileExt
		t.Errorf("--config: got %v %s, want the yaml, yml and json extensions with :8", got, dir)
	}
	got, dir = complete(t, "doc", "run", "")
	if dir != ":8" || !contains(got, "md") {
		t.Errorf("doc run FILE: got %v %s, want .md files", got, dir)
	}
	if _, dir = complete(t, "call", "--config", cfg, "alpha", "echo", "--out-dir", ""); dir != ":16" { // ShellCompDirectiveFilterDirs
		t.Errorf("call --out-dir: directive %s, want :16 (directories)", dir)
	}
	if _, dir = complete(t, "task", "result", "--out-dir", ""); dir != ":16" {
		t.Errorf("task result --out-dir: directive %s, want :16 (directories)", dir)
	}
	if _, dir = complete(t, "agent", "--transcript", ""); dir != ":0" { // ShellCompDirectiveDefault
		t.Errorf("agent --transcript: directive %s, want :0 (file names)", dir)
	}

	// No file names where no file belongs: a command that takes no
	// argument, a free-text argument, and flags whose value is a
	// duration, a number, an address or a name.
	for _, line := range [][]string{
		{"hooks", "log", ""},
		{"serve", ""},
		{"agent", ""},
		{"call", "--config", cfg, "alpha", "echo", "--timeout", ""},
		{"history", "--limit", ""},
		{"audit", "--since", ""},
		{"serve", "--listen", ""},
		{"client", "connect", "cursor", "--name", ""},
	} {
		if got, dir := complete(t, line...); dir != ":4" || len(got) != 0 {
			t.Errorf("%s: got %v %s, want nothing and :4 (no file names)", strings.Join(line, " "), got, dir)
		}
	}
}

// TestCompletionAsksTheDaemon checks that tool names come from the
// running daemon when there is one.
func TestCompletionAsksTheDaemon(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	d := startDaemon(t, cfg)
	before := d.requests.Load()
	got, _ := complete(t, "call", "--config", cfg, "alpha", "")
	wantCandidates(t, "call alpha TOOL", got, "echo")
	if d.requests.Load() == before {
		t.Errorf("completing a tool name sent the daemon no request, want it to ask the daemon")
	}
}

// TestCompletionScripts checks that every shell's script is written.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	for shell, marker := range map[string]string{
		"bash":       "__start_switchboard",
		"zsh":        "#compdef switchboard",
		"fish":       "complete -c switchboard",
		"powershell": "Register-ArgumentCompleter",
	} {
		r := runCLI(t, "completion", shell)
		wantCode(t, r, ExitOK)
		wantContains(t, "completion "+shell, r.stdout, marker)
	}
	r := runCLI(t, "completion", "tcsh")
	wantCode(t, r, ExitUsage)
	wantContains(t, "completion tcsh", r.stderr, `want bash, zsh, fish or powershell`)
	r = runCLI(t, "completion")
	wantCode(t, r, ExitUsage)
}
