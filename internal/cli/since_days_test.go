package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSinceTakesDaysAndSaysWhy: history and audit --since take days (7d,
// 1d12h), which people write and Go's durations lack; a duration that is
// not more than 0 says so rather than only the form wanted.
func TestSinceTakesDaysAndSaysWhy(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]string{})
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	old := time.Now().Add(-10 * 24 * time.Hour).UTC().Format(time.RFC3339)
	recent := time.Now().Add(-36 * time.Hour).UTC().Format(time.RFC3339)
	lines := `{"time":"` + old + `","event":"engine.stopped","outcome":"ok","actor":{"user":"ana","via":"cli"}}
{"time":"` + recent + `","event":"engine.resumed","outcome":"ok","actor":{"user":"ana","via":"cli"}}
`
	if err := os.WriteFile(trail, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		since, want string
	}{
		{"7d", "engine.resumed"},
		{"1d12h", ""}, // 36 hours back: the event is just older
		{"2d", "engine.resumed"},
		{"11d", "engine.stopped engine.resumed"},
	} {
		r := runCLI(t, "audit", "--file", trail, "--since", tc.since, "--json")
		wantCode(t, r, ExitOK)
		var events []struct {
			Event string `json:"event"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &events); err != nil {
			t.Fatalf("audit --since %s --json: %q: %v", tc.since, r.stdout, err)
		}
		var got []string
		for _, e := range events {
			got = append(got, e.Event)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("audit --since %s: got %q, want %q", tc.since, got, tc.want)
		}
	}
	r := runCLI(t, "history", "--config", cfg, "--since", "7d", "--json")
	wantCode(t, r, ExitOK)

	for _, tc := range []struct {
		since string
		want  []string
	}{
		{"-1h", []string{`invalid --since "-1h": the duration must be more than 0`, "7d"}},
		{"0", []string{`invalid --since "0": the duration must be more than 0`}},
		{"1x", []string{`invalid --since "1x": want a duration like 90m, 2h or 7d, or a date like 2026-01-02`}},
		{"5days", []string{`invalid --since "5days": want`}},
	} {
		r := runCLI(t, "history", "--config", cfg, "--since", tc.since)
		wantCode(t, r, ExitUsage)
		wantContains(t, "history --since "+tc.since, r.stderr, tc.want...)
	}
}
