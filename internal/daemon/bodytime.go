package daemon

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// A request's body must arrive within bodyGrace plus a second for every
// bodyRate bytes it declares (a body sent without a length: as many as
// gateway.max_request_bytes allows): 94 s for the default 4 MiB. Without
// a bound, a client that sends its headers and then trickles its body a
// byte at a time holds the connection, a goroutine and a file descriptor
// for ever; a few thousand such clients exhaust the daemon's descriptors,
// and then no client, probe or stdio server gets one. The headers have
// ReadHeaderTimeout; http.Server's ReadTimeout would also cut the
// streams a handler writes long after the body arrived, so the deadline
// is set per request and lifted once the body is read.
var bodyGrace = 30 * time.Second

const bodyRate = 64 << 10 // bytes per second

// idleTimeout closes a kept-alive connection on which no request came for
// this long: without it http.Server keeps an idle connection for ever.
var idleTimeout = 2 * time.Minute

// bodyTimes bounds the time of every request body on the listen address
// and logs the requests it cut off.
type bodyTimes struct {
	d       *Daemon
	log     countedWarn
	refused atomic.Int64 // every refusal, for tests
}

// wrap bounds the body time of next's requests.
func (b *bodyTimes) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		n := r.ContentLength
		if n < 0 {
			n = config.DefaultMaxRequestBytes
			if l := b.d.config().Gateway.MaxRequestBytes; l > 0 {
				n = l
			}
		}
		limit := bodyGrace + time.Duration(n/bodyRate)*time.Second
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(limit)) != nil {
			next.ServeHTTP(w, r) // a writer without deadlines (not a real connection)
			return
		}
		r.Body = &timedBody{ReadCloser: r.Body, rc: rc, w: w, b: b, r: r, limit: limit}
		next.ServeHTTP(w, r)
	})
}

// timedBody lifts its request's read deadline once the body is read, so
// that it never cuts what the handler does afterwards (the server's own
// read that notices a client going away), and reports a body that did
// not arrive in time.
type timedBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	w      http.ResponseWriter
	b      *bodyTimes
	r      *http.Request
	limit  time.Duration
	read   int64
	lifted bool
	late   bool
}

func (t *timedBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.read += int64(n)
	switch {
	case err == io.EOF:
		t.lift()
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded) && !t.late:
		t.late = true
		// The handler answers the failed read; the connection must
		// not then wait for the next request behind the rest of this
		// body.
		t.w.Header().Set("Connection", "close")
		t.b.refuse(t.r, t.read, t.limit)
	}
	return n, err
}

// lift takes the deadline away once the body has been read to its end.
// A body closed before its end keeps it: the server then reads the rest to
// reuse the connection, and that read must not wait for ever either.
func (t *timedBody) lift() {
	if !t.lifted {
		t.lifted = true
		_ = t.rc.SetReadDeadline(time.Time{})
	}
}

// refuse logs a request whose body did not arrive in time.
func (b *bodyTimes) refuse(r *http.Request, read int64, limit time.Duration) {
	b.refused.Add(1)
	b.log.warn("refused a request whose body did not arrive in time (a slow or stalled client); the connection is closed; further refusals are counted, and logged every 10s",
		"client", r.RemoteAddr, "path", r.URL.Path, "declared_bytes", r.ContentLength, "received_bytes", read, "limit", limit)
}
