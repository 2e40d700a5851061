package upstream

//lint:file-ignore SA1019 sampling, elicitation, roots and logging are deprecated only from protocol 2026-07-28; clients and servers use them today, and the gateway forwards them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
)

// Version is reported to upstream servers as the client version.
var Version = "dev"

// Events receives notifications a server sends. Every field may be nil.
// Callbacks run on the connection's reader; they must not block.
type Events struct {
	ToolsChanged     func()
	PromptsChanged   func()
	ResourcesChanged func()
	// ResourceUpdated receives a notifications/resources/updated of uri.
	// As with Log, its context is the request's whose event stream the
	// server sent it on (streamable HTTP), or says it came on the
	// standalone stream (SentOutsideRequests).
	ResourceUpdated func(ctx context.Context, uri string)
	// Log receives a log message. Its context is the call's when the
	// server sent the message on a call's own event stream (streamable
	// HTTP), so that it can go to that call's caller; otherwise it links
	// to no call, and SentOutsideRequests says whether the server sent it
	// on its standalone stream, outside any request. A message sent
	// before a call's result is delivered before the call returns.
	//lint:ignore SA1019 servers still send log messages; the gateway forwards them (deprecated only from protocol 2026-07-28).
	Log func(context.Context, *mcp.LoggingMessageParams)
	// TaskStatus receives the params of a notifications/tasks/status
	// (tasks.go), as the server sent them. Its context carries the owned
	// session it came from (SessionKeyFrom), if any: a task id is only
	// unique within its session. As with Log, it is the request's whose
	// stream the server sent it on (streamable HTTP), or says it came on
	// the standalone stream (SentOutsideRequests).
	TaskStatus func(ctx context.Context, params json.RawMessage)
	// ElicitationComplete receives a notifications/elicitation/complete:
	// the server says a URL-mode elicitation is done. Its context carries
	// the owned session it came from (SessionKeyFrom), if any, and, as
	// with Log, the stream it came on.
	ElicitationComplete func(context.Context, *mcp.ElicitationCompleteParams)
	// ListChanged, when set, receives each list change (the tools',
	// prompts' or resources' list_changed) in place of ToolsChanged,
	// PromptsChanged and ResourcesChanged, with its params as the server
	// wrote them where the transport kept them (listchanges.go). As with
	// Log, its context is the request's whose event stream the server
	// sent it on, or says it came on the standalone stream.
	ListChanged func(context.Context, ListChange)
}

// DialOptions configures [Dial].
type DialOptions struct {
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
	// Events receives the server's notifications.
	Events Events
	// StderrBytes bounds the retained stderr of a stdio child (default 64 KiB).
	StderrBytes int
	// Transport, when set, replaces the transport built from the server's
	// configuration (tests; used for one dial only).
	Transport mcp.Transport
	// NewTransport, when set (and Transport is not), makes a fresh
	// transport for every dial: in-process servers, which a supervisor may
	// redial.
	NewTransport func(ctx context.Context) (mcp.Transport, error)
	// MaxMessageBytes bounds one message from a stdio server held in memory;
	// a larger tools/call result is cut to its first MaxResultBytes and
	// marked truncated, a larger other response becomes an error. Default
	// DefaultMaxFrameBytes.
	MaxMessageBytes int
	// MaxResultBytes is how much of an oversized tools/call result is kept.
	// Default 1 MiB.
	MaxResultBytes int
	// Requests answers the server's sampling, elicitation and roots
	// requests; the zero value declares none of them.
	Requests ClientRequests
	// LeanCalls, when set, says whether a tools/call may take the lean
	// path of a streamable-HTTP session (fastcall.go) rather than the
	// SDK's, at the time of the call; nil means it may.
	LeanCalls func() bool
	// Auth authorizes a network server's requests with its OAuth sign-in
	// (see NewAuth); nil sends them as configured.
	Auth *Auth
	// ProtocolVersion, when set, is the protocol version offered at the
	// handshake instead of the newest the SDK knows: a per_client
	// session offers the one its client offered, so that the server
	// negotiates what it would with the client directly.
	ProtocolVersion string
	// PassInputRequests, when set, leaves a server's multi round-trip
	// input requests (protocol 2026-07-28: roots, elicitation and
	// sampling asked in a result) to the caller: such a result comes back
	// as the server sent it, instead of being answered with Requests and
	// the request sent again. A per_client session of a view meant to be
	// its server sets it (inputrequests.go).
	PassInputRequests bool
	// DroppedLogs, when set, counts the server's log messages dropped
	// because they came faster than they could be forwarded (see
	// noticeGate); a supervisor's counter is shared by its sessions.
	DroppedLogs *atomic.Uint64
}

