package cli

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/sealed"
)

// TestConfigInputDeleteAndAudit: config input writes a
// config.input_stored event (the file and the input, never the value) to
// the trail of the configuration in use; --delete removes the value from
// the secret store and writes config.input_deleted; deleting a value that
// is not stored says so and changes nothing; --stdin with --delete is a
// usage error.
func TestConfigInputDeleteAndAudit(t *testing.T) {
	t.Parallel()
	cfgPath, trail := auditFixture(t)
	state := t.TempDir()
	setenv(t, "SWITCHBOARD_STATE_DIR", state)
	setenv(t, "HOME", t.TempDir())
	const secret = "sk-test-polish32-0123456789"
	file := writeClientFile(t, ".vscode/mcp.json", map[string]any{
		"inputs":  []map[string]any{{"type": "promptString", "id": "api-key", "description": "API key", "password": true}},
		"servers": map[string]any{"api": map[string]any{"type": "stdio", "command": "npx", "args": []string{"-y", "x"}, "env": map[string]string{"KEY": "${input:api-key}"}}},
	})
	key := config.InputSecretKey(file, "api-key")
	stored := func() bool {
		t.Helper()
		_, ok, err := sealed.NewSecrets(state).Secret(key)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	events := func() []audit.Event {
		t.Helper()
		var got []audit.Event
		if err := audit.Read(trail, audit.Filter{Events: []string{"config.input*"}}, func(e audit.Event) error { got = append(got, e); return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}

	r := runCLIInput(t, context.Background(), strings.NewReader(secret), "--config", cfgPath, "config", "input", "api-key", file, "--stdin")
	wantCode(t, r, ExitOK)
	if !stored() {
		t.Fatal("config input --stdin stored nothing")
	}
	r = runCLIInput(t, context.Background(), strings.NewReader(secret), "--config", cfgPath, "config", "input", "api-key", file, "--stdin", "--delete")
	wantCode(t, r, ExitUsage)
	wantContains(t, "--stdin --delete", r.stderr, "give --stdin or --delete, not both")

	r = runCLI(t, "--config", cfgPath, "config", "input", "api-key", file, "--delete")
	wantCode(t, r, ExitOK)
	wantContains(t, "config input --delete", r.stdout, `deleted the value of input "api-key" of `+file)
	if stored() {
		t.Error("config input --delete left the value in the secret store")
	}
	// Nothing left to delete: said, and no event.
	r = runCLI(t, "--config", cfgPath, "config", "input", "api-key", file, "--delete", "--json")
	wantCode(t, r, ExitOK)
	var out struct {
		File, Input string
		Deleted     bool
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.File != file || out.Input != "api-key" || out.Deleted {
		t.Errorf("config input --delete --json of a value not stored: got %+v (%v) from %q, want the file, the input and deleted false", out, err, r.stdout)
	}

	got := events()
	if len(got) != 2 || got[0].Event != audit.ConfigInputStored || got[1].Event != audit.ConfigInputDeleted {
		t.Fatalf("got events %+v, want config.input_stored then config.input_deleted", got)
	}
	for _, e := range got {
		if e.Outcome != audit.OK || e.Actor.Via != audit.ViaCLI || e.Actor.User == "" || e.Target.File != file || e.Target.Input != "api-key" {
			t.Errorf("got %+v, want an ok event by the CLI's user naming the file and the input", e)
		}
	}
	if data, err := os.ReadFile(trail); err != nil || strings.Contains(string(data), secret) {
		t.Errorf("the trail: %v; want it without the input's value", err)
	}
}
