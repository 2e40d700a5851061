package config_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// stdioServer returns a stdio server with every default applied.
func stdioServer(name, command string, args ...string) config.Server {
	s := baseServer(name)
	s.Transport = config.TransportStdio
	s.Command, s.Args, s.Encoding = command, args, "utf-8"
	return s
}

func netServer(name string, t config.Transport, url string) config.Server {
	s := baseServer(name)
	s.Transport, s.URL = t, url
	return s
}

func baseServer(name string) config.Server {
	return config.Server{
		Name: name, ConnectTimeout: config.DefaultConnectTimeout, RequestTimeout: config.DefaultRequestTimeout,
		MaxRetries: config.DefaultMaxRetries, TerminateOnClose: true, Enabled: true,
		LoadTools: true, LoadPrompts: true, LoadResources: true,
	}
}

func TestParseNative(t *testing.T) {
	cfg, err := config.Load("testdata/formats/native.yaml", config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	d := config.Defaults{
		RequestTimeout: 45 * time.Second, ConnectTimeout: 20 * time.Second, MaxRetries: 3,
		DiscoveryTTL: 10 * time.Minute,
		Health:       config.Health{PingInterval: time.Minute, PingTimeout: 5 * time.Second, Backoff: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, MaxFailures: 5},
	}
	withDefaults := func(s config.Server) config.Server {
		s.ConnectTimeout, s.RequestTimeout, s.MaxRetries = d.ConnectTimeout, d.RequestTimeout, d.MaxRetries
		return s
	}
	github := withDefaults(stdioServer("github", "npx", "-y", "@modelcontextprotocol/server-github"))
	github.Description = "GitHub issues and pull requests"
	github.Env = map[string]string{
		"GITHUB_TOKEN": "ghp_secret",
		"BASE_URL":     "https://api.example.com",
		"API_URL":      "https://api.example.com/v1",
		"QUOTED":       "line1\nline2 https://api.example.com",
		"LITERAL":      "${NOT_EXPANDED} $$",
		"EMPTY":        "",
		"SPACED":       "value with spaces",
		"ESCAPED":      `a $HOME "q"`,
		"MULTI":        "first\nsecond",
		"FROM_PROCESS": "from-process",
	}
	github.Cwd = config.Abs(t, "testdata/work")
	github.Secrets = []string{"GITHUB_TOKEN", "MY_ODD_NAME"}
	github.MaxConcurrent, github.RedactResults = 4, true
	local := withDefaults(stdioServer("local", "/opt/bin/my-server", "--port", "0"))
	local.InheritEnv, local.LoadResources = true, false
	remote := withDefaults(netServer("remote", config.TransportHTTP, "https://mcp.example.com/mcp"))
	remote.Headers = map[string]string{"Authorization": "Bearer tok_secret"}
	remote.ConnectTimeout, remote.RequestTimeout = 10*time.Second, 90*time.Second
	remote.TerminateOnClose, remote.Enabled = false, false
	remote.Secrets = []string{"Authorization"}
	events := withDefaults(netServer("events", config.TransportSSE, "https://mcp.example.com/sse"))
	events.SSEReadTimeout = 5 * time.Minute
	live := withDefaults(netServer("live", config.TransportWebSocket, "wss://mcp.example.com/ws"))
	gh := withDefaults(stdioServer("gh-docker", "docker", "run", "--rm", "-i", "--name", "gh", "-p", "127.0.0.1:5353:53/udp", "-p", "127.0.0.1:9090:8080", "-e", "GITHUB_TOKEN", "-e", "PRICE", "mcp/github", "serve", "--stdio"))
	gh.Env = map[string]string{"GITHUB_TOKEN": "ghp_secret", "PRICE": "$5"}
	gh.Docker = &config.Docker{Image: "mcp/github", ContainerName: "gh", Command: []string{"serve", "--stdio"}, Ports: map[string]int{"8080": 9090, "53/udp": 5353}}
	gh.Secrets = []string{"GITHUB_TOKEN"}
	want := &config.Config{
		Servers:         []config.Server{github, local, remote, events, live, gh},
		Defaults:        d,
		Limits:          config.Limits{MaxConcurrent: 10, QueueWait: 2 * time.Second, MaxQueue: 50, SessionLimit: 500, MaxOutputBytes: 512 << 10},
		History:         config.History{Store: config.Abs(t, "testdata/history/calls.db"), RecordValues: true, Keep: 500},
		Gateway:         config.DefaultGateway(),
		Hooks:           config.Hooks{Settings: config.DefaultHookSettings()},
		LLM:             config.DefaultLLM(),
		Agent:           config.DefaultAgent(),
		AllowedCommands: []string{"npx", "uvx", "docker", "node", "/opt/bin/my-server"},
		Source:          "testdata/formats/native.yaml",
		Format:          config.FormatNative,
	}
	if diff := cmp.Diff(want, cfg, config.IgnorePos); diff != "" {
		t.Errorf("config mismatch (-want +got):\n%s", diff)
	}
	if got, want := cfg.Servers[0].Pos, (config.Pos{File: "testdata/formats/native.yaml", Line: 25, Col: 5}); got != want {
		t.Errorf("got position %v, want %v", got, want)
	}
}

func TestParseForeignFormats(t *testing.T) {
	tools := func(s config.Server, desc string) config.Server {
		s.Description, s.RequestTimeout = desc, 60*time.Second
		return s
	}
	claudeGH := stdioServer("github", "npx", "-y", "@modelcontextprotocol/server-github")
	claudeGH.Env = map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret"}
	claudeGH.Secrets = []string{"GITHUB_PERSONAL_ACCESS_TOKEN"}
	claudeRemote := netServer("remote", config.TransportSSE, "https://mcp.example.com/sse")
	claudeRemote.Headers = map[string]string{"Authorization": "Bearer tok_secret"}
	claudeRemote.Secrets = []string{"Authorization"}
	claudeOld := stdioServer("old", "uvx", "mcp-server-time")
	claudeOld.Enabled = false

	toolsRemote := tools(netServer("remote_api", config.TransportSSE, "https://mcp.example.com/sse"), "my-mcp-server")
	toolsRemote.Headers = map[string]string{"Authorization": "Bearer tok_secret"}
	toolsRemote.Secrets = []string{"Authorization"}
	toolsRemote.SSEReadTimeout = 2 * time.Minute
	toolsStream := tools(netServer("streaming_api", config.TransportHTTP, "https://mcp.example.com/stream"), "streaming-server")
	toolsStream.RequestTimeout = 90 * time.Second

	tests := []struct {
		file         string
		format       config.Format
		servers      []config.Server
		warnings     []string
		mutateEnvVar string
	}{
		{
			file:    "testdata/formats/claude.json",
			format:  config.FormatClaude,
			servers: []config.Server{claudeGH, claudeRemote, netServer("stream", config.TransportHTTP, "https://mcp.example.com/mcp"), claudeOld},
			warnings: []string{
				"testdata/formats/claude.json:2:3: globalShortcut: ignored: Switchboard reads only mcpServers from this file",
				"testdata/formats/claude.json:11:78: mcpServers.old.autoApprove: no effect: Switchboard does not ask before tool calls, so there is nothing to approve; the client that calls through it asks",
			},
		},
		{
			file:   "testdata/formats/tools.yaml",
			format: config.FormatToolsV1,
			servers: []config.Server{
				tools(stdioServer("filesystem", "npx", "-y", "@modelcontextprotocol/server-filesystem"), "@modelcontextprotocol/server-filesystem"),
				toolsRemote,
				tools(netServer("realtime", config.TransportWebSocket, "wss://mcp.example.com/ws"), "realtime-server"),
				toolsStream,
			},
			warnings: []string{
				"testdata/formats/tools.yaml:1:1: name: ignored: Switchboard reads only tools from this file",
				"testdata/formats/tools.yaml:2:1: model: ignored: Switchboard reads only tools from this file",
				`testdata/formats/tools.yaml:5:11: tools.search.type: ignored: only type: mcp tools are MCP servers (this one is "vectorstore")`,
				"testdata/formats/tools.yaml:12:5: tools.filesystem.config: ignored: server-specific config has no effect in Switchboard; pass settings to the server through args or env",
			},
		},
		{
			file:   "testdata/formats/vscode-settings.json",
			format: config.FormatVSCode,
			servers: []config.Server{
				stdioServer("time", "uvx", "mcp-server-time"),
				netServer("docs", config.TransportHTTP, "https://docs.example.com/mcp"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			cfg, err := config.Load(tt.file, config.TestOpts)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Format; got != tt.format {
				t.Errorf("got format %q, want %q", got, tt.format)
			}
			if diff := cmp.Diff(tt.servers, cfg.Servers, config.IgnorePos); diff != "" {
				t.Errorf("servers mismatch (-want +got):\n%s", diff)
			}
			var warnings []string
			for _, w := range cfg.Warnings {
				warnings = append(warnings, w.String())
			}
			if diff := cmp.Diff(tt.warnings, warnings); diff != "" {
				t.Errorf("warnings mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseVSCode(t *testing.T) {
	// The .vscode/mcp.json sample uses an input variable, which Parse
	// rejects; without it the file parses.
	data := `{
  // comment
  "inputs": [],
  "servers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}"},
      "envFile": "${workspaceFolder}/envfiles/basic.env", /* comment */
    },
    "events": {"url": "https://x.example.com/v1/sse"},
    "ws": {"url": "wss://x.example.com/ws", "type": "ws"}
  }
}`
	cfg, err := config.Parse("testdata/.vscode/mcp.json", []byte(data), config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	gh := stdioServer("github", "npx", "-y", "@modelcontextprotocol/server-github")
	gh.Env = map[string]string{
		"GITHUB_TOKEN": "ghp_secret", "BASE_URL": "https://api.example.com", "API_URL": "https://api.example.com/v1",
		"QUOTED": "line1\nline2 https://api.example.com", "LITERAL": "${NOT_EXPANDED} $$", "EMPTY": "",
		"SPACED": "value with spaces", "ESCAPED": `a $HOME "q"`, "MULTI": "first\nsecond", "FROM_PROCESS": "from-process",
	}
	gh.Secrets = []string{"GITHUB_TOKEN"}
	want := []config.Server{gh, netServer("events", config.TransportSSE, "https://x.example.com/v1/sse"), netServer("ws", config.TransportWebSocket, "wss://x.example.com/ws")}
	if diff := cmp.Diff(want, cfg.Servers, config.IgnorePos); diff != "" {
		t.Errorf("servers mismatch (-want +got):\n%s", diff)
	}
	if got, want := cfg.Format, config.FormatVSCode; got != want {
		t.Errorf("got format %q, want %q", got, want)
	}
}

func TestDefault(t *testing.T) {
	want := &config.Config{Defaults: config.Defaults{
		RequestTimeout: 30 * time.Second, ConnectTimeout: 30 * time.Second, MaxRetries: 2,
		DiscoveryTTL: 5 * time.Minute,
		Health:       config.Health{PingInterval: 30 * time.Second, PingTimeout: 10 * time.Second, Backoff: []time.Duration{time.Second, 5 * time.Second, 15 * time.Second}, MaxFailures: 3},
	},
		Limits:          config.Limits{MaxConcurrent: 25, QueueWait: config.QueueWaitCallTimeout, MaxQueue: 1000, SessionLimit: -1, MaxOutputBytes: 1 << 20},
		History:         config.History{Store: "", RecordValues: false, Keep: 10000},
		Gateway:         config.DefaultGateway(),
		Hooks:           config.Hooks{Settings: config.DefaultHookSettings()},
		LLM:             config.DefaultLLM(),
		Agent:           config.DefaultAgent(),
		AllowedCommands: []string{"npx", "uvx", "docker"}, Format: config.FormatNative}
	if diff := cmp.Diff(want, config.Default()); diff != "" {
		t.Errorf("Default mismatch (-want +got):\n%s", diff)
	}
	// An empty file resolves to the same, apart from its source.
	cfg, err := config.Parse("empty.yaml", nil, config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Source = ""
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("empty file mismatch (-want +got):\n%s", diff)
	}
}

func TestYAMLFeatures(t *testing.T) {
	src := `x-common: &common
  command: npx
  env: {A: "1"}
servers:
  - name: a
    <<: *common
    args: [-y, pkg-a]
  - name: b
    <<: *common
    env: {B: "2"}
    args: !!seq [-y, !!str 123]
    description: |
      multi
      line
`
	cfg, err := config.Parse("t.yaml", []byte(src), config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	a := stdioServer("a", "npx", "-y", "pkg-a")
	a.Env = map[string]string{"A": "1"}
	b := stdioServer("b", "npx", "-y", "123")
	b.Env = map[string]string{"B": "2"}
	b.Description = "multi\nline\n"
	if diff := cmp.Diff([]config.Server{a, b}, cfg.Servers, config.IgnorePos); diff != "" {
		t.Errorf("servers mismatch (-want +got):\n%s", diff)
	}
}

func TestDurations(t *testing.T) {
	tests := []struct {
		value string
		want  time.Duration
	}{
		{"30s", 30 * time.Second},
		{"1m30s", 90 * time.Second},
		{"30", 30 * time.Second},
		{`"45"`, 45 * time.Second},
		{"1.5", 1500 * time.Millisecond},
		{"500ms", 500 * time.Millisecond},
	}
	for _, tt := range tests {
		src := "servers:\n  - name: a\n    command: npx\n    timeout: " + tt.value + "\n"
		cfg, err := config.Parse("t.yaml", []byte(src), config.TestOpts)
		if err != nil {
			t.Errorf("timeout: %s: %v", tt.value, err)
			continue
		}
		if got := cfg.Servers[0].ConnectTimeout; got != tt.want {
			t.Errorf("timeout: %s: got %v, want %v", tt.value, got, tt.want)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := config.Load("testdata/does-not-exist.yaml", config.TestOpts)
	if err == nil {
		t.Fatal("Load succeeded, want an error")
	}
	if got, want := fault.KindOf(err), fault.Config; got != want {
		t.Errorf("got kind %q, want %q", got, want)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("XDG_CONFIG_HOME", dir+"/xdg")
	t.Setenv("HOME", dir+"/home")
	got, err := config.Find("", nil)
	if err != nil || got != "" {
		t.Fatalf("Find() = %q, %v; want \"\", nil", got, err)
	}
	user := config.WriteFile(t, dir, "xdg/switchboard/switchboard.yaml", "servers: []\n")
	if got, err := config.Find("", nil); err != nil || got != user {
		t.Errorf("Find() = %q, %v; want %q, nil", got, err, user)
	}
	config.WriteFile(t, dir, "switchboard.yaml", "servers: []\n")
	if got, err := config.Find("", nil); err != nil || got != "switchboard.yaml" {
		t.Errorf("Find() = %q, %v; want %q, nil", got, err, "switchboard.yaml")
	}
}

func TestNilLookupUsesProcessEnvironment(t *testing.T) {
	t.Setenv("SWITCHBOARD_TEST_VAR", "from-os")
	cfg, err := config.Parse("t.yaml", []byte("servers:\n  - name: a\n    command: npx\n    args: [\"${SWITCHBOARD_TEST_VAR}\"]\n"), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Servers[0].Args[0], "from-os"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
