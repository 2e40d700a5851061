package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

func runConfig(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usagef("usage: switchboard config validate [FILE] | show | import FILE [-o OUT]")
	}
	switch args[0] {
	case "validate":
		return runConfigValidate(a, args[1:])
	case "show":
		return runConfigShow(a, args[1:])
	case "import":
		return runConfigImport(a, args[1:])
	}
	return usagef("unknown config subcommand %q; want validate, show or import", args[0])
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
	if a.json {
		return a.printJSON(red)
	}
	out, err := config.MarshalResolved(red)
	if err != nil {
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
