package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/procgroup"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
)

// terminateDuration is how long closing a stdio server waits after closing
// its stdin before sending SIGTERM (and again before SIGKILL).
const terminateDuration = 2 * time.Second

// transportFor builds the go-sdk transport for a server.
// frameLimits bounds what one message from a stdio server may cost.
type frameLimits struct {
	maxFrame  int // larger messages are replaced (default DefaultMaxFrameBytes)
	frameHead int // bytes of an oversized tools/call result kept as its text
	logger    *slog.Logger
}

func transportFor(srv config.Server, stderr io.Writer, limits frameLimits, wire *wireWatch, auth *Auth) (mcp.Transport, error) {
	switch srv.Transport {
	case config.TransportStdio, "":
		cmd, err := commandFor(srv, stderr)
		if err != nil {
			return nil, err
		}
		return &processTransport{cmd: cmd, maxFrame: limits.maxFrame, frameHead: limits.frameHead, logger: limits.logger, noise: stderr}, nil
	case config.TransportSSE:
		hc := httpClientFor(srv, limits, wire, auth)
		return &lifetimeTransport{inner: &mcp.SSEClientTransport{Endpoint: srv.URL, HTTPClient: hc}, http: hc}, nil
	case config.TransportHTTP:
		hc := httpClientFor(srv, limits, wire, auth)
		return &lifetimeTransport{inner: &mcp.StreamableClientTransport{
			Endpoint:   srv.URL,
			HTTPClient: hc,
			// The SDK may resume an event stream that ends (a proxy's idle
			// timeout on the standalone stream) twice without progress, 1 s
			// and 2 s apart; past that the session fails and the supervisor
			// reconnects it.
			MaxRetries: 2,
		}, http: hc}, nil
	case config.TransportWebSocket:
		h := http.Header{}
		for k, v := range srv.Headers {
			h.Set(k, v)
		}
		return &WebSocketTransport{URL: srv.URL, Header: h, HTTPClient: wsClientFor(auth)}, nil
	}
	return nil, fmt.Errorf("unknown transport %q", srv.Transport)
}

// commandFor builds the child process for a stdio server: no shell, a
// minimal environment, its own process group, stderr into a bounded buffer.
func commandFor(srv config.Server, stderr io.Writer) (*exec.Cmd, error) {
	if srv.Command == "" {
		return nil, fmt.Errorf("server %q has no command", srv.Name)
	}
	env := childEnv(srv)
	path := srv.Command
	if !strings.ContainsRune(path, filepath.Separator) {
		// A bare name is looked up on the PATH the child gets.
		p, err := lookPath(path, env)
		if err != nil {
			return nil, err
		}
		path = p
	}
	cmd := exec.Command(path, srv.Args...)
	cmd.Args[0] = srv.Command
	cmd.Env = env
	cmd.Dir = srv.Cwd
	cmd.Stderr = stderr
	// A grandchild holding stderr open must not make Wait hang.
	cmd.WaitDelay = terminateDuration
	// Its own process group, to reap the whole group on close (npx, uvx
	// and docker fork); on Linux it also dies with switchboard.
	cmd.SysProcAttr = procgroup.Attr(true)
	return cmd, nil
}

// childEnv is the environment of a stdio child: the base variables (or the
// whole parent environment with inherit_env) plus the configured env, which
// wins; sorted.
func childEnv(srv config.Server) []string {
	return procgroup.Env(procgroup.BaseEnv, srv.InheritEnv, srv.Env)
}

// processTransport runs a stdio server: the child's stdout goes through a
// frame cap (so that an oversized message is never held in memory) to the
// SDK's newline-delimited JSON transport, and closing the connection closes
// stdin, waits, then signals the child's whole process group — SIGTERM,
// then SIGKILL — and reaps it. (The SDK's CommandTransport owns its pipes,
// leaving no place for the cap, and signals only the group leader.)
type processTransport struct {
	cmd       *exec.Cmd
	maxFrame  int
	frameHead int
	logger    *slog.Logger
	conn      *groupConn // set by Connect
	// noise receives the stdout lines that are not MCP messages (the
	// stderr tail).
	noise io.Writer
}

