package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Report is the outcome of one event: every run, and the merged decision.
type Report struct {
	EventID string `json:"event_id"`
	Event   string `json:"event"`
	ChainID string `json:"chain_id"`
	Depth   int    `json:"depth"`
	// Blocked is true when a hook denied the event (or failed with
	// on_failure: block); Reason and BlockedBy say why and which.
	Blocked   bool   `json:"blocked"`
	Reason    string `json:"reason,omitempty"`
	BlockedBy string `json:"blocked_by,omitempty"`
	// Arguments are the rewritten arguments when hooks rewrote them (the
	// tool.before decision); nil otherwise.
	Arguments map[string]any `json:"arguments,omitempty"`
	// Failed is true when a run failed, timed out or was rejected.
	Failed bool  `json:"failed"`
	Runs   []Run `json:"runs"`
	// NotTrusted names the hooks that match the event but did not run
	// because their file is not trusted (or changed since); nil when
	// none.
	NotTrusted *NotTrusted `json:"not_trusted,omitempty"`
}

// NotTrusted says which hooks an event would have run, had their file
// been trusted.
type NotTrusted struct {
	// File is the configuration file; State is untrusted or changed.
	File  string     `json:"file"`
	State TrustState `json:"state"`
	Hooks []string   `json:"hooks"`
	// Fix is the command that trusts the file, once reviewed.
	Fix string `json:"fix"`
}

// notTrusted returns which hooks of set's untrusted file would match ev,
// or nil.
func notTrusted(set *hookSet, ev *event) *NotTrusted {
	if set.untrustedFile == "" {
		return nil
	}
	var names []string
	for _, h := range set.hooks {
		if !h.untrusted || !h.cfg.Enabled {
			continue
		}
		if ok, _ := path.Match(h.cfg.On, ev.name); ok && h.matches(ev.ctx) {
			names = append(names, h.cfg.Name)
		}
	}
	if names == nil {
		return nil
	}
	return &NotTrusted{File: set.untrustedFile, State: set.trustState, Hooks: names, Fix: trustCommand(set.untrustedFile)}
}

// Run is one action's run (or a hook's, when it did not reach its
// actions).
type Run struct {
	Hook     string        `json:"hook"`
	Action   string        `json:"action,omitempty"`
	Status   Status        `json:"status"`
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// Output is what the action returned: a tool's structured content or
	// text, a command's stdout (JSON when it parses), an HTTP body, a
	// commit sha, an issue number.
	Output any `json:"output,omitempty"`
	// Params are the resolved parameters (dry run).
	Params map[string]any `json:"params,omitempty"`
	// CallID is the id of the tool call an mcp action made, as the call
	// history records it (history show ID).
	CallID string `json:"call_id,omitempty"`
}

// decisionKind orders decisions: deny beats rewrite beats allow.
type decisionKind int

const (
	allow decisionKind = iota
	rewrite
	deny
)

// outcome is one hook's result for one event.
type outcome struct {
	h      *hook
	runs   []Run
	kind   decisionKind
	reason string
	args   map[string]any // rewrite: keys to set (nil value: remove)
	failed bool
}

// describe names the outcome for a trace: failed, deny, rewrite or allow.
func (o outcome) describe() string {
	switch {
	case o.failed:
		return "failed"
	case o.kind == deny:
		return "deny"
	case o.kind == rewrite:
		return "rewrite"
	}
	return "allow"
}

// job is one hook to run for one event on the pool.
type job struct {
	ev  *event
	h   *hook
	set *hookSet
	col *collector // nil when nobody waits
	idx int
}

// collector gathers the outcomes of an event's hooks for a caller who
// waits.
type collector struct {
	mu       sync.Mutex
	outcomes []outcome
	left     int
	done     chan struct{} // closed when every outcome is in
}

func newCollector(n int) *collector {
	return &collector{outcomes: make([]outcome, n), left: n, done: make(chan struct{})}
}

// put stores outcome i; the last one closes done.
func (c *collector) put(i int, o outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outcomes[i] = o
	c.left--
	if c.left == 0 {
		close(c.done)
	}
}

