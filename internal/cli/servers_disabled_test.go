package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestServersDisabledShowsNoCounts: a disabled server lists nothing, so
// `servers` shows no tool count for it ("-" in the table, null in
// --json), not the count it had when it was last connected.
func TestServersDisabledShowsNoCounts(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	counts := func() (tools, prompts, resources any) {
		t.Helper()
		r := runCLI(t, "servers", "--json", "--config", cfg)
		var rows []map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 {
			t.Fatalf("servers --json: got %s (%v), want one row\n%s", r.stdout, err, r.stderr)
		}
		return rows[0]["tools"], rows[0]["prompts"], rows[0]["resources"]
	}
	// Connected, it counts what it lists (and the catalog keeps it).
	if tools, prompts, _ := counts(); tools == nil || tools.(float64) < 1 || prompts.(float64) != 1 {
		t.Fatalf("connected: got tools %v, prompts %v, want counts", tools, prompts)
	}

	wantCode(t, runCLI(t, "servers", "disable", "alpha", "--config", cfg), ExitOK)
	if tools, prompts, resources := counts(); tools != nil || prompts != nil || resources != nil {
		t.Errorf("disabled, --json: got tools %v, prompts %v, resources %v, want null for each", tools, prompts, resources)
	}
	r := runCLI(t, "servers", "--config", cfg)
	wantCode(t, r, ExitOK)
	var row []string
	for _, line := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[0] == "alpha" {
			row = f
		}
	}
	// NAME TRANSPORT STATE TOOLS ...
	if len(row) < 4 || row[2] != "disabled" || row[3] != "-" {
		t.Errorf("disabled, table: got row %q, want state disabled and tools -\n%s", row, r.stdout)
	}
}

// TestServersDisabledShowsNoCountsFromTheDaemon: the daemon's catalog
// still holds what a server listed before it was disabled; `servers`
// shows no count for it all the same.
func TestServersDisabledShowsNoCountsFromTheDaemon(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	d := startDaemon(t, cfg)
	before := d.requests.Load()
	wantCode(t, runCLI(t, "tools", "--config", cfg), ExitOK)
	wantCode(t, runCLI(t, "servers", "disable", "alpha", "--config", cfg), ExitOK)
	r := runCLI(t, "servers", "--json", "--config", cfg)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("servers --json: got %s (%v), want one row\n%s", r.stdout, err, r.stderr)
	}
	if rows[0]["enabled"] != false || rows[0]["tools"] != nil {
		t.Errorf("disabled, --json: got enabled %v, tools %v, want false and null", rows[0]["enabled"], rows[0]["tools"])
	}
	r = runCLI(t, "servers", "--config", cfg)
	if !strings.Contains(r.stdout, "disabled  -  ") {
		t.Errorf("disabled, table: want state disabled and tools -, got\n%s", r.stdout)
	}
	if d.requests.Load() == before {
		t.Errorf("the daemon served no request")
	}
}

// TestListsLeaveOutADisabledServer: the daemon's catalog still holds what
// a server listed before it was disabled, but `tools`, `prompts` and
// `resources` leave it out, as the gateway does (it cannot be called);
// naming the disabled server says it is disabled and how to enable it,
// rather than listing what cannot be used.
func TestListsLeaveOutADisabledServer(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha", "beta"))
	startDaemon(t, cfg)
	for _, cmd := range []string{"tools", "prompts", "resources"} {
		r := runCLI(t, cmd, "--json", "--config", cfg)
		wantCode(t, r, ExitOK)
		if !strings.Contains(r.stdout, `"server": "alpha"`) {
			t.Fatalf("%s, alpha enabled: got %s, want alpha's entries", cmd, r.stdout)
		}
	}
	wantCode(t, runCLI(t, "servers", "disable", "alpha", "--config", cfg), ExitOK)
	for _, cmd := range []string{"tools", "prompts", "resources"} {
		r := runCLI(t, cmd, "--json", "--config", cfg)
		wantCode(t, r, ExitOK)
		if strings.Contains(r.stdout, `"server": "alpha"`) || !strings.Contains(r.stdout, `"server": "beta"`) {
			t.Errorf("%s, alpha disabled: got %s, want beta's entries and none of alpha's", cmd, r.stdout)
		}
		r = runCLI(t, cmd, "alpha", "--config", cfg)
		wantCode(t, r, ExitFailure)
		if strings.Contains(r.stdout, "alpha") {
			t.Errorf("%s alpha, disabled: got\n%s\nwant nothing listed", cmd, r.stdout)
		}
		wantContains(t, cmd+" alpha, disabled", r.stderr, "server alpha is disabled")
		wantContains(t, cmd+" alpha, disabled", r.stderr, "switchboard servers enable alpha")
	}
	// tool still describes one of its tools (the catalog keeps them), and
	// says that calling it fails.
	r := runCLI(t, "tool", "alpha", "echo", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "tool alpha echo, disabled", r.stdout, "echo (server alpha")
	wantContains(t, "tool alpha echo, disabled", r.stderr, "note: server alpha is disabled: calls fail until it is enabled (switchboard servers enable alpha)")
	r = runCLI(t, "tool", "beta", "echo", "--config", cfg)
	if strings.Contains(r.stderr, "disabled") {
		t.Errorf("tool beta echo, enabled: got stderr %q, want no note", r.stderr)
	}
}
