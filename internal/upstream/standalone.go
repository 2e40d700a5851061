package upstream

//lint:file-ignore SA1019 servers still send log messages; the gateway forwards them (deprecated only from protocol 2026-07-28).

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A streamable-HTTP server sends a log message either on the event stream
// of a request (it belongs to that request) or on its standalone stream,
// the client's GET (it belongs to no request). The SDK's client reads
// every stream into one queue and hands the handler no word of where a
// message came from (go-sdk v1.8.0: streamableClientConn.processStream
// sends each decoded message to the connection's incoming channel, and a
// notification handler's context is the connection's). The lean call path
// reads its calls' streams itself and tags what it reads with the call's
// context; what reaches the SDK's handler comes from the standalone stream
// or from a request the SDK made. To tell the two apart, the HTTP layer
// (headerTransport's progressScan) notes each log message it sees on the
// standalone stream as the SDK reads it — before the SDK has decoded it —
// and the handler looks its message up there.

// standaloneKey marks the context of a log message the server sent on its
// standalone stream.
type standaloneKey struct{}

// SentOutsideRequests reports whether the log message [Events.Log] was
// given with ctx came on the server's standalone event stream (streamable
// HTTP): outside any request, where a client of the server would read it
// on its own standalone stream. False where the transport does not say
// (stdio, SSE, WebSocket) and for a message sent on a request's stream.
func SentOutsideRequests(ctx context.Context) bool {
	v, _ := ctx.Value(standaloneKey{}).(bool)
	return v
}

// maxStandaloneLogs bounds the log messages noted on the standalone
// stream that the handler has not yet taken: a message the SDK did not
// hand its handler (it could not decode it) is never taken, and is
// forgotten once that many are waiting.
const maxStandaloneLogs = 256

// standaloneLogs are the log messages read off the standalone stream that
// the SDK has not yet handed its handler, by content.
type standaloneLogs struct {
	mu      sync.Mutex
	pending map[string]int // logFingerprint -> how many
	n       int
}

// note records the params of a log message read off the standalone
// stream.
func (l *standaloneLogs) note(params json.RawMessage) {
	var p mcp.LoggingMessageParams
	if json.Unmarshal(params, &p) != nil {
		return // the SDK cannot decode it either
	}
	fp := logFingerprint(&p)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil || l.n >= maxStandaloneLogs {
		l.pending, l.n = map[string]int{}, 0
	}
	l.pending[fp]++
	l.n++
}

// take reports whether p was read off the standalone stream, and forgets
// it. Two equal messages, one on a request's stream and one on the
// standalone stream, may be told apart the wrong way round: they are the
// same message.
func (l *standaloneLogs) take(p *mcp.LoggingMessageParams) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 || p == nil {
		return false
	}
	fp := logFingerprint(p)
	if l.pending[fp] == 0 {
		return false
	}
	l.pending[fp]--
	if l.pending[fp] == 0 {
		delete(l.pending, fp)
	}
	l.n--
	return true
}

// logFingerprint is p in a canonical form: the same for the SDK's
// decoding of a message and this package's.
func logFingerprint(p *mcp.LoggingMessageParams) string {
	b, _ := json.Marshal(p)
	return string(b)
}