// Client is one live connection to an upstream server.
type Client struct {
	server  config.Server
	session *mcp.ClientSession
	stderr  *tailBuffer
	// redact removes the server's secret values from its stderr, which
	// a server may print them to (a failed login, its environment).
	redact *redact.Redactor
	proc   *processTransport // nil unless stdio
	logger *slog.Logger

	done    chan struct{} // closed when the connection has ended
	endErr  error         // why; set before done is closed
	endOnce sync.Once
	watched chan struct{} // closed when watch has returned
	closing atomic.Bool
	tracked trackedRequests // retire.go
	// wire follows a network server's HTTP exchanges (nil for others).
	wire *wireWatch
	// expired is set when the server said it no longer has the session: it
	// restarted or ended the session, and a new one must be started.
	expired atomic.Bool
	// suspect is signalled when a request could not reach the server,
	// so that the supervisor checks the connection at once.
	suspect chan struct{}
	// check is the supervisor's verdict on that (check.go).
	check connCheck

	nextToken atomic.Uint64
	progress  sync.Map // progress token (string) -> func(*mcp.ProgressNotificationParams)
	order     *progressOrder
	fast      *fastCaller // nil unless a streamable-HTTP session qualifies
	lean      func() bool // DialOptions.LeanCalls
	logs      bool        // a log sink is set: calls wait for log messages read before their result
	// pool is a streamable-HTTP server's HTTP client, whose idle
	// connections are closed with the session (nil for other transports).
	pool *http.Client
	// tasks is what the SDK does not model of tasks (tasks.go).
	tasks taskState
	// conn is the session's connection, set while connecting, for the
	// notifications the SDK's client has no method for (sessions.go).
	conn mcp.Connection
	// completed are the URL elicitations the server said are complete
	// (urlelicit.go).
	completed completions
	// kept is what the session's transport kept of the messages its
	// server sent before the SDK decoded them, for its handlers
	// (standalone.go, elicitasgiven.go).
	kept keptMessages
	// elicitAsGiven is set when the session passes elicitation on as
	// given (ClientRequests.ElicitAsGiven).
	elicitAsGiven bool
	// keepElicit is set when the transport keeps elicitation/create's
	// params as the server wrote them: elicitAsGiven, or
	// ClientRequests.ElicitInOrder.
	keepElicit bool
	// asks is set when the session answers requests of its server
	// (sampling, elicitation, roots): the HTTP layer keeps the stream
	// each came on (standalone.go).
	asks bool
	// listsAsSent is set when the session's list changes go to
	// Events.ListChanged, with their params as sent (listchanges.go).
	listsAsSent bool
	// notices is set when the session passes resource updates or
	// elicitation completions on: the HTTP layer keeps the stream each
	// came on (standalone.go).
	notices bool
}

// Attribute keys used in logs.
const (
	logKeyServer    = "server"
	logKeyTransport = "transport"
	logKeyErr       = "err"
	logKeyLatency   = "latency"
	logKeyState     = "state"
	logKeyHints     = "suggestions"
)

