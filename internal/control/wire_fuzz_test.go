// Internal on purpose: fuzzes and pins the wire encoding (encodeError, decodeError, callLine) below the Client and Server.

package control

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// kinds is every fault kind, for the fuzz targets to pick from.
var kinds = []fault.Kind{fault.Validation, fault.NotFound, fault.Authentication, fault.Authorization, fault.Connection,
	fault.Timeout, fault.Protocol, fault.Backend, fault.LimitExceeded, fault.BudgetExceeded, fault.Cancelled, fault.Config, fault.Internal}

// viaJSON is s as a JSON string carries it (invalid UTF-8 becomes U+FFFD):
// the most any wire format can promise.
func viaJSON(s string) string {
	b, _ := json.Marshal(s)
	var out string
	_ = json.Unmarshal(b, &out)
	return out
}

// FuzzErrorWire checks that an error crosses the control socket whole:
// decoding what encodeError writes gives the same kind, message, fields,
// suggestions and details, and an error that prints exactly as the
// daemon's (the CLI shows the client's); and that decodeError makes a
// typed error of anything, never panicking.
func FuzzErrorWire(f *testing.F) {
	f.Add(uint8(0), "bad input", "the cause", "try again", "server", "alpha", "title", "empty", "", true, []byte(`{"error_type":"validation_error","message":"m"}`))
	f.Add(uint8(4), "connecting to alpha", "", "", "stderr", "E404 Not Found", "", "", "x", false, []byte(`{"error_type":"x","details":{"fields":[{"field":1}]}}`))
	f.Add(uint8(12), "", "bad input", "", "fields", "not fields", "n", "missing", "", false, []byte(`null`))
	f.Add(uint8(8), "limit", "cause: limit", "wait", "retry_after", "2s", "", "", "", false, []byte(`{"error_type":"","message":"no type"}`))
	f.Fuzz(func(t *testing.T, kind uint8, message, cause, suggestion, detailKey, detailValue, field, fieldMessage, received string, receivedSet bool, raw []byte) {
		in := &fault.Error{Kind: kinds[int(kind)%len(kinds)], Message: message}
		if cause != "" {
			in.Err = errors.New(cause)
		}
		if suggestion != "" {
			in.Suggestions = []string{suggestion, suggestion + "!"}
		}
		if detailKey != "" {
			in.Details = map[string]any{detailKey: detailValue, "n": 3.5, "list": []any{"a", true}}
		}
		if field != "" {
			in.Fields = []fault.FieldDetail{{Field: field, Message: fieldMessage, ReceivedValue: received, Received: receivedSet}, {Field: field + ".x", Message: "m"}}
		}
		got := overTheWire(t, in)
		var fe *fault.Error
		if !errors.As(got, &fe) {
			t.Fatalf("decodeError returned %T", got)
		}
		want := viaJSON(in.Error())
		if detailKey == "fields" && len(in.Fields) > 0 {
			delete(in.Details, "fields") // Fields are sent under details.fields
		}
		// JSON carries only UTF-8: text that is not has its bad bytes
		// replaced, which can change what Error() leaves out (a cause the
		// message contains), so only valid text must print the same.
		if fe.Error() != want && utf8.ValidString(message) && utf8.ValidString(cause) {
			t.Fatalf("Error(): got %q, want %q", fe.Error(), want)
		}
		if fe.Kind != in.Kind || fe.Message != viaJSON(in.Message) {
			t.Fatalf("got %s %q, want %s %q", fe.Kind, fe.Message, in.Kind, in.Message)
		}
		if !slices.Equal(fe.Suggestions, mapStrings(in.Suggestions)) {
			t.Fatalf("suggestions: got %q, want %q", fe.Suggestions, in.Suggestions)
		}
		for i, fd := range in.Fields {
			if i >= len(fe.Fields) {
				t.Fatalf("fields: got %d, want %d", len(fe.Fields), len(in.Fields))
			}
			g := fe.Fields[i]
			if g.Field != viaJSON(fd.Field) || g.Message != viaJSON(fd.Message) || g.Suggestion != viaJSON(fd.Suggestion) ||
				g.ReceivedValue != viaJSON(fd.ReceivedValue) || (g.Received || g.ReceivedValue != "") != (fd.Received || fd.ReceivedValue != "") {
				t.Fatalf("field %d: got %+v, want %+v", i, g, fd)
			}
		}
		for k, v := range in.Details {
			b, _ := json.Marshal(v)
			var wantV any
			_ = json.Unmarshal(b, &wantV)
			if diff := cmp.Diff(wantV, fe.Details[viaJSON(k)]); diff != "" {
				t.Fatalf("detail %q (-want +got):\n%s", k, diff)
			}
		}

		// Anything at all decodes to a typed error, and re-encodes to
		// itself.
		any := decodeError(raw, cause)
		if !errors.As(any, &fe) || fe.Kind == "" {
			t.Fatalf("decodeError(%q) = %T %v, want a *fault.Error with a kind", raw, any, any)
		}
		again := overTheWire(t, any)
		if again.Error() != viaJSON(any.Error()) && utf8.Valid(raw) && utf8.ValidString(cause) {
			t.Fatalf("re-encoding %q: got %q, want %q", raw, again.Error(), any.Error())
		}
	})
}

