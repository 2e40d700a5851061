package hooks

import (
	"context"
	"errors"
)

// The black-box tests (package hooks_test) read a run's output as the engine renders it into
// templates, wait for the engine's loop to run, look at the queue a burst fills, read an
// event's standard context, and measure dispatch without the worker: these hooks lend them
// the few internals that takes.

// Stringify renders a value as a template or a run's output shows it.
var Stringify = stringify

// Running reports whether Run's loop has started.
func (e *Engine) Running() bool { return e.running.Load() }

// QueueLen is how many hook jobs wait in the queue.
func (e *Engine) QueueLen() int { return len(e.queue) }

// StandardContext is the context an event named name with fields gets: the standard
// fields (user, branch, feature, timestamp...) and the event's own.
func (e *Engine) StandardContext(ctx context.Context, name string, fields map[string]any) map[string]any {
	return e.newEvent(ctx, name, fields).ctx
}

// DispatchInline dispatches one event as Emit does — standard context, matching, queueing,
// mapping each matched action's parameters and recording its run — but takes each job off
// the queue at once instead of a worker, and runs no action. It returns the mapped
// arguments of every action. BenchmarkDispatch measures this overhead alone.
func (e *Engine) DispatchInline(ctx context.Context, name string, fields map[string]any) ([]map[string]any, error) {
	set := e.set.Load()
	ev := e.newEvent(ctx, name, fields)
	var out []map[string]any
	for _, h := range matching(set, ev) {
		if !e.enqueue(&job{ev: ev, h: h, set: set}) {
			return out, errors.New("the hook queue is full")
		}
		<-e.queue // the worker's side
		for _, a := range h.actions {
			p, err := e.resolve(set, a, ev)
			if err != nil {
				return out, err
			}
			out = append(out, p.args)
			e.record(set, ev, Run{Hook: h.cfg.Name, Action: a.label, Status: StatusSuccess}, ev.at)
		}
	}
	return out, nil
}

// FlushRuns writes the runs recorded so far to the store.
func (e *Engine) FlushRuns(ctx context.Context) error { return e.rec.flush(ctx) }
