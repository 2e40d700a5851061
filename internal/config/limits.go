package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// This file reads the limits: and history: blocks, which bound and record
// the execution engine's tool calls.

// queueWaitTimeoutWord is how limits.queue_wait is written for
// QueueWaitCallTimeout.
const queueWaitTimeoutWord = "timeout"

// FormatQueueWait renders a limits.queue_wait value as it is written:
// "timeout" for QueueWaitCallTimeout, else the duration.
func FormatQueueWait(d time.Duration) string {
	if d == QueueWaitCallTimeout {
		return queueWaitTimeoutWord
	}
	return formatDuration(d)
}

// defaultLimits returns the built-in execution limits.
func defaultLimits() Limits {
	return Limits{
		MaxConcurrent:  DefaultMaxConcurrent,
		QueueWait:      QueueWaitCallTimeout,
		MaxQueue:       DefaultMaxQueue,
		SessionLimit:   DefaultSessionLimit,
		MaxOutputBytes: DefaultMaxOutputBytes,
	}
}

// defaultHistory returns the built-in history settings.
func defaultHistory() History {
	return History{Keep: DefaultHistoryKeep}
}

// decodeLimits reads the limits: block. It also reports whether
// max_concurrent is usable, so that servers are not checked against a
// value that was itself wrong.
func (r *resolver) decodeLimits(n *node) (Limits, bool) {
	l := defaultLimits()
	if n == nil || n.kind == kindNull {
		return l, true
	}
	if !r.ps.expectKind(n, "limits", "a mapping", kindMap) {
		return l, false
	}
	r.ps.known(n, "limits", []string{"max_concurrent", "queue_wait", "max_queue", "session_limit", "max_output"})
	concurrentOK := true
	if p := n.get("max_concurrent"); p != nil {
		const field = "limits.max_concurrent"
		v, ok := r.ps.integer(p.value, field)
		if ok && r.atLeast(p.value.pos, field, v, 1, fmt.Sprintf("use 1 or more (the default is %d)", DefaultMaxConcurrent)) {
			l.MaxConcurrent = v
		} else {
			concurrentOK = false
		}
	}
	if p := n.get("queue_wait"); p != nil {
		const field = "limits.queue_wait"
		fix := fmt.Sprintf("use %q to wait as long as the call's timeout allows (the default), or a duration from 0s (fail at once) to %s", queueWaitTimeoutWord, formatDuration(MaxQueueWait))
		text := strings.TrimSpace(p.value.text)
		_, durErr := time.ParseDuration(text)
		_, numErr := strconv.ParseFloat(text, 64)
		switch {
		case p.value.kind == kindString && text == queueWaitTimeoutWord:
			l.QueueWait = QueueWaitCallTimeout
		case p.value.kind == kindString && durErr != nil && numErr != nil:
			r.ps.add(p.value.pos, field, fmt.Sprintf("invalid value %q", text), fix, nil)
		default:
			v, ok := r.ps.duration(p.value, field)
			switch {
			case !ok || !r.nonNegativeDur(p.value.pos, field, v):
			case v > MaxQueueWait:
				r.ps.add(p.value.pos, field, fmt.Sprintf("%s is out of range", formatDuration(v)), fix, nil)
			default:
				l.QueueWait = v
			}
		}
	}
	if p := n.get("max_queue"); p != nil {
		if v, ok := r.ps.integer(p.value, "limits.max_queue"); ok && r.nonNegative(p.value.pos, "limits.max_queue", v) {
			l.MaxQueue = v
		}
	}
	if p := n.get("session_limit"); p != nil {
		const field = "limits.session_limit"
		if v, ok := r.ps.integer(p.value, field); ok {
			if v == 0 || v < -1 {
				r.ps.add(p.value.pos, field, fmt.Sprintf("must be -1 (unlimited) or at least 1, not %d", v), "use -1 for unlimited", nil)
			} else {
				l.SessionLimit = v
			}
		}
	}
	if p := n.get("max_output"); p != nil {
		const field = "limits.max_output"
		if v, ok := r.size(p.value, field); ok {
			if v < MinMaxOutputBytes || v > MaxMaxOutputBytes {
				r.ps.add(p.value.pos, field, fmt.Sprintf("%s is out of range", sizeAsWritten(p.value)), fmt.Sprintf("use a size from %s to %s", formatSize(MinMaxOutputBytes), formatSize(MaxMaxOutputBytes)), nil)
			} else {
				l.MaxOutputBytes = v
			}
		}
	}
	return l, concurrentOK
}

