package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// TestListsPrintBareArrays: task list and audit print their lists as
// every other list command does (docs/cli.md#output-for-scripts): a bare
// array, [] when empty, and YAML with --output yaml. task list printed
// {"tasks": [...]}; audit printed one JSON object a line, nothing at all
// when no event matched, and JSON lines for --output yaml.
func TestListsPrintBareArrays(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trail := filepath.Join(dir, "audit.jsonl")
	lines := `{"time":"2026-11-27T09:00:00Z","event":"control.stop","outcome":"ok","actor":{"user":"ana","via":"cli"}}
{"time":"2026-11-27T09:01:00Z","event":"control.resume","outcome":"ok","actor":{"user":"ana","via":"cli"}}
`
	if err := os.WriteFile(trail, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	type event struct {
		Event string `json:"event"`
	}

	t.Run("audit", func(t *testing.T) {
		t.Parallel()
		r := runCLI(t, "audit", "--file", trail, "--json")
		wantCode(t, r, ExitOK)
		var events []event
		if err := json.Unmarshal([]byte(r.stdout), &events); err != nil || len(events) != 2 || events[1].Event != "control.resume" {
			t.Errorf("audit --json: got %q (%v), want an array of the two events", r.stdout, err)
		}
		r = runCLI(t, "audit", "--file", trail, "--output", "yaml")
		wantCode(t, r, ExitOK)
		events = nil
		if err := yaml.Unmarshal([]byte(r.stdout), &events); err != nil || len(events) != 2 || events[0].Event != "control.stop" {
			t.Errorf("audit --output yaml: got %q (%v), want a YAML list of the two events", r.stdout, err)
		}
		for _, args := range [][]string{{"--file", empty}, {"--file", trail, "--event", "auth.sign_in"}} {
			r = runCLI(t, append([]string{"audit", "--json"}, args...)...)
			wantCode(t, r, ExitOK)
			if strings.TrimSpace(r.stdout) != "[]" {
				t.Errorf("audit --json %s: got %q, want []", strings.Join(args, " "), r.stdout)
			}
		}
	})

	t.Run("audit_follow_yaml", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var out, errb syncBuffer
		done := make(chan int, 1)
		go func() { done <- mainIn(t, ctx, &out, &errb, "audit", "--file", trail, "--follow", "--output", "yaml") }()
		eventuallyCLI(t, 20*time.Second, "audit --follow to print both events", func() bool {
			return strings.Contains(out.String(), "control.resume")
		})
		cancel()
		if code := <-done; code != ExitOK && code != ExitInterrupted {
			t.Errorf("audit --follow: exit code %d: %s", code, errb.String())
		}
		// Two YAML documents, one per event.
		docs := strings.Split(strings.TrimPrefix(out.String(), "---\n"), "---\n")
		if len(docs) != 2 {
			t.Fatalf("audit --follow --output yaml: got %q, want two YAML documents", out.String())
		}
		for i, want := range []string{"control.stop", "control.resume"} {
			var e event
			if err := yaml.Unmarshal([]byte(docs[i]), &e); err != nil || e.Event != want {
				t.Errorf("audit --follow --output yaml, document %d: got %q (%v), want the event %s", i, docs[i], err, want)
			}
		}
	})

	t.Run("task_list", func(t *testing.T) {
		t.Parallel()
		cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
		r := runCLI(t, "task", "list", "--config", cfg, "alpha", "--json")
		wantCode(t, r, ExitOK)
		if strings.TrimSpace(r.stdout) != "[]" {
			t.Errorf("task list --json of a server with no tasks: got %q, want []", r.stdout)
		}
	})
}
