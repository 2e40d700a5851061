package config_test

import (
	"path/filepath"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// envOf is an environment of its own: vars, and nothing else.
func envOf(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// TestFindReadsTheGivenEnvironment: the user's configuration folder is
// the one of the environment Find is given (a command's own), not the
// process's.
func TestFindReadsTheGivenEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	user := config.WriteFile(t, dir, "xdg/switchboard/switchboard.yaml", "servers: []\n")
	env := envOf(map[string]string{"XDG_CONFIG_HOME": filepath.Join(dir, "xdg"), "HOME": filepath.Join(dir, "home")})
	if got, err := config.Find(dir, env); err != nil || got != user {
		t.Errorf("Find(env) = %q, %v; want %q, nil", got, err, user)
	}
	env = envOf(map[string]string{"HOME": filepath.Join(dir, "home")})
	if got, err := config.Find(dir, env); err != nil || got != "" {
		t.Errorf("Find(env without the file) = %q, %v; want \"\", nil", got, err)
	}
}

// TestUserClientFileOfTheGivenHome: a client's file under the home of
// the environment given is the user's own (it may be trusted at first
// use); the same file is not the user's for another home.
func TestUserClientFileOfTheGivenHome(t *testing.T) {
	t.Parallel()
	state, home := t.TempDir(), t.TempDir()
	file := config.WriteFile(t, home, ".cursor/mcp.json", `{"mcpServers": {}}`)
	st, err := config.FileTrustStatus(state, file, envOf(map[string]string{"HOME": home}))
	if err != nil || st.Client != "Cursor" {
		t.Errorf("FileTrustStatus with HOME=%s: client %q, %v; want Cursor", home, st.Client, err)
	}
	st, err = config.FileTrustStatus(state, file, envOf(map[string]string{"HOME": t.TempDir()}))
	if err != nil || st.Client != "" {
		t.Errorf("FileTrustStatus with another HOME: client %q, %v; want none", st.Client, err)
	}
}
