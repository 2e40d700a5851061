package toolcall

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// Upstreams hands out live connections; *upstream.Pool implements it.
type Upstreams interface {
	Client(server string) (*upstream.Client, error)
	WaitConnected(ctx context.Context, server string, d time.Duration) (*upstream.Client, error)
}

// sessionUpstreams is what Upstreams implement when a server's requests
// may go to the caller's own upstream session (session: per_client or
// per_user): *upstream.Pool does.
type sessionUpstreams interface {
	SessionClient(ctx context.Context, server string) (*upstream.Client, error)
}

// client returns the connection a call made with ctx uses on server: the
// caller's own session (upstream.WithOwner) where the server has them,
// else the shared one.
func (e *Engine) client(ctx context.Context, server string) (*upstream.Client, error) {
	if s, ok := e.ups.(sessionUpstreams); ok {
		return s.SessionClient(ctx, server)
	}
	return e.ups.Client(server)
}

// Recorder receives one record per finished call; *store.Recorder
// implements it.
type Recorder interface {
	// Commit keeps rec and returns once it is durable (it would survive
	// the process being killed), or once ctx is done or the recorder's own
	// bound passes; the error then says why it is not durable yet. The
	// engine answers a call only after Commit returns, so that a caller
	// that got an answer finds the call in the history.
	Commit(ctx context.Context, rec store.CallRecord) error
}

// Beginner is a Recorder that is also told when a call starts, so that a
// call running when the process dies is still accounted for
// (*store.Recorder.Begin). end is called once the call's record is
// committed.
type Beginner interface {
	Begin(rec store.CallRecord) (end func())
}

// Options configures an Engine.
type Options struct {
	Config    *config.Config
	Upstreams Upstreams
	Catalog   *catalog.Catalog
	// Recorder records every call; nil records nothing.
	Recorder Recorder
	// Logger receives one event per call; nil discards them.
	Logger *slog.Logger
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Answers, when set, tracks every call while it runs, so that what its
	// server asks during it (elicitation, sampling) reaches the caller's
	// answer.Answerer; the upstream connections route through the same.
	Answers *answer.Calls
	// Tracing is where the calls' spans go, and those of the callers
	// built on the engine (gateway, hooks, agent); nil means
	// telemetry.Default.
	Tracing *telemetry.Tracing
}

// Engine runs tool calls. It is safe for concurrent use.
type Engine struct {
	ups     Upstreams
	cat     *catalog.Catalog
	answers *answer.Calls // nil: calls are not tracked
	tracing *telemetry.Tracing
	rec     Recorder
	logger  *slog.Logger
	now     func() time.Time
	gate    *gate
	rate    rateLimits // limits.rate
	// set is the configuration new calls run under; SetConfig replaces it.
	set     atomic.Pointer[settings]
	applyMu sync.Mutex // serialises SetConfig
	// retryWait is the longest a retry waits for the server to be connected.
	retryWait time.Duration
	// schemaWarned remembers tools whose broken schema was reported.
	schemaWarned sync.Map
	// icpt is the interceptor (SetInterceptor); nil when none.
	icpt atomic.Pointer[interceptorBox]
	// extra are secrets known besides the configuration's (SetSecrets);
	// guarded by applyMu.
	extra []string
}

// Log attribute keys.
const (
	logKeyID       = "request_id"
	logKeyIdentity = "identity"
	logKeyServer   = "server"
	logKeyTool     = "tool"
	logKeyStatus   = "status"
	logKeyDuration = "duration"
	logKeyKind     = "error_kind"
	logKeySource   = "source"
	logKeyRetries  = "retries"
	// logKeyURLElicitations counts the URL elicitations completed before
	// the call was made again.
	logKeyURLElicitations = "url_elicitations"
	// logKeyInputRounds counts the input-required results a gateway
	// client was given during the call.
	logKeyInputRounds = "input_rounds"
)

// settings is the configuration a call runs under. SetConfig replaces it
// whole; a call keeps the one it started with.
type settings struct {
	cfg       *config.Config // a copy, with Limits defaults filled in
	servers   map[string]config.Server
	perServer map[string]int  // max_concurrent per server (or its share); 0 = none
	shares    map[string]bool // the servers whose perServer is their share (serverShare)
	redactor  *redact.Redactor
	secrets   []string // the configuration's secret values, which redactor knows
}

