package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// WebSocketSubprotocol is the WebSocket subprotocol that MCP peers negotiate.
// Both [WebSocketTransport] and [NewWebSocketHandler] insist on it.
const WebSocketSubprotocol = "mcp"

// DefaultWebSocketReadLimit is the largest inbound WebSocket message, in
// bytes, that a connection accepts unless told otherwise.
const DefaultWebSocketReadLimit = 32 << 20

// wsCloseTimeout bounds the WebSocket close handshake: a peer that does not
// answer our close frame in time has its connection dropped.
const wsCloseTimeout = 2 * time.Second

// Attribute keys used in WebSocket handler logs.
const (
	logKeyRemote      = "remote"
	logKeyPath        = "path"
	logKeySubprotocol = "subprotocol"
)

// WebSocketTransport is an [mcp.Transport] that connects to an MCP server
// over WebSocket.
//
// The handshake offers the subprotocol "mcp" and fails unless the server
// selects it. Each WebSocket message then carries exactly one JSON-RPC
// message; outbound messages are text messages, inbound text and binary
// messages are both accepted. A JSON-RPC batch (a JSON array) from the server
// is not delivered: every call in it is answered with an Invalid Request
// error, in one array as JSON-RPC 2.0 asks, and the connection stays up (MCP
// dropped batching in protocol version 2025-06-18). A message that is not
// JSON-RPC at all ends the connection.
//
// The context given to Connect bounds only the handshake, never the life of
// the connection. A WebSocketTransport is used for one Connect, as every
// [mcp.Transport].
type WebSocketTransport struct {
	// URL is the server's endpoint: ws://, wss://, http:// or https://.
	URL string
	// Header is sent with the handshake request, e.g. Authorization.
	Header http.Header
	// HTTPClient performs the handshake; nil means http.DefaultClient.
	// Its Timeout bounds the handshake only.
	HTTPClient *http.Client
	// ReadLimit caps the size of one inbound message in bytes. Zero means
	// DefaultWebSocketReadLimit, a negative value means no limit. A larger
	// message ends the connection.
	ReadLimit int64
}

var _ mcp.Transport = (*WebSocketTransport)(nil)

// Connect performs the WebSocket handshake and returns the connection.
func (t *WebSocketTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	where := wsDisplayURL(t.URL)
	// Keep hold of the raw stream, so that Close can cut it.
	hc := http.DefaultClient
	if t.HTTPClient != nil {
		hc = t.HTTPClient
	}
	capture := &upgradeCapture{base: hc.Transport}
	if capture.base == nil {
		capture.base = http.DefaultTransport
	}
	client := *hc
	client.Transport = capture
	ws, resp, err := websocket.Dial(ctx, t.URL, &websocket.DialOptions{
		HTTPClient:   &client,
		HTTPHeader:   t.Header,
		Subprotocols: []string{WebSocketSubprotocol},
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connecting to MCP WebSocket %s: %w", where, ctx.Err())
		}
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, fmt.Errorf("connecting to MCP WebSocket %s: server answered HTTP %s instead of a WebSocket upgrade%s; is this an MCP WebSocket endpoint? (%w)",
				where, resp.Status, wsBodySnippet(resp.Body), err)
		}
		return nil, fmt.Errorf("connecting to MCP WebSocket %s: %w", where, err)
	}
	c := newWSConn(ws, capture.stream, t.ReadLimit)
	if got := ws.Subprotocol(); got != WebSocketSubprotocol {
		c.closeWith(websocket.StatusPolicyViolation, `subprotocol "mcp" required`)
		return nil, fmt.Errorf("connecting to MCP WebSocket %s: server selected WebSocket subprotocol %q, not %q; is this an MCP WebSocket endpoint?",
			where, got, WebSocketSubprotocol)
	}
	return c, nil
}

// WebSocketHandlerOptions configures [NewWebSocketHandler].
type WebSocketHandlerOptions struct {
	// OriginPatterns lists the browser origins allowed besides the request's
	// own host, as host patterns for path.Match (see the OriginPatterns field
	// of websocket.AcceptOptions). By default only same-origin browser
	// requests are accepted; requests without an Origin header (non-browser
	// clients) always are.
	OriginPatterns []string
	// ReadLimit caps the size of one inbound message in bytes. Zero means
	// DefaultWebSocketReadLimit, a negative value means no limit.
	ReadLimit int64
	// Logger receives connection events; nil means discard.
	Logger *slog.Logger
}