// Fire dispatches an event and waits for every matching hook to finish
// (or ctx to end), returning the merged report. Fields override the
// standard context. With no Run going, the hooks run on the caller's
// goroutine.
func (e *Engine) Fire(ctx context.Context, name string, fields map[string]any) (Report, error) {
	if err := checkName(name); err != nil {
		return Report{}, err
	}
	set := e.set.Load()
	ev := e.newEvent(ctx, name, fields)
	matched := matching(set, ev)
	rep := Report{EventID: ev.id, Event: name, ChainID: ev.chain.id, Depth: ev.chain.depth, Runs: []Run{},
		NotTrusted: notTrusted(set, ev)}
	if len(matched) == 0 {
		return rep, nil
	}
	col := newCollector(len(matched))
	inline := !e.running.Load()
	for i, h := range matched {
		if o, refused := e.refuse(set, h, ev); refused {
			col.put(i, o)
			continue
		}
		if inline {
			col.put(i, e.runHook(ctx, set, h, ev))
			continue
		}
		if !e.enqueue(&job{ev: ev, h: h, set: set, col: col, idx: i}) {
			col.put(i, e.rejectQueueFull(set, h, ev))
		}
	}
	select {
	case <-col.done:
	case <-ctx.Done():
		return rep, fault.Wrap(fault.Cancelled, ctx.Err(), "waiting for the hooks of %s", name)
	}
	merge(&rep, col.outcomes, nil)
	return rep, nil
}

// Emit dispatches an event without waiting: matching hooks are queued for
// the pool (a full queue rejects them, recorded). It returns the event's
// id. ctx carries the chain when a hook's action emits.
func (e *Engine) Emit(ctx context.Context, name string, fields map[string]any) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	set := e.set.Load()
	if len(set.lookup(name)) == 0 {
		return "", nil
	}
	ev := e.newEvent(ctx, name, fields)
	e.emitEvent(set, ev)
	return ev.id, nil
}

// emitEvent queues the matching hooks of ev.
func (e *Engine) emitEvent(set *hookSet, ev *event) {
	for _, h := range matching(set, ev) {
		if _, refused := e.refuse(set, h, ev); refused {
			continue
		}
		if !e.enqueue(&job{ev: ev, h: h, set: set}) {
			e.rejectQueueFull(set, h, ev)
		}
	}
}

// DryRun reports, for every hook that an event would run, the resolved
// parameters of each action, without running anything.
func (e *Engine) DryRun(ctx context.Context, name string, fields map[string]any) (Report, error) {
	if err := checkName(name); err != nil {
		return Report{}, err
	}
	set := e.set.Load()
	ev := e.newEvent(ctx, name, fields)
	rep := Report{EventID: ev.id, Event: name, ChainID: ev.chain.id, Depth: ev.chain.depth, Runs: []Run{},
		NotTrusted: notTrusted(set, ev)}
	for _, h := range matching(set, ev) {
		if o, refused := e.refuseCheck(set, h, ev); refused {
			rep.Runs = append(rep.Runs, o.runs...)
			rep.Failed = true
			continue
		}
		if h.problem != "" {
			rep.Runs = append(rep.Runs, Run{Hook: h.cfg.Name, Status: StatusFailure, Error: "invalid hook: " + h.problem})
			rep.Failed = true
			continue
		}
		for _, a := range h.actions {
			r := Run{Hook: h.cfg.Name, Action: a.label, Status: StatusPlanned}
			p, err := e.resolve(set, a, ev)
			if err == nil {
				err = e.checkSchema(a)
			}
			if err != nil {
				r.Status, r.Error = StatusFailure, e.redactor().String(err.Error())
				rep.Failed = true
			}
			// What would be sent, without the secrets in it (a URL's
			// ?token=, an Authorization header, a --password= argument).
			if params, ok := e.redactor().Value(p.display()).(map[string]any); ok {
				r.Params = params
			}
			rep.Runs = append(rep.Runs, r)
		}
	}
	return rep, nil
}

// matching returns the hooks whose on: and conditions match ev.
func matching(set *hookSet, ev *event) []*hook {
	var out []*hook
	for _, h := range set.lookup(ev.name) {
		if h.matches(ev.ctx) {
			out = append(out, h)
		}
	}
	return out
}

// refuse checks the depth limit and cycles, recording a refusal.
func (e *Engine) refuse(set *hookSet, h *hook, ev *event) (outcome, bool) {
	o, refused := e.refuseCheck(set, h, ev)
	if refused {
		e.record(set, ev, o.runs[0], e.now())
		e.logger.Warn("hook refused", logKeyEvent, ev.name, logKeyHook, h.cfg.Name, logKeyError, o.runs[0].Error)
	}
	return o, refused
}

