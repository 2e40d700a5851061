package modes

//lint:file-ignore SA1019 elicitation is deprecated only from protocol 2026-07-28; servers use it today.

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// URLElicitationID is the elicitation id the "urlelicit" server requires.
const URLElicitationID = "connect-1"

// serveURLElicit serves, on stdio, a tool "connect" that answers every
// call with error -32042 (URL elicitation required: "Connect your
// account", at http://127.0.0.1:<port>/connect/connect-1) until that URL
// has been fetched; fetching it makes the server send
// notifications/elicitation/complete to the session whose call it
// refused. Afterwards "connect" answers "connected after N calls". Its
// tool "caps" returns the capabilities its client declared, as JSON.
func serveURLElicit() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	target := fmt.Sprintf("http://%s/connect/%s", ln.Addr(), URLElicitationID)
	var (
		mu      sync.Mutex
		visited bool
		calls   int
		asked   *mcp.ServerSession // the session whose call was refused
	)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /connect/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != URLElicitationID {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		visited = true
		ss := asked
		mu.Unlock()
		if ss != nil {
			if err := ss.NotifyElicitationComplete(r.Context(), &mcp.ElicitationCompleteParams{ElicitationID: URLElicitationID}); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		fmt.Fprintln(w, "Connected. You can close this page.")
	})
	go func() { _ = http.Serve(ln, mux) }()

	s := mcp.NewServer(&mcp.Implementation{Name: "urlelicit", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "connect", Description: "Needs the account connected first.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if visited {
				return text(fmt.Sprintf("connected after %d calls", calls)), nil
			}
			asked = req.Session
			return nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{
				Mode: "url", Message: "Connect your account", URL: target, ElicitationID: URLElicitationID,
			}})
		})
	s.AddTool(&mcp.Tool{Name: "caps", Description: "Returns the capabilities its client declared.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, err := json.Marshal(req.Session.InitializeParams().Capabilities)
			if err != nil {
				return nil, err
			}
			return text(string(b)), nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
