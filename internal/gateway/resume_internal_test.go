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
	if !st.resume(rec, httptest.NewRequest(http.MethodGet, "/mcp", nil), key, 0) {
		t.Fatal("resuming a finished stream after its first event was refused")
	}
	want := fmt.Sprintf("event: message\nid: %s_1\ndata: {\"n\":1}\n\nevent: message\nid: %s_2\ndata: {\"n\":2}\n\n", key, key)
	if got := rec.Body.String(); got != want {
		t.Errorf("replayed %q, want %q", got, want)
	}
	if st.resume(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/mcp", nil), "NOSUCH", 0) {
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
	if small.resume(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/mcp", nil), key, 0) {
		t.Error("a stream was resumed from an event dropped over the bound")
	}
	// The newest are still there: resuming after the last but one gets
	// the last (the stream is live: the GET ends with its context).
	ctx, cancel := context.WithCancel(context.Background())
	rec = httptest.NewRecorder()
	done := make(chan bool)
	go func() {
		done <- small.resume(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/mcp", nil), key, 18)
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
