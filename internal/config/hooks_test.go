package config_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// hookServers starts every hooks test file: one server, lines 1-2.
const hookServers = `servers:
  - {name: github, command: npx}
`

func TestHooksFull(t *testing.T) {
	src := hookServers + `hook_settings:
  max_concurrent: 3
  queue_size: 50
  retries: 0
  retry_delay: 500ms
  max_depth: 4
  timeout: 10s
hooks:
  - name: open-issue
    on: spec.after-plan
    if:
      branch: {glob: "0*-*"}
      feature: {regex: "^[0-9]{3}-"}
      user: alice
    priority: -1
    on_failure: block
    actions:
      - type: mcp
        server: github
        tool: create_issue
        timeout: 45s
        params:
          - {param: title, source: template, value: "Plan for {feature}"}
          - {param: branch, source: context, value: branch}
          - {param: labels, source: literal, value: [plan, "x"]}
          - {param: count, value: "{count|3}"}
      - type: command
        command: [./check.sh, "{feature}"]
      - type: http
        url: https://hooks.example.com/in
        headers: {X-Team: platform}
      - type: git
        git: commit
        message: "chore: {feature}"
      - type: github
        github: comment
        repo: octo/demo
        number: "{number}"
        body: done
      - type: agent
        prompt: "Review {feature}"
        servers: [github]
      - type: event
        event: review.requested
        fields:
          - {field: who, value: "{user}"}
  - name: guard
    on: tool.before
    enabled: false
    actions:
      - {type: command, command: [./guard]}
`
	cfg, err := config.Parse("sb.yaml", []byte(src), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := cfg.Hooks
	wantSettings := config.HookSettings{MaxConcurrent: 3, QueueSize: 50, Retries: 0, RetryDelay: 500 * time.Millisecond, MaxDepth: 4, Timeout: 10 * time.Second, Pos: config.Pos{File: "sb.yaml", Line: 3, Col: 1}}
	if diff := cmp.Diff(wantSettings, h.Settings); diff != "" {
		t.Errorf("settings mismatch (-want +got):\n%s", diff)
	}
	if len(h.List) != 2 {
		t.Fatalf("got %d hooks, want 2", len(h.List))
	}
	oi := h.List[0]
	if oi.Name != "open-issue" || oi.On != "spec.after-plan" || oi.Priority != -1 || oi.OnFailure != config.OnFailureBlock || !oi.Enabled {
		t.Errorf("hook: got %+v", oi)
	}
	if got, want := oi.Pos.String(), "sb.yaml:11:5"; got != want {
		t.Errorf("hook position: got %s, want %s", got, want)
	}
	wantIf := []config.HookCondition{
		{Field: "branch", Op: config.CondGlob, Value: "0*-*"},
		{Field: "feature", Op: config.CondRegex, Value: "^[0-9]{3}-"},
		{Field: "user", Op: config.CondEquals, Value: "alice"},
	}
	if diff := cmp.Diff(wantIf, oi.If, cmpIgnorePos); diff != "" {
		t.Errorf("conditions mismatch (-want +got):\n%s", diff)
	}
	if len(oi.Actions) != 7 {
		t.Fatalf("got %d actions, want 7", len(oi.Actions))
	}
	mcp := oi.Actions[0]
	wantParams := []config.ParamMapping{
		{Param: "title", Source: config.MappingTemplate, Value: "Plan for {feature}"},
		{Param: "branch", Source: config.MappingContext, Value: "branch"},
		{Param: "labels", Source: config.MappingLiteral, Literal: []any{"plan", "x"}},
		{Param: "count", Source: config.MappingTemplate, Value: "{count|3}"},
	}
	if mcp.Server != "github" || mcp.Tool != "create_issue" || mcp.Timeout != 45*time.Second {
		t.Errorf("mcp action: got %+v", mcp)
	}
	if diff := cmp.Diff(wantParams, mcp.Params, cmpIgnorePos); diff != "" {
		t.Errorf("params mismatch (-want +got):\n%s", diff)
	}
	if got := mcp.Params[0].Pos.String(); got != "sb.yaml:25:14" {
		t.Errorf("mapping position: got %s, want sb.yaml:25:14", got)
	}
	gh := oi.Actions[4]
	if gh.BaseURL != "https://api.github.com" || gh.TokenEnv != "GITHUB_TOKEN" || gh.Number != "{number}" {
		t.Errorf("github defaults: got %+v", gh)
	}
	if ev := oi.Actions[6]; ev.Event != "review.requested" || len(ev.Fields) != 1 || ev.Fields[0].Param != "who" {
		t.Errorf("event action: got %+v", ev)
	}
	if h.List[1].Enabled {
		t.Errorf("guard: got enabled, want disabled")
	}

	// config show writes both blocks, and reads back the same.
	out, err := config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := config.Parse("show.yaml", out, config.Options{})
	if err != nil {
		t.Fatalf("re-parsing config show output: %v\n%s", err, out)
	}
	if diff := cmp.Diff(cfg.Hooks, again.Hooks, cmpIgnorePos); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s\n%s", diff, out)
	}
}

