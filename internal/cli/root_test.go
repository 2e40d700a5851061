package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestNormalizeArgs checks that flags may come before a subcommand, that
// which flags take a value comes from the command tree, and that Go-style
// single-dash long flags still work.
func TestNormalizeArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args, want string
	}{
		{"call srv --json tool --timeout 3s k=v -- --not-a-flag", "call srv --json tool --timeout 3s k=v -- --not-a-flag"},
		{"config --config x.yaml show", "config show --config x.yaml"},
		{"config --config=x.yaml --json validate a.yaml", "config validate --config=x.yaml --json a.yaml"},
		{"hooks --limit 5 log --failed", "hooks log --limit 5 --failed"},
		{"hooks --failed log", "hooks log --failed"}, // a bool flag of the subcommand, before it
		{"doc --dry-run --config c.yaml run d.md", "doc run --dry-run --config c.yaml d.md"},
		{"--config x.yaml servers", "servers --config x.yaml"},
		{"-json version", "version --json"},
		{"call -config x.yaml alpha echo -timeout=2s", "call --config x.yaml alpha echo --timeout=2s"},
		{"config import -o out.yaml in.json", "config import -o out.yaml in.json"},
		{"call alpha add --args - b=1", "call alpha add --args - b=1"},
		{"servers enable alpha", "servers enable alpha"},
		{"call alpha log", "call alpha log"}, // a tool called log is no subcommand
		{"agent -i", "agent -i"},
		{"history --since -5m", "history --since -5m"},
		{"__complete hooks --failed ", "__complete hooks --failed "},
	}
	root := newRoot(&app{stdout: io.Discard, stderr: io.Discard})
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			got := normalizeArgs(root, strings.Split(tt.args, " "))
			if diff := cmp.Diff(strings.Split(tt.want, " "), got); diff != "" {
				t.Errorf("normalizeArgs(%q) (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

// TestFlagErrors checks that a flag mistake names the flag and the form it
// wants, or the closest flag, and exits 2.
func TestFlagErrors(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"call", "--jsn"}, "switchboard call: unknown flag --jsn; did you mean --json?"},
		{[]string{"call", "-jsn"}, "unknown flag -jsn; did you mean --json?"},
		{[]string{"history", "--limt", "3"}, "unknown flag --limt; did you mean --limit?"},
		{[]string{"servers", "--frobnicate"}, "unknown flag --frobnicate; run 'switchboard help servers' for its flags"},
		{[]string{"history", "--since", "1x"}, `switchboard history: invalid --since "1x": want a duration like 90m, 2h or 7d, or a date like 2026-01-02`},
		{[]string{"history", "--since", "-5m"}, `invalid --since "-5m": the duration must be more than 0: it counts back from now; want a duration like 90m, 2h or 7d`},
		{[]string{"history", "--limit", "many"}, `invalid --limit "many": want a whole number`},
		{[]string{"call", "alpha", "echo", "--timeout", "soon"}, `invalid --timeout "soon": want a duration like 30s, 5m or 1h30m`},
		{[]string{"call", "alpha", "echo", "--max-cost", "lots"}, `invalid --max-cost "lots": want a number`},
		{[]string{"call", "alpha", "echo", "--timeout"}, "--timeout needs a value: a duration like 30s"},
		{[]string{"hooks", "list", "--connect=maybe"}, `invalid --connect "maybe": want true or false`},
		{[]string{"servers", "--output", "xml"}, `invalid --output "xml": want table, json or yaml`},
		{[]string{"servers", "--output", "jsn"}, `did you mean "json"?`},
		{[]string{"servers", "--log-level", "loud"}, `invalid --log-level "loud": want debug, info, warn or error`},
		{[]string{"servers", "--json", "--output", "yaml"}, "give --json or --output yaml, not both"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := runCLI(t, tt.args...)
			wantCode(t, r, ExitUsage)
			wantContains(t, "stderr", r.stderr, tt.want)
		})
	}

	// With --json the mistake is a structured validation error, wherever
	// --json is on the line: also after the flag in error, which stops
	// the parse before --json is read.
	for _, args := range [][]string{
		{"history", "--json", "--since", "1x"},
		{"history", "--since", "1x", "--json"},
		{"history", "--since", "1x", "--output", "json"},
		{"history", "--since=1x", "--output=yaml"},
		{"history", "--limit", "many", "-json"},
	} {
		r := runCLI(t, args...)
		wantCode(t, r, ExitUsage)
		if e := jsonErr(t, strings.Join(args, " "), r); e["error_type"] != "validation_error" || !strings.Contains(fmt.Sprint(e["message"]), `invalid --`) {
			t.Errorf("%v: got %v, want a validation_error naming the flag", args, e)
		}
	}
	// After --, --json is an argument, not the flag.
	r := runCLI(t, "history", "--since", "1x", "--", "--json")
	wantCode(t, r, ExitUsage)
	wantContains(t, "history --since 1x -- --json", r.stderr, `switchboard history: invalid --since "1x"`)
}

