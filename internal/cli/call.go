package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// stdin is where `--args -` reads from; tests replace it.
var stdin io.Reader = os.Stdin

func runCall(ctx context.Context, a *app, args []string) error {
	fs := a.flags("call", true)
	rawArgs := fs.String("args", "", "arguments as a JSON object, `@file`, or - for stdin (key=value pairs win)")
	timeout := fs.Duration("timeout", 0, "request timeout (default: the server's request_timeout; 1s to 5m)")
	outDir := fs.String("out-dir", "", "`directory` for images, audio and binary resources (default: the temp dir)")
	noValidate := fs.Bool("no-validate", false, "send the arguments without checking them against the tool's schema")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	server, rest, err := a.resolveServer(cfg, pos, "call SERVER TOOL [key=value ...]")
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usagef("missing TOOL; usage: switchboard call SERVER TOOL [key=value ...]")
	}
	toolName, pairs := rest[0], rest[1:]
	srv, _ := cfg.Server(server)
	reqTimeout := srv.RequestTimeout
	if *timeout != 0 {
		if *timeout < config.MinRequestTimeout || *timeout > config.MaxRequestTimeout {
			return usagef("--timeout %s is out of range; give 1s to 5m", *timeout)
		}
		reqTimeout = *timeout
	}

	s, c, err := a.connectOne(ctx, cfg, server)
	if err != nil {
		return err
	}
	defer s.close()
	tool, err := s.findTool(ctx, server, toolName)
	if err != nil {
		return err
	}
	arguments, err := buildArgs(*rawArgs, stdin, pairs, tool.Def.InputSchema)
	if err != nil {
		return err
	}
	if !*noValidate {
		if err := tool.ValidateArgs(arguments); err != nil {
			return err
		}
	}

	bar := newProgressBar(a.stderr)
	cctx := ctx
	if reqTimeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, reqTimeout)
		defer cancel()
	}
	start := time.Now()
	res, err := c.CallTool(cctx, &mcp.CallToolParams{Name: toolName, Arguments: arguments}, bar.update)
	bar.clear()
	if err != nil {
		if fault.KindOf(err) == fault.Timeout {
			fe := fault.As(err)
			fe.Message = fmt.Sprintf("%s/%s did not answer within %s; the call was cancelled upstream", server, toolName, reqTimeout)
			fe.WithSuggestions("raise it with --timeout, or request_timeout in the config")
			return fe
		}
		return err
	}
	elapsed := time.Since(start)
	if a.json {
		if err := a.printJSON(res); err != nil {
			return err
		}
		if res.IsError {
			return &exitError{ExitFailure}
		}
		return nil
	}
	out := a.stdout
	if res.IsError {
		out = a.stderr
	}
	r := &renderer{out: out, outDir: *outDir, prefix: toolName}
	for _, block := range res.Content {
		if err := r.content(block); err != nil {
			return err
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		if err := a.printJSONTo(out, res.StructuredContent); err != nil {
			return err
		}
	}
	a.logger().Debug("call finished", "server", server, "tool", toolName, "duration", elapsed)
	if res.IsError {
		return &exitError{ExitFailure}
	}
	return nil
}