// newSettings checks cfg and derives the settings calls need from it.
func newSettings(cfg *config.Config) (*settings, error) {
	if cfg == nil {
		return nil, fault.New(fault.Config, "no configuration")
	}
	lim := cfg.Limits
	switch {
	case lim.MaxConcurrent < 0:
		return nil, limitsError("limits.max_concurrent", lim.MaxConcurrent, "must not be negative")
	case lim.MaxQueue < 0:
		return nil, limitsError("limits.max_queue", lim.MaxQueue, "must not be negative")
	case lim.QueueWait < 0 && lim.QueueWait != config.QueueWaitCallTimeout:
		return nil, limitsError("limits.queue_wait", lim.QueueWait, "must not be negative")
	case lim.SessionLimit < -1:
		return nil, limitsError("limits.session_limit", lim.SessionLimit, "must be -1 (unlimited) or more")
	}
	if lim.MaxConcurrent == 0 {
		lim.MaxConcurrent = config.DefaultMaxConcurrent
	}
	if lim.MaxOutputBytes <= 0 {
		lim.MaxOutputBytes = config.DefaultMaxOutputBytes
	}
	if lim.SessionLimit == 0 {
		lim.SessionLimit = config.DefaultSessionLimit
	}
	c := *cfg // the caller's configuration is shared (the pool holds it too)
	c.Limits = lim
	st := &settings{cfg: &c, servers: map[string]config.Server{}, perServer: map[string]int{}, shares: map[string]bool{}}
	var secrets []string
	for _, s := range cfg.Servers {
		if s.MaxConcurrent < 0 {
			return nil, limitsError("servers."+s.Name+".max_concurrent", s.MaxConcurrent, "must not be negative")
		}
		st.servers[s.Name] = s
		st.perServer[s.Name] = s.MaxConcurrent
		secrets = append(secrets, s.SecretValues()...)
	}
	// A hook command's secrets too: hooks redact what they record with
	// this redactor.
	for _, h := range cfg.Hooks.List {
		for _, a := range h.Actions {
			secrets = append(secrets, a.SecretValues()...)
		}
	}
	// With other servers beside it, a server with no max_concurrent of its
	// own gets a share of the global limit: one that hangs cannot hold
	// every slot.
	if share := serverShare(lim.MaxConcurrent); share > 0 && len(cfg.Servers) > 1 {
		for _, s := range cfg.Servers {
			if s.MaxConcurrent == 0 {
				st.perServer[s.Name], st.shares[s.Name] = share, true
			}
		}
	}
	st.secrets = secrets
	st.redactor = redact.New(secrets)
	return st, nil
}

func limitsError(field string, value any, problem string) error {
	return fault.New(fault.Config, "%s %v %s", field, value, problem).WithDetail("field", field)
}

// New returns an engine for a configuration.
func New(opts Options) (*Engine, error) {
	if opts.Config == nil || opts.Upstreams == nil || opts.Catalog == nil {
		return nil, errors.New("toolcall: Config, Upstreams and Catalog are required")
	}
	st, err := newSettings(opts.Config)
	if err != nil {
		return nil, fmt.Errorf("toolcall: %w", err)
	}
	lim := st.cfg.Limits
	e := &Engine{
		ups:       opts.Upstreams,
		answers:   opts.Answers,
		cat:       opts.Catalog,
		rec:       opts.Recorder,
		logger:    opts.Logger,
		tracing:   opts.Tracing,
		now:       opts.Now,
		gate:      newGate(lim.MaxConcurrent, st.perServer, st.shares, lim.QueueWait, lim.MaxQueue, lim.SessionLimit),
		retryWait: 15 * time.Second,
	}
	e.rate.reconfigure(lim.Rate)
	e.set.Store(st)
	if e.logger == nil {
		e.logger = slog.New(slog.DiscardHandler)
	}
	if e.now == nil {
		e.now = time.Now
	}
	return e, nil
}

// CheckConfig reports, without changing anything, whether SetConfig would
// accept cfg. The error is of kind Config and names the setting.
func (e *Engine) CheckConfig(cfg *config.Config) error {
	_, err := newSettings(cfg)
	return err
}

