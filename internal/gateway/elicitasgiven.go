package gateway

//lint:file-ignore SA1019 elicitation is deprecated only from protocol 2026-07-28; clients and servers use it today, and the gateway forwards it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// An owned per_client upstream session's elicitation/create is its
// client's business alone: the gateway sends the server's params to that
// client as given and hands the client's answer back as it was given.
// ServerSession.Elicit would not: it sends mode "form" where the server
// named no mode, and checks an accepted form's content against the
// requested schema and fills in the schema's defaults for the fields the
// client left out, none of which the server would see directly. So the
// request is written on the stream the SDK would have used, with an id of
// the gateway's own ("switchboard-N", as the lean path's requests), and
// the client's answer is taken off before the SDK sees it:
//
//   - during a lean-path call, on the call's stream (callStream);
//   - during a call the SDK answers over streamable HTTP, on that call's
//     event stream, which the SDK writes through a postStream;
//   - over stdio and the legacy SSE transport, on the session's
//     connection (taskConn), which takes the answer off what it reads;
//   - outside a call over streamable HTTP, on the session's standalone
//     stream.
//
// Where none is open (a streamable-HTTP client with no standalone stream,
// outside a call), ServerSession.Elicit is left to say so. The upstream
// side's half is in internal/upstream (elicitasgiven.go): it leaves the
// answer alone on its way to the server. The shared and per_user
// sessions keep the SDK's checks: their requests may be answered by the
// CLI, the console or the agent.

// elicitWire is an elicitation/create's params as a server sends them: a
// mode only where it named one (mcp.ElicitParams always writes one).
type elicitWire struct {
	Meta            mcp.Meta `json:"_meta,omitempty"`
	Mode            string   `json:"mode,omitempty"`
	Message         string   `json:"message"`
	RequestedSchema any      `json:"requestedSchema,omitempty"`
	URL             string   `json:"url,omitempty"`
	ElicitationID   string   `json:"elicitationId,omitempty"`
}

// elicitsAsGiven reports whether server's elicitation that came with ctx
// goes to its client as given: it came from an owned per_client session.
func elicitsAsGiven(ctx context.Context) bool {
	k, ok := upstream.SessionKeyFrom(ctx)
	return ok && k.Mode == config.SessionPerClient
}

// rawSink is where a request of the gateway's own reaches a client
// session, and under which key its answer comes back (pendingKey).
type rawSink struct {
	write  func(msg []byte) bool
	prefix string // the session id, or a connection's key
}

// pendingKey is the key of g.fastPending under which the answer to the
// request id (as sent) on a stream of prefix is awaited.
func pendingKey(prefix string, id json.RawMessage) string {
	return prefix + "\x00" + idKey(id)
}

// sinkFor returns the stream on which ss's client gets a request of the
// gateway's for call c (nil: outside a call), as the SDK would send it.
func (g *Gateway) sinkFor(c *clientCall, ss *mcp.ServerSession) (rawSink, bool) {
	if c != nil && c.stream != nil && c.stream.sid != "" {
		return rawSink{write: c.stream.write, prefix: c.stream.sid}, true
	}
	if conn, ok := g.streams.conns.Load(ss); ok {
		tc := conn.(*taskConn)
		return rawSink{write: tc.request, prefix: tc.t.key}, true
	}
	sid := ss.ID()
	if sid == "" {
		return rawSink{}, false
	}
	if c != nil {
		if c.post == nil {
			return rawSink{}, false
		}
		return rawSink{write: c.post.event, prefix: sid}, true
	}
	if s, ok := g.streams.standalone.Load(sid); ok {
		st := s.(*standaloneStream)
		return rawSink{write: func(msg []byte) bool { return st.event(msg) }, prefix: sid}, true
	}
	return rawSink{}, false
}

// elicitAsGiven asks ss's client the server's elicitation p on the
// stream of call c (nil: outside a call), as the server sent it — its
// params byte for byte where the upstream side kept them (sent) — and
// returns the client's answer as it gave it, which the server gets as
// the client wrote it (sent.AnswerAsGiven); a JSON-RPC error the client
// answers with is returned as it is, for the server to get.
func (g *Gateway) elicitAsGiven(ctx context.Context, c *clientCall, ss *mcp.ServerSession, p *mcp.ElicitParams, sent *upstream.SentRequest) (*mcp.ElicitResult, error) {
	sink, ok := g.sinkFor(c, ss)
	if !ok {
		return ss.Elicit(ctx, p) // no stream of the gateway's: the SDK's says why
	}
	var params any = elicitWire{Meta: p.Meta, Mode: p.Mode, Message: p.Message, RequestedSchema: p.RequestedSchema, URL: p.URL, ElicitationID: p.ElicitationID}
	if sent != nil {
		params = sent.Params
	}
	raw, err := g.askRaw(ctx, sink, "elicitation/create", params)
	if err != nil {
		return nil, err
	}
	var res mcp.ElicitResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("elicitation/create: decoding the client's answer: %w", err)
	}
	if sent != nil {
		sent.AnswerAsGiven(raw)
	}
	return &res, nil
}

