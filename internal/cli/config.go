package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/goccy/go-yaml"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

func runConfig(ctx context.Context, a *app, args []string) error {
	sub, rest, ok := subcommand(args)
	if !ok {
		return usagef("usage: switchboard config validate [FILE] | show | import FILE [-o OUT]")
	}
	switch sub {
	case "validate":
		return runConfigValidate(a, rest)
	case "show":
		return runConfigShow(a, rest)
	case "import":
		return runConfigImport(a, rest)
	}
	return usagef("unknown config subcommand %q; want validate, show or import", sub)
}

func runConfigValidate(a *app, args []string) error {
	fs := a.flags("config validate", false)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("usage: switchboard config validate [FILE]")
	}
	if len(pos) == 1 {
		a.configPath = pos[0]
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
	if a.json {
		return a.printJSON(map[string]any{"valid": true, "file": cfg.Source, "format": cfg.Format,
			"servers": len(cfg.Servers), "warnings": problemsJSON(cfg.Warnings)})
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(a.stderr, "warning: %s\n", w)
	}
	src := cfg.Source
	if src == "" {
		src = "the embedded default (no config file found)"
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

func runConfigShow(a *app, args []string) error {
	fs := a.flags("config show", false)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("usage: switchboard config show [--config FILE] [--json]")
	}
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
	_, err = a.stdout.Write(out)
	return err
}

func runConfigImport(a *app, args []string) error {
	fs := a.flags("config import", false)
	out := fs.String("o", "", "write to `file` instead of stdout (refuses to overwrite without --force)")
	force := fs.Bool("force", false, "overwrite the -o file if it exists")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: switchboard config import FILE [-o OUT]")
	}
	data, err := config.Import(pos[0], config.Options{})
	if err != nil {
		return err
	}
	if *out == "" {
		_, err = a.stdout.Write(data)
		return err
	}
	if !*force {
		if _, err := os.Stat(*out); err == nil {
			return fmt.Errorf("%s exists; pass --force to overwrite it", *out)
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	tmp := *out + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, *out); err != nil {
		os.Remove(tmp)
		return err
	}
	fmt.Fprintf(a.stderr, "wrote %s\n", absPath(*out))
	return nil
}
