package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// This file makes a session's call streams resumable, as a server with an
// event store makes them (MCP 2025-11-25, "Resumability and
// Redelivery"): each event the gateway sends on the event stream that
// answers a call gets an id, <stream>_<n> as the SDKs number theirs; the
// events are kept, per session and bounded; and a client whose connection
// broke comes back with a GET carrying Last-Event-ID, gets what it missed,
// and then the rest of the stream as it comes.
//
// It is done below both call paths, on the HTTP response: the lean path
// (fastpath.go) and the SDK's handler, with the gateway's own events
// between them (elicitasgiven.go, notify.go), write through one
// resumableWriter, which numbers every event it sees and forwards it to
// whichever connection the client has open. The SDK is given no event
// store: its numbering would not cover the gateway's own events.
//
// A call's request is served on a context that the client's connection
// does not end: when the connection breaks after the client was given an
// id, the call goes on for resumeWindow, waiting for the client to come
// back; one given no id cannot come back, and its call is cancelled at
// once, as before. A finished stream's events are kept for resumeWindow
// too, for a client whose connection broke just before the answer. The
// session's events are bounded by resumeBufferBytes (the oldest finished
// streams go first, then the oldest events); everything goes with the
// session.
//
// The session's standalone stream (a GET without Last-Event-ID) is made
// resumable the same way (standalone.go says how it differs): the SDK's
// handler of the GET writes through a resumableWriter of its own, so what
// the gateway and the SDK send on it while the client is away — a list
// change, a log message, a request — is kept and replayed when the client
// comes back with the last id it got.

const (
	// resumeWindow is how long a broken call stream waits for its client
	// to resume it, and how long a finished one is kept.
	resumeWindow = 30 * time.Second
	// resumeBufferBytes bounds the events a session keeps for resumption.
	resumeBufferBytes = 1 << 20
	// standaloneLiveBytes bounds the events a standalone stream keeps
	// while its client is connected (standalone.go).
	standaloneLiveBytes = 64 << 10
)

// resumeStore holds the resumable streams of one session.
type resumeStore struct {
	window time.Duration // resumeWindow
	limit  int           // resumeBufferBytes

	mu      sync.Mutex
	streams map[string]*resumableWriter
	order   []*resumableWriter // oldest first
	bytes   int
	closed  bool
	// standalone is the session's newest standalone stream (one the SDK
	// answered with an event stream), and standaloneKeys the keys of its
	// latest ones, newest last, whose events may no longer be kept
	// (standalone.go).
	standalone     *resumableWriter
	standaloneKeys []string
}

// resumableWriter is the response of a call's request, and of each GET
// resuming it: it numbers and keeps the events written to it, and sends
// them on the connection the client has open (live), if any.
type resumableWriter struct {
	store  *resumeStore
	key    string
	header http.Header
	cancel context.CancelFunc // ends the call: the client will not come back

	// mu orders writes and the change of connection; the stored events are
	// the store's (store.mu).
	mu       sync.Mutex
	live     http.ResponseWriter // nil: detached
	owner    http.ResponseWriter // the request's own response
	wrote    bool                // the owner's header was sent
	sse      bool                // the response is an event stream
	pending  []byte              // a part of an event not yet ended
	next     int                 // the index of the next event
	done     bool                // the request was served
	released chan struct{}       // closed when live changes or the stream ends
	timer    *time.Timer         // the resume window, while detached

	// standalone is set for the session's standalone stream (a GET);
	// prelude is what goes first on its event stream, before anything the
	// SDK writes (the events it replays of the stream before it); served
	// is closed when the GET's handler has returned (standalone.go).
	standalone bool
	prelude    []byte
	served     chan struct{}

	// events[i] has index first+i, size their bytes; finished is done,
	// for the store (store.mu).
	first    int
	events   [][]byte
	size     int
	finished bool
}

// resumable returns w and r for serving a call posted to session sid
// resumably, and the function to call once it has been served.
// A session the gateway does not have gets none (the SDK refuses the
// request).
func (g *Gateway) resumable(sid string, w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request, func()) {
	st := g.resumeStore(sid)
	if st == nil {
		return w, r, func() {}
	}
	return st.open(w, r)
}

