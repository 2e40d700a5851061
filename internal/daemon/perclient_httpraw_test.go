//lint:file-ignore SA1019 elicitation and logging are deprecated only from protocol 2026-07-28; clients and servers use them today.

package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// This file checks that what a streamable-HTTP server sends through the
// upstream side's go-sdk client reaches a client of a prefix: never,
// session: per_client view as the server sent it (issue 17): an
// elicitation's params byte for byte (its schema's fields in the
// server's order, numbers no float64 can hold) and the client's answer
// byte for byte back to the server, during a call on both call paths and
// outside any call; and log messages on the stream of the call they
// came on, with fast_path off, where the SDK's client reads the calls'
// streams.

// writtenAnswer is an elicitation answer the test's client gives as written.
type writtenAnswer struct {
	*mcp.ElicitResult
	raw json.RawMessage
}

func (r *writtenAnswer) MarshalJSON() ([]byte, error) { return r.raw, nil }

// answeringRaw is a go-sdk client, reading through spy, that answers
// every elicitation/create with answer, written as it is (the SDK's
// types would encode a map in name order and numbers through float64),
// and tells logRead of each log message it reads.
func answeringRaw(answer string, spy *wireRecorder, logRead func(data string)) *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "raw-client", Version: "1"}, &mcp.ClientOptions{
		// Declares elicitation; the middleware answers before it.
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, fmt.Errorf("not reached")
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			if logRead != nil {
				logRead(fmt.Sprint(req.Params.Data))
			}
		},
	})
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "elicitation/create" {
				return &writtenAnswer{ElicitResult: &mcp.ElicitResult{Action: "accept"}, raw: json.RawMessage(answer)}, nil
			}
			return next(ctx, method, req)
		}
	})
	return c
}

// connectSpied connects c to url through spy and lists its tools (through
// a view, that opens the client's own upstream session) once its
// standalone stream is open.
func connectSpied(t *testing.T, ctx context.Context, c *mcp.Client, url string, spy *wireRecorder, tools ...string) *mcp.ClientSession {
	t.Helper()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, HTTPClient: &http.Client{Transport: spy}}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	waitFor(t, "the standalone stream of "+url, spy.standaloneOpen)
	waitFor(t, "the tools of "+url, func() bool {
		var names []string
		for tl, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return false
			}
			names = append(names, tl.Name)
		}
		return has(tools...)(names)
	})
	return cs
}

// answersSeen is an HTTP handler that records the result of each
// response a client posts to next, as the client wrote it.
type answersSeen struct {
	next http.Handler
	mu   sync.Mutex
	got  []string
}

func (a *answersSeen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) == nil && m["method"] == nil && m["result"] != nil {
			a.mu.Lock()
			a.got = append(a.got, string(m["result"]))
			a.mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	a.next.ServeHTTP(w, r)
}

func (a *answersSeen) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	got := a.got
	a.got = nil
	return got
}

// The elicitation the test's go-sdk server sends, and the answer the
// test's client gives: fields not in name order, numbers a float64
// cannot hold as written (9007199254740993, 1.10), in the schema, in
// _meta and in the answer's content.
const (
	rawSchema     = `{"type":"object","properties":{"zeta":{"type":"integer","default":9007199254740993},"alpha":{"type":"number","default":1.10},"mid":{"type":"string"}},"required":["zeta"]}`
	rawAnswerJSON = `{"action":"accept","content":{"zeta":9007199254740993,"alpha":1.10,"mid":"x"},"_meta":{"z":1.10,"a":9007199254740993}}`
)

// twoOf lets two calls on: wait returns once two have called it.
type twoOf struct {
	mu sync.Mutex
	n  int
	ch chan struct{}
}

func (b *twoOf) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n, b.ch = 0, make(chan struct{})
}

