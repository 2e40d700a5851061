package hooks_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/hooks"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// TestRunOutputRecorded: with history.record_values, a run's record keeps
// what its action returned (an agent's answer: a tool.failed triage was
// recorded nowhere), redacted; without it, nothing, as for arguments.
func TestRunOutputRecorded(t *testing.T) {
	const hooksYAML = `hooks:
  - name: triage
    on: ci.failed
    actions: [{type: agent, prompt: "Triage {job}"}]
  - name: report
    on: ci.failed
    actions: [{type: command, command: [sh, -c, "echo '{{\"verdict\":\"flaky\",\"key\":\"tok-5e1d9c2b7a\"}}'"], env: {API_TOKEN: tok-5e1d9c2b7a}}]
`
	agent := func(o *hooks.Options) {
		o.Agent = func(context.Context, hooks.AgentRequest) (string, error) { return "the build ran out of disk", nil }
	}
	for _, tt := range []struct {
		name    string
		history string
		want    map[string]string // hook: recorded output
	}{
		{"record_values", "history: {record_values: true}\n", map[string]string{
			"triage": `"the build ran out of disk"`,
			"report": `{"key":"[REDACTED]","verdict":"flaky"}`,
		}},
		{"default", "", map[string]string{"triage": "", "report": ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := engineOnly(t, tt.history+hooksYAML, agent)
			if rep, err := f.eng.Fire(context.Background(), "ci.failed", map[string]any{"job": "build"}); err != nil || rep.Failed {
				t.Fatalf("fire: %+v, %v", rep, err)
			}
			for _, r := range f.runs(t, store.HookRunFilter{}, 2) {
				got := string(r.Output)
				var v any
				if json.Unmarshal(r.Output, &v) == nil {
					c, _ := json.Marshal(v) // keys sorted
					got = string(c)
				}
				if got != tt.want[r.Hook] {
					t.Errorf("%s: recorded output %s, want %q", r.Hook, got, tt.want[r.Hook])
				}
			}
		})
	}
}
