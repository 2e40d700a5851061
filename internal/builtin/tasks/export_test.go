package tasks

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// The black-box tests (package tasks_test) build the server with a retry backoff of a
// millisecond (the product's waits up to 2 s), check that backoff and each tool's
// validation message, and compare each tool's handler-side validation with its advertised
// schema: these lend them what that takes.

// NewServerWithBackoff is NewServer with backoff(attempt) as the wait before each retry.
func NewServerWithBackoff(s Settings, opts Options, backoff func(int) time.Duration) (*mcp.Server, error) {
	return newServer(s, opts, backoff)
}

// DefaultBackoff is the wait before retry attempt of a backend request.
var DefaultBackoff = defaultBackoff

// FailureMessages are the messages of each tool's validation errors.
var FailureMessages = failureMessages

// Validate checks args as the tool's handler does before it calls the backend; ok is false
// for a tool that is not one of the server's.
func Validate(tool string, args json.RawMessage) (fe *fault.Error, ok bool) {
	v, ok := validators[tool]
	if !ok {
		return nil, false
	}
	return v(args), true
}
