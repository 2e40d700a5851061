package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/agent"
	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/hooks"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// session is an in-process connection to some or all configured servers,
// with their catalog, the execution engine and the history, for the
// lifetime of one command.
type session struct {
	cfg   *config.Config
	pool  *upstream.Pool
	cat   *catalog.Catalog
	eng   *toolcall.Engine
	store store.Store
	rec   *store.Recorder
	// hooks runs the configured hooks around the session's calls; nil
	// when none are configured.
	hooks *hooks.Engine
	// stderr receives the session's own warnings.
	stderr io.Writer
	// answers routes what a server asks during a call (elicitation,
	// sampling) to the answerer in the call's context (answer.With).
	answers *answer.Calls
	// getenv is the command's environment (the LLM endpoint's variables
	// of an agent action).
	getenv func(string) string

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// openStore opens the history and state store: history.store from the
// configuration, else switchboard.db in the state directory.
func (a *app) openStore(ctx context.Context, cfg *config.Config) (store.Store, error) {
	where := cfg.History.Store
	if where == "" {
		dir, err := a.stateDirectory()
		if err != nil {
			return nil, err
		}
		where = filepath.Join(dir, "switchboard.db")
	}
	st, err := store.Open(ctx, where, store.Options{Logger: a.logger()})
	if err != nil {
		return nil, fault.Wrap(fault.Config, err, "opening the history store").
			WithSuggestions("check history.store in the configuration, or the state directory's permissions")
	}
	return st, nil
}

// stopFlag is the file whose presence means calls are stopped
// (switchboard stop); every session watches it.
func (a *app) stopFlag() (string, error) {
	dir, err := a.stateDirectory()
	if err != nil {
		return "", err
	}
	return control.StopFlagPath(dir), nil
}

// open connects to the given servers (all when only is empty), one attempt
// each in parallel, and discovers their lists. Servers that fail stay in
// the pool with their error; the caller decides what that means.
func (a *app) open(ctx context.Context, cfg *config.Config, only ...string) (*session, error) {
	st, err := a.openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	flag, err := a.stopFlag()
	if err != nil {
		st.Close()
		return nil, err
	}
	s := &session{cfg: cfg, store: st, stderr: a.stderr, answers: &answer.Calls{}, getenv: a.getenv}
	var servers []config.Server
	for _, srv := range cfg.Servers {
		if len(only) == 0 || contains(only, srv.Name) {
			servers = append(servers, srv)
		}
	}
	m, err := a.oauthManager()
	if err != nil {
		st.Close()
		return nil, err
	}
	pool, err := upstream.NewPool(upstream.PoolOptions{
		Config: cfg,
		Only:   only,
		Store:  st,
		Logger: a.logger(),
		Once:   true,
		OAuth:  m,
		Events: func(server string) upstream.Events {
			return upstream.Events{
				ToolsChanged:     func() { s.cat.Invalidate(server, catalog.KindTools) },
				PromptsChanged:   func() { s.cat.Invalidate(server, catalog.KindPrompts) },
				ResourcesChanged: func() { s.cat.Invalidate(server, catalog.KindResources) },
				// To the command's call it belongs to, when its answerer
				// shows them (switchboard call's terminal).
				//lint:ignore SA1019 shown to the person who made the call.
				Log: func(ctx context.Context, p *mcp.LoggingMessageParams) { s.answers.Log(ctx, server, p) },
			}
		},
		DialOptions: func(server string, o *upstream.DialOptions) {
			o.MaxResultBytes = int(cfg.Limits.MaxOutputBytes)
			o.NewTransport = a.emb.transport(server)
			o.Requests = s.answers.Requests(server, upstream.ClientRequests{})
		},
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	s.pool = pool
	s.cat = catalog.New(catalog.Options{Source: pool, Servers: servers, TTL: cfg.Defaults.DiscoveryTTL, Logger: a.logger()})
	s.rec = store.NewRecorder(st, store.RecorderOptions{Keep: cfg.History.Keep, Logger: a.logger()})
	s.eng, err = toolcall.New(toolcall.Options{Config: cfg, Upstreams: pool, Catalog: s.cat, Recorder: s.rec, Logger: a.logger(), Answers: s.answers})
	if err != nil {
		st.Close()
		return nil, err
	}

	if len(cfg.Hooks.List) > 0 {
		dir, err := a.stateDirectory()
		if err != nil {
			st.Close()
			return nil, err
		}
		s.hooks, err = hooks.New(hooks.Options{
			Config: cfg, Calls: s.eng, Catalog: s.cat, Store: st,
			Agent: s.runAgent, StateDir: dir, Logger: a.logger(),
		})
		if err != nil {
			st.Close()
			return nil, err
		}
		s.eng.SetInterceptor(s.hooks)
	}

	// These outlive ctx until close, so that an interrupted command still
	// closes its servers and writes its history.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	if s.hooks != nil {
		s.wg.Add(1)
		go func() { defer s.wg.Done(); _ = s.hooks.Run(runCtx) }()
	}
	s.wg.Add(4)
	go func() { defer s.wg.Done(); _ = pool.Run(runCtx) }()
	go func() { defer s.wg.Done(); _ = s.cat.Run(runCtx) }()
	go func() { defer s.wg.Done(); _ = s.rec.Run(runCtx) }()
	go func() { defer s.wg.Done(); control.WatchStopFlag(runCtx, flag, s.eng) }()

	if err := pool.WaitSettled(ctx); err != nil {
		s.close()
		return nil, fault.Wrap(fault.Cancelled, err, "connecting was interrupted")
	}
	if a.signInAdhoc(ctx, s, m) {
		// Signed in: connect again, now with the tokens.
		s.close()
		return a.open(ctx, cfg, only...)
	}
	_ = s.cat.RefreshAll(ctx)
	if a.serverLogs {
		s.askForLogs(ctx, a.logger())
	}
	return s, nil
}

// askForLogs asks each connected server that declares logging to log at
// serverLogLevel (logging/setLevel): a server that logs only once its
// client has set a level (go-sdk servers) then logs to switchboard call,
// which shows every message, as a server that logs without one
// (TypeScript SDK servers) already does. (A server on protocol 2026-07-28
// takes the level with the call instead: control.CallRequest.LogLevel.)
func (s *session) askForLogs(ctx context.Context, logger *slog.Logger) {
	for _, snap := range s.pool.Snapshots() {
		c, err := s.pool.Client(snap.Server)
		if err != nil {
			continue
		}
		//lint:ignore SA1019 servers before 2026-07-28 log so.
		if ir := c.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Logging == nil {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, askForLogsTimeout)
		//lint:ignore SA1019 servers before 2026-07-28 log so.
		if err := c.Session().SetLoggingLevel(lctx, &mcp.SetLoggingLevelParams{Level: serverLogLevel}); err != nil {
			logger.Debug("asking a server for its log messages", "server", snap.Server, "err", err)
		}
		cancel()
	}
}

// serverLogLevel is the level of the server log messages switchboard call
// asks for: all of them, the call shows each.
const serverLogLevel = "debug"

// askForLogsTimeout bounds askForLogs' request to one server: its log
// messages are not worth holding the call up for.
const askForLogsTimeout = 2 * time.Second

// close disconnects every server, writes the history and waits for the
// session's goroutines.
func (s *session) close() {
	if s.hooks != nil {
		// The tool.after hooks of the command's own calls run before it
		// exits, within a bound.
		ctx, cancel := context.WithTimeout(context.Background(), hooksIdleWait)
		if err := s.hooks.Idle(ctx); err != nil {
			fmt.Fprintf(s.stderr, "switchboard: hooks still running after %s were cancelled (see switchboard hooks log)\n", hooksIdleWait)
		}
		cancel()
	}
	s.cancel()
	s.wg.Wait()
	_ = s.store.Close()
}

// hooksIdleWait bounds how long a command waits for its hooks at exit.
const hooksIdleWait = time.Minute

// runAgent is the hooks' agent action in a command's session.
func (s *session) runAgent(ctx context.Context, req hooks.AgentRequest) (string, error) {
	// The endpoint from the command's environment, as switchboard agent
	// reads it.
	cc, err := agent.ClientConfig(s.cfg.LLM, s.getenv)
	if err != nil {
		return "", err
	}
	client, err := llm.New(cc)
	if err != nil {
		return "", err
	}
	out, err := agent.Run(ctx, agent.Options{
		Config: s.cfg, Engine: s.eng, Catalog: s.cat, Client: client, Prompt: req.Prompt,
		Selection: agent.Selection{Servers: req.Servers, Tools: req.Tools},
		Identity:  req.Identity, Origin: req.Origin,
	})
	if out == nil {
		return "", err
	}
	return out.Answer, err
}

// failures returns the error of every enabled server that is not connected.
func (s *session) failures() []error {
	var errs []error
	for _, snap := range s.pool.Snapshots() {
		if !snap.Enabled {
			continue
		}
		if _, err := s.pool.Client(snap.Server); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// serverCommand loads the configuration for a single-server command and
// returns the server (the ad hoc one with --stdio/--url) and the
// arguments after it. usage is the command's synopsis after "switchboard".
func (a *app) serverCommand(args []string, usage string) (*config.Config, string, []string, error) {
	cfg, err := a.loadConfig()
	if err != nil {
		return nil, "", nil, err
	}
	server, rest, err := a.resolveServer(cfg, args, usage)
	if err != nil {
		return nil, "", nil, err
	}
	return cfg, server, rest, nil
}

// serverItemCommand is serverCommand for a command of SERVER and an item
// of it (a tool, a prompt), which also takes the item by the name the
// gateway lists it under, SERVER__ITEM (switchboard call tasks__list_tasks),
// when no server has that name.
func (a *app) serverItemCommand(args []string, usage string) (*config.Config, string, []string, error) {
	cfg, err := a.loadConfig()
	if err != nil {
		return nil, "", nil, err
	}
	if !a.adhoc() && len(args) > 0 {
		if _, ok := cfg.Server(args[0]); !ok {
			if server, item, _ := strings.Cut(args[0], "__"); item != "" {
				if _, ok := cfg.Server(server); ok {
					return cfg, server, append([]string{item}, args[1:]...), nil
				}
			}
		}
	}
	server, rest, err := a.resolveServer(cfg, args, usage)
	if err != nil {
		return nil, "", nil, err
	}
	return cfg, server, rest, nil
}

// resolveServer returns the server a command names: the ad hoc server when
// --stdio/--url is given (then no SERVER argument is taken), else args[0].
func (a *app) resolveServer(cfg *config.Config, args []string, what string) (string, []string, error) {
	if a.adhoc() {
		return cfg.Servers[0].Name, args, nil
	}
	if len(args) == 0 {
		return "", nil, usagef("missing SERVER; usage: switchboard %s", what)
	}
	if _, ok := cfg.Server(args[0]); !ok {
		return "", nil, upstream.UnknownServer(cfg, args[0])
	}
	return args[0], args[1:], nil
}