// resumeStore returns the resumable streams of session sid, nil for a
// session the gateway does not have.
func (g *Gateway) resumeStore(sid string) *resumeStore {
	if g.sess.get(sid) == nil {
		return nil
	}
	v, ok := g.resumes.Load(sid)
	if !ok {
		v, _ = g.resumes.LoadOrStore(sid, newResumeStore(resumeWindow, resumeBufferBytes))
		if g.sess.get(sid) == nil {
			g.resumeSessionClosed(sid) // it closed meanwhile
		}
	}
	return v.(*resumeStore)
}

func newResumeStore(window time.Duration, limit int) *resumeStore {
	return &resumeStore{window: window, limit: limit, streams: map[string]*resumableWriter{}}
}

// open returns w and r for serving a call resumably, and the function to
// call once it has been served.
func (st *resumeStore) open(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request, func()) {
	return st.openStream(w, r, nil)
}

// openStream is open, with set (unless nil) given the stream's writer
// before anything can use it.
func (st *resumeStore) openStream(w http.ResponseWriter, r *http.Request, set func(*resumableWriter)) (http.ResponseWriter, *http.Request, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	rw := &resumableWriter{store: st, key: rand.Text(), header: w.Header(), cancel: cancel, live: w, owner: w, released: make(chan struct{})}
	if set != nil {
		set(rw)
	}
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		cancel()
		return w, r, func() {}
	}
	st.streams[rw.key] = rw
	st.order = append(st.order, rw)
	st.mu.Unlock()
	stop := context.AfterFunc(r.Context(), func() { rw.lost(w) })
	return rw, r.WithContext(ctx), func() {
		stop()
		rw.finish()
		cancel()
	}
}

func (w *resumableWriter) Header() http.Header { return w.header }

func (w *resumableWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeaderLocked(code)
}

func (w *resumableWriter) writeHeaderLocked(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	w.sse = code == http.StatusOK && strings.HasPrefix(w.header.Get("Content-Type"), "text/event-stream")
	if w.live == w.owner && w.live != nil {
		w.live.WriteHeader(code)
	}
	if w.sse && w.standalone {
		w.store.setStandalone(w)
		if len(w.prelude) > 0 {
			w.send(w.prelude)
		}
	}
	w.prelude = nil
}

// Write numbers and keeps each whole event of an event stream, and sends
// what it is given on the live connection.
func (w *resumableWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeaderLocked(http.StatusOK)
	if !w.sse {
		if w.live == nil {
			return len(p), nil
		}
		return w.live.Write(p)
	}
	w.pending = append(w.pending, p...)
	for {
		i := bytes.Index(w.pending, []byte("\n\n"))
		if i < 0 {
			break
		}
		block := w.pending[:i+2]
		var out []byte
		if block[0] == ':' {
			out = bytes.Clone(block) // a comment: no event
		} else {
			// The id goes after the event's name, where the SDKs put it.
			id := formatResumeID(w.key, w.next)
			w.next++
			at := 0
			if bytes.HasPrefix(block, []byte("event:")) {
				at = bytes.IndexByte(block, '\n') + 1
			}
			out = make([]byte, 0, len(block)+len(id)+5)
			out = append(out, block[:at]...)
			out = append(out, "id: "...)
			out = append(out, id...)
			out = append(out, '\n')
			out = append(out, block[at:]...)
			w.store.keep(w, out)
		}
		w.pending = w.pending[i+2:]
		w.send(out)
	}
	if len(w.pending) == 0 {
		w.pending = nil
	}
	return len(p), nil
}

// send writes out on the live connection; a connection that fails is
// dropped (its request's end detaches it too).
func (w *resumableWriter) send(out []byte) {
	if w.live == nil {
		return
	}
	if _, err := w.live.Write(out); err != nil {
		w.detachLocked(w.live)
	}
}

// Flush passes on flushes (event streams need them).
func (w *resumableWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if f, ok := w.live.(http.Flusher); ok && w.live != nil {
		f.Flush()
	}
}

// lost detaches conn, whose request ended: the client's connection broke.
func (w *resumableWriter) lost(conn http.ResponseWriter) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.detachLocked(conn)
}

