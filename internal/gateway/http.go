package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
)

// httpHandler serves the MCP endpoints: /mcp and /mcp/{view} over
// streamable HTTP, /sse and /sse/{view} over the legacy SSE transport.
type httpHandler struct {
	g *Gateway

	mu         sync.Mutex
	streamable map[string]http.Handler // by view name
	sse        map[string]http.Handler
	stateless  bool
}

func newHTTPHandler(g *Gateway) *httpHandler {
	return &httpHandler{g: g, streamable: map[string]http.Handler{}, sse: map[string]http.Handler{}}
}

type tokenKey struct{}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cfg := h.g.config()
	gw := cfg.Gateway
	if !checkHostOrigin(w, r, gw) {
		return
	}
	r.Header.Del(requestKeyHeader) // only the gateway sets it
	kind, viewName, ok := route(r.URL.Path)
	if !ok {
		writeError(w, http.StatusNotFound, fault.New(fault.NotFound, "no MCP endpoint at %s", r.URL.Path).
			WithSuggestions("use /mcp (streamable HTTP) or /sse (legacy SSE), or /mcp/VIEW for a view"))
		return
	}
	h.g.mu.Lock()
	view, ok := h.g.viewLocked(viewName)
	h.g.mu.Unlock()
	if !ok {
		var names []string
		for _, v := range gw.Views {
			names = append(names, v.Name)
		}
		writeError(w, http.StatusNotFound, fault.New(fault.NotFound, "no view named %q", viewName).
			WithSuggestions("configured views: "+strings.Join(append([]string{config.DefaultViewName}, names...), ", ")))
		return
	}
	if r, ok = h.authorize(w, r, gw, view.Name); !ok {
		return
	}
	if _, _, err := narrowing(view, cfg, r.URL.Query()); err != nil {
		status := http.StatusBadRequest
		if fault.KindOf(err) == fault.Authorization {
			status = http.StatusForbidden
			h.g.auditRefused(r, audit.ViewDenied, tokenOf(r), view.Name, err.Error())
		}
		writeError(w, status, fault.As(err))
		return
	}
	if r.Method == http.MethodPost {
		limit := gw.MaxRequestBytes
		if limit <= 0 {
			limit = config.DefaultMaxRequestBytes
		}
		if r.ContentLength > limit {
			writeError(w, http.StatusRequestEntityTooLarge, fault.New(fault.LimitExceeded,
				"the request body is %d bytes, over gateway.max_request_bytes (%d bytes)", r.ContentLength, limit).
				WithSuggestions("pass large data by reference (a file path, a resource URI), or raise gateway.max_request_bytes (up to 256MiB)"))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		if r.ContentLength < 0 && !readChunkedBody(w, r, limit) {
			return
		}
	}
	if r.Method == http.MethodGet {
		// An event stream: it stays open.
		release, ok := h.g.userReqs.acquire(sessionUser(r, gw), gw.MaxRequestsPerUser)
		if !ok {
			refuseUserRequest(w, nil, sessionUser(r, gw), gw.MaxRequestsPerUser)
			return
		}
		defer release()
	}
	if kind == "sse" {
		h.serveSSE(w, r, view.Name, gw)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid != "" {
		defer h.g.sess.begin(sid)()
	}
	tok, hasTok := r.Context().Value(tokenKey{}).(config.Token)
	ew := &sdkErrors{ResponseWriter: w}
	defer ew.finish()
	if r.Method == http.MethodPost && sdkRefusesPost(r) {
		// A body that is not JSON, or a client that does not take both
		// answers' media types: the SDK refuses the post before reading
		// it (415, 400), and so does the gateway, with its words, rather
		// than read it or answer it on the lean path.
		h.endpoint(kind, view.Name, gw).ServeHTTP(ew, r)
		return
	}
	if r.Method == http.MethodPost {
		m, err := readMessage(r)
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				writeError(w, http.StatusRequestEntityTooLarge, fault.New(fault.LimitExceeded,
					"the request body is over gateway.max_request_bytes (%d bytes)", tooLarge.Limit).
					WithSuggestions("pass large data by reference (a file path, a resource URI), or raise gateway.max_request_bytes (up to 256MiB)"))
				return
			}
			writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, fmt.Sprintf("Parse error: %v: %v", errBodyRead, err))
			return
		}
		if precheck(w, r, m, !gw.Stateless, sid) || batchTooLarge(w, m, gw.MaxBatch) {
			return
		}
		if m.isCall() || m.batch {
			// It stays open until its answer.
			release, ok := h.g.userReqs.acquire(sessionUser(r, gw), gw.MaxRequestsPerUser)
			if !ok {
				refuseUserRequest(w, m.replyID(), sessionUser(r, gw), gw.MaxRequestsPerUser)
				return
			}
			defer release()
		}
		if sid != "" && !gw.Stateless && !m.batch && m.isCall() && m.method != "initialize" {
			// The call's stream can be resumed (resume.go).
			var served func()
			w, r, served = h.g.resumable(sid, w, r)
			defer func() {
				ew.finish() // what it writes is the stream's too
				served()
			}()
			ew.ResponseWriter = w
		}
		ew.id = m.replyID()
		if m.method == "notifications/initialized" && sid != "" && !gw.Stateless {
			h.g.initializedPosted(sid) // before the SDK answers it (owninit.go)
		}
		switch {
		case m.isResponse() && sid != "" && h.g.deliverFast(sid, m):
			// The answer to a request sent on a lean-path call's stream.
			w.WriteHeader(http.StatusAccepted)
			return
		case m.method == "notifications/cancelled" && sid != "":
			h.g.cancelFast(r, sid, m) // the SDK sees it too
		case m.method == "notifications/cancelled" && gw.Stateless:
			// No session to find the call in: the caller's calls in flight.
			h.g.cancelStateless(r, m)
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if h.tryTask(w, r, m, view, gw) {
			return // a task, or made as one (tasks.go)
		}
		if t := h.taskAnnotationsFor(r, m, view, gw); t != nil {
			aw := &annotatingWriter{ResponseWriter: ew.ResponseWriter, t: t, id: m.ID}
			defer aw.finish()
			ew.ResponseWriter = aw // what the SDK lacks of tasks (taskcaps.go)
		}
		if h.tryFast(w, r, m, view, gw) {
			return
		}
		if sid == "" && !gw.Stateless {
			// The SDK opens a session for this request (initialize).
			cs, lerr := h.g.openSession(gw, sessionUser(r, gw), view.Name, nil)
			if lerr != nil {
				h.g.refuseSession(w, r, m.replyID(), view.Name, lerr)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, cs))
			defer func() {
				if cs.ss.Load() == nil {
					h.g.sessionClosed(cs) // the SDK kept no session
				}
			}()
		}
		if gw.Stateless || m.method == "tools/call" || askingMethods[m.method] {
			// The SDK does not end a call its client cancels (its handler's
			// context goes on): the gateway does, by the request's tag.
			// (A prompts/get, resources/read or completion/complete of a
			// session is tagged for its stream alone: see asking.)
			var end func()
			r, end = h.g.reqCalls.begin(r, h.g.requester(r, sid, tok.User, m.replyID()), m.replyID())
			defer end()
			if sid != "" {
				// The call's stream, for the requests of the gateway's
				// own that go on it (elicitasgiven.go).
				var closePost func()
				w, closePost = h.g.openPost(r.Header.Get(requestKeyHeader), w)
				defer closePost()
			}
			if gw.Stateless || m.method == "tools/call" {
				w = &quietWriter{ResponseWriter: w, rc: &h.g.reqCalls, key: r.Header.Get(requestKeyHeader)}
			}
			ew.ResponseWriter = w
		}
	}
	if r.Method == http.MethodGet && sid != "" && !gw.Stateless {
		// A stream resumed with Last-Event-ID, or the session's
		// standalone stream, resumable (standalone.go).
		done, rr, served := h.standaloneGET(ew, r, sid, view.Name, tok.User, hasTok)
		if done {
			return
		}
		r = rr
		defer func() {
			ew.finish() // what it writes is the stream's too
			served()
		}()
		// The session's standalone stream: notifySession writes on it
		// too (notify.go).
		var closeStream func()
		ew.ResponseWriter, closeStream = h.g.openStandalone(sid, ew.ResponseWriter)
		defer closeStream()
	}
	if sid == "" || !hasTok {
		h.endpoint(kind, view.Name, gw).ServeHTTP(ew, r)
		return
	}
	sw := &statusWriter{ResponseWriter: ew}
	h.endpoint(kind, view.Name, gw).ServeHTTP(sw, r)
	if sw.status >= 200 && sw.status < 300 {
		h.g.sess.bindUser(sid, tok.User)
	}
}

