package web

import (
	"context"

	"github.com/switchboard-mcp/switchboard/internal/control"
)

// ConfigEditor writes servers to the configuration file and applies the
// result with the daemon's all-or-nothing reload. The daemon passes one
// over its configuration file (internal/daemon/web.go).
type ConfigEditor interface {
	// Path returns the file edits go to and whether it exists: with the
	// embedded default there is no file yet, and the first edit creates
	// it there (after the person confirmed).
	Path() (path string, exists bool)
	// Server returns a server's entry as written in the file, for the
	// edit form (values unresolved: ${VAR} stays ${VAR}).
	Server(name string) (ServerEntry, error)
	// Save writes a server (replacing the entry named original, or adding
	// one when original is ""), validates the whole file as `config
	// validate` does, and applies it. Nothing is written when validation
	// fails; the file is put back when the reload refuses it.
	Save(ctx context.Context, original string, e ServerEntry) (control.ReloadReport, error)
	// Remove deletes a server's entry and applies the file.
	Remove(ctx context.Context, name string) (control.ReloadReport, error)
}