// SetConfig makes subsequent calls use cfg: its servers (request timeouts,
// retries, max_concurrent, redact_results, secrets to redact; a server no
// longer in cfg is not found) and its limits. Calls in flight finish under
// the settings they started with, and keep the slots they hold. The gate is
// resized in place: a smaller limits.max_concurrent or per-server
// max_concurrent admits no new call until enough of those in flight have
// finished; a larger one admits waiting calls at once. queue_wait,
// max_queue and session_limit apply to calls that start after SetConfig
// (the session count is kept). SetConfig refuses only what CheckConfig
// refuses, and then changes nothing.
func (e *Engine) SetConfig(cfg *config.Config) error {
	st, err := newSettings(cfg)
	if err != nil {
		return err
	}
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	if len(e.extra) > 0 {
		st.redactor = redact.New(append(slices.Clone(st.secrets), e.extra...))
	}
	lim := st.cfg.Limits
	e.gate.reconfigure(lim.MaxConcurrent, st.perServer, st.shares, lim.QueueWait, lim.MaxQueue, lim.SessionLimit)
	e.rate.reconfigure(lim.Rate)
	e.set.Store(st)
	return nil
}

// Stop makes every new call fail with a clear error and cancels the calls
// in flight. It returns how many were cancelled.
func (e *Engine) Stop() int { return e.gate.stop(errStopped) }

// Shutdown is Stop for a process that is shutting down: calls cancelled
// or refused are told so, not that someone ran switchboard stop.
func (e *Engine) Shutdown() int { return e.gate.stop(errShutdown) }

// Resume lifts Stop.
func (e *Engine) Resume() { e.gate.resume() }

// Stopped reports whether calls are stopped.
func (e *Engine) Stopped() bool { return e.gate.isStopped() }

// Stats is a snapshot of the engine's counters.
type Stats struct {
	InFlight int64 `json:"in_flight"`
	Waiting  int64 `json:"waiting"`
	Started  int64 `json:"started"`
	Stopped  bool  `json:"stopped"`
}

// Stats returns the engine's counters.
func (e *Engine) Stats() Stats {
	return Stats{InFlight: e.gate.inFlight.Load(), Waiting: e.gate.waiting.Load(), Started: e.gate.started.Load(), Stopped: e.gate.isStopped()}
}

// Redactor returns the engine's redactor (configured secrets plus token
// shapes), for callers that record or log on their own.
func (e *Engine) Redactor() *redact.Redactor { return e.set.Load().redactor }

// NewID returns a new call id, for a caller that names its call before
// making it (Request.ID), so that it can point to the call's record
// whatever the call's outcome.
func NewID() string { return newID() }

// newID returns a random UUID (version 4). Call ids must be unique, not
// secret, so the runtime's fast ChaCha8 generator serves.
func newID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Call runs one tool call. A call that reached the server returns a
// Result, even when the tool reported an error (Result.IsError) or a budget
// ended it (Result.Partial); every other failure is a *fault.Error. Both
// are recorded.
func (e *Engine) Call(ctx context.Context, req Request) (*Result, error) {
	if req.ID == "" {
		req.ID = newID()
	}
	if req.Source == "" {
		req.Source = SourceCLI
	}
	if e.answers != nil {
		var end func()
		ctx, end = e.answers.Track(ctx, req.Server)
		defer end()
	}
	c := &call{e: e, set: e.set.Load(), req: req, start: e.now(), status: StatusPending}
	if b, ok := e.rec.(Beginner); ok {
		end := b.Begin(store.CallRecord{ID: req.ID, Source: string(req.Source), Identity: req.Identity,
			Server: req.Server, Tool: req.Tool, Origin: store.CutOrigin(req.Origin), StartedAt: c.start})
		defer end()
	}
	ctx, c.span = e.tracing.StartCall(ctx, telemetry.Call{ID: req.ID, Server: req.Server, Tool: req.Tool, Source: string(req.Source), Session: req.SessionID, User: req.Identity})
	res, err := c.run(ctx)
	c.finish(ctx, res, err)
	c.span.Status(string(c.status))
	c.span.EndTool(resultOf(res), err)
	c.afterIntercept(ctx, res, err)
	return res, err
}

// Tracing returns where the engine's spans go (nil, meaning
// telemetry.Default, when the Options gave none): the callers built on
// the engine begin their spans there too. A nil Engine has none.
func (e *Engine) Tracing() *telemetry.Tracing {
	if e == nil {
		return nil
	}
	return e.tracing
}

// Track follows a request to server made for a caller outside Call —
// fetching a task's result (tasks/result), during which the server may
// ask its questions — until end is called: what the server asks
// meanwhile reaches the answerer of ctx (answer.With), as during a call.
// Without Options.Answers it does nothing.
func (e *Engine) Track(ctx context.Context, server string) (out context.Context, end func()) {
	if e.answers == nil {
		return ctx, func() {}
	}
	return e.answers.Track(ctx, server)
}