// readChunkedBody reads a body sent without a length (chunked) up to the
// limit, so that one over it gets the same structured 413 as a declared
// length does (the SDK, reading it itself, answers in plain text). Every
// reader of the body reads it whole anyway; it is held once, here. It
// reports false when it has answered.
func readChunkedBody(w http.ResponseWriter, r *http.Request, limit int64) bool {
	body, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, fault.New(fault.LimitExceeded,
			"the request body is over gateway.max_request_bytes (%d bytes)", limit).
			WithSuggestions("pass large data by reference (a file path, a resource URI), or raise gateway.max_request_bytes (up to 256MiB)"))
		return false
	case err != nil:
		writeError(w, http.StatusBadRequest, fault.Wrap(fault.Validation, err, "reading the request body"))
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return true
}

// statusWriter notes the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes on flushes (event streams need them).
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// authenticate returns the token a request presents.
func authenticate(tokens []config.Token, r *http.Request) (config.Token, *fault.Error) {
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) != 2 || !strings.EqualFold(fields[0], "bearer") {
		return config.Token{}, fault.New(fault.Authentication, "this gateway requires a bearer token").
			WithSuggestions("send the header Authorization: Bearer <token>")
	}
	for _, t := range tokens {
		if t.Matches(fields[1]) {
			return t, nil
		}
	}
	return config.Token{}, fault.New(fault.Authentication, "the bearer token is not valid").
		WithSuggestions("check the token, or ask for one that gateway.tokens accepts")
}

