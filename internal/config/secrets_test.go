package config_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

func TestIsSecretKey(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"GITHUB_TOKEN", true},
		{"github_token", true},
		{"GITHUB_PERSONAL_ACCESS_TOKEN", true},
		{"accessToken", true},
		{"CLIENT_SECRET", true},
		{"clientSecret", true},
		{"DB_PASSWORD", true},
		{"MYSQL_PASSWD", true},
		{"GPG_PASSPHRASE", true},
		{"OPENAI_API_KEY", true},
		{"x-api-key", true},
		{"X-Api-Key", true},
		{"apiKey", true},
		{"APIKEY", true},
		{"Authorization", true},
		{"Proxy-Authorization", true},
		{"X-Auth-Token", true},
		{"BASIC_AUTH", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", true},
		{"Cookie", true},
		{"SSH_PRIVATE_KEY", true},
		{"privateKey", true},
		{"AWS_ACCESS_KEY_ID", true},
		{"AWS_SECRET_ACCESS_KEY", true},
		{"GITHUB_PAT", true},
		{"DB_PASS", true},
		{"DB_PWD", true},
		{"OPENAI_KEY", true},
		{"SENTRY_DSN", true},
		{"AZURE_CONNECTION_STRING", true},
		{"JWT_SIGNING_KEY", true},
		{"SESSION_KEY", true},
		{"MY_AUTHOR_TOKEN", true},

		{"PATH", false},
		{"HOME", false},
		{"PWD", false},
		{"OLDPWD", false},
		{"LANG", false},
		{"GIT_AUTHOR_NAME", false},
		{"GIT_AUTHOR_EMAIL", false},
		{"CERT_AUTHORITY", false},
		{"MAX_TOKENS", false},
		{"MAX_OUTPUT_TOKENS", false},
		{"TOKENIZER_PATH", false},
		{"PORT", false},
		{"LOG_LEVEL", false},
		{"Content-Type", false},
		{"Accept", false},
		{"KEYBOARD", false},
		{"PATTERN", false},
		{"PASSTHROUGH", false},
	}
	for _, tt := range tests {
		if got := config.IsSecretKey(tt.key); got != tt.want {
			t.Errorf("IsSecretKey(%q): got %v, want %v", tt.key, got, tt.want)
		}
	}
}

func TestRedacted(t *testing.T) {
	srv := stdioServer("a", "npx", "-y", "pkg", "--api-key", "k1", "--token=k2", "--port", "80", "DB_PASSWORD=k3", "postgres://u:pw@db/x", "Authorization: Bearer k4", "--dsn=postgres://u:pw@db/x")
	srv.Env = map[string]string{"GITHUB_TOKEN": "ghp", "MY_ODD_NAME": "odd", "PORT": "80", "DATABASE_URL": "postgres://u:pw@db/x"}
	srv.Secrets = []string{"GITHUB_TOKEN", "MY_ODD_NAME"}
	srv.Docker = &config.Docker{Image: "img", Command: []string{"--secret", "s"}, Ports: map[string]int{"80": 8080}}
	web := netServer("w", config.TransportHTTP, "https://u:pw@x.example.com/mcp?api_key=k5&page=2")
	web.Headers = map[string]string{"authorization": "Bearer k6", "Accept": "text/event-stream"}
	web.Secrets = []string{"Authorization"}
	cfg := &config.Config{Servers: []config.Server{srv, web}, AllowedCommands: []string{"npx"}}
	cfg.Hooks.List = []config.Hook{{Name: "h", On: "tool.after", Actions: []config.HookAction{
		{Type: "http", URL: "https://h.example.com/x?token=t1xxxx&page=2",
			Headers: map[string]string{"Authorization": "Bearer t2xxxx", "X-Api-Key": "t3xxxx", "Accept": "application/json"}},
		{Type: "command", Command: []string{"/bin/echo", "--token=t4xxxx", "plain"}},
	}}}

	got := cfg.Redacted()

	http, cmd := got.Hooks.List[0].Actions[0], got.Hooks.List[0].Actions[1]
	if want := "https://h.example.com/x?page=2&token=REDACTED"; http.URL != want {
		t.Errorf("hook URL: got %q, want %q", http.URL, want)
	}
	if diff := cmp.Diff(map[string]string{"Authorization": config.Redaction, "X-Api-Key": config.Redaction, "Accept": "application/json"}, http.Headers); diff != "" {
		t.Errorf("hook headers mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/bin/echo", "--token=" + config.Redaction, "plain"}, cmd.Command); diff != "" {
		t.Errorf("hook command mismatch (-want +got):\n%s", diff)
	}
	if a := cfg.Hooks.List[0].Actions[0]; a.Headers["Authorization"] != "Bearer t2xxxx" || a.URL != "https://h.example.com/x?token=t1xxxx&page=2" {
		t.Errorf("Redacted changed the original hook: %+v", a)
	}

	wantArgs := []string{"-y", "pkg", "--api-key", config.Redaction, "--token=" + config.Redaction, "--port", "80", "DB_PASSWORD=" + config.Redaction, "postgres://u:REDACTED@db/x", "Authorization: " + config.Redaction, "--dsn=" + config.Redaction}
	if diff := cmp.Diff(wantArgs, got.Servers[0].Args); diff != "" {
		t.Errorf("args mismatch (-want +got):\n%s", diff)
	}
	wantEnv := map[string]string{"GITHUB_TOKEN": config.Redaction, "MY_ODD_NAME": config.Redaction, "PORT": "80", "DATABASE_URL": "postgres://u:REDACTED@db/x"}
	if diff := cmp.Diff(wantEnv, got.Servers[0].Env); diff != "" {
		t.Errorf("env mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"--secret", config.Redaction}, got.Servers[0].Docker.Command); diff != "" {
		t.Errorf("docker command mismatch (-want +got):\n%s", diff)
	}
	wantHeaders := map[string]string{"authorization": config.Redaction, "Accept": "text/event-stream"}
	if diff := cmp.Diff(wantHeaders, got.Servers[1].Headers); diff != "" {
		t.Errorf("headers mismatch (-want +got):\n%s", diff)
	}
	if got, want := got.Servers[1].URL, "https://u:REDACTED@x.example.com/mcp?api_key=REDACTED&page=2"; got != want {
		t.Errorf("got URL %q, want %q", got, want)
	}

	// The original is untouched: Redacted made a deep copy.
	if got, want := cfg.Servers[0].Env["GITHUB_TOKEN"], "ghp"; got != want {
		t.Errorf("original env changed: got %q, want %q", got, want)
	}
	got.Servers[0].Docker.Ports["80"] = 1
	got.Servers[0].Secrets[0] = "x"
	got.AllowedCommands[0] = "x"
	if cfg.Servers[0].Docker.Ports["80"] != 8080 || cfg.Servers[0].Secrets[0] != "GITHUB_TOKEN" || cfg.AllowedCommands[0] != "npx" {
		t.Error("Redacted shares memory with the original")
	}
	if (*config.Config)(nil).Redacted() != nil {
		t.Error("nil.Redacted() is not nil")
	}
}
