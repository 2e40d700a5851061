package tasks_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-mcp/switchboard/internal/fault"

	"github.com/switchboard-mcp/switchboard/internal/builtin/tasks"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLoadSettings(t *testing.T) {
	base := map[string]string{"SERVICE_AUTH_TOKEN": "tok", "FASTAPI_BASE_URL": "http://localhost:8000/"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "<unset>" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	defaults := tasks.Settings{ServiceAuthToken: "tok", BackendURL: "http://localhost:8000", LogLevel: "INFO", Port: 3000,
		BackendTimeout: 30 * time.Second, BackendMaxRetries: 2}
	tests := []struct {
		name    string
		env     map[string]string
		dotenv  string
		want    tasks.Settings
		wantBad []fault.FieldDetail
	}{
		{name: "defaults", env: base, want: defaults},
		{
			name: "everything set",
			env: with("MCP_LOG_LEVEL", "debug", "MCP_SERVER_PORT", "8080", "BACKEND_TIMEOUT", "2.5",
				"BACKEND_MAX_RETRIES", "0", "FASTAPI_BASE_URL", "https://tasks.example.com/api"),
			want: tasks.Settings{ServiceAuthToken: "tok", BackendURL: "https://tasks.example.com/api", LogLevel: "DEBUG",
				Port: 8080, BackendTimeout: 2500 * time.Millisecond, BackendMaxRetries: 0},
		},
		{
			name: "lower-case names",
			env:  map[string]string{"service_auth_token": "tok", "fastapi_base_url": "http://localhost:8000", "mcp_server_port": "9"},
			want: func() tasks.Settings { s := defaults; s.Port = 9; return s }(),
		},
		{
			name: "alias",
			env:  with("FASTAPI_BASE_URL", "<unset>", "TASKS_BACKEND_URL", "http://alias:1"),
			want: func() tasks.Settings { s := defaults; s.BackendURL = "http://alias:1"; return s }(),
		},
		{
			name:   "from .env, environment wins",
			env:    map[string]string{"MCP_SERVER_PORT": "4000"},
			dotenv: "# comment\nservice_auth_token=\"from file\"\nexport FASTAPI_BASE_URL='http://file:8000'\nMCP_SERVER_PORT=5000 # inline\nBACKEND_TIMEOUT = 1\n",
			want: tasks.Settings{ServiceAuthToken: "from file", BackendURL: "http://file:8000", LogLevel: "INFO", Port: 4000,
				BackendTimeout: time.Second, BackendMaxRetries: 2},
		},
		{
			name:   "environment alias beats .env canonical name",
			env:    map[string]string{"TASKS_BACKEND_URL": "http://env:1"},
			dotenv: "SERVICE_AUTH_TOKEN=t\nFASTAPI_BASE_URL=http://file:2\n",
			want: tasks.Settings{ServiceAuthToken: "t", BackendURL: "http://env:1", LogLevel: "INFO", Port: 3000,
				BackendTimeout: 30 * time.Second, BackendMaxRetries: 2},
		},
		{
			name: "all problems at once",
			env: map[string]string{"SERVICE_AUTH_TOKEN": "  ", "MCP_LOG_LEVEL": "TRACE", "MCP_SERVER_PORT": "70000",
				"BACKEND_TIMEOUT": "0", "BACKEND_MAX_RETRIES": "-1"},
			wantBad: []fault.FieldDetail{
				{Field: "SERVICE_AUTH_TOKEN", Message: "is required and must not be empty", Suggestion: "Set SERVICE_AUTH_TOKEN to the backend's service token"},
				{Field: "FASTAPI_BASE_URL", Message: "is required", Suggestion: "Set FASTAPI_BASE_URL to the backend's base URL, e.g. http://localhost:8000"},
				{Field: "MCP_LOG_LEVEL", Message: "must be one of DEBUG, INFO, WARNING, ERROR", ReceivedValue: "TRACE", Suggestion: "Use INFO unless you are debugging"},
				{Field: "MCP_SERVER_PORT", Message: "must be an integer between 1 and 65535", ReceivedValue: "70000", Suggestion: "Use a free TCP port such as 3000"},
				{Field: "BACKEND_TIMEOUT", Message: "must be greater than 0", ReceivedValue: "0", Suggestion: "Use a value such as 30 or 2.5"},
				{Field: "BACKEND_MAX_RETRIES", Message: "must be 0 or more", ReceivedValue: "-1", Suggestion: "Use 0 to disable retries"},
			},
		},
		{
			name: "malformed values",
			env:  with("FASTAPI_BASE_URL", "ftp://x", "BACKEND_TIMEOUT", "soon", "BACKEND_MAX_RETRIES", "1.5"),
			wantBad: []fault.FieldDetail{
				{Field: "FASTAPI_BASE_URL", Message: "must be a valid http or https URL", ReceivedValue: "ftp://x", Suggestion: "Use a URL such as http://localhost:8000"},
				{Field: "BACKEND_TIMEOUT", Message: "must be a number of seconds", ReceivedValue: "soon", Suggestion: "Use a value such as 30 or 2.5"},
				{Field: "BACKEND_MAX_RETRIES", Message: "must be an integer", ReceivedValue: "1.5", Suggestion: "Use a small whole number such as 2"},
			},
		},
		{
			name: "alias named in its own error",
			env:  with("FASTAPI_BASE_URL", "<unset>", "TASKS_BACKEND_URL", "localhost:8000"),
			wantBad: []fault.FieldDetail{
				{Field: "TASKS_BACKEND_URL", Message: "must be a valid http or https URL", ReceivedValue: "localhost:8000", Suggestion: "Use a URL such as http://localhost:8000"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".env")
			if tt.dotenv != "" {
				if err := os.WriteFile(path, []byte(tt.dotenv), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := tasks.LoadSettings(envOf(tt.env), path)
			if tt.wantBad == nil {
				if err != nil {
					t.Fatalf("LoadSettings: %v", err)
				}
				if d := cmp.Diff(tt.want, got); d != "" {
					t.Errorf("settings (-want +got):\n%s", d)
				}
				return
			}
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Kind != fault.Config {
				t.Fatalf("got error %v, want a config fault", err)
			}
			if d := cmp.Diff(tt.wantBad, fe.Fields); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
		})
	}
}

func TestLoadSettingsErrorText(t *testing.T) {
	_, err := tasks.LoadSettings(envOf(map[string]string{"FASTAPI_BASE_URL": "http://x", "BACKEND_TIMEOUT": "-2"}), "")
	want := "invalid task server settings; SERVICE_AUTH_TOKEN: is required and must not be empty; BACKEND_TIMEOUT: must be greater than 0"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestLoadSettingsBadDotenv(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".env")
	os.WriteFile(path, []byte("OK=1\nnot a pair\n"), 0o600)
	_, err := tasks.LoadSettings(nil, path)
	if err == nil || !strings.Contains(err.Error(), "line 2: want KEY=VALUE") {
		t.Errorf("got %v, want a line 2 error", err)
	}
}

func TestSlogLevel(t *testing.T) {
	for lv, want := range map[string]string{"DEBUG": "DEBUG", "INFO": "INFO", "WARNING": "WARN", "ERROR": "ERROR", "": "INFO"} {
		if got := (tasks.Settings{LogLevel: lv}).SlogLevel().String(); got != want {
			t.Errorf("SlogLevel(%q): got %s, want %s", lv, got, want)
		}
	}
}
