package daemon

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// This file checks docs/gateway.md's fidelity table against the
// TypeScript side (issue 17): the TypeScript SDK's client runs the same
// steps against server-everything directly and through a prefix: never,
// session: per_client view (identity_meta off), both over streamable
// HTTP, and every line it prints is compared — the results and, message
// by message, what arrived on each HTTP stream (a POST's own response
// stream, or the standalone GET stream). Only what must differ is
// normalised: request ids, the server's session ids, timestamps.

// tsStep is one step of the differential run.
type tsStep struct {
	name string
	step testpeer.TSStep
	// differs, when set, is a difference docs/gateway.md's fidelity table
	// documents (and where): it is logged, not failed.
	differs string
	// resultOnly compares the result line without its wire (a step whose
	// stream carries what timing decides).
	resultOnly bool
	// okOnly compares only that the step succeeded (a wait for
	// notifications a timer repeats, whose count and last one are timing
	// and chance; what they carry is compared in the summary).
	okOnly bool
}

// everythingSteps is what the client does, in order, on each side;
// resource names the session resource it has server-everything make.
//
// Each side makes one of its own name: server-everything keeps its
// session resources in one map for the process (resources/session.js,
// registeredResources, by URI), and a session that makes a resource
// another session made under the same URI removes it from that session's
// server, which then tells its client resources/list_changed. With one
// name the two sides, which run at once, took each other's resource:
// whether a side could still read its own was chance, and the view's
// client could miss its list change when the other side's removal undid
// its session's change before the gateway fetched the list again (the
// list it was given had not changed: owninit.go's holdBack). sideName
// makes the names the same again where the lines are compared.
func everythingSteps(resource string) []tsStep {
	call := func(name string, args map[string]any) testpeer.TSStep {
		return testpeer.TSStep{"op": "call", "name": name, "arguments": args}
	}
	blob := base64.StdEncoding.EncodeToString([]byte("compress me"))
	return []tsStep{
		// server-everything adds its capability tools after initialize
		// and says so: wait until they are listed on each side.
		{name: "tools/list after list_changed", step: testpeer.TSStep{"op": "list_tools",
			"want": []string{"get-roots-list", "trigger-sampling-request", "trigger-elicitation-request"}}, resultOnly: true},
		{name: "tools/list", step: testpeer.TSStep{"op": "list_tools", "pages": true}},
		{name: "prompts/list", step: testpeer.TSStep{"op": "list_prompts", "pages": true}},
		{name: "resources/list", step: testpeer.TSStep{"op": "list_resources", "pages": true}},
		{name: "resources/templates/list", step: testpeer.TSStep{"op": "list_resource_templates", "pages": true}},
		{name: "ping", step: testpeer.TSStep{"op": "ping"}},
		{name: "logging/setLevel", step: testpeer.TSStep{"op": "set_level", "level": "debug"}},

		{name: "tools/call text", step: call("echo", map[string]any{"message": "hello"})},
		{name: "tools/call get-sum", step: call("get-sum", map[string]any{"a": 2, "b": 3})},
		{name: "tools/call image", step: call("get-tiny-image", nil)},
		{name: "tools/call annotations", step: call("get-annotated-message", map[string]any{"messageType": "error", "includeImage": true})},
		{name: "tools/call resource links", step: call("get-resource-links", map[string]any{"count": 3})},
		{name: "tools/call embedded resource", step: call("get-resource-reference", map[string]any{"resourceType": "Blob", "resourceId": 2})},
		{name: "tools/call structured output", step: call("get-structured-content", map[string]any{"location": "New York"})},
		{name: "tools/call progress", step: testpeer.TSStep{"op": "call", "name": "trigger-long-running-operation",
			"arguments": map[string]any{"duration": 0.2, "steps": 2}, "progress": true}},
		{name: "tools/call sampling", step: call("trigger-sampling-request", map[string]any{"prompt": "weather?", "maxTokens": 5})},
		{name: "tools/call elicitation", step: call("trigger-elicitation-request", nil)},
		{name: "tools/call roots", step: call("get-roots-list", nil)},
		// The client's roots change: the server asks again (on its
		// standalone stream) and says so in a log message.
		{name: "notifications/roots/list_changed", step: testpeer.TSStep{"op": "set_roots",
			"roots": []map[string]any{{"uri": "file:///tmp/project", "name": "project"}, {"uri": "file:///tmp/other", "name": "other"}}}},
		{name: "roots/list again", step: testpeer.TSStep{"op": "wait_notification", "method": "notifications/message",
			"match": "2 root(s)"}, resultOnly: true},
		{name: "tools/call roots after the change", step: call("get-roots-list", nil)},
		{name: "tools/call session resource", step: call("gzip-file-as-resource",
			map[string]any{"name": resource, "data": "data:text/plain;base64," + blob})},
		{name: "tools/call arguments the schema refuses", step: call("get-sum", map[string]any{"a": "two", "b": 3})},
		{name: "tools/call unknown tool", step: call("no-such-tool", nil)},

		{name: "prompts/get", step: testpeer.TSStep{"op": "get_prompt", "name": "simple-prompt"}},
		{name: "prompts/get with arguments", step: testpeer.TSStep{"op": "get_prompt", "name": "args-prompt",
			"arguments": map[string]any{"city": "Paris", "state": "IDF"}}},
		{name: "prompts/get embedded resource", step: testpeer.TSStep{"op": "get_prompt", "name": "resource-prompt",
			"arguments": map[string]any{"resourceType": "Text", "resourceId": "3"}}},
		{name: "completion/complete prompt", step: testpeer.TSStep{"op": "complete",
			"ref": map[string]any{"type": "ref/prompt", "name": "completable-prompt"}, "argument": map[string]any{"name": "department", "value": "S"}}},
		{name: "completion/complete with context", step: testpeer.TSStep{"op": "complete",
			"ref": map[string]any{"type": "ref/prompt", "name": "completable-prompt"}, "argument": map[string]any{"name": "name", "value": ""},
			"context": map[string]any{"arguments": map[string]any{"department": "Sales"}}}},
		{name: "completion/complete template", step: testpeer.TSStep{"op": "complete",
			"ref": map[string]any{"type": "ref/resource", "uri": "demo://resource/dynamic/text/{resourceId}"}, "argument": map[string]any{"name": "resourceId", "value": "4"}}},
		{name: "completion/complete unknown prompt", step: testpeer.TSStep{"op": "complete",
			"ref": map[string]any{"type": "ref/prompt", "name": "no-such-prompt"}, "argument": map[string]any{"name": "x", "value": ""}}},

		{name: "resources/read static", step: testpeer.TSStep{"op": "read_resource", "uri": "demo://resource/static/document/features.md"}},
		{name: "resources/read text template", step: testpeer.TSStep{"op": "read_resource", "uri": "demo://resource/dynamic/text/1"}},
		{name: "resources/read blob template", step: testpeer.TSStep{"op": "read_resource", "uri": "demo://resource/dynamic/blob/2"}},
		{name: "resources/read session resource", step: testpeer.TSStep{"op": "read_resource", "uri": "demo://resource/session/" + resource}},
		{name: "resources/read unknown", step: testpeer.TSStep{"op": "read_resource", "uri": "demo://resource/no-such"}},

		// Logs outside a call, on the standalone stream: the first
		// simulated message is sent at once.
		{name: "tools/call simulated logging on", step: call("toggle-simulated-logging", nil)},
		{name: "notifications/message", step: testpeer.TSStep{"op": "wait_notification", "method": "notifications/message",
			"match": "message - SessionId"}, okOnly: true},
		{name: "tools/call simulated logging off", step: call("toggle-simulated-logging", nil)},

		{name: "resources/subscribe", step: testpeer.TSStep{"op": "subscribe", "uri": "demo://resource/dynamic/text/1"}},
		{name: "tools/call subscriber updates on", step: call("toggle-subscriber-updates", nil)},
		{name: "notifications/resources/updated", step: testpeer.TSStep{"op": "wait_notification", "method": "notifications/resources/updated"}, okOnly: true},
		{name: "tools/call subscriber updates off", step: call("toggle-subscriber-updates", nil)},
		{name: "resources/unsubscribe", step: testpeer.TSStep{"op": "unsubscribe", "uri": "demo://resource/dynamic/text/1"}},

		// The server goes on after a cancellation (it does not watch
		// its signal), so what its stream carries next is timing.
		{name: "notifications/cancelled", step: testpeer.TSStep{"op": "call_cancel", "name": "trigger-long-running-operation",
			"arguments": map[string]any{"duration": 0.4, "steps": 4}, "after_progress": 1, "wire_wait_ms": 0}, resultOnly: true},
	}
}