func (t *processTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stderr := pipeStderr(t.cmd)
	if err := t.cmd.Start(); err != nil {
		stderr.abort()
		return nil, err
	}
	stderr.run()
	calls := newCallTracker()
	limit := t.maxFrame
	if limit <= 0 {
		limit = DefaultMaxFrameBytes
	}
	out := &eofReader{r: stdout}
	in := &epipeWriter{w: stdin}
	iot := &mcp.IOTransport{
		Reader:        &readCloser{Reader: newFrameCap(out, limit, t.frameHead, calls, t.logger).skippingNoise(t.noise), Closer: stdout},
		Writer:        &trackingWriter{w: in, calls: calls},
		MaxLineLength: limit + 1<<20, // replacements are small; whatever passes the cap fits
	}
	conn, err := iot.Connect(ctx)
	if err != nil {
		_ = stdin.Close()
		_ = t.cmd.Process.Kill()
		_ = t.cmd.Wait()
		stderr.finish(t.cmd.WaitDelay)
		return nil, err
	}
	t.conn = &groupConn{Connection: conn, cmd: t.cmd, stderr: stderr, stdin: stdin, out: out, in: in, exited: make(chan struct{})}
	return t.conn, nil
}

// eofReader notes that the child closed its stdout (most often by
// exiting).
type eofReader struct {
	r   io.Reader
	eof atomic.Bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.eof.Store(true)
	}
	return n, err
}

// epipeWriter notes that the child closed its stdin (most often by
// exiting): a write got EPIPE. A child that exits at once can be gone
// before the first message is written, and then the write fails before
// its stdout's end is read.
type epipeWriter struct {
	w      io.WriteCloser
	broken atomic.Bool
}

func (e *epipeWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		e.broken.Store(true)
	}
	return n, err
}

func (e *epipeWriter) Close() error { return e.w.Close() }

type readCloser struct {
	io.Reader
	io.Closer
}

// groupConn is a stdio connection whose Close shuts the child down
// politely, then firmly, and publishes its exit status.
type groupConn struct {
	mcp.Connection
	cmd    *exec.Cmd
	stderr *stderrPipe // nil where os/exec copies stderr
	stdin  io.Closer
	out    *eofReader
	in     *epipeWriter
	once   sync.Once
	err    error
	state  *os.ProcessState // valid once exited is closed
	exited chan struct{}
	// endedFirst records that the child had closed its stdout, or its
	// stdin, before Close asked it to exit: it ended (or gave up on MCP)
	// by itself.
	endedFirst bool
}

func (c *groupConn) Close() error {
	c.once.Do(func() {
		c.endedFirst = c.out.eof.Load() || c.in.broken.Load()
		proc := c.cmd.Process
		waited := make(chan error, 1)
		var wg sync.WaitGroup
		// Closing stdin is how MCP asks a stdio server to exit.
		_ = c.stdin.Close()
		wg.Go(func() { waited <- c.cmd.Wait() })
		wait := func(d time.Duration) (error, bool) {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case err := <-waited:
				return err, true
			case <-t.C:
				return nil, false
			}
		}
		err, ok := wait(terminateDuration)
		if !ok {
			_ = procgroup.Terminate(proc)
			if err, ok = wait(terminateDuration); !ok {
				_ = procgroup.Kill(proc)
				err = <-waited
			}
		}
		// The leader has exited; kill anything it left in its group.
		_ = procgroup.Kill(proc)
		wg.Wait()
		// The last stderr bytes, unless something outside the group
		// holds it open.
		c.stderr.finish(c.cmd.WaitDelay)
		c.Connection.Close() // the SDK side: stops its reader
		if isExitErr(err) {
			err = nil // a server that exits non-zero on shutdown is not our error
		}
		c.err = err
		c.state = c.cmd.ProcessState
		close(c.exited)
	})
	return c.err
}

