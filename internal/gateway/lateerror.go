package gateway

import (
	"bytes"
	"net/http"
	"strings"
)

// This file delivers an error the go-sdk's streamable server sends after
// the request's event stream began, which the SDK itself loses.
//
// On protocol 2026-07-28 the SDK (1.8, streamable.go, deliverLocked) maps
// a JSON-RPC error response of code -32601, -32602, -32021 or -32022 to an
// HTTP status (404, 400: SEP-2575's status mapping) and writes it as a
// plain JSON body. When the request's answer is already an event stream —
// progress or a log message went first — the
// status can no longer be sent, and the plain JSON lands in the event
// stream, where an SSE reader sees a line that is no event: the client
// reads the stream's end and "request terminated without response". The
// SDK writes through sdkErrors, which sees the late status: the body that
// follows it is written as the event ("message") it should have been,
// which is what the client would have read had the stream not begun with
// a status of its own. A workaround of the SDK's fault, for as long as the
// SDK in go.mod has it: once its stream writes such an error as an event,
// lateStatus no longer sees a late error status, and this file can go.

// lateStatus notes a status code the SDK sets after the answer's status
// was sent: on an event stream, an error status with a JSON body means
// the next write is a whole JSON-RPC error response (the SDK's one write
// of it), to be sent as an event.
func (w *sdkErrors) lateStatus(code int) {
	if !w.stream || code < 400 || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		return
	}
	// The header was sent as an event stream's; what reads it later (the
	// writers below) should see what was sent.
	w.Header().Set("Content-Type", "text/event-stream")
	w.late = true
}

// writeLate writes p, the error response the SDK wrote as plain JSON, as
// an event of the stream.
func (w *sdkErrors) writeLate(p []byte) (int, error) {
	w.late = false
	msg := bytes.TrimRight(p, "\r\n")
	ev := make([]byte, 0, len(msg)+32)
	ev = append(ev, "event: message\n"...)
	for line := range bytes.Lines(msg) {
		// One data line per line (a JSON encoding has one; SSE joins
		// several with newlines).
		ev = append(ev, "data: "...)
		ev = append(ev, bytes.TrimRight(line, "\r\n")...)
		ev = append(ev, '\n')
	}
	ev = append(ev, '\n')
	if _, err := w.ResponseWriter.Write(ev); err != nil {
		return 0, err
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	return len(p), nil
}
