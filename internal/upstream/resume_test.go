//lint:file-ignore SA1019 the resumed stream carries log messages, deprecated only from protocol 2026-07-28.

package upstream

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestResumeTSPollingExample: the TypeScript SDK's SSE polling example
// closes the call's event stream mid-call; the call still completes, on
// the lean path and on the SDK's, with the log messages sent while the
// stream was closed, and not before the announced retry interval.
func TestResumeTSPollingExample(t *testing.T) {
	t.Parallel()
	url := testpeer.StartSSEPolling(t)
	for _, lean := range []bool{true, false} {
		name := "sdk"
		if lean {
			name = "lean"
		}
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var logs []string
			srv := config.Server{Name: "polling", Transport: config.TransportHTTP, URL: url, TerminateOnClose: true}
			c, err := Dial(context.Background(), srv, DialOptions{
				LeanCalls: func() bool { return lean },
				Events: Events{Log: func(_ context.Context, p *mcp.LoggingMessageParams) {
					mu.Lock()
					defer mu.Unlock()
					logs = append(logs, p.Data.(string))
				}},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if lean && c.fast == nil {
				t.Fatal("the session did not get the lean path")
			}
			var before uint64
			if c.fast != nil {
				before = c.fast.next.Load()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			start := time.Now()
			res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "long-task", Arguments: map[string]any{}}, nil)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("long-task: %v", err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "Long task completed successfully!" {
				t.Errorf("long-task: got %q", got)
			}
			// 2 s of work before the stream closes, then the 2 s retry.
			if min := 2*time.Second + testpeer.SSEPollingRetry; took < min {
				t.Errorf("long-task took %v, want at least %v (the reconnect came before retry:)", took, min)
			}
			if c.fast != nil {
				if used := c.fast.next.Load() != before; used != lean {
					t.Errorf("the lean path was used: %v, want %v", used, lean)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(logs) == 0 || logs[len(logs)-1] != "Progress: 100% - Complete!" {
				t.Errorf("log messages: got %q, want the last one sent while the stream was closed", logs)
			}
		})
	}
}

// resumeRecorder wraps a go-sdk streamable-HTTP handler and records what
// resuming needs checked: the event ids the server wrote on each call's
// stream, and each reconnect's Last-Event-ID and time. Its standalone
// stream starts with an event of its own that ends at once (id
// standaloneEventID, retry standaloneRetry), so the client must resume
// that one too.
type resumeRecorder struct {
	next http.Handler

	mu         sync.Mutex
	closedAt   time.Time // when the tool closed its call's stream
	standalone time.Time // when the first standalone stream was ended
	postIDs    []string  // event ids written on call streams, in order
	resumes    []resumeGET
}

type resumeGET struct {
	lastEventID string
	at          time.Time
}

const (
	standaloneEventID = "sb-test-standalone-0"
	standaloneRetry   = 400 * time.Millisecond
	callRetry         = 1500 * time.Millisecond // above defaultResumeDelay, so that ignoring it shows
)

func (rr *resumeRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") == standaloneEventID:
		rr.mu.Lock()
		rr.resumes = append(rr.resumes, resumeGET{standaloneEventID, time.Now()})
		rr.mu.Unlock()
		r.Header.Del("Last-Event-ID") // a fresh standalone stream, from the SDK's server
		rr.next.ServeHTTP(w, r)
	case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "":
		rr.mu.Lock()
		rr.resumes = append(rr.resumes, resumeGET{r.Header.Get("Last-Event-ID"), time.Now()})
		rr.mu.Unlock()
		rr.next.ServeHTTP(w, r)
	case r.Method == http.MethodGet:
		rr.mu.Lock()
		first := rr.standalone.IsZero()
		if first {
			rr.standalone = time.Now()
		}
		rr.mu.Unlock()
		if !first {
			rr.next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "id: %s\nretry: %d\ndata: \n\n", standaloneEventID, standaloneRetry.Milliseconds())
	case r.Method == http.MethodPost:
		rr.next.ServeHTTP(&idWriter{ResponseWriter: w, rr: rr}, r)
	default:
		rr.next.ServeHTTP(w, r)
	}
}

// idWriter notes the event ids a call's stream carries.
type idWriter struct {
	http.ResponseWriter
	rr   *resumeRecorder
	line []byte
}

func (w *idWriter) Write(p []byte) (int, error) {
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		w.line = append(w.line, p...)
		for {
			i := bytes.IndexByte(w.line, '\n')
			if i < 0 {
				break
			}
			if id, ok := bytes.CutPrefix(w.line[:i], []byte("id: ")); ok {
				w.rr.mu.Lock()
				w.rr.postIDs = append(w.rr.postIDs, string(id))
				w.rr.mu.Unlock()
			}
			w.line = w.line[i+1:]
		}
	}
	return w.ResponseWriter.Write(p)
}

