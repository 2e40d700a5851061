package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// stdin is where `--args -` reads from; tests replace it.
var stdin io.Reader = os.Stdin

func runCall(ctx context.Context, a *app, args []string) error {
	fs := a.flags("call", true)
	rawArgs := fs.String("args", "", "arguments as a JSON object, `@file`, or - for stdin (key=value pairs win)")
	timeout := fs.Duration("timeout", 0, "request timeout (default: the server's request_timeout; 1s to 5m)")
	outDir := fs.String("out-dir", "", "`directory` for images, audio and binary resources (default: the temp dir)")
	maxDuration := fs.Duration("max-duration", 0, "budget: end the call after this long and return what it has, marked partial")
	maxCost := fs.Float64("max-cost", 0, "budget: end the call once the cost the tool reports exceeds this, returning what it has")
	cfg, server, rest, err := a.serverCommand(fs, args, "call SERVER TOOL [key=value ...]")
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usagef("missing TOOL; usage: switchboard call SERVER TOOL [key=value ...]")
	}
	toolName, pairs := rest[0], rest[1:]
	if *timeout != 0 && (*timeout < config.MinRequestTimeout || *timeout > config.MaxRequestTimeout) {
		return usagef("--timeout %s is out of range; give 1s to 5m", *timeout)
	}

	b, done, err := a.backend(ctx, cfg, scope{connect: true, only: []string{server}})
	if err != nil {
		return err
	}
	defer done()
	// The tool's schema types the key=value pairs. A tool that is not
	// found still goes to the engine, which reports and records it.
	// So does a call to a server that is not connected or disabled: the
	// engine records every attempt in the history and says why it failed.
	var schema any
	tool, err := b.Tool(ctx, server, toolName)
	switch {
	case err == nil:
		schema = tool.InputSchema
	case ctx.Err() != nil:
		return err
	}
	arguments, err := buildArgs(*rawArgs, stdin, pairs, schema)
	if err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) && fe.Kind == fault.Validation {
			if len(fe.Fields) > 0 {
				fe.Message = fmt.Sprintf("arguments for %s/%s are invalid", server, toolName)
			}
			fe.WithDetail("server", server).WithDetail("tool", toolName)
		}
		return err
	}
	var raw json.RawMessage
	if arguments != nil {
		if raw, err = json.Marshal(arguments); err != nil {
			return fmt.Errorf("encoding the arguments: %w", err)
		}
	}

	bar := newProgressBar(a.stderr)
	start := time.Now()
	res, err := b.Call(ctx, control.CallRequest{
		Server:    server,
		Tool:      toolName,
		Arguments: raw,
		Source:    string(toolcall.SourceCLI),
		Identity:  cliIdentity(),
		Timeout:   *timeout,
		Budget:    control.Budget{MaxDuration: *maxDuration, MaxCost: *maxCost},
		OnProgress: func(p toolcall.Progress) {
			bar.update(&mcp.ProgressNotificationParams{Progress: p.Processed, Total: p.Total, Message: p.Message})
		},
	})
	bar.clear()
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	if res.Truncated {
		fmt.Fprintf(a.stderr, "note: the result was %d bytes and was truncated to limits.max_output\n", res.Bytes)
	}
	if res.Partial {
		fmt.Fprintf(a.stderr, "note: partial result (budget exceeded): %s\n", res.Missing)
	}
	if a.json {
		if err := a.printJSON(res.Result); err != nil {
			return err
		}
		if res.Result.IsError {
			return &exitError{ExitFailure}
		}
		return nil
	}
	out := a.stdout
	if res.Result.IsError {
		out = a.stderr
	}
	r := &renderer{out: out, outDir: *outDir, prefix: toolName}
	for _, block := range res.Result.Content {
		if err := r.content(block); err != nil {
			return err
		}
	}
	if len(res.Result.Content) == 0 && res.Result.StructuredContent != nil {
		if err := a.printJSONTo(out, res.Result.StructuredContent); err != nil {
			return err
		}
	}
	a.logger().Debug("call finished", "request_id", res.ID, "server", server, "tool", toolName, "duration", elapsed)
	if res.Result.IsError {
		return &exitError{ExitFailure}
	}
	return nil
}

// cliIdentity is the identity of a CLI caller: the OS user.
func cliIdentity() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}