// Dial connects to srv and completes the MCP handshake within
// srv.ConnectTimeout (if set). The error is a *fault.Error of kind
// Connection or Timeout that includes the tail of a stdio server's stderr.
func Dial(ctx context.Context, srv config.Server, opts DialOptions) (*Client, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if len(srv.Roots) > 0 {
		opts.Requests.ListRoots = configuredRoots(srv.Roots)
	}
	c := &Client{
		server:  srv,
		stderr:  newTailBuffer(opts.StderrBytes),
		redact:  redact.New(srv.SecretValues()),
		logger:  logger.With(logKeyServer, srv.Name),
		done:    make(chan struct{}),
		watched: make(chan struct{}),
		suspect: make(chan struct{}, 1),
		order:   newProgressOrder(),
		wire:    &wireWatch{},
		lean:    opts.LeanCalls,
		logs:    opts.Events.Log != nil,

		listsAsSent: opts.Events.ListChanged != nil,
		notices:     opts.Events.ResourceUpdated != nil || opts.Events.ElicitationComplete != nil,
	}
	c.order.server, c.order.dropped = srv.Name, opts.DroppedLogs
	c.order.wanted = func(token string) bool {
		_, ok := c.progress.Load(token)
		return ok
	}
	c.tasks.onStatus = opts.Events.TaskStatus
	t := opts.Transport
	if t == nil && opts.NewTransport != nil {
		var err error
		if t, err = opts.NewTransport(ctx); err != nil {
			return nil, fault.Wrap(fault.Connection, err, "starting %s", srv.Name).WithDetail("server", srv.Name)
		}
	}
	if t == nil {
		var err error
		head := opts.MaxResultBytes
		if head <= 0 {
			head = 1 << 20
		}
		t, err = transportFor(srv, c.stderr, frameLimits{maxFrame: opts.MaxMessageBytes, frameHead: head + 64<<10, logger: c.logger}, c.wire, opts.Auth)
		if err != nil {
			return nil, c.dialError(ctx, ctx, err)
		}
		c.proc, _ = t.(*processTransport)
	}
	ev := opts.Events
	caps := opts.Requests.capabilities()
	copts := &mcp.ClientOptions{
		// Declare no roots unless asked to forward them: Switchboard has
		// none of its own to offer, and a server that asks for them may not
		// exit on stdin EOF until answered (server-everything does).
		Capabilities: caps,
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			key := tokenKey(req.Params.ProgressToken)
			if f, ok := c.progress.Load(key); ok {
				f.(func(*mcp.ProgressNotificationParams))(req.Params)
			}
			c.order.delivered(key)
		},
		ToolListChangedHandler: func(ctx context.Context, req *mcp.ToolListChangedRequest) {
			c.listChanged(ctx, ev, methodToolsChanged, req.Params)
		},
		PromptListChangedHandler: func(ctx context.Context, req *mcp.PromptListChangedRequest) {
			c.listChanged(ctx, ev, methodPromptsChanged, req.Params)
		},
		ResourceListChangedHandler: func(ctx context.Context, req *mcp.ResourceListChangedRequest) {
			c.listChanged(ctx, ev, methodResourcesChanged, req.Params)
		},
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			defer c.order.delivered(noticeOrderKey)
			if ev.ResourceUpdated != nil && req.Params != nil {
				ev.ResourceUpdated(ctx, req.Params.URI) // with its stream (keptMessages.middleware)
			}
		},
		ElicitationCompleteHandler: func(ctx context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			defer c.order.delivered(noticeOrderKey)
			if req.Params == nil {
				return
			}
			c.completed.complete(req.Params.ElicitationID)
			if ev.ElicitationComplete != nil {
				ev.ElicitationComplete(ctx, req.Params)
			}
		},
		//lint:ignore SA1019 see Events.Log.
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			if ev.Log != nil {
				ev.Log(ctx, req.Params) // with its stream (keptMessages.middleware)
			}
			c.order.delivered(logOrderKey)
		},
	}
	if opts.PassInputRequests {
		copts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	// The SDK declares sampling and elicitation whenever a handler is set,
	// so set them only when there is somewhere to forward to.
	if f := opts.Requests.CreateMessageWithTools; f != nil && caps.Sampling != nil && opts.Requests.samplingInFull() {
		copts.CreateMessageWithToolsHandler = func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			res, err := f(ctx, req.Params)
			return res, samplingError(err)
		}
	} else if f := opts.Requests.CreateMessage; f != nil && caps.Sampling != nil {
		copts.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			res, err := f(ctx, req.Params)
			return res, samplingError(err)
		}
	}
	if f := opts.Requests.Elicit; f != nil && caps.Elicitation != nil {
		copts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			res, err := f(ctx, req.Params)
			if err != nil {
				return nil, requestError(err)
			}
			return res, nil
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "switchboard", Version: Version}, copts)
	client.AddSendingMiddleware(telemetry.ClientMiddleware(srv.Name, srv.URL))

	if opts.Requests.ListRoots != nil {
		client.AddReceivingMiddleware(opts.Requests.rootsMiddleware())
	}
	if opts.Requests.Ping != nil {
		client.AddReceivingMiddleware(opts.Requests.pingMiddleware())
	}
	if opts.Requests.ElicitAsGiven && copts.ElicitationHandler != nil {
		c.elicitAsGiven = true
		client.AddReceivingMiddleware(opts.Requests.elicitAsGivenMiddleware())
	}
	c.keepElicit = c.elicitAsGiven || (opts.Requests.ElicitInOrder && copts.ElicitationHandler != nil)
	// Added last, so run first: what the transport kept of a message
	// reaches every handler of it (standalone.go).
	client.AddReceivingMiddleware(c.kept.middleware())
	// The session a request came on, for its client's progress on it
	// (askerprogress.go).
	client.AddReceivingMiddleware(askerMiddleware)
	c.asks = copts.CreateMessageHandler != nil || copts.CreateMessageWithToolsHandler != nil ||
		copts.ElicitationHandler != nil || opts.Requests.ListRoots != nil
	if len(srv.Roots) > 0 {
		// Servers of protocol 2026-07-28 ask for roots in a call's result
		// (multi round-trip), which the SDK answers from the client's own
		// root set, not through the middleware.
		client.AddRoots(rootsOf(srv.Roots)...)
	}

	dctx := ctx
	if srv.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeout(ctx, srv.ConnectTimeout)
		defer cancel()
	}
	start := time.Now()
	var sopts *mcp.ClientSessionOptions
	if opts.ProtocolVersion != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: opts.ProtocolVersion}
	}
	st := c.sessionTransport(t)
	if _, streamable := st.(*mcp.StreamableClientTransport); (c.keepElicit || c.listsAsSent) && !streamable {
		// Not the SDK's streamable-HTTP connection, which it tells of
		// the session's state through a method a wrapper would hide:
		// its HTTP layer keeps the params instead (sessionTransport),
		// and its lean calls' requests come through fastcall.go, which
		// has them at hand.
		st = keepingParams(st, &c.kept, c.keepElicit, c.listsAsSent) // elicitasgiven.go
	}
	session, err := client.Connect(dctx, c.captureConn(st), sopts)
	if err != nil {
		// The SDK has closed the connection (and so waited for a child);
		// the stderr tail is complete.
		c.closePool()
		return nil, c.dialError(ctx, dctx, err)
	}
	c.session = session
	c.fast = newFastCaller(c, t, opts)
	if sid := session.ID(); sid != "" && srv.Transport == config.TransportHTTP {
		c.wire.setGone(func(id, how string) {
			if id == sid {
				c.sessionExpired(how)
			}
		})
	}
	c.logger.Debug("connected", logKeyTransport, string(srv.Transport), logKeyLatency, time.Since(start))
	go c.watch()
	return c, nil
}

