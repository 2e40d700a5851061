package clients_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/clients"
)

// TestUserFilesOfTheGivenEnvironment: a client's user file, and whether
// it is installed, are those of the environment the caller gives (a
// command's own), not the process's: two users side by side each get the
// file under their own home, and Claude Code counts as installed for the
// one whose ~/.claude exists.
func TestUserFilesOfTheGivenEnvironment(t *testing.T) {
	t.Parallel()
	ada, bob := isolate(t), isolate(t)
	adaHome, _ := ada("HOME")
	bobHome, _ := bob("HOME")
	for _, c := range clients.All() {
		a, err := c.Target(clients.ScopeUser, "", ada)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		b, err := c.Target(clients.ScopeUser, "", bob)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		if !strings.HasPrefix(a.Path, adaHome+string(filepath.Separator)) || !strings.HasPrefix(b.Path, bobHome+string(filepath.Separator)) {
			t.Errorf("%s: got %s and %s, want one under each home (%s, %s)", c.ID, a.Path, b.Path, adaHome, bobHome)
		}
	}
	cc, err := clients.Lookup("claude-code")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(adaHome, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if !cc.Installed(ada) || cc.Installed(bob) {
		t.Errorf("Claude Code installed: got %v for the home with ~/.claude and %v for the one without; want true, false", cc.Installed(ada), cc.Installed(bob))
	}
	if _, err := cc.Target(clients.ScopeUser, "", func(string) (string, bool) { return "", false }); err == nil || !strings.Contains(err.Error(), "no home or config folder") {
		t.Errorf("with no HOME: got %v, want an error saying there is no home", err)
	}
}
