package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// openCall opens a resumable call stream on st, as a POST's, and writes n
// events on it; cut ends the client's connection.
func openCall(t *testing.T, st *resumeStore, n int) (w http.ResponseWriter, call context.Context, cut func(), served func()) {
	t.Helper()
	ctx, cut := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", nil)
	w, r, served := st.open(httptest.NewRecorder(), req)
	if n > 0 {
		setStreamHeaders(w)
		w.WriteHeader(http.StatusOK)
	}
	for i := range n {
		fmt.Fprintf(w, "event: message\ndata: {\"n\":%d}\n\n", i)
	}
	t.Cleanup(func() { cut(); served() })
	return w, r.Context(), cut, served
}

// servedOf is resume's first result: whether it served the GET.
func servedOf(served, _ bool, _ []byte) bool { return served }

// TestResumeWindowEndsAnAbandonedCall checks that a call whose client was
// given an id and went away runs on for the window, then is cancelled.
func TestResumeWindowEndsAnAbandonedCall(t *testing.T) {
	const window = 300 * time.Millisecond
	st := newResumeStore(window, 1<<20)
	_, call, cut, _ := openCall(t, st, 1)
	start := time.Now()
	cut()
	select {
	case <-call.Done():
		if d := time.Since(start); d < window {
			t.Errorf("the call was cancelled %v after its client went away, before the %v window", d, window)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the abandoned call was never cancelled")
	}
}

// TestResumeWithoutIDCancelsAtOnce checks that a call whose client was
// given no id (it cannot resume) is cancelled when the client goes away.
func TestResumeWithoutIDCancelsAtOnce(t *testing.T) {
	st := newResumeStore(time.Hour, 1<<20)
	_, call, cut, _ := openCall(t, st, 0)
	cut()
	select {
	case <-call.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a call its client cannot resume was not cancelled when the client went away")
	}
}

// TestResumeReplaysWithinTheBound checks that a resuming GET gets the
// events after its Last-Event-ID, with their ids, and that what a session
// keeps is bounded: events dropped over the bound cannot be resumed from.
func TestResumeReplaysWithinTheBound(t *testing.T) {
	st := newResumeStore(time.Hour, 1<<20)
	w, _, _, served := openCall(t, st, 3)
	key := w.(*resumableWriter).key
	served()
	rec := httptest.NewRecorder()
	if !servedOf(st.resume(rec, httptest.NewRequest(http.MethodGet, "/mcp", nil), key, 0)) {
		t.Fatal("resuming a finished stream after its first event was refused")
	}
	want := fmt.Sprintf("event: message\nid: %s_1\ndata: {\"n\":1}\n\nevent: message\nid: %s_2\ndata: {\"n\":2}\n\n", key, key)
	if got := rec.Body.String(); got != want {
		t.Errorf("replayed %q, want %q", got, want)
	}
	if servedOf(st.resume(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/mcp", nil), "NOSUCH", 0)) {
		t.Error("an unknown stream was resumed")
	}

	// Each event is 50-odd bytes: a bound of 200 keeps the last few.
	small := newResumeStore(time.Hour, 200)
	w, _, _, _ = openCall(t, small, 20)
	small.mu.Lock()
	kept := small.bytes
	small.mu.Unlock()
	if kept > 200 {
		t.Errorf("the session keeps %d bytes, over its bound of 200", kept)
	}
	key = w.(*resumableWriter).key
	if servedOf(small.resume(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/mcp", nil), key, 0)) {
		t.Error("a stream was resumed from an event dropped over the bound")
	}
	// The newest are still there: resuming after the last but one gets
	// the last (the stream is live: the GET ends with its context).
	ctx, cancel := context.WithCancel(context.Background())
	rec = httptest.NewRecorder()
	done := make(chan bool)
	go func() {
		done <- servedOf(small.resume(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/mcp", nil), key, 18))
	}()
	cancel()
	if !<-done {
		t.Fatal("resuming after the last but one event was refused")
	}
	if got := rec.Body.String(); !strings.Contains(got, key+"_19") || strings.Contains(got, key+"_18") {
		t.Errorf("replayed %q, want event 19 alone", got)
	}
}

// TestResumeSessionCloseEndsCalls checks that a session's end cancels its
// calls, even those waiting for their client to resume.
func TestResumeSessionCloseEndsCalls(t *testing.T) {
	st := newResumeStore(time.Hour, 1<<20)
	_, call, cut, _ := openCall(t, st, 1)
	cut()
	st.close()
	select {
	case <-call.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session closed, and its call was not cancelled")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.streams) != 0 || st.bytes != 0 {
		t.Errorf("the closed session keeps %d streams, %d bytes", len(st.streams), st.bytes)
	}
}

// openStandaloneStream opens a resumable standalone stream on st, as
// standaloneGET does for a GET the SDK answers with an event stream, and
// writes n events on it. Its handler (as the SDK's would) returns when
// the stream's context ends; cut ends the client's connection.
func openStandaloneStream(t *testing.T, st *resumeStore, n int) (w *resumableWriter, handler context.Context, cut func()) {
	t.Helper()
	ctx, cut := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/mcp", nil)
	rw, r, end := st.openStream(httptest.NewRecorder(), req, func(w *resumableWriter) {
		w.standalone, w.served = true, make(chan struct{})
	})
	w = rw.(*resumableWriter)
	setStreamHeaders(w)
	w.WriteHeader(http.StatusOK)
	for i := range n {
		fmt.Fprintf(w, "event: message\ndata: {\"n\":%d}\n\n", i)
	}
	go func() {
		<-r.Context().Done()
		end()
		close(w.served)
	}()
	t.Cleanup(cut)
	return w, r.Context(), cut
}

// TestStandaloneStreamThatEndedGoesOnAnew checks that a GET resuming a
// standalone stream that ended (its window passed) is not served as a
// finished call's stream would be, but replays what it missed and goes on
// as a new standalone stream; that one whose events are no longer kept
// goes on anew without them; and that an unknown stream is refused.
func TestStandaloneStreamThatEndedGoesOnAnew(t *testing.T) {
	st := newResumeStore(time.Hour, 1<<20)
	w, handler, _ := openStandaloneStream(t, st, 3)
	w.cancel() // its window passed
	<-handler.Done()
	<-w.served
	served, fresh, prelude := st.resume(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/mcp", nil), w.key, 0)
	want := fmt.Sprintf("event: message\nid: %s_1\ndata: {\"n\":1}\n\nevent: message\nid: %s_2\ndata: {\"n\":2}\n\n", w.key, w.key)
	if served || !fresh || string(prelude) != want {
		t.Errorf("resuming an ended standalone stream: served %v, fresh %v, replay %q; want a new stream after the replay of %q", served, fresh, prelude, want)
	}
	st.drop(w)
	if served, fresh, prelude := st.resume(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/mcp", nil), w.key, 0); served || !fresh || prelude != nil {
		t.Errorf("resuming a dropped standalone stream: served %v, fresh %v, replay %q; want a new stream, with nothing replayed", served, fresh, prelude)
	}
	if served, fresh, _ := st.resume(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/mcp", nil), "NOSUCH", 0); served || fresh {
		t.Error("a stream the session never had was resumed")
	}
}

// TestNewStandaloneStreamEndsTheWaitingOne checks that a new GET ends the
// session's standalone stream that waits for its client to come back (so
// that the SDK lets the new one in), and leaves one whose client is still
// connected alone.
func TestNewStandaloneStreamEndsTheWaitingOne(t *testing.T) {
	st := newResumeStore(time.Hour, 1<<20)
	_, handler, _ := openStandaloneStream(t, st, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st.endDetachedStandalone(ctx)
	if handler.Err() != nil {
		t.Fatal("a standalone stream whose client is connected was ended by a new GET")
	}
	w, handler, cut := openStandaloneStream(t, st, 1)
	cut()
	waitUntil(t, "the stream to wait for its client", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.live == nil
	})
	st.endDetachedStandalone(ctx)
	select {
	case <-w.served:
	default:
		t.Fatal("the new GET went on before the waiting stream's handler returned")
	}
	if handler.Err() == nil {
		t.Error("the waiting standalone stream was not ended")
	}
}

// TestLiveStandaloneStreamKeepsItsNewestEvents checks that a standalone
// stream whose client is connected keeps only its newest events, within
// standaloneLiveBytes, and one whose client went away keeps what comes
// while it waits (within the session's bound).
func TestLiveStandaloneStreamKeepsItsNewestEvents(t *testing.T) {
	st := newResumeStore(time.Hour, 1<<20)
	w, _, cut := openStandaloneStream(t, st, 0)
	data := strings.Repeat("x", 1000)
	for range 200 {
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", data)
	}
	st.mu.Lock()
	size, first, n := w.size, w.first, len(w.events)
	st.mu.Unlock()
	if size > standaloneLiveBytes || first+n != 200 || first == 0 {
		t.Fatalf("a live standalone stream keeps %d bytes, events %d to %d; want its newest, within %d bytes", size, first, first+n-1, standaloneLiveBytes)
	}
	cut()
	waitUntil(t, "the stream to wait for its client", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.live == nil
	})
	for range 200 {
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", data)
	}
	st.mu.Lock()
	first2, n2 := w.first, len(w.events)
	st.mu.Unlock()
	if first2 != first || first2+n2 != 400 {
		t.Errorf("while its client is away, the stream keeps events %d to %d; want %d to 399, all it kept and all that came", first2, first2+n2-1, first)
	}
}