// refuseCheck is refuse without recording.
func (e *Engine) refuseCheck(set *hookSet, h *hook, ev *event) (outcome, bool) {
	var msg string
	if ev.chain.depth > set.settings.MaxDepth {
		msg = fmt.Sprintf("chain depth limit %d reached", set.settings.MaxDepth)
		if len(ev.chain.steps) > 0 {
			msg += " after " + ev.chain.steps[0] + " → … → " + ev.chain.steps[len(ev.chain.steps)-1]
		}
	} else if loop, ok := ev.chain.cycle(ev.name, h.cfg.Name); ok {
		msg = "cycle: " + loop
	} else {
		return outcome{}, false
	}
	return outcome{h: h, failed: true, runs: []Run{{Hook: h.cfg.Name, Status: StatusRejected, Error: msg}}}, true
}

// enqueue offers a job to the pool without waiting.
func (e *Engine) enqueue(j *job) bool {
	e.pending.Add(1)
	select {
	case e.queue <- j:
		return true
	default:
		e.jobDone()
		return false
	}
}

// jobDone marks a queued job finished (run or cancelled).
func (e *Engine) jobDone() {
	if e.pending.Add(-1) == 0 {
		e.idleMu.Lock()
		close(e.idleCh)
		e.idleCh = make(chan struct{})
		e.idleMu.Unlock()
	}
}

