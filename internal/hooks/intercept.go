package hooks

import (
	"context"
	"sync"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

var _ toolcall.Interceptor = (*Engine)(nil)

// Before fires tool.before for a call and returns the merged decision: a
// denial as a *fault.Error of kind authorization naming the hook and its
// reason, a rewrite as the new arguments, or nil, nil to allow. The
// matching hooks run concurrently on goroutines the call owns (not on the
// pool: a call is already bounded by the execution engine's limits) and
// their decisions merge in priority order, whatever order they finish in.
// A hook that fails or times out blocks the call unless it says
// on_failure: continue. With no tool.before hook configured it returns at
// once.
func (e *Engine) Before(ctx context.Context, req *toolcall.Request) (map[string]any, error) {
	s := e.set.Load()
	if len(s.toolBefore) == 0 {
		return nil, nil
	}
	ev := e.newEvent(ctx, EventToolBefore, map[string]any{
		"server":     req.Server,
		"tool":       req.Tool,
		"arguments":  req.Arguments,
		"source":     string(req.Source),
		"identity":   req.Identity,
		"session":    req.SessionID,
		"request_id": req.ID,
	})
	matched := matching(s, ev)
	if len(matched) == 0 {
		return nil, nil
	}
	outcomes := make([]outcome, len(matched))
	runOne := func(i int) {
		h := matched[i]
		if o, refused := e.refuse(s, h, ev); refused {
			outcomes[i] = o
			return
		}
		outcomes[i] = e.runHook(ctx, s, h, ev)
	}
	if len(matched) == 1 {
		runOne(0)
	} else {
		var wg sync.WaitGroup
		for i := range matched {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runOne(i)
			}()
		}
		wg.Wait()
	}
	var rep Report
	merge(&rep, outcomes, req.Arguments)
	if rep.Blocked {
		err := denied(rep.BlockedBy, rep.Reason)
		e.audit.Record(audit.Event{Event: audit.CallDenied, Outcome: audit.Denied, Actor: audit.Actor{User: req.Identity, Via: string(req.Source), Session: req.SessionID}, Target: audit.Target{Server: req.Server, Tool: req.Tool}, Reason: err.Error(), CallID: req.ID, RequestID: req.RequestID})
		return nil, err
	}
	return rep.Arguments, nil
}

// After fires tool.after (or tool.failed, for an error or a tool error)
// for a finished call. The hooks run on the pool; After never waits for
// them. With no such hook configured it returns at once.
func (e *Engine) After(ctx context.Context, req *toolcall.Request, res *toolcall.Result, err error) {
	s := e.set.Load()
	name, hooks := EventToolAfter, s.toolAfter
	failed := err != nil || res != nil && res.CallToolResult != nil && res.IsError
	if failed {
		name, hooks = EventToolFailed, s.toolFailed
	}
	if len(hooks) == 0 {
		return
	}
	fields := map[string]any{
		"server":     req.Server,
		"tool":       req.Tool,
		"arguments":  req.Arguments,
		"source":     string(req.Source),
		"identity":   req.Identity,
		"session":    req.SessionID,
		"request_id": req.ID,
	}
	if res != nil && res.CallToolResult != nil {
		fields["status"] = string(res.Status)
		fields["duration_ms"] = res.Duration.Milliseconds()
		fields["is_error"] = res.IsError
		if failed {
			fields["error"] = stringify(toolOutput(res.CallToolResult))
			fields["error_kind"] = "tool_error"
		} else {
			fields["result"] = toolOutput(res.CallToolResult)
		}
	}
	if err != nil {
		fe := fault.As(err)
		fields["error"] = fe.Message
		fields["error_kind"] = string(fe.Kind)
		if _, ok := fields["status"]; !ok {
			fields["status"] = string(toolcall.StatusError)
		}
	}
	e.emitEvent(s, e.newEvent(ctx, name, fields))
}
