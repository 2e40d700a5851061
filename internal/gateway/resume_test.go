package gateway_test

import (
	"bufio"
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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// cutter is a client's HTTP transport whose connection to the gateway
// breaks once: the event stream answering the first tools/call ends after
// its first event, its connection closed. It records the Last-Event-ID of
// each GET.
type cutter struct {
	mu      sync.Mutex
	cut     bool
	resumed []string
}

func (c *cutter) RoundTrip(req *http.Request) (*http.Response, error) {
	var call bool
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		call = bytes.Contains(body, []byte(`"tools/call"`))
	}
	if id := req.Header.Get("Last-Event-ID"); req.Method == http.MethodGet && id != "" {
		c.mu.Lock()
		c.resumed = append(c.resumed, id)
		c.mu.Unlock()
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !call || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	c.mu.Lock()
	first := !c.cut
	c.cut = true
	c.mu.Unlock()
	if first {
		resp.Body = &cutBody{r: bufio.NewReader(resp.Body), c: resp.Body}
	}
	return resp, nil
}

// cutBody reads the first event of a stream, then closes the connection.
type cutBody struct {
	r    *bufio.Reader
	c    io.Closer
	rest []byte
	read bool
}

func (b *cutBody) Read(p []byte) (int, error) {
	if !b.read {
		b.read = true
		for {
			line, err := b.r.ReadBytes('\n')
			b.rest = append(b.rest, line...)
			if err != nil || string(line) == "\n" {
				break
			}
		}
		_ = b.c.Close()
	}
	if len(b.rest) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

func (b *cutBody) Close() error { return b.c.Close() }

// TestCallStreamResumes checks that a go-sdk client whose connection
// breaks mid-call resumes the call's stream with Last-Event-ID and gets
// the rest of it — the progress it missed, then the progress and result
// sent after it came back — on both call paths.
func TestCallStreamResumes(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast_path=%v", fast), func(t *testing.T) {
			r := newRig(t, map[string]string{"alpha": "ok"}, fmt.Sprintf("gateway:\n  fast_path: %v\n", fast))
			var mu sync.Mutex
			var progress []string
			c := mcp.NewClient(&mcp.Implementation{Name: "resume", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					progress = append(progress, req.Params.Message)
					mu.Unlock()
				},
			})
			cut := &cutter{}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.srv.URL + "/mcp", HTTPClient: &http.Client{Transport: cut}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cs.Close() }()
			// Six steps of 300 ms: the client, cut after the first, comes
			// back after its 1 s backoff, when some steps are stored and
			// some are still to come.
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__stream", Arguments: map[string]any{"steps": 6, "step_ms": 300},
				Meta: mcp.Meta{"progressToken": "resume-token"}})
			if err != nil {
				t.Fatalf("the call failed: %v", err)
			}
			if got := resultText(t, res); got != "streamed 6 steps" {
				t.Errorf("got result %q, want %q", got, "streamed 6 steps")
			}
			cut.mu.Lock()
			wasCut, resumed := cut.cut, slices.Clone(cut.resumed)
			cut.mu.Unlock()
			if !wasCut || len(resumed) == 0 {
				t.Fatalf("the call's stream was not cut and resumed (cut %v, resumed with %q)", wasCut, resumed)
			}
			// Progress notifications are handled asynchronously by the
			// client: wait for all six.
			want := []string{"step 1 of 6", "step 2 of 6", "step 3 of 6", "step 4 of 6", "step 5 of 6", "step 6 of 6"}
			deadline := time.Now().Add(10 * time.Second)
			for {
				mu.Lock()
				got := slices.Clone(progress)
				mu.Unlock()
				slices.Sort(got)
				if slices.Equal(got, want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("got progress %q, want each of %q once", got, want)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// TestCallStreamResumesTSClient checks the same with the TypeScript SDK's
// client, whose connection goes through a proxy that breaks it after the
// call's first event.
func TestCallStreamResumesTSClient(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast_path=%v", fast), func(t *testing.T) {
			r := newRig(t, map[string]string{"alpha": "ok"}, fmt.Sprintf("gateway:\n  fast_path: %v\n", fast))
			cut := &cutter{}
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				out, err := http.NewRequestWithContext(req.Context(), req.Method, r.srv.URL+req.URL.RequestURI(), req.Body)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadGateway)
					return
				}
				out.Header = req.Header.Clone()
				resp, err := cut.RoundTrip(out)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadGateway)
					return
				}
				defer resp.Body.Close()
				for k, v := range resp.Header {
					w.Header()[k] = v
				}
				w.WriteHeader(resp.StatusCode)
				buf := make([]byte, 32<<10)
				for {
					n, err := resp.Body.Read(buf)
					if n > 0 {
						_, _ = w.Write(buf[:n])
						w.(http.Flusher).Flush()
					}
					if err != nil {
						break
					}
				}
				if _, ok := resp.Body.(*cutBody); ok {
					panic(http.ErrAbortHandler) // the connection breaks
				}
			}))
			defer proxy.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			lines, err := testpeer.RunTSClient(t, ctx, testpeer.TSClientInput{
				Target: testpeer.TSTarget{Transport: "http", URL: proxy.URL + "/mcp"},
				Steps: []testpeer.TSStep{{"op": "call", "name": "alpha__stream", "arguments": map[string]any{"steps": 6, "step_ms": 300},
					"progress": true, "timeout_ms": 15000}},
			})
			if err != nil {
				t.Fatal(err)
			}
			call := lines[1]
			if !call.OK() || call.Text() != "streamed 6 steps" {
				t.Fatalf("the call: ok %v, text %q, error %v; want %q", call.OK(), call.Text(), call.Err(), "streamed 6 steps")
			}
			var progress []struct {
				Message string `json:"message"`
			}
			if err := call.Field("progress", &progress); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range progress {
				got = append(got, p.Message)
			}
			if want := []string{"step 1 of 6", "step 2 of 6", "step 3 of 6", "step 4 of 6", "step 5 of 6", "step 6 of 6"}; !slices.Equal(got, want) {
				t.Errorf("got progress %q, want %q", got, want)
			}
			cut.mu.Lock()
			defer cut.mu.Unlock()
			if !cut.cut || len(cut.resumed) == 0 {
				t.Errorf("the call's stream was not cut and resumed (cut %v, resumed with %q)", cut.cut, cut.resumed)
			}
		})
	}
}

// TestResumeUnknownStream checks that a GET whose Last-Event-ID names no
// stream the gateway keeps gets the error a go-sdk server with an event
// store gives (400 "failed to replay events"), as a JSON-RPC error.
func TestResumeUnknownStream(t *testing.T) {
	r := newRig(t, map[string]string{"alpha": "ok"}, "")
	session := rawSession(t, r.srv.URL+"/mcp")
	req, err := http.NewRequest(http.MethodGet, r.srv.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = session.Clone()
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("Last-Event-ID", "NOSUCHSTREAM_3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &e) != nil || e.Error.Code != -32600 ||
		!strings.Contains(e.Error.Message, "failed to replay events") {
		t.Errorf("got HTTP %d %s, want 400 with a -32600 error saying %q", resp.StatusCode, body, "failed to replay events")
	}
}
