package config_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

func TestImportRoundTrip(t *testing.T) {
	tests := []struct {
		file   string
		golden string
	}{
		{"testdata/formats/native.yaml", "import-native.yaml"},
		{"testdata/formats/claude.json", "import-claude.yaml"},
		{"testdata/formats/tools.yaml", "import-tools.yaml"},
		{"testdata/formats/vscode-settings.json", "import-vscode-settings.yaml"},
		{"testdata/.vscode/mcp.json", "import-vscode.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			out, err := config.Import(tt.file, config.TestOpts)
			if err != nil {
				t.Fatal(err)
			}
			config.Golden(t, tt.golden, out)

			// Editors find the schema from the first line.
			if first, _, _ := strings.Cut(string(out), "\n"); first != config.SchemaComment {
				t.Errorf("got first line %q, want %q", first, config.SchemaComment)
			}

			// Secrets stay references: nothing from the environment is baked in.
			for _, v := range []string{"ghp_secret", "tok_secret", "key_secret"} {
				if strings.Contains(string(out), v) {
					t.Errorf("import output contains the value of a variable (%s)", v)
				}
			}

			// The import, written anywhere, resolves to the same servers.
			dir := t.TempDir()
			imported, err := config.Parse(filepath.Join(dir, "switchboard.yaml"), out, config.TestOpts)
			if err != nil {
				t.Fatalf("parsing the import: %v\n%s", err, out)
			}
			if got, want := imported.Format, config.FormatNative; got != want {
				t.Errorf("got format %q, want %q", got, want)
			}
			original, err := config.Load(tt.file, config.TestOpts)
			if err != nil {
				t.Fatal(err)
			}
			sameConfig(t, original, imported)
		})
	}
}

func TestImportUnsetVariables(t *testing.T) {
	// Import needs no secrets in the environment.
	out, err := config.Import("testdata/formats/claude.json", config.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"${GITHUB_TOKEN}"`) {
		t.Errorf("import lost the ${GITHUB_TOKEN} reference:\n%s", out)
	}
}

func TestImportPendingCommand(t *testing.T) {
	dir := t.TempDir()
	p := config.WriteFile(t, dir, "claude.json", `{"mcpServers": {"py": {"command": "python", "args": ["-m", "server"]}, "abs": {"command": "/opt/x/server"}}}`)
	out, err := config.Import(p, config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, want := range []string{
		"# note: command \"python\" is not allowed yet: review mcpServers.py.command, then uncomment it under security.allowed_commands (or trust " + p + " and import it again)\n",
		"security:\n  allowed_commands:\n    # - python\n    # - /opt/x/server\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("import output lacks %q:\n%s", want, text)
		}
	}
	// Until the user approves the commands the import does not load...
	var na *config.CommandNotAllowedError
	if _, err := config.Parse("switchboard.yaml", out, config.TestOpts); !errors.As(err, &na) {
		t.Fatalf("got %v, want a *CommandNotAllowedError", err)
	}
	// ...and once approved it does.
	approved := strings.ReplaceAll(text, "# - ", "- ")
	if _, err := config.Parse("switchboard.yaml", []byte(approved), config.TestOpts); err != nil {
		t.Errorf("approved import: %v", err)
	}
}

func TestImportErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, src string
		want      string
	}{
		{"unknown key", `{"mcpServers": {"a": {"comand": "npx"}}}`, `mcpServers.a.command: command is required by the stdio transport; did you mean command instead of "comand"?`},
		{"relative command", `{"mcpServers": {"a": {"command": "./run.sh"}}}`, `mcpServers.a.command: command "./run.sh" is a relative path`},
		{"smuggling", `{"mcpServers": {"a": {"command": "npx", "args": ["-c", "id"]}}}`, `mcpServers.a.args[0]: npx argument "-c id" is refused`},
		{"syntax", `{"mcpServers": {`, `invalid JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := config.WriteFile(t, dir, tt.name+".json", tt.src)
			_, err := config.Import(p, config.TestOpts)
			if err == nil {
				t.Fatal("Import succeeded, want an error")
			}
			var ve *config.ValidationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want a *ValidationError containing %q", err, tt.want)
			}
		})
	}
	_, err := config.Import(filepath.Join(dir, "missing.json"), config.TestOpts)
	if got, want := fault.KindOf(err), fault.Config; got != want {
		t.Errorf("missing file: got kind %q, want %q", got, want)
	}
}
