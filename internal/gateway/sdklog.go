package gateway

import (
	"context"
	"log/slog"
	"strings"
)

// sdkLogger returns the logger the MCP SDK's servers log through: l, with
// the SDK's warning about a notification no stream could take lowered to
// debug. A client that opens no standalone event stream (valid: the
// stream is optional) cannot be sent list changes outside a request, and
// the SDK warns once per such session at every change, which flooded the
// log after each reload.
func sdkLogger(l *slog.Logger) *slog.Logger {
	return slog.New(&quietUndelivered{Handler: l.Handler()})
}

// quietUndelivered lowers "rejected by transport" warnings to debug.
type quietUndelivered struct{ slog.Handler }

// undeliveredMarker is in the SDK's message for a notification the
// session's transport could not deliver (jsonrpc2.ErrRejected).
const undeliveredMarker = "rejected by transport"

func (h *quietUndelivered) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn && strings.Contains(r.Message, undeliveredMarker) {
		if !h.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		q := slog.NewRecord(r.Time, slog.LevelDebug, r.Message, r.PC)
		r.Attrs(func(a slog.Attr) bool { q.AddAttrs(a); return true })
		r = q
	}
	return h.Handler.Handle(ctx, r)
}

func (h *quietUndelivered) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &quietUndelivered{Handler: h.Handler.WithAttrs(attrs)}
}

func (h *quietUndelivered) WithGroup(name string) slog.Handler {
	return &quietUndelivered{Handler: h.Handler.WithGroup(name)}
}
