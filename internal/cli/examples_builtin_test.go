package cli

import (
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpExamplesNameRealBuiltinTools: `tasks` is the built-in task
// server of the embedded default, so a help example that calls a tool of
// a server named tasks must name one of its tools; a user who runs it as
// written gets "server tasks has no tool named …" otherwise.
func TestHelpExamplesNameRealBuiltinTools(t *testing.T) {
	t.Parallel()
	withoutConfigFile(t)
	r := runCLI(t, "tools", "tasks", "--json")
	wantCode(t, r, ExitOK)
	var tools []struct{ Name string }
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil || len(tools) == 0 {
		t.Fatalf("tools tasks --json: %v\n%s", err, r.stdout)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}

	use := regexp.MustCompile(`switchboard (?:call|tool) tasks (\S+)`)
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, m := range use.FindAllStringSubmatch(c.Example, -1) {
			checked++
			if !contains(names, m[1]) {
				t.Errorf("%s --help: example %q: the built-in server tasks has no tool %s (it has %s)", c.CommandPath(), m[0], m[1], strings.Join(names, ", "))
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(&app{stdout: io.Discard, stderr: io.Discard}))
	if checked == 0 {
		t.Errorf("no help example calls a tool of tasks; want at least the call command's")
	}
}