// askRaw sends the request method with params on sink, with an id of the
// gateway's own, and waits for the client's answer: its result, or the
// JSON-RPC error it answered with (a *jsonrpc.Error, unwrapped, so that
// whoever asked gets it as the client gave it). When ctx ends first, the
// client is told with notifications/cancelled, as the SDK tells it.
func (g *Gateway) askRaw(ctx context.Context, sink rawSink, method string, params any) (json.RawMessage, error) {
	id := json.RawMessage(`"switchboard-` + strconv.FormatUint(fastRequestIDs.Add(1), 10) + `"`)
	msg, err := marshalNoEscape(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  any             `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		return nil, fmt.Errorf("sending %q: %w", method, err)
	}
	key := pendingKey(sink.prefix, id)
	reply := make(chan fastReply, 1)
	g.fastPending.Store(key, reply)
	defer g.fastPending.Delete(key)
	if !sink.write(msg) {
		return nil, fmt.Errorf("sending %q: the client's stream is closed", method)
	}
	select {
	case rep := <-reply:
		if rep.err != nil {
			return nil, rep.err
		}
		return rep.result, nil
	case <-ctx.Done():
		if note, err := marshalNoEscape(struct {
			JSONRPC string               `json:"jsonrpc"`
			Method  string               `json:"method"`
			Params  *mcp.CancelledParams `json:"params"`
		}{"2.0", "notifications/cancelled", &mcp.CancelledParams{RequestID: id, Reason: ctx.Err().Error()}}); err == nil {
			sink.write(note)
		}
		return nil, fmt.Errorf("asking the client %q: %w", method, ctx.Err())
	}
}

// deliverConn hands resp, read on the connection known as prefix, to the
// request of the gateway's it answers, and reports whether there was one.
func (g *Gateway) deliverConn(prefix string, resp *jsonrpc.Response) bool {
	raw, err := json.Marshal(resp.ID.Raw())
	if err != nil {
		return false
	}
	v, ok := g.fastPending.LoadAndDelete(pendingKey(prefix, raw))
	if !ok {
		return false
	}
	var rep fastReply
	if resp.Error != nil {
		var we *jsonrpc.Error
		if !errors.As(resp.Error, &we) {
			we = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: resp.Error.Error()}
		}
		rep.err = we
	} else {
		rep.result = resp.Result
	}
	v.(chan fastReply) <- rep
	return true
}

// request writes msg, a request of the gateway's, on the connection.
func (c *taskConn) request(msg []byte) bool {
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return false
	}
	return c.Connection.Write(c.ctx, m) == nil
}

// postStream is the response of a tools/call the SDK answers over
// streamable HTTP: the SDK's events and the gateway's own requests on the
// call's stream go through it one whole event at a time (the SDK writes
// each event in one Write), until the SDK's handler returns.
type postStream struct {
	lockedWriter

	header bool // the status line is written
	done   bool // the SDK's handler returned: nothing more
}

// openPost wraps w, the response to a tools/call the SDK answers, tagged
// key (requestKeyHeader), so that the call's handler finds it (postFor);
// call the returned function when the SDK's handler returns.
func (g *Gateway) openPost(key string, w http.ResponseWriter) (http.ResponseWriter, func()) {
	s := &postStream{lockedWriter: lockedWriter{ResponseWriter: w}}
	g.streams.posts.Store(key, s)
	return s, func() {
		g.streams.posts.CompareAndDelete(key, s)
		s.mu.Lock()
		s.done = true
		s.mu.Unlock()
	}
}

// postFor returns the response of the SDK-answered call tagged key, if
// it is open.
func (g *Gateway) postFor(key string) *postStream {
	if key == "" {
		return nil
	}
	s, _ := g.streams.posts.Load(key)
	p, _ := s.(*postStream)
	return p
}

func (s *postStream) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.header {
		return // the gateway's event wrote it already
	}
	s.header = true
	s.ResponseWriter.WriteHeader(code)
}

func (s *postStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.header = true
	return s.ResponseWriter.Write(p)
}

// streaming reports whether the SDK answers the call with an event
// stream (it set the header before it handed the call over) that is
// still open, on which event writes.
func (s *postStream) streaming() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.done && strings.HasPrefix(s.Header().Get("Content-Type"), "text/event-stream")
}

// event writes msg as one event of the call's stream, if the SDK answers
// it with one (it set the header before it handed the call over) and has
// not finished.
func (s *postStream) event(msg []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || !strings.HasPrefix(s.Header().Get("Content-Type"), "text/event-stream") {
		return false
	}
	s.header = true
	b := make([]byte, 0, len(eventPrefix)+len(msg)+2)
	b = append(b, eventPrefix...)
	b = append(b, msg...)
	b = append(b, "\n\n"...)
	if _, err := s.ResponseWriter.Write(b); err != nil {
		return false
	}
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	return true
}
