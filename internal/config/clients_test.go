package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// clientEnv is the environment the client files below refer to.
var clientEnv = map[string]string{
	"GITHUB_TOKEN": "ghp", "LINEAR_TOKEN": "lin", "API_KEY": "k", "DB_CONNECTION_STRING": "dsn",
	"EXTERNAL_API_KEY": "ext", "HTTP_TOKEN": "ht", "REMOTE_TOKEN": "rt", "SUPABASE_TOKEN": "sb",
	"CONTEXT7_API_KEY": "c7", "FIGMA_OAUTH_TOKEN": "fo", "FIGMA_TEAM": "ft",
	"SWITCHBOARD_INPUT_PERPLEXITY_KEY": "pk", "SWITCHBOARD_INPUT_GH": "gh",
}

func clientLookup(k string) (string, bool) {
	v, ok := clientEnv[k]
	return v, ok
}

// summary renders a server on one line, for comparing what a file loads.
func summary(s config.Server) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", s.Name, s.Transport)
	if s.Command != "" {
		fmt.Fprintf(&b, " %s", strings.Join(append([]string{s.Command}, s.Args...), " "))
	}
	if s.URL != "" {
		fmt.Fprintf(&b, " %s", s.URL)
	}
	for _, k := range sortedKeys(s.Env) {
		fmt.Fprintf(&b, " env:%s=%s", k, s.Env[k])
	}
	for _, k := range sortedKeys(s.Headers) {
		fmt.Fprintf(&b, " header:%s=%s", k, s.Headers[k])
	}
	if s.Cwd != "" {
		fmt.Fprintf(&b, " cwd:%s", s.Cwd)
	}
	if s.ConnectTimeout != config.DefaultConnectTimeout {
		fmt.Fprintf(&b, " connect:%s", s.ConnectTimeout)
	}
	if s.RequestTimeout != config.DefaultRequestTimeout {
		fmt.Fprintf(&b, " request:%s", s.RequestTimeout)
	}
	if !s.Enabled {
		b.WriteString(" disabled")
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestClientFiles loads a file shaped like each client's own, as the user
// has it (trusted, since it names its own commands), and checks what
// every server becomes and which keys are warned about. Each file then
// goes through config import, and the native result must load to the same
// servers: import and load agree.
func TestClientFiles(t *testing.T) {
	testdata, err := filepath.Abs("testdata/clients")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file     string
		format   config.Format
		servers  []string
		warnings []string // substrings, one per warning, in order
		// importEnv is set, for the import, beyond clientEnv: what the
		// import's notes ask the user to set.
		importEnv map[string]string
	}{
		{
			file:   "cursor/.cursor/mcp.json",
			format: config.FormatClaude,
			servers: []string{
				"github stdio npx -y @modelcontextprotocol/server-github env:GITHUB_PERSONAL_ACCESS_TOKEN=ghp",
				"notes stdio python <testdata>/cursor/tools/notes_server.py --home <home>/notes env:NOTES_DB=notes.sqlite",
				"linear sse https://mcp.linear.app/sse header:Authorization=Bearer lin",
				"figma http http://127.0.0.1:3845/mcp",
			},
			warnings: []string{"mcpServers.figma.auth: not honoured"},
		},
		{
			file:   "claude-desktop/claude_desktop_config.json",
			format: config.FormatClaude,
			servers: []string{
				"filesystem stdio npx -y @modelcontextprotocol/server-filesystem /Users/me/Desktop /Users/me/Downloads",
				"time stdio uvx mcp-server-time --local-timezone=Europe/Paris",
				"weather stdio /usr/local/bin/uv --directory /Users/me/src/weather run weather.py env:OPENWEATHER_API_KEY=sk-weather",
				"my-server stdio node /Users/me/src/srv/build/index.js",
				"github stdio docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server env:GITHUB_PERSONAL_ACCESS_TOKEN=ghp_literal",
			},
			warnings: []string{
				`mcpServers["my server"]: name "my server" may only contain letters, digits, _ and -, so the server is named "my-server" here`,
				"globalShortcut: ignored",
			},
		},
		{
			file:   "claude-code/.mcp.json",
			format: config.FormatClaude,
			servers: []string{
				"api http https://api.example.com/mcp header:Authorization=Bearer k",
				"events sse https://events.example.com/sse",
				"db stdio /usr/local/bin/db-mcp --dsn postgres://localhost/dev env:LOG_LEVEL=info",
			},
		},
		{
			file:   "claude-code/.claude.json",
			format: config.FormatClaudeCode,
			servers: []string{
				"sentry http https://mcp.sentry.dev/mcp",
				"memory stdio uvx mcp-memory-local",
				"shopdb stdio python3 -m shopdb_mcp",
			},
			warnings: []string{
				"projects: the servers of 1 other project(s) are left out",
				`projects["/home/me/src/shop"].mcpServers.memory: replaces the user-level server "memory" for this project`,
			},
		},
		{
			file:   "cline/cline_mcp_settings.json",
			format: config.FormatCline,
			servers: []string{
				"brave-search stdio npx -y @modelcontextprotocol/server-brave-search env:BRAVE_API_KEY=brave-key request:2m0s",
				"old stdio uvx mcp-server-fetch disabled",
				"remote-sse sse https://sse.example.com/events",
				"remote-http http https://http.example.com/mcp header:X-Key=k request:5m0s",
				"legacy-http http https://legacy.example.com/mcp",
				"default-sse sse https://default.example.com/mcp",
			},
			warnings: []string{
				"mcpServers.brave-search.autoApprove: no effect",
				"mcpServers.old.autoApprove: no effect",
				"mcpServers.remote-http.timeout: a request timeout of 1h is above Switchboard's most, 5m, which is used",
			},
		},
		{
			file:   "windsurf/mcp_config.json",
			format: config.FormatClaude,
			servers: []string{
				"github stdio npx -y @modelcontextprotocol/server-github env:GITHUB_PERSONAL_ACCESS_TOKEN=ghp",
				"figma http https://figma.example.com/mcp header:Authorization=Bearer figma-token",
			},
			warnings: []string{"mcpServers.figma.disabledTools: not honoured: Switchboard offers every tool"},
		},
		{
			file:   "zed/settings.json",
			format: config.FormatZed,
			servers: []string{
				"fetch stdio uvx mcp-server-fetch",
				"everything stdio npx -y @modelcontextprotocol/server-everything env:DEBUG=1",
				"remote http https://remote.example.com/mcp header:Authorization=Bearer rt request:1m30s",
				"off stdio npx -y off-mcp disabled",
			},
			warnings: []string{
				"context_servers.everything.settings: no effect",
				"context_servers.postgres: ignored: the server is provided by a Zed extension",
			},
		},
		{
			file:   "continue/config.yaml",
			format: config.FormatContinue,
			servers: []string{
				"SQLite-MCP stdio npx -y mcp-sqlite /home/me/db.sqlite env:SUPABASE_TOKEN=sb",
				"Remote http https://remote.example.com/mcp header:Authorization=Bearer from-dotenv connect:20s",
			},
			warnings: []string{
				`mcpServers["SQLite MCP"]: name "SQLite MCP" may only contain`,
				"mcpServers.Remote.requestOptions.verifySsl: not honoured",
				`mcpServers[2].uses: ignored: "anthropic/memory-mcp" is a block on the Continue hub`,
			},
			// Read from continue/.env by the client format; a native file
			// takes it from the environment, as the import's note says.
			importEnv: map[string]string{"REMOTE_KEY": "from-dotenv"},
		},
		{
			file:     "continue/.continue/mcpServers/playwright-mcp.yaml",
			format:   config.FormatContinue,
			servers:  []string{"Browser-search stdio npx @playwright/mcp@latest"},
			warnings: []string{`so the server is named "Browser-search" here`},
		},
		{
			file:   "gemini/.gemini/settings.json",
			format: config.FormatGemini,
			servers: []string{
				"pythonTools stdio python -m my_mcp_server --port 8080 env:API_KEY=ext env:DATABASE_URL=dsn cwd:<testdata>/gemini/tools request:15s",
				"httpServer http https://http.example.com/mcp header:Authorization=Bearer ht request:5m0s",
				"sseServer sse https://sse.example.com/mcp",
				"experimental stdio npx -y experimental-mcp disabled",
			},
			warnings: []string{
				"mcpServers.pythonTools.trust: no effect",
				"mcpServers.pythonTools.includeTools: not honoured",
				"mcpServers.pythonTools.excludeTools: not honoured",
				"mcpServers.httpServer.timeout: a request timeout of 10m is above Switchboard's most, 5m, which is used",
				"mcpServers.experimental: disabled: mcp.excluded lists it",
			},
		},
		{
			file:   "codex/config.toml",
			format: config.FormatCodex,
			servers: []string{
				"context7 stdio npx -y @upstash/context7-mcp env:CONTEXT7_API_KEY=c7 env:LOG_LEVEL=debug connect:20s request:1m30s",
				"figma http https://mcp.figma.com/mcp header:Authorization=Bearer fo header:X-Figma-Region=us-east-1 header:X-Team=ft",
				"off stdio uvx mcp-server-time connect:1.5s disabled",
			},
			warnings: []string{"mcp_servers.figma.enabled_tools: not honoured"},
		},
		{
			file:   "vscode/.vscode/mcp.json",
			format: config.FormatVSCode,
			servers: []string{
				"Perplexity stdio npx -y server-perplexity-ask env:DEBUG=1 env:PERPLEXITY_API_KEY=pk env:REGION=eu",
				"fetch http https://fetch.example.com/mcp",
				"events sse https://events.example.com/stream",
				"dev-server stdio node <testdata>/vscode/build/index.js",
			},
			warnings: []string{"servers.dev-server.dev: not honoured"},
		},
		{
			file:    "vscode-user/settings.json",
			format:  config.FormatVSCode,
			servers: []string{"github http https://api.githubcopilot.com/mcp/ header:Authorization=Bearer gh"},
		},
	}
	home, _ := os.UserHomeDir()
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(testdata, tt.file)
			state := t.TempDir()
			if _, err := config.Trust(state, path); err != nil {
				t.Fatal(err)
			}
			opts := config.Options{LookupEnv: clientLookup, StateDir: state, WorkDir: "/home/me/src/shop/sub"}
			cfg, err := config.Load(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Format != tt.format {
				t.Errorf("got format %q, want %q", cfg.Format, tt.format)
			}
			var got []string
			for _, s := range cfg.Servers {
				line := strings.ReplaceAll(summary(s), testdata, "<testdata>")
				if home != "" {
					line = strings.ReplaceAll(line, home, "<home>")
				}
				got = append(got, line)
			}
			if diff := cmp.Diff(tt.servers, got); diff != "" {
				t.Errorf("servers mismatch (-want +got):\n%s", diff)
			}
			var warnings []string
			for _, w := range cfg.Warnings {
				warnings = append(warnings, w.String())
			}
			if len(warnings) != len(tt.warnings) {
				t.Errorf("got %d warnings, want %d:\n%s", len(warnings), len(tt.warnings), strings.Join(warnings, "\n"))
			}
			for i := range min(len(warnings), len(tt.warnings)) {
				if !strings.Contains(warnings[i], tt.warnings[i]) {
					t.Errorf("warning %d: got %q, want it to contain %q", i, warnings[i], tt.warnings[i])
				}
			}

			// config import writes the same servers in the native format.
			out, err := config.Import(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			native := filepath.Join(t.TempDir(), config.FileName)
			if err := os.WriteFile(native, out, 0o600); err != nil {
				t.Fatal(err)
			}
			importOpts := opts
			importOpts.LookupEnv = func(k string) (string, bool) {
				if v, ok := tt.importEnv[k]; ok {
					return v, true
				}
				return clientLookup(k)
			}
			imported, err := config.Load(native, importOpts)
			if err != nil {
				t.Fatalf("loading the import: %v\n%s", err, out)
			}
			var again []string
			for _, s := range imported.Servers {
				// Codex passes an env_vars variable only when it is set;
				// the import writes ${NAME:-}, empty when unset, and says
				// so in a note.
				for k, v := range s.Env {
					if v == "" && strings.Contains(string(out), "# note: "+s.Name+"."+k+" is now ${"+k+":-}") {
						delete(s.Env, k)
					}
				}
				line := strings.ReplaceAll(summary(s), testdata, "<testdata>")
				if home != "" {
					line = strings.ReplaceAll(line, home, "<home>")
				}
				again = append(again, line)
			}
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("the import loads differently (-load +import):\n%s\n%s", diff, out)
			}
		})
	}
}