// watch notices the end of the connection — a child that exits, a closed
// socket — at once, not at the next ping.
func (c *Client) watch() {
	defer close(c.watched)
	err := c.session.Wait()
	if !c.closing.Load() && !c.expired.Load() {
		err = c.lostError(err)
	}
	c.end(err)
}

// end records why the connection ended and closes done, once; after
// Close, the reason is nil.
func (c *Client) end(err error) {
	c.endOnce.Do(func() {
		if c.closing.Load() {
			err = nil
		}
		c.endErr = err
		close(c.done)
	})
}

// errSessionExpired marks a connection whose server no longer has its
// session (it answered 404): the server restarted or ended the session.
// The MCP specification has the client start a new session at once,
// which the supervisor does.
var errSessionExpired = errors.New("the server no longer has the session")

// sessionExpired ends a streamable-HTTP connection whose server no
// longer has its session; how is what the server answered ("HTTP 404").
func (c *Client) sessionExpired(how string) {
	if c.expired.Swap(true) {
		return
	}
	c.logger.Info("the server no longer has the session", "answer", how)
	c.end(fault.Wrap(fault.Connection, errSessionExpired,
		"%s no longer has this session (%s): the server restarted or ended it; Switchboard starts a new one", shownURL(c.server), how).
		WithDetail("server", c.server.Name))
}

// markSuspect asks the supervisor to check the connection now.
func (c *Client) markSuspect() {
	c.check.ask()
	select {
	case c.suspect <- struct{}{}:
	default:
	}
}

// dialError is the error of a failed Dial: what happened, in words a
// person can act on (see explain.go), with err as its cause.
func (c *Client) dialError(parent, dctx context.Context, err error) error {
	kind := fault.Connection
	var e explanation
	switch {
	case parent.Err() != nil:
		kind = fault.Cancelled
		e.msg = fmt.Sprintf("connecting to %s was cancelled", c.server.Name)
	case dctx.Err() != nil:
		kind = fault.Timeout
		e.msg = fmt.Sprintf("%s did not complete the MCP handshake within %s", c.server.Name, c.server.ConnectTimeout)
		e.hints = []string{fmt.Sprintf("raise %s if the server is slow to start", field(c.server, "timeout"))}
	default:
		e = c.explain(err)
	}
	fe := fault.Wrap(kind, err, "%s", e.msg).WithDetail("server", c.server.Name).WithSuggestions(e.hints...)
	c.attachStderr(fe)
	return fe
}

// explain says why a connection attempt failed.
func (c *Client) explain(err error) explanation {
	if e, ok := explainStart(c.server, err); ok {
		return e
	}
	if c.proc != nil && c.proc.conn != nil {
		// The SDK has closed the connection, so the child has exited or
		// been stopped; the stderr tail is complete.
		if ps := c.proc.conn.exitStatus(2 * terminateDuration); ps != nil && c.proc.conn.endedFirst {
			return explainExit(c.server, ps, c.Stderr())
		}
	}
	if f := c.wire.lastFailure(); f != nil && c.server.Transport != config.TransportStdio {
		return explainHTTP(c.server, f)
	}
	if c.server.URL != "" {
		if e, ok := explainNet(c.server, err); ok {
			return e
		}
	}
	return explanation{msg: "the MCP handshake failed: " + err.Error()}
}

