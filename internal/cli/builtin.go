package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"

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

// newBuiltinCmd is `switchboard builtin`, with task-api, tasks and
// project (docs/builtin.md).
func newBuiltinCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "builtin",
		Short: "Run a built-in server: the task REST backend, the task MCP server, the project server",
		Long: `Run one of the built-in servers on its own: the reference task REST backend (task-api),
the task MCP server (tasks) or the project MCP server (project). They log warnings to
stderr unless --log-level says otherwise. Reference: docs/builtin.md.`,
		Example: `  SWITCHBOARD_TASKS_TOKEN=$(openssl rand -hex 32) switchboard builtin task-api
  switchboard builtin tasks --env-file .env
  switchboard builtin project --root . --http 127.0.0.1:8080`,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			a.defaultLog = "warn" // a server's logs are its outcome
			return a.before(cmd, args)
		},
		RunE: subcommandRequired,
	}

	var addr, db string
	taskAPI := &cobra.Command{
		Use:   "task-api",
		Short: "Serve the reference task REST backend",
		Long: `Serve the reference task REST backend (seed 002's backend): tasks kept in SQLite
(tasks.db in the state directory by default) or PostgreSQL, every request authenticated
with the service token from SWITCHBOARD_TASKS_TOKEN and scoped to the user in X-User-ID.
It listens on loopback unless told otherwise.`,
		Example: `  SWITCHBOARD_TASKS_TOKEN=$(openssl rand -hex 32) switchboard builtin task-api
  switchboard builtin task-api --addr 127.0.0.1:8000 --db postgres://localhost/tasks`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("builtin task-api takes no arguments")
			}
			return a.taskAPI(cmd.Context(), addr, db)
		},
	}
	taskAPI.Flags().StringVar(&addr, "addr", "127.0.0.1:8000", "listen `address`")
	taskAPI.Flags().StringVar(&db, "db", "", "SQLite `file` or postgres:// DSN (default: tasks.db in the state directory)")
	_ = taskAPI.RegisterFlagCompletionFunc("db", completeFiles())

	var tasksHTTP, envFile string
	tasksCmd := &cobra.Command{
		Use:   "tasks",
		Short: "Serve the task MCP server over stdio or HTTP",
		Long: `Serve seed 002's task MCP server over stdio (default) or stateless streamable HTTP at
/mcp. Its settings come from the environment and the --env-file, with seed 002's names:
SERVICE_AUTH_TOKEN (required), FASTAPI_BASE_URL (the backend, required), MCP_LOG_LEVEL,
MCP_SERVER_PORT (3000), BACKEND_TIMEOUT (30 s), BACKEND_MAX_RETRIES (2). Its request log
is JSON on stderr at MCP_LOG_LEVEL.`,
		Example: `  switchboard builtin tasks
  switchboard builtin tasks --http default --env-file ./tasks.env`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("builtin tasks takes no arguments")
			}
			return a.tasksServer(cmd.Context(), tasksHTTP, envFile, cmd.Flags().Changed("env-file"))
		},
	}
	tasksCmd.Flags().StringVar(&tasksHTTP, "http", "", "serve streamable HTTP at `ADDR` (path /mcp) instead of stdio; \"default\" means 127.0.0.1:MCP_SERVER_PORT")
	tasksCmd.Flags().StringVar(&envFile, "env-file", ".env", "dotenv `file` with the settings (the environment wins); it must exist when given; \"\" for none")
	_ = tasksCmd.RegisterFlagCompletionFunc("env-file", completeFiles())

	var root, projectHTTP string
	projectCmd := &cobra.Command{
		Use:   "project",
		Short: "Serve the project MCP server for a code base",
		Long: `Serve seed 003's project MCP server (general_query and commit_message) for the project
at --root, over stdio (default) or streamable HTTP at /mcp. An LLM is used when the
SWITCHBOARD_LLM_* (or OPENAI_*) variables configure one.`,
		Example: `  switchboard builtin project --root .
  switchboard builtin project --root ~/src/app --http 127.0.0.1:8080`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("builtin project takes no arguments; give the directory with --root")
			}
			return a.projectServer(cmd.Context(), root, projectHTTP)
		},
	}
	projectCmd.Flags().StringVar(&root, "root", ".", "the project `DIR` to index and answer questions about")
	projectCmd.Flags().StringVar(&projectHTTP, "http", "", "serve streamable HTTP at `ADDR` (path /mcp) instead of stdio")
	_ = projectCmd.RegisterFlagCompletionFunc("root", completeDirs)

	cmd.AddCommand(taskAPI, tasksCmd, projectCmd)
	return cmd
}

// taskAPI serves the reference task REST backend (seed 002's backend).
func (a *app) taskAPI(ctx context.Context, addr, db string) error {
	token := a.getenv(EnvTasksToken)
	if token == "" {
		return fault.New(fault.Config, "the task API needs a service token: set %s", EnvTasksToken).
			WithSuggestions(fmt.Sprintf("export %s=$(openssl rand -hex 32)", EnvTasksToken))
	}
	where := db
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
	return a.serveHTTP(ctx, addr, h, "task API")
}

// tasksServer serves seed 002's task MCP server, over stdio or HTTP.
// named says the --env-file flag was given.
func (a *app) tasksServer(ctx context.Context, httpAddr, envFile string, named bool) error {
	// The default .env is optional; a file named on the command line must
	// exist, or a typo would go unnoticed. --env-file "" reads none.
	if _, err := os.Stat(envFile); named && envFile != "" && errors.Is(err, os.ErrNotExist) {
		return fault.New(fault.Config, "the env file %s does not exist", envFile).
			WithSuggestions("check the --env-file path, or leave the flag out to read ./.env when it exists")
	}
	settings, err := tasks.LoadSettings(a.lookupEnv, envFile)
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
	if httpAddr == "" {
		return tasks.ServeStdio(ctx, srv)
	}
	addr := httpAddr
	if addr == "default" {
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(settings.Port))
	}
	return a.serveHTTP(ctx, addr, tasks.HTTPHandler(srv), "task MCP server (streamable HTTP at /mcp)")
}

// projectServer serves seed 003's project MCP server (general_query and
// commit_message) for the project at root, over stdio or HTTP. An LLM is
// used when the SWITCHBOARD_LLM_* (or OPENAI_*) variables configure one.
func (a *app) projectServer(ctx context.Context, root, httpAddr string) error {
	var client *llm.Client
	cfg, ok, err := llm.ConfigFromEnv(a.getenv)
	if err != nil {
		return fault.Wrap(fault.Config, err, "reading the LLM settings")
	}
	if ok {
		if client, err = llm.New(cfg); err != nil {
			return fault.Wrap(fault.Config, err, "configuring the LLM")
		}
	}
	// Logs go to stderr: stdout may be the MCP stream.
	srv, err := project.NewServer(project.Options{Root: root, LLM: client, Logger: a.logger(), Redactor: redact.New(llmSecrets(cfg))})
	if err != nil {
		return err
	}
	if httpAddr == "" {
		return project.ServeStdio(ctx, srv)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = srv.Run(ctx) })
	err = a.serveHTTP(ctx, httpAddr, project.HTTPHandler(srv), "project MCP server (streamable HTTP at /mcp)")
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
