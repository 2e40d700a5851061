package config

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
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

// defaultLimits returns the built-in execution limits: the schema's, and
// queue_wait's word.
func defaultLimits() Limits {
	l := defaultBlock[Limits](&schema.Limits{})
	l.QueueWait = QueueWaitCallTimeout
	return l
}

// defaultHistory returns the built-in history settings: the schema's.
func defaultHistory() History { return defaultBlock[History](&schema.History{}) }

// decodeLimits reads the limits: block.
func decodeLimits(f *schema.Limits) Limits {
	l := defaultLimits()
	if f == nil {
		return l
	}
	readFields(&l, f)
	if q := f.QueueWait; q != nil {
		l.QueueWait = q.Duration
		if q.CallTimeout {
			l.QueueWait = QueueWaitCallTimeout
		}
	}
	if f.Rate != nil {
		l.Rate = Rate{PerUser: decodeBucket(f.Rate.PerUser), PerUserServer: decodeBucket(f.Rate.PerUserServer)}
	}
	return l
}

// decodeBucket reads one token bucket of limits.rate.
func decodeBucket(f *schema.Bucket) Bucket {
	var b Bucket
	if f == nil {
		return b
	}
	readFields(&b, f)
	if b.PerSecond > 0 && b.Burst == 0 {
		b.Burst = max(1, int(math.Ceil(b.PerSecond)))
	}
	return b
}

// decodeHistory reads the history: block.
func (r *resolver) decodeHistory(f *schema.History) History {
	h := defaultHistory()
	if f == nil {
		return h
	}
	if v, ok := r.textAt("history", "store"); ok {
		h.Store = r.store(v, r.at("history", "store").pos, "history.store")
	}
	r.readBlock(&h, f, []any{"history"}, "store")
	return h
}

// schemePattern is the form of a URL scheme (RFC 3986).
var schemePattern = lazyRegexp(`^[A-Za-z][A-Za-z0-9+.-]*$`)

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
	return ok && schemePattern().MatchString(scheme)
}