// exitStatus waits up to d for the child to have exited and returns its
// status, or nil.
func (c *groupConn) exitStatus(d time.Duration) *os.ProcessState {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.exited:
		return c.state
	case <-t.C:
		return nil
	}
}

// lifetimeTransport gives the inner transport a context that lives as long
// as the connection, yet is cancelled if the dial context ends while
// connecting. (The SDK's SSE client ties its event stream to the context
// passed to Connect; a connect timeout must not cut the stream later.)
type lifetimeTransport struct {
	inner mcp.Transport
	http  *http.Client // its connection pool is closed with the connection
}

func (t *lifetimeTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.inner.Connect(life)
	if !stop() {
		// ctx ended during the dial.
		if conn != nil {
			_ = conn.Close()
		}
		cancel()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &cancelConn{Connection: conn, cancel: cancel, http: t.http}, nil
}

type cancelConn struct {
	mcp.Connection
	cancel context.CancelFunc
	http   *http.Client
}

func (c *cancelConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	if c.http != nil {
		c.http.CloseIdleConnections()
	}
	return err
}

// httpClientFor returns the HTTP client for a network server: configured
// headers on every request, the SSE read timeout on event streams,
// terminate_on_close honoured, and JSON response bodies through the frame
// cap (the SDK reads them whole; event streams it bounds itself, at 16 MiB
// an event).
func httpClientFor(srv config.Server, limits frameLimits, wire *wireWatch, auth *Auth) *http.Client {
	// One connection pool per server, deep enough for every call in
	// flight to keep its connection (the default keeps 2 idle per host,
	// so concurrent calls would open and close a connection each).
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConns = 0
	base.MaxIdleConnsPerHost = maxIdlePerServer
	return &http.Client{Transport: &headerTransport{
		base:        auth.wrap(base),
		headers:     srv.Headers,
		readTimeout: srv.SSEReadTimeout,
		streamable:  srv.Transport == config.TransportHTTP,
		skipDelete:  srv.Transport == config.TransportHTTP && !srv.TerminateOnClose,
		limits:      limits,
		calls:       newCallTracker(),
		wire:        wire,
	}}
}

// maxIdlePerServer is how many idle connections to one network server are
// kept for reuse.
const maxIdlePerServer = 256

type headerTransport struct {
	base        http.RoundTripper
	headers     map[string]string
	readTimeout time.Duration
	// streamable is set for the streamable-HTTP transport, whose GET is
	// the standalone event stream: it may rightly stay silent for hours,
	// so the read timeout applies to POST responses only.
	streamable bool
	skipDelete bool
	limits     frameLimits
	calls      *callTracker
	// progressRead, once set, is told the token of every progress
	// notification (and logOrderKey for every log message) read from an
	// event stream the SDK's session reads (not the fast path's), for
	// progressOrder.
	progressRead atomic.Pointer[func(token string)]
	// wire hears what each exchange says about the connection.
	wire *wireWatch
	// tasks, once set, reads what the SDK drops from the answers to
	// initialize and tools/list (tasks.go).
	tasks atomic.Pointer[taskState]
	// marking, once set, keeps what the SDK's session's handlers are to
	// know of the messages it reads (standalone.go).
	marking atomic.Pointer[marking]
	// standaloneEvent is the last event id read off the standalone
	// stream: a GET resuming from it resumes that stream, not a request's.
	standaloneEvent atomic.Pointer[string]
}

// maxRequestNote bounds how much of a request body is read to note its
// id and method.
const maxRequestNote = 1 << 20

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if rp, ok := req.Context().Value(replayKey{}).(*replayedResult); ok {
		// A result the lean path read, for the SDK's loop (replay.go).
		var resp *http.Response
		if resp, req = rp.answer(req); resp != nil {
			return resp, nil
		}
	}
	if t.skipDelete && req.Method == http.MethodDelete {
		// terminate_on_close: false leaves the server-side session alive.
		return &http.Response{
			StatusCode: http.StatusNoContent,
			Body:       http.NoBody,
			Header:     http.Header{},
			Request:    req,
		}, nil
	}
	req = telemetry.HTTPRequest(req) // a clone when it adds the trace context
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, fillIdentity(req.Context(), v))
		}
	}
	var posted []byte // the request's body, when read
	if req.Method == http.MethodPost && req.Body != nil && req.ContentLength >= 0 && req.ContentLength <= maxRequestNote {
		// Note the request's id and method, so that an oversized answer
		// can be handled by what it answers.
		body, err := io.ReadAll(io.LimitReader(req.Body, maxRequestNote+1))
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		t.calls.note(body)
		posted = body
		if len(t.headers) == 0 { // not cloned above; never change the caller's request
			req = req.Clone(req.Context())
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	resp, err := t.base.RoundTrip(req)
	if posted != nil {
		noteCancelPosted(req.Context(), posted) // cancelnotice.go
	}
	t.wire.observe(req, resp, err, t.streamable)
	if err != nil {
		return resp, err
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		if t.readTimeout > 0 && !(t.streamable && req.Method == http.MethodGet) {
			resp.Body = newIdleBody(resp.Body, t.readTimeout)
		}
		if t.streamable && req.Method == http.MethodPost {
			resp.Body = &lateErrorBody{ReadCloser: resp.Body} // lateerror.go
		}
		if f := t.progressRead.Load(); f != nil && req.Context().Value(fastRequestKey{}) == nil {
			ps := &progressScan{ReadCloser: resp.Body, read: *f}
			standalone := t.standalone(req)
			origin := keptMessage{standalone: standalone}
			if !standalone {
				// The SDK sends a request, and resumes its stream, with
				// its caller's context.
				origin.stream = req.Context()
			}
			if ts := t.tasks.Load(); ts != nil {
				// The SDK drops it (tasks.go): passed on with its stream.
				ps.status = func(params json.RawMessage) { ts.statusChanged(streamContext(origin), params) }
			}
			if standalone {
				ps.eventID = &t.standaloneEvent
			}
			resp.Body = ps
			if mk := t.marking.Load(); mk != nil {
				resp.Body = newMarkingBody(resp.Body, &streamMarker{kept: mk.kept, origin: origin, logs: mk.logs, requests: mk.requests, elicit: mk.elicit, lists: mk.lists, notices: mk.notices})
			}
		}
	case strings.HasPrefix(ct, "application/json"):
		limit := t.limits.maxFrame
		if limit <= 0 {
			limit = DefaultMaxFrameBytes
		}
		resp.Body = &readCloser{Reader: newFrameCap(resp.Body, limit, t.limits.frameHead, t.calls, t.limits.logger), Closer: resp.Body}
		resp.ContentLength = -1
	}
	if ts := t.tasks.Load(); ts != nil && posted != nil && resp.StatusCode == http.StatusOK && req.Context().Value(fastRequestKey{}) == nil {
		ts.sniffHTTP(posted, resp)
	}
	if posted != nil {
		captureHTTP(req.Context(), posted, resp) // rawresults.go
	}
	return resp, nil
}

// standalone reports whether req, a request of the SDK's, opens the
// standalone event stream of a streamable-HTTP session: a GET that
// resumes no request's stream (the SDK resumes those with a GET too, from
// their last event id).
func (t *headerTransport) standalone(req *http.Request) bool {
	if !t.streamable || req.Method != http.MethodGet {
		return false
	}
	last := req.Header.Get("Last-Event-ID")
	if last == "" {
		return true
	}
	id := t.standaloneEvent.Load()
	return id != nil && *id == last
}

// fastRequestKey marks the context of the fast path's requests, whose
// progress notifications it orders itself.
type fastRequestKey struct{}

// maxScanLine bounds the part of an event-stream line progressScan keeps
// while it waits for the line's end; a longer line is no progress
// notification (those are small) and is skipped.
const maxScanLine = 64 << 10

// progressScan reports the token of each progress notification in an
// event stream as the SDK reads the stream, before the SDK has parsed
// what follows it (such as the call's result); and passes on each
// notifications/tasks/status, which the SDK drops — on the standalone
// stream too, where a server announces a task's end outside any request.
type progressScan struct {
	io.ReadCloser
	read func(token string)
	// status, when set, is given the params of each
	// notifications/tasks/status.
	status func(params json.RawMessage)
	// eventID, when set, is given the stream's event ids: it is the
	// standalone one.
	eventID *atomic.Pointer[string]
	line    []byte // the current line's start, up to maxScanLine
	skip    bool   // the current line is too long to be a notification
}

func (s *progressScan) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	chunk := p[:n]
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			s.keep(chunk)
			break
		}
		s.keep(chunk[:i])
		if !s.skip {
			s.note(s.line)
		}
		s.line, s.skip = s.line[:0], false
		chunk = chunk[i+1:]
	}
	return n, err
}