// Refuse accounts for a call that its caller refused before it could
// reach the engine — a gateway view that does not show the tool, a name
// no server of the view has, a request without a tool name: it is
// recorded and logged like any failed call, and the interceptor's After
// sees it (hooks fire tool.failed), so that every call that reached
// Switchboard is in the history whichever layer refused it. err says why
// (a *fault.Error; anything else counts as internal); Refuse returns it
// unchanged.
func (e *Engine) Refuse(ctx context.Context, req Request, err error) error {
	if err == nil {
		err = fault.New(fault.Internal, "the call was refused without a reason")
	}
	if req.ID == "" {
		req.ID = newID()
	}
	if req.Source == "" {
		req.Source = SourceCLI
	}
	c := &call{e: e, set: e.set.Load(), req: req, start: e.now(), status: StatusError}
	_ = c.prepareArgs() // for the record and the hooks, when they decode
	c.finish(ctx, nil, err)
	c.afterIntercept(ctx, nil, err)
	return err
}

// call is the state of one call while it runs.
type call struct {
	e       *Engine
	set     *settings // the configuration the call started under
	req     Request
	srv     config.Server
	tool    catalog.Tool
	args    map[string]any // decoded, for validation and recording
	start   time.Time
	status  Status
	retries int
	// urlElicitations counts the URL elicitations completed before the
	// call was made again (-32042; urlelicit.go).
	urlElicitations int
	// sentOn is the connection the latest attempt used (nil if none).
	sentOn *upstream.Client
	// icpt is the interceptor whose Before ran (After is due).
	icpt Interceptor
	// span traces the call (nil while tracing is off).
	span *telemetry.Span

	mu       sync.Mutex
	progress *Progress
	cost     float64
	task     json.RawMessage // the task a call made as one created (task.go)
}