// endpoint returns the SDK handler for a view and transport, creating it
// on first use.
func (h *httpHandler) endpoint(kind, view string, gw config.Gateway) http.Handler {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stateless != gw.Stateless {
		// A reload switched modes: new handlers (sessions of the old mode end).
		h.streamable, h.sse, h.stateless = map[string]http.Handler{}, map[string]http.Handler{}, gw.Stateless
	}
	handlers := h.streamable
	if kind == "sse" {
		handlers = h.sse
	}
	if hd, ok := handlers[view]; ok {
		return hd
	}
	var hd http.Handler
	switch kind {
	case "sse":
		// The SDK's transport, under the gateway's handler (sse.go).
		hd = newSSEHandler(h.g, func(r *http.Request) *viewServer {
			return h.viewServerFor(r, view, true)
		})
	default:
		inner := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
			return h.serverFor(r, view, false)
		}, &mcp.StreamableHTTPOptions{
			Stateless: gw.Stateless,
			// The gateway bounds bodies itself, at gateway.max_request_bytes
			// (ServeHTTP), which a reload may change.
			MaxRequestBodyBytes: config.MaxMaxRequestBytes,
			// Idle sessions are closed by the gateway's janitor, which
			// also sees the requests the fast path answers.
			Logger: sdkLogger(h.g.logger),
			// Host and Origin are checked above, with the configured
			// allowances (a proxy's name, say), before the SDK sees them.
			DisableLocalhostProtection: true,
		})
		// The SDK reads the caller from the auth package's context key: it
		// binds sessions to their user and hands the token to handlers.
		authed := auth.RequireBearerToken(func(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
			if id, ok := r.Context().Value(identityKey{}).(*tokenauth.Identity); ok {
				// Checked already, with the configured leeway: the SDK
				// need not check the expiry again without it.
				info := id.TokenInfo()
				info.Expiration = time.Time{}
				return info, nil
			}
			tok, _ := r.Context().Value(tokenKey{}).(config.Token)
			return &auth.TokenInfo{UserID: tok.User, Extra: map[string]any{"token": tok.Name}}, nil
		}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(inner)
		hd = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, ok := r.Context().Value(tokenKey{}).(config.Token); ok {
				authed.ServeHTTP(w, r)
				return
			}
			inner.ServeHTTP(w, r) // no tokens configured
		})
	}
	handlers[view] = hd
	return hd
}

