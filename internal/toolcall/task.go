package toolcall

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// A call made as a task (MCP 2025-11-25's task-augmented tools/call,
// Request.Task) takes the engine's path like any — the stop switch,
// limits, the interceptor's Before, validation, the timeout for the
// request that creates the task — but the server answers at once with
// the task it created, not the tool's result. That creation is recorded
// with the status StatusTask; the tool's result, fetched later with
// tasks/result, is recorded by TaskResult, truncated and redacted as any
// call's result is.

// taskParams is a tools/call's params with the task augmentation, which
// the SDK's CallToolParams does not have.
type taskParams struct {
	*mcp.CallToolParams
	Task json.RawMessage `json:"task"`
}

// checkTask checks Request.Task: a JSON object.
func checkTask(task json.RawMessage) error {
	t := bytes.TrimSpace(task)
	if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return fault.New(fault.Validation, "the task parameters must be a JSON object, such as {\"ttl\": 60000} (its lifetime in milliseconds), not %s", truncateText(string(t), 40)).
			WithDetail("field", "task")
	}
	return nil
}

// truncateText shortens s to n bytes for a message.
func truncateText(s string, n int) string {
	if s == "" {
		return "nothing"
	}
	if len(s) <= n {
		return s
	}
	return cutUTF8(s, n) + "…"
}

// attemptTask sends the call as a task. A server that ran the call at
// once instead (it may ignore the augmentation) gives its result, which
// is returned as such.
func (c *call) attemptTask(ctx context.Context, cl *upstream.Client, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	ctx, span := telemetry.StartClient(ctx, c.req.Server, "tools/call", params.Name, "")
	raw, err := cl.Request(ctx, "tools/call", taskParams{CallToolParams: params, Task: c.req.Task})
	if err != nil {
		span.EndTool(nil, err)
		return nil, err
	}
	var created struct {
		Task json.RawMessage `json:"task"`
	}
	if err := json.Unmarshal(raw, &created); err != nil {
		err = fault.Wrap(fault.Protocol, err, "decoding what %s answered to %s as a task", c.req.Server, c.req.Tool).WithDetail("server", c.req.Server)
		span.EndTool(nil, err)
		return nil, err
	}
	if t := bytes.TrimSpace(created.Task); len(t) > 0 && string(t) != "null" {
		c.mu.Lock()
		c.task = t
		c.mu.Unlock()
		res := &mcp.CallToolResult{Content: []mcp.Content{}}
		span.EndTool(res, nil)
		return res, nil
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		err = fault.Wrap(fault.Protocol, err, "decoding the result of %s/%s", c.req.Server, c.req.Tool).WithDetail("server", c.req.Server)
		span.EndTool(nil, err)
		return nil, err
	}
	span.EndTool(&res, nil)
	return &res, nil
}

// TaskResult records the outcome of a call made as a task once its
// result has been fetched: req is the request that created the task and
// started when it was created; res is the tool's result (from
// tasks/result), or err why there is none (the task failed, was
// cancelled, or could not be fetched). It returns the result as every
// caller sees one — truncated to the size limit, redacted when the
// server is configured so — or nil with err. The interceptor's After
// sees it, as for any call.
func (e *Engine) TaskResult(ctx context.Context, req Request, started time.Time, res *mcp.CallToolResult, err error) *Result {
	req.ID = newID()
	req.Task = nil
	if req.Source == "" {
		req.Source = SourceCLI
	}
	c := &call{e: e, set: e.set.Load(), req: req, start: started, status: StatusExecuting}
	c.srv = c.set.servers[req.Server]
	_ = c.prepareArgs()
	var out *Result
	if err == nil && res == nil {
		err = fault.New(fault.Protocol, "%s/%s: the task's result is empty", req.Server, req.Tool)
	}
	if err == nil {
		out = c.result(res, 0)
	}
	c.finish(ctx, out, err)
	if box := e.icpt.Load(); box != nil {
		c.icpt = box.i
	}
	c.afterIntercept(ctx, out, err)
	return out
}

// TaskError is the error recorded for a task that ended without a result
// to fetch: status is its final status (failed, cancelled), message the
// server's statusMessage.
func TaskError(server, tool, status, message string) error {
	kind := fault.Backend
	if status == "cancelled" {
		kind = fault.Cancelled
	}
	msg := fmt.Sprintf("the task of %s/%s ended %s", server, tool, status)
	if message != "" {
		msg += ": " + message
	}
	return fault.New(kind, "%s", msg).WithDetail("server", server).WithDetail("tool", tool)
}
