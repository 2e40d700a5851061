package config_test

import (
	"path/filepath"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestFindInTheGivenDirectory: switchboard.yaml is looked for in the
// working directory Find is given (a command's own), before the user's
// configuration folder, and not in the process's.
func TestFindInTheGivenDirectory(t *testing.T) {
	t.Parallel()
	dir, work := t.TempDir(), t.TempDir()
	user := config.WriteFile(t, dir, "xdg/switchboard/switchboard.yaml", "servers: []\n")
	env := envOf(map[string]string{"XDG_CONFIG_HOME": filepath.Join(dir, "xdg")})
	if got, err := config.Find(work, env); err != nil || got != user {
		t.Errorf("Find(%s) without a file there = %q, %v; want the user's %q", work, got, err, user)
	}
	local := config.WriteFile(t, work, "switchboard.yaml", "servers: []\n")
	if got, err := config.Find(work, env); err != nil || got != local {
		t.Errorf("Find(%s) = %q, %v; want %q", work, got, err, local)
	}
}