// serverFor returns the MCP server a new session (or, stateless, a
// request) of a view talks to.
func (h *httpHandler) serverFor(r *http.Request, view string, fixedUser bool) *mcp.Server {
	if vs := h.viewServerFor(r, view, fixedUser); vs != nil {
		return vs.srv
	}
	return nil
}

// viewServerFor returns the view server behind serverFor's answer.
func (h *httpHandler) viewServerFor(r *http.Request, view string, fixedUser bool) *viewServer {
	g := h.g
	cfg := g.config()
	g.mu.Lock()
	v, ok := g.viewLocked(view)
	g.mu.Unlock()
	if !ok {
		return nil
	}
	servers, tools, err := narrowing(v, cfg, r.URL.Query())
	if err != nil {
		return nil
	}
	spec := viewSpec{view: v, servers: servers, tools: tools}
	if fixedUser {
		if tok, ok := r.Context().Value(tokenKey{}).(config.Token); ok {
			spec.user = tok.User
		}
	}
	vs, err := g.serverFor(r.Context(), spec)
	if err != nil {
		return nil
	}
	return vs
}

// route splits an endpoint path into its transport and view.
func route(p string) (kind, view string, ok bool) {
	p = strings.TrimSuffix(p, "/")
	for _, k := range []string{"mcp", "sse"} {
		base := "/" + k
		switch {
		case p == base:
			return k, config.DefaultViewName, true
		case strings.HasPrefix(p, base+"/"):
			rest := p[len(base)+1:]
			if rest != "" && !strings.Contains(rest, "/") {
				return k, rest, true
			}
		}
	}
	return "", "", false
}

// checkHostOrigin applies the Host and Origin checks, answering 403 and
// reporting false when one fails.
func checkHostOrigin(w http.ResponseWriter, r *http.Request, gw config.Gateway) bool {
	if !hostAllowed(gw, r.Host) {
		writeError(w, http.StatusForbidden, fault.New(fault.Authorization, "the Host header %q is not allowed here (DNS-rebinding protection)", r.Host).
			WithSuggestions("connect through 127.0.0.1 or localhost, or add the name to gateway.allowed_hosts"))
		return false
	}
	if !originAllowed(gw, r) {
		writeError(w, http.StatusForbidden, fault.New(fault.Authorization, "requests from origin %q are not allowed", r.Header.Get("Origin")).
			WithSuggestions("add the origin to gateway.allowed_origins if this web page should use the gateway"))
		return false
	}
	return true
}

// hostAllowed reports whether a request's Host header is acceptable:
// loopback names always, the listen host, any configured allowance, and —
// on a non-loopback listener with no allowances configured — any (tokens
// guard that listener).
func hostAllowed(gw config.Gateway, host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.Trim(name, "[]")
	for _, a := range gw.AllowedHosts {
		if strings.EqualFold(a, host) || strings.EqualFold(a, name) {
			return true
		}
	}
	if isLoopback(name) {
		return true
	}
	lh, _, err := net.SplitHostPort(gw.Listen)
	if err != nil {
		return false
	}
	if lh != "" && strings.EqualFold(strings.Trim(lh, "[]"), name) {
		return true
	}
	return !isLoopback(lh) && len(gw.AllowedHosts) == 0
}

// originAllowed reports whether a browser Origin may use the gateway: no
// Origin (not a browser), the gateway's own origin (scheme, host and port:
// https://127.0.0.1:7777 is another origin than the http listener's), or a
// configured one. Behind a proxy that ends TLS, the public https origin is
// configured in gateway.allowed_origins.
func originAllowed(gw config.Gateway, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	for _, a := range gw.AllowedOrigins {
		if a == "*" || strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Scheme, scheme) && strings.EqualFold(u.Host, r.Host)
}