func (c *call) run(ctx context.Context) (*Result, error) {
	e, req := c.e, c.req
	if err := e.gate.admit(); err != nil {
		return nil, err
	}
	srv, ok := c.set.servers[req.Server]
	if !ok {
		return nil, upstream.UnknownServer(c.set.cfg, req.Server)
	}
	c.srv = srv
	if err := e.rate.allow(e.now(), req.Identity, req.Server); err != nil {
		return nil, err
	}
	if _, err := e.ups.Client(req.Server); err != nil && fault.KindOf(err) != fault.Connection {
		return nil, err
	}
	var (
		tool catalog.Tool
		err  error
	)
	if req.Def != nil {
		tool = *req.Def
	} else {
		tool, err = e.cat.FetchTool(ctx, req.Server, req.Tool)
	}
	if err != nil {
		if _, cerr := e.ups.Client(req.Server); cerr != nil {
			return nil, cerr // unavailable: say so rather than "no such tool"
		}
		if !req.Unvalidated || fault.KindOf(err) != fault.NotFound {
			return nil, err
		}
		// The server says whether it has such a tool.
		tool = catalog.Tool{Server: req.Server, Def: &mcp.Tool{Name: req.Tool}}
	}
	c.tool = tool
	if err := c.prepareArgs(); err != nil && !req.Unvalidated {
		return nil, err
	}
	if c.req.Task != nil {
		if err := checkTask(c.req.Task); err != nil {
			return nil, err
		}
	}
	if _, err := c.intercept(ctx); err != nil {
		return nil, err
	}
	switch {
	case req.Unvalidated:
		// The server checks the arguments itself.
	case tool.SchemaError != "":
		if _, warned := e.schemaWarned.LoadOrStore(req.Server+"\x00"+req.Tool, true); !warned {
			e.logger.Warn("tool input schema does not compile; calls go through unvalidated",
				logKeyServer, req.Server, logKeyTool, req.Tool, "schema_error", tool.SchemaError)
		}
	default:
		if err := tool.ValidateArgs(c.args); err != nil {
			return nil, err
		}
	}

	timeout := srv.RequestTimeout
	if req.Timeout != 0 {
		if req.Timeout < config.MinRequestTimeout || req.Timeout > config.MaxRequestTimeout {
			return nil, fault.New(fault.Validation, "timeout %s is out of range; give 1s to 5m", req.Timeout).WithDetail("field", "timeout")
		}
		timeout = req.Timeout
	}
	if timeout <= 0 {
		timeout = c.set.cfg.Defaults.RequestTimeout
	}
	if timeout <= 0 {
		timeout = config.DefaultRequestTimeout
	}
	if req.Budget.MaxDuration < 0 || req.Budget.MaxCost < 0 {
		return nil, fault.New(fault.Validation, "a budget cannot be negative")
	}

	// The call's context: the caller's, the stop switch, and the timeout,
	// which covers the wait for a slot as well as the call itself: a
	// caller hears back within the timeout however busy the engine is.
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	untrack, err := e.gate.track(req.ID, cancel)
	if err != nil {
		return nil, err
	}
	defer untrack()
	callCtx, cancelTimeout := context.WithTimeoutCause(callCtx, timeout, errTimeout)
	defer cancelTimeout()
	waitStart := time.Now()
	release, err := e.gate.acquire(callCtx, req.Server, req.Identity, timeout)
	if err != nil {
		if cause := context.Cause(callCtx); cause == errStopped || cause == errShutdown {
			return nil, cause
		}
		if ctx.Err() != nil {
			return nil, fault.Wrap(fault.Cancelled, err, "call to %s/%s cancelled while waiting for a slot", req.Server, req.Tool)
		}
		return nil, err
	}
	defer release()
	waited := time.Since(waitStart)
	c.span.Queued(waited)
	// The budget: a separate cause, so that expiry yields a partial result.
	if d := req.Budget.MaxDuration; d > 0 {
		var cancelBudget context.CancelFunc
		callCtx, cancelBudget = context.WithTimeoutCause(callCtx, d, errBudgetTime)
		defer cancelBudget()
	}
	budgetCtx, cancelCost := context.WithCancelCause(callCtx)
	defer cancelCost(nil)

	maxRetries := srv.MaxRetries
	elicited := false // the call was made again after URL elicitations
	for attempt := 0; ; attempt++ {
		c.status = StatusExecuting
		c.span.Attempt(attempt + 1)
		res, err := c.attempt(budgetCtx, cancelCost)
		if err == nil {
			return c.result(res, timeout), nil
		}
		if need := urlsRequired(err); need != nil && !elicited {
			again, ferr := c.completeURLs(ctx, budgetCtx, need, err, timeout)
			if !again {
				return nil, ferr
			}
			elicited = true
			c.urlElicitations = len(need.Elicitations)
			e.logger.Info("calling again after URL elicitations", logKeyID, req.ID, logKeyServer, req.Server, logKeyTool, req.Tool)
			continue
		}
		if cause := context.Cause(budgetCtx); cause == errBudgetTime || cause == errBudgetCost {
			return c.partial(cause), nil
		}
		// The stop switch's cause wins even when the caller's context
		// ended just after it: at shutdown the server closes the client's
		// connection right after cancelling the calls.
		switch cause := context.Cause(budgetCtx); {
		case cause == errStopped || cause == errShutdown:
			return nil, cause
		case cause == errTimeout && ctx.Err() == nil:
			within := timeout.String()
			if waited >= time.Millisecond {
				within = fmt.Sprintf("%s (%s of it waiting for a slot)", timeout, waited.Round(time.Millisecond))
			}
			which, raise := timeoutSource(req)
			return nil, fault.Wrap(fault.Timeout, cancelledUpstream{err}, "%s/%s did not answer within %s (%s); the call was cancelled upstream", req.Server, req.Tool, within, which).
				WithDetail("server", req.Server).WithDetail("tool", req.Tool).WithDetail("timeout", timeout.String()).
				WithSuggestions(raise...)
		}
		if ctx.Err() != nil {
			return nil, fault.Wrap(fault.Cancelled, err, "call to %s/%s was cancelled", req.Server, req.Tool)
		}
		if attempt >= maxRetries || !c.retryable(err) {
			return nil, err
		}
		c.retries++
		c.status = StatusPending
		e.logger.Debug("retrying", logKeyID, req.ID, logKeyServer, req.Server, logKeyTool, req.Tool, "attempt", attempt+1, "err", fault.As(err).Message)
		backoff := time.Duration(100<<attempt) * time.Millisecond
		c.span.Retry(attempt+1, err, backoff)
		if c.sentOn != nil && e.retryWait > 0 {
			// Have the supervisor check the connection the attempt
			// failed on, and retry on what it finds (a new session if the
			// server no longer has this one), not on the same dead
			// session.
			wctx, cancel := context.WithTimeout(budgetCtx, e.retryWait)
			c.sentOn.Recheck(wctx)
			cancel()
		}
		select {
		case <-time.After(backoff):
		case <-budgetCtx.Done():
		}
	}
}

