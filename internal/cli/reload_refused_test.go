package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReloadOfABadFileKeepsTheRunningConfiguration runs serve in-process,
// breaks its file in two places and reloads: reload fails, says that the
// running configuration was kept, and prints each problem on its own line
// with its file:line:col (details.problems with --json).
func TestReloadOfABadFileKeepsTheRunningConfiguration(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]string{})
	serveInProcess(t, cfg)

	if err := appendFile(cfg, "  - name: beta\n    comand: x\nnonsense: true\n"); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "reload", "--config", cfg)
	wantCode(t, r, ExitFailure)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) < 3 {
		t.Fatalf("reload of a file with problems: got %d stderr lines, want a heading and a line per problem:\n%s", len(lines), r.stderr)
	}
	wantContains(t, "reload's heading", lines[0], "switchboard reload: ", "not reloaded", "the running configuration was kept")
	var beta, nonsense bool
	for _, l := range lines[1:] {
		beta = beta || strings.HasPrefix(l, cfg+":") && strings.Contains(l, "comand")
		nonsense = nonsense || strings.HasPrefix(l, cfg+":") && strings.Contains(l, "nonsense")
		if strings.Contains(l, " | ") {
			t.Errorf("reload folded problems into one line: %q", l)
		}
	}
	if !beta || !nonsense {
		t.Errorf("reload: want a FILE:LINE:COL line for each of the misspelt command and the unknown key, got:\n%s", r.stderr)
	}

	r = runCLI(t, "reload", "--config", cfg, "--json")
	wantCode(t, r, ExitFailure)
	var e struct {
		Error struct {
			Message string `json:"message"`
			Details struct {
				Problems []string `json:"problems"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stderr), &e); err != nil {
		t.Fatalf("reload --json: %v\n%s", err, r.stderr)
	}
	wantContains(t, "reload --json message", e.Error.Message, "the running configuration was kept")
	if n := len(e.Error.Details.Problems); n < 2 {
		t.Errorf("reload --json: got %d details.problems, want one per problem (2 or more):\n%s", n, r.stderr)
	}

}
