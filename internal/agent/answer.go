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
// lend its model to the servers it calls). The URL elicitations a server
// requires before it answers (-32042) go to the person at the terminal
// when there is one (urls), else are not completed.
type policyAnswerer struct {
	elicitation string
	urls        answer.URLCompleter
	logger      *slog.Logger
}

var (
	_ answer.Answerer     = (*policyAnswerer)(nil)
	_ answer.URLCompleter = (*policyAnswerer)(nil)
)

// CompleteURLs implements answer.URLCompleter: the person at the terminal
// completes them, when there is one; else they are not completed and the
// call fails (callTool tells the model which URLs to pass on).
func (p *policyAnswerer) CompleteURLs(ctx context.Context, server string, els []*mcp.ElicitParams) (bool, error) {
	if p.urls != nil {
		return p.urls.CompleteURLs(ctx, server, els)
	}
	p.logger.Info("a server requires URL elicitations during an agent call; no one is at a terminal to complete them", logKeyServer, server, logKeyCount, len(els))
	return false, nil
}

// Log attribute keys of the answerer.
const (
	logKeyPolicy = "policy"
	logKeyField  = "field"
	logKeyCount  = "count"
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