// Causes that end a call's context.
var (
	errTimeout    = errors.New("request timeout")
	errBudgetTime = errors.New("budget max_duration reached")
	errBudgetCost = errors.New("budget max_cost exceeded")
)

// cancelledUpstream is the cause of a call's timeout: the attempt's
// error (its context's deadline, which errors.Is still finds), worded as
// what happened to the call, so that a person reads which timeout elapsed
// rather than "context deadline exceeded".
type cancelledUpstream struct{ err error }

func (e cancelledUpstream) Error() string { return "the call was cancelled upstream" }
func (e cancelledUpstream) Unwrap() error { return e.err }

// timeoutSource names the timeout a call ran under, for the message that
// says it elapsed, and says how to raise it: the caller's own timeout
// (--timeout, a hook action's timeout), else the server's request_timeout.
func timeoutSource(req Request) (which string, raise []string) {
	maxNote := fmt.Sprintf("at most %gm", config.MaxRequestTimeout.Minutes())
	if req.Timeout != 0 {
		switch req.Source {
		case SourceCLI:
			return "the call's --timeout", []string{"pass a longer --timeout (" + maxNote + ")"}
		case SourceHook:
			return "the hook action's timeout", []string{"raise the action's timeout, or hook_settings.timeout (" + maxNote + ")"}
		}
		return "the timeout the caller gave the call", []string{"give the call a longer timeout (" + maxNote + ")"}
	}
	which = fmt.Sprintf("server %s's request_timeout", req.Server)
	raise = []string{fmt.Sprintf("raise request_timeout for server %s in the configuration, or defaults.request_timeout for every server (%s)", req.Server, maxNote)}
	if req.Source == SourceCLI {
		raise = append(raise, "or pass --timeout for this call (switchboard call ... --timeout 2m)")
	}
	return which, raise
}

// errNotSent marks failures that happened before the request reached the
// server: retrying them is always safe.
type errNotSent struct{ err error }

func (e errNotSent) Error() string { return e.err.Error() }
func (e errNotSent) Unwrap() error { return e.err }

// attempt sends the call once.
func (c *call) attempt(ctx context.Context, cancelCost context.CancelCauseFunc) (*mcp.CallToolResult, error) {
	cl, err := c.e.client(ctx, c.req.Server)
	if err != nil && fault.KindOf(err) != fault.LimitExceeded {
		// Restarting or reconnecting: wait for it a while.
		if c.e.retryWait > 0 {
			if _, err = c.e.ups.WaitConnected(ctx, c.req.Server, min(c.e.retryWait, remaining(ctx))); err == nil {
				cl, err = c.e.client(ctx, c.req.Server)
			}
		}
	}
	c.sentOn = cl
	if err != nil {
		return nil, errNotSent{err}
	}
	params := &mcp.CallToolParams{Name: c.req.Tool, Meta: c.meta()}
	if c.req.Arguments != nil {
		params.Arguments = c.req.Arguments
	} else if len(c.req.RawArguments) > 0 {
		params.Arguments = c.req.RawArguments
	}
	if c.req.Task != nil {
		return c.attemptTask(ctx, cl, params)
	}
	// Ask the server for progress only when someone uses it: the caller,
	// or a budget (a request without a progress token can take the
	// upstream's leaner path).
	if c.req.OnProgress == nil && c.req.Budget == (Budget{}) {
		return cl.CallTool(ctx, params, nil)
	}
	return cl.CallTool(ctx, params, func(p *mcp.ProgressNotificationParams) {
		pr := Progress{Processed: p.Progress, Total: p.Total, Message: p.Message, Cost: metaCost(p.Meta)}
		c.mu.Lock()
		c.progress = &pr
		if pr.Cost > 0 {
			c.cost = pr.Cost
		}
		over := c.req.Budget.MaxCost > 0 && c.cost > c.req.Budget.MaxCost
		c.mu.Unlock()
		if c.req.OnProgress != nil {
			c.req.OnProgress(pr)
		}
		if over {
			cancelCost(errBudgetCost)
		}
	})
}

func remaining(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return time.Until(d)
	}
	return time.Hour
}