// TestUnknownCommands checks the suggestions for mistyped commands and
// subcommands.
func TestUnknownCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"clal"}, `switchboard: unknown command "clal"; did you mean "call"?`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"; run 'switchboard help' for the list`},
		{[]string{"hooks", "lst"}, `switchboard hooks: unknown hooks subcommand "lst"; did you mean "list"?`},
		{[]string{"config", "shwo"}, `unknown config subcommand "shwo"; did you mean "show"?`},
		// The root's help says config checks; the word is not validate's spelling.
		{[]string{"config", "check"}, `unknown config subcommand "check"; did you mean "validate"?`},
		{[]string{"servers", "enabel", "x"}, `unknown servers subcommand "enabel"; did you mean "enable"?`},
		{[]string{"help", "clal"}, `unknown command "clal"; did you mean "call"?`},
		{[]string{"hooks"}, "missing subcommand: want fire, install-git, list, log or trust"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := runCLI(t, tt.args...)
			wantCode(t, r, ExitUsage)
			wantContains(t, "stderr", r.stderr, tt.want)
		})
	}
}

// TestEveryCommandHasHelp checks that every command's --help shows its
// flags with their defaults and at least one example, and that `help CMD`
// prints the same.
func TestEveryCommandHasHelp(t *testing.T) {
	t.Parallel()
	root := newRoot(&app{stdout: io.Discard, stderr: io.Discard})
	forEachCommand(root, func(c *cobra.Command) {
		if c.Hidden || !c.IsAvailableCommand() && c.Name() != "help" {
			return
		}
		path := strings.Fields(c.CommandPath())[1:]
		t.Run(strings.Join(append([]string{"switchboard"}, path...), " "), func(t *testing.T) {
			if c.Example == "" {
				t.Errorf("%s has no example", c.CommandPath())
			}
			r := runCLI(t, append(path, "--help")...)
			wantCode(t, r, ExitOK)
			what := c.Long
			if what == "" {
				what = c.Short
			}
			wantContains(t, "--help", r.stdout, "Usage:", "Examples:", what[:min(len(what), 20)])
			c.Flags().VisitAll(func(f *pflag.Flag) {
				if !f.Hidden {
					wantContains(t, "--help", r.stdout, "--"+f.Name)
				}
			})
			h := runCLI(t, append([]string{"help"}, path...)...)
			wantCode(t, h, ExitOK)
			if h.stdout != r.stdout {
				t.Errorf("help %s differs from %s --help:\n%s\nwant:\n%s", strings.Join(path, " "), strings.Join(path, " "), h.stdout, r.stdout)
			}
		})
	})
	// Defaults are shown.
	r := runCLI(t, "history", "--help")
	wantContains(t, "history --help", r.stdout, "(default 50)")
	r = runCLI(t, "builtin", "task-api", "-h")
	wantContains(t, "builtin task-api -h", r.stdout, `(default "127.0.0.1:8000")`)
}