// NewWebSocketHandler returns an http.Handler that serves MCP over WebSocket:
// it upgrades each request that offers the subprotocol "mcp" and connects the
// server that getServer returns for it. A WebSocket handshake that does not
// offer "mcp" is refused with 400 Bad Request; getServer returning nil also
// gives 400. Messages are framed as described on [WebSocketTransport].
//
// Each request is served until the client goes away, the session ends or the
// request's context is done.
func NewWebSocketHandler(getServer func(*http.Request) *mcp.Server, opts *WebSocketHandlerOptions) http.Handler {
	h := &webSocketHandler{getServer: getServer}
	if opts != nil {
		h.opts = *opts
	}
	h.logger = h.opts.Logger
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	return h
}

type webSocketHandler struct {
	getServer func(*http.Request) *mcp.Server
	opts      WebSocketHandlerOptions
	logger    *slog.Logger
}

func (h *webSocketHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	logger := h.logger.With(logKeyRemote, r.RemoteAddr, logKeyPath, r.URL.Path)
	if isWebSocketUpgrade(r) && !offersSubprotocol(r, WebSocketSubprotocol) {
		logger.Info("refused WebSocket without the mcp subprotocol", logKeySubprotocol, r.Header.Values("Sec-WebSocket-Protocol"))
		http.Error(w, `Bad Request: MCP over WebSocket requires the "mcp" subprotocol (send "Sec-WebSocket-Protocol: mcp")`, http.StatusBadRequest)
		return
	}
	server := h.getServer(r)
	if server == nil {
		http.Error(w, "no server available", http.StatusBadRequest)
		return
	}
	capture := &hijackCapture{ResponseWriter: w}
	ws, err := websocket.Accept(capture, r, &websocket.AcceptOptions{
		Subprotocols:   []string{WebSocketSubprotocol},
		OriginPatterns: h.opts.OriginPatterns,
	})
	if err != nil {
		// Accept has written the response.
		logger.Info("refused WebSocket", logKeyErr, err)
		return
	}
	c := newWSConn(ws, capture.conn, h.opts.ReadLimit)
	defer c.Close()
	if ws.Subprotocol() != WebSocketSubprotocol { // unreachable after the check above
		c.closeWith(websocket.StatusPolicyViolation, `subprotocol "mcp" required`)
		return
	}

	// The request's context lives until ServeHTTP returns; its values are the
	// session's.
	ss, err := server.Connect(r.Context(), &wsServerTransport{conn: c}, nil)
	if err != nil {
		logger.Warn("MCP session failed to start", logKeyErr, err)
		return
	}
	logger.Debug("MCP WebSocket session started")
	stop := context.AfterFunc(r.Context(), func() { c.Close() })
	err = ss.Wait()
	stop()
	logger.Debug("MCP WebSocket session ended", logKeyErr, err)
}

// upgradeCapture is an http.RoundTripper that remembers the stream of a
// response that switches protocols.
type upgradeCapture struct {
	base   http.RoundTripper
	stream io.Closer
}

func (t *upgradeCapture) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusSwitchingProtocols {
		t.stream = resp.Body
	}
	return resp, err
}

// hijackCapture is an http.ResponseWriter that remembers the connection it
// hands over on Hijack.
type hijackCapture struct {
	http.ResponseWriter
	conn net.Conn
}

func (w *hijackCapture) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	w.conn = conn
	return conn, brw, err
}

func (w *hijackCapture) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wsServerTransport hands an accepted connection to [mcp.Server.Connect].
type wsServerTransport struct {
	conn *wsConn
}

func (t *wsServerTransport) Connect(context.Context) (mcp.Connection, error) {
	return t.conn, nil
}