func (c *Client) lostError(err error) error {
	msg := fmt.Sprintf("connection to %s lost", c.server.Name)
	if c.proc != nil && c.proc.conn != nil {
		// Let the exit status and the last stderr bytes land.
		if ps := c.proc.conn.exitStatus(2 * terminateDuration); ps != nil {
			msg = fmt.Sprintf("server %s %s", c.server.Name, describeExit(ps))
		}
	} else if f := c.wire.lastFailure(); f != nil && f.status == 0 {
		if e, ok := explainNet(c.server, f.err); ok {
			msg += ": " + e.msg
		}
	}
	fe := fault.Wrap(fault.Connection, err, "%s", msg).WithDetail("server", c.server.Name)
	c.attachStderr(fe)
	return fe
}

// attachStderr adds a stdio server's stderr to fe: its last lines as a
// detail, and the line that says what went wrong to the message.
func (c *Client) attachStderr(fe *fault.Error) {
	all := c.Stderr()
	if s := lastLines(all, 20); s != "" {
		fe.WithDetail("stderr", s)
		if sum := stderrSummary(all); sum != "" && !strings.Contains(fe.Message, "stderr") && !strings.Contains(fe.Message, sum) {
			fe.Message += "; its stderr says: " + sum
		}
	}
}

// Server returns the configuration the client was dialled with.
func (c *Client) Server() config.Server { return c.server }

// Session returns the underlying MCP session.
func (c *Client) Session() *mcp.ClientSession { return c.session }

// InitializeResult returns what the server said in the handshake.
func (c *Client) InitializeResult() *mcp.InitializeResult { return c.session.InitializeResult() }

// Stderr returns the retained tail of a stdio server's stderr, with the
// server's secret values and credential-shaped strings redacted.
func (c *Client) Stderr() string { return c.redact.String(c.stderr.String()) }

// Done is closed when the connection has ended, for whatever reason.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err reports why the connection ended: nil after Close, a
// *fault.Error of kind Connection otherwise. It is valid after Done.
func (c *Client) Err() error {
	select {
	case <-c.done:
		return c.endErr
	default:
		return nil
	}
}

// Close ends the connection, waiting for a stdio child to exit and reaping
// its process group.
func (c *Client) Close() error {
	c.closing.Store(true)
	c.tracked.waitNoticed() // cancelnotice.go
	err := c.session.Close()
	<-c.watched
	c.closePool()
	c.kept.clear()
	if err != nil && (errors.Is(err, io.EOF) || isExitErr(err)) {
		err = nil
	}
	return err
}

// isNetError reports whether err is a failure to reach the server (a
// refused or reset connection, an unreachable host), not an answer.
func isNetError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// closedIdle reports whether err is net/http's "server closed idle
// connection": the server closed a kept-alive connection just as the
// request went out on it (the transport resends only requests it deems
// idempotent, which a POST is not). The error is not exported; its text
// is all there is to match.
func closedIdle(err error) bool {
	return err != nil && strings.Contains(err.Error(), "http: server closed idle connection")
}

func isExitErr(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}

// sessionTransport returns the transport the SDK's session runs on: t,
// wrapped so that progress notifications are counted as they are read
// (see progressOrder). A streamable-HTTP transport is the exception: its
// connection must reach the SDK unwrapped, for the SDK tells it the
// negotiated protocol version and has it open the standalone event
// stream (server requests and notifications outside a call) through a
// method no wrapper can forward. Its progress notifications are counted
// as its HTTP responses are read instead (headerTransport).
func (c *Client) sessionTransport(t mcp.Transport) mcp.Transport {
	if lt, ok := t.(*lifetimeTransport); ok && lt.http != nil && c.server.Transport == config.TransportHTTP {
		if ht, ok := lt.http.Transport.(*headerTransport); ok {
			if st, ok := lt.inner.(*mcp.StreamableClientTransport); ok {
				read := c.order.read
				ht.progressRead.Store(&read)
				if c.logs || c.asks || c.keepElicit || c.listsAsSent || c.notices {
					ht.marking.Store(&marking{kept: &c.kept, logs: c.logs, requests: c.asks, elicit: c.keepElicit, lists: c.listsAsSent, notices: c.notices})
				}
				ht.tasks.Store(&c.tasks)
				c.pool = lt.http
				return st
			}
		}
	}
	return c.tasks.transport(c.order.transport(t))
}

// closePool closes a streamable-HTTP server's idle connections.
func (c *Client) closePool() {
	if c.pool != nil {
		c.pool.CloseIdleConnections()
	}
}