// TestSinceValue checks the forms history --since takes.
func TestSinceValue(t *testing.T) {
	t.Parallel()
	var v sinceValue
	before := time.Now()
	if err := v.Set("90m"); err != nil || v.at.After(before.Add(-89*time.Minute)) || v.at.Before(before.Add(-91*time.Minute)) {
		t.Errorf("--since 90m: got %v (%v), want 90 minutes ago", v.at, err)
	}
	if err := v.Set("2026-01-02"); err != nil || !v.at.Equal(time.Date(2026, 1, 2, 0, 0, 0, 0, time.Local)) {
		t.Errorf("--since 2026-01-02: got %v (%v), want local midnight", v.at, err)
	}
	if err := v.Set("2026-01-02T03:04:05Z"); err != nil || !v.at.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("--since RFC 3339: got %v (%v)", v.at, err)
	}
	for _, bad := range []string{"1x", "-5m", "0s", "yesterday", "2026-13-01"} {
		if err := v.Set(bad); err == nil {
			t.Errorf("--since %s: got no error", bad)
		}
	}
}

// TestOutputYAML checks that --output yaml prints the data --json prints,
// as YAML.
func TestOutputYAML(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	r := runCLI(t, "version", "--output", "yaml")
	wantCode(t, r, ExitOK)
	if !strings.HasPrefix(r.stdout, "version: ") || strings.Contains(r.stdout, "{") {
		t.Errorf("version --output yaml: got %q, want YAML", r.stdout)
	}
	r = runCLI(t, "version", "--output", "json")
	wantCode(t, r, ExitOK)
	var v map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v["version"] == "" {
		t.Errorf("version --output json: got %q (%v)", r.stdout, err)
	}
}

// TestListsAreNeverNull checks that an empty list prints as [], never
// null, and that listings are bare arrays.
func TestListsAreNeverNull(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "switchboard.yaml")
	if err := os.WriteFile(cfg, []byte("servers: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(doc, []byte("# Notes\n\nNo calls here.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"doc", "list", doc},
		{"hooks", "log"},
		{"hooks", "list"},
		{"history"},
		{"servers"},
	} {
		r := runCLI(t, append(args, "--config", cfg, "--json")...)
		wantCode(t, r, ExitOK)
		if strings.TrimSpace(r.stdout) != "[]" {
			t.Errorf("%s --json: got %q, want []", strings.Join(args, " "), r.stdout)
		}
	}
	// Inside a single thing, a list that is empty is [] too.
	r := runCLI(t, "doc", "run", "--check", doc, "--config", cfg, "--json")
	wantCode(t, r, ExitOK)
	wantContains(t, "doc run --check --json", r.stdout, `"blocks": []`)
	if strings.Contains(r.stdout, "null") {
		t.Errorf("doc run --check --json: got %s, want no null", r.stdout)
	}
}

// TestLogsOnlyWhenAsked checks that an in-process command's result is
// never mixed with log lines: its servers' log records reach stderr only
// with --log-level.
func TestLogsOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	// The log records are dead's, a stdio child that exits; alpha, which
	// answers, is served in this process.
	cfg := writeConfigWith(t, map[string]string{"dead": "exit"}, httpServersYAML(t, "alpha"))
	setenv(t, envNoDaemon, "1")
	r := runCLI(t, "tools", "--config", cfg)
	wantCode(t, r, ExitFailure)
	wantContains(t, "tools stdout", r.stdout, "echo")
	wantContains(t, "tools stderr", r.stderr, "switchboard tools: server dead is unavailable")
	if strings.Contains(r.stderr, "level=") {
		t.Errorf("tools without --log-level: stderr has log records:\n%s", r.stderr)
	}
	r = runCLI(t, "tools", "--config", cfg, "--log-level", "warn")
	wantCode(t, r, ExitFailure)
	wantContains(t, "tools --log-level warn stderr", r.stderr, "level=WARN", "switchboard tools: server dead is unavailable")
	if strings.Contains(r.stdout, "level=") {
		t.Errorf("tools --log-level warn: stdout has log records:\n%s", r.stdout)
	}
}
