package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// newConfigCmd is `switchboard config`, with validate, show, import, trust
// and input.
func newConfigCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check, show, convert or trust configuration",
		Long: `Check a configuration file, show the resolved configuration, convert a client's file
(Claude Desktop, Cursor, VS Code, ...) to switchboard.yaml, trust a client's file so that
it may run the commands it names, or store the value of a VS Code input. Reference:
docs/configuration.md.`,
		Example: `  switchboard config validate
  switchboard config show --json
  switchboard config import ~/.config/Claude/claude_desktop_config.json -o switchboard.yaml
  switchboard config trust .cursor/mcp.json`,
		RunE: subcommandRequired,
	}
	// SuggestFor: the root's help calls config "Check, show, convert or trust".
	validate := &cobra.Command{
		Use:        "validate [FILE]",
		SuggestFor: []string{"check", "lint", "verify"},
		Short:      "Validate a configuration file",
		Long: `Load and validate a configuration (the usual one without FILE) and print "ok: ..." with
the format and number of servers, or every problem at once, one per line, as
file:line:col: field: what is wrong; how to fix it, and exit 1. A file that loads but has servers
that cannot start (an env file or cwd that does not exist, a command a client's file may not
run) exits 1 too, listing their problems: serve runs the others. Warnings (ignored entries of
foreign formats) go to stderr.`,
		Example: `  switchboard config validate
  switchboard config validate ~/.cursor/mcp.json --json`,
		ValidArgsFunction: onlyFirst(completeFiles("yaml", "yml", "json")),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.configValidate(args)
		},
	}
	show := &cobra.Command{
		Use:   "show",
		Short: "Print the resolved configuration, secrets redacted",
		Long: `Print the resolved configuration (variables expanded, env files merged, Docker launches
expanded, defaults applied) as YAML, with the values of secret env vars and headers
replaced by [REDACTED]. --json prints the same keys and values in the same order.`,
		Example: `  switchboard config show
  switchboard config show --config ~/.cursor/mcp.json --json`,
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("usage: switchboard config show [--config FILE] [--json]")
			}
			return a.configShow()
		},
	}
	var out string
	var force bool
	imp := &cobra.Command{
		Use:   "import FILE [-o OUT]",
		Short: "Convert an MCP client's file (Claude, Cursor, VS Code, Zed, Codex, ...) to switchboard.yaml",
		Long: `Convert an MCP client's configuration file to native YAML: Claude Desktop, Claude Code,
Cursor, Windsurf (mcpServers), VS Code (servers), Cline, Gemini CLI, Continue, Zed
(context_servers), Codex (TOML) or seed 004 (tools:), told apart by content as --config does.
${VAR} references stay unexpanded so that no secret is written into the new file; a header
or env value that looks like a credential but is written as a literal is copied, with a note
at the top of the output to move it to an environment variable. The first line names the published JSON Schema, for editors with the YAML language server. Writes
stdout, or OUT (never overwriting it without --force).`,
		Example: `  switchboard config import ~/.config/Claude/claude_desktop_config.json
  switchboard config import .vscode/mcp.json -o switchboard.yaml --force
  switchboard config import ~/.config/zed/settings.json -o switchboard.yaml
  switchboard config import ~/.codex/config.toml`,
		ValidArgsFunction: onlyFirst(completeFiles("json", "yaml", "yml", "toml")),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.configImport(args, out, force)
		},
	}
	imp.Flags().StringVarP(&out, "out", "o", "", "write to `file` instead of stdout (refuses to overwrite without --force)")
	imp.Flags().BoolVar(&force, "force", false, "overwrite the -o file if it exists")
	// Go's flag package took -o as --o; keep that spelling working.
	imp.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "o" {
			name = "out"
		}
		return pflag.NormalizedName(name)
	})
	_ = imp.RegisterFlagCompletionFunc("out", completeFiles("yaml", "yml"))
	cmd.AddCommand(validate, show, imp, newConfigTrustCmd(a), newConfigInputCmd(a))
	return cmd
}