// TestPrefixNeverPerClientTSClientIsTheServer runs the TypeScript SDK's
// client against server-everything directly and through the view, and
// compares what it sees, step by step.
func TestPrefixNeverPerClientTSClientIsTheServer(t *testing.T) {
	t.Parallel()
	url := sharedEverything(t)
	srv := httpUpstream("ev", url)
	srv.Session = config.SessionPerClient
	srv.NoIdentityMeta = true
	srv.RequestTimeout = 30 * time.Second
	cfg := testConfig(srv)
	cfg.Gateway.Views = []config.View{{Name: "ev", Servers: []string{"ev"}, Prefix: config.PrefixNever}}
	r := start(t, cfg)
	waitFor(t, "the daemon ready", func() bool {
		res, err := http.Get(r.url + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})

	const directResource, viewResource = "c-direct.gz", "c-view.gz"
	steps := everythingSteps(directResource)
	in := func(target, resource string) testpeer.TSClientInput {
		in := testpeer.TSClientInput{
			Target:      testpeer.TSTarget{Transport: "http", URL: target},
			Sampling:    &testpeer.TSSampling{Text: "sunny"},
			Elicitation: &testpeer.TSElicitation{Action: "accept", Content: map[string]any{"name": "Ada", "check": true}},
			Roots:       []testpeer.TSRoot{{URI: "file:///tmp/project", Name: "project"}},
			Wire:        true,
		}
		for _, s := range everythingSteps(resource) {
			in.Steps = append(in.Steps, s.step)
		}
		return in
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var direct, through []testpeer.TSResult
	var directErr, throughErr error
	var wg sync.WaitGroup
	wg.Go(func() { direct, directErr = testpeer.RunTSClient(t, ctx, in(url, directResource)) })
	wg.Go(func() { through, throughErr = testpeer.RunTSClient(t, ctx, in(r.url+"/mcp/ev", viewResource)) })
	wg.Wait()
	if directErr != nil {
		t.Fatalf("directly: %v", directErr)
	}
	if throughErr != nil {
		t.Fatalf("through the view: %v", throughErr)
	}
	if want := len(steps) + 2; len(direct) != want || len(through) != want {
		t.Fatalf("got %d lines directly and %d through the view, want %d each", len(direct), len(through), want)
	}

	compare := func(t *testing.T, differs string, want, got any) {
		t.Helper()
		diff := cmp.Diff(sideName(want, directResource), sideName(got, viewResource))
		switch {
		case diff == "" && differs != "":
			t.Logf("no longer differs (%s): update the test and docs/gateway.md", differs)
		case diff == "":
		case differs != "":
			t.Logf("differs, as docs/gateway.md's %s (-direct +view):\n%s", differs, diff)
		default:
			t.Errorf("the client sees otherwise through the view than directly (-direct +view):\n%s", diff)
		}
	}
	t.Run("initialize", func(t *testing.T) {
		compare(t, "", normalizeLine(direct[0], false, false), normalizeLine(through[0], false, true))
	})
	for i, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			d, g := direct[i+1], through[i+1]
			if !d.OK() && s.differs == "" {
				t.Logf("directly the step failed: %v", d.Err())
			}
			if s.okOnly {
				if !d.OK() || !g.OK() {
					t.Errorf("directly %v, through the view %v: want both to succeed", d.Err(), g.Err())
				}
				return
			}
			compare(t, s.differs, normalizeLine(d, s.resultOnly, false), normalizeLine(g, s.resultOnly, true))
		})
	}
	t.Run("summary", func(t *testing.T) {
		dsum, dchanged, dearly := normalizeSummary(direct[len(direct)-1], false)
		gsum, gchanged, gearly := normalizeSummary(through[len(through)-1], true)
		compare(t, "", dsum, gsum)
		compare(t, "", dearly, gearly)
		// What the server says as the session starts (server-everything's
		// tools for the client's capabilities) comes before this client
		// opens its standalone stream: directly it never has it, nor
		// through the view (owninit.go), whatever the order in which the
		// gateway reads it and its answer to the first list.
		compare(t, "", dchanged, gchanged)
	})
}