// Ping sends an MCP ping and returns its round-trip time. A ping written
// on a kept-alive connection the server had already closed (it restarted,
// or dropped idle connections) is sent once more on a new connection: a
// ping is safe to repeat, and that failure says nothing of the server.
func (c *Client) Ping(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	err := c.session.Ping(ctx, nil)
	if err != nil && ctx.Err() == nil && staleConnection(err) {
		start = time.Now()
		err = c.session.Ping(ctx, nil)
	}
	if err != nil {
		return 0, c.classify(ctx, err, "pinging "+c.server.Name)
	}
	return time.Since(start), nil
}

// staleConnection reports an HTTP request that failed because the kept-alive
// connection it was written on had been closed by the server. net/http
// retries such a request itself only when it knows it to be idempotent,
// which a POST is not; its error is unexported, so it is known by its text.
func staleConnection(err error) bool {
	return strings.Contains(err.Error(), "server closed idle connection") || errors.Is(err, syscall.ECONNRESET)
}

// CallTool calls a tool. When onProgress is non-nil, the call carries a
// progress token and the server's progress notifications are passed to it.
// Cancelling ctx sends notifications/cancelled upstream. Within a trace,
// the request has a span, and carries its trace context in _meta.
func (c *Client) CallTool(ctx context.Context, params *mcp.CallToolParams, onProgress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	ctx, span := telemetry.StartClient(ctx, c.server.Name, "tools/call", params.Name, c.server.URL)
	tctx, end := c.track(ctx)
	res, err := c.callTool(tctx, telemetry.CallParams(ctx, params), onProgress)
	err = end(err)
	span.EndTool(res, err)
	return res, err
}

func (c *Client) callTool(ctx context.Context, params *mcp.CallToolParams, onProgress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	// With the caller's log level; and deliver what the server sent
	// before its result first: the call's progress, log messages (they
	// may belong to this call), list changes, resource updates and
	// elicitation completions (they may have come on this call's
	// stream).
	p := *params
	var done func()
	p.Meta, done = c.answerOrder(ctx, c.levelMeta(ctx, params.Meta), onProgress)
	params = &p
	defer done()
	params = c.withInputResponses(ctx, params)
	// The transport notes here whether the server refused the request
	// unprocessed (a 404 for the session).
	ctx = context.WithValue(ctx, deliveryKey{}, &deliveryNote{})
	if c.fast != nil && (c.lean == nil || c.lean()) {
		res, err := c.fast.call(ctx, params)
		var asked *errAskedInResult
		switch {
		case err == nil:
			return res, nil
		case errors.As(err, &asked):
			// The SDK's session goes on from the result the server gave
			// (replay.go).
			ctx = context.WithValue(ctx, replayKey{}, &replayedResult{result: asked.result})
		case !errors.Is(err, errFastUnavailable):
			return nil, c.classify(ctx, err, fmt.Sprintf("calling %s/%s", c.server.Name, params.Name))
		}
	}
	// Cancelled, it returns once the server was told (cancelnotice.go).
	notice := c.withCancelNotice(ctx)
	res, err := c.session.CallTool(ctx, params)
	if err != nil {
		awaitCancelNotice(ctx, notice)
		return nil, c.classify(ctx, err, fmt.Sprintf("calling %s/%s", c.server.Name, params.Name))
	}
	return res, nil
}