// detachLocked detaches conn if it is live, and gives the client
// resumeWindow to come back (none, if it was given no id).
func (w *resumableWriter) detachLocked(conn http.ResponseWriter) {
	if w.live != conn || w.live == nil {
		return
	}
	w.live = nil
	close(w.released)
	w.released = make(chan struct{})
	if w.done {
		return
	}
	if w.next == 0 {
		w.cancel() // it cannot resume: as if the client dropped the call
		return
	}
	w.timer = time.AfterFunc(w.store.window, w.cancel)
}

// finish marks the request served: its events stay for resumeWindow.
func (w *resumableWriter) finish() {
	w.mu.Lock()
	w.done = true
	if w.timer != nil {
		w.timer.Stop()
	}
	close(w.released)
	w.released = make(chan struct{})
	w.live = nil
	w.mu.Unlock()
	st := w.store
	st.mu.Lock()
	w.finished = true
	kept := len(w.events) > 0
	if !kept {
		st.dropLocked(w) // nothing to resume: a JSON answer, say
	}
	st.mu.Unlock()
	if kept {
		time.AfterFunc(st.window, func() { st.drop(w) })
	}
}

// resume serves a GET resuming the stream after the event index: what was
// sent since, then the rest as it comes, until the stream ends or the
// client goes. It reports false when the events are not all kept (an
// unknown stream, one dropped, or events dropped), having written nothing
// — except for a standalone stream that cannot go on (standalone.go):
// then fresh is true, and prelude what to replay of it first on the new
// standalone stream the GET is to open.
func (st *resumeStore) resume(conn http.ResponseWriter, r *http.Request, key string, index int) (served, fresh bool, prelude []byte) {
	st.mu.Lock()
	w := st.streams[key]
	known := slices.Contains(st.standaloneKeys, key)
	st.mu.Unlock()
	if w == nil {
		return false, known, nil
	}
	w.mu.Lock()
	st.mu.Lock()
	kept := st.streams[key] == w && index+1 >= w.first && index < w.next
	if w.standalone && (w.done || !kept) {
		if kept {
			prelude = bytes.Join(w.events[index+1-w.first:], nil)
		}
		st.mu.Unlock()
		w.mu.Unlock()
		return false, true, prelude
	}
	if !kept {
		st.mu.Unlock()
		w.mu.Unlock()
		return false, false, nil
	}
	replay := w.events[index+1-w.first:]
	replay = append([][]byte(nil), replay...)
	st.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if w.live != nil {
		// Another connection had it: it ends (the client moved on).
		w.live = nil
		close(w.released)
		w.released = make(chan struct{})
	}
	setStreamHeaders(conn)
	conn.WriteHeader(http.StatusOK)
	for _, e := range replay {
		if _, err := conn.Write(e); err != nil {
			break
		}
	}
	if f, ok := conn.(http.Flusher); ok {
		f.Flush()
	}
	if w.done {
		w.mu.Unlock()
		return true, false, nil
	}
	w.live = conn
	released := w.released
	w.mu.Unlock()
	select {
	case <-released:
	case <-r.Context().Done():
		w.lost(conn)
	}
	// Wait until no write is under way on conn before the handler returns.
	w.mu.Lock()
	if w.live == conn {
		w.live = nil
	}
	w.mu.Unlock()
	return true, false, nil
}

// keep stores one numbered event of w (whose w.mu the caller holds),
// dropping the oldest the session keeps beyond resumeBufferBytes. A
// standalone stream whose client is connected keeps its newest
// standaloneLiveBytes: its client can miss only what was sent just before
// its connection broke, and the stream may live as long as the session.
func (st *resumeStore) keep(w *resumableWriter, event []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.streams[w.key] != w {
		return // dropped
	}
	w.events = append(w.events, event)
	w.size += len(event)
	st.bytes += len(event)
	for w.standalone && w.live != nil && w.size > standaloneLiveBytes && len(w.events) > 1 {
		st.dropOldestLocked(w)
	}
	for st.bytes > st.limit {
		var victim *resumableWriter
		for _, s := range st.order {
			if s.finished {
				victim = s
				break
			}
		}
		if victim != nil {
			st.dropLocked(victim)
			continue
		}
		for _, s := range st.order {
			if len(s.events) > 0 {
				victim = s // the oldest event of the streams in flight
				break
			}
		}
		st.dropOldestLocked(victim)
	}
}

