//lint:file-ignore SA1019 the test's server logs, deprecated only from protocol 2026-07-28; servers use it today.

package daemon

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// announcer is a go-sdk server whose tool "announce" logs its text (at
// info) on the session's standalone stream, outside the call, and says
// whether the message went.
func announcer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "announcer", Version: "1"}, nil)
	type args struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "announce", Description: "Logs text outside the call."}, func(_ context.Context, req *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		if err := req.Session.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Logger: "announcer", Data: a.Text}); err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sent"}}}, nil, nil
	})
	return s
}

// standaloneCutter is a streamable-HTTP client's transport that breaks
// the client's first GET (its standalone stream) after the first event
// that carries an id, and holds every later GET until release is closed,
// noting the Last-Event-ID each carried.
type standaloneCutter struct {
	cut     chan struct{} // closed when the first GET's stream was cut
	release chan struct{}

	mu   sync.Mutex
	gets []string // each GET's Last-Event-ID
}

func (c *standaloneCutter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet {
		return http.DefaultTransport.RoundTrip(r)
	}
	c.mu.Lock()
	c.gets = append(c.gets, r.Header.Get("Last-Event-ID"))
	first := len(c.gets) == 1
	c.mu.Unlock()
	if !first {
		select {
		case <-c.release:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
		return http.DefaultTransport.RoundTrip(r)
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	resp.Body = &cutAfterID{r: bufio.NewReader(resp.Body), c: resp.Body, cut: c.cut}
	return resp, nil
}

// lastEventIDs returns the Last-Event-ID of each GET so far.
func (c *standaloneCutter) lastEventIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.gets)
}

// cutAfterID passes a stream on until the end of its first event with an
// id, then closes the connection.
type cutAfterID struct {
	r    *bufio.Reader
	c    io.Closer
	cut  chan struct{}
	rest []byte
	done bool
}

func (b *cutAfterID) Read(p []byte) (int, error) {
	for len(b.rest) == 0 {
		if b.done {
			return 0, io.EOF
		}
		var block []byte
		for {
			line, err := b.r.ReadBytes('\n')
			block = append(block, line...)
			if err != nil {
				if len(block) == 0 {
					return 0, err
				}
				break
			}
			if string(line) == "\n" {
				break
			}
		}
		b.rest = block
		if bytes.HasPrefix(block, []byte("id:")) || bytes.Contains(block, []byte("\nid:")) {
			b.done = true
			_ = b.c.Close()
			close(b.cut)
		}
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

func (b *cutAfterID) Close() error { return b.c.Close() }

// logged collects the data of the log messages a client got.
type logged struct {
	mu   sync.Mutex
	data []string
}

func (l *logged) handler(_ context.Context, req *mcp.LoggingMessageRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := req.Params.Data.(string); ok {
		l.data = append(l.data, s)
	}
}

func (l *logged) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.data, s)
}

