package cli

import (
	"context"
	"os"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
)

// envNoDaemon, set to 1, makes every command work in-process even when a
// daemon is running.
const envNoDaemon = "SWITCHBOARD_NO_DAEMON"

// daemonProbe bounds how long a command waits for the daemon to say who it
// is before working in-process.
const daemonProbe = 2 * time.Second

// scope says what a command needs from an in-process backend.
type scope struct {
	// connect opens the servers in only (all when empty); without it the
	// backend has the store alone.
	connect bool
	only    []string
}

// socketPath is the daemon's control socket in the state directory.
func (a *app) socketPath() (string, error) {
	dir, err := a.stateDirectory()
	if err != nil {
		return "", err
	}
	return control.SocketPath(dir), nil
}

// daemon returns a client for the daemon on this state directory's socket
// and its status, or nil when none answers, when SWITCHBOARD_NO_DAEMON=1,
// or in ad hoc mode. Unless anyConfig, the daemon must also serve the same
// configuration as cfg (the same file, or both the embedded default).
func (a *app) daemon(ctx context.Context, cfg *config.Config, anyConfig bool) (*control.Client, control.Status) {
	src := ""
	if cfg != nil {
		src = cfg.Source
	}
	return a.daemonFor(ctx, src, anyConfig)
}

// configSource returns the configuration file a command uses — the
// --config flag, else the file config.Find picks — or "" for the embedded
// default, without reading it. A command that only asks the daemon to act
// on its configuration (reload) needs no more: the daemon reads the file
// in its own environment, where the variables it refers to (token_env,
// ${VAR}) are set, and the caller's shell need not have them.
func (a *app) configSource() (string, error) {
	if a.configPath != "" {
		return a.configPath, nil
	}
	return a.findConfig()
}

// findConfig is the configuration file found without --config (see
// config.Find), in the command's working directory and environment.
func (a *app) findConfig() (string, error) {
	return config.Find(a.dir, a.lookupEnv)
}

// fileDaemon returns a client for the daemon that serves the configuration
// file this command would use, and its status, as daemon does, but
// without loading the file: the caller's environment need not have the
// variables the file refers to. With no such daemon (or in ad hoc mode)
// the client is nil and the command loads the file itself.
func (a *app) fileDaemon(ctx context.Context) (*control.Client, control.Status, error) {
	if a.adhoc() {
		return nil, control.Status{}, nil
	}
	src, err := a.configSource()
	if err != nil {
		return nil, control.Status{}, err
	}
	c, st := a.daemonFor(ctx, src, false)
	return c, st, nil
}

// daemonFor is daemon for the configuration file src ("" for the embedded
// default), which need not have been loaded.
func (a *app) daemonFor(ctx context.Context, src string, anyConfig bool) (*control.Client, control.Status) {
	if a.adhoc() || a.getenv(envNoDaemon) == "1" {
		return nil, control.Status{}
	}
	path, err := a.socketPath()
	if err != nil {
		return nil, control.Status{}
	}
	if _, err := os.Stat(path); err != nil {
		return nil, control.Status{}
	}
	c := control.Dial(path)
	pctx, cancel := context.WithTimeout(ctx, daemonProbe)
	defer cancel()
	st, err := c.Status(pctx)
	if err != nil {
		a.logger().Debug("no daemon answers; working in-process", "socket", path, "err", err)
		c.Close()
		return nil, control.Status{}
	}
	if !anyConfig && st.ConfigSource != control.AbsSource(src) {
		a.logger().Info("the daemon serves another configuration; working in-process", "daemon_config", st.ConfigSource, "pid", st.PID)
		c.Close()
		return nil, st
	}
	return c, st
}

// backend returns the running daemon's backend when it serves this
// configuration, else a backend over an in-process session scoped by sc.
// done releases it.
func (a *app) backend(ctx context.Context, cfg *config.Config, sc scope) (control.Backend, func(), error) {
	if c, _ := a.daemon(ctx, cfg, false); c != nil {
		return c, c.Close, nil
	}
	return a.localBackend(ctx, cfg, sc)
}

// localBackend returns a backend over an in-process session scoped by sc.
func (a *app) localBackend(ctx context.Context, cfg *config.Config, sc scope) (control.Backend, func(), error) {
	flag, err := a.stopFlag()
	if err != nil {
		return nil, nil, err
	}
	if !sc.connect {
		st, err := a.openStore(ctx, cfg)
		if err != nil {
			return nil, nil, err
		}
		b := control.NewLocal(control.Components{
			Config:   func() *config.Config { return cfg },
			Store:    st,
			StopFlag: flag,
			Version:  currentBuild().Version,
		})
		return b, func() { _ = st.Close() }, nil
	}
	s, err := a.open(ctx, cfg, sc.only...)
	if err != nil {
		return nil, nil, err
	}
	return control.NewLocal(a.components(s)), s.close, nil
}

// components are a session's parts, for a local control backend.
func (a *app) components(s *session) control.Components {
	flag, _ := a.stopFlag()
	return control.Components{
		Config:   func() *config.Config { return s.cfg },
		Pool:     s.pool,
		Catalog:  s.cat,
		Engine:   s.eng,
		Store:    s.store,
		StopFlag: flag,
		Version:  currentBuild().Version,
	}
}

// stopBackend returns the backend for stop and resume, which need no
// configuration: the daemon on this state directory whatever it serves,
// else the stop switch file alone.
func (a *app) stopBackend(ctx context.Context) (control.Backend, func(), error) {
	if c, _ := a.daemon(ctx, nil, true); c != nil {
		return c, c.Close, nil
	}
	flag, err := a.stopFlag()
	if err != nil {
		return nil, nil, err
	}
	return control.NewLocal(control.Components{StopFlag: flag, Version: currentBuild().Version}), func() {}, nil
}
