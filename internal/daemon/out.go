package daemon

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"
)

// lineWriter prints a line per key only when it differs from the last
// one printed for that key.
type lineWriter struct {
	mu   sync.Mutex
	w    io.Writer
	last map[string]string
}

func newLineWriter(w io.Writer) *lineWriter {
	if w == nil {
		w = io.Discard
	}
	return &lineWriter{w: w, last: map[string]string{}}
}

// printOnce prints "subject: line" (the subject is key up to a NUL).
func (l *lineWriter) printOnce(key, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last[key] == line {
		return
	}
	l.last[key] = line
	subject, _, _ := strings.Cut(key, "\x00")
	fmt.Fprintf(l.w, "%s: %s\n", subject, line)
}

// printf prints a line as it is.
func (l *lineWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}

// firstLine returns s's first line, at most n runes.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// slogErrorLog routes net/http's own error log to the structured logger.
func slogErrorLog(l *slog.Logger) *log.Logger {
	return slog.NewLogLogger(l.Handler(), slog.LevelWarn)
}

// shownOnStdout are the upstream pool's log messages whose news serve
// already prints, with its cause, as the server's state line.
var shownOnStdout = map[string]bool{"upstream failure": true, "auto-disabled": true}

// shownHandler lowers the upstream pool's records that serve already
// prints as a state line (shownOnStdout) to Info, so that a failed
// attempt is one line at the default log level (warn), not two; at
// --log-level info or debug the log has them too.
type shownHandler struct{ slog.Handler }

// Handle passes r on, at Info if its news is on the state line.
func (h shownHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level > slog.LevelInfo && shownOnStdout[r.Message] {
		if !h.Handler.Enabled(ctx, slog.LevelInfo) {
			return nil
		}
		r.Level = slog.LevelInfo
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs keeps the lowering for the handler with attrs.
func (h shownHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return shownHandler{h.Handler.WithAttrs(attrs)}
}

// WithGroup keeps the lowering for the handler in the group.
func (h shownHandler) WithGroup(name string) slog.Handler {
	return shownHandler{h.Handler.WithGroup(name)}
}