// sideName returns v with name, a side's session resource's
// (everythingSteps), replaced in each of its strings by one name for
// both sides.
func sideName(v any, name string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = sideName(e, name)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = sideName(e, name)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = strings.ReplaceAll(e, name, "(the session resource)")
		}
		return out
	case string:
		return strings.ReplaceAll(x, name, "(the session resource)")
	}
	return v
}

var (
	uuidRE      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	createdAtRE = regexp.MustCompile(`created at [0-9]{1,2}:[0-9]{2}:[0-9]{2}( [AP]M)?`)
	// simulatedRE matches server-everything's simulated log messages,
	// whose level is random.
	simulatedRE = regexp.MustCompile(`^[A-Za-z]+[- ]level[- ]message`)
)

// normalizeLine is a result line with what must differ replaced: the
// server's session ids, timestamps, and in the wire record each request's
// own id (the client numbers its requests, and it lists tools more or
// fewer times while it waits for them), ids of requests the server sent,
// and a progress token that is the request's id. resultOnly drops the
// wire record. What the go-sdk's types make of what the gateway relays
// is taken back (see sdkShape); view says the line is the view's.
func normalizeLine(l testpeer.TSResult, resultOnly, view bool) any {
	m := map[string]any{}
	for k, v := range l {
		m[k] = v
	}
	wire, _ := m["wire"].([]any)
	delete(m, "wire")
	if resultOnly {
		return sdkShape(normalizeValue(m), view)
	}
	var streams []any
	for _, e := range wire {
		entry, _ := e.(map[string]any)
		id := entry["id"]
		msgs, _ := entry["messages"].([]any)
		var out []any
		for _, msg := range msgs {
			out = append(out, normalizeMessage(msg, id))
		}
		streams = append(streams, map[string]any{"method": entry["method"], "messages": out})
	}
	m["wire"] = streams
	return sdkShape(normalizeValue(m), view)
}

