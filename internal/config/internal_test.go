package config

// The tests of the package's internals: the rest of its tests are
// black-box (package config_test).

import (
	"testing"
	"time"
)

func TestDetectFormat(t *testing.T) {
	tests := []struct {
		src  string
		want Format
	}{
		{``, FormatNative},
		{`servers: []`, FormatNative},
		{`{"mcpServers": {}}`, FormatClaude},
		{`{"servers": {}}`, FormatVSCode},
		{`{"mcp": {"servers": {}}, "editor.fontSize": 12}`, FormatVSCode},
		{`tools: []`, FormatToolsV1},
		{"defaults: {}\nservers: {}", FormatNative}, // native keys win; servers must then be a list
		{`{"limits": {}, "servers": {}}`, FormatNative},
		{`{"history": {}, "mcpServers": {}}`, FormatNative},
		{`{"mcpServers": {"a": {"httpUrl": "https://x"}}}`, FormatGemini},
		{`{"mcpServers": {"a": {"command": "x", "transportType": "stdio"}}}`, FormatCline},
		{`{"mcpServers": {"a": {"url": "https://x", "type": "streamableHttp"}}}`, FormatCline},
		{`{"mcpServers": {}, "projects": {}}`, FormatClaudeCode},
		{`{"context_servers": {}, "theme": "One Dark"}`, FormatZed},
		{"name: x\nversion: 0.0.1\nschema: v1\nmcpServers: []", FormatContinue},
		{"model = \"o3\"\n[mcp_servers.a]\ncommand = \"npx\"\n", FormatCodex},
		{`{"theme": "dark"}`, formatUnknown},
		{`{"servres": []}`, FormatNative}, // a misspelt native key
	}
	for _, tt := range tests {
		ps := &problems{}
		root := parseTree("t", []byte(tt.src), ps)
		if got := detectFormat(root, "t"); got != tt.want {
			t.Errorf("detectFormat(%q): got %q, want %q", tt.src, got, tt.want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	tests := map[int64]string{0: "0B", 100: "100B", 1000: "1000B", 1 << 10: "1KiB", 1536: "1536B", 1 << 20: "1MiB", 1 << 30: "1GiB", 3 << 30: "3GiB", 1<<30 + 1<<20: "1025MiB"}
	for in, want := range tests {
		if got := formatSize(in); got != want {
			t.Errorf("formatSize(%d): got %q, want %q", in, got, want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	tests := map[string]string{"30s": "30s", "5m": "5m", "1h": "1h", "1h30m": "1h30m", "1m30s": "1m30s", "500ms": "500ms", "0s": "0s"}
	for in, want := range tests {
		d, err := parseDurationForTest(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%s): got %q, want %q", in, got, want)
		}
	}
}

func TestQuoteYAML(t *testing.T) {
	tests := map[string]string{
		"npx": "npx", "/opt/bin/x": "/opt/bin/x", "-y": `"-y"`, "@scope/pkg": `"@scope/pkg"`,
		"true": `"true"`, "null": `"null"`, "8080": `"8080"`, "": `""`, "a b": `"a b"`,
		"https://x": `"https://x"`, "a\nb": `"a\nb"`, "<tag>": `"<tag>"`,
	}
	for in, want := range tests {
		if got := quoteYAML(in); got != want {
			t.Errorf("quoteYAML(%q): got %s, want %s", in, got, want)
		}
	}
}

func parseDurationForTest(s string) (time.Duration, error) { return time.ParseDuration(s) }