var cmpIgnorePos = cmp.Transformer("noPos", func(p config.Pos) config.Pos { return config.Pos{} })

func TestHooksDefaults(t *testing.T) {
	cfg, err := config.Parse("sb.yaml", []byte(hookServers), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(config.DefaultHookSettings(), cfg.Hooks.Settings); diff != "" {
		t.Errorf("settings mismatch (-want +got):\n%s", diff)
	}
	out, err := config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "hook") {
		t.Errorf("config show of a file without hooks mentions them:\n%s", out)
	}
}

// TestHooksProblems checks every load-time validation error, with its
// file:line:col.
func TestHooksProblems(t *testing.T) {
	tests := []struct {
		name string
		src  string // after hookServers (so line 3 is the first)
		want []string
	}{
		{"not a list", "hooks: {a: 1}\n", []string{
			"sb.yaml:3:9: hooks: must be a list of hooks, not a mapping",
		}},
		{"settings out of range",
			"hook_settings:\n  max_concurrent: 0\n  queue_size: -1\n  retries: 9\n  retry_delay: 2m\n  max_depth: 99\n  timeout: 10m\n  colour: red\n",
			[]string{
				"sb.yaml:4:19: hook_settings.max_concurrent: 0 is out of range; use 1 to 64 (the default is 5)",
				"sb.yaml:5:15: hook_settings.queue_size: -1 is out of range; use 1 to 100000 (the default is 100)",
				"sb.yaml:6:12: hook_settings.retries: 9 is out of range; use 0 to 5 (the default is 1)",
				"sb.yaml:7:16: hook_settings.retry_delay: 2m is out of range; use a value from 0s to 1m (the default is 2s)",
				"sb.yaml:8:14: hook_settings.max_depth: 99 is out of range; use 1 to 50 (the default is 10)",
				"sb.yaml:9:12: hook_settings.timeout: 10m is out of range; use a value from 1s to 5m (the default is 30s)",
				`sb.yaml:10:3: hook_settings.colour: unknown field "colour"; remove it; docs/configuration.md lists the fields`,
			}},
		{"missing name, on and actions", "hooks:\n  - priority: 1\n", []string{
			"sb.yaml:4:5: hooks[0].name: name is required; add name: with a short name, e.g. name: notify-on-commit",
			"sb.yaml:4:5: hooks[0].on: on is required; name the event, e.g. on: tool.after, or a glob such as git.*",
			"sb.yaml:4:5: hooks[0].actions: actions is required; add at least one action, e.g. actions: [{type: command, command: [./check.sh]}]",
		}},
		{"duplicate name and bad pattern",
			"hooks:\n  - {name: a, on: x, actions: [{type: event, event: y}]}\n  - {name: a, on: \"x[\", actions: [{type: event, event: y}]}\n",
			[]string{
				"sb.yaml:5:12: hooks[1].name: duplicate hook name \"a\" (first defined at sb.yaml:4:12); give each hook a unique name",
				"sb.yaml:5:19: hooks[1].on: invalid event pattern \"x[\": syntax error in pattern; write a dotted event name such as tool.before or git.post-commit; * and ? match within names",
			}},
		{"built-in namespace, no such event",
			"hooks:\n  - {name: a, on: tool.befor, actions: [{type: event, event: y}]}\n  - {name: b, on: server.gone, actions: [{type: event, event: y}]}\n  - {name: c, on: \"catalog.*\", actions: [{type: event, event: y}]}\n",
			[]string{
				`sb.yaml:4:19: hooks.a.on: no event matches "tool.befor", so the hook would never run; did you mean "tool.before"?`,
				`sb.yaml:5:19: hooks.b.on: no event matches "server.gone", so the hook would never run; the server.* events are server.available, server.disabled, server.unavailable`,
			}},
		{"unknown template field", "hooks:\n  - name: a\n    on: tool.after\n    actions:\n      - {type: command, command: [echo, \"{tool} {resutl}\"]}\n", []string{
			`sb.yaml:7:41: hooks.a.actions[0].command[1]: unknown context field "resutl" for tool.after; did you mean "result"?`,
		}},
		{"unknown condition field and bad regex", "hooks:\n  - name: a\n    on: tool.*\n    if: {sever: x, tool: {regex: \"(\"}, branch: {like: x}}\n    actions: [{type: event, event: y}]\n", []string{
			"sb.yaml:6:10: hooks.a.if.sever: unknown context field \"sever\" for tool.*; did you mean \"server\"?",
			"sb.yaml:6:34: hooks.a.if.tool.regex: invalid regular expression \"(\": error parsing regexp: missing closing ): `(`; use Go (RE2) syntax",
			"sb.yaml:6:49: hooks.a.if.branch.like: unknown field \"like\"; remove it; docs/configuration.md lists the fields",
		}},
		{"template syntax", "hooks:\n  - name: a\n    on: x.y\n    actions:\n      - {type: agent, prompt: \"{unclosed\"}\n", []string{
			`sb.yaml:7:31: hooks.a.actions[0].prompt: invalid template: unclosed { at offset 0 (write {{ for a literal brace); placeholders are {field} or {field|default}`,
		}},
		{"action types", "hooks:\n  - name: a\n    on: x.y\n    actions:\n      - {type: mpc}\n      - {server: github}\n      - {type: mcp, server: gihtub, tool: t, tiemout: 5s}\n", []string{
			"sb.yaml:7:16: hooks.a.actions[0].type: unknown action type \"mpc\"; did you mean \"mcp\"?",
			"sb.yaml:8:10: hooks.a.actions[1].type: type is required; use one of mcp, command, http, git, github, agent, event",
			"sb.yaml:9:29: hooks.a.actions[2].server: unknown server \"gihtub\"; did you mean \"github\"?",
			"sb.yaml:9:46: hooks.a.actions[2].tiemout: unknown field \"tiemout\"; did you mean \"timeout\"?",
		}},
		// A key of another action type is said to be one, with the keys
		// this type takes; it was an "unknown field".
		{"another type's key", "hooks:\n  - name: a\n    on: x.y\n    actions:\n      - {type: http, url: \"http://127.0.0.1:9/x\", env: {A: b}}\n      - {type: command, command: [./c], tool: t}\n", []string{
			"sb.yaml:7:51: hooks.a.actions[0].env: env is not a key of an http action; remove it; an http action takes type, timeout, url and headers",
			"sb.yaml:8:41: hooks.a.actions[1].tool: tool is not a key of a command action; remove it; a command action takes type, timeout, command, env and inherit_env",
		}},
		{"mcp timeout and mappings", "hooks:\n  - name: a\n    on: x.y\n    actions:\n      - type: mcp\n        server: github\n        tool: t\n        timeout: 500ms\n        params:\n          - {param: p, source: env, value: x}\n          - {param: q, value: x}\n          - {param: q, value: y}\n          - {param: r, source: context, value: \"a b\"}\n", []string{
			"sb.yaml:10:18: hooks.a.actions[0].timeout: 500ms is out of range; use 1s to 5m (the default is 30s)",
			"sb.yaml:12:32: hooks.a.actions[0].params[0].source: unknown source \"env\"; use context, literal or template",
			"sb.yaml:14:21: hooks.a.actions[0].params[2].param: \"q\" is mapped twice (first at sb.yaml:13:21); map each parameter once",
			"sb.yaml:15:48: hooks.a.actions[0].params[3].value: invalid context field \"a b\"; name a field such as branch or arguments.title",
		}},
		{"command as a string", "hooks:\n  - name: a\n    on: x.y\n    actions:\n      - {type: command, command: \"rm -rf /tmp/x\"}\n", []string{
			"sb.yaml:7:34: hooks.a.actions[0].command: must be a list of strings, not a string; give the program and its arguments as a list (it runs without a shell), e.g. command: [./check.sh, \"{tool}\"]",
		}},
		{"http, git, github, event", "hooks:\n  - name: a\n    on: x.y\n    actions:\n      - {type: http, url: ftp://x}\n      - {type: git, git: push}\n      - {type: github, github: issue, repo: nope, token_env: \"1X\"}\n      - {type: event, event: \"bad name\"}\n", []string{
			"sb.yaml:7:27: hooks.a.actions[0].url: invalid URL \"ftp://x\"; use an http:// or https:// URL",
			"sb.yaml:8:26: hooks.a.actions[1].git: unknown git operation \"push\"; use branch, commit or tag",
			"sb.yaml:9:10: hooks.a.actions[2].title: title is required for a github action; give the issue title (a template)",
			"sb.yaml:9:45: hooks.a.actions[2].repo: invalid repository \"nope\"; write owner/name",
			"sb.yaml:9:62: hooks.a.actions[2].token_env: invalid variable name \"1X\"; name an environment variable, e.g. GITHUB_TOKEN",
			"sb.yaml:10:30: hooks.a.actions[3].event: invalid event name \"bad name\"; write dotted words, e.g. review.requested",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse("sb.yaml", []byte(hookServers+tt.src), config.Options{})
			if err == nil {
				t.Fatalf("Parse succeeded, want %d problems", len(tt.want))
			}
			var ve *config.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("got error %T, want *ValidationError", err)
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("problems mismatch (-want +got):\n%s\ngot: %#v", diff, strings.Split(err.Error(), "\n"))
			}
		})
	}
}

