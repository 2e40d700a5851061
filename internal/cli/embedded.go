package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/builtin/project"
	"github.com/switchboard-mcp/switchboard/internal/builtin/taskapi"
	"github.com/switchboard-mcp/switchboard/internal/builtin/tasks"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// BuiltinTasks is the name of the built-in task server in the embedded
// default.
const BuiltinTasks = "tasks"

// BuiltinProject is the name of the built-in project server in the
// embedded default (present when the working directory is inside a git
// work tree, whose top level is its root).
const BuiltinProject = "project"

// embedded is the embedded default, used when there is no configuration
// file: the built-in task server (seed 002), served in-process, in front of
// the reference task API, which runs on a loopback port with a fresh
// service token and keeps its tasks in tasks.db in the state directory.
type embedded struct {
	cfg      *config.Config
	settings tasks.Settings
	project  *project.Server // nil outside a git work tree
	// startIndex starts the project server's indexing (once).
	startIndex func()
	stop       func()
}

// startEmbedded starts what the embedded default needs. stop shuts it down.
func (a *app) startEmbedded(ctx context.Context) (*embedded, error) {
	dir, err := a.stateDirectory()
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, filepath.Join(dir, "tasks.db"), store.Options{Logger: a.logger()})
	if err != nil {
		return nil, fault.Wrap(fault.Config, err, "opening the built-in task store")
	}
	ts, ok := st.(store.TaskStore)
	if !ok {
		st.Close()
		return nil, fault.New(fault.Internal, "the built-in task store keeps no tasks")
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	token := hex.EncodeToString(raw[:])
	h, err := taskapi.NewHandler(taskapi.Options{Store: ts, ServiceToken: token, Logger: a.logger()})
	if err != nil {
		st.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.Close()
		return nil, fault.Wrap(fault.Config, err, "starting the built-in task API on loopback")
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.logger().Error("built-in task API stopped", "err", err)
		}
	})
	e := &embedded{
		settings: tasks.Settings{
			ServiceAuthToken:  token,
			BackendURL:        "http://" + ln.Addr().String(),
			LogLevel:          "WARNING",
			Port:              3000,
			BackendTimeout:    30 * time.Second,
			BackendMaxRetries: 2,
		},
	}
	e.stop = func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		wg.Wait()
		st.Close()
	}
	cfg := config.Default()
	cfg.Servers = []config.Server{{
		Name:           BuiltinTasks,
		Description:    "Built-in task server (seed 002) in front of the reference task API",
		Transport:      config.TransportBuiltin,
		Enabled:        true,
		LoadTools:      true,
		LoadPrompts:    true,
		LoadResources:  true,
		ConnectTimeout: cfg.Defaults.ConnectTimeout,
		RequestTimeout: cfg.Defaults.RequestTimeout,
		MaxRetries:     cfg.Defaults.MaxRetries,
	}}
	if root := a.gitTopLevel(); root != "" {
		if err := e.startProject(a, root); err != nil {
			// The task server still works; say why the project one is
			// missing: a warning in the daemon's log, a note on a command's
			// stderr, which no log line reaches unless asked.
			if a.defaultLog != "" || a.logLevel != "" {
				a.logger().Warn("the built-in project server is not available", "root", root, "err", err)
			} else if !a.json {
				fmt.Fprintf(a.stderr, "note: the built-in project server is not available for %s: %s\n", root, oneLine(err))
			}
		} else {
			cfg.Servers = append(cfg.Servers, config.Server{
				Name:           BuiltinProject,
				Description:    "Built-in project server (seed 003) for " + root,
				Transport:      config.TransportBuiltin,
				Enabled:        true,
				LoadTools:      true,
				LoadPrompts:    true,
				LoadResources:  true,
				ConnectTimeout: cfg.Defaults.ConnectTimeout,
				RequestTimeout: cfg.Defaults.RequestTimeout,
				MaxRetries:     cfg.Defaults.MaxRetries,
			})
		}
	}
	e.cfg = cfg
	return e, nil
}

// startProject starts the project server on root, indexing in the
// background until the embedded default stops.
func (e *embedded) startProject(a *app, root string) error {
	var client *llm.Client
	lc, ok, err := llm.ConfigFromEnv(a.getenv)
	if err != nil {
		return err
	}
	if ok {
		if client, err = llm.New(lc); err != nil {
			return err
		}
	}
	ps, err := project.NewServer(project.Options{Root: root, LLM: client, Logger: a.logger()})
	if err != nil {
		return err
	}
	// Indexing starts when something first connects to the server, so
	// that a command that never uses it (call tasks ...) costs nothing.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	e.startIndex = sync.OnceFunc(func() { wg.Go(func() { _ = ps.Run(ctx) }) })
	stopTasks := e.stop
	e.stop = func() {
		cancel()
		wg.Wait()
		stopTasks()
	}
	e.project = ps
	return nil
}

// gitTopLevel returns the top level of the git work tree the command's
// working directory is in, or "" when it is in none.
func (a *app) gitTopLevel() string {
	dir, err := a.workDir()
	if err != nil {
		return ""
	}
	for {
		if fi, err := os.Stat(filepath.Join(dir, ".git")); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// transport makes a fresh in-process connection to a built-in server.
func (e *embedded) transport(name string) func(context.Context) (mcp.Transport, error) {
	if e == nil {
		return nil
	}
	if name == BuiltinProject && e.project != nil {
		return func(ctx context.Context) (mcp.Transport, error) {
			e.startIndex()
			ct, st := mcp.NewInMemoryTransports()
			if _, err := e.project.MCP().Connect(context.WithoutCancel(ctx), st, nil); err != nil {
				return nil, fmt.Errorf("starting the built-in %s server: %w", name, err)
			}
			return ct, nil
		}
	}
	if name != BuiltinTasks {
		return nil
	}
	return func(ctx context.Context) (mcp.Transport, error) {
		srv, err := tasks.NewServer(e.settings, tasks.Options{})
		if err != nil {
			return nil, err
		}
		ct, st := mcp.NewInMemoryTransports()
		// The server session ends when the client closes its side.
		if _, err := srv.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
			return nil, fmt.Errorf("starting the built-in %s server: %w", name, err)
		}
		return ct, nil
	}
}
