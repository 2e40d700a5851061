//lint:file-ignore SA1019 servers still send log messages, roots and sampling requests (deprecated only from protocol 2026-07-28).

package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readMarked reads stream through a markingBody whose underlying reads
// return one byte at a time, or all at once.
func readMarked(t *testing.T, stream string, oneByte bool, m *streamMarker) string {
	t.Helper()
	var r io.Reader = strings.NewReader(stream)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	out, err := io.ReadAll(newMarkingBody(io.NopCloser(r), m))
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	return string(out)
}

// TestMarkingBody: the HTTP layer passes an event stream on as it came
// but for the data lines of the messages it keeps, which name what was
// kept in their _meta — a log message with its stream, an
// elicitation/create with its params as written — however the stream is
// cut into reads; a line too long to look at, a multi-line event, a
// request with a log's method and CRLF line ends pass as they are.
func TestMarkingBody(t *testing.T) {
	t.Parallel()
	elicit := `{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"z":{"type":"number","default":1.10},"a":{"type":"integer","default":9007199254740993}}}}}`
	logMsg := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi","_meta":{"x":1}}}`
	long := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("x", maxScanLine) + `"}}`
	pass := "id: 1\r\nevent: message\r\ndata: " + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\r\n\r\n" +
		"data: " + long + "\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\n" + `data: "method":"notifications/message","params":{}}` + "\n\n" +
		`data: {"jsonrpc":"2.0","id":3,"method":"notifications/message","params":{}}` + "\n\n" +
		": comment\n"
	stream := pass + "data: " + logMsg + "\r\n\r\n" + "data:" + elicit + "\n\n" + "data: unfinished"
	callCtx := context.WithValue(context.Background(), standaloneKey{}, "the call")
	for _, oneByte := range []bool{false, true} {
		var kept keptMessages
		m := &streamMarker{kept: &kept, origin: keptMessage{stream: callCtx}, logs: true, requests: true, elicit: true}
		got := readMarked(t, stream, oneByte, m)
		rest, ok := strings.CutPrefix(got, pass)
		if !ok {
			t.Fatalf("one byte a read %v: the stream's start changed:\n%.300q\nwant\n%.300q", oneByte, got, pass)
		}
		lines := strings.Split(rest, "\n")
		if len(lines) != 5 || lines[1] != "\r" || lines[3] != "" || lines[4] != "data: unfinished" {
			t.Fatalf("one byte a read %v: the rest of the stream is %.600q", oneByte, rest)
		}
		// The log message: its _meta names what was kept of it.
		var lm struct {
			Method string                    `json:"method"`
			Params *mcp.LoggingMessageParams `json:"params"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(lines[0], "data: "), "\r")), &lm); err != nil || lm.Params == nil {
			t.Fatalf("one byte a read %v: the log message's line %q: %v", oneByte, lines[0], err)
		}
		if !strings.HasSuffix(lines[0], "\r") {
			t.Errorf("one byte a read %v: the log message's line lost its CR: %q", oneByte, lines[0])
		}
		km, ok := kept.takeMeta(&lm.Params.Meta)
		if !ok || km.stream != callCtx || km.standalone || lm.Params.Meta["x"] != float64(1) || len(lm.Params.Meta) != 1 {
			t.Errorf("one byte a read %v: the log message's kept stream %v (%v), _meta %v; want the call's, and _meta as sent", oneByte, km.stream, ok, lm.Params.Meta)
		}
		// The elicitation: its params as written.
		var em struct {
			ID     int              `json:"id"`
			Params mcp.ElicitParams `json:"params"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[2], "data: ")), &em); err != nil || em.ID != 7 {
			t.Fatalf("one byte a read %v: the elicitation's line %q: %v", oneByte, lines[2], err)
		}
		km, ok = kept.takeMeta(&em.Params.Meta)
		var want struct {
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal([]byte(elicit), &want)
		if !ok || string(km.params) != string(want.Params) || em.Params.Meta != nil {
			t.Errorf("one byte a read %v: the elicitation's kept params %s (%v), _meta %v; want %s, and no _meta", oneByte, km.params, ok, em.Params.Meta, want.Params)
		}
		if len(kept.m) != 0 {
			t.Errorf("one byte a read %v: %d kept messages left, want none", oneByte, len(kept.m))
		}
	}
	// Nothing to keep: the stream as it came.
	var kept keptMessages
	if got := readMarked(t, stream, true, &streamMarker{kept: &kept}); got != stream {
		t.Errorf("with nothing to keep, got\n%.300q\nwant\n%.300q", got, stream)
	}
}