// overTheWire sends err as the handler does (an errorBody in JSON) and
// reads it back as the client does.
func overTheWire(t *testing.T, err error) error {
	t.Helper()
	raw, cause := encodeError(err)
	b, merr := json.Marshal(errorBody{Error: raw, Cause: cause})
	if merr != nil {
		t.Fatalf("encoding the error body: %v", merr)
	}
	var eb errorBody
	if err := json.Unmarshal(b, &eb); err != nil {
		t.Fatalf("decoding the error body %s: %v", b, err)
	}
	return decodeError(eb.Error, eb.Cause)
}

func mapStrings(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = viaJSON(s)
	}
	return out
}

// streamBackend is a Backend whose calls report what the fuzz input says;
// nothing else is called.
type streamBackend struct {
	Backend
	mu    sync.Mutex
	calls map[string]func(ctx context.Context, req CallRequest) (*CallResult, error)
	raw   map[string][]byte
}

var _ Backend = (*streamBackend)(nil)

func (b *streamBackend) Call(ctx context.Context, req CallRequest) (*CallResult, error) {
	b.mu.Lock()
	call := b.calls[req.Tool]
	b.mu.Unlock()
	return call(ctx, req)
}

// streamServer serves a streamBackend on a unix socket: /v1/call through the
// real handler, and /raw/NAME answers a call with the bytes registered
// under NAME, as a daemon that writes anything at all.
func streamServer(f *testing.F) (*streamBackend, *Client) {
	dir, err := os.MkdirTemp("", "sbw")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { os.RemoveAll(dir) })
	b := &streamBackend{calls: map[string]func(context.Context, CallRequest) (*CallResult, error){}, raw: map[string][]byte{}}
	ln, err := Listen(filepath.Join(dir, "s.sock"))
	if err != nil {
		f.Fatal(err)
	}
	h := NewHandler(b, nil)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req CallRequest
		if r.URL.Path == "/v1/call" && r.Header.Get("X-Raw") == "1" {
			_ = json.NewDecoder(r.Body).Decode(&req)
			b.mu.Lock()
			body := b.raw[req.Tool]
			b.mu.Unlock()
			w.Header().Set("Content-Type", "application/x-ndjson")
			_, _ = w.Write(body)
			return
		}
		h.ServeHTTP(w, r)
	})}
	done := make(chan struct{})
	go func() { defer close(done); _ = hs.Serve(ln) }()
	c := Dial(filepath.Join(dir, "s.sock"))
	f.Cleanup(func() { c.Close(); _ = hs.Close(); <-done })
	return b, c
}

// rawTransport marks the client's call requests so that the server
// answers with the registered bytes.
type rawTransport struct{ next http.RoundTripper }

func (t rawTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Raw", "1")
	return t.next.RoundTrip(r)
}