// configValidate validates the configuration, or the file in pos.
func (a *app) configValidate(pos []string) error {
	if len(pos) > 1 {
		return usagef("usage: switchboard config validate [FILE]")
	}
	if len(pos) == 1 {
		a.configPath = a.inWorkDir(pos[0])
	}
	cfg, err := a.loadConfig()
	if err != nil {
		var ve *config.ValidationError
		if a.json && errors.As(err, &ve) {
			_ = a.printJSON(map[string]any{"valid": false, "problems": problemsJSON(ve.Problems)})
			return &exitError{ExitFailure}
		}
		return err
	}
	// A server that cannot start (its env file or cwd does not exist) does
	// not stop the file from loading, but validate is asked whether the
	// file works as it is: its problems are listed, and the exit is 1.
	var cannot []string
	var problems []config.Problem
	for _, srv := range cfg.Servers {
		if len(srv.CannotStart) > 0 {
			cannot = append(cannot, srv.Name)
			problems = append(problems, srv.CannotStart...)
		}
	}
	if a.json {
		out := map[string]any{"valid": len(cannot) == 0, "file": cfg.Source, "format": cfg.Format,
			"servers": len(cfg.Servers), "warnings": problemsJSON(cfg.Warnings)}
		if len(cannot) > 0 {
			out["problems"], out["cannot_start"] = problemsJSON(problems), cannot
		}
		if err := a.printJSON(out); err != nil || len(cannot) == 0 {
			return err
		}
		return &exitError{ExitFailure}
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(a.stderr, "warning: %s\n", w)
	}
	src := cfg.Source
	if src == "" {
		src = "the embedded default (no config file found)"
	}
	if len(cannot) > 0 {
		for _, p := range problems {
			fmt.Fprintln(a.stderr, p)
		}
		fmt.Fprintf(a.stdout, "loads, but %d of its %d server(s) cannot start: %s (%s format): %s; serve starts the others and shows these as cannot_start until fixed\n",
			len(cannot), len(cfg.Servers), src, cfg.Format, strings.Join(cannot, ", "))
		return &exitError{ExitFailure}
	}
	fmt.Fprintf(a.stdout, "ok: %s (%s format): %d server(s)\n", src, cfg.Format, len(cfg.Servers))
	return nil
}

func problemsJSON(ps []config.Problem) []map[string]any {
	out := make([]map[string]any, 0, len(ps))
	for _, p := range ps {
		out = append(out, map[string]any{
			"file": p.Pos.File, "line": p.Pos.Line, "column": p.Pos.Col,
			"field": p.Field, "message": p.Message, "fix": p.Fix, "text": p.String(),
		})
	}
	return out
}

// configShow prints the resolved configuration.
func (a *app) configShow() error {
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	red := cfg.Redacted()
	for i := range red.Servers {
		// Show the launch a Docker server really gets: docker run ...,
		// which Command and Args already hold.
		red.Servers[i].Docker = nil
	}
	out, err := config.MarshalResolved(red)
	if err != nil {
		return err
	}
	if a.output == outputYAML {
		_, err = a.stdout.Write(out)
		return err
	}
	if a.json {
		// The same keys and values as the YAML (snake_case, durations
		// and sizes as written in a file), in the same order.
		js, err := yaml.YAMLToJSON(out)
		if err != nil {
			return fmt.Errorf("converting the configuration to JSON: %w", err)
		}
		var buf bytes.Buffer
		if err := json.Indent(&buf, js, "", "  "); err != nil {
			return fmt.Errorf("converting the configuration to JSON: %w", err)
		}
		buf.WriteByte('\n')
		_, err = a.stdout.Write(buf.Bytes())
		return err
	}
	if cfg.Source != "" {
		fmt.Fprintf(a.stdout, "# resolved from %s (%s format); secret values redacted\n", cfg.Source, cfg.Format)
	} else {
		fmt.Fprintln(a.stdout, "# the embedded default (no config file found); secret values redacted")
	}
	for _, srv := range cfg.Servers {
		for _, p := range srv.CannotStart {
			fmt.Fprintf(a.stdout, "# server %s cannot start: %s\n", srv.Name, p)
		}
	}
	_, err = a.stdout.Write(out)
	return err
}

// configImport converts the file in pos to native YAML, written to out
// (stdout when "").
func (a *app) configImport(pos []string, out string, force bool) error {
	if len(pos) != 1 {
		return usagef("usage: switchboard config import FILE [-o OUT]")
	}
	// Import never needs an input's value: it writes a reference to it.
	opts := a.configOptions(true)
	if opts.Inputs != nil {
		opts.Inputs.Prompt = nil
	}
	data, warnings, err := config.ImportReport(pos[0], opts)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(a.stderr, "warning: %s\n", w)
	}
	if out == "" {
		_, err = a.stdout.Write(data)
		return err
	}
	if !force {
		if _, err := os.Stat(out); err == nil {
			return fmt.Errorf("%s exists; pass --force to overwrite it", out)
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return err
	}
	fmt.Fprintf(a.stderr, "wrote %s\n", absPath(out))
	return nil
}
