package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// jsonErr decodes the {"error": {...}} a --json command prints on stderr
// (its last line; log lines may come before it).
func jsonErr(t *testing.T, what string, r result) map[string]any {
	t.Helper()
	var out struct {
		Error map[string]any `json:"error"`
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &out); err != nil || out.Error == nil {
		t.Fatalf("%s: got stderr %q (%v), want it to end with one {\"error\": {...}} line", what, r.stderr, err)
	}
	return out.Error
}

// writeConfigWith writes writeConfig's servers plus extra YAML under
// servers:, with the extra commands allowed.
func writeConfigWith(t *testing.T, servers map[string]string, extra string, allowed ...string) string {
	t.Helper()
	path := writeConfig(t, servers)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, a := range allowed {
		s = strings.Replace(s, "allowed_commands: [", fmt.Sprintf("allowed_commands: [%q, ", a), 1)
	}
	if err := os.WriteFile(path, []byte(s+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestServersNoteIsWhole: piped, the servers table prints a server's note
// whole (a long path, the command to run), as --json has it; only a
// terminal narrower than the table cuts it.
func TestServersNoteIsWhole(t *testing.T) {
	t.Parallel()
	bin := "/nonexistent/a/rather/long/path/to/an/mcp/server/that/was/never/installed/here/mcp-server"
	cfg := writeConfigWith(t, map[string]string{}, "  - name: nx\n    command: "+bin+"\n", bin)
	r := runCLI(t, "servers", "--config", cfg, "--json")
	wantCode(t, r, ExitFailure)
	var rows []struct {
		LastError string `json:"last_error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 || len(rows[0].LastError) <= 80 {
		t.Fatalf("servers --json: got %s (%v), want one row whose last_error is longer than 80 characters", r.stdout, err)
	}
	r = runCLI(t, "servers", "--config", cfg)
	wantCode(t, r, ExitFailure)
	wantContains(t, "servers", r.stdout, rows[0].LastError)
}

func TestListingJSONErrorForUnavailableServer(t *testing.T) {
	t.Parallel()
	// alpha, which answers, is served in this process: the point is nx.
	cfg := writeConfigWith(t, map[string]string{},
		httpServersYAML(t, "alpha")+"  - name: nx\n    command: /nonexistent/bin\n", "/nonexistent/bin")
	for _, cmd := range []string{"tools", "prompts", "resources"} {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, cmd, "--config", cfg, "--json")
			wantCode(t, r, ExitFailure)
			e := jsonErr(t, cmd, r)
			if e["error_type"] != "connection_error" || !strings.Contains(fmt.Sprint(e["message"]), "server nx is unavailable") {
				t.Errorf("%s --json error: got %v, want a connection_error about nx", cmd, e)
			}
			// What to try for nx comes along, not only "run servers".
			if !strings.Contains(fmt.Sprint(e["suggestions"]), "servers.nx.command") {
				t.Errorf("%s --json suggestions: got %v, want nx's own (its servers.nx.command)", cmd, e["suggestions"])
			}
			if !json.Valid([]byte(r.stdout)) {
				t.Errorf("%s --json stdout: got %q, want the JSON listing of the servers that answered", cmd, r.stdout)
			}
			// Without --json: a line a person reads, its suggestions
			// "hint:" lines as every other error's (they were "try:").
			r = runCLI(t, cmd, "--config", cfg)
			wantCode(t, r, ExitFailure)
			wantContains(t, cmd+" stderr", r.stderr, "switchboard "+cmd+": server nx is unavailable", "\n  hint: ", "servers.nx.command")
		})
	}
}

func TestUsageErrorJSON(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	r := runCLI(t, "history", "--json", "--limit", "0")
	wantCode(t, r, ExitUsage)
	if e := jsonErr(t, "history --limit 0", r); e["error_type"] != "validation_error" || !strings.Contains(fmt.Sprint(e["message"]), "--limit") {
		t.Errorf("usage error with --json: got %v, want a validation_error about --limit", e)
	}
}

func TestJSONErrorKeepsCause(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	// The server's own words.
	r := runCLI(t, "read", "alpha", "test://nope", "--config", cfg, "--json")
	wantCode(t, r, ExitFailure)
	e := jsonErr(t, "read", r)
	text := runCLI(t, "read", "alpha", "test://nope", "--config", cfg)
	if msg := fmt.Sprint(e["message"]); !strings.Contains(msg, "reading test://nope from alpha") || !strings.Contains(strings.ToLower(msg), "not found") {
		t.Errorf("read --json message: got %q, want the context and the server's \"not found\" (text mode says %q)", msg, text.stderr)
	}
	// An OS error.
	r = runCLI(t, "config", "import", filepath.Join(t.TempDir(), "nope.json"), "--json")
	wantCode(t, r, ExitFailure)
	if msg := fmt.Sprint(jsonErr(t, "config import", r)["message"]); !strings.Contains(msg, "no such file") {
		t.Errorf("config import --json message: got %q, want the cause (no such file)", msg)
	}
}

func TestJSONErrorMessage(t *testing.T) {
	t.Parallel()
	withFields := fault.New(fault.Validation, "arguments for a/b are invalid")
	withFields.Fields = []fault.FieldDetail{{Field: "x", Message: "want a number"}}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"cause kept", fault.Wrap(fault.NotFound, errors.New("MCP error -32002: Resource not found"), "reading r from s"), "reading r from s: MCP error -32002: Resource not found"},
		{"outer context kept", fmt.Errorf("doc list: %w", fault.Wrap(fault.Validation, os.ErrNotExist, "reading nope.md")), "doc list: reading nope.md: file does not exist"},
		{"fields only in details", withFields, "arguments for a/b are invalid"},
		{"plain error", errors.New("line one\nline two"), "line one | line two"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jsonError(tt.err).Message; got != tt.want {
				t.Errorf("jsonError message: got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCallTypingErrorFieldsJSON(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	r := runCLI(t, "call", "alpha", "add", "a=x", "b=2", "--config", cfg, "--json")
	wantCode(t, r, ExitFailure)
	e := jsonErr(t, "call add a=x", r)
	b, _ := json.Marshal(e["details"])
	var details struct {
		Server string `json:"server"`
		Tool   string `json:"tool"`
		Fields []struct {
			Field         string  `json:"field"`
			Message       string  `json:"message"`
			ReceivedValue *string `json:"received_value"`
			Suggestion    string  `json:"suggestion"`
		} `json:"fields"`
	}
	if err := json.Unmarshal(b, &details); err != nil {
		t.Fatal(err)
	}
	if e["error_type"] != "validation_error" || details.Server != "alpha" || details.Tool != "add" || len(details.Fields) != 1 {
		t.Fatalf("call add a=x --json: got %s, want a validation_error for alpha/add with one field", r.stderr)
	}
	f := details.Fields[0]
	if f.Field != "a" || !strings.Contains(f.Message, "want a number") || f.ReceivedValue == nil || *f.ReceivedValue != "x" || !strings.Contains(f.Suggestion, "a:=") {
		t.Errorf("details.fields[0]: got %+v, want field a, its message, received_value \"x\" and a suggestion", f)
	}
	r = runCLI(t, "call", "alpha", "add", "a=x", "b=2", "--config", cfg)
	wantCode(t, r, ExitFailure)
	wantContains(t, "call stderr", r.stderr, `arguments for alpha/add are invalid; a: want a number, got "x"`)
}

func TestFlagsBeforeSubcommand(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]string{"alpha": "ok"})
	r := runCLI(t, "config", "--config", cfg, "show")
	wantCode(t, r, ExitOK)
	wantContains(t, "config --config X show", r.stdout, "name: alpha")
	r = runCLI(t, "config", "--json", "validate", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "config --json validate", r.stdout, `"valid": true`)
	r = runCLI(t, "hooks", "--config", cfg, "list")
	wantCode(t, r, ExitOK)
	wantContains(t, "hooks --config X list", r.stdout, "no hooks configured")
	r = runCLI(t, "hooks", "--config", cfg, "--limit", "3", "log")
	wantCode(t, r, ExitOK)
	r = runCLI(t, "config", "--config", cfg, "bogus")
	wantCode(t, r, ExitUsage)
	wantContains(t, "config bogus", r.stderr, `unknown config subcommand "bogus"`)
	doc := filepath.Join(t.TempDir(), "d.md")
	if err := os.WriteFile(doc, []byte("# Notes\n\nNo calls here.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "doc", "--config", cfg, "list", doc)
	wantCode(t, r, ExitOK)
	wantContains(t, "doc --config X list", r.stdout, "has no tool-call blocks")
	r = runCLI(t, "doc", "--json", "list", doc)
	wantCode(t, r, ExitOK)
}

func TestConfigShowResolvedKeys(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	cfg := filepath.Join(t.TempDir(), "switchboard.yaml")
	os.WriteFile(cfg, []byte("servers:\n  - name: dk\n    docker:\n      image: mcp/fetch\n    env: {API_TOKEN: abc123secret}\n"), 0o600)

	r := runCLI(t, "config", "show", "--config", cfg, "--json")
	wantCode(t, r, ExitOK)
	var got struct {
		Defaults map[string]any   `json:"defaults"`
		Servers  []map[string]any `json:"servers"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got.Servers) != 1 {
		t.Fatalf("config show --json: got %s (%v), want the configuration with one server", r.stdout, err)
	}
	if got.Defaults["request_timeout"] != "30s" {
		t.Errorf("defaults.request_timeout: got %v, want \"30s\" as in the YAML", got.Defaults["request_timeout"])
	}
	for _, k := range []string{"Servers", "Pos", "RequestTimeout"} {
		if strings.Contains(r.stdout, `"`+k+`"`) {
			t.Errorf("config show --json has the Go field %q; want the YAML keys:\n%s", k, r.stdout)
		}
	}
	srv := got.Servers[0]
	if srv["command"] != "docker" || srv["docker"] != nil || strings.Contains(r.stdout, "abc123secret") {
		t.Errorf("server dk: got %v, want command docker (expanded), no docker block, the secret redacted", srv)
	}

	r = runCLI(t, "config", "show", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "config show", r.stdout, "command: docker", "args: [run, ", "mcp/fetch]")
	if strings.Contains(r.stdout, "docker:") || strings.Contains(r.stdout, "abc123secret") {
		t.Errorf("config show: got\n%s\nwant the Docker launch expanded and the secret redacted", r.stdout)
	}
}

func TestHistoryJSONAndFilters(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	wantCode(t, runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=one"), ExitOK)
	wantCode(t, runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=two"), ExitOK)

	r := runCLI(t, "history", "--config", cfg, "--json")
	wantCode(t, r, ExitOK)
	var calls []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &calls); err != nil || len(calls) != 2 {
		t.Fatalf("history --json: got %s (%v), want two calls", r.stdout, err)
	}
	for _, k := range []string{"id", "source", "identity", "server", "tool", "status", "started_at", "finished_at", "duration_ms", "retries", "result_bytes", "truncated", "partial", "arguments"} {
		if _, ok := calls[0][k]; !ok {
			t.Errorf("history --json record: no %q in %v", k, calls[0])
		}
	}
	if _, ok := calls[0]["duration_ms"].(float64); !ok || strings.Contains(r.stdout, `"ID"`) || strings.Contains(r.stdout, `"Duration"`) {
		t.Errorf("history --json: got %s, want snake_case keys and duration_ms a number", r.stdout)
	}
	newest := calls[0]["id"].(string)
	r = runCLI(t, "history", "show", newest[:8], "--config", cfg, "--json")
	wantCode(t, r, ExitOK)
	wantContains(t, "history show --json", r.stdout, `"id": "`+newest+`"`)

	// --before takes the short id the table shows.
	r = runCLI(t, "history", "--config", cfg, "--before", shortID(newest), "--json")
	wantCode(t, r, ExitOK)
	var older []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &older); err != nil || len(older) != 1 || older[0]["id"] == newest {
		t.Errorf("history --before %s: got %s (%v), want the one older call", shortID(newest), r.stdout, err)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"history", "--source", "bogus"}, `--source "bogus" is not a source; want cli, gateway, hook, document, agent, web`},
		{[]string{"history", "--limit", "0"}, "--limit 0 is out of range; give 1 or more"},
		{[]string{"history", "--limit", "-5"}, "--limit -5 is out of range"},
		{[]string{"hooks", "log", "--limit", "-3"}, "switchboard hooks log: --limit -3 is out of range; give 1 or more"},
	} {
		r := runCLI(t, append(tt.args, "--config", cfg)...)
		wantCode(t, r, ExitUsage)
		wantContains(t, strings.Join(tt.args, " "), r.stderr, tt.want)
	}
}

func TestServerActionJSON(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	r := runCLI(t, "servers", "refresh", "alpha", "--config", cfg, "--json")
	wantCode(t, r, ExitOK)
	var got map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("servers refresh --json: got %q (%v), want JSON", r.stdout, err)
	}
	if got["server"] != "alpha" || got["action"] != "refresh" || got["tools"].(float64) < 5 {
		t.Errorf("servers refresh --json: got %v, want server alpha, action refresh and the counts", got)
	}
	r = runCLI(t, "servers", "disable", "alpha", "--config", cfg, "--json")
	wantCode(t, r, ExitOK)
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got["action"] != "disable" {
		t.Errorf("servers disable --json: got %q (%v), want JSON with action disable", r.stdout, err)
	}
}