// FuzzCallStream checks the call stream of the control socket, end to end
// over a real socket with the real handler and client: the progress the
// backend reports arrives in order (some may be dropped, never changed or
// reordered), then exactly the result or the error it returned; and a
// stream of any bytes gives the client exactly one of a result or a typed
// error, with a progress callback per progress line before it.
func FuzzCallStream(f *testing.F) {
	b, client := streamServer(f)
	raw := &Client{path: client.path, hc: &http.Client{Transport: rawTransport{client.hc.Transport}}}
	f.Add(uint8(3), 0.5, 2.0, "step", "the answer", int64(10), true, false, uint8(0), "cause", []byte("{\"progress\":{\"processed\":1}}\n{\"result\":{\"id\":\"x\",\"status\":\"success\",\"result\":{\"content\":[]},\"duration_ns\":1,\"bytes\":0}}\n"))
	f.Add(uint8(0), 0.0, 0.0, "", "", int64(0), false, true, uint8(5), "timeout after 1s", []byte("{\"error\":{\"error_type\":\"timeout_error\",\"message\":\"slow\"},\"cause\":\"c\"}\n"))
	f.Add(uint8(20), -1.0, 1e300, "é\xff", "\x00", int64(-1), true, true, uint8(12), "", []byte("not json\n"))
	f.Add(uint8(1), 1.0, 0.0, "m", "t", int64(1), false, false, uint8(1), "", []byte("{}\n{\"progress\":null}\n"))
	n := 0
	f.Fuzz(func(t *testing.T, steps uint8, processed, total float64, message, text string, size int64, truncated, fail bool, kind uint8, cause string, body []byte) {
		n++
		name := "t" + strings.Repeat("x", n%3) + string(rune('a'+n%26))
		var sent []toolcall.Progress
		for i := range int(steps % 24) {
			sent = append(sent, toolcall.Progress{Processed: processed + float64(i), Total: total, Message: message, Cost: float64(i) / 4})
		}
		result := &CallResult{ID: "call-" + name, Status: "success", Bytes: size, Truncated: truncated,
			Result: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}}
		callErr := fault.Wrap(kinds[int(kind)%len(kinds)], errors.New(cause), "call failed: %s", message)
		b.mu.Lock()
		b.calls[name] = func(ctx context.Context, req CallRequest) (*CallResult, error) {
			for _, p := range sent {
				req.OnProgress(p)
			}
			if fail {
				return nil, callErr
			}
			return result, nil
		}
		b.raw[name] = body
		b.mu.Unlock()

		var got []toolcall.Progress
		res, err := client.Call(context.Background(), CallRequest{Server: "s", Tool: name, OnProgress: func(p toolcall.Progress) { got = append(got, p) }})
		// Progress that JSON cannot carry (NaN, ±Inf) is not sent.
		var sendable []toolcall.Progress
		for _, p := range sent {
			if finite(p.Processed, p.Total, p.Cost) {
				sendable = append(sendable, toolcall.Progress{Processed: p.Processed, Total: p.Total, Message: viaJSON(p.Message), Cost: p.Cost})
			}
		}
		if !isSubsequence(got, sendable) {
			t.Fatalf("progress: got %v, want a subsequence of %v", got, sendable)
		}
		switch {
		case fail:
			if res != nil || err == nil || err.Error() != viaJSON(callErr.Error()) || fault.KindOf(err) != callErr.Kind {
				t.Fatalf("got %v, %v; want the error %v", res, err, callErr)
			}
		case err != nil || res == nil:
			t.Fatalf("got %v, %v; want the result", res, err)
		default:
			if diff := cmp.Diff(jsonValue(t, result), jsonValue(t, res)); diff != "" {
				t.Fatalf("result (-want +got):\n%s", diff)
			}
		}

		// Any bytes: exactly one outcome, and a callback per progress line
		// read before it.
		got = nil
		res, err = raw.Call(context.Background(), CallRequest{Server: "s", Tool: name, OnProgress: func(p toolcall.Progress) { got = append(got, p) }})
		if (res == nil) == (err == nil) {
			t.Fatalf("stream %q: got %v and %v, want exactly one", body, res, err)
		}
		var fe *fault.Error
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("stream %q: got %T %v, want a *fault.Error", body, err, err)
		}
		if want := progressLines(body); len(got) != want {
			t.Fatalf("stream %q: %d progress callbacks, want %d", body, len(got), want)
		}
	})
}

// jsonValue is v as JSON carries it.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// progressLines counts the progress lines of a call stream before the line
// that ends it (a result, an error, or one that does not decode).
func progressLines(body []byte) int {
	n := 0
	lines := strings.Split(string(body), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // the newline that ends the last line
	}
	for _, line := range lines {
		line = strings.TrimSuffix(line, "\r")
		var l callLine
		if json.Unmarshal([]byte(line), &l) != nil {
			return n
		}
		switch {
		case l.Progress != nil:
			n++
		case len(l.Error) > 0, l.Result != nil:
			return n
		}
	}
	return n
}

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// isSubsequence reports whether got is want with some elements left out.
func isSubsequence(got, want []toolcall.Progress) bool {
	j := 0
	for _, g := range got {
		for j < len(want) && want[j] != g {
			j++
		}
		if j == len(want) {
			return false
		}
		j++
	}
	return true
}

func TestDecodeErrorKeepsEveryPart(t *testing.T) {
	in := fault.Wrap(fault.Validation, errors.New("the cause"), "bad input").
		WithSuggestions("try again", "or not").WithDetail("server", "alpha")
	in.Fields = []fault.FieldDetail{{Field: "title", Message: "empty", Received: true}, {Field: "n", Message: "missing", Suggestion: "give n"}}
	raw, cause := encodeError(in)
	got := decodeError(raw, cause)
	if diff := cmp.Diff(in.Error(), got.Error()); diff != "" {
		t.Errorf("Error() (-want +got):\n%s", diff)
	}
	fe := got.(*fault.Error)
	ignore := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Err" }, cmp.Ignore())
	if diff := cmp.Diff(in, fe, ignore); diff != "" {
		t.Errorf("decoded error (-want +got):\n%s", diff)
	}
}
