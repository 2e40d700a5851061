// Package hooks is the event hooks engine (issue 5, seed 000's MCP actions).
//
// Events are named, dotted and carry a context map: the built-in tool.before,
// tool.after and tool.failed around every call through the execution engine
// (the [Engine] is a [toolcall.Interceptor]), server.* and catalog.changed
// from the daemon, git.* from the scripts `switchboard hooks install-git`
// writes, and any workflow event fired with `switchboard hooks fire` or
// POST /hooks/events/NAME. Every event gets the standard context (timestamp,
// user, branch, feature, repo) from a cached [vcs.Describe].
//
// A configured hook (config.Hook) matches an event by name or glob and by
// conditions on context fields, and runs its actions in order: an MCP tool
// call with parameter mappings (through the execution engine, so limits,
// redaction and history apply), a program without a shell, an HTTP POST, a
// git operation, a GitHub issue or comment, an agent run, or another event.
// Asynchronous runs share a pool of workers (hook_settings.max_concurrent,
// 5) behind a bounded queue; a run that finds the queue full is recorded as
// rejected. tool.before hooks run on the caller's goroutine and decide:
// allow, deny with a reason, or rewrite the arguments; several decisions
// merge deterministically (deny beats rewrite beats allow, rewrites applied
// in priority order). Chains of events stop at hook_settings.max_depth and a
// cycle is refused. Every run is recorded in the store with the redacted
// context. Hooks from a repository-local file run only once the file is
// trusted (see [Trust]).
package hooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/vcs"
)

// Status is how a hook run ended.
type Status string

// The statuses of a run.
const (
	StatusSuccess   Status = "success"
	StatusFailure   Status = "failure"
	StatusSkipped   Status = "skipped"   // not run: server unavailable, earlier guard denied
	StatusTimeout   Status = "timeout"   // the action ran out of time
	StatusRejected  Status = "rejected"  // not run: queue full, depth limit, cycle
	StatusBlocked   Status = "blocked"   // the action denied the event
	StatusCancelled Status = "cancelled" // not run: the engine shut down first
	StatusPlanned   Status = "planned"   // dry run: would run
)

// The built-in events.
const (
	EventToolBefore        = "tool.before"
	EventToolAfter         = "tool.after"
	EventToolFailed        = "tool.failed"
	EventServerAvailable   = "server.available"
	EventServerUnavailable = "server.unavailable"
	EventServerDisabled    = "server.disabled"
	EventCatalogChanged    = "catalog.changed"
)

// AgentFunc runs the agent loop for an agent action and returns its
// final answer.
type AgentFunc func(ctx context.Context, req AgentRequest) (string, error)

// AgentRequest is what an agent action asks the agent loop to do.
type AgentRequest struct {
	// Prompt is the action's prompt, expanded.
	Prompt string
	// Servers and Tools limit the tools the model may use (empty: all).
	Servers, Tools []string
	// Identity is the identity of the run's tool calls (hook:NAME), as
	// for an mcp action's.
	Identity string
	// Origin names the hook and the event that started the run (hook NAME
	// on EVENT (event ID)); each tool call's origin in the history starts
	// with it.
	Origin string
}

// DescribeFunc returns the git context of a directory; vcs.Describe is the
// default.
type DescribeFunc func(ctx context.Context, dir string) (vcs.Info, error)

// Options configures an Engine.
type Options struct {
	// Config holds the hooks (required).
	Config *config.Config
	// Calls runs mcp actions; nil makes them fail.
	Calls *toolcall.Engine
	// Catalog supplies tool schemas for checking parameter mappings; nil
	// leaves them unchecked.
	Catalog *catalog.Catalog
	// Store records every run; nil records nothing.
	Store store.Store
	// Agent runs agent actions; nil makes them fail with "no LLM
	// configured".
	Agent AgentFunc
	// StateDir holds the trust records; "" means no file is trusted
	// (hooks from files that need trust do not run).
	StateDir string
	// Dir is the repository directory of the standard context, where
	// commands and git actions run; "" means the working directory.
	Dir string
	// Describe overrides vcs.Describe (tests, benchmarks).
	Describe DescribeFunc
	// HTTPClient is used by http and github actions; nil means a client
	// with no overall timeout (each action has its own).
	HTTPClient *http.Client
	// Logger receives one line per failed run; nil discards.
	Logger *slog.Logger
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Audit records the calls a guard denies; nil records nothing.
	Audit *audit.Auditor
}

// Engine runs hooks. It is safe for concurrent use.
type Engine struct {
	calls    *toolcall.Engine
	cat      *catalog.Catalog
	st       store.Store
	agent    AgentFunc
	stateDir string
	dir      string
	hc       *http.Client
	logger   *slog.Logger
	now      func() time.Time
	audit    *audit.Auditor

	set     atomic.Pointer[hookSet]
	applyMu sync.Mutex

	queue chan *job
	// pending counts jobs queued or running; idleCh is closed (and
	// replaced) each time it drops to zero (Idle).
	pending atomic.Int64
	idleMu  sync.Mutex
	idleCh  chan struct{}
	git     *gitCache
	rec     *recorder
	running atomic.Bool
	// bg owns the goroutines started outside Run's workers (guards run
	// concurrently, git context refreshes).
	bg sync.WaitGroup
}