func cloneMeta(m mcp.Meta) mcp.Meta {
	out := make(mcp.Meta, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func tokenKey(t any) string {
	switch v := t.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}

// codeRejected is the code of the SDK's "rejected by transport" error:
// the request was not delivered (the network failed, or the server
// answered 429, 502, 503 or 504), which is no answer of the server's.
const codeRejected = -32005

// classify turns an SDK error into a fault.Error whose message says what
// was being done and why it failed.
func (c *Client) classify(ctx context.Context, err error, doing string) error {
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err
	}
	var kind fault.Kind
	var why explanation // the failure in plain words, when known
	var rpcErr *jsonrpc.Error
	isRPC := errors.As(err, &rpcErr)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		kind = fault.Timeout
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		kind = fault.Cancelled
	case c.expired.Load():
		// The server no longer has the session: whatever the SDK
		// made of the answer, the session is gone (the end error says so).
		kind = fault.Connection
	case isNetError(err):
		// A refused or reset connection, checked before the SDK's
		// "rejected by transport" that wraps it.
		kind = fault.Connection
		if c.server.URL != "" {
			why, _ = explainNet(c.server, err)
		}
		c.markSuspect()
	case closedIdle(err):
		// The server closed the kept-alive connection as the request
		// went out on it (it stopped or restarted). Most likely it never
		// processed it, but that is not certain: retried only where that
		// is safe (read-only, idempotent), as other connection failures.
		kind = fault.Connection
		why.msg = fmt.Sprintf("%s closed the connection as the request went out (did the server stop or restart?)", hostOf(c.server.URL))
		c.markSuspect()
	case errors.Is(err, io.ErrUnexpectedEOF):
		// A call's event stream that ended before its answer.
		kind = fault.Connection
		why.msg = "the connection ended before the answer arrived (did the server stop or restart?)"
		c.markSuspect()
	case isRPC && rpcErr.Code == mcp.CodeURLElicitationRequired:
		kind = fault.Protocol
		required, perr := c.urlElicitationRequired(rpcErr, err)
		if perr != nil {
			why.msg = perr.Error()
			break
		}
		out := fault.Wrap(fault.ElicitationRequired, required, "%s: %s requires %s", doing, c.server.Name, describeElicitations(required.Elicitations)).
			WithDetail("server", c.server.Name).
			WithSuggestions("complete it on a terminal: run the call with switchboard call, which shows the URL, waits for the server to say it is done, and calls again")
		return out
	case isRPC && rpcErr.Code != codeRejected:
		kind = fault.Protocol
		if rpcErr.Code == jsonrpc.CodeInvalidParams {
			kind = fault.Validation
		}
	case isRPC:
		kind = fault.Connection
		if f := c.wire.lastFailure(); f != nil {
			why = explainHTTP(c.server, f)
		}
	case errors.Is(err, io.EOF) && c.server.URL != "":
		// The server closed the connection instead of answering: it
		// stopped, or restarted.
		kind = fault.Connection
		why.msg = fmt.Sprintf("%s closed the connection without answering (did the server stop or restart?)", hostOf(c.server.URL))
		c.markSuspect()
	case errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF):
		kind = fault.Connection
		if c.proc != nil {
			// A stdio server that exited: how it ended (its exit status,
			// its stderr) says it best, and lands a moment after the
			// request's EOF (watch); not `calling "tools/call": EOF`.
			select {
			case <-c.done:
			case <-time.After(2 * terminateDuration):
			}
		}
	default:
		select {
		case <-c.done:
			kind = fault.Connection
		default:
			kind = fault.Protocol
		}
	}
	cause := err
	if kind == fault.Connection {
		if end := c.Err(); end != nil {
			// Why the connection ended says it best.
			cause, why = end, explanation{msg: fault.As(end).Message, hints: fault.As(end).Suggestions}
		}
	}
	// The message says why, in the words of the server or the network
	// (a client of the gateway sees the message, not the chain).
	msg := doing
	if kind != fault.Cancelled && kind != fault.Timeout {
		if why.msg == "" {
			why.msg = cause.Error()
		}
		if why.msg != "" {
			msg += ": " + why.msg
		}
	}
	if n, ok := ctx.Value(deliveryKey{}).(*deliveryNote); (ok && n.refused.Load()) || (kind == fault.Connection && isDialError(err)) {
		cause = &notDelivered{cause}
	}
	out := fault.Wrap(kind, cause, "%s", msg).WithDetail("server", c.server.Name).WithSuggestions(why.hints...)
	if kind == fault.Connection {
		c.attachStderr(out)
	}
	return out
}

// ListTools returns every tool, following pagination.
func (c *Client) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			return out, c.classify(ctx, err, "listing tools of "+c.server.Name)
		}
		out = append(out, t)
	}
	return out, nil
}

// ListPrompts returns every prompt, following pagination.
func (c *Client) ListPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	var out []*mcp.Prompt
	for p, err := range c.session.Prompts(ctx, nil) {
		if err != nil {
			return out, c.classify(ctx, err, "listing prompts of "+c.server.Name)
		}
		out = append(out, p)
	}
	return out, nil
}

// ListResources returns every resource, following pagination.
func (c *Client) ListResources(ctx context.Context) ([]*mcp.Resource, error) {
	var out []*mcp.Resource
	for r, err := range c.session.Resources(ctx, nil) {
		if err != nil {
			return out, c.classify(ctx, err, "listing resources of "+c.server.Name)
		}
		out = append(out, r)
	}
	return out, nil
}

// ListResourceTemplates returns every resource template, following pagination.
func (c *Client) ListResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error) {
	var out []*mcp.ResourceTemplate
	for r, err := range c.session.ResourceTemplates(ctx, nil) {
		if err != nil {
			return out, c.classify(ctx, err, "listing resource templates of "+c.server.Name)
		}
		out = append(out, r)
	}
	return out, nil
}

