package cli

import (
	"encoding/json"
	"testing"
)

// TestHooksDryRunShowsTypedArguments: hooks fire --dry-run --json shows an
// mcp action's arguments as they would be sent: key=value text mapped to
// a number parameter is the number 3, as the real run sends it, not the
// text "3". (The coerced value is an encoding/json Number, which the JSON
// output wrote as a string.)
func TestHooksDryRunShowsTypedArguments(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, "  - name: everything\n    transport: http\n    url: "+everythingURL(t)+`
hooks:
  - name: sum
    on: demo.sum
    actions:
      - type: mcp
        server: everything
        tool: get-sum
        params:
          - {param: a, value: "{a}"}
          - {param: b, value: "{b}"}
`)
	r := runCLI(t, "hooks", "trust", "--config", cfg, "--yes")
	wantCode(t, r, ExitOK)
	for _, format := range []string{"json", "yaml"} {
		r = runCLI(t, "hooks", "fire", "--config", cfg, "--dry-run", "--output", format, "demo.sum", "a=3", "b=4")
		wantCode(t, r, ExitOK)
		if format == "yaml" {
			wantContains(t, "dry run --output yaml", r.stdout, "a: 3\n", "b: 4\n")
			continue
		}
		var rep struct {
			Runs []struct {
				Status string `json:"status"`
				Params struct {
					Arguments map[string]any `json:"arguments"`
				} `json:"params"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Runs) != 1 {
			t.Fatalf("dry run --json: got %s (%v)", r.stdout, err)
		}
		if a, b := rep.Runs[0].Params.Arguments["a"], rep.Runs[0].Params.Arguments["b"]; a != 3.0 || b != 4.0 {
			t.Errorf("dry run --json: got a=%#v b=%#v, want the numbers 3 and 4 as sent\n%s", a, b, r.stdout)
		}
	}
}