// Idle waits until no queued hook is waiting or running (hooks that
// events fired while it waits included), or ctx ends. A short-lived
// command calls it before it stops the engine, so that the tool.after
// hooks of its own calls run rather than being cancelled.
func (e *Engine) Idle(ctx context.Context) error {
	for {
		e.idleMu.Lock()
		ch := e.idleCh
		e.idleMu.Unlock()
		if e.pending.Load() == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// rejectQueueFull records a hook the queue had no room for.
func (e *Engine) rejectQueueFull(set *hookSet, h *hook, ev *event) outcome {
	r := Run{Hook: h.cfg.Name, Status: StatusRejected, Error: fmt.Sprintf("the hook queue is full (%d waiting); raise hook_settings.queue_size or max_concurrent", cap(e.queue))}
	e.record(set, ev, r, e.now())
	e.logger.Warn("hook rejected", logKeyEvent, ev.name, logKeyHook, h.cfg.Name, logKeyError, r.Error)
	o := outcome{h: h, failed: true, runs: []Run{r}}
	if e.onFailure(h, ev) == config.OnFailureBlock {
		o.kind, o.reason = deny, "hook "+h.cfg.Name+" could not run: "+r.Error
	}
	return o
}

// runJob runs a queued job and hands its outcome to whoever waits.
func (e *Engine) runJob(ctx context.Context, j *job) {
	defer e.jobDone()
	o := e.runHook(ctx, j.set, j.h, j.ev)
	if j.col != nil {
		j.col.put(j.idx, o)
	}
}

// cancelJob records a job that never ran.
func (e *Engine) cancelJob(j *job) {
	defer e.jobDone()
	r := Run{Hook: j.h.cfg.Name, Status: StatusCancelled, Error: "switchboard shut down before the hook ran"}
	e.record(j.set, j.ev, r, e.now())
	if j.col != nil {
		j.col.put(j.idx, outcome{h: j.h, failed: true, runs: []Run{r}})
	}
}

// onFailure is the hook's on_failure, or the event's default: block for
// tool.before, continue for everything else.
func (e *Engine) onFailure(h *hook, ev *event) string {
	if h.cfg.OnFailure != "" {
		return h.cfg.OnFailure
	}
	if ev.name == EventToolBefore {
		return config.OnFailureBlock
	}
	return config.OnFailureContinue
}

// runHook runs h's actions for ev in order. The first failure ends the
// hook, and so does a denial.
func (e *Engine) runHook(ctx context.Context, set *hookSet, h *hook, ev *event) (o outcome) {
	ctx, span := e.calls.Tracing().StartHook(ev.trace.Into(ctx), ev.name, h.cfg.Name)
	defer func() { span.EndHook(o.describe(), o.failed) }()
	o = outcome{h: h}
	fail := func(msg string) {
		o.failed = true
		if e.onFailure(h, ev) == config.OnFailureBlock && o.kind != deny {
			o.kind, o.reason, o.args = deny, "hook "+h.cfg.Name+" failed: "+msg, nil
		}
	}
	if h.problem != "" {
		r := Run{Hook: h.cfg.Name, Status: StatusFailure, Error: "invalid hook: " + h.problem}
		e.record(set, ev, r, e.now())
		o.runs = append(o.runs, r)
		fail(r.Error)
		return o
	}
	hctx := withChain(ctx, ev.chain.step(ev.name, h.cfg.Name))
	for _, a := range h.actions {
		start := e.now()
		res := e.runAction(hctx, set, h, a, ev)
		r := Run{Hook: h.cfg.Name, Action: a.label, Status: res.status, Output: res.output, Duration: e.now().Sub(start), CallID: res.callID}
		if res.err != nil {
			// Redacted here, so that the report, the log and the record
			// all show the same safe text (a URL's ?token=, a command's
			// --password=, a server's secret values).
			r.Error = e.redactor().String(res.err.Error())
		}
		e.record(set, ev, r, start)
		o.runs = append(o.runs, r)
		switch {
		case res.status == StatusBlocked:
			o.kind, o.reason, o.args = deny, res.reason, nil
			return o
		case res.status == StatusFailure || res.status == StatusTimeout:
			e.logger.Warn("hook action failed", logKeyEvent, ev.name, logKeyHook, h.cfg.Name, logKeyAction, a.label, logKeyStatus, string(res.status), logKeyError, r.Error)
			fail(r.Error)
			return o
		case res.args != nil:
			if o.args == nil {
				o.args = map[string]any{}
			}
			maps.Copy(o.args, res.args)
			o.kind = rewrite
		}
	}
	return o
}

// merge folds outcomes (in run order) into rep: deny beats rewrite beats
// allow; the first denial in order gives the reason; rewrites are applied
// over base in order, a later one winning for the same key, a null value
// removing the key.
func merge(rep *Report, outcomes []outcome, base map[string]any) {
	var rewritten map[string]any
	for _, o := range outcomes {
		rep.Runs = append(rep.Runs, o.runs...)
		if o.failed {
			rep.Failed = true
		}
		switch o.kind {
		case deny:
			if !rep.Blocked {
				rep.Blocked, rep.Reason, rep.BlockedBy = true, o.reason, o.h.cfg.Name
			}
		case rewrite:
			if rewritten == nil {
				rewritten = maps.Clone(base)
				if rewritten == nil {
					rewritten = map[string]any{}
				}
			}
			for k, v := range o.args {
				if v == nil {
					delete(rewritten, k)
				} else {
					rewritten[k] = v
				}
			}
		}
	}
	if !rep.Blocked {
		rep.Arguments = rewritten
	}
}

// record hands a run to the recorder.
func (e *Engine) record(set *hookSet, ev *event, r Run, start time.Time) {
	e.rec.add(store.HookRun{
		EventID:   ev.id,
		ChainID:   ev.chain.id,
		Depth:     ev.chain.depth,
		Event:     ev.name,
		Hook:      r.Hook,
		Action:    r.Action,
		Status:    string(r.Status),
		Error:     e.redactor().String(r.Error),
		Context:   e.recordedContext(ev, set.recordValues),
		StartedAt: start,
		Duration:  r.Duration,
		CallID:    r.CallID,
		Output:    e.recordedOutput(set, r.Output),
	})
}

// maxRecordedOutput bounds the output stored with a run; a longer one is
// stored as its text, cut.
const maxRecordedOutput = 16 << 10

// recordedOutput is what a run's record keeps of its action's output:
// nothing unless history.record_values (outputs carry values, as
// arguments do), else the output redacted, as JSON, cut at
// maxRecordedOutput.
func (e *Engine) recordedOutput(set *hookSet, out any) json.RawMessage {
	if !set.recordValues || out == nil {
		return nil
	}
	v := e.redactor().Value(out)
	b, err := json.Marshal(v)
	if err != nil || len(b) > maxRecordedOutput {
		b, _ = json.Marshal(clip(stringify(v), maxRecordedOutput))
	}
	return b
}

// errTimeout marks an action that ran out of time.
var errTimeout = errors.New("timed out")