// TestMarkedRequests: a request a server sends its client on a stream
// the SDK reads — roots/list without params, sampling/createMessage with
// _meta of its own — is marked with that stream, and the session's
// receiving middleware hands its handler the stream's request values
// with the request as the server sent it (the mark taken out, no _meta
// where it had none); a message from the standalone stream is marked as
// sent outside requests.
func TestMarkedRequests(t *testing.T) {
	t.Parallel()
	roots := `{"jsonrpc":"2.0","id":"r1","method":"roots/list"}`
	sampling := `{"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":{"_meta":{"x":1},"messages":[],"maxTokens":5}}`
	type callKey struct{}
	callCtx := context.WithValue(context.Background(), callKey{}, "the call")
	var kept keptMessages
	handle := kept.middleware()(func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		meta := markedMeta(req.GetParams())
		return nil, fmt.Errorf("%s %v %v %v", method, ctx.Value(callKey{}), SentOutsideRequests(ctx), *meta)
	})
	for _, tc := range []struct {
		line   string
		origin keptMessage
		params mcp.Params
		want   string
	}{
		{roots, keptMessage{stream: callCtx}, &mcp.ListRootsParams{}, "roots/list the call false map[]"},
		{sampling, keptMessage{stream: callCtx}, &mcp.CreateMessageParams{}, "sampling/createMessage the call false map[x:1]"},
		{roots, keptMessage{standalone: true}, &mcp.ListRootsParams{}, "roots/list <nil> true map[]"},
	} {
		m := &streamMarker{kept: &kept, origin: tc.origin, requests: true}
		out := readMarked(t, "data: "+tc.line+"\n\n", false, m)
		var msg struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(out, "data: "))), &msg); err != nil {
			t.Fatalf("%s: the marked line %q: %v", tc.line, out, err)
		}
		if err := json.Unmarshal(msg.Params, tc.params); err != nil {
			t.Fatalf("%s: the marked params %s: %v", tc.line, msg.Params, err)
		}
		req := &mcp.ClientRequest[mcp.Params]{Params: tc.params}
		_, err := handle(context.Background(), msg.Method, req)
		if got := fmt.Sprint(err); got != tc.want {
			t.Errorf("%s from %+v: the handler saw %q; want %q", tc.line, tc.origin, got, tc.want)
		}
	}
	if len(kept.m) != 0 {
		t.Errorf("%d kept messages left, want none", len(kept.m))
	}
	// Not a request of those, or not a request: as it came.
	for _, line := range []string{`{"jsonrpc":"2.0","method":"roots/list"}`, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`} {
		stream := "data: " + line + "\n\n"
		if got := readMarked(t, stream, false, &streamMarker{kept: &kept, requests: true}); got != stream {
			t.Errorf("%s: got %q; want it as it came", line, got)
		}
	}
}

// TestKeptMessagesBounded: what is never taken is forgotten, oldest
// first, past maxKeptMessages; what is taken is forgotten at once.
func TestKeptMessagesBounded(t *testing.T) {
	t.Parallel()
	var k keptMessages
	first := k.keep(keptMessage{standalone: true})
	second := k.keep(keptMessage{})
	if _, ok := k.take(second); !ok {
		t.Fatal("the second message was not kept")
	}
	if _, ok := k.take(second); ok {
		t.Fatal("the second message was kept after it was taken")
	}
	var last string
	for range maxKeptMessages {
		last = k.keep(keptMessage{})
	}
	if len(k.m) != maxKeptMessages {
		t.Errorf("kept %d messages, want at most %d", len(k.m), maxKeptMessages)
	}
	if _, ok := k.take(first); ok {
		t.Error("the oldest message is still kept past the bound")
	}
	if _, ok := k.take(last); !ok {
		t.Error("the newest message was forgotten")
	}
}

// FuzzMarkingBody: whatever the stream, nothing is lost or added but the
// marks: with nothing to keep the stream passes as it came, and with
// everything to keep as many lines come out as went in.
func FuzzMarkingBody(f *testing.F) {
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":1}}\n\n"))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\",\"params\":{\"_meta\":null}}\r\n"))
	f.Add([]byte("data: {\"method\":\"notifications/message\",\"params\":[]}\ndata"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		var kept keptMessages
		out, err := io.ReadAll(newMarkingBody(io.NopCloser(iotest.HalfReader(bytes.NewReader(stream))), &streamMarker{kept: &kept}))
		if err != nil || !bytes.Equal(out, stream) {
			t.Fatalf("with nothing to keep: %.300q, %v; want the stream as it came", out, err)
		}
		out, err = io.ReadAll(newMarkingBody(io.NopCloser(iotest.HalfReader(bytes.NewReader(stream))), &streamMarker{kept: &kept, logs: true, requests: true, elicit: true}))
		if err != nil || bytes.Count(out, []byte("\n")) != bytes.Count(stream, []byte("\n")) {
			t.Fatalf("keeping everything: %.300q, %v; want as many lines as %.300q", out, err, stream)
		}
	})
}

// TestMarkingBodyNotices: a resource update and an elicitation's
// completion on a stream the SDK reads are kept with that stream when
// the session passes them on (notices), their _meta as sent besides;
// otherwise, and a request of the same method, they pass as they are.
func TestMarkingBodyNotices(t *testing.T) {
	t.Parallel()
	updated := `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"note://a","_meta":{"x":1}}}`
	complete := `{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e1"}}`
	asCall := `{"jsonrpc":"2.0","id":2,"method":"notifications/elicitation/complete","params":{"elicitationId":"e2"}}`
	stream := "data: " + updated + "\n\n" + "data: " + complete + "\n\n" + "data: " + asCall + "\n\n"
	callCtx := context.WithValue(context.Background(), standaloneKey{}, "the call")
	for _, notices := range []bool{false, true} {
		var kept keptMessages
		got := readMarked(t, stream, false, &streamMarker{kept: &kept, origin: keptMessage{stream: callCtx}, logs: true, notices: notices})
		if !notices {
			if got != stream {
				t.Errorf("without notices: the stream changed: %q", got)
			}
			continue
		}
		lines := strings.Split(got, "\n\n")
		if len(lines) != 4 || lines[2] != "data: "+asCall {
			t.Fatalf("the stream is %q; want the request of a notification's method as it came", got)
		}
		var up struct {
			Params *mcp.ResourceUpdatedNotificationParams `json:"params"`
		}
		var done struct {
			Params *mcp.ElicitationCompleteParams `json:"params"`
		}
		if json.Unmarshal([]byte(strings.TrimPrefix(lines[0], "data: ")), &up) != nil || up.Params == nil ||
			json.Unmarshal([]byte(strings.TrimPrefix(lines[1], "data: ")), &done) != nil || done.Params == nil {
			t.Fatalf("the marked lines %q and %q do not decode", lines[0], lines[1])
		}
		for _, c := range []struct {
			name string
			meta *mcp.Meta
			want mcp.Meta
		}{{"the resource update", &up.Params.Meta, mcp.Meta{"x": float64(1)}}, {"the completion", &done.Params.Meta, nil}} {
			km, ok := kept.takeMeta(c.meta)
			if !ok || km.stream != callCtx || km.standalone || fmt.Sprint(*c.meta) != fmt.Sprint(c.want) {
				t.Errorf("%s: kept %v with stream %v, _meta %v; want the call's stream, and _meta %v", c.name, ok, km.stream, *c.meta, c.want)
			}
		}
	}
}
