package daemon

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestTaskCallWithBadArgumentsAsDirectly: a tools/call made as a task
// whose arguments fail the tool's schema is answered with invalid params
// (-32602) on every view, as server-everything answers it directly: the
// TypeScript SDK's McpServer turns the failed check into an isError
// result, which is no task, and its task handling then refuses that
// result with -32602 ("Invalid task creation result"). A plain call with
// the same arguments is an isError result, directly and through the
// gateway. On a prefix: never view of a per_client server the answer is
// the server's own; on the gateway's other views the gateway's check
// refuses the call, with the same code.
func TestTaskCallWithBadArgumentsAsDirectly(t *testing.T) {
	t.Parallel()
	evURL := testpeer.StartEverything(t, "streamableHttp")
	shared, own := httpUpstream("evh", evURL), httpUpstream("evo", evURL)
	own.Session, own.NoIdentityMeta = config.SessionPerClient, true
	cfg := testConfig(shared, own)
	cfg.Gateway.Views = []config.View{
		{Name: "ev", Servers: []string{"evh"}, Prefix: config.PrefixNever},
		{Name: "own", Servers: []string{"evo"}, Prefix: config.PrefixNever},
	}
	r := start(t, cfg)

	call := func(name, task string) string {
		return `{"jsonrpc":"2.0","id":"t-1","method":"tools/call","params":{"name":"` + name + `","arguments":{"topic":5}` + task + `}}`
	}
	answer := func(s *rawSession, body string) (map[string]any, map[string]any) {
		t.Helper()
		return answerTo(t, s.exchangeID(body, `"t-1"`, answerAll), `"t-1"`)
	}
	isToolError := func(res map[string]any) bool {
		b, _ := json.Marshal(res["content"])
		return res["isError"] == true && len(b) > 2
	}

	for _, side := range []struct{ what, url, name, says string }{
		{"directly", evURL, "simulate-research-query", "Invalid task creation result"},
		{"prefix: always view", r.url + "/mcp", "evh__simulate-research-query", "arguments for evh/simulate-research-query are invalid"},
		{"prefix: never view of a shared server", r.url + "/mcp/ev", "simulate-research-query", "arguments for evh/simulate-research-query are invalid"},
		{"prefix: never view of a per_client server", r.url + "/mcp/own", "simulate-research-query", "Invalid task creation result"},
	} {
		s := newCapableSession(t, side.url, clientCaps)
		s.waitListed(side.name)
		if res, rerr := answer(s, call(side.name, "")); rerr != nil || !isToolError(res) {
			t.Errorf("%s: a plain call with bad arguments: result %v, error %v; want an isError result", side.what, res, rerr)
		}
		res, rerr := answer(s, call(side.name, `,"task":{"ttl":60000}`))
		msg, _ := rerr["message"].(string)
		if res != nil || rerr["code"] != float64(-32602) || !strings.Contains(msg, side.says) {
			t.Errorf("%s: a task call with bad arguments: result %v, error %v; want -32602 saying %q", side.what, res, rerr, side.says)
		}
	}
}
