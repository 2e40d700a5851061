package control

import (
	"context"

	"github.com/switchboard-mcp/switchboard/internal/audit"
)

// This file records the control actions that change what runs — enable,
// disable, stop, resume — in the audit trail, whoever asks for them: the
// CLI over the socket or the console. A reload is recorded by the daemon,
// which also reloads on its own.

// Audited returns b recording its server enables and disables and the
// stop switch in a. The actor is the one the request's context carries
// (audit.WithActor; the socket's ConnContext and the console set it). A nil
// a returns b.
func Audited(b Backend, a *audit.Auditor) Backend {
	if a == nil {
		return b
	}
	return &audited{Backend: b, a: a}
}

type audited struct {
	Backend
	a *audit.Auditor
}

// record records one action's outcome.
func (b *audited) record(ctx context.Context, event string, target audit.Target, err error) {
	e := audit.Event{Event: event, Outcome: audit.OK, Actor: audit.ActorFrom(ctx, audit.Actor{Via: audit.ViaControl}), Target: target}
	if err != nil {
		e.Outcome, e.Reason = audit.Failed, err.Error()
	}
	b.a.Record(e)
}

// ServerAction implements Backend.
func (b *audited) ServerAction(ctx context.Context, action, name string) (ActionResult, error) {
	res, err := b.Backend.ServerAction(ctx, action, name)
	switch action {
	case "enable":
		b.record(ctx, audit.ServerEnabled, audit.Target{Server: name}, err)
	case "disable":
		b.record(ctx, audit.ServerDisabled, audit.Target{Server: name}, err)
	}
	return res, err
}

// Stop implements Backend.
func (b *audited) Stop(ctx context.Context) (int, error) {
	n, err := b.Backend.Stop(ctx)
	b.record(ctx, audit.Stopped, audit.Target{}, err)
	return n, err
}

// Resume implements Backend.
func (b *audited) Resume(ctx context.Context) (bool, error) {
	was, err := b.Backend.Resume(ctx)
	b.record(ctx, audit.Resumed, audit.Target{}, err)
	return was, err
}