// meta is the request's _meta: the caller's, plus the identity (seed 002's
// task server reads user_id and session_id) unless the server's
// identity_meta is off.
func (c *call) meta() mcp.Meta {
	user, session := c.req.Identity, c.req.SessionID
	if c.srv.NoIdentityMeta {
		user, session = "", ""
	}
	if len(c.req.Meta) == 0 && user == "" && session == "" {
		return nil
	}
	m := mcp.Meta{}
	for k, v := range c.req.Meta {
		m[k] = v
	}
	if user != "" {
		m["user_id"] = user
	}
	if session != "" {
		m["session_id"] = session
	}
	return m
}

// metaCost reads a cumulative cost from _meta ("cost" or "totalCost").
func metaCost(m mcp.Meta) float64 {
	for _, k := range []string{"cost", "totalCost"} {
		switch v := m[k].(type) {
		case float64:
			return v
		case json.Number:
			f, _ := v.Float64()
			return f
		}
	}
	return 0
}

// retryable reports whether a failed attempt may be retried: the failure
// must be transient (the connection), and the server must not have acted —
// the request was never sent, the server refused it unprocessed (it no
// longer had the session: upstream.NotDelivered), or the tool says it is
// read-only or idempotent.
func (c *call) retryable(err error) bool {
	var ns errNotSent
	if errors.As(err, &ns) {
		return fault.KindOf(err) == fault.Connection
	}
	if fault.KindOf(err) != fault.Connection {
		return false
	}
	if upstream.NotDelivered(err) {
		return true // never processed: safe whatever the tool does
	}
	an := c.tool.Def.Annotations
	return an != nil && (an.ReadOnlyHint || an.IdempotentHint)
}

// prepareArgs decodes the arguments for validation and recording.
func (c *call) prepareArgs() error {
	if c.req.Arguments != nil {
		c.args = c.req.Arguments
		return nil
	}
	if len(bytes.TrimSpace(c.req.RawArguments)) == 0 {
		c.args = map[string]any{}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(c.req.RawArguments))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fault.New(fault.Validation, "the arguments are not valid JSON: %v", err).
			WithSuggestions("send arguments as a JSON object of parameter names to values")
	}
	m, ok := v.(map[string]any)
	if !ok && v != nil {
		return fault.New(fault.Validation, "the arguments are %s; they must be a JSON object of parameter names to values", catalog.JSONKind(v)).
			WithSuggestions(`send {"name": value, ...}, with the names from the tool's input schema`)
	}
	if m == nil {
		m = map[string]any{} // null: no arguments
	}
	c.args = m
	return nil
}

// partial builds the result of a call a budget ended: what it had.
func (c *call) partial(cause error) *Result {
	c.mu.Lock()
	pr, cost := c.progress, c.cost
	c.mu.Unlock()
	var missing string
	switch {
	case pr != nil && pr.Total > 0:
		missing = fmt.Sprintf("%g of %g steps were not completed", pr.Total-pr.Processed, pr.Total)
	case pr != nil:
		missing = fmt.Sprintf("stopped after %g units of progress; the rest was not completed", pr.Processed)
	default:
		missing = "the tool reported no progress; nothing was completed"
	}
	text := fmt.Sprintf("Partial result: %s/%s was ended by its budget (%s) after %s. %s.",
		c.req.Server, c.req.Tool, cause, c.e.now().Sub(c.start).Round(time.Millisecond), missing)
	if pr != nil && pr.Message != "" {
		text += " Last progress: " + pr.Message
	}
	meta := mcp.Meta{MetaPartial: true, MetaBudgetExceeded: true, MetaMissing: missing}
	if pr != nil {
		meta[MetaProgress] = pr
	}
	r := &Result{
		ID:             c.req.ID,
		Status:         StatusSuccess,
		CallToolResult: &mcp.CallToolResult{Meta: meta, Content: []mcp.Content{&mcp.TextContent{Text: text}}},
		ContentType:    ContentText,
		Display:        DisplayBlock,
		Duration:       c.e.now().Sub(c.start),
		Retries:        c.retries,
		Partial:        true,
		BudgetExceeded: true,
		Missing:        missing,
		Cost:           cost,
		Progress:       pr,
	}
	c.status = StatusSuccess
	return r
}

// resultOf is the tool result of a call's result, or nil.
func resultOf(r *Result) *mcp.CallToolResult {
	if r == nil {
		return nil
	}
	return r.CallToolResult
}