// dropOldestLocked forgets w's oldest kept event.
func (st *resumeStore) dropOldestLocked(w *resumableWriter) {
	st.bytes -= len(w.events[0])
	w.size -= len(w.events[0])
	w.events[0] = nil
	w.events = w.events[1:]
	w.first++
}

// drop forgets w's events.
func (st *resumeStore) drop(w *resumableWriter) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.dropLocked(w)
}

func (st *resumeStore) dropLocked(w *resumableWriter) {
	if st.streams[w.key] != w {
		return
	}
	delete(st.streams, w.key)
	for i, s := range st.order {
		if s == w {
			st.order = append(st.order[:i], st.order[i+1:]...)
			break
		}
	}
	st.bytes -= w.size
	w.events, w.size = nil, 0
}

// close ends the session's streams: their calls are cancelled, and their
// events dropped.
func (st *resumeStore) close() {
	st.mu.Lock()
	streams := st.order
	st.order, st.streams, st.bytes, st.closed = nil, map[string]*resumableWriter{}, 0, true
	st.standalone, st.standaloneKeys = nil, nil
	st.mu.Unlock()
	for _, w := range streams {
		w.cancel()
	}
}

// resumeSessionClosed drops the resumable streams of session sid.
func (g *Gateway) resumeSessionClosed(sid string) {
	if v, ok := g.resumes.LoadAndDelete(sid); ok {
		v.(*resumeStore).close()
	}
}

// formatResumeID is the id of event index of stream key, as the SDKs
// write theirs.
func formatResumeID(key string, index int) string {
	return key + "_" + strconv.Itoa(index)
}

// parseResumeID splits a Last-Event-ID the gateway gave.
func parseResumeID(id string) (key string, index int, ok bool) {
	key, n, ok := strings.Cut(id, "_")
	if !ok || key == "" || strings.Contains(n, "_") {
		return "", 0, false
	}
	index, err := strconv.Atoi(n)
	if err != nil || index < 0 {
		return "", 0, false
	}
	return key, index, true
}

// resume serves a GET of session sid that carries a Last-Event-ID of the
// gateway's, and reports whether it did: one of another form, or of a
// session the SDK would refuse, goes to the SDK, which says what is wrong.
// The events of an unknown stream (or ones no longer kept) get the error
// a go-sdk server with an event store gives. A GET resuming a standalone
// stream that cannot go on is not served: r is returned to open a new
// standalone stream with (standaloneGET), and prelude what to replay on
// it first.
func (h *httpHandler) resume(w http.ResponseWriter, r *http.Request, sid, view, user string, hasTok bool) (served bool, fresh *http.Request, prelude []byte) {
	key, index, ok := parseResumeID(r.Header.Get("Last-Event-ID"))
	if !ok || !h.streamOf(r, sid, view, user, hasTok) {
		return false, nil, nil
	}
	v, ok := h.g.resumes.Load(sid)
	if !ok {
		http.Error(w, "failed to replay events", http.StatusBadRequest)
		return true, nil, nil
	}
	done, again, prelude := v.(*resumeStore).resume(w, r, key, index)
	switch {
	case done:
		return true, nil, nil
	case again:
		fresh = r.Clone(r.Context())
		fresh.Header.Del("Last-Event-ID")
		return false, fresh, prelude
	}
	http.Error(w, "failed to replay events", http.StatusBadRequest)
	return true, nil, nil
}

// streamOf reports whether the GET r may have an event stream of session
// sid of view: the session is the gateway's, on that view, its user's
// (with a token), and the GET takes an event stream. Any other goes to the
// SDK, which says what is wrong.
func (h *httpHandler) streamOf(r *http.Request, sid, view, user string, hasTok bool) bool {
	cs := h.g.sess.get(sid)
	if cs == nil {
		return false
	}
	if vs := cs.vs.Load(); vs == nil || vs.spec().view.Name != view {
		return false
	}
	if hasTok {
		if u, ok := h.g.sess.user(sid); !ok || u != user {
			return false
		}
	}
	_, stream := accepts(r.Header.Values("Accept"))
	return stream
}