// wsConn is an [mcp.Connection] over one WebSocket.
//
// A reader goroutine, owned by the connection, reads continuously (so that
// pings and close frames are answered) and hands each message to Read. It
// exits when the WebSocket fails or closes; Close waits for it.
//
// The coder/websocket library closes the whole connection when the context of
// a Read or Write ends. So the socket is only ever used with the connection's
// own context, cancelled at the end of Close, and callers' contexts are
// honoured around it: a cancelled Read just returns, and a cancelled Write
// gives up while queued behind other writes (a half-written message cannot
// be taken back).
type wsConn struct {
	ws     *websocket.Conn
	stream io.Closer       // the raw stream under ws, if known
	ctx    context.Context // the connection's lifetime
	cancel context.CancelFunc

	incoming chan wsRead   // from the reader goroutine to Read; unbuffered
	readDone chan struct{} // closed when the reader goroutine has exited
	writeSem chan struct{} // one writer at a time, acquired with a context

	closeOnce sync.Once
	closed    chan struct{} // closed when Close starts
	closeCode atomic.Int64  // the close status to send; 0 means normal closure
}

type wsRead struct {
	msg jsonrpc.Message
	err error
}

// newWSConn wraps ws, whose underlying stream is stream (nil if unknown).
func newWSConn(ws *websocket.Conn, stream io.Closer, readLimit int64) *wsConn {
	switch {
	case readLimit == 0:
		readLimit = DefaultWebSocketReadLimit
	case readLimit < 0:
		readLimit = -1
	}
	ws.SetReadLimit(readLimit)
	ctx, cancel := context.WithCancel(context.Background())
	c := &wsConn{
		ws:       ws,
		stream:   stream,
		ctx:      ctx,
		cancel:   cancel,
		incoming: make(chan wsRead),
		readDone: make(chan struct{}),
		writeSem: make(chan struct{}, 1),
		closed:   make(chan struct{}),
	}
	go c.readLoop()
	return c
}

func (c *wsConn) SessionID() string { return "" }

// Read returns the next message from the peer. After Close, or once the peer
// has closed the WebSocket normally, it returns an error wrapping io.EOF.
func (c *wsConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case r := <-c.incoming:
		return r.msg, r.err
	}
}

// Write sends msg as one text message. It is safe for concurrent use.
func (c *wsConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding JSON-RPC message: %w", err)
	}
	return c.write(ctx, data)
}

func (c *wsConn) write(ctx context.Context, data []byte) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closed:
		return mcp.ErrConnectionClosed
	case c.writeSem <- struct{}{}:
	}
	defer func() { <-c.writeSem }()
	// select chooses at random among ready cases: look again.
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	if err := c.ws.Write(c.ctx, websocket.MessageText, data); err != nil {
		return fmt.Errorf("writing to MCP WebSocket: %w", err)
	}
	return nil
}

// Close closes the connection with a close handshake bounded by
// wsCloseTimeout. It unblocks Read and Write at once, may be called any number
// of times from any goroutine, and returns when the reader goroutine is gone.
// The handshake is best effort, so Close reports no error.
func (c *wsConn) Close() error {
	c.closeWith(websocket.StatusNormalClosure, "")
	return nil
}

func (c *wsConn) closeWith(code websocket.StatusCode, reason string) {
	c.closeOnce.Do(func() {
		close(c.closed)
		if fail := websocket.StatusCode(c.closeCode.Load()); fail != 0 {
			code, reason = fail, "invalid JSON-RPC message"
		}
		// A peer that ignores the handshake has its stream cut, which ends
		// ws.Close. (Without the stream, cancelling the reader's context
		// does it, as long as the reader is the one waiting.)
		t := time.AfterFunc(wsCloseTimeout, func() {
			c.cancel()
			if c.stream != nil {
				c.stream.Close()
			}
		})
		_ = c.ws.Close(code, reason)
		t.Stop()
		c.cancel()
		<-c.readDone
	})
}

func (c *wsConn) readLoop() {
	defer close(c.readDone)
	for {
		r, deliver := c.readOne()
		if deliver {
			select {
			case c.incoming <- r:
			case <-c.closed:
				// Keep reading until the socket ends, so that the close
				// handshake completes.
			}
		}
		if r.err != nil {
			return
		}
	}
}