func TestParamLinesArrayItems(t *testing.T) {
	t.Parallel()
	var schema map[string]any
	json.Unmarshal([]byte(`{"type": "object", "required": ["edits", "path"], "properties": {
		"path": {"type": "string"},
		"edits": {"type": "array", "items": {"type": "object", "required": ["oldText", "newText"], "properties": {
			"oldText": {"type": "string", "description": "Text to search for"},
			"newText": {"type": "string"}}}},
		"opts": {"type": "object", "properties": {"dry": {"type": "boolean"}}}}}`), &schema)
	var lines [][3]string
	paramLines(schema, schema, "", &lines)
	var got []string
	for _, l := range lines {
		got = append(got, l[0]+" "+l[1])
	}
	want := []string{
		"edits array of object, required",
		"edits[].newText string, required",
		"edits[].oldText string, required",
		"path string, required",
		"opts object",
		"opts.dry boolean",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paramLines (-want +got):\n%s", diff)
	}
}

func TestPromptUnknownArgument(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	r := runCLI(t, "prompt", "alpha", "greet", "name=Ann", "nmae=Bob", "--config", cfg)
	wantCode(t, r, ExitFailure)
	wantContains(t, "prompt stderr", r.stderr, `nmae: prompt greet has no argument "nmae"; did you mean "name"?`, "its arguments are: name")

	r = runCLI(t, "prompt", "alpha", "greet", "name=Ann", "nmae=Bob", "--config", cfg, "--json")
	wantCode(t, r, ExitFailure)
	e := jsonErr(t, "prompt --json", r)
	b, _ := json.Marshal(e["details"])
	if e["error_type"] != "validation_error" || !strings.Contains(string(b), `"field":"nmae"`) || !strings.Contains(string(b), `"suggestion":"name"`) {
		t.Errorf("prompt --json error: got %s, want a validation_error with details.fields for nmae", r.stderr)
	}

	r = runCLI(t, "prompt", "alpha", "greet", "name=Ann", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "prompt", r.stdout, "Hello, Ann")
}

