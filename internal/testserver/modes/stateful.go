package modes

//lint:file-ignore SA1019 roots and logging are deprecated only from protocol 2026-07-28; clients use them today.

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// statefulProtocol is the newest protocol version the "stateful" server
// speaks.
const statefulProtocol = "2025-11-25"

// serveStateful runs the "stateful" mode: a server whose answers depend
// on its session, as a browser automation server's or a REPL's do.
func serveStateful() {
	s, wait := NewStateful()
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Printf("stateful: %v", err)
	}
	wait()
}

// NewStateful builds the "stateful" mode's server (its state is one
// session's) and a function that waits for the goroutines it started.
func NewStateful() (*mcp.Server, func()) {
	var (
		mu     sync.Mutex
		count  int
		roots  string
		asked  = make(chan struct{}) // closed once the first answer is in
		once   sync.Once
		wg     sync.WaitGroup
		ssLock sync.Mutex
		sess   *mcp.ServerSession
	)
	askRoots := func(ss *mcp.ServerSession) {
		defer wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var uris []string
		if res, err := ss.ListRoots(ctx, nil); err != nil {
			uris = append(uris, "error: "+err.Error())
		} else {
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
		}
		mu.Lock()
		roots = strings.Join(uris, ",")
		mu.Unlock()
		once.Do(func() { close(asked) })
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver-stateful", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Logging: &mcp.LoggingCapabilities{},
			Resources: &mcp.ResourceCapabilities{Subscribe: true}},
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			ssLock.Lock()
			sess = req.Session
			ssLock.Unlock()
			// Asked off the reader: the answer comes on it.
			wg.Add(1)
			go askRoots(req.Session)
		},
		RootsListChangedHandler: func(_ context.Context, req *mcp.RootsListChangedRequest) {
			wg.Add(1)
			go askRoots(req.Session)
		},
	})
	// It speaks 2025-11-25 at most, as most servers do today: on
	// 2026-07-28 a server cannot ask its client outside a call's result.
	SpeaksAtMost(s, statefulProtocol)
	mcp.AddTool(s, &mcp.Tool{Name: "count", Description: "Counts its calls in this session."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			count++
			n := count
			mu.Unlock()
			return text(fmt.Sprintf("count=%d pid=%d", n, os.Getpid())), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "Returns the roots its client gave."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			select {
			case <-asked:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			mu.Lock()
			defer mu.Unlock()
			return text(roots), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "background", Description: "Logs \"background\" shortly after it returns, outside any call."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			ssLock.Lock()
			ss := sess
			ssLock.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(50 * time.Millisecond) // the server's own behaviour: after its answer
				_ = ss.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Data: fmt.Sprintf("background pid=%d", os.Getpid())})
			}()
			return text("scheduled"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "caps", Description: "Returns the capabilities its client declared, as JSON."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			// As the client sent them: the SDK's ClientCapabilities writes
			// "roots" whether or not the client declared it.
			caps, out := req.Session.InitializeParams().Capabilities, map[string]any{}
			if caps.RootsV2 != nil {
				out["roots"] = caps.RootsV2
			}
			if caps.Sampling != nil {
				out["sampling"] = caps.Sampling
			}
			if caps.Elicitation != nil {
				out["elicitation"] = caps.Elicitation
			}
			if caps.Experimental != nil {
				out["experimental"] = caps.Experimental
			}
			if caps.Extensions != nil {
				out["extensions"] = caps.Extensions
			}
			b, err := json.Marshal(out)
			if err != nil {
				return nil, nil, err
			}
			return text(string(b)), nil, nil
		})
	s.AddResource(&mcp.Resource{URI: "state://count", Name: "count", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			mu.Lock()
			defer mu.Unlock()
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: fmt.Sprintf("count=%d pid=%d", count, os.Getpid())}}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "touch", Description: "Tells this session's subscribers that state://count was updated."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if err := s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "state://count"}); err != nil {
				return nil, nil, err
			}
			return text("touched"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Adds the tool grown to this session's server (which tells its client tools/list_changed)."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "grown", Description: "Added by grow."},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return text(fmt.Sprintf("grown pid=%d", os.Getpid())), nil, nil
				})
			return text("grew"), nil, nil
		})
	return s, wg.Wait
}

// SpeaksAtMost has s negotiate protocol version at most: it answers a
// client that offers a newer one with version, and does not know
// server/discover (2026-07-28), from which its client falls back to
// initialize.
func SpeaksAtMost(s *mcp.Server, version string) {
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch p, _ := req.GetParams().(*mcp.InitializeParams); {
			case method == "server/discover":
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: server/discover"}
			case method == "initialize" && p != nil && p.ProtocolVersion > version:
				p.ProtocolVersion = version
			}
			return next(ctx, method, req)
		}
	})
}