// Log attribute keys.
const (
	logKeyEvent  = "event"
	logKeyHook   = "hook"
	logKeyAction = "action"
	logKeyStatus = "status"
	logKeyError  = "error"
	logKeyFile   = "file"
	logKeyRun    = "run"
)

// New returns an engine for cfg's hooks. It does not run anything until
// Run; events emitted before Run wait in the queue.
func New(opts Options) (*Engine, error) {
	if opts.Config == nil {
		return nil, errors.New("hooks: Config is required")
	}
	e := &Engine{
		calls:    opts.Calls,
		cat:      opts.Catalog,
		st:       opts.Store,
		agent:    opts.Agent,
		stateDir: opts.StateDir,
		dir:      opts.Dir,
		hc:       opts.HTTPClient,
		logger:   opts.Logger,
		now:      opts.Now,
		audit:    opts.Audit,
	}
	if e.logger == nil {
		e.logger = slog.New(slog.DiscardHandler)
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("hooks: finding the working directory: %w", err)
		}
		e.dir = wd
	}
	if e.hc == nil {
		e.hc = defaultHTTPClient
	}
	describe := opts.Describe
	if describe == nil {
		describe = vcs.Describe
	}
	e.git = &gitCache{describe: describe, dir: e.dir, now: e.now, ttl: gitTTL}
	e.rec = newRecorder(opts.Store, e.logger)
	s, err := e.compile(opts.Config)
	if err != nil {
		return nil, err
	}
	e.set.Store(s)
	e.queue = make(chan *job, s.settings.QueueSize)
	e.idleCh = make(chan struct{})
	if s.untrustedFile != "" {
		e.logger.Warn("hooks in this file do not run until it is trusted", logKeyFile, s.untrustedFile, logKeyRun, trustCommand(s.untrustedFile))
	}
	return e, nil
}

// CheckConfig reports whether SetConfig would accept cfg, changing
// nothing: a reload checks every part before it applies any.
func (e *Engine) CheckConfig(cfg *config.Config) error {
	if cfg == nil {
		return errors.New("hooks: no configuration")
	}
	_, err := e.compile(cfg)
	return err
}

// SetConfig replaces the hooks with cfg's. Runs already queued or in
// flight finish under the hooks they started with. The queue keeps the
// size it was created with; max_concurrent applies from the next Run.
func (e *Engine) SetConfig(cfg *config.Config) error {
	if cfg == nil {
		return errors.New("hooks: no configuration")
	}
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	s, err := e.compile(cfg)
	if err != nil {
		return err
	}
	e.set.Store(s)
	if s.untrustedFile != "" {
		e.logger.Warn("hooks in this file do not run until it is trusted", logKeyFile, s.untrustedFile, logKeyRun, trustCommand(s.untrustedFile))
	}
	return nil
}

// Run runs the worker pool and writes the records until ctx ends. Runs
// still queued then are recorded as cancelled; runs in flight are
// cancelled and waited for. It returns nil when ctx ends.
func (e *Engine) Run(ctx context.Context) error {
	if !e.running.CompareAndSwap(false, true) {
		return errors.New("hooks: Run called twice")
	}
	defer e.running.Store(false)
	n := e.set.Load().settings.MaxConcurrent
	var wg sync.WaitGroup
	recCtx, stopRec := context.WithCancel(context.WithoutCancel(ctx))
	recDone := make(chan struct{})
	go func() { defer close(recDone); e.rec.run(recCtx) }()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.work(ctx)
		}()
	}
	<-ctx.Done()
	wg.Wait()
	e.drain()
	e.bg.Wait()
	stopRec()
	<-recDone
	return nil
}

// work takes jobs from the queue until ctx ends.
func (e *Engine) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-e.queue:
			if ctx.Err() != nil {
				e.cancelJob(j)
				continue
			}
			e.runJob(ctx, j)
		}
	}
}

// drain records every job still queued as cancelled.
func (e *Engine) drain() {
	for {
		select {
		case j := <-e.queue:
			e.cancelJob(j)
		default:
			return
		}
	}
}

// Flush writes the records held in memory now; Run does it on its own.
func (e *Engine) Flush(ctx context.Context) error { return e.rec.flush(ctx) }

// redactor returns the redactor records go through.
func (e *Engine) redactor() *redact.Redactor {
	if e.calls != nil {
		return e.calls.Redactor()
	}
	return nilRedactor
}

var nilRedactor = redact.New(nil)

// configDir is the directory relative commands resolve against: the
// configuration file's, else the engine's directory.
func (s *hookSet) configDir(fallback string) string {
	if s.source != "" {
		return filepath.Dir(s.source)
	}
	return fallback
}

// denied builds the error a caller sees when a tool.before hook denies a
// call.
func denied(hook, reason string) error {
	if reason == "" {
		reason = "no reason given"
	}
	return fault.New(fault.Authorization, "denied by hook %s: %s", hook, reason).
		WithDetail("hook", hook).WithDetail("reason", reason)
}