// TestUnsupportedFormats: a file in no supported format says which
// formats are supported, not that it is invalid YAML; a broken file in a
// supported format keeps its line and column.
func TestUnsupportedFormats(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"settings.json", `{"theme": "dark", "editor.fontSize": 12}`, []string{
			`settings.json:1:2: settings.json is in no format Switchboard reads (its top-level keys are "theme", "editor.fontSize"); it reads: switchboard.yaml`,
			"Codex config.toml ([mcp_servers.NAME])",
		}},
		{"setup.cfg", "[metadata]\nname = demo\n", []string{"setup.cfg is in no format Switchboard reads", "Zed settings.json"}},
		{"notes.txt", "key: [unclosed\n  - : :\n", []string{"notes.txt is in no format Switchboard reads (it is not JSON, TOML or YAML)"}},
		{"config.toml", "[mcp_servers.a]\ncommand = \n", []string{"config.toml:2:11: invalid TOML: "}},
		{"config.toml", "[mcp_servers.a]\ncommand = \"npx\"\ncommand = \"uvx\"\n", []string{"config.toml:3:1: invalid TOML: "}},
		{"config.toml", "[mcp_servers.a]\ncommand = \"npx\"\nargs = \"-y\"\n", []string{"config.toml:3:8: mcp_servers.a.args: must be a list of strings, not a string"}},
		{"config.yaml", "mcpServers:\n  - name: a\n    command: npx\n    args: {x: 1}\n", []string{"config.yaml:4:12: mcpServers.a.args: must be a list of strings, not a mapping"}},
		{"settings.json", "{\n  \"context_servers\": {\n    \"a\": {\"command\": \"npx\", \"args\": \"x\",},\n  },\n}", []string{"settings.json:3:37: context_servers.a.args: must be a list of strings, not a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse(tt.name, []byte(tt.src), config.Options{})
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %v\nwant it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "invalid YAML") {
				t.Errorf("got %v, which blames YAML", err)
			}
		})
	}
}

// TestEveryNativeKeyIsNative: a switchboard.yaml that holds any one of the
// native top-level keys alone (telemetry: or audit: in a file of their
// own, say) is read as switchboard.yaml, not refused as a file in no
// format Switchboard reads.
func TestEveryNativeKeyIsNative(t *testing.T) {
	ft := reflect.TypeOf(schema.File{})
	for i := range ft.NumField() {
		key, _, _ := strings.Cut(ft.Field(i).Tag.Get("json"), ",")
		value := "{}"
		if ft.Field(i).Type.Kind() == reflect.Slice {
			value = "[]"
		}
		t.Run(key, func(t *testing.T) {
			cfg, err := config.Parse("switchboard.yaml", []byte(key+": "+value+"\n"), config.Options{})
			if err != nil {
				t.Fatalf("a file of %s: %s alone: got %v, want it read as switchboard.yaml", key, value, err)
			}
			if cfg.Format != config.FormatNative {
				t.Errorf("a file of %s: %s alone: got format %q, want %q", key, value, cfg.Format, config.FormatNative)
			}
		})
	}
}
