package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// typeScriptTaskClientThroughServeStdio runs a task of the
// TypeScript SDK's simpleTaskInteractive example through `switchboard
// serve --stdio` (the test binary as switchboard, a child of the
// TypeScript client) with the TypeScript SDK's task client: it checks the
// gateway's tasks capability before it sends a task, polls it, answers
// the example's elicitation, which reaches it on serve --stdio's one
// stream, fetches the result and lists the task.
func typeScriptTaskClientThroughServeStdio(t *testing.T, url string) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("servers:\n  - name: tasks\n    transport: http\n    url: %s\n", url)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lines, err := testpeer.RunTSClient(t, ctx, testpeer.TSClientInput{
		Target: testpeer.TSTarget{Transport: "stdio", Command: exe,
			Args: []string{"serve", "--stdio", "--config", cfg, "--log-level", "error"},
			Env:  map[string]string{envRunMain: "1", "SWITCHBOARD_STATE_DIR": t.TempDir(), "PATH": os.Getenv("PATH")}},
		Elicitation: &testpeer.TSElicitation{Action: "accept", Content: map[string]any{"confirm": true}},
		Steps: []testpeer.TSStep{
			{"op": "list_tools", "want": []string{"tasks__confirm_delete"}},
			{"op": "call_task", "name": "tasks__confirm_delete", "arguments": map[string]any{"filename": "d.txt"}},
			{"op": "list_tasks"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if caps, _ := json.Marshal(lines[0]["capabilities"]); !strings.Contains(string(caps), `"tasks":{"requests":{"tools":{"call":{}}}}`) {
		t.Errorf("serve --stdio's capabilities: %s, want the example's tasks", caps)
	}
	run, list := lines[2], lines[3]
	if res, _ := json.Marshal(run["result"]); !run.OK() || !strings.Contains(string(res), "Deleted 'd.txt'") {
		t.Fatalf("call_task: %v, want the deletion confirmed", run)
	}
	if types, _ := json.Marshal(run["types"]); !strings.HasPrefix(string(types), `["taskCreated","taskStatus"`) || !strings.HasSuffix(string(types), `"result"]`) {
		t.Errorf("call_task's messages: %s, want taskCreated, taskStatus…, result", types)
	}
	if c, _ := json.Marshal(list); !list.OK() || !strings.Contains(string(c), run["taskId"].(string)) {
		t.Errorf("list_tasks: %s, want the task", c)
	}
	if asked, _ := json.Marshal(lines[len(lines)-1]["elicitation_requests"]); !strings.Contains(string(asked), "d.txt") {
		t.Errorf("the client was asked %s, want the example's question", asked)
	}
}