func (b *twoOf) wait(ctx context.Context) error {
	b.mu.Lock()
	ch := b.ch
	if b.n++; b.n == 2 {
		close(ch)
	}
	b.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// rawElicitServer is a go-sdk server whose tool "ask" elicits rawSchema
// during the call, its prompt "ask" during a prompts/get, and "later"
// from a goroutine of its own after the call returned, outside any
// request; each outcome of "later" goes to done. Its
// tool "pair" elicits once two calls of it are in, and returns once both
// were answered (in, answered): both calls run while each elicitation
// travels.
func rawElicitServer(done chan<- error, in, answered *twoOf) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "raw", Version: "1"}, nil)
	params := func(what string) *mcp.ElicitParams {
		return &mcp.ElicitParams{
			Meta:            mcp.Meta{"n": json.Number("9007199254740993"), "f": json.Number("1.10")},
			Message:         what,
			RequestedSchema: json.RawMessage(rawSchema),
		}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, params("during a call"))
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "ask"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		res, err := req.Session.Elicit(ctx, params("during a prompt"))
		if err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: res.Action}}}}, nil
	})
	type pairArgs struct {
		Key string `json:"key"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "pair"}, func(ctx context.Context, req *mcp.CallToolRequest, a pairArgs) (*mcp.CallToolResult, any, error) {
		if err := in.wait(ctx); err != nil {
			return nil, nil, err
		}
		if _, err := req.Session.Elicit(ctx, params("pair "+a.Key)); err != nil {
			return nil, nil, err
		}
		if err := answered.wait(ctx); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "later"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		ss := req.Session
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			// Outside any request: on the standalone stream, which the
			// SDK refuses until its client has opened it.
			_, err := ss.Elicit(ctx, params("outside a call"))
			for err != nil && ctx.Err() == nil {
				select {
				case <-ctx.Done():
				case <-time.After(10 * time.Millisecond):
					_, err = ss.Elicit(ctx, params("outside a call"))
				}
			}
			done <- err
		}()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "later"}}}, nil, nil
	})
	return s
}

// TestPrefixNeverPerClientAsSentOverHTTP: a streamable-HTTP server's
// elicitation reaches a go-sdk client of a prefix: never,
// per_client view with its params byte for byte as directly, and the
// server gets the client's answer byte for byte as directly — during a
// call (fast_path on: the upstream side's own call path; off: the SDK's
// client reads the call's stream), during a prompts/get (on its stream)
// and outside any call (on the
// standalone streams) — from a go-sdk server whose form's fields are not
// in name order and whose numbers no float64 holds as written, and from
// server-everything (its form's fields in its own order). And with
// fast_path off, two calls in flight on one session that each get the
// same log message on their own stream each get it there, as directly.
func TestPrefixNeverPerClientAsSentOverHTTP(t *testing.T) {
	t.Parallel()
	done := make(chan error, 1)
	var in, answered twoOf
	seen := &answersSeen{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return rawElicitServer(done, &in, &answered) }, nil)}
	hs := httptest.NewServer(seen)
	t.Cleanup(hs.Close) // after the daemons, whose sessions hold its streams
	var round pairRound
	logsURL := serveHTTP(t, pairLogServer(&round), nil)
	evURL := testpeer.StartEverything(t, "streamableHttp")
	servers := []neverServer{{"raw", "raw", hs.URL}, {"evh", "ev", evURL}, {"logs", "logs", logsURL}}
	on, off := startNeverViews(t, true, servers...), startNeverViews(t, false, servers...)
	sides := []wireSide{{"directly", ""}, {"fast_path on", on.url}, {"fast_path off", off.url}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t.Run("go-sdk server", func(t *testing.T) {
		type outcome struct {
			Asked    []string // stream and params of each elicitation/create
			Answered []string // what the server got, as written
		}
		got := make([]outcome, len(sides))
		for i, side := range sides {
			url := hs.URL
			if side.base != "" {
				url = side.base + "/mcp/raw"
			}
			spy := &wireRecorder{}
			cs := connectSpied(t, ctx, answeringRaw(rawAnswerJSON, spy, nil), url, spy, "ask", "later")
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}}); err != nil || res.IsError {
				t.Fatalf("%s: ask: %v %v", side.name, err, res)
			}
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "ask"}); err != nil {
				t.Fatalf("%s: prompt ask: %v", side.name, err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "later", Arguments: map[string]any{}}); err != nil {
				t.Fatalf("%s: later: %v", side.name, err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("%s: the server's elicitation outside a call: %v", side.name, err)
				}
			case <-ctx.Done():
				t.Fatalf("%s: the server's elicitation outside a call was not answered", side.name)
			}
			got[i] = outcome{Asked: spy.requests("elicitation/create"), Answered: seen.take()}
		}
		// The test can tell: directly, the fields and numbers are as
		// the server wrote them, and so is the answer.
		if want := []string{"POST tools/call", "POST prompts/get", "GET"}; len(got[0].Asked) != 3 ||
			!strings.HasPrefix(got[0].Asked[0], want[0]+" ") || !strings.HasPrefix(got[0].Asked[1], want[1]+" ") || !strings.HasPrefix(got[0].Asked[2], want[2]+" ") ||
			!strings.Contains(got[0].Asked[0], rawSchema) || !strings.Contains(got[0].Asked[0], "9007199254740993") {
			t.Fatalf("directly the client was asked %q; want the schema as written (%s), on the call's stream, the prompts/get's stream and the standalone stream", got[0].Asked, rawSchema)
		}
		if want := []string{rawAnswerJSON, rawAnswerJSON, rawAnswerJSON}; !slices.Equal(got[0].Answered, want) {
			t.Fatalf("directly the server got %q; want %q", got[0].Answered, want)
		}
		sameAsDirect(t, sides, got)
	})

	t.Run("server-everything", func(t *testing.T) {
		type outcome struct {
			Asked  []string
			Result string // the server's echo of the answer it got
		}
		answer := `{"action":"accept","content":{"name":"Ada","check":true,"number":1.10}}`
		got := make([]outcome, len(sides))
		for i, side := range sides {
			url := evURL
			if side.base != "" {
				url = side.base + "/mcp/ev"
			}
			spy := &wireRecorder{}
			cs := connectSpied(t, ctx, answeringRaw(answer, spy, nil), url, spy, "trigger-elicitation-request")
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "trigger-elicitation-request", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("%s: trigger-elicitation-request: %v %v", side.name, err, res)
			}
			got[i] = outcome{Asked: spy.requests("elicitation/create"), Result: textOf(res)}
		}
		if len(got[0].Asked) != 1 || !strings.Contains(got[0].Asked[0], `"properties":{"name":`) || !strings.Contains(got[0].Result, `"name": "Ada",`+"\n"+`    "check": true`) {
			t.Fatalf("directly the client was asked %q and the server echoed %q; want the form's fields in server-everything's order (name first) and the answer's in the client's (name before check)", got[0].Asked, got[0].Result)
		}
		sameAsDirect(t, sides, got)
	})

	t.Run("elicitations of two calls, fast_path off", func(t *testing.T) {
		var got [][]string
		for _, url := range []string{hs.URL, off.url + "/mcp/raw"} {
			in.reset()
			answered.reset()
			spy := &wireRecorder{}
			cs := connectSpied(t, ctx, answeringRaw(rawAnswerJSON, spy, nil), url, spy, "pair")
			callPair(t, ctx, cs, url)
			var asked []string
			for _, r := range spy.requests("elicitation/create") {
				var p struct {
					Message string `json:"message"`
				}
				stream, params, _ := strings.Cut(r, " {")
				_ = json.Unmarshal([]byte("{"+params), &p)
				asked = append(asked, stream+": "+p.Message)
			}
			slices.Sort(asked)
			got = append(got, asked)
		}
		want := []string{"POST tools/call A: pair A", "POST tools/call B: pair B"}
		if !slices.Equal(got[0], want) {
			t.Fatalf("directly the elicitations came %q; want each on its call's stream, %q", got[0], want)
		}
		if diff := cmp.Diff(got[0], got[1]); diff != "" {
			t.Errorf("the streams the two calls' elicitations came on, directly (-) and through the view (+):\n%s", diff)
		}
	})

	t.Run("logs of two calls, fast_path off", func(t *testing.T) {
		var got [][]string
		for _, url := range []string{logsURL, off.url + "/mcp/logs"} {
			round.reset()
			spy := &wireRecorder{}
			cs := connectSpied(t, ctx, answeringRaw("", spy, round.clientRead), url, spy, "pair")
			if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
				t.Fatalf("logging/setLevel: %v", err)
			}
			callPair(t, ctx, cs, url)
			got = append(got, spy.logs("same"))
		}
		want := []string{"POST tools/call A", "POST tools/call B"}
		if !slices.Equal(got[0], want) {
			t.Fatalf("directly the log messages came on %q; want one on each call's stream, %q", got[0], want)
		}
		if diff := cmp.Diff(got[0], got[1]); diff != "" {
			t.Errorf("the streams the two calls' log messages came on, directly (-) and through the view (+):\n%s", diff)
		}
	})
}

// wireSide is a way of reaching a server: directly (base "") or through a
// daemon at base.
type wireSide struct{ name, base string }

// sameAsDirect reports how what each side got differs from what the
// first, directly, got.
func sameAsDirect[T any](t *testing.T, sides []wireSide, got []T) {
	t.Helper()
	for i := 1; i < len(sides); i++ {
		if diff := cmp.Diff(got[0], got[i]); diff != "" {
			t.Errorf("%s: the client was asked, or the server answered, otherwise than directly (-direct +view):\n%s", sides[i].name, diff)
		}
	}
}

// callPair calls the tool "pair" of cs (at url) with the keys A and B at
// once, and fails the test unless both succeed.
func callPair(t *testing.T, ctx context.Context, cs *mcp.ClientSession, url string) {
	t.Helper()
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, key := range []string{"A", "B"} {
		wg.Go(func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pair", Arguments: map[string]any{"key": key}})
			if err == nil && res.IsError {
				err = fmt.Errorf("%s", textOf(res))
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("%s: pair: %v", url, err)
		}
	}
}

// pairRound is a round of pairLogServer's two calls: each logs once
// both are in, and returns once its client has read both messages.
type pairRound struct {
	mu      sync.Mutex
	in      int
	arrived chan struct{}
	read    int
	readAll chan struct{}
}

func (r *pairRound) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.in, r.read, r.arrived, r.readAll = 0, 0, make(chan struct{}), make(chan struct{})
}

// arrive notes a call and returns the channels it waits on.
func (r *pairRound) arrive() (arrived, readAll chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.in++; r.in == 2 {
		close(r.arrived)
	}
	return r.arrived, r.readAll
}

// clientRead notes that the client read a log message.
func (r *pairRound) clientRead(data string) {
	if data != "same" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.read++; r.read == 2 {
		close(r.readAll)
	}
}

// pairLogServer is a go-sdk server whose tool "pair" logs "same" on its
// call's stream once two calls are in, and returns once the client has
// read two such messages: both calls run while each message travels.
func pairLogServer(round *pairRound) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "pairs", Version: "1"}, nil)
	type args struct {
		Key string `json:"key"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "pair"}, func(ctx context.Context, req *mcp.CallToolRequest, _ args) (*mcp.CallToolResult, any, error) {
		arrived, readAll := round.arrive()
		wait := func(ch chan struct{}) error {
			select {
			case <-ch:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := wait(arrived); err != nil {
			return nil, nil, err
		}
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "same"}); err != nil {
			return nil, nil, err
		}
		if err := wait(readAll); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil, nil
	})
	return s
}