// decodeHistory reads the history: block.
func (r *resolver) decodeHistory(n *node) History {
	h := defaultHistory()
	if n == nil || n.kind == kindNull || !r.ps.expectKind(n, "history", "a mapping", kindMap) {
		return h
	}
	r.ps.known(n, "history", []string{"store", "record_values", "keep"})
	if p := n.get("store"); p != nil && p.value.kind != kindNull {
		if v, ok := r.expandNode(p.value, "history.store"); ok {
			h.Store = r.store(v, p.value.pos, "history.store")
		}
	}
	if p := n.get("record_values"); p != nil {
		if v, ok := r.ps.boolean(p.value, "history.record_values"); ok {
			h.RecordValues = v
		}
	}
	if p := n.get("keep"); p != nil {
		const field = "history.keep"
		if v, ok := r.ps.integer(p.value, field); ok && r.atLeast(p.value.pos, field, v, 1, fmt.Sprintf("use 1 or more (the default is %d)", DefaultHistoryKeep)) {
			h.Keep = v
		}
	}
	return h
}

// atLeast records a problem unless v >= lo.
func (r *resolver) atLeast(pos Pos, field string, v, lo int, fix string) bool {
	if v < lo {
		r.ps.add(pos, field, fmt.Sprintf("must be at least %d, not %d", lo, v), fix, nil)
		return false
	}
	return true
}

// size reads a number of bytes: a whole number or a size string such as
// 1MiB (see ParseSize).
func (r *resolver) size(n *node, field string) (int64, bool) {
	const fix = "use a number of bytes, or a size such as 512KiB or 1MiB (units " + sizeUnitList + ")"
	switch n.kind {
	case kindInt:
		v, err := strconv.ParseInt(n.text, 0, 64)
		if err != nil {
			r.ps.add(n.pos, field, fmt.Sprintf("number %s is out of range", n.text), "", nil)
			return 0, false
		}
		return v, true
	case kindString, kindFloat:
		v, err := ParseSize(n.text)
		if err != nil {
			r.ps.add(n.pos, field, fmt.Sprintf("invalid size %q", n.text), fix, err)
			return 0, false
		}
		return v, true
	}
	r.ps.add(n.pos, field, fmt.Sprintf("must be a size, not %s", n.kind.describe()), fix, nil)
	return 0, false
}

// sizeAsWritten renders a size value for a message: as written, with
// "bytes" after a bare number.
func sizeAsWritten(n *node) string {
	t := strings.TrimSpace(n.text)
	if strings.TrimLeft(t, "-0123456789") == "" {
		return t + " bytes"
	}
	return t
}

// schemePattern is the form of a URL scheme (RFC 3986).
var schemePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// dsnExample shows the form of a postgres DSN in fixes.
const dsnExample = "write it as postgres://user:password@host:5432/dbname"

// store resolves history.store: a postgres DSN is checked and kept as it
// is; anything else is a SQLite file path, made absolute from the
// configuration file's folder. Messages never repeat a DSN, which may hold
// a password.
func (r *resolver) store(v string, pos Pos, field string) string {
	if v == "" {
		return ""
	}
	if isDSN(v) {
		scheme, _, _ := strings.Cut(v, "://")
		switch strings.ToLower(scheme) {
		case "postgres", "postgresql":
			u, err := url.Parse(v)
			switch {
			case err != nil:
				r.ps.add(pos, field, "the postgres DSN is not a valid URL", dsnExample, nil)
			case u.Hostname() == "":
				r.ps.add(pos, field, "the postgres DSN has no host", dsnExample, nil)
			}
		default:
			r.ps.add(pos, field, fmt.Sprintf("%s:// stores are not supported", strings.ToLower(scheme)), "use a SQLite file path or a postgres:// DSN", nil)
		}
		return v
	}
	p := v
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.dir, p)
	}
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		r.ps.add(pos, field, fmt.Sprintf("%s is a directory", p), "give the path of the SQLite file, e.g. "+filepath.Join(p, "switchboard.db"), nil)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		r.ps.add(pos, field, fmt.Sprintf("cannot use %s: %v", p, errors.Unwrap(err)), "", err)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p
}

// isDSN reports whether a history store is a URL rather than a file path.
func isDSN(store string) bool {
	scheme, _, ok := strings.Cut(store, "://")
	return ok && schemePattern.MatchString(scheme)
}