// GetPrompt renders a prompt.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (_ *mcp.GetPromptResult, err error) {
	ctx, end := c.track(ctx) // retire.go
	defer func() { err = end(err) }()
	meta, done := c.requestProgress(ctx, c.levelMeta(ctx, nil))
	defer done()
	params := &mcp.GetPromptParams{Meta: meta, Name: name, Arguments: args}
	params.InputResponses, params.RequestState, _ = c.inputResponses(ctx)
	notice := c.withCancelNotice(ctx)
	res, err := c.session.GetPrompt(ctx, params)
	if err != nil {
		awaitCancelNotice(ctx, notice)
		return nil, c.classify(ctx, err, fmt.Sprintf("getting prompt %s/%s", c.server.Name, name))
	}
	return res, nil
}

// Complete asks the server for completions.
func (c *Client) Complete(ctx context.Context, params *mcp.CompleteParams) (_ *mcp.CompleteResult, err error) {
	ctx, end := c.track(ctx) // retire.go
	defer func() { err = end(err) }()
	p := *params
	var done func()
	p.Meta, done = c.requestProgress(ctx, c.levelMeta(ctx, params.Meta))
	defer done()
	notice := c.withCancelNotice(ctx)
	res, err := c.session.Complete(ctx, &p)
	if err != nil {
		awaitCancelNotice(ctx, notice)
		return nil, c.classify(ctx, err, "completing with "+c.server.Name)
	}
	return res, nil
}

// logLevelKey is the context key of the log level of a request's caller.
type logLevelKey struct{}

// WithLogLevel returns a context whose requests carry the caller's log
// level (the one it set with logging/setLevel, or sent with its own
// request) to a server on protocol 2026-07-28 or later, which takes it
// from each request's _meta (io.modelcontextprotocol/logLevel) and sends
// no log messages for a request without one. Servers of older versions
// hear the level through logging/setLevel instead.
func WithLogLevel(ctx context.Context, level mcp.LoggingLevel) context.Context {
	return context.WithValue(ctx, logLevelKey{}, level)
}

// requestLevel returns the level WithLogLevel put in ctx, if the server
// takes it per request.
func (c *Client) requestLevel(ctx context.Context) (mcp.LoggingLevel, bool) {
	level, ok := ctx.Value(logLevelKey{}).(mcp.LoggingLevel)
	if !ok || level == "" {
		return "", false
	}
	ir := c.session.InitializeResult()
	return level, ir != nil && ir.ProtocolVersion >= protocolPerRequestMeta
}

// levelMeta returns meta with the caller's log level added for a server
// that takes it per request (a copy; meta itself is not changed).
func (c *Client) levelMeta(ctx context.Context, meta mcp.Meta) mcp.Meta {
	level, ok := c.requestLevel(ctx)
	if !ok {
		return meta
	}
	out := cloneMeta(meta)
	out[mcp.MetaKeyLogLevel] = level
	return out
}

// protocolPerRequestMeta is the first protocol version whose requests
// carry their own metadata (client, capabilities, log level) in _meta.
const protocolPerRequestMeta = "2026-07-28"

// ReadResource reads a resource.
func (c *Client) ReadResource(ctx context.Context, uri string) (_ *mcp.ReadResourceResult, err error) {
	ctx, end := c.track(ctx) // retire.go
	defer func() { err = end(err) }()
	meta, done := c.requestProgress(ctx, c.levelMeta(ctx, nil))
	defer done()
	params := &mcp.ReadResourceParams{Meta: meta, URI: uri}
	params.InputResponses, params.RequestState, _ = c.inputResponses(ctx)
	notice := c.withCancelNotice(ctx)
	res, err := c.session.ReadResource(ctx, params)
	if err != nil {
		awaitCancelNotice(ctx, notice)
		out := c.classify(ctx, err, fmt.Sprintf("reading %s from %s", uri, c.server.Name))
		// Resource not found is -32602 since SEP-2164 (-32002 before):
		// say not_found rather than validation when that is what it is.
		var rpcErr *jsonrpc.Error
		if fe := fault.As(out); fe != nil && errors.As(err, &rpcErr) &&
			(rpcErr.Code == codeResourceNotFoundLegacy || (rpcErr.Code == jsonrpc.CodeInvalidParams && strings.Contains(strings.ToLower(rpcErr.Message), "not found"))) {
			fe.Kind = fault.NotFound
		}
		return nil, out
	}
	return res, nil
}

// codeResourceNotFoundLegacy is the resource-not-found code servers used
// before SEP-2164 made it -32602.
const codeResourceNotFoundLegacy = -32002

// Capabilities returns the server's declared capabilities (never nil).
func (c *Client) Capabilities() *mcp.ServerCapabilities {
	if r := c.session.InitializeResult(); r != nil && r.Capabilities != nil {
		return r.Capabilities
	}
	return &mcp.ServerCapabilities{}
}