func (s *progressScan) keep(b []byte) {
	if s.skip {
		return
	}
	if len(s.line)+len(b) > maxScanLine {
		s.line, s.skip = s.line[:0], true
		return
	}
	s.line = append(s.line, b...)
}

// note reports line's progress token if it is the data of a progress
// notification, logOrderKey if it is a log message's, and
// noticeOrderKey if it is a list change's, a resource update's or an
// elicitation completion's.
func (s *progressScan) note(line []byte) {
	if id, ok := bytes.CutPrefix(line, []byte("id:")); ok && s.eventID != nil {
		v := string(bytes.TrimPrefix(bytes.TrimSuffix(id, []byte("\r")), []byte(" ")))
		s.eventID.Store(&v)
		return
	}
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return
	}
	if s.status != nil && bytes.Contains(data, []byte(`"notifications/tasks/status"`)) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(bytes.TrimSpace(bytes.TrimSuffix(data, []byte("\r"))), &msg) == nil &&
			msg.Method == "notifications/tasks/status" && msg.ID == nil && len(msg.Params) > 0 {
			s.status(msg.Params)
		}
		return
	}
	if bytes.Contains(data, []byte(`"notifications/message"`)) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(bytes.TrimSpace(bytes.TrimSuffix(data, []byte("\r"))), &msg) == nil &&
			msg.Method == "notifications/message" && msg.ID == nil {
			s.read(logOrderKey)
		}
		return
	}
	if bytes.Contains(data, []byte(`/list_changed"`)) || bytes.Contains(data, []byte(`"notifications/resources/updated"`)) ||
		bytes.Contains(data, []byte(`"notifications/elicitation/complete"`)) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(bytes.TrimSpace(bytes.TrimSuffix(data, []byte("\r"))), &msg) == nil && isNotice(msg.Method) && msg.ID == nil {
			s.read(noticeOrderKey)
		}
		return
	}
	if !bytes.Contains(data, []byte(`"notifications/progress"`)) {
		return
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Token any `json:"progressToken"`
		} `json:"params"`
	}
	if json.Unmarshal(bytes.TrimSpace(bytes.TrimSuffix(data, []byte("\r"))), &msg) == nil &&
		msg.Method == "notifications/progress" && msg.Params.Token != nil {
		s.read(tokenKey(msg.Params.Token))
	}
}

// idleBody closes an event stream that stays silent longer than the read
// timeout, so a stalled server is noticed instead of hanging forever.
type idleBody struct {
	io.ReadCloser
	timer *time.Timer
	d     time.Duration
}

func newIdleBody(rc io.ReadCloser, d time.Duration) *idleBody {
	b := &idleBody{ReadCloser: rc, d: d}
	b.timer = time.AfterFunc(d, func() { _ = rc.Close() })
	return b
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.timer.Reset(b.d)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	return b.ReadCloser.Close()
}

// CloseIdleConnections closes the server's pooled connections.
func (t *headerTransport) CloseIdleConnections() {
	if ci, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}
