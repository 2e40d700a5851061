package agent

//lint:file-ignore SA1019 sampling and elicitation are deprecated only from protocol 2026-07-28; servers use them today.

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/config"
)

// policyAnswerer answers what a server asks during one of the agent's tool
// calls, with no person to ask: a question is declined unless
// agent.elicitation is accept-defaults and every required field has a
// default; a request for a completion is declined (the agent does not
// lend its model to the servers it calls).
type policyAnswerer struct {
	elicitation string
	logger      *slog.Logger
}

var _ answer.Answerer = (*policyAnswerer)(nil)

// Log attribute keys of the answerer.
const (
	logKeyPolicy = "policy"
	logKeyField  = "field"
)

// Elicit implements answer.Answerer.
func (p *policyAnswerer) Elicit(_ context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if p.elicitation != config.AgentElicitDefaults || req.Mode == "url" {
		p.logger.Info("declined a server's question during an agent call", logKeyServer, server, logKeyPolicy, p.elicitation)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	content, missing, err := answer.Defaults(req.RequestedSchema)
	if err != nil {
		return nil, fmt.Errorf("server %s asked the agent a question it cannot read: %w", server, err)
	}
	if missing != "" {
		p.logger.Info("declined a server's question during an agent call: a required field has no default", logKeyServer, server, logKeyField, missing)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// CreateMessage implements answer.Answerer.
func (p *policyAnswerer) CreateMessage(_ context.Context, server string, _ *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return nil, fmt.Errorf("server %s asked for a completion during an agent call; the agent declines sampling requests", server)
}
