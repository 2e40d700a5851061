package upstream

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// A server on a protocol version before 2026-07-28 may still put input
// requests in a tools/call result (inputRequests and requestState, which
// only 2026-07-28 has). The go-sdk's client answers them whatever the
// version — with the connection's handlers and its root set — and asks
// again with the answers, up to its limits. The lean path (fastcall.go)
// reads the result itself; rather than answer it a second way, it hands
// such a result to the SDK's loop: the call is made again through the
// SDK's session with a context carrying the result (replayKey), and the
// HTTP layer (headerTransport) answers the SDK's first post of it with
// that result instead of sending it, so that the server sees no second
// first call. The SDK then answers the input requests and asks the
// server again, as it does for a call it made itself: both paths behave
// alike, by construction.

// replayKey is the context key of a call's *replayedResult.
type replayKey struct{}

// replayedResult is the result of a tools/call the lean path read, to be
// given to the SDK's first post of that call.
type replayedResult struct {
	result json.RawMessage
	used   atomic.Bool
}

// errAskedInResult is the lean path's error for a result with input
// requests, which it leaves to the SDK's loop (callTool).
type errAskedInResult struct{ result json.RawMessage }

func (e *errAskedInResult) Error() string {
	return "upstream: the server asked for input in its result; the SDK answers it"
}

// answer returns the response to req, the SDK's post of a tools/call,
// made of r's result without sending req, once; and the request to send
// otherwise (req, its body read and restored, when that was needed to
// tell).
func (r *replayedResult) answer(req *http.Request) (*http.Response, *http.Request) {
	if req.Method != http.MethodPost || req.Body == nil || r.used.Load() {
		return nil, req
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	next := req.Clone(req.Context())
	next.Body = io.NopCloser(bytes.NewReader(body))
	next.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	if err != nil {
		return nil, next
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != "tools/call" || len(m.ID) == 0 || !r.used.CompareAndSwap(false, true) {
		return nil, next
	}
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(m.ID)
	b.WriteString(`,"result":`)
	b.Write(r.result)
	b.WriteString("}")
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(strings.NewReader(b.String())),
		ContentLength: int64(b.Len()),
		Request:       req,
	}, nil
}
