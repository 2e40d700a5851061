package config_test

import (
	"strings"
	"testing"

	"github.com/goccy/go-yaml/parser"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

const editSrc = `# Switchboard config
defaults:
  request_timeout: 30s # keep this comment

servers:
  # GitHub, for issues
  - name: github
    command: npx # the runner
    args: [-y, "@modelcontextprotocol/server-github"]
    env:
      GITHUB_TOKEN: "${GITHUB_TOKEN}"
    max_concurrent: 4

  # local notes
  - name: local
    command: npx
    args: [-y, "@acme/notes-server"]
# trailing comment
`

func mustParse(t *testing.T, data []byte) *config.Config {
	t.Helper()
	cfg, err := config.Parse("switchboard.yaml", data, config.Options{LookupEnv: func(string) (string, bool) { return "x", true }})
	if err != nil {
		t.Fatalf("the edited file does not load: %v\n%s", err, data)
	}
	return cfg
}

func TestSetServerKeepsComments(t *testing.T) {
	e, err := config.ReadServerEntry([]byte(editSrc), "github")
	if err != nil {
		t.Fatal(err)
	}
	if e.Command != "npx" || len(e.Args) != 2 || len(e.Env) != 1 || e.Env[0].Value != "${GITHUB_TOKEN}" {
		t.Fatalf("ReadServerEntry: got %+v", e)
	}
	// Change the args and add a description; the command stays.
	e.Args = []string{"-y", "@modelcontextprotocol/server-github", "it's a \"quoted\" arg"}
	e.Description = "issues: and PRs"
	out, err := config.SetServer([]byte(editSrc), "github", e)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, keep := range []string{"# Switchboard config", "# keep this comment", "# GitHub, for issues", "command: npx # the runner", "max_concurrent: 4", "# local notes", "# trailing comment"} {
		if !strings.Contains(s, keep) {
			t.Errorf("the edit lost %q:\n%s", keep, s)
		}
	}
	cfg := mustParse(t, out)
	gh, _ := cfg.Server("github")
	if gh.Description != "issues: and PRs" || gh.Args[2] != `it's a "quoted" arg` || gh.MaxConcurrent != 4 {
		t.Errorf("github after the edit: %+v", gh)
	}

	// Add a server, then remove the first.
	out, err = config.SetServer(out, "", config.ServerEntry{Name: "notes", Transport: string(config.TransportHTTP), URL: "https://notes.example/mcp",
		Headers: []config.KeyValue{{"X-Team", "core"}}, Disabled: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg = mustParse(t, out)
	notes, ok := cfg.Server("notes")
	if !ok || notes.URL != "https://notes.example/mcp" || notes.Headers["X-Team"] != "core" || notes.Enabled {
		t.Errorf("the added server: %+v (found %v)\n%s", notes, ok, out)
	}
	if _, err := config.SetServer(out, "", config.ServerEntry{Name: "notes", Command: "x"}); err == nil {
		t.Error("adding a second server named notes was accepted")
	}
	out, err = config.RemoveServer(out, "github")
	if err != nil {
		t.Fatal(err)
	}
	cfg = mustParse(t, out)
	if _, ok := cfg.Server("github"); ok || len(cfg.Servers) != 2 {
		t.Errorf("after removing github: %d servers\n%s", len(cfg.Servers), out)
	}
	if strings.Contains(string(out), "# GitHub, for issues") || !strings.Contains(string(out), "# local notes") {
		t.Errorf("removing github should drop its comment and keep the others:\n%s", out)
	}
}

func TestSetServerIntoFilesWithoutServers(t *testing.T) {
	e := config.ServerEntry{Name: "one", Command: "npx", Args: []string{"a.js"}, Env: []config.KeyValue{{"K", "v"}}}
	for name, src := range map[string]string{
		"empty":          "",
		"comments only":  "# nothing yet\n",
		"no servers key": "defaults:\n  request_timeout: 10s # fast\n",
		"servers: []":    "# list\nservers: []\n",
	} {
		out, err := config.SetServer([]byte(src), "", e)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		cfg := mustParse(t, out)
		if s, ok := cfg.Server("one"); !ok || s.Env["K"] != "v" {
			t.Errorf("%s: the server was not added:\n%s", name, out)
		}
		if strings.Contains(src, "#") && !strings.Contains(string(out), "#") {
			t.Errorf("%s: comments lost:\n%s", name, out)
		}
	}
}

func TestEditRefusesOtherFormats(t *testing.T) {
	for name, src := range map[string]string{
		"json":    `{"servers": []}`,
		"claude":  "mcpServers:\n  x:\n    command: npx\n",
		"vs code": "servers:\n  x:\n    command: npx\n",
	} {
		if _, err := config.SetServer([]byte(src), "", config.ServerEntry{Name: "a", Command: "npx"}); err == nil {
			t.Errorf("%s: editing was accepted, want a refusal", name)
		}
	}
}

// FuzzSetServer edits arbitrary files: never a panic, and an edit that
// succeeds on a file that loads yields a file that still parses as YAML.
func FuzzSetServer(f *testing.F) {
	f.Add(editSrc, "github", "x")
	f.Add("servers: []\n", "", "new")
	f.Add("", "", "a")
	f.Add("servers:\n  - name: a\n    env: {K: v}\n", "a", "b")
	f.Fuzz(func(t *testing.T, src, original, name string) {
		e := config.ServerEntry{Name: name, Command: "npx", Args: []string{name}, Env: []config.KeyValue{{"K", name}}}
		out, err := config.SetServer([]byte(src), original, e)
		if err != nil {
			return
		}
		if _, err := parser.ParseBytes(out, parser.ParseComments); err != nil {
			t.Errorf("SetServer wrote a file that does not parse: %v\n%s", err, out)
		}
		_, _ = config.RemoveServer(out, name)
		_, _ = config.ReadServerEntry(out, name)
	})
}
