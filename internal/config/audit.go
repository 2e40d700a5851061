package config

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// This file reads the audit: block: where the audit trail goes and how it
// rotates (docs/audit.md). Package audit writes it; the daemon builds the
// writer from this.

// Audit configures the audit trail. With File empty there is none.
type Audit struct {
	// File is the trail's absolute path, "-" for standard output, or ""
	// for no audit trail.
	File string
	// MaxSize is the size in bytes past which the file rotates (0: never).
	MaxSize int64
	// MaxBackups is how many rotated files are kept (0: all).
	MaxBackups int
	// MaxAge removes rotated files older than this (0: none).
	MaxAge time.Duration
	// Compress gzips rotated files.
	Compress bool
	// Required sets the stop switch when an event cannot be written (fail
	// closed).
	Required bool
	// Pos is where the block was written.
	Pos Pos
}

// Enabled reports whether an audit trail is configured.
func (a Audit) Enabled() bool { return a.File != "" }

// Equal reports whether a and o configure the same trail (Pos aside): a
// reload keeps the running writer when they do.
func (a Audit) Equal(o Audit) bool {
	return sameBlock(a, o)
}

// defaultAudit returns the settings of an audit: block: the schema's
// defaults.
func defaultAudit() Audit { return defaultBlock[Audit](&schema.Audit{}) }

// isDefault reports whether a turns nothing on (a block without a file
// has no effect, so a marshalled configuration leaves it out).
func (a Audit) isDefault() bool { return !a.Enabled() && !a.Required }

// decodeAudit reads the audit: block.
func (r *resolver) decodeAudit(f *schema.Audit) Audit {
	if f == nil {
		return Audit{} // no trail
	}
	a := defaultAudit()
	if v, ok := r.textAt("audit", "file"); ok {
		switch v = strings.TrimSpace(v); {
		case v == "":
			r.ps.add(r.at("audit", "file").pos, "audit.file", "is empty", `give a file path such as audit.jsonl, or "-" for standard output; remove the audit: block for no audit trail`, nil)
		case v == "-":
			a.File = v
		default:
			p := v
			if !filepath.IsAbs(p) {
				p = filepath.Join(r.dir, p)
			}
			if abs, err := filepath.Abs(p); err == nil {
				p = abs
			}
			a.File = p
		}
	}
	r.readBlock(&a, f, []any{"audit"}, "file")
	if a.File == "" && a.Required && r.at("audit", "file") == nil {
		r.ps.add(r.at("audit", "required").pos, "audit.required", "requires an audit trail, but audit.file is not set", "set audit.file to a path such as audit.jsonl, or \"-\" for standard output", nil)
	}
	return a
}