func TestParseHookTemplate(t *testing.T) {
	tests := []struct {
		in      string
		want    []config.HookTemplatePart
		wantErr string
	}{
		{in: "plain", want: []config.HookTemplatePart{{Literal: "plain"}}},
		{in: "{a}", want: []config.HookTemplatePart{{Field: "a"}}},
		{in: "x {a.b|none} {{y}}", want: []config.HookTemplatePart{{Literal: "x "}, {Field: "a.b", Default: "none", HasDefault: true}, {Literal: " {y}"}}},
		{in: "{a|}", want: []config.HookTemplatePart{{Field: "a", HasDefault: true}}},
		{in: "{", wantErr: "unclosed {"},
		{in: "}", wantErr: "unmatched }"},
		{in: "{a b}", wantErr: "invalid placeholder"},
		{in: "{.a}", wantErr: "invalid placeholder"},
		{in: "{}", wantErr: "invalid placeholder"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := config.ParseHookTemplate(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseHookTemplate(%q): got error %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.Parts); diff != "" {
				t.Errorf("parts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHookEventFields(t *testing.T) {
	tests := []struct {
		pattern    string
		wantClosed bool
		has        string
	}{
		{"tool.before", true, "arguments"},
		{"tool.*", true, "result"},
		{"server.unavailable", true, "error"},
		{"git.post-commit", false, ""},
		{"spec.after-plan", false, ""},
	}
	for _, tt := range tests {
		fields, closed := config.HookEventFields(tt.pattern)
		if closed != tt.wantClosed {
			t.Errorf("HookEventFields(%q): got closed %v, want %v", tt.pattern, closed, tt.wantClosed)
		}
		if tt.has != "" && !strings.Contains(strings.Join(fields, ","), tt.has) {
			t.Errorf("HookEventFields(%q): got %v, want %s among them", tt.pattern, fields, tt.has)
		}
	}
}

func FuzzParseHookTemplate(f *testing.F) {
	for _, s := range []string{"", "a", "{a}", "{a|b}", "{{", "}}", "{a.b.c|x y}", "x{", "{|}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tmpl, err := config.ParseHookTemplate(s)
		if err != nil {
			return
		}
		// Re-rendering the parts gives back the input, modulo escapes.
		var b strings.Builder
		for _, p := range tmpl.Parts {
			if p.Field == "" {
				b.WriteString(strings.NewReplacer("{", "{{", "}", "}}").Replace(p.Literal))
				continue
			}
			b.WriteString("{" + p.Field)
			if p.HasDefault {
				b.WriteString("|" + p.Default)
			}
			b.WriteString("}")
		}
		again, err := config.ParseHookTemplate(b.String())
		if err != nil {
			t.Fatalf("re-parsing %q (from %q): %v", b.String(), s, err)
		}
		if diff := cmp.Diff(mergeLiterals(tmpl.Parts), mergeLiterals(again.Parts)); diff != "" {
			t.Fatalf("round trip of %q mismatch (-first +again):\n%s", s, diff)
		}
	})
}

// mergeLiterals joins adjacent literal parts.
func mergeLiterals(ps []config.HookTemplatePart) []config.HookTemplatePart {
	var out []config.HookTemplatePart
	for _, p := range ps {
		if p.Field == "" && len(out) > 0 && out[len(out)-1].Field == "" {
			out[len(out)-1].Literal += p.Literal
			continue
		}
		out = append(out, p)
	}
	return out
}
