package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/agent"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/llm/llmtest"
	"github.com/switchboard-mcp/switchboard/internal/notebook"
)

func TestToolContext(t *testing.T) {
	f := newFixture(t, func(cfg *config.Config) {
		cfg.Gateway.Views = []config.View{
			{Name: "maths", Servers: []string{"beta"}, Include: []string{"*__add", "*__echo"}, Exclude: []string{"*__echo"}, Prefix: config.PrefixAlways,
				Descriptions: map[string]string{"beta__add": "Adds, in the maths view."}},
			// A view of one server that looks like the server itself: its
			// globs, renames and descriptions use the tools' own names.
			{Name: "plain", Servers: []string{"beta"}, Include: []string{"add", "echo"}, Prefix: config.PrefixNever,
				Rename: map[string]string{"add": "sum"}, Descriptions: map[string]string{"add": "Sums two numbers."}},
			{Name: "renamed", Servers: []string{"beta"}, Include: []string{"beta__add", "beta__echo"}, Prefix: config.PrefixAlways,
				Rename: map[string]string{"beta__add": "plus", "beta__echo": "say.it"}},
			{Name: "clash", Servers: []string{"beta"}, Include: []string{"beta__add", "beta__echo"}, Prefix: config.PrefixAlways,
				Rename: map[string]string{"beta__add": "beta__echo"}},
		}
	})
	names := func(tc *agent.ToolContext) []string { return tc.Names() }
	tests := []struct {
		name     string
		sel      agent.Selection
		want     []string
		wantKind fault.Kind
		wantMsg  string
	}{
		{name: "servers", sel: agent.Selection{Servers: []string{"beta"}, Tools: []string{"*__echo", "*__add"}}, want: []string{"beta__add", "beta__echo"}},
		{name: "globs", sel: agent.Selection{Tools: []string{"alpha__e*", "beta__whoami"}}, want: []string{"alpha__echo", "beta__whoami"}},
		{name: "view", sel: agent.Selection{View: "maths"}, want: []string{"beta__add"}},
		{name: "view prefix never", sel: agent.Selection{View: "plain"}, want: []string{"sum", "echo"}},
		// say.it is no valid function name: the model gets beta__echo.
		{name: "view rename", sel: agent.Selection{View: "renamed"}, want: []string{"plus", "beta__echo"}},
		{name: "view rename clash", sel: agent.Selection{View: "clash"}, wantKind: fault.Config, wantMsg: `two tools would both be offered to the model as "beta__echo": beta/add and beta/echo`},
		{name: "section server", sel: agent.Selection{Server: "alpha", Tools: []string{"*__add"}}, want: []string{"alpha__add"}},
		{name: "disabled server", sel: agent.Selection{Servers: []string{"gamma"}}, wantKind: fault.NotFound, wantMsg: "no tool matches"},
		{name: "unknown server", sel: agent.Selection{Servers: []string{"alpah"}}, wantKind: fault.NotFound, wantMsg: `did you mean "alpha"?`},
		{name: "unknown view", sel: agent.Selection{View: "math"}, wantKind: fault.NotFound, wantMsg: `did you mean "maths"?`},
		{name: "nothing matches", sel: agent.Selection{Tools: []string{"nope__*"}}, wantKind: fault.NotFound, wantMsg: "no tool matches the selection (tools nope__*)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc, err := agent.NewToolContext(f.cfg, f.cat, tt.sel)
			if tt.wantKind != "" {
				if k := fault.KindOf(err); k != tt.wantKind || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("got error %v, want %s containing %q", err, tt.wantKind, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, names(tc)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
	tc, err := agent.NewToolContext(f.cfg, f.cat, agent.Selection{View: "maths"})
	if err != nil {
		t.Fatal(err)
	}
	add, ok := tc.Lookup("beta__add")
	if !ok || add.Server != "beta" || add.Tool != "add" || add.Description != "Adds, in the maths view." {
		t.Errorf("got %+v, want beta's add with the view's description", add)
	}
	plain, err := agent.NewToolContext(f.cfg, f.cat, agent.Selection{View: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	if sum, ok := plain.Lookup("sum"); !ok || sum.Server != "beta" || sum.Tool != "add" || sum.Description != "Sums two numbers." {
		t.Errorf("got %+v, want beta's add as sum with the view's description", sum)
	}
	if _, ok := plain.Lookup("beta__add"); ok {
		t.Error("the view renames beta__add, but the old name is still offered")
	}
	fn := tc.Functions()[0]
	props, _ := fn.Parameters["properties"].(map[string]any)
	if fn.Parameters["type"] != "object" || props["a"] == nil || props["b"] == nil {
		t.Errorf("got parameters %v, want add's schema", fn.Parameters)
	}
	// The zero selection offers every enabled server's tools, and none of
	// the disabled one's.
	all, err := agent.NewToolContext(f.cfg, f.cat, agent.Selection{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range all.Names() {
		if strings.HasPrefix(n, "gamma__") {
			t.Errorf("the disabled server's tool %s is offered", n)
		}
	}
	if _, ok := all.Lookup("alpha__echo"); !ok {
		t.Error("alpha__echo is not offered")
	}
}

// TestSectionBindingNarrowsTools: a document section bound to a server
// (notebook.SectionServer) leaves the model that server's tools only.
func TestSectionBindingNarrowsTools(t *testing.T) {
	f := newFixture(t, nil)
	doc := filepath.Join(t.TempDir(), "notes.md")
	md := "---\nswitchboard:\n  bindings:\n    - heading: \"## Weather\"\n      server: beta\n      inherit_to_children: true\n---\n# Notes\n\n## Weather\n\n### Paris\n\n## Other\n"
	if err := os.WriteFile(doc, []byte(md), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ section, want string }{{"## Weather", "beta"}, {"### Paris", "beta"}, {"## Other", "alpha"}} {
		server, _, err := notebook.SectionServer(f.cfg, doc, tt.section)
		if err != nil {
			t.Fatal(err)
		}
		if server != tt.want {
			t.Fatalf("section %s: got server %s, want %s", tt.section, server, tt.want)
		}
		var offered []string
		srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
			for _, fn := range req.Tools {
				offered = append(offered, fn.Name)
			}
			return llmtest.Response{Text: "ok"}
		})
		opts := f.options(t, srv, nil)
		opts.Selection = agent.Selection{Server: server, Tools: []string{"*__echo", "*__add"}}
		opts.Prompt = "weather"
		if _, err := agent.Run(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{tt.want + "__add", tt.want + "__echo"}, offered); diff != "" {
			t.Errorf("section %s: tools offered (-want +got):\n%s", tt.section, diff)
		}
	}
}

func TestClientConfig(t *testing.T) {
	file := config.LLM{BaseURL: "http://file:1/v1", Model: "file-model", APIKeyEnv: "MY_KEY", PromptPrice: 1, CompletionPrice: 2, Timeout: time.Minute}
	tests := []struct {
		name    string
		l       config.LLM
		env     map[string]string
		want    llm.Config
		wantErr string
	}{
		{name: "file", l: file, env: map[string]string{"MY_KEY": "k1"},
			want: llm.Config{BaseURL: "http://file:1/v1", Model: "file-model", APIKey: "k1", PromptPrice: 1, CompletionPrice: 2, Timeout: time.Minute}},
		{name: "environment wins", l: file, env: map[string]string{"MY_KEY": "k1", llm.EnvModel: "env-model", llm.EnvBaseURL: "http://env:2/v1", llm.EnvAPIKey: "k2", llm.EnvCompletionPrice: "5", llm.EnvTimeout: "2m"},
			want: llm.Config{BaseURL: "http://env:2/v1", Model: "env-model", APIKey: "k2", PromptPrice: 1, CompletionPrice: 5, Timeout: 2 * time.Minute}},
		{name: "environment only", env: map[string]string{llm.EnvModel: "m", llm.EnvOpenAIAPIKey: "k3"},
			want: llm.Config{BaseURL: llm.DefaultBaseURL, Model: "m", APIKey: "k3"}},
		{name: "OPENAI_BASE_URL fallback", l: config.LLM{Model: "m"}, env: map[string]string{llm.EnvOpenAIBaseURL: "http://proxy/v1"},
			want: llm.Config{BaseURL: "http://proxy/v1", Model: "m"}},
		{name: "no model", l: config.LLM{BaseURL: "http://x/v1"}, wantErr: "no language model is configured"},
		{name: "key variable unset", l: file, wantErr: "llm.api_key_env names MY_KEY, which is not set"},
		{name: "bad price", l: file, env: map[string]string{"MY_KEY": "k", llm.EnvPromptPrice: "free"}, wantErr: llm.EnvPromptPrice},
		{name: "bad timeout", l: file, env: map[string]string{"MY_KEY": "k", llm.EnvTimeout: "soon"}, wantErr: llm.EnvTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := agent.ClientConfig(tt.l, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if fault.KindOf(err) != fault.Config || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want a config error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}
