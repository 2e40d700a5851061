package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/builtin/project"
	"github.com/switchboard-mcp/switchboard/internal/builtin/taskapi"
	"github.com/switchboard-mcp/switchboard/internal/builtin/tasks"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// EnvTasksToken names the variable holding the task API's service token.
const EnvTasksToken = "SWITCHBOARD_TASKS_TOKEN"

func runBuiltin(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usagef("usage: switchboard builtin task-api [--addr ADDR] [--db PATH|DSN] | builtin tasks [--http ADDR] [--env-file FILE] | builtin project --root DIR [--http ADDR]")
	}
	switch args[0] {
	case "task-api":
		return runTaskAPI(ctx, a, args[1:])
	case "tasks":
		return runTasksServer(ctx, a, args[1:])
	case "project":
		return runProjectServer(ctx, a, args[1:])
	}
	return usagef("unknown built-in server %q; want task-api, tasks or project", args[0])
}

// runTaskAPI serves the reference task REST backend (seed 002's backend).
func runTaskAPI(ctx context.Context, a *app, args []string) error {
	fs := a.flags("builtin task-api", false)
	addr := fs.String("addr", "127.0.0.1:8000", "listen `address`")
	db := fs.String("db", "", "SQLite `file` or postgres:// DSN (default: tasks.db in the state directory)")
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("builtin task-api takes no arguments")
	}
	token := os.Getenv(EnvTasksToken)
	if token == "" {
		return fault.New(fault.Config, "the task API needs a service token: set %s", EnvTasksToken).
			WithSuggestions(fmt.Sprintf("export %s=$(openssl rand -hex 32)", EnvTasksToken))
	}
	where := *db
	if where == "" {
		dir, err := a.stateDirectory()
		if err != nil {
			return err
		}
		where = filepath.Join(dir, "tasks.db")
	}
	st, err := store.Open(ctx, where, store.Options{Logger: a.logger()})
	if err != nil {
		return fault.Wrap(fault.Config, err, "opening the task store")
	}
	defer st.Close()
	ts, ok := st.(store.TaskStore)
	if !ok {
		return fault.New(fault.Internal, "the store at %s keeps no tasks", where)
	}
	h, err := taskapi.NewHandler(taskapi.Options{Store: ts, ServiceToken: token, Logger: a.logger()})
	if err != nil {
		return err
	}
	return a.serveHTTP(ctx, *addr, h, "task API")
}

// runTasksServer serves seed 002's task MCP server, over stdio or HTTP.
func runTasksServer(ctx context.Context, a *app, args []string) error {
	fs := a.flags("builtin tasks", false)
	httpAddr := fs.String("http", "", "serve streamable HTTP at `ADDR` (path /mcp) instead of stdio; \"default\" means 127.0.0.1:MCP_SERVER_PORT")
	envFile := fs.String("env-file", ".env", "dotenv `file` with the settings (the environment wins); it must exist when given; \"\" for none")
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("builtin tasks takes no arguments")
	}
	// The default .env is optional; a file named on the command line must
	// exist, or a typo would go unnoticed. --env-file "" reads none.
	named := false
	fs.Visit(func(f *flag.Flag) { named = named || f.Name == "env-file" })
	if _, err := os.Stat(*envFile); named && *envFile != "" && errors.Is(err, os.ErrNotExist) {
		return fault.New(fault.Config, "the env file %s does not exist", *envFile).
			WithSuggestions("check the --env-file path, or leave the flag out to read ./.env when it exists")
	}
	settings, err := tasks.LoadSettings(os.LookupEnv, *envFile)
	if err != nil {
		return err
	}
	// Seed 002's structured request log: JSON on stderr (stdout may be the
	// MCP stream) at MCP_LOG_LEVEL.
	logger := slog.New(slog.NewJSONHandler(a.stderr, &slog.HandlerOptions{Level: settings.SlogLevel()}))
	srv, err := tasks.NewServer(settings, tasks.Options{Logger: logger})
	if err != nil {
		return err
	}
	if *httpAddr == "" {
		return tasks.ServeStdio(ctx, srv)
	}
	addr := *httpAddr
	if addr == "default" {
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(settings.Port))
	}
	return a.serveHTTP(ctx, addr, tasks.HTTPHandler(srv), "task MCP server (streamable HTTP at /mcp)")
}

// runProjectServer serves seed 003's project MCP server (general_query and
// commit_message) for the project at --root, over stdio or HTTP. An LLM is
// used when the SWITCHBOARD_LLM_* (or OPENAI_*) variables configure one.
func runProjectServer(ctx context.Context, a *app, args []string) error {
	fs := a.flags("builtin project", false)
	root := fs.String("root", ".", "the project `DIR` to index and answer questions about")
	httpAddr := fs.String("http", "", "serve streamable HTTP at `ADDR` (path /mcp) instead of stdio")
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("builtin project takes no arguments; give the directory with --root")
	}
	var client *llm.Client
	cfg, ok, err := llm.ConfigFromEnv(os.Getenv)
	if err != nil {
		return fault.Wrap(fault.Config, err, "reading the LLM settings")
	}
	if ok {
		if client, err = llm.New(cfg); err != nil {
			return fault.Wrap(fault.Config, err, "configuring the LLM")
		}
	}
	// Logs go to stderr: stdout may be the MCP stream.
	srv, err := project.NewServer(project.Options{Root: *root, LLM: client, Logger: a.logger(), Redactor: redact.New(llmSecrets(cfg))})
	if err != nil {
		return err
	}
	if *httpAddr == "" {
		return project.ServeStdio(ctx, srv)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = srv.Run(ctx) })
	err = a.serveHTTP(ctx, *httpAddr, project.HTTPHandler(srv), "project MCP server (streamable HTTP at /mcp)")
	cancel()
	wg.Wait()
	return errors.Join(err, runErr)
}

// llmSecrets are the LLM settings' values that must never appear in a
// result.
func llmSecrets(cfg llm.Config) []string {
	if cfg.APIKey == "" {
		return nil
	}
	return []string{cfg.APIKey}
}

// serveHTTP serves h on addr until ctx is done, then shuts down within 10 s.
func (a *app) serveHTTP(ctx context.Context, addr string, h http.Handler, what string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fault.Wrap(fault.Config, err, "listening on %s", addr)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(a.stderr, "%s listening on http://%s\n", what, ln.Addr())
	var wg sync.WaitGroup
	errc := make(chan error, 1)
	wg.Go(func() { errc <- srv.Serve(ln) })
	select {
	case <-ctx.Done():
	case err := <-errc:
		wg.Wait()
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	wg.Wait()
	return err
}
