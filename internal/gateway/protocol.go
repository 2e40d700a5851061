package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file reads what a client posts to a streamable-HTTP endpoint once,
// and answers the protocol errors the SDK answers badly — a plain-text
// 400, or a JSON-RPC error with code 0 — with the JSON-RPC error the
// specification prescribes, before the SDK sees the message:
//
//   - a body that is not JSON: -32700 (parse error), HTTP 400;
//   - not a JSON-RPC 2.0 message, an id that is neither a string nor an
//     integer that survives a round trip through a JSON number (±2^53; the
//     SDK would answer a larger one under another id), a batch on
//     protocol 2025-06-18 or later, a notification with an id or a request
//     without one: -32600 (invalid request), HTTP 400;
//   - a request for a method no MCP server has: -32601 (method not
//     found); a notification of one is accepted and ignored, as JSON-RPC
//     has it;
//   - a request without the params its method requires: -32602 (invalid
//     params);
//   - a request other than initialize without an Mcp-Session-Id on a
//     gateway that keeps sessions: -32600, HTTP 400 (the SDK would open a
//     session for it that nobody could use, and answer with code 0).
//
// -32601 and -32602 are answers of the server to a request: HTTP 200 on
// protocols before 2026-07-28, 404 and 400 from it on (SEP-2575). What
// the SDK still answers in plain text — a session it does not have, say
// — is rewritten as a JSON-RPC error by sdkErrors, the session-not-found
// answer with the shape the TypeScript SDK gives it (HTTP 404, code
// -32001).