func (w *idWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *idWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestResumeHonoursRetry: with a go-sdk server that closes a call's stream
// (retry: 1.5 s) and ends the standalone stream (retry: 400 ms), the
// client reconnects each with the last event id it saw on that stream,
// no sooner than the server asked, and gets what it missed: the call's
// progress and result, and a list change on the standalone stream.
func TestResumeHonoursRetry(t *testing.T) {
	t.Parallel()
	for _, lean := range []bool{true, false} {
		name := "sdk"
		if lean {
			name = "lean"
		}
		t.Run(name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "resume", Version: "1"}, nil)
			rr := &resumeRecorder{}
			s.AddTool(&mcp.Tool{Name: "pause", InputSchema: map[string]any{"type": "object"}},
				func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					rr.mu.Lock()
					rr.closedAt = time.Now()
					rr.mu.Unlock()
					req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: callRetry})
					// Sent while the client is away: replayed on its return.
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 1}); err != nil {
						return nil, err
					}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "resumed"}}}, nil
				})
			rr.next = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
				&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)})
			hs := httptest.NewServer(rr)
			defer hs.Close()

			changed := make(chan struct{}, 1)
			srv := config.Server{Name: "resume", Transport: config.TransportHTTP, URL: hs.URL, TerminateOnClose: true}
			c, err := Dial(context.Background(), srv, DialOptions{
				LeanCalls: func() bool { return lean },
				Events: Events{ToolsChanged: func() {
					select {
					case changed <- struct{}{}:
					default:
					}
				}},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			var progress atomic.Int32
			res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "pause", Arguments: map[string]any{}},
				func(*mcp.ProgressNotificationParams) { progress.Add(1) })
			if err != nil {
				t.Fatalf("pause: %v", err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "resumed" {
				t.Errorf("pause: got %q, want %q", got, "resumed")
			}
			if progress.Load() != 1 {
				t.Errorf("got %d progress notifications, want the 1 sent while the stream was closed", progress.Load())
			}

			// The standalone stream: resumed, and alive again.
			deadline := time.Now().Add(20 * time.Second)
			for {
				s.AddTool(&mcp.Tool{Name: fmt.Sprintf("added-%d", time.Now().UnixNano()), InputSchema: map[string]any{"type": "object"}},
					func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						return &mcp.CallToolResult{}, nil
					})
				select {
				case <-changed:
				case <-time.After(100 * time.Millisecond):
					if time.Now().Before(deadline) {
						continue
					}
					t.Fatal("no tools/list_changed arrived on the resumed standalone stream")
				}
				break
			}

			rr.mu.Lock()
			defer rr.mu.Unlock()
			var call, standalone []resumeGET
			for _, g := range rr.resumes {
				if g.lastEventID == standaloneEventID {
					standalone = append(standalone, g)
				} else {
					call = append(call, g)
				}
			}
			if len(call) == 0 || len(rr.postIDs) == 0 {
				t.Fatalf("the call's stream was not resumed (ids written %q, reconnects %+v)", rr.postIDs, rr.resumes)
			}
			if got, want := call[0].lastEventID, rr.postIDs[len(rr.postIDs)-1]; got != want {
				t.Errorf("the call's reconnect sent Last-Event-ID %q, want %q, the last id on its stream", got, want)
			}
			if gap := call[0].at.Sub(rr.closedAt); gap < callRetry {
				t.Errorf("the call's stream was resumed %v after it closed, want no sooner than retry: %v", gap, callRetry)
			}
			if len(standalone) == 0 {
				t.Fatal("the standalone stream was not resumed with its last event id")
			}
			if gap := standalone[0].at.Sub(rr.standalone); gap < standaloneRetry {
				t.Errorf("the standalone stream was resumed %v after it ended, want no sooner than retry: %v", gap, standaloneRetry)
			}
		})
	}
}

// TestResumeGivesUp: a server that closes a call's stream again and again
// without sending anything new fails the call, with the reason, after
// maxResumesWithoutProgress reconnects; it does not loop forever.
func TestResumeGivesUp(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "closer", Version: "1"}, nil)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var reconnects atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") == "boom-1" {
			reconnects.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "retry: 10\n\n") // and nothing new
			return
		}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, "id: boom-1\nretry: 10\ndata: \n\n")
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		sdk.ServeHTTP(w, r)
	}))
	defer hs.Close()
	srv := config.Server{Name: "closer", Transport: config.TransportHTTP, URL: hs.URL, TerminateOnClose: true}
	c, err := Dial(context.Background(), srv, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.fast == nil {
		t.Fatal("the session did not get the lean path")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "anything", Arguments: map[string]any{}}, nil)
	if err == nil || !strings.Contains(err.Error(), `after event "boom-1" brought nothing new`) {
		t.Errorf("got %v, want the call to fail saying resuming brought nothing new", err)
	}
	if got := reconnects.Load(); got != maxResumesWithoutProgress+1 {
		t.Errorf("got %d reconnects, want %d", got, maxResumesWithoutProgress+1)
	}
}