func TestCallToUnavailableServerIsRecorded(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]string{"alpha": "ok", "dead": "exit"})
	r := runCLI(t, "call", "dead", "echo", "message=hi", "--config", cfg)
	wantCode(t, r, ExitFailure)
	wantContains(t, "call stderr", r.stderr, "dead")

	deadline := time.Now().Add(10 * time.Second)
	for {
		r = runCLI(t, "history", "--config", cfg, "--server", "dead", "--json")
		wantCode(t, r, ExitOK)
		if regexp.MustCompile(`"status": "error"`).MatchString(r.stdout) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history --server dead: got %s, want the failed call recorded", r.stdout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	wantContains(t, "history", r.stdout, `"tool": "echo"`, `"error_kind": "connection"`)
}

// TestCallIdentityFollowsDefaultUser: the CLI acts as gateway.default_user,
// the identity a local MCP client on the same configuration gets, so that
// both see the same user's history and tasks (issue 15 item 1).
func TestCallIdentityFollowsDefaultUser(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha")+"gateway:\n  default_user: ada\n")
	wantCode(t, runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=hi"), ExitOK)
	r := runCLI(t, "history", "--config", cfg, "--json")
	wantCode(t, r, ExitOK)
	var calls []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &calls); err != nil || len(calls) != 1 {
		t.Fatalf("history --json: got %s (%v), want one call", r.stdout, err)
	}
	if calls[0]["identity"] != "ada" {
		t.Errorf("the call's identity: got %v, want ada (gateway.default_user)", calls[0]["identity"])
	}
}

// TestUnavailableAdHocSaysHowToSeeIt: --json's suggestion for an ad hoc
// server that is not connected gives the servers command with the same
// --stdio, which is the one that shows it (a bare 'switchboard servers'
// shows the configuration's servers instead).
func TestUnavailableAdHocSaysHowToSeeIt(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", t.TempDir())
	r := runCLI(t, "tools", "--stdio", "false", "--json")
	wantCode(t, r, ExitFailure)
	wantContains(t, "tools --stdio false --json", r.stderr, `"run 'switchboard servers --stdio false' to see each server's state and last error"`)
}

// TestListingOfNothingButUnavailableServers: tools, prompts and resources
// with nothing to list because the servers are unavailable print their
// errors only, not an empty table's heading above them.
func TestListingOfNothingButUnavailableServers(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", t.TempDir())
	for _, cmd := range []string{"tools", "prompts", "resources"} {
		r := runCLI(t, cmd, "--stdio", "false")
		wantCode(t, r, ExitFailure)
		if r.stdout != "" {
			t.Errorf("%s of an unavailable server: stdout %q, want nothing", cmd, r.stdout)
		}
		wantContains(t, cmd+" stderr", r.stderr, "server adhoc is unavailable")
	}
}
