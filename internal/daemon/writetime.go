package daemon

import (
	"errors"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// gateway.write_timeout bounds how long one write to a client may wait for
// the client to take it. A client that opens an event stream (a call's, the
// standalone GET, an SSE session's) and stops reading it fills its socket's
// buffers; without a bound the next write waits for ever, and with it
// whatever is writing: the handler of an upstream session's notifications
// is one goroutine per upstream connection, so one stalled client held
// every other client's progress, log messages and server requests on that
// connection for as long as the stalled client kept its connection open
// (the SDK queues the server's further notifications meanwhile, without
// bound). Past the bound the write fails, the connection is
// closed, and the client's call stream is kept for it to resume (within
// its window and the session's bound; gateway.md, resumption), else its
// call is cancelled as when a client drops a request.

// writeTimes bounds the writes of every response on the listen address and
// logs the clients it cut off.
type writeTimes struct {
	d       *Daemon
	log     countedWarn
	stalled atomic.Int64 // every client cut off, for tests
}

// wrap bounds each write of next's responses by gateway.write_timeout.
func (t *writeTimes) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if rc.SetWriteDeadline(time.Time{}) != nil {
			next.ServeHTTP(w, r) // a writer without deadlines (not a real connection)
			return
		}
		timeout := t.d.config().Gateway.WriteTimeout
		if timeout <= 0 {
			timeout = config.DefaultWriteTimeout
		}
		tw := &timedWriter{ResponseWriter: w, rc: rc, t: t, r: r, timeout: timeout}
		next.ServeHTTP(tw, r)
		// What the server writes after the handler (the end of a chunked
		// body) is bounded too.
		tw.arm()
	})
}

// timedWriter is a response whose every write must be taken by the client
// within clientWriteTimeout.
type timedWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	t       *writeTimes
	r       *http.Request
	timeout time.Duration
	written atomic.Int64
	cut     atomic.Bool
}

func (w *timedWriter) arm() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout)) }

func (w *timedWriter) WriteHeader(code int) {
	w.arm()
	w.ResponseWriter.WriteHeader(code)
}

func (w *timedWriter) Write(p []byte) (int, error) {
	w.arm()
	n, err := w.ResponseWriter.Write(p)
	w.written.Add(int64(n))
	w.failed(err)
	return n, err
}

// Flush sends what is buffered, within the bound too.
func (w *timedWriter) Flush() {
	w.arm()
	w.failed(w.rc.Flush())
}

// Unwrap gives http.ResponseController the connection's own writer.
func (w *timedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// failed notes a write that the client did not take in time.
func (w *timedWriter) failed(err error) {
	if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) || w.cut.Swap(true) {
		return
	}
	w.t.stalled.Add(1)
	w.t.log.warn("closed the connection of a client that did not read its response within gateway.write_timeout (a stalled or too slow client); a call stream can be resumed; further ones are counted, and logged every 10s",
		"client", w.r.RemoteAddr, "path", w.r.URL.Path, "written_bytes", w.written.Load(), "timeout", w.timeout)
}

// idleConn lifts a connection's write deadline when it goes idle, so that
// a deadline armed for one response does not cut what the server writes
// on the connection later on its own (an error answer to a bad request).
func idleConn(c net.Conn, s http.ConnState) {
	if s == http.StateIdle {
		_ = c.SetWriteDeadline(time.Time{})
	}
}
