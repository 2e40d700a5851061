package config_test

import (
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestImportSkipsSwitchboardsOwnEntry: a client's file that `switchboard
// client connect` wrote into holds Switchboard's own entry, which reading
// skips. Importing the file writes every other server with its own
// fields. Before, the importer paired the file's servers with the read
// ones by position: the entry last made it panic (index out of range),
// and in the middle it gave the servers after it the fields of the next.
func TestImportSkipsSwitchboardsOwnEntry(t *testing.T) {
	dir := t.TempDir()
	own := `"switchboard": {"command": "/opt/bin/switchboard", "args": ["serve", "--stdio", "--config", "/home/me/switchboard.yaml"]}`
	for _, tc := range []struct{ name, servers string }{
		{"last", `"a": {"command": "npx", "args": ["server-a"]}, "b": {"command": "uvx", "args": ["server-b"]}, ` + own},
		{"middle", `"a": {"command": "npx", "args": ["server-a"]}, ` + own + `, "b": {"command": "uvx", "args": ["server-b"]}`},
		{"only", own},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := config.WriteFile(t, dir, tc.name+".json", `{"mcpServers": {`+tc.servers+`}}`)
			out, err := config.Import(p, config.TestOpts)
			if err != nil {
				t.Fatal(err)
			}
			text := string(out)
			if !strings.Contains(text, `"switchboard" is Switchboard's own gateway`) || strings.Contains(text, "/opt/bin/switchboard") {
				t.Errorf("import:\n%s\nwant the own entry left out, with a note", text)
			}
			if tc.name == "only" {
				if !strings.Contains(text, "servers: []") {
					t.Errorf("import:\n%s\nwant no servers", text)
				}
			} else {
				for _, want := range []string{"- name: a\n    transport: stdio\n    command: npx\n    args: [server-a]\n", "- name: b\n    transport: stdio\n    command: uvx\n    args: [server-b]\n"} {
					if !strings.Contains(text, want) {
						t.Errorf("import:\n%s\nwant %q", text, want)
					}
				}
			}
			if _, err := config.Parse("switchboard.yaml", out, config.TestOpts); err != nil {
				t.Errorf("the import does not load: %v", err)
			}
		})
	}
}