// message is one JSON-RPC message a client posted, read once.
type message struct {
	body     []byte
	batch    bool
	batchLen int // the messages of a batch
	parseErr error

	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`

	method string // Method, decoded
}

// readMessage reads r's body (which the caller has bounded) and puts it
// back for whoever reads it next. err is a failure to read, which the
// caller answers (the body may be over the limit).
func readMessage(r *http.Request) (*message, error) {
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	m := &message{body: body}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		m.batch = true
		m.batchLen = countBatch(trimmed)
		return m, nil
	}
	if err := json.Unmarshal(body, m); err != nil {
		m.parseErr = err
		return m, nil
	}
	if len(m.Method) > 0 {
		if err := json.Unmarshal(m.Method, &m.method); err != nil {
			m.parseErr = fmt.Errorf("method: %w", err)
		}
	}
	return m, nil
}

// countBatch counts the elements of a JSON array, as far as it is one
// (the SDK answers what is malformed).
func countBatch(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return 0
	}
	n := 0
	for dec.More() {
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
		n++
	}
	return n
}

// batchTooLarge answers a batch of more than max messages (0: no limit)
// itself, and reports whether it did. Every message of a batch is served
// at once, each with goroutines and buffers of its own until the last is
// answered: one 3.5 MB post of 38,000 tools/call took the daemon from 44 MB
// to 1 GB and 20,000 goroutines.
func batchTooLarge(w http.ResponseWriter, m *message, max int) bool {
	if !m.batch || max <= 0 || m.batchLen <= max {
		return false
	}
	writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest,
		fmt.Sprintf("Invalid request: the batch has %d messages, over gateway.max_batch (%d); send fewer at once (or one per request, as protocol 2025-06-18 and later do), or raise gateway.max_batch", m.batchLen, max))
	return true
}

// hasID reports whether the message has a non-null id.
func (m *message) hasID() bool { return len(m.ID) > 0 && string(m.ID) != "null" }

// isCall reports whether the message is a request that expects an answer.
func (m *message) isCall() bool { return len(m.Method) > 0 && m.hasID() }

// isResponse reports whether the message answers a request.
func (m *message) isResponse() bool {
	return len(m.Method) == 0 && m.hasID() && (len(m.Result) > 0 || len(m.Error) > 0)
}

// maxExactID is the largest integer id every JSON implementation reads
// exactly (RFC 8259 §6: 2^53 - 1).
const maxExactID = 1<<53 - 1

// idProblem says what is wrong with the message's id, if anything: an id
// is a string or an integer, and an integer beyond ±(2^53 - 1) is not read
// exactly by the SDK (nor by JavaScript), so its answer would carry
// another id.
func (m *message) idProblem() string {
	if !m.hasID() {
		return ""
	}
	switch m.ID[0] {
	case '"':
		var s string
		if json.Unmarshal(m.ID, &s) != nil {
			return "the id is not a valid JSON string"
		}
		return ""
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		n, err := strconv.ParseInt(string(m.ID), 10, 64)
		switch {
		case err != nil && bytes.ContainsAny(m.ID, ".eE"):
			return fmt.Sprintf("the id %s is not an integer; use a string or an integer", m.ID)
		case err != nil || n > maxExactID || n < -maxExactID:
			return fmt.Sprintf("the id %s is beyond ±(2^53-1), which JSON numbers do not carry exactly; use a string or a smaller integer", m.ID)
		}
		return ""
	}
	return fmt.Sprintf("the id %s is neither a string nor an integer", m.ID)
}

// idKey is the form of a JSON-RPC id by which the gateway matches a
// request with what names it later (a notifications/cancelled, the
// client's answer to a request of the gateway's): the same id however it
// is written — the string "\u0041" is "A", the integer -0 is 0 — and a
// string is never an integer ("1" is not 1).
func idKey(id json.RawMessage) string {
	if len(id) == 0 {
		return ""
	}
	if id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) == nil {
			return "s" + s
		}
	}
	if n, err := strconv.ParseInt(string(id), 10, 64); err == nil {
		return "n" + strconv.FormatInt(n, 10)
	}
	return "r" + string(id)
}

// methodRule is what the gateway's MCP server accepts of a method.
type methodRule struct {
	notification bool // sent without an id
	paramsOK     bool // may come without params
}

// methods are the methods a client may send an MCP server (those the
// go-sdk's server handles: mcp/server.go, serverMethodInfos).
var methods = map[string]methodRule{
	"initialize":                       {},
	"ping":                             {paramsOK: true},
	"server/discover":                  {paramsOK: true},
	"tools/list":                       {paramsOK: true},
	"tools/call":                       {},
	"prompts/list":                     {paramsOK: true},
	"prompts/get":                      {},
	"resources/list":                   {paramsOK: true},
	"resources/templates/list":         {paramsOK: true},
	"resources/read":                   {},
	"resources/subscribe":              {},
	"resources/unsubscribe":            {},
	"subscriptions/listen":             {},
	"completion/complete":              {},
	"logging/setLevel":                 {},
	"tasks/get":                        {},
	"tasks/result":                     {},
	"tasks/cancel":                     {},
	"tasks/list":                       {paramsOK: true},
	"notifications/initialized":        {notification: true, paramsOK: true},
	"notifications/cancelled":          {notification: true, paramsOK: true},
	"notifications/progress":           {notification: true},
	"notifications/roots/list_changed": {notification: true, paramsOK: true},
}

// protocolHeader is the header a client names its protocol version in.
const protocolHeader = "Mcp-Protocol-Version"

// newProtocol reports whether a request follows protocol 2026-07-28 or
// later, which has no sessions and carries its version in each request.
func newProtocol(r *http.Request, m *message) bool {
	if r.Header.Get(protocolHeader) >= protocolPerRequest {
		return true
	}
	if len(m.Params) == 0 || !bytes.Contains(m.Params, []byte(mcp.MetaKeyProtocolVersion)) {
		return false
	}
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string)
	return v != ""
}

// protocolPerRequest is the first protocol version without sessions, whose
// requests carry their own version, client and capabilities.
const protocolPerRequest = "2026-07-28"

// precheck answers m itself when it is a protocol error (see above), and
// reports whether it did. stateful says whether the gateway keeps
// sessions; sid is the request's Mcp-Session-Id.
func precheck(w http.ResponseWriter, r *http.Request, m *message, stateful bool, sid string) bool {
	if precheckMessage(w, r, m) {
		return true
	}
	if m.batch || len(m.Method) == 0 {
		return false // a batch of an older protocol, or a response: the SDK reads it
	}
	newProto := newProtocol(r, m)
	rule, known := methods[m.method]
	switch {
	case !known && !m.hasID():
		w.WriteHeader(http.StatusAccepted) // an unknown notification is ignored
		return true
	case !known:
		status := http.StatusOK
		if newProto {
			status = http.StatusNotFound
		}
		writeRPCError(w, status, m.ID, jsonrpc.CodeMethodNotFound, fmt.Sprintf("Method not found: %q is not a method of an MCP server", m.method))
		return true
	case rule.notification && m.hasID():
		writeRPCError(w, http.StatusBadRequest, m.ID, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("Invalid request: %s is a notification; send it without an id", m.method))
		return true
	case !rule.notification && !m.hasID():
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("Invalid request: %s is a request; give it an id", m.method))
		return true
	case !rule.paramsOK && (len(m.Params) == 0 || string(m.Params) == "null"):
		if !m.hasID() {
			writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidParams, fmt.Sprintf("Invalid params: %s needs params", m.method))
			return true
		}
		status := http.StatusOK
		if newProto {
			status = http.StatusBadRequest
		}
		writeRPCError(w, status, m.ID, jsonrpc.CodeInvalidParams, fmt.Sprintf("Invalid params: %s needs params", m.method))
		return true
	case stateful && sid == "" && m.method != "initialize" && m.method != "server/discover" && !newProto:
		writeRPCError(w, http.StatusBadRequest, m.replyID(), jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("Bad Request: %s without an Mcp-Session-Id header: send initialize first, then the session id its answer gave in every request", m.method))
		return true
	}
	return false
}

// sdkRefusesPost reports whether the SDK's streamable-HTTP handler
// refuses the post r before reading its body: a Content-Type other than
// application/json (415), or an Accept that does not take both
// application/json and text/event-stream (400; wildcards count, see
// accepts).
func sdkRefusesPost(r *http.Request) bool {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return true
	}
	jsonOK, streamOK := accepts(r.Header.Values("Accept"))
	return !jsonOK || !streamOK
}

// precheckMessage answers m itself when it is no JSON-RPC message the SDK
// should see — not JSON, not JSON-RPC 2.0, an id the gateway could not
// echo exactly, a batch on a protocol without them, neither a request, a
// notification nor a response — and reports whether it did. Both
// transports' posts go through it; precheck adds the streamable-HTTP
// endpoint's rules.
func precheckMessage(w http.ResponseWriter, r *http.Request, m *message) bool {
	if m.parseErr != nil {
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError,
			"Parse error: the body is not a JSON-RPC message: "+m.parseErr.Error())
		return true
	}
	if m.batch {
		if version := r.Header.Get(protocolHeader); version >= "2025-06-18" {
			writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("Invalid request: protocol %s has no batches; send one message per request", version))
			return true
		}
		return false // older protocols have them: the SDK reads them
	}
	if m.JSONRPC != "2.0" {
		writeRPCError(w, http.StatusBadRequest, m.replyID(), jsonrpc.CodeInvalidRequest, `Invalid request: a JSON-RPC message needs "jsonrpc": "2.0"`)
		return true
	}
	if p := m.idProblem(); p != "" {
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "Invalid request: "+p)
		return true
	}
	if len(m.Method) == 0 && !m.isResponse() {
		writeRPCError(w, http.StatusBadRequest, m.replyID(), jsonrpc.CodeInvalidRequest,
			`Invalid request: the message has neither a "method" nor a "result" or "error"`)
		return true
	}
	return false
}

// replyID is the id an error answer carries: the message's, when it is
// a valid one, else null.
func (m *message) replyID() json.RawMessage {
	if m.hasID() && m.idProblem() == "" {
		return m.ID
	}
	return nil
}

// writeRPCError writes a JSON-RPC error response with HTTP status.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int64, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body, err := marshalNoEscape(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, &jsonrpc.Error{Code: code, Message: msg}})
	if err != nil {
		http.Error(w, msg, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// marshalNoEscape encodes v as the SDK does: without escaping <, > and &.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// codeSessionNotFound is the code of the answer for a session the gateway
// does not have, as the TypeScript SDK's servers give it.
const codeSessionNotFound = -32001

// sdkErrors rewrites a plain-text error the SDK answers a posted message
// with as a JSON-RPC error with the same HTTP status: a session it does
// not have (404) as codeSessionNotFound, anything else as an invalid
// request, with the SDK's words.
type sdkErrors struct {
	http.ResponseWriter
	id        json.RawMessage
	sse       bool // a post to an SSE session's endpoint
	status    int
	rewriting bool
	text      bytes.Buffer
	// stream: the answer is an event stream; late: the SDK has set an
	// error status on it, and writes the error next (lateerror.go).
	stream, late bool
}

func (w *sdkErrors) WriteHeader(code int) {
	if w.status != 0 {
		w.lateStatus(code)
		return
	}
	w.status = code
	w.stream = code == http.StatusOK && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.rewriting = true
		return // written by finish
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *sdkErrors) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.rewriting {
		return w.text.Write(p)
	}
	if w.late {
		return w.writeLate(p)
	}
	return w.ResponseWriter.Write(p)
}

// finish writes a rewritten answer (once).
func (w *sdkErrors) finish() {
	if !w.rewriting {
		return
	}
	w.rewriting = false
	w.Header().Del("X-Content-Type-Options")
	text := strings.TrimSpace(w.text.String())
	code, msg := int64(jsonrpc.CodeInvalidRequest), "Bad Request: "+strings.TrimPrefix(text, "Bad Request: ")
	if w.status == http.StatusNotFound {
		code, msg = codeSessionNotFound, "Session not found: the gateway has no session with this Mcp-Session-Id (it ended, or idled out); send initialize without the header to start a new one"
		if w.sse {
			msg = "Session not found: the gateway has no SSE session with this sessionid (its stream ended, or it idled out); open a new stream with GET /sse"
		}
	}
	writeRPCError(w.ResponseWriter, w.status, w.id, code, msg)
}

// Flush passes on flushes (event streams need them).
func (w *sdkErrors) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.rewriting {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *sdkErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// errBodyRead is a failure to read a posted body.
var errBodyRead = errors.New("reading the request body")

// A prefix: never view of one server negotiates the protocol version its
// server would: a client that asks a newer version than the server
// negotiated with the gateway's upstream client (which asks the newest it
// knows, so what the server negotiated is the newest it speaks) is
// answered the server's. Directly, a server before 2026-07-28 answers a
// client's server/discover of that version with -32022 (or does not know
// the method), the client falls back to initialize, and the server then
// asks it with requests (elicitation, sampling, roots) rather than in
// results; a server on 2025-06-18 answers an initialize of 2025-11-25
// with 2025-06-18. asServerVersion makes the SDK's session negotiate so:
// it refuses the discover as such a server does, and lowers the version
// an initialize asks for before the SDK reads it, so that the session
// the SDK keeps speaks the version it answered.

// asServerVersion returns req, a client's initialize or server/discover
// (method) on a prefix: never view whose server negotiated version
// upstream, as the view's SDK session is to handle it: an initialize
// asking a newer version than upstream's asks upstream's instead; a
// server/discover of a newer version than upstream's, when upstream's is
// older than 2026-07-28, is refused with -32022 naming the versions the
// view speaks (upstream's and older), as the server refuses it. A
// stateless gateway keeps 2026-07-28 (stateless says so): it cannot send
// its clients requests, and asks them in results instead (inputrounds.go).
// upstream "" (the server is not connected) leaves req as it is.
func asServerVersion(method string, req mcp.Request, upstream string, stateless bool) (mcp.Request, error) {
	if upstream == "" || !slices.Contains(mcp.SupportedProtocolVersions(), upstream) {
		return req, nil
	}
	switch r := req.(type) {
	case *mcp.ServerRequest[*mcp.InitializeParams]:
		if method != "initialize" || r.Params == nil || r.Params.ProtocolVersion <= upstream {
			return req, nil
		}
		p := *r.Params
		p.ProtocolVersion = upstream
		out := *r
		out.Params = &p
		return &out, nil
	case *mcp.ServerRequest[*mcp.DiscoverParams]:
		if method != "server/discover" || stateless || upstream >= protocolPerRequest || r.Params == nil {
			return req, nil
		}
		asked, _ := r.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
		if asked <= upstream {
			return req, nil
		}
		supported := slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v > upstream })
		data, err := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: supported, Requested: asked})
		if err != nil {
			return nil, err
		}
		return nil, &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion, Message: "unsupported protocol version", Data: data}
	}
	return req, nil
}
