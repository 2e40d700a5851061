package upstream

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The page methods list one page at a time, as a client that follows a
// server's pagination does: the page cursor names ("" for the first), and
// the server's cursor of the next page ("" after the last). The gateway
// passes a client's own session's pages on as the server gave them.

// ListToolsPage returns the page of tools cursor names.
func (c *Client) ListToolsPage(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
	res, err := c.session.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
	if err != nil {
		return nil, "", c.classify(ctx, err, "listing tools of "+c.server.Name)
	}
	return res.Tools, res.NextCursor, nil
}

// ListPromptsPage returns the page of prompts cursor names.
func (c *Client) ListPromptsPage(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
	res, err := c.session.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
	if err != nil {
		return nil, "", c.classify(ctx, err, "listing prompts of "+c.server.Name)
	}
	return res.Prompts, res.NextCursor, nil
}

// ListResourcesPage returns the page of resources cursor names.
func (c *Client) ListResourcesPage(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
	res, err := c.session.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
	if err != nil {
		return nil, "", c.classify(ctx, err, "listing resources of "+c.server.Name)
	}
	return res.Resources, res.NextCursor, nil
}

// ListResourceTemplatesPage returns the page of resource templates cursor
// names.
func (c *Client) ListResourceTemplatesPage(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
	res, err := c.session.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
	if err != nil {
		return nil, "", c.classify(ctx, err, "listing resource templates of "+c.server.Name)
	}
	return res.ResourceTemplates, res.NextCursor, nil
}
