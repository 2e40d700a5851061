package gateway

import (
	"context"
	"net/http"
)

// The session's standalone stream (GET) is resumable as its call streams
// are (resume.go): each event on it gets an id, the events are kept in
// the session's store, and the SDK's handler of the GET is served on a
// context the client's connection does not end. When the connection
// breaks after the client was given an id, the SDK's standalone stream
// stays open for resumeWindow, writing into the store what is sent
// meanwhile (the SDK's and the gateway's notifications and requests), and
// a GET with the last id the client got replays it and takes the stream
// over. A go-sdk server with an event store does the same.
//
// How it differs from a call's stream, which ends with its answer:
//
//   - When the window passes with no client back, the GET's handler is
//     ended and the SDK's standalone stream released (what is sent after
//     that is lost, as on a session with no stream open); its events stay
//     for another window. A client that comes back then gets them
//     replayed, and its GET goes on as a new standalone stream (ids of a
//     new stream after them), rather than ending as a finished call's
//     does: a client that resumes a stream that ended reconnects with the
//     same id, and gives up after a few tries that bring nothing new.
//   - A client that comes back after that (or whose events the session's
//     bound dropped) gets a new standalone stream, without what it missed,
//     not the 400 an unknown stream gets: the store remembers the keys of
//     the session's latest standalone streams (maxStandaloneKeys), and
//     before ids it would have reconnected without one and gone on.
//   - A GET without Last-Event-ID while a standalone stream waits for its
//     client ends that one first (the client moved on), so that the SDK
//     does not refuse the new one as a second standalone stream (409);
//     one whose client is still connected is left alone, and the SDK
//     refuses the new GET as before.

// maxStandaloneKeys bounds the standalone streams a session's store
// remembers the keys of.
const maxStandaloneKeys = 8

// standaloneGET prepares the GET r of session sid of view: one carrying a
// Last-Event-ID of the gateway's resumes its stream (resume), and reports
// done; any other — or one resuming a standalone stream that cannot go on
// — is to be served by the SDK as the session's standalone stream, with
// the r returned, resumably: ew then writes through the stream's writer,
// and served is to be called once the SDK's handler has returned.
func (h *httpHandler) standaloneGET(ew *sdkErrors, r *http.Request, sid, view, user string, hasTok bool) (done bool, _ *http.Request, served func()) {
	var prelude []byte
	if len(r.Header.Values("Last-Event-ID")) > 0 {
		ok, fresh, replay := h.resume(ew, r, sid, view, user, hasTok)
		switch {
		case ok:
			return true, r, nil
		case fresh == nil:
			return false, r, func() {} // the SDK says what is wrong
		}
		r, prelude = fresh, replay
	}
	st := h.g.resumeStore(sid)
	if st == nil || !h.streamOf(r, sid, view, user, hasTok) {
		return false, r, func() {}
	}
	st.endDetachedStandalone(r.Context())
	var rw *resumableWriter
	w, r, end := st.openStream(ew.ResponseWriter, r, func(w *resumableWriter) {
		rw = w
		w.standalone, w.prelude, w.served = true, prelude, make(chan struct{})
	})
	ew.ResponseWriter = w
	return false, r, func() {
		end()
		close(rw.served)
	}
}

// setStandalone records w, whose GET the SDK answered with an event
// stream, as the session's standalone stream.
func (st *resumeStore) setStandalone(w *resumableWriter) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return
	}
	st.standalone = w
	st.standaloneKeys = append(st.standaloneKeys, w.key)
	if len(st.standaloneKeys) > maxStandaloneKeys {
		st.standaloneKeys = st.standaloneKeys[1:]
	}
}

// endDetachedStandalone ends the session's standalone stream if it waits
// for its client to come back (no connection has it), and waits, at most
// until ctx ends, until its GET's handler has returned: the SDK has then
// released its standalone stream for a new GET.
func (st *resumeStore) endDetachedStandalone(ctx context.Context) {
	st.mu.Lock()
	old := st.standalone
	st.mu.Unlock()
	if old == nil {
		return
	}
	old.mu.Lock()
	waiting := !old.done && old.live == nil
	old.mu.Unlock()
	if !waiting {
		return
	}
	old.cancel()
	select {
	case <-old.served:
	case <-ctx.Done():
	}
}