// sdkShape takes back what the go-sdk's types do to a message that
// means the same (docs/gateway.md's fidelity table says so): empty
// params, which the SDK writes on the view's notifications where the
// server wrote none. Results are the server's bytes (perclient_bytes_test.go):
// no cache hints added, no false left out.
func sdkShape(v any, view bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = sdkShape(e, view)
		}
		if p, ok := out["params"].(map[string]any); ok && len(p) == 0 {
			delete(out, "params")
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = sdkShape(e, view)
		}
		return out
	}
	return v
}

// normalizeMessage normalises one JSON-RPC message of the stream of the
// client's request id (nil for the standalone stream).
func normalizeMessage(msg, id any) any {
	m, ok := msg.(map[string]any)
	if !ok {
		return msg
	}
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	if _, isRequest := out["method"]; isRequest {
		if _, has := out["id"]; has {
			out["id"] = "(the server's request id)"
		}
	} else if id != nil && fmt.Sprint(out["id"]) == fmt.Sprint(id) {
		out["id"] = "(this request's id)"
	}
	if p, ok := out["params"].(map[string]any); ok {
		p2 := map[string]any{}
		for k, v := range p {
			p2[k] = v
		}
		if id != nil && fmt.Sprint(p2["progressToken"]) == fmt.Sprint(id) {
			p2["progressToken"] = "(this request's id)"
		}
		if data, ok := p2["data"].(string); ok && out["method"] == "notifications/message" && simulatedRE.MatchString(data) {
			p2["level"], p2["data"] = "(random)", "(a simulated message)"
		}
		out["params"] = p2
	}
	return out
}