// of returns the messages got that begin with prefix, in order.
func (l *logged) of(prefix string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.data {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// TestStandaloneStreamResumes: a go-sdk client whose standalone stream
// (GET) breaks after an event with an id comes back with Last-Event-ID and
// gets what the gateway sent on it meanwhile — a server's log messages
// outside any call, which go to every client of the view on that stream —
// once each, and the stream goes on. Another client of the view, whose
// stream stays open, shows when they were sent (the gateway sends each
// message to every session before the next).
func TestStandaloneStreamResumes(t *testing.T) {
	t.Parallel()
	cfg := testConfig(httpUpstream("ann", serveHTTP(t, announcer(), nil)))
	r := start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var seen, witnessed logged
	cutter := &standaloneCutter{cut: make(chan struct{}), release: make(chan struct{})}
	defer func() {
		select {
		case <-cutter.release:
		default:
			close(cutter.release)
		}
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "cut", Version: "1"}, &mcp.ClientOptions{LoggingMessageHandler: seen.handler})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", HTTPClient: &http.Client{Transport: cutter}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	witness := r.connect(t, "/mcp", nil, &mcp.ClientOptions{LoggingMessageHandler: witnessed.handler})
	for _, s := range []*mcp.ClientSession{cs, witness} {
		if err := s.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
	}
	waitTools(t, witness, "ann__announce", has("ann__announce"))
	announce := func(text string) {
		t.Helper()
		res, err := witness.CallTool(ctx, &mcp.CallToolParams{Name: "ann__announce", Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError {
			t.Fatalf("announcing %q: %v %v", text, err, res)
		}
	}

	// Until the client's stream has carried an event with an id (the
	// server's own stream may open after its first answers: a message
	// sent before is not delivered, and is announced again).
	deadline := time.After(20 * time.Second)
	for {
		announce("hello")
		select {
		case <-cutter.cut:
		case <-time.After(200 * time.Millisecond):
			continue
		case <-deadline:
			t.Fatalf("the client's standalone stream carried no event with an id (it got %d log messages on it), so it could not be resumed", len(seen.of("")))
		}
		break
	}

	// Sent while the client is away: each is on every session's stream
	// once the witness has the next.
	want := []string{"away 1", "away 2", "away 3"}
	for _, text := range append(want, "marker") {
		announce(text)
	}
	waitFor(t, "the witness to get the marker", func() bool { return witnessed.has("marker") })
	if got := seen.of("away"); len(got) != 0 {
		t.Fatalf("the client got %q while its stream was cut", got)
	}
	close(cutter.release)
	waitFor(t, "the client to get what was sent while it was away", func() bool { return len(seen.of("away")) >= len(want) && seen.has("marker") })
	if diff := cmp.Diff(want, seen.of("away")); diff != "" {
		t.Errorf("what the client got of what was sent while it was away (-want +got):\n%s", diff)
	}
	ids := cutter.lastEventIDs()
	if len(ids) < 2 || ids[0] != "" || ids[1] == "" {
		t.Errorf("the client's GETs carried Last-Event-IDs %q; want none, then the last id it got", ids)
	}

	// The stream goes on.
	announce("after")
	waitFor(t, "the client to get a message sent after it came back", func() bool { return seen.has("after") })
}

// TestStandaloneStreamResumesTSClient: the TypeScript SDK's client, whose
// standalone stream breaks (at a proxy) after its first event with an id,
// comes back with Last-Event-ID and gets what the server logged on it
// meanwhile, once each, and the stream goes on.
func TestStandaloneStreamResumesTSClient(t *testing.T) {
	t.Parallel()
	cfg := testConfig(httpUpstream("ann", serveHTTP(t, announcer(), nil)))
	r := start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Once a client has a message, the server's own stream is open: none
	// the TypeScript client's calls make is lost on the server's side.
	var witnessed logged
	witness := r.connect(t, "/mcp", nil, &mcp.ClientOptions{LoggingMessageHandler: witnessed.handler})
	if err := witness.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	waitTools(t, witness, "ann__announce", has("ann__announce"))
	waitFor(t, "a client to get a message the server logged", func() bool {
		_, _ = witness.CallTool(ctx, &mcp.CallToolParams{Name: "ann__announce", Arguments: map[string]any{"text": "warm"}})
		return witnessed.has("warm")
	})

	cut := &testpeer.CutTransport{Standalone: true}
	announce := func(text string) testpeer.TSStep {
		return testpeer.TSStep{"op": "call", "name": "ann__announce", "arguments": map[string]any{"text": text}}
	}
	got := func(match string, n int) testpeer.TSStep {
		return testpeer.TSStep{"op": "wait_notification", "method": "notifications/message", "match": match, "count": n, "timeout_ms": 15000}
	}
	lines, err := testpeer.RunTSClient(t, ctx, testpeer.TSClientInput{
		Target: testpeer.TSTarget{Transport: "http", URL: cut.Proxy(t, r.url) + "/mcp"},
		Steps: []testpeer.TSStep{
			{"op": "set_level", "level": "info"},
			{"op": "list_tools", "want": []string{"ann__announce"}},
			announce("hello"),
			got("hello", 1),
			// The stream is cut after "hello": these come while the client
			// waits its backoff (1 s) to come back.
			announce("away 1"), announce("away 2"), announce("away 3"),
			got("away", 3),
			announce("after"),
			got("after", 1),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines[:len(lines)-1] {
		if !l.OK() {
			t.Fatalf("step %s failed: %v (the proxy holds the client's standalone stream back until an event with an id comes, then cuts it: cut %v)", l.Op(), l.Err(), cutOf(cut))
		}
	}
	var counts map[string]int
	if err := lines[len(lines)-1].Field("notifications", &counts); err != nil {
		t.Fatal(err)
	}
	if n := counts["notifications/message"]; n != 5 {
		t.Errorf("the client got %d log messages; want 5, each once (hello, away 1-3, after)", n)
	}
	if wasCut, resumed := cut.Resumed(); !wasCut || len(resumed) == 0 {
		t.Errorf("the client's standalone stream was not cut and resumed (cut %v, resumed with %q)", wasCut, resumed)
	}
}

// cutOf reports whether c cut a stream.
func cutOf(c *testpeer.CutTransport) bool {
	wasCut, _ := c.Resumed()
	return wasCut
}

// sseEvent is one event of an event stream: its id and data.
type sseEvent struct{ id, data string }

// rawStandalone opens GETs of raw session s (a standalone stream, or one
// resuming a stream with lastID) and reads their events.
type rawStandalone struct {
	t *testing.T
	s *rawSession
}

// open sends the GET and returns its status and, for an event stream, its
// events as they come; cut breaks the connection.
func (g rawStandalone) open(lastID string) (status int, events chan sseEvent, cut func()) {
	g.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.s.url, nil)
	if err != nil {
		g.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", g.s.id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		g.t.Fatal(err)
	}
	events = make(chan sseEvent, 256)
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		cancel()
		close(events)
		return resp.StatusCode, events, func() {}
	}
	go func() {
		defer close(events)
		br := bufio.NewReader(resp.Body)
		var ev sseEvent
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			switch line = strings.TrimSuffix(line, "\n"); {
			case line == "":
				if ev.data != "" {
					events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	cut = func() {
		cancel()
		resp.Body.Close()
	}
	g.t.Cleanup(cut)
	return resp.StatusCode, events, cut
}

// until returns the first event of events whose data holds text, failing
// if the stream ends or none comes within 20 s.
func until(t *testing.T, events chan sseEvent, text string) sseEvent {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the stream ended before an event with %q", text)
			}
			if strings.Contains(ev.data, text) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no event with %q within 20s", text)
		}
	}
}

// TestStandaloneStreamTakenOverAndResumedAnew: a client's plain GET while
// its broken standalone stream waits for it takes the stream's place
// (the SDK allows one standalone stream per session, and would refuse it
// for the 30 s the old one waits); and a GET resuming a standalone stream
// that no longer goes on (here: the one the plain GET ended) is answered
// with what was kept of it and goes on as a new standalone stream, with
// ids of its own — not ended at once, as a finished call's stream is,
// which a go-sdk client would resume again and again until it gave up on
// its session. A stream the gateway never had still gets 400.
func TestStandaloneStreamTakenOverAndResumedAnew(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(httpUpstream("ann", serveHTTP(t, announcer(), nil))))
	s := newRawSession(t, r.url+"/mcp", nil)
	readAll(t, s.post(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`, nil))
	// The gateway lists the server's tools a moment after it starts.
	waitFor(t, "the gateway to list ann__announce", func() bool {
		return strings.Contains(readAll(t, s.post(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, nil)), "ann__announce")
	})
	n := 10
	announce := func(text string) {
		t.Helper()
		n++
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ann__announce","arguments":{"text":%q}}}`, n, text)
		if out := readAll(t, s.post(body, nil)); !strings.Contains(out, `"sent"`) && !strings.Contains(out, "not connected") && !strings.Contains(out, "closed stream") {
			t.Fatalf("announcing %q: %s", text, out)
		}
	}
	g := rawStandalone{t: t, s: s}
	// openOK opens a GET once the SDK lets it in: until the gateway has
	// noticed that the client's last connection broke, the SDK refuses a
	// second standalone stream (409).
	openOK := func(lastID string) (chan sseEvent, func()) {
		t.Helper()
		var (
			events chan sseEvent
			cut    func()
			status int
		)
		waitFor(t, "a GET to open the standalone stream", func() bool {
			status, events, cut = g.open(lastID)
			return status == http.StatusOK
		})
		return events, cut
	}

	first, cutFirst := openOK("")
	var warm sseEvent
	waitFor(t, "a message on the standalone stream", func() bool {
		announce("warm")
		select {
		case warm = <-first:
			return strings.Contains(warm.data, "warm")
		case <-time.After(200 * time.Millisecond):
			return false
		}
	})
	if warm.id == "" {
		t.Fatalf("the standalone stream's event %q has no id", warm.data)
	}
	cutFirst()

	second, cutSecond := openOK("")
	announce("second")
	got := until(t, second, "second")
	if key, _, _ := strings.Cut(got.id, "_"); got.id == "" || strings.HasPrefix(warm.id, key+"_") {
		t.Errorf("the new standalone stream's event has id %q; want one of a stream other than %q", got.id, warm.id)
	}
	cutSecond()

	third, _ := openOK(warm.id)
	announce("third")
	got3 := until(t, third, "third")
	for _, old := range []string{warm.id, got.id} {
		if key, _, _ := strings.Cut(old, "_"); got3.id == "" || strings.HasPrefix(got3.id, key+"_") {
			t.Errorf("resumed after its stream ended, the client's event has id %q; want one of a new stream (not %q's)", got3.id, old)
		}
	}

	if status, _, _ := g.open("NOSUCHSTREAM_3"); status != http.StatusBadRequest {
		t.Errorf("a GET resuming a stream the gateway never had got HTTP %d; want 400", status)
	}
}
