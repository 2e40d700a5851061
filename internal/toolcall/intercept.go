package toolcall

import "context"

// Interceptor sees every call the engine runs, whoever made it; the hooks
// engine implements it to fire tool.before, tool.after and tool.failed.
type Interceptor interface {
	// Before runs once the server and tool are known and the arguments are
	// decoded, before they are validated and before the call waits for a
	// slot. req is the caller's request with Arguments filled in; Before
	// must not modify it. A non-nil error denies the call: the caller gets
	// it as it is (use a *fault.Error, e.g. of kind authorization, with the
	// reason). Non-nil args replace the arguments (a rewrite); they are
	// validated against the tool's schema like the caller's own.
	Before(ctx context.Context, req *Request) (args map[string]any, err error)
	// After runs once for every call when it has finished: res is its
	// result, or err its failure. That includes calls refused before
	// Before ran (the stop switch, an unknown server or tool, a server
	// that is not connected, arguments that are not a JSON object, a
	// call a caller refused itself: see Engine.Refuse), so that every
	// failed call is seen. It runs on the caller's goroutine after the
	// call is recorded, so it must hand slow work off.
	After(ctx context.Context, req *Request, res *Result, err error)
}

// interceptorBox lets an atomic.Pointer hold an interface value.
type interceptorBox struct{ i Interceptor }

// SetInterceptor installs i for calls that start from now on (nil removes
// it). It exists apart from Options because the hooks engine runs its
// actions through this engine, so it is built after it.
func (e *Engine) SetInterceptor(i Interceptor) {
	if i == nil {
		e.icpt.Store(nil)
		return
	}
	e.icpt.Store(&interceptorBox{i})
}

// intercept runs the interceptor's Before for a call and applies a
// rewrite. It reports whether After must run when the call ends.
func (c *call) intercept(ctx context.Context) (bool, error) {
	box := c.e.icpt.Load()
	if box == nil {
		return false, nil
	}
	c.icpt = box.i
	req := c.req
	req.Arguments = c.args // read-only for Before, so not copied on the hot path
	req.RawArguments = nil
	args, err := box.i.Before(ctx, &req)
	if err != nil {
		return true, err
	}
	if args != nil {
		c.args = args
		c.req.Arguments = args
		c.req.RawArguments = nil
	}
	return true, nil
}

// afterIntercept runs the interceptor's After for a finished call: the
// one whose Before ran, or for a call refused before that, the one
// installed now.
func (c *call) afterIntercept(ctx context.Context, res *Result, err error) {
	icpt := c.icpt
	if icpt == nil && err != nil {
		if box := c.e.icpt.Load(); box != nil {
			icpt = box.i
		}
	}
	if icpt == nil {
		return
	}
	req := c.req
	if req.Arguments == nil {
		req.Arguments = c.args
		req.RawArguments = nil
	}
	icpt.After(ctx, &req, res, err)
}