// normalizeSummary is the summary line normalised, and apart from it
// the list_changed notifications of the standalone stream (the gateway's
// are batched) and two log messages: the one server-everything sends
// when it has the client's roots, before the client sets a level, and
// its first simulated one, which it sends on its standalone stream while
// the call that starts the simulation runs (another may come within the
// 5 s its timer takes: counted once).
//
// The standalone stream's messages are put in a stable order (their
// order across notifications is timing), each once, and what
// server-everything replays when the client resumes that stream is left
// out: its event store replays every stream's events since the client's
// last, responses to other requests included, which the client then
// reports as errors. The counts of notifications whose number timing
// decides, and the sampling and elicitation requests (compared with
// their streams) are left out too.
func normalizeSummary(l testpeer.TSResult, view bool) (summary, changed, apart any) {
	m := map[string]any{}
	for k, v := range l {
		m[k] = v
	}
	var standalone, lists, logs []string
	simulated := false
	list, _ := m["standalone"].([]any)
	for _, msg := range list {
		n, _ := sdkShape(normalizeValue(normalizeMessage(msg, nil)), view).(map[string]any)
		method, _ := n["method"].(string)
		if method == "" {
			continue // a replayed response or priming event
		}
		if strings.HasSuffix(method, "/list_changed") {
			lists = append(lists, method)
			continue
		}
		if p, ok := n["params"].(map[string]any); ok && method == "notifications/message" && strings.HasPrefix(fmt.Sprint(p["data"]), "Roots updated: 1 root(s)") {
			// sent at initialize, before the client sets a level: compared
			// apart
			logs = append(logs, fmt.Sprint(p["data"]))
			continue
		}
		if p, ok := n["params"].(map[string]any); ok && p["data"] == "(a simulated message)" {
			// on the standalone stream while the call that starts the
			// simulation runs (once at least: compared apart)
			if !simulated {
				logs = append(logs, "(a simulated message)")
			}
			simulated = true
			continue
		}
		b, _ := json.Marshal(n)
		standalone = append(standalone, string(b))
	}
	slices.Sort(standalone)
	slices.Sort(lists)
	m["standalone"] = slices.Compact(standalone)
	delete(m, "standalone_streams")
	delete(m, "sampling_requests")
	delete(m, "elicitation_requests")
	if counts, ok := m["notifications"].(map[string]any); ok {
		c := map[string]any{}
		for k, v := range counts {
			switch {
			case k == "notifications/message", k == "notifications/progress", k == "notifications/resources/updated":
				// how many: timing (a timer of 5 s, a cancelled call
				// that goes on); which stream and what: compared above.
			case strings.HasSuffix(k, "/list_changed"):
			default:
				c[k] = v
			}
		}
		m["notifications"] = c
	}
	var errs []any
	list, _ = m["errors"].([]any)
	for _, e := range list {
		s, _ := e.(string)
		switch {
		case strings.Contains(s, "progress notification for an unknown token"):
			// the cancelled call's progress, after the cancel
		case strings.Contains(s, "response for an unknown message ID"), strings.HasPrefix(s, "["):
			// a replayed response, and a replayed priming event the
			// SDK cannot parse
		default:
			errs = append(errs, e)
		}
	}
	m["errors"] = errs
	return normalizeValue(m), slices.Compact(lists), slices.Compact(logs)
}

// normalizeValue replaces the server's session ids and timestamps in
// every string of v, blobs decoded first.
func normalizeValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if s, ok := e.(string); ok && k == "blob" {
				if b, err := base64.StdEncoding.DecodeString(s); err == nil && json.Valid([]byte(`"`+string(b)+`"`)) && createdAtRE.Match(b) {
					e = "(base64) " + string(b)
				}
			}
			out[k] = normalizeValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeValue(e)
		}
		return out
	case string:
		return createdAtRE.ReplaceAllString(uuidRE.ReplaceAllString(x, "(uuid)"), "created at (time)")
	}
	return v
}
