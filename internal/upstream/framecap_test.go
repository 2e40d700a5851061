package upstream

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

func TestTopScanner(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in                      string
		id                      string
		result, isErr, isMethod bool
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"id":99,"content":[]}}`, "7", true, false, false},
		{`{"result":{"content":[{"text":"a \"quoted\" id: 5, }"}]},"jsonrpc":"2.0","id":"abc"}`, `"abc"`, true, false, false},
		{`{"jsonrpc":"2.0", "id" : 12 , "error":{"code":1}}`, "12", false, true, false},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":3}}`, "", false, false, true},
		{`{"jsonrpc":"2.0","id":4,"method":"roots/list"}`, "4", false, false, true},
	}
	for _, tt := range tests {
		var s topScanner
		// Feed in small pieces, as a stream would arrive.
		for i := 0; i < len(tt.in); i += 3 {
			s.feed([]byte(tt.in[i:min(i+3, len(tt.in))]))
		}
		if got := strings.TrimSpace(string(s.id)); got != tt.id || s.hasResult != tt.result || s.hasError != tt.isErr || s.hasMethod != tt.isMethod {
			t.Errorf("%s: got id %q result %v error %v method %v", tt.in, got, s.hasResult, s.hasError, s.hasMethod)
		}
	}
}

func TestTextPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct{ head, want string }{
		{`{"result":{"content":[{"type":"text","text":"hello\nworld \u00e9 \"q\"`, "hello\nworld é \"q\""},
		{`{"result":{"content":[{"type":"text","text": "done"}]}}`, "done"},
		{`{"result":{"content":[{"type":"text","text":"cut \u00`, "cut "},
		{`{"result":{"content":[{"type":"text","text":"caf` + "\xc3", "caf"},
		{`{"result":{"content":[{"type":"image","data":"AAAA`, ""},
	}
	for _, tt := range tests {
		if got := textPrefix([]byte(tt.head)); got != tt.want {
			t.Errorf("textPrefix(%q) = %q, want %q", tt.head, got, tt.want)
		}
	}
}

// TestFrameCapStream drives the cap with crafted server output.
func TestFrameCapStream(t *testing.T) {
	t.Parallel()
	calls := newCallTracker()
	calls.note([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"))
	calls.note([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}` + "\n"))
	big := strings.Repeat("x", 5000)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`,
		// TS-SDK order: the id comes last.
		`{"result":{"content":[{"type":"text","text":"` + big + `"}]},"jsonrpc":"2.0","id":1}`,
		`{"result":{"tools":[{"name":"` + big + `"}]},"jsonrpc":"2.0","id":2}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + big + `"}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"small"}]}}`,
	}, "\n") + "\n"
	fc := newFrameCap(strings.NewReader(in), 1000, 100, calls, slog.New(slog.DiscardHandler))
	out, err := io.ReadAll(fc)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d frames, want 4 (the oversized notification dropped):\n%s", len(lines), out)
	}
	var res struct {
		ID     int
		Result struct {
			Content []struct{ Text string }
			Meta    map[string]any `json:"_meta"`
		}
		Error struct{ Message string }
	}
	if err := json.Unmarshal([]byte(lines[1]), &res); err != nil {
		t.Fatal(err)
	}
	if res.ID != 1 || !strings.HasPrefix(res.Result.Content[0].Text, strings.Repeat("x", 50)) ||
		!strings.Contains(res.Result.Content[0].Text, "truncated by switchboard") || res.Result.Meta["truncated"] != true {
		t.Errorf("oversized tools/call result: got %s", lines[1])
	}
	res.Error.Message = ""
	if err := json.Unmarshal([]byte(lines[2]), &res); err != nil {
		t.Fatal(err)
	}
	if res.ID != 2 || !strings.Contains(res.Error.Message, "the response to tools/list was") {
		t.Errorf("oversized tools/list response: got %s", lines[2])
	}
	if !strings.Contains(lines[3], `"small"`) {
		t.Errorf("a normal frame after oversized ones: got %s", lines[3])
	}
}

// TestHugeResultBoundedMemory has a server process write a 16 MiB result
// past a 1 MiB message limit: the client gets the beginning, marked
// truncated, without ever holding the whole message. (Every byte costs
// CPU under the race detector: the sizes are the smallest that keep the
// message well above both the limit and the heap bound, and the server is
// the "huge" mode, which writes the text as it goes where an SDK server
// spent 1.4 s of CPU encoding it.)
func TestHugeResultBoundedMemory(t *testing.T) {
	const size, limit, keep = 16 << 20, 1 << 20, 256 << 10
	c, err := Dial(context.Background(), testserver.Server(t, "huge", "huge"), DialOptions{MaxMessageBytes: limit, MaxResultBytes: keep})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Sample the live heap while the call runs. Collecting often keeps
	// garbage out of the samples, so that they measure what is held.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond) // ReadMemStats stops the world: not too often
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"bytes": size}}, nil)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("CallTool(big): %v", err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.HasPrefix(text, strings.Repeat("x", keep)) || !strings.Contains(text, "truncated by switchboard") || res.Meta["truncated"] != true {
		t.Errorf("got %d bytes of text, meta %v; want the first %d KiB and a truncation marker", len(text), res.Meta, keep>>10)
	}
	if grew := int64(peak.Load()) - int64(base.HeapAlloc); grew > size/2 {
		t.Errorf("the live heap grew by %.1f MiB while reading a %d MiB result; want it bounded well below the message size (at most %d MiB)", float64(grew)/(1<<20), size>>20, size>>21)
	} else {
		t.Logf("live heap grew by at most %.1f MiB while reading a %d MiB result", float64(grew)/(1<<20), size>>20)
	}
	// The connection is still good.
	if _, err := c.Ping(context.Background()); err != nil {
		t.Errorf("ping after the huge result: %v", err)
	}
}

// TestHugeHTTPResultBoundedMemory does the same over streamable HTTP, whose
// JSON response bodies the SDK would otherwise read whole.
func TestHugeHTTPResultBoundedMemory(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "huge-http"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "big"}, func(_ context.Context, _ *mcp.CallToolRequest, a struct {
		Bytes int `json:"bytes"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("y", a.Bytes)}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{JSONResponse: true}))
	defer ts.Close()
	cfg := config.Server{Name: "huge-http", Transport: config.TransportHTTP, URL: ts.URL, TerminateOnClose: true, Enabled: true}
	// Four times the limit: what is checked is the cut, not the heap
	// (TestHugeResultBoundedMemory measures that), and every byte costs
	// CPU on both sides under the race detector.
	const size, limit, keep = 4 << 20, 1 << 20, 256 << 10
	c, err := Dial(context.Background(), cfg, DialOptions{MaxMessageBytes: limit, MaxResultBytes: keep})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"bytes": size}}, nil)
	if err != nil {
		t.Fatalf("CallTool(big): %v", err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.HasPrefix(text, strings.Repeat("y", keep)) || !strings.Contains(text, "truncated by switchboard") || res.Meta["truncated"] != true {
		t.Errorf("got %d bytes of text, meta %v; want the first %d KiB and a truncation marker", len(text), res.Meta, keep>>10)
	}
	if _, err := c.Ping(context.Background()); err != nil {
		t.Errorf("ping after the huge result: %v", err)
	}
}
