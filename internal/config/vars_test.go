package config

import (
	"errors"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	x := &expander{lookup: LookupTestEnv, workspace: "/ws/project", home: "/home/me"}
	tests := []struct {
		in       string
		want     string
		problems []string
	}{
		{in: "plain", want: "plain"},
		{in: "${GITHUB_TOKEN}", want: "ghp_secret"},
		{in: "Bearer ${API_TOKEN}!", want: "Bearer tok_secret!"},
		{in: "${env:API_KEY}", want: "key_secret"},
		{in: "${NOPE:-fallback}", want: "fallback"},
		{in: "${EMPTY:-fallback}", want: "fallback"},
		{in: "${EMPTY}", want: ""},
		{in: "${NOPE:-}", want: ""},
		{in: "${NOPE:-${HOME}/x}", want: "/home/u/x"},
		{in: "${NOPE:-a}b}", want: "ab}"},
		{in: "${env:NOPE:-d}", want: "d"},
		{in: "$$", want: "$"},
		{in: "$${HOME}", want: "${HOME}"},
		{in: "$$$${HOME}", want: "$${HOME}"},
		{in: "$$${HOME}", want: "$/home/u"},
		{in: "cost $5", want: "cost $5"},
		{in: "$HOME", want: "$HOME"},
		{in: "trailing $", want: "trailing $"},
		{in: "${workspaceFolder}/src", want: "/ws/project/src"},
		{in: "${workspaceFolderBasename}", want: "project"},
		{in: "${NOPE}", want: "", problems: []string{"variable NOPE is not set; set it in the environment, or give a default: ${NOPE:-value}"}},
		{in: "${A1}-${B2}", want: "-", problems: []string{
			"variable A1 is not set; set it in the environment, or give a default: ${A1:-value}",
			"variable B2 is not set; set it in the environment, or give a default: ${B2:-value}",
		}},
		{in: "${input:api-key}", want: "", problems: []string{"${input:api-key} refers to a VS Code input, but this file declares no inputs; set the environment variable SWITCHBOARD_INPUT_API_KEY and use ${SWITCHBOARD_INPUT_API_KEY}"}},
		{in: "${userHome}/x", want: "/home/me/x"},
		{in: "a${/}b${pathSeparator}c", want: "a/b/c"},
		{in: "${1X}", want: "", problems: []string{`invalid variable reference "${1X}"; use ${NAME} or ${NAME:-default}, and $$ for a literal $`}},
		{in: "${}", want: "", problems: []string{`invalid variable reference "${}"; use ${NAME} or ${NAME:-default}, and $$ for a literal $`}},
		{in: "${A-b}", want: "", problems: []string{`invalid variable reference "${A-b}"; use ${NAME} or ${NAME:-default}, and $$ for a literal $`}},
		{in: "x ${OPEN", want: "x ", problems: []string{`unterminated variable reference "${OPEN"; close it with }, or write $$ for a literal $`}},
	}
	for _, tt := range tests {
		got, probs := x.expand(tt.in, "f")
		if got != tt.want {
			t.Errorf("expand(%q): got %q, want %q", tt.in, got, tt.want)
		}
		var ps []string
		for _, p := range probs {
			ps = append(ps, p.msg+"; "+p.fix)
		}
		if strings.Join(ps, "\n") != strings.Join(tt.problems, "\n") {
			t.Errorf("expand(%q): got problems %q, want %q", tt.in, ps, tt.problems)
		}
	}
}

func TestExpandUnresolvedError(t *testing.T) {
	x := &expander{lookup: LookupTestEnv}
	_, probs := x.expand("${NOPE}", "servers.a.env.X")
	if len(probs) != 1 {
		t.Fatalf("got %d problems, want 1", len(probs))
	}
	var uv *UnresolvedVariableError
	if !errors.As(probs[0].err, &uv) {
		t.Fatalf("got %T, want *UnresolvedVariableError", probs[0].err)
	}
	if got, want := *uv, (UnresolvedVariableError{Variable: "NOPE", Field: "servers.a.env.X"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestRewriteVars(t *testing.T) {
	tests := []struct {
		in, want string
		inputs   []string
	}{
		{"${env:TOKEN}", "${TOKEN}", nil},
		{"${TOKEN:-${env:OTHER}}", "${TOKEN:-${OTHER}}", nil},
		{"${workspaceFolder}/x", "/ws/a$$b/x", nil},
		{"$$ and $5", "$$ and $$5", nil},
		{"${input:gh-token}", "${SWITCHBOARD_INPUT_GH_TOKEN}", []string{"${input:gh-token} is now ${SWITCHBOARD_INPUT_GH_TOKEN}: set SWITCHBOARD_INPUT_GH_TOKEN in the environment"}},
		{"${1bad}", "${1bad}", nil},
	}
	for _, tt := range tests {
		got, inputs := rewriteVars(tt.in, rewriteCtx{workspace: "/ws/a$b"})
		if got != tt.want || strings.Join(inputs, ",") != strings.Join(tt.inputs, ",") {
			t.Errorf("rewriteVars(%q): got %q %q, want %q %q", tt.in, got, inputs, tt.want, tt.inputs)
		}
	}
}

func TestWorkspaceFolder(t *testing.T) {
	if got, want := workspaceFolder("/p/.vscode/mcp.json"), "/p"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := workspaceFolder("/p/q/mcp.json"), "/p/q"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// FuzzExpand checks that expansion never panics, leaves strings without $
// alone, and that rewriting a string for Import expands to the same value.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"", "x", "${A}", "${A:-b}", "$$", "${A:-${B:-c}}", "${input:x}", "${env:A}", "${", "$${", "${}}", "${workspaceFolder}"} {
		f.Add(s)
	}
	x := &expander{lookup: func(k string) (string, bool) {
		if k == "A" {
			return "va", true
		}
		return "", false
	}, workspace: "/ws"}
	f.Fuzz(func(t *testing.T, s string) {
		got, probs := x.expand(s, "f")
		if !strings.Contains(s, "$") && (got != s || len(probs) > 0) {
			t.Fatalf("expand(%q) = %q, %d problems; want it unchanged", s, got, len(probs))
		}
		rw, _ := rewriteVars(s, rewriteCtx{workspace: "/ws"})
		got2, probs2 := x.expand(rw, "f")
		if len(probs) == 0 && len(probs2) == 0 && got2 != got {
			t.Fatalf("expand(rewriteVars(%q)) = %q, want %q", s, got2, got)
		}
	})
}
