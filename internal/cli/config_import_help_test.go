package cli

import (
	"strings"
	"testing"
)

// TestConfigImportHelpNamesEveryFormat: config import's help names every
// client format it reads (it named three while it read ten) and the
// schema line it writes, and completes TOML files (Codex's) too.
func TestConfigImportHelpNamesEveryFormat(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "config", "import", "--help")
	wantCode(t, r, ExitOK)
	wantContains(t, "config import --help", r.stdout, "Claude Code", "Windsurf", "Cline", "Gemini CLI", "Continue", "Zed", "Codex", "JSON Schema", "config.toml")
	r = runCLI(t, "__complete", "config", "import", "")
	if !strings.Contains(r.stdout, "toml") {
		t.Errorf("config import completes: got %q, want toml among the extensions", r.stdout)
	}
}

// TestConfigImportOfAMissingFileSaysWhereClientsKeepThem: a path that is
// not there says so, and where to find the client files.
func TestConfigImportOfAMissingFileSaysWhereClientsKeepThem(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "config", "import", "nope/claude_desktop_config.json")
	wantCode(t, r, ExitFailure)
	wantContains(t, "config import of a missing file", r.stderr, "no such file or directory",
		"hint: check the path; 'switchboard client list' shows where each client keeps its file")
}