// readOne reads one WebSocket message. It reports whether r is for Read: a
// rejected batch is answered here and not delivered.
func (c *wsConn) readOne() (r wsRead, deliver bool) {
	_, data, err := c.ws.Read(c.ctx)
	if err != nil {
		return wsRead{err: c.readError(err)}, true
	}
	if isJSONArray(data) {
		if err := c.rejectBatch(data); err != nil {
			return wsRead{err: err}, true
		}
		return wsRead{}, false
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		c.closeCode.Store(int64(websocket.StatusInvalidFramePayloadData))
		return wsRead{err: fmt.Errorf("decoding JSON-RPC message from MCP WebSocket: %w", err)}, true
	}
	return wsRead{msg: msg}, true
}

// readError describes a failed WebSocket read. Only a normal close by the
// peer, or any failure after our own Close, wraps io.EOF, which the SDK takes
// for a clean end of the session.
func (c *wsConn) readError(err error) error {
	select {
	case <-c.closed:
		return io.EOF
	default:
	}
	switch code := websocket.CloseStatus(err); code {
	case -1:
		if errors.Is(err, io.EOF) {
			// The TCP connection ended without a close frame: not a clean
			// end, so do not let it pass for one.
			return fmt.Errorf("MCP WebSocket connection lost without a close frame: %w", io.ErrUnexpectedEOF)
		}
		return fmt.Errorf("reading from MCP WebSocket: %w", err)
	case websocket.StatusNormalClosure, websocket.StatusGoingAway:
		return fmt.Errorf("MCP WebSocket closed by peer: %w", io.EOF)
	default:
		var ce websocket.CloseError
		errors.As(err, &ce)
		return fmt.Errorf("MCP WebSocket closed by peer with status %d %s: %q", int(code), code, ce.Reason)
	}
}

// isJSONArray reports whether data is a JSON array.
func isJSONArray(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '['
}

// rejectBatch answers every call in a JSON-RPC batch with Invalid Request,
// in one array; notifications and responses in it are dropped. A batch that
// is empty or not an array of objects gets a single error with a null id,
// as JSON-RPC 2.0 says.
func (c *wsConn) rejectBatch(data []byte) error {
	const msg = "JSON-RPC batches are not supported by MCP over WebSocket; send one message per WebSocket message"
	var raws []json.RawMessage
	var out []byte
	if err := json.Unmarshal(data, &raws); err != nil || len(raws) == 0 {
		out = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":%q}}`, jsonrpc.CodeInvalidRequest, msg)
	} else {
		var replies [][]byte
		for _, raw := range raws {
			m, err := jsonrpc.DecodeMessage(raw)
			req, ok := m.(*jsonrpc.Request)
			if err != nil || !ok || !req.IsCall() {
				continue
			}
			reply, err := jsonrpc.EncodeMessage(&jsonrpc.Response{
				ID:    req.ID,
				Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg},
			})
			if err != nil {
				return fmt.Errorf("encoding reply to a JSON-RPC batch: %w", err)
			}
			replies = append(replies, reply)
		}
		if len(replies) == 0 {
			return nil
		}
		out = append([]byte{'['}, bytes.Join(replies, []byte{','})...)
		out = append(out, ']')
	}
	if err := c.write(c.ctx, out); err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		return err
	}
	return nil
}

// isWebSocketUpgrade reports whether r asks to upgrade to WebSocket.
func isWebSocketUpgrade(r *http.Request) bool {
	return wsHeaderHasToken(r.Header, "Upgrade", "websocket")
}

// offersSubprotocol reports whether the WebSocket handshake r offers proto.
func offersSubprotocol(r *http.Request, proto string) bool {
	return wsHeaderHasToken(r.Header, "Sec-WebSocket-Protocol", proto)
}

// wsHeaderHasToken reports whether the comma-separated header key holds token,
// ignoring case, as coder/websocket matches subprotocols.
func wsHeaderHasToken(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// wsDisplayURL returns u without user info, query or fragment, which may hold
// credentials.
func wsDisplayURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	p.User = nil
	p.RawQuery = ""
	p.ForceQuery = false
	p.Fragment = ""
	p.RawFragment = ""
	return p.String()
}

// wsBodySnippet returns the start of a refused handshake's response body on
// one line, prefixed with ": ", or "" if there is none.
func wsBodySnippet(body io.Reader) string {
	if body == nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(body, 200))
	s := strings.Join(strings.Fields(string(b)), " ")
	if s == "" {
		return ""
	}
	return ": " + s
}
