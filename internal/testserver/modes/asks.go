package modes

//lint:file-ignore SA1019 elicitation and sampling are deprecated only from protocol 2026-07-28; servers use them today.

import (
	"context"
	"encoding/json"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AskSchema is the form the "asks" server's "ask" tool requests: every
// kind of field an elicitation form may hold.
const AskSchema = `{
  "type": "object",
  "properties": {
    "login":    {"type": "string", "title": "Login", "description": "Lower-case letters only", "pattern": "^[a-z]+$", "minLength": 3},
    "team":     {"type": "string", "title": "Team", "oneOf": [{"const": "red", "title": "Red team"}, {"const": "blue", "title": "Blue team"}], "default": "blue"},
    "seats":    {"type": "integer", "title": "Seats", "minimum": 1, "maximum": 5, "default": 2},
    "ratio":    {"type": "number", "minimum": 0, "maximum": 1},
    "notify":   {"type": "boolean", "title": "Notify me", "default": true},
    "start":    {"type": "string", "format": "date", "description": "First day"},
    "tags":     {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "minItems": 1, "default": ["a"]}
  },
  "required": ["login", "seats"]
}`

// serveAsks serves NewAsks's server on stdio, speaking only the protocol
// version EnvProtocol names when it names one.
func serveAsks() {
	s := NewAsks(os.Getenv(EnvProtocol))
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

// NewAsks returns the "asks" mode's server, whose tools ask their client
// during a call (multi round-trip): "ask" elicits AskSchema and returns
// the answer as JSON; "confirm" asks a form whose fields all have
// defaults; "open" asks in URL mode; "sample" asks for a completion and
// returns its text. A protocol version ("2025-11-25", say) makes it speak
// that version alone, as a server of an older SDK speaks its newest; ""
// leaves it every version its SDK has.
func NewAsks(protocol string) *mcp.Server {
	var opts *mcp.ServerOptions
	if protocol != "" {
		opts = &mcp.ServerOptions{SupportedProtocolVersions: []string{protocol}}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "asks", Version: "1"}, opts)
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the user a form and returns the answer."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			var schema map[string]any
			if err := json.Unmarshal([]byte(AskSchema), &schema); err != nil {
				return nil, nil, err
			}
			return ask(req, &mcp.ElicitParams{Message: "Sign up for the trip", RequestedSchema: schema})
		})
	mcp.AddTool(s, &mcp.Tool{Name: "confirm", Description: "Asks the user to confirm; every field has a default."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return ask(req, &mcp.ElicitParams{Message: "Go ahead?", RequestedSchema: map[string]any{
				"type":       "object",
				"properties": map[string]any{"ok": map[string]any{"type": "boolean", "default": true}},
				"required":   []string{"ok"},
			}})
		})
	mcp.AddTool(s, &mcp.Tool{Name: "open", Description: "Asks the user to open a URL."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return ask(req, &mcp.ElicitParams{Mode: "url", Message: "Connect your account", URL: "https://example.com/connect?x=1", ElicitationID: "e-1"})
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "Asks the client's model for a haiku."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return ask(req, &mcp.CreateMessageParams{
				SystemPrompt:     "You write haiku.",
				MaxTokens:        64,
				ModelPreferences: &mcp.ModelPreferences{Hints: []*mcp.ModelHint{{Name: "claude-haiku"}}, SpeedPriority: 0.8},
				Messages:         []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Write a haiku about switchboards."}}},
			})
		})
	return s
}

// ask asks the client for one input the way the protocol the client
// speaks allows (the SDK sends it as a request to a client of an older
// protocol): the first call returns the input request, the call retried
// with the client's answer returns that answer as JSON.
func ask(req *mcp.CallToolRequest, in mcp.InputRequest) (*mcp.CallToolResult, any, error) {
	if r, ok := req.Params.InputResponses["q"]; ok {
		b, err := json.Marshal(r)
		if err != nil {
			return nil, nil, err
		}
		return text(string(b)), nil, nil
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": in}}, nil, nil
}
