//lint:file-ignore SA1019 the test's server logs, deprecated only from protocol 2026-07-28; clients and servers use it today.

package daemon

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// This file checks that the log messages of a prefix: never view with
// session: per_client reach its client on the stream the server chose
// (issue 17): a go-sdk client talks to a go-sdk server directly and
// through the view, and what each reads — which HTTP stream each log
// message arrived on — is compared. A message the server sends on its
// standalone stream while a call of the client runs arrives on the
// client's standalone stream, as directly; one it sends on the call's
// stream arrives on the call's.

// logWaits are the log messages a tool of logServer waits for its
// client to have read before it returns.
type logWaits struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

// wait returns the channel closed when a client reads data.
func (w *logWaits) wait(data string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]chan struct{}{}
	}
	if w.m[data] == nil {
		w.m[data] = make(chan struct{})
	}
	return w.m[data]
}

// read notes that a client read data.
func (w *logWaits) read(data string) {
	ch := w.wait(data)
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// unleveledKey is the context key of a log message logServer sends
// whatever level its client set (none included), as a TypeScript
// server does: the go-sdk's ServerSession.Log sends none before a
// client sets a level.
type unleveledKey struct{}

// logServer is a go-sdk server whose tool "outside" logs its argument on
// the server's standalone stream (a log message with no request's
// context) and returns once its client has read it, so the message comes
// while the call runs; "inside" logs on the call's own stream, and
// "unleveled" too, but whatever level its client set (it sends the
// message in place of a progress notification, which the SDK does not
// filter).
func logServer(waits *logWaits) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "logs", Version: "1"}, nil)
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := ctx.Value(unleveledKey{}).(*mcp.LoggingMessageParams); ok && method == "notifications/progress" {
				ss, _ := req.GetSession().(*mcp.ServerSession)
				return next(ctx, "notifications/message", &mcp.ServerRequest[mcp.Params]{Session: ss, Params: p})
			}
			return next(ctx, method, req)
		}
	})
	type args struct {
		Key string `json:"key"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "outside"}, func(ctx context.Context, req *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		data := "outside " + a.Key
		read := waits.wait(data)
		// The SDK refuses a standalone message until the client's GET
		// stream is open: send it once it is.
		for req.Session.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Data: data}) != nil {
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
		select {
		case <-read:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "unleveled"}, func(ctx context.Context, req *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		msg := &mcp.LoggingMessageParams{Level: "info", Data: "unleveled " + a.Key}
		if err := req.Session.NotifyProgress(context.WithValue(ctx, unleveledKey{}, msg), &mcp.ProgressNotificationParams{}); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "inside"}, func(ctx context.Context, req *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "inside " + a.Key}); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil, nil
	})
	return s
}

// TestPrefixNeverPerClientLogsOnTheServersStream: a log message the
// server sends on its standalone stream while the client's call runs
// reaches the client on its standalone stream through the view, as
// directly (it went on the call's stream); one sent on the call's stream
// arrives there, on both call paths; and one the server sends before
// the client set a level reaches it too, as directly (the SDK dropped
// it).
func TestPrefixNeverPerClientLogsOnTheServersStream(t *testing.T) {
	t.Parallel()
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast_path %v", fast), func(t *testing.T) {
			t.Parallel()
			logsOnTheServersStream(t, fast)
		})
	}
}

func logsOnTheServersStream(t *testing.T, fast bool) {
	var waits logWaits
	tw := startTwinOf(t, logServer(&waits), func(cfg *config.Config, _ string) { cfg.Gateway.DisableFastPath = !fast })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func(name, url string) (*mcp.ClientSession, *wireRecorder) {
		spy := &wireRecorder{}
		c := mcp.NewClient(&mcp.Implementation{Name: "log-client", Version: "1"}, &mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
				waits.read(fmt.Sprint(req.Params.Data))
			},
		})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, HTTPClient: &http.Client{Transport: spy}}, nil)
		if err != nil {
			t.Fatalf("%s: connecting: %v", name, err)
		}
		t.Cleanup(func() { cs.Close() })
		// A client lists before it calls (through the view, the list
		// opens the client's own upstream session).
		waitFor(t, name+" listing the tools", func() bool {
			res, err := cs.ListTools(ctx, nil)
			return err == nil && len(res.Tools) == 3
		})
		waitFor(t, name+"'s standalone stream", spy.standaloneOpen)
		return cs, spy
	}
	direct, dspy := connect("directly", tw.url)
	through, tspy := connect("through the view", tw.r.url+"/mcp/tw")
	clients := []*mcp.ClientSession{direct, through}

	for _, tool := range []string{"unleveled", "outside", "inside"} {
		if tool == "outside" {
			for _, cs := range clients {
				if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
					t.Fatalf("logging/setLevel: %v", err)
				}
			}
		}
		for i, cs := range clients {
			key := fmt.Sprintf("%s-%d", tool, i)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"key": key}})
			if err != nil || res.IsError {
				t.Fatalf("calling %s (%d): %v %v", tool, i, err, res)
			}
		}
		d := dspy.logsWith(tool + " ")
		th := tspy.logsWith(tool + " ")
		for i := range th {
			th[i] = strings.Replace(th[i], tool+"-1", tool+"-0", 1)
		}
		if diff := cmp.Diff(d, th); diff != "" || len(d) != 1 {
			t.Errorf("%s: the streams the client read the server's log message on directly (-) and through the view (+):\n%s(directly: %q)", tool, diff, d)
		}
	}
}