// isLoopback reports whether a host name or address is loopback.
func isLoopback(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// writeError writes a structured error (seed 002's form) as JSON.
func writeError(w http.ResponseWriter, status int, err *fault.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(err)
}

// Guard wraps another endpoint of the gateway's address (health,
// metrics, the web page) in the same Host and Origin checks, and — when
// withToken is set and tokens or OAuth are configured — requires any
// valid token: a static one, or an OAuth access token with the scopes the
// gateway as a whole requires.
func (g *Gateway) Guard(h http.Handler, withToken bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gw := g.config().Gateway
		if !checkHostOrigin(w, r, gw) {
			return
		}
		if withToken && gw.AuthRequired() {
			_, ferr := authenticate(gw.Tokens, r)
			switch {
			case ferr == nil:
			case gw.OAuth != nil:
				if _, ok := g.signIn(w, r); !ok {
					return
				}
			default:
				g.auditRefused(r, audit.TokenRefused, config.Token{}, "", ferr.Error())
				w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
				writeError(w, http.StatusUnauthorized, ferr)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// serveSSE serves the legacy SSE transport. A stream's GET opens a
// session, counted and bounded like any (sessions.go), and ends it when
// it returns; the gateway cancels its context to close it. With tokens,
// each session is bound to the user whose token opened it: the SDK's SSE
// handler knows nothing of users, so the gateway notes the session id
// the SDK announces in the stream's first event and refuses another
// user's posts to it.
func (h *httpHandler) serveSSE(w http.ResponseWriter, r *http.Request, view string, gw config.Gateway) {
	tok, hasTok := r.Context().Value(tokenKey{}).(config.Token)
	if r.Method == http.MethodPost {
		h.postSSE(w, r, view, gw, tok, hasTok)
		return
	}
	if r.Method != http.MethodGet || r.URL.Query().Get("sessionid") != "" {
		h.endpoint("sse", view, gw).ServeHTTP(w, r) // the SDK says what is wrong
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	cs, lerr := h.g.openSession(gw, sessionUser(r, gw), view, cancel)
	if lerr != nil {
		h.g.refuseSession(w, r, nil, view, lerr)
		return
	}
	defer h.g.sessionClosed(cs)
	// The handler names the session (setSSEID) before it connects it.
	h.endpoint("sse", view, gw).ServeHTTP(w, r.WithContext(context.WithValue(ctx, sessionKey{}, cs)))
}

// postSSE serves a message posted to an SSE session's endpoint
// (/sse?sessionid=ID): a body that is no JSON-RPC message gets the
// JSON-RPC error precheckMessage gives it, and what the SDK refuses in
// plain text (an unknown session, a wrong content type) is rewritten as a
// JSON-RPC error too; the answer to an accepted message comes on the
// session's stream.
func (h *httpHandler) postSSE(w http.ResponseWriter, r *http.Request, view string, gw config.Gateway, tok config.Token, hasTok bool) {
	m, err := readMessage(r)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, fault.New(fault.LimitExceeded,
				"the request body is over gateway.max_request_bytes (%d bytes)", tooLarge.Limit).
				WithSuggestions("pass large data by reference (a file path, a resource URI), or raise gateway.max_request_bytes (up to 256MiB)"))
			return
		}
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, fmt.Sprintf("Parse error: %v: %v", errBodyRead, err))
		return
	}
	if precheckMessage(w, r, m) || batchTooLarge(w, m, gw.MaxBatch) {
		return
	}
	if _, known := methods[m.method]; !m.batch && m.isCall() && !known {
		// The SDK refuses it in plain text: say so as JSON-RPC does.
		writeRPCError(w, http.StatusBadRequest, m.ID, jsonrpc.CodeMethodNotFound, fmt.Sprintf("Method not found: %q is not a method of an MCP server", m.method))
		return
	}
	if id := r.URL.Query().Get("sessionid"); id != "" {
		if cs := h.g.sess.get(id); cs != nil {
			if hasTok && cs.user != tok.User {
				writeError(w, http.StatusForbidden, fault.New(fault.Authorization, "this SSE session belongs to another user"))
				return
			}
			defer h.g.sess.begin(id)()
		}
		if sh, ok := h.endpoint("sse", view, gw).(*sseHandler); ok && sh.task(id, r, m) {
			w.WriteHeader(http.StatusAccepted) // answered on the stream (tasks_conn.go)
			return
		}
	}
	ew := &sdkErrors{ResponseWriter: w, id: m.replyID(), sse: true}
	defer ew.finish()
	h.endpoint("sse", view, gw).ServeHTTP(ew, r)
}
