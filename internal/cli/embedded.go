package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/builtin/taskapi"
	"github.com/switchboard-mcp/switchboard/internal/builtin/tasks"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// BuiltinTasks is the name of the built-in task server in the embedded
// default.
const BuiltinTasks = "tasks"

// embedded is the embedded default, used when there is no configuration
// file: the built-in task server (seed 002), served in-process, in front of
// the reference task API, which runs on a loopback port with a fresh
// service token and keeps its tasks in tasks.db in the state directory.
type embedded struct {
	cfg      *config.Config
	settings tasks.Settings
	stop     func()
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
	e.cfg = cfg
	return e, nil
}

// transport makes a fresh in-process connection to a built-in server.
func (e *embedded) transport(name string) func(context.Context) (mcp.Transport, error) {
	if e == nil || name != BuiltinTasks {
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
